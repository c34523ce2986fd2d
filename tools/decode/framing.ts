/**
 * Reading a byte stream in chunks for `herald decode`. A {@link UnitParser} consumes whole units (MRT records,
 * capture records and blocks, BGP messages) from one contiguous buffer; {@link pump} hands it each chunk as it comes,
 * keeps the partial unit at the end of a chunk, and joins it with the following chunks only once they hold the whole
 * unit, so each unit is copied at most once and memory stays at about one chunk plus the largest unit.
 */

/** A parser of length-framed units, fed chunk by chunk. */
export interface UnitParser {
  /**
   * Consumes the complete units at the start of `buf` and returns how many octets it consumed; `base` is the stream
   * offset of `buf[0]`. Units are used before it returns: views into `buf` are not kept (copy what must outlive it).
   */
  feed(buf: Buffer, base: number): number;
  /** Octets the unit at the point where `feed` stopped needs before `feed` can go on (at least 1). */
  readonly need: number;
  /** True once reading cannot go on (framing lost, or a limit hit); the pump then stops reading. */
  readonly done: boolean;
  /**
   * The stream ended with `rest` (at stream offset `base`) not consumed. `cut` is true when it ended on a read or
   * decompression error (reported by the caller), so a unit left incomplete is a consequence, not a finding.
   */
  end(rest: Buffer, base: number, cut: boolean): void;
}

const EMPTY = Buffer.alloc(0);

/**
 * Feeds every chunk of `chunks` to `parser`, awaiting `between()` after each chunk (the CLI waits there for its
 * output to drain; false stops reading, e.g. when the output was closed). Stops early when the parser is `done`.
 * Rejects with the stream's error (after `parser.end` with `cut` set) when reading or decompressing fails.
 */
export async function pump(chunks: AsyncIterable<Buffer>, parser: UnitParser, between?: () => Promise<boolean>): Promise<void> {
  let rest: Buffer = EMPTY;
  let base = 0;
  const waiting: Buffer[] = [];
  let waitingLength = 0;
  const leftover = (): Buffer => (waiting.length === 0 ? rest : Buffer.concat([rest, ...waiting]));
  try {
    for await (const chunk of chunks) {
      if (chunk.length === 0) continue;
      let buf: Buffer;
      if (rest.length === 0 && waiting.length === 0) buf = chunk;
      else {
        waiting.push(chunk);
        waitingLength += chunk.length;
        if (rest.length + waitingLength < parser.need) continue;
        buf = Buffer.concat([rest, ...waiting]);
        waiting.length = 0;
        waitingLength = 0;
      }
      const used = parser.feed(buf, base);
      base += used;
      rest = used === buf.length ? EMPTY : buf.subarray(used);
      if (parser.done || (between && !(await between()))) return;
    }
  } catch (err) {
    parser.end(leftover(), base, true);
    throw err;
  }
  parser.end(leftover(), base, false);
}

/** Feeds a whole buffer to `parser` at once (tests and in-process use); returns the parser. */
export function feedAll<P extends UnitParser>(buf: Buffer, parser: P): P {
  const used = parser.feed(buf, 0);
  if (!parser.done) parser.end(buf.subarray(used), used, false);
  return parser;
}
