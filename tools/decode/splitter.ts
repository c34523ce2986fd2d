/**
 * Splits a byte stream into BGP messages by their 19-octet header (RFC 4271 §4.1), for `herald decode`.
 *
 * Unlike the session's MessageFramer, which stops at the first framing error (the session then closes), this splitter
 * is built for reading recordings: after a bad marker or a bad Length it reports the error and resynchronises on the
 * next plausible header (16 × 0xff, a Length in range and a Type 1..5). A stream that starts in the middle of a
 * session (no SYN in the capture) is synchronised the same way, silently except for a note.
 */

/** Offsets are stream offsets (octets since the start of the direction's byte stream). */
export type SplitItem =
  | { readonly kind: 'message'; readonly offset: number; readonly bytes: Buffer }
  /** Framing error: RFC 4271 §6.1 code 1 with subcode 1 (marker) or 2 (length). */
  | { readonly kind: 'error'; readonly offset: number; readonly code: number; readonly subcode: number; readonly message: string }
  /** Octets skipped while looking for a message header. */
  | { readonly kind: 'skipped'; readonly offset: number; readonly octets: number; readonly reason: string }
  /** The stream ended inside a message. */
  | { readonly kind: 'truncated'; readonly offset: number; readonly have: number; readonly need: number };

const HEADER = 19;

function isMarker(b: Buffer, o: number): boolean {
  for (let i = 0; i < 16; i++) if (b[o + i] !== 0xff) return false;
  return true;
}

export class BgpStreamSplitter {
  private buf: Buffer = Buffer.alloc(0);
  /** Stream offset of buf[0]. */
  private base = 0;
  private synced: boolean;
  private skipReason = '';

  /** @param synced false when the stream may start inside a message (capture began mid-session). */
  constructor(synced: boolean) {
    this.synced = synced;
    if (!synced) this.skipReason = 'capture starts inside the session';
  }

  /** Marks a hole in the stream: the next message is found by resynchronising. */
  gap(missing: number, reason = 'bytes missing from the capture'): void {
    this.base += this.buf.length + missing;
    const dropped = this.buf.length;
    this.buf = Buffer.alloc(0);
    this.synced = false;
    this.skipReason = dropped > 0 ? `${reason} (${dropped} octets of an incomplete message dropped)` : reason;
  }

  /**
   * Appends bytes and returns the complete messages and errors now available.
   * @param maxLength the largest valid message Length (4096, or 65535 with Extended Message; RFC 8654).
   */
  push(chunk: Buffer, maxLength: () => number): SplitItem[] {
    this.buf = this.buf.length === 0 ? chunk : Buffer.concat([this.buf, chunk]);
    const out: SplitItem[] = [];
    let o = 0;
    const b = this.buf;
    for (;;) {
      if (!this.synced) {
        const found = this.findHeader(b, o, maxLength());
        if (found < 0) {
          // Keep the last 18 octets: a marker may straddle the next chunk.
          const keep = Math.max(o, b.length - (HEADER - 1));
          if (keep > o) out.push({ kind: 'skipped', offset: this.base + o, octets: keep - o, reason: this.skipReason });
          o = keep;
          break;
        }
        if (found > o) out.push({ kind: 'skipped', offset: this.base + o, octets: found - o, reason: this.skipReason });
        o = found;
        this.synced = true;
      }
      if (b.length - o < HEADER) break;
      if (!isMarker(b, o)) {
        out.push({ kind: 'error', offset: this.base + o, code: 1, subcode: 1, message: 'Message Header Error / Connection Not Synchronized: marker is not all ones' });
        this.synced = false;
        this.skipReason = 'resynchronising after a framing error';
        o++;
        continue;
      }
      const length = b.readUInt16BE(o + 16);
      const max = maxLength();
      if (length < HEADER || length > max) {
        out.push({ kind: 'error', offset: this.base + o, code: 1, subcode: 2, message: `Message Header Error / Bad Message Length: length ${length} (valid 19..${max})` });
        this.synced = false;
        this.skipReason = 'resynchronising after a framing error';
        o++;
        continue;
      }
      if (b.length - o < length) break;
      out.push({ kind: 'message', offset: this.base + o, bytes: b.subarray(o, o + length) });
      o += length;
    }
    this.base += o;
    this.buf = o >= b.length ? Buffer.alloc(0) : b.subarray(o);
    return out;
  }

  /** Reports an incomplete message left at the end of the stream, if any. */
  end(): SplitItem[] {
    const b = this.buf;
    if (b.length === 0) return [];
    this.buf = Buffer.alloc(0);
    if (!this.synced) return [{ kind: 'skipped', offset: this.base, octets: b.length, reason: this.skipReason }];
    const need = b.length >= HEADER ? b.readUInt16BE(16) : HEADER;
    return [{ kind: 'truncated', offset: this.base, have: b.length, need }];
  }

  /** Index of the next plausible header at or after `from`, or -1. */
  private findHeader(b: Buffer, from: number, max: number): number {
    for (let i = b.indexOf(0xff, from); i >= 0 && i + HEADER <= b.length; i = b.indexOf(0xff, i + 1)) {
      if (!isMarker(b, i)) continue;
      const length = b.readUInt16BE(i + 16);
      const type = b[i + 18] ?? 0;
      if (length >= HEADER && length <= max && type >= 1 && type <= 5) return i;
    }
    return -1;
  }
}
