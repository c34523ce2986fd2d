/**
 * JsonOut: JSON text written as octets into one growable Buffer, for the codec's JSON forms (attributes-json.ts,
 * json.ts). A program that prints many messages (`herald decode`, tools/decode/) writes each line straight into its
 * output buffer and hands the octets to the output in large chunks: no string is built per field or per line, and
 * nothing is encoded again on the way out. The string forms (`messageJsonText`, `attributesJsonText`) are the same
 * writers run into a scratch JsonOut, so there is one definition of each JSON form.
 *
 * `ascii` copies a string code unit by code unit: only for text made of ASCII characters that need no JSON escaping
 * (numbers, addresses, prefixes, hex, names from constant tables; see attributes-json.ts). Anything else (text from
 * `JSON.stringify`, which may hold non-ASCII characters) goes through `utf8`. Single-threaded use; never throws.
 */

/** Octets of ASCII digits are '0' (48) … '9' (57). */
const ZERO = 48;

export class JsonOut {
  /** The octets written so far are `buf[0..pos)`. */
  buf: Buffer;
  pos = 0;

  /** @param capacity starting size of the buffer in octets; it doubles when a write needs more. */
  constructor(capacity = 4096) {
    this.buf = Buffer.allocUnsafe(Math.max(64, capacity));
  }

  /** Makes room for `n` more octets (copies what was written into a buffer at least twice as big). */
  private grow(n: number): void {
    let cap = this.buf.length * 2;
    while (cap < this.pos + n) cap *= 2;
    const next = Buffer.allocUnsafe(cap);
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }

  /** Appends one octet (an ASCII character code). */
  byte(c: number): void {
    if (this.pos >= this.buf.length) this.grow(1);
    this.buf[this.pos++] = c;
  }

  /** Appends `s`, which holds only ASCII characters that need no JSON escaping (see the module comment). */
  ascii(s: string): void {
    const n = s.length;
    if (this.pos + n > this.buf.length) this.grow(n);
    const b = this.buf;
    let p = this.pos;
    for (let i = 0; i < n; i++) b[p++] = s.charCodeAt(i);
    this.pos = p;
  }

  /** Appends any string as UTF-8 (e.g. JSON text from `JSON.stringify`). */
  utf8(s: string): void {
    // A UTF-16 code unit takes at most 3 octets of UTF-8.
    if (this.pos + 3 * s.length > this.buf.length) this.grow(3 * s.length);
    this.pos += this.buf.write(s, this.pos, 'utf8');
  }

  /** Appends the octets of `b` (text already encoded, e.g. a line's constant fields). */
  octets(b: Uint8Array): void {
    const n = b.length;
    if (this.pos + n > this.buf.length) this.grow(n);
    const d = this.buf;
    let p = this.pos;
    for (let i = 0; i < n; i++) d[p++] = b[i] as number;
    this.pos = p;
  }

  /** Appends a finite number as `JSON.stringify` prints it; integers 0 … 2^32 − 1 without building a string. */
  num(v: number): void {
    if (!(v >= 0 && v <= 0xffffffff && v === Math.floor(v))) {
      this.ascii(String(v));
      return;
    }
    if (this.pos + 10 > this.buf.length) this.grow(10);
    const b = this.buf;
    if (v < 10) {
      b[this.pos++] = ZERO + v;
      return;
    }
    let digits = 2;
    for (let t = 100; digits < 10 && v >= t; t *= 10) digits++;
    let p = this.pos + digits;
    this.pos = p;
    while (v >= 10) {
      const q = Math.floor(v / 10);
      b[--p] = ZERO + (v - q * 10);
      v = q;
    }
    b[p - 1] = ZERO + v;
  }

  /** The text written since `from` (default: all of it), decoded as UTF-8. */
  text(from = 0): string {
    return this.buf.toString('utf8', from, this.pos);
  }

  /** Forgets what was written (the buffer is kept for the next text). */
  reset(): void {
    this.pos = 0;
  }

  /**
   * Hands out the octets written so far (the caller may keep them, e.g. until a stream has written them) and goes
   * on in a fresh buffer of the same capacity.
   */
  take(): Buffer {
    const out = this.buf.subarray(0, this.pos);
    this.buf = Buffer.allocUnsafe(this.buf.length);
    this.pos = 0;
    return out;
  }
}
