/**
 * Hex text input of `herald decode`: the `--hex` argument and files of hex text. Whitespace, ':' and '-' separators
 * and "0x" prefixes are ignored; what is left must be hex digits, an even number of them.
 */
import type { UnitParser } from './framing.ts';

/** A character that is neither hex nor a separator; `bytes` holds the octets decoded before it. */
export class HexTextError extends Error {
  override name = 'HexTextError';
  readonly bytes: Buffer;
  constructor(message: string, bytes: Buffer) {
    super(message);
    this.bytes = bytes;
  }
}

/** Incremental hex text decoder: text in pieces, octets out (a piece may end anywhere, even inside "0x"). */
export class HexText {
  /** A trailing "0" that may begin "0x" in the next piece. */
  private zero = '';
  /** An odd digit waiting for its partner. */
  private half = '';
  /** Characters consumed so far (for error positions). */
  private position = 0;

  /**
   * Decodes the next piece. Throws HexTextError naming the first character that is not hex or a separator; its
   * `bytes` are the octets decoded before that character.
   */
  push(text: string): Buffer {
    let s = this.zero + text;
    this.zero = '';
    // "0x" blanked to two spaces keeps positions in `s` equal to positions in the text.
    const bad = /[^0-9a-fA-F\s:-]/.exec(s.replace(/0x/gi, '  '));
    if (bad) {
      const at = this.position + bad.index + 1;
      const before = this.digits(s.slice(0, bad.index));
      throw new HexTextError(`not a hex digit: ${JSON.stringify(bad[0])} at character ${at}`, before);
    }
    if (s.endsWith('0')) {
      this.zero = '0';
      s = s.slice(0, -1);
    }
    return this.digits(s);
  }

  /** Octets of the digits in `s` (no bad characters, "0x" prefixes complete), keeping an odd digit for later. */
  private digits(s: string): Buffer {
    this.position += s.length;
    const digits = this.half + s.replace(/0x/gi, '').replace(/[\s:-]/g, '');
    const even = digits.length & ~1;
    this.half = digits.slice(even);
    return Buffer.from(digits.slice(0, even), 'hex');
  }

  /** The text ended. Returns the last octet, if a "0" was held back; throws Error on an odd number of digits. */
  end(): Buffer {
    const digits = this.half + this.zero;
    this.half = '';
    this.zero = '';
    if (digits.length % 2 !== 0) throw new Error('odd number of hex digits');
    return Buffer.from(digits, 'hex');
  }
}

/** Parses hex text (the rules in the module comment). Throws Error on other characters or an odd digit count. */
export function parseHex(text: string): Buffer {
  const h = new HexText();
  const bytes = h.push(text);
  return Buffer.concat([bytes, h.end()]);
}

/** Characters of hex text: digits, separators, and the x of "0x". */
function isHexTextChar(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66) || c === 0x78 || c === 0x58 || c === 0x20 || c === 0x3a || c === 0x2d || (c >= 0x09 && c <= 0x0d);
}

/**
 * Whether the first octets of a file are hex text of BGP messages: only hex text characters, and the digits (after
 * "0x" prefixes and separators) begin with the 32 f's of a BGP marker (RFC 4271 §4.1). 'unknown' while too few
 * digits have arrived to tell.
 */
export function looksHex(head: Buffer, ended: boolean): boolean | 'unknown' {
  const n = Math.min(head.length, 512);
  for (let i = 0; i < n; i++) if (!isHexTextChar(head[i] as number)) return false;
  const digits = head.toString('latin1', 0, n).replace(/0x/gi, '').replace(/[\s:-]/g, '');
  if (digits.length < 32 && !ended && n === head.length) return /^f*$/i.test(digits) ? 'unknown' : false;
  return digits.length >= 32 && /^f{32}/i.test(digits);
}

/** Where hex files put the octets they decode (the BGP message stream of stream.ts). */
export interface OctetSink {
  push(bytes: Buffer): void;
  end(): void;
}

/** A hex text file as a UnitParser (framing.ts): text chunks to octets for `target`. */
export class HexReader implements UnitParser {
  readonly need = 1;
  done = false;
  private readonly text = new HexText();
  private readonly target: OctetSink;
  private readonly onError: (message: string, offset: number) => void;

  constructor(target: OctetSink, onError: (message: string, offset: number) => void) {
    this.target = target;
    this.onError = onError;
  }

  feed(buf: Buffer, base: number): number {
    try {
      this.target.push(this.text.push(buf.toString('latin1')));
    } catch (e) {
      if (e instanceof HexTextError) this.target.push(e.bytes);
      this.onError(`hex text: ${e instanceof Error ? e.message : String(e)}`, base);
      this.target.end();
      this.done = true;
    }
    return buf.length;
  }

  end(_rest: Buffer, base: number, cut: boolean): void {
    try {
      this.target.push(this.text.end());
    } catch (e) {
      if (!cut) this.onError(`hex text: ${e instanceof Error ? e.message : String(e)}`, base);
    }
    this.target.end();
  }
}
