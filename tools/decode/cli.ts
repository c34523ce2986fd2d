/**
 * `herald decode`: prints every BGP message of a capture, an MRT dump or a hex string as one JSON object per line.
 * See docs/decode.md for the output fields.
 *
 * Exit codes: 0 when no error line was printed, 1 when any was (malformed message or record, unreadable input),
 * 2 for usage errors (bad options, no input, file not found). Never prints a stack trace.
 */
import nodeModule from 'node:module';
import type { Writable } from 'node:stream';
import { parseHex } from './hex.ts';
import type { DecodeSink, ErrorLine, LineStats } from './sink.ts';
import type { decodeFile as DecodeFile } from './file.ts';
import type { BgpMessageStream as MessageStream, StreamOptions } from './stream.ts';
import type { SummarySink as Summary } from './summary.ts';

export const DECODE_USAGE = `Usage: herald decode [options] <file>
       herald decode [options] --hex <HEX>

Decodes BGP messages and prints one JSON object per line.
<file> is a pcap or pcapng capture, an MRT dump (RFC 6396) or BGP messages in hex text,
plain, gzip or bzip2 (told from its first octets, not from its name); "-" reads standard input.

Options:
  --hex <HEX>          decode hex instead of a file: one BGP message or several back to back
  --port <N>           also treat TCP port N as BGP (repeatable; 179 always is)
  --as2 | --as4        force 2-octet or 4-octet AS numbers in AS_PATH/AGGREGATOR
                       (default: from the session's OPENs; guessed when the capture has none)
  --add-path[=FAMILIES]
                       force ADD-PATH path identifiers (RFC 7911) for ipv4, ipv6 or both
                       (FAMILIES = ipv4,ipv6; default both)
  --summary            print counts per message type and per attribute instead of one line per message
                       (error lines are still printed)
  -h, --help           show this help

Exit status: 0 no error, 1 some message or record was malformed, 2 usage error.
`;

class UsageError extends Error {}

// From the module object, not `import … from 'node:util'`: the ES module view of node:util reads every export, which
// loads a dozen internal modules (worker threads, diff, colours) that `herald decode` never uses; about 3 ms of a
// start (docs/decode.md "Performance").
const { parseArgs } = process.getBuiltinModule('node:util');

/** Octets of output gathered before one write. */
const BATCH = 1 << 16;

/**
 * Line writer that batches output into large writes and honours back-pressure between batches. Each line is encoded
 * (UTF-8) into the batch buffer as it comes, so the line's text can be dropped at once.
 */
export class LineOut implements DecodeSink {
  private batch = Buffer.allocUnsafe(BATCH);
  private size = 0;
  private readonly out: Writable;
  private readonly printLines: boolean;
  private readonly reuseBatch: boolean;
  errors = 0;
  closed = false;

  /**
   * `reuseBatch`: `out` copies the octets of a write it completes at once and keeps no reference to them, as
   * `process.stdout` does (its file, pipe or terminal is written synchronously on Linux: Node's "A note on process
   * I/O"); then a batch buffer whose write left nothing queued is filled again. Not for in-process streams: a
   * PassThrough hands the very buffer on to its reader.
   */
  constructor(out: Writable, printLines: boolean, reuseBatch = false) {
    this.out = out;
    this.printLines = printLines;
    this.reuseBatch = reuseBatch;
    out.on('error', () => {
      this.closed = true; // e.g. EPIPE when piped into `head`
    });
  }
  private push(json: string): void {
    if (this.closed) return;
    // A UTF-8 character takes at most 3 octets per UTF-16 code unit; a line that may not fit goes out on its own.
    if (this.size + 3 * json.length + 1 > BATCH) {
      this.flushSync();
      if (3 * json.length + 1 > BATCH) {
        this.out.write(json + '\n');
        return;
      }
    }
    this.size += this.batch.write(json, this.size);
    this.batch[this.size++] = 0x0a;
  }
  line(json: string, _stats: LineStats): void {
    if (this.printLines) this.push(json);
  }
  error(line: ErrorLine): void {
    this.errors++;
    this.push(JSON.stringify(line));
  }
  note(line: Record<string, unknown>): void {
    if (this.printLines) this.push(JSON.stringify(line));
  }
  raw(obj: unknown): void {
    this.push(JSON.stringify(obj));
  }
  flushSync(): void {
    if (this.size === 0 || this.closed) return;
    this.out.write(this.batch.subarray(0, this.size));
    // Standard output that wrote the octets at once holds nothing: the buffer is filled again (a new 64 KiB buffer
    // per batch was 9 MiB of short-lived external memory on a 5-minute RIS dump, and the garbage collections it
    // brought; docs/decode.md "Performance"). A stream that queued them holds the buffer until written, and any
    // other stream may pass it on: a new one is taken.
    if (!this.reuseBatch || this.out.writableLength !== 0) this.batch = Buffer.allocUnsafe(BATCH);
    this.size = 0;
  }
  /** Flushes and waits until the stream has room again. */
  async drain(): Promise<void> {
    this.flushSync();
    if (this.closed || !this.out.writableNeedDrain) return;
    await new Promise<void>((resolve) => {
      const done = (): void => {
        this.out.off('drain', done);
        this.out.off('error', done);
        this.out.off('close', done);
        resolve();
      };
      this.out.on('drain', done);
      this.out.on('error', done);
      this.out.on('close', done);
    });
  }
}

/** Parsed command line of `herald decode`. */
export interface DecodeArgs {
  readonly file?: string;
  readonly hex?: string;
  readonly summary: boolean;
  readonly stream: StreamOptions;
}

