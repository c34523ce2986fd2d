/**
 * The printing sink of `herald decode`: JSON lines batched into large writes to the output stream, with
 * back-pressure between batches (the file decoder waits on `drain`).
 */
import type { Writable } from 'node:stream';
import { JsonOut } from './codec.ts';
import type { DecodeSink, ErrorLine, LineBytes, LineStats } from './sink.ts';

/** Octets of output gathered before one write. */
const BATCH = 1 << 16;

/**
 * Line writer that batches output into large writes and honours back-pressure between batches. Lines come as
 * strings (encoded as UTF-8 into the batch as they come) or are written into the batch as octets by the decoder
 * (`bytes`, see LineBytes in sink.ts); a batch goes out once it holds BATCH octets.
 */
export class LineOut implements DecodeSink, LineBytes {
  /** The batch: room for a batch and a line or two before it grows. */
  readonly out = new JsonOut(BATCH + BATCH / 4);
  private readonly stream: Writable;
  private readonly printLines: boolean;
  readonly bytes: LineBytes | undefined;
  errors = 0;
  closed = false;

  constructor(out: Writable, printLines: boolean) {
    this.stream = out;
    this.printLines = printLines;
    this.bytes = printLines ? this : undefined;
    out.on('error', () => {
      this.closed = true; // e.g. EPIPE when piped into `head`
    });
  }
  private push(json: string): void {
    if (this.closed) return;
    this.out.utf8(json);
    this.written();
  }
  /** Ends the line written at the end of the batch (LineBytes). */
  written(_stats?: LineStats): void {
    const o = this.out;
    if (this.closed) {
      o.reset();
      return;
    }
    o.byte(0x0a);
    if (o.pos >= BATCH) this.flushSync();
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
    if (this.out.pos === 0 || this.closed) return;
    // The stream may hold the octets until they are written: they are handed over and the batch goes on in a new buffer.
    this.stream.write(this.out.take());
  }
  /** Flushes and waits until the stream has room again. */
  async drain(): Promise<void> {
    this.flushSync();
    if (this.closed || !this.stream.writableNeedDrain) return;
    const out = this.stream;
    await new Promise<void>((resolve) => {
      const done = (): void => {
        out.off('drain', done);
        out.off('error', done);
        out.off('close', done);
        resolve();
      };
      out.on('drain', done);
      out.on('error', done);
      out.on('close', done);
    });
  }
}
