/**
 * MessageFramer: splits a TCP byte stream into whole BGP messages (RFC 4271 §4.1), paranoid and copy-safe.
 *
 * - The header is validated (marker, Length range, Type, type-specific Length; see `checkHeader` in
 *   ../codec/header.ts) as soon as its 19 octets have arrived — before the body is buffered.
 * - Any split of the same stream into chunks yields the same messages.
 * - Zero-copy where possible: a message wholly inside one chunk is handed out as a `subarray` view of that chunk;
 *   a message spanning chunks is assembled in a fresh Buffer of exactly its length. The framer never writes into a
 *   chunk and never reuses a Buffer it has handed out, so views stay valid after later pushes (as long as the caller
 *   does not reuse its chunk Buffers; Node sockets do not).
 * - After a BgpError the framer is failed: every later `push` rethrows the same error (the session must close).
 */
import { HEADER_LENGTH, MAX_EXTENDED_MESSAGE_LENGTH, MAX_MESSAGE_LENGTH } from '../constants.ts';
import { checkHeader } from '../codec/header.ts';
import type { BgpError } from '../errors.ts';

/** One per connection: `push` each received chunk, get whole messages (see the module comment). */
export class MessageFramer {
  private max = MAX_MESSAGE_LENGTH;
  /** Partial header bytes (owned). */
  private readonly hdr = Buffer.alloc(HEADER_LENGTH);
  private hdrFill = 0;
  /** The message being assembled across chunks (owned, exactly its length), or null. */
  private msg: Buffer | null = null;
  private msgFill = 0;
  private failed: BgpError | null = null;

  /**
   * The largest accepted message length in octets: 4096 (RFC 4271), or up to 65535 after the extended message
   * capability is negotiated (RFC 8654). Setting a value outside 4096..65535 throws RangeError.
   */
  get maxLength(): number {
    return this.max;
  }
  set maxLength(v: number) {
    if (!Number.isInteger(v) || v < MAX_MESSAGE_LENGTH || v > MAX_EXTENDED_MESSAGE_LENGTH) {
      throw new RangeError(`maxLength must be within ${MAX_MESSAGE_LENGTH}..${MAX_EXTENDED_MESSAGE_LENGTH}: ${v}`);
    }
    this.max = v;
  }

  /** Octets received that do not yet form a whole message. */
  get bufferedLength(): number {
    return this.msg ? this.msgFill : this.hdrFill;
  }

  /**
   * Feeds the next chunk of the stream; returns the whole messages it completes (header included), in order.
   * Throws BgpError 1/1, 1/2 or 1/3 from the header check (then the framer stays failed).
   */
  push(chunk: Buffer): Buffer[] {
    if (this.failed) throw this.failed;
    try {
      return this.consume(chunk);
    } catch (e) {
      this.failed = e as BgpError;
      throw e;
    }
  }

  private consume(chunk: Buffer): Buffer[] {
    const out: Buffer[] = [];
    let p = 0;
    const n = chunk.length;
    // 1. Finish a message already in progress.
    if (this.msg) {
      p = this.fillMsg(chunk, p, out);
    } else if (this.hdrFill > 0) {
      const take = Math.min(HEADER_LENGTH - this.hdrFill, n);
      chunk.copy(this.hdr, this.hdrFill, 0, take);
      this.hdrFill += take;
      p = take;
      if (this.hdrFill < HEADER_LENGTH) return out;
      const length = checkHeader(this.hdr, 0, this.max);
      this.hdrFill = 0;
      const m = Buffer.allocUnsafe(length);
      this.hdr.copy(m, 0);
      if (length === HEADER_LENGTH) {
        out.push(m);
      } else {
        this.msg = m;
        this.msgFill = HEADER_LENGTH;
        p = this.fillMsg(chunk, p, out);
      }
    }
    // 2. Whole messages inside this chunk: zero-copy views.
    while (!this.msg && n - p >= HEADER_LENGTH) {
      const length = checkHeader(chunk, p, this.max);
      if (n - p >= length) {
        out.push(chunk.subarray(p, p + length));
        p += length;
      } else {
        const m = Buffer.allocUnsafe(length);
        chunk.copy(m, 0, p, n);
        this.msg = m;
        this.msgFill = n - p;
        p = n;
      }
    }
    // 3. A partial header at the end.
    if (!this.msg && p < n) {
      chunk.copy(this.hdr, 0, p, n);
      this.hdrFill = n - p;
    }
    return out;
  }

  private fillMsg(chunk: Buffer, p: number, out: Buffer[]): number {
    const m = this.msg as Buffer;
    const take = Math.min(m.length - this.msgFill, chunk.length - p);
    chunk.copy(m, this.msgFill, p, p + take);
    this.msgFill += take;
    if (this.msgFill === m.length) {
      out.push(m);
      this.msg = null;
      this.msgFill = 0;
    }
    return p + take;
  }
}