/** Parses `herald decode` arguments (without the leading "decode"). Throws UsageError. */
export function parseDecodeArgs(argv: readonly string[]): DecodeArgs | 'help' {
  // --add-path takes an optional value; node's parseArgs does not, so spell it as a separate option.
  const args: string[] = [];
  for (const a of argv) {
    if (a.startsWith('--add-path=')) args.push('--add-path-families', a.slice('--add-path='.length));
    else args.push(a);
  }
  let parsed;
  try {
    parsed = parseArgs({
      args,
      allowPositionals: true,
      strict: true,
      options: {
        hex: { type: 'string' },
        port: { type: 'string', multiple: true },
        as2: { type: 'boolean' },
        as4: { type: 'boolean' },
        'add-path': { type: 'boolean' },
        'add-path-families': { type: 'string' },
        summary: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (err) {
    // Node's text for an unknown option ends in an unbalanced quote and a hint about "--": name the option alone.
    const unknown = (err as NodeJS.ErrnoException).code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' ? /'([^']+)'/.exec((err as Error).message)?.[1] : undefined;
    throw new UsageError(unknown !== undefined ? `unknown option ${unknown}` : err instanceof Error ? err.message : String(err));
  }
  const v = parsed.values;
  if (v.help) return 'help';
  if (v.as2 && v.as4) throw new UsageError('--as2 and --as4 exclude each other');
  const ports = new Set([179]);
  for (const p of v.port ?? []) {
    const n = Number(p);
    if (!/^\d+$/.test(p) || n < 1 || n > 65535) throw new UsageError(`--port ${p}: not a TCP port (1..65535)`);
    ports.add(n);
  }
  let addPath: StreamOptions['addPath'];
  if (v['add-path-families'] !== undefined) {
    const fams = v['add-path-families'].split(',').map((f) => f.trim().toLowerCase());
    for (const f of fams) if (f !== 'ipv4' && f !== 'ipv6') throw new UsageError(`--add-path=${v['add-path-families']}: families are ipv4 and ipv6`);
    addPath = { ipv4: fams.includes('ipv4'), ipv6: fams.includes('ipv6') };
  } else if (v['add-path']) addPath = { ipv4: true, ipv6: true };
  const positionals = parsed.positionals;
  if (v.hex !== undefined && positionals.length > 0) throw new UsageError('give either --hex or a file, not both');
  if (v.hex === undefined && positionals.length !== 1) throw new UsageError(positionals.length === 0 ? 'no input: give a file or --hex' : 'give one input file');
  return {
    ...(v.hex !== undefined ? { hex: v.hex } : { file: positionals[0] }),
    summary: v.summary === true,
    stream: { ports, ...(v.as2 ? { as4: false } : v.as4 ? { as4: true } : {}), ...(addPath ? { addPath } : {}) },
  };
}

/** Options of {@link runDecode}. */
export interface RunDecodeOptions {
  /**
   * Called once the decoder's modules are loaded, before the first octet is decoded (bin/herald.js sets V8's tiering
   * there: tools/decode/jit.ts). Not called for `--help` and usage errors.
   */
  readonly beforeDecoding?: () => void;
}

/**
 * Runs `herald decode` with `argv` (the arguments after "decode"), writing JSON lines to `out` and usage/diagnostics
 * to `err`. Resolves to the exit code; never rejects.
 */
export async function runDecode(argv: string[], out: Writable, err: Writable, opts: RunDecodeOptions = {}): Promise<number> {
  let args: DecodeArgs | 'help';
  try {
    args = parseDecodeArgs(argv);
  } catch (e) {
    err.write(`herald decode: ${e instanceof Error ? e.message : String(e)}\n\n${DECODE_USAGE}`);
    return 2;
  }
  if (args === 'help') {
    out.write(DECODE_USAGE);
    return 0;
  }
  // The decoders and the codec are loaded only now, with Node's compile cache on: type-stripping the codec's
  // modules dominates a cold start (about 0.4 s), a warm cache brings it to a few tens of ms.
  nodeModule.enableCompileCache?.();
  let decodeFile: typeof DecodeFile | undefined;
  let BgpMessageStream: typeof MessageStream | undefined;
  let SummarySink: typeof Summary | undefined;
  try {
    if (args.hex !== undefined) ({ BgpMessageStream } = await import('./stream.ts'));
    else ({ decodeFile } = await import('./file.ts'));
    if (args.summary) ({ SummarySink } = await import('./summary.ts'));
  } catch (e) {
    err.write(`herald decode: cannot load the decoder: ${e instanceof Error ? e.message : String(e)}\n`);
    return 1;
  }
  opts.beforeDecoding?.();
  const writer = new LineOut(out, !args.summary, out === process.stdout);
  const summary = SummarySink ? new SummarySink(writer) : undefined;
  const sink: DecodeSink = summary ?? writer;
  try {
    if (BgpMessageStream && args.hex !== undefined) {
      let bytes: Buffer;
      try {
        bytes = parseHex(args.hex);
        // "-", "0x" or only separators: nothing to decode is a usage error, not an empty success.
        if (bytes.length === 0) throw new Error('no hex digits');
      } catch (e) {
        err.write(`herald decode: --hex: ${e instanceof Error ? e.message : String(e)}\n`);
        return 2;
      }
      const stream = new BgpMessageStream(sink, args.stream);
      stream.push(bytes);
      stream.end();
    } else {
      const code = await decodeFile?.(args.file as string, sink, writer, args.stream, err);
      if (code !== undefined) return code;
    }
    if (summary) writer.raw({ summary: summary.summary() });
  } catch (e) {
    // A bug in a decoder must still not print a stack trace.
    writer.error({ error: `internal error: ${e instanceof Error ? e.message : String(e)}`, offset: 0, code: null, subcode: null });
  }
  await writer.drain();
  return writer.errors > 0 ? 1 : 0;
}
