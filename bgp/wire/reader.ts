/**
 * ByteReader: a bounds-checked big-endian cursor over a Buffer view, for every BGP decoder.
 *
 * The reader never copies: `bytes(n)` returns a `subarray` view of the underlying Buffer (copy it if you keep it
 * beyond the life of the received message). Every read checks bounds first; an overrun throws the BgpError built by
 * the `onOverrun` factory given at construction, so each decoder decides which NOTIFICATION a truncated field means
 * (e.g. 2/0 inside OPEN optional parameters, 3/1 inside UPDATE attributes). No other exception ever escapes a read.
 *
 * Byte order is network order (RFC 4271 §4: "all multi-octet fields are in network byte order").
 */
import type { BgpError } from '../errors.ts';

/**
 * The 4-octet big-endian unsigned integer at `buf[p, p + 4)` (0..4294967295), without a bounds check: for the hot
 * loops of the decoders, which call it only inside a length they have validated (AS numbers, communities, path
 * identifiers). Buffer's own `readUInt32BE` validates its argument and checks bounds on every call, which cost about
 * 5 % of `herald decode` (docs/decode.md "Performance"). Outside `buf` the result is meaningless; never throws.
 */
export function uint32At(buf: Uint8Array, p: number): number {
  return (((buf[p] as number) << 24) | ((buf[p + 1] as number) << 16) | ((buf[p + 2] as number) << 8) | (buf[p + 3] as number)) >>> 0;
}

/** Builds the error thrown when a read would run past the end of the view. */
export type OverrunFactory = () => BgpError;

/** A read cursor over `buf[start, end)`; every read is bounds-checked (see the module comment). */
export class ByteReader {
  private readonly buf: Buffer;
  private pos: number;
  private readonly end: number;
  private readonly onOverrun: OverrunFactory;

  /**
   * @param buf the bytes to read; the reader covers `buf[start, end)` (default: the whole Buffer).
   * @param onOverrun factory of the BgpError thrown when a read needs more bytes than remain.
   * @param start first offset covered (default 0). @param end offset one past the last covered byte (default buf.length).
   * Throws the `onOverrun` error if `start`/`end` do not lie inside `buf` with start <= end.
   */
  constructor(buf: Buffer, onOverrun: OverrunFactory, start = 0, end = buf.length) {
    if (start < 0 || end > buf.length || start > end) throw onOverrun();
    this.buf = buf;
    this.pos = start;
    this.end = end;
    this.onOverrun = onOverrun;
  }

  /** Current position relative to the start of the underlying Buffer (octets). */
  get offset(): number {
    return this.pos;
  }

  /** Octets left before the end of this reader's view. */
  get remaining(): number {
    return this.end - this.pos;
  }

  /** True when every byte of the view has been consumed. */
  get atEnd(): boolean {
    return this.pos >= this.end;
  }

  /** Throws the overrun error unless at least `n` octets remain. */
  ensure(n: number): void {
    if (n < 0 || this.end - this.pos < n) throw this.onOverrun();
  }

  /** Reads one octet (0..255). Throws the overrun error at the end. */
  u8(): number {
    if (this.pos >= this.end) throw this.onOverrun();
    return this.buf[this.pos++] as number;
  }

  /** Reads a 2-octet big-endian unsigned integer (0..65535). Throws the overrun error if fewer than 2 octets remain. */
  u16(): number {
    const p = this.pos;
    if (this.end - p < 2) throw this.onOverrun();
    this.pos = p + 2;
    return ((this.buf[p] as number) << 8) | (this.buf[p + 1] as number);
  }

  /** Reads a 4-octet big-endian unsigned integer (0..4294967295). Throws the overrun error if fewer than 4 remain. */
  u32(): number {
    const p = this.pos;
    if (this.end - p < 4) throw this.onOverrun();
    this.pos = p + 4;
    return uint32At(this.buf, p);
  }

  /** Returns the next octet without consuming it. Throws the overrun error at the end. */
  peekU8(): number {
    if (this.pos >= this.end) throw this.onOverrun();
    return this.buf[this.pos] as number;
  }

  /** Returns a view (no copy) of the next `n` octets and consumes them. Throws the overrun error if fewer remain. */
  bytes(n: number): Buffer {
    const p = this.pos;
    if (n < 0 || this.end - p < n) throw this.onOverrun();
    this.pos = p + n;
    return this.buf.subarray(p, p + n);
  }

  /** Returns a view of everything left and consumes it. */
  rest(): Buffer {
    const p = this.pos;
    this.pos = this.end;
    return this.buf.subarray(p, this.end);
  }

  /** Skips `n` octets. Throws the overrun error if fewer remain. */
  skip(n: number): void {
    if (n < 0 || this.end - this.pos < n) throw this.onOverrun();
    this.pos += n;
  }

  /**
   * Returns a reader over the next `n` octets and consumes them here. The sub-reader throws `onOverrun` if given,
   * else this reader's factory. Throws this reader's overrun error if fewer than `n` octets remain.
   */
  subReader(n: number, onOverrun?: OverrunFactory): ByteReader {
    const p = this.pos;
    if (n < 0 || this.end - p < n) throw this.onOverrun();
    this.pos = p + n;
    return new ByteReader(this.buf, onOverrun ?? this.onOverrun, p, p + n);
  }
}
