/**
 * ByteWriter: a growable big-endian byte builder for every BGP encoder.
 *
 * Writes go into one internal Buffer that doubles when full (amortised O(1), no per-byte allocation). Length fields
 * whose value is known only later are written with `reserve(n)` (returns the offset) and backfilled with
 * `setU8`/`setU16`/`setU32` — e.g. the 19-octet header (RFC 4271 §4.1) or an attribute's length.
 * Values out of range for a field are a local bug and throw a plain RangeError (never a BgpError).
 */

export class ByteWriter {
  private buf: Buffer;
  private pos = 0;

  /** @param initialCapacity starting size of the internal buffer in octets (default 256). */
  constructor(initialCapacity = 256) {
    this.buf = Buffer.allocUnsafe(Math.max(16, initialCapacity));
  }

  /** Number of octets written so far (also the offset of the next write). */
  get length(): number {
    return this.pos;
  }

  private grow(n: number): void {
    const need = this.pos + n;
    if (need <= this.buf.length) return;
    let cap = this.buf.length * 2;
    while (cap < need) cap *= 2;
    const next = Buffer.allocUnsafe(cap);
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }

  /** Appends one octet. Throws RangeError unless 0 <= v <= 255. */
  u8(v: number): this {
    if (!(v >= 0 && v <= 0xff) || !Number.isInteger(v)) throw new RangeError(`u8 out of range: ${v}`);
    this.grow(1);
    this.buf[this.pos++] = v;
    return this;
  }

  /** Appends a 2-octet big-endian integer. Throws RangeError unless 0 <= v <= 65535. */
  u16(v: number): this {
    if (!(v >= 0 && v <= 0xffff) || !Number.isInteger(v)) throw new RangeError(`u16 out of range: ${v}`);
    this.grow(2);
    this.buf[this.pos] = v >>> 8;
    this.buf[this.pos + 1] = v & 0xff;
    this.pos += 2;
    return this;
  }

  /** Appends a 4-octet big-endian integer. Throws RangeError unless 0 <= v <= 4294967295. */
  u32(v: number): this {
    if (!(v >= 0 && v <= 0xffffffff) || !Number.isInteger(v)) throw new RangeError(`u32 out of range: ${v}`);
    this.grow(4);
    this.buf.writeUInt32BE(v, this.pos);
    this.pos += 4;
    return this;
  }

  /** Appends the octets of `b` (copied). */
  bytes(b: Uint8Array): this {
    this.grow(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
    return this;
  }

  /** Appends `n` zero octets and returns the offset of the first, for a later `setU8`/`setU16`/`setU32` backfill. */
  reserve(n: number): number {
    if (!(n >= 0) || !Number.isInteger(n)) throw new RangeError(`reserve: bad size ${n}`);
    this.grow(n);
    const at = this.pos;
    this.buf.fill(0, at, at + n);
    this.pos += n;
    return at;
  }

  /** Overwrites one octet at `offset` (< length). Throws RangeError on a bad offset or value. */
  setU8(offset: number, v: number): this {
    if (!(offset >= 0 && offset + 1 <= this.pos)) throw new RangeError(`setU8: offset ${offset} outside written data`);
    if (!(v >= 0 && v <= 0xff) || !Number.isInteger(v)) throw new RangeError(`u8 out of range: ${v}`);
    this.buf[offset] = v;
    return this;
  }

  /** Overwrites a 2-octet big-endian integer at `offset`. Throws RangeError on a bad offset or value. */
  setU16(offset: number, v: number): this {
    if (!(offset >= 0 && offset + 2 <= this.pos)) throw new RangeError(`setU16: offset ${offset} outside written data`);
    if (!(v >= 0 && v <= 0xffff) || !Number.isInteger(v)) throw new RangeError(`u16 out of range: ${v}`);
    this.buf[offset] = v >>> 8;
    this.buf[offset + 1] = v & 0xff;
    return this;
  }

  /** Overwrites a 4-octet big-endian integer at `offset`. Throws RangeError on a bad offset or value. */
  setU32(offset: number, v: number): this {
    if (!(offset >= 0 && offset + 4 <= this.pos)) throw new RangeError(`setU32: offset ${offset} outside written data`);
    if (!(v >= 0 && v <= 0xffffffff) || !Number.isInteger(v)) throw new RangeError(`u32 out of range: ${v}`);
    this.buf.writeUInt32BE(v, offset);
    return this;
  }

  /** A view of the bytes written so far. It shares memory with the writer: do not write more while you keep it. */
  view(): Buffer {
    return this.buf.subarray(0, this.pos);
  }

  /** A fresh Buffer holding a copy of the bytes written so far (safe to keep; the writer may be reused). */
  toBuffer(): Buffer {
    const out = Buffer.allocUnsafe(this.pos);
    this.buf.copy(out, 0, 0, this.pos);
    return out;
  }
}
