/**
 * NLRI prefixes and IP addresses: the wire form `<length octet><ceil(length/8) prefix octets>` of RFC 4271 §4.3,
 * optionally preceded by a 4-octet Path Identifier (RFC 7911 §3), and the canonical strings Herald uses as keys
 * ("10.0.0.0/24", "2001:db8::/32").
 *
 * Decoding is the hot path of MRT dump reading, so it works on offsets into the received Buffer, never slices it,
 * and formats IPv4 with plain arithmetic and IPv6 with one pass over eight 16-bit groups. Host bits beyond the
 * prefix length are zeroed on decode (canonical prefixes), so "10.1.2.3/8" on the wire decodes as "10.0.0.0/8".
 *
 * IPv6 text follows RFC 5952 exactly as glibc's inet_ntop (and Node's `net.SocketAddress`) prints it: lowercase,
 * no leading zeros, the longest run of two or more zero groups (the first on a tie) written "::", and the
 * IPv4-mapped (::ffff:a.b.c.d) and IPv4-compatible (::a.b.c.d) forms with a dotted-quad tail.
 */
import type { Family } from '../constants.ts';
import { BgpError } from '../errors.ts';
import { uint32At } from '../wire/reader.ts';
import type { ByteWriter } from '../wire/writer.ts';
import type { NlriEntry } from './types.ts';

/** Largest prefix length of a family in bits: 32 for IPv4, 128 for IPv6. */
export function maxPrefixBits(family: Family): number {
  return family === 'ipv4-unicast' ? 32 : 128;
}

/** Family of a canonical prefix or address string, by the presence of ':' (IPv6). */
export function familyOfPrefix(prefix: string): Family {
  return prefix.includes(':') ? 'ipv6-unicast' : 'ipv4-unicast';
}

// ---------------------------------------------------------------------------------------------------------------
// Formatting (bytes → text)

/** Lowercase hex of an octet: without leading zero ("0" … "ff"), and always two digits ("00" … "ff"). */
const HEX_OCTET = Array.from({ length: 256 }, (_, i) => i.toString(16));
const HEX_OCTET2 = HEX_OCTET.map((h) => h.padStart(2, '0'));

/** Lowercase hex of a 16-bit group without leading zeros (RFC 5952 §4.1). */
function hex16(v: number): string {
  return v < 0x100 ? (HEX_OCTET[v] as string) : (HEX_OCTET[v >>> 8] as string) + (HEX_OCTET2[v & 0xff] as string);
}

/** "0" … "255", and the same with a dot after them: an IPv4 address is four pieces of text, no number formatting. */
const OCTET = Array.from({ length: 256 }, (_, i) => String(i));
const OCTET_DOT = OCTET.map((o) => o + '.');
/** "/0" … "/128": the length part of a prefix. */
const SLASH_BITS = Array.from({ length: 129 }, (_, i) => '/' + i);

/** Dotted quad of the 4 octets at `buf[off..off+4)`. The caller guarantees the bounds. */
export function formatIPv4(buf: Uint8Array, off = 0): string {
  return (
    (OCTET_DOT[buf[off] as number] as string) +
    (OCTET_DOT[buf[off + 1] as number] as string) +
    (OCTET_DOT[buf[off + 2] as number] as string) +
    (OCTET[buf[off + 3] as number] as string)
  );
}

/** Eight 16-bit groups reused by formatIPv6 (single-threaded; never escapes). */
const groups = new Uint16Array(8);

/**
 * RFC 5952 text of the 16 octets at `buf[off..off+16)` (the glibc inet_ntop form, see the module comment).
 * The caller guarantees the bounds.
 */
export function formatIPv6(buf: Uint8Array, off = 0): string {
  let bestBase = -1;
  let bestLen = 0;
  let curBase = -1;
  let curLen = 0;
  for (let i = 0; i < 8; i++) {
    const v = (((buf[off + 2 * i] as number) << 8) | (buf[off + 2 * i + 1] as number)) >>> 0;
    groups[i] = v;
    if (v === 0) {
      if (curBase < 0) {
        curBase = i;
        curLen = 1;
      } else curLen++;
    } else if (curBase >= 0) {
      if (curLen > bestLen) {
        bestBase = curBase;
        bestLen = curLen;
      }
      curBase = -1;
    }
  }
  if (curBase >= 0 && curLen > bestLen) {
    bestBase = curBase;
    bestLen = curLen;
  }
  if (bestLen < 2) bestBase = -1;
  // IPv4-compatible (::a.b.c.d) and IPv4-mapped (::ffff:a.b.c.d) forms, as inet_ntop prints them.
  if (bestBase === 0 && (bestLen === 6 || (bestLen === 5 && groups[5] === 0xffff))) {
    return (bestLen === 5 ? '::ffff:' : '::') + formatIPv4(buf, off + 12);
  }
  let s = '';
  for (let i = 0; i < 8; i++) {
    if (i === bestBase) {
      s += i === 0 ? '::' : ':';
      i += bestLen - 1;
      continue;
    }
    s += hex16(groups[i] as number);
    if (i < 7) s += ':';
  }
  return s;
}

/** Text of an address of `len` octets (4 → IPv4, 16 → IPv6). The caller guarantees the bounds. */
export function formatAddress(buf: Uint8Array, off: number, len: 4 | 16): string {
  return len === 4 ? formatIPv4(buf, off) : formatIPv6(buf, off);
}

// ---------------------------------------------------------------------------------------------------------------
// Parsing (text → bytes). These serve encoders and builders, whose input comes from our own code or config:
// malformed text is a local bug and throws a plain Error (never a BgpError).

/** Writes the 4 octets of dotted quad `s` at `out[off]`. Throws Error if `s` is not a dotted quad. */
export function parseIPv4Into(s: string, out: Uint8Array, off: number): void {
  let part = 0;
  let val = 0;
  let digits = 0;
  for (let i = 0; i <= s.length; i++) {
    const c = i < s.length ? s.charCodeAt(i) : 46; /* '.' terminator */
    if (c >= 48 && c <= 57) {
      val = val * 10 + (c - 48);
      digits++;
      if (digits > 3 || val > 255) throw new Error(`invalid IPv4 address: ${JSON.stringify(s)}`);
    } else if (c === 46) {
      if (digits === 0 || part > 3) throw new Error(`invalid IPv4 address: ${JSON.stringify(s)}`);
      out[off + part] = val;
      part++;
      val = 0;
      digits = 0;
    } else throw new Error(`invalid IPv4 address: ${JSON.stringify(s)}`);
  }
  if (part !== 4) throw new Error(`invalid IPv4 address: ${JSON.stringify(s)}`);
}

/**
 * Writes the 16 octets of IPv6 text `s` (any RFC 4291 §2.2 form, including "::" and a dotted-quad tail) at
 * `out[off]`. Throws Error if `s` is not an IPv6 address. Zone ids ("%eth0") are not accepted.
 */
export function parseIPv6Into(s: string, out: Uint8Array, off: number): void {
  const bad = (): Error => new Error(`invalid IPv6 address: ${JSON.stringify(s)}`);
  const dbl = s.indexOf('::');
  if (dbl >= 0 && s.indexOf('::', dbl + 1) >= 0) throw bad();
  const head = dbl >= 0 ? s.slice(0, dbl) : s;
  const tail = dbl >= 0 ? s.slice(dbl + 2) : '';
  const words: number[] = [];
  const parseSide = (part: string, allowV4: boolean): number[] => {
    if (part === '') return [];
    const pieces = part.split(':');
    const res: number[] = [];
    for (let i = 0; i < pieces.length; i++) {
      const p = pieces[i] as string;
      if (allowV4 && i === pieces.length - 1 && p.includes('.')) {
        const b = new Uint8Array(4);
        parseIPv4Into(p, b, 0);
        res.push(((b[0] as number) << 8) | (b[1] as number), ((b[2] as number) << 8) | (b[3] as number));
        continue;
      }
      if (!/^[0-9a-fA-F]{1,4}$/.test(p)) throw bad();
      res.push(parseInt(p, 16));
    }
    return res;
  };
  const h = parseSide(head, dbl < 0);
  const t = parseSide(tail, true);
  if (dbl >= 0) {
    if (h.length + t.length > 7) throw bad();
    words.push(...h);
    for (let i = h.length + t.length; i < 8; i++) words.push(0);
    words.push(...t);
  } else {
    if (h.length !== 8) throw bad();
    words.push(...h);
  }
  for (let i = 0; i < 8; i++) {
    const w = words[i] as number;
    out[off + 2 * i] = w >>> 8;
    out[off + 2 * i + 1] = w & 0xff;
  }
}

/** Bytes of an IPv4 (4 octets) or IPv6 (16 octets) address string. Throws Error on malformed text. */
export function parseAddress(s: string): Buffer {
  if (s.includes(':')) {
    const b = Buffer.alloc(16);
    parseIPv6Into(s, b, 0);
    return b;
  }
  const b = Buffer.alloc(4);
  parseIPv4Into(s, b, 0);
  return b;
}

/** Canonical text of an address string (e.g. "2001:DB8:0::1" → "2001:db8::1"). Throws Error on malformed text. */
export function canonicalAddress(s: string): string {
  const b = parseAddress(s);
  return b.length === 4 ? formatIPv4(b, 0) : formatIPv6(b, 0);
}

/**
 * Splits "addr/len" into the address bytes (4 or 16, host bits zeroed) and the length in bits.
 * Throws Error if the text is not a prefix of the given family (or of either family when `family` is omitted).
 */
export function parsePrefix(prefix: string, family?: Family): { bytes: Buffer; length: number } {
  const slash = prefix.indexOf('/');
  if (slash < 0) throw new Error(`invalid prefix (no /length): ${JSON.stringify(prefix)}`);
  const lenText = prefix.slice(slash + 1);
  if (!/^\d{1,3}$/.test(lenText)) throw new Error(`invalid prefix length: ${JSON.stringify(prefix)}`);
  const length = Number(lenText);
  const bytes = parseAddress(prefix.slice(0, slash));
  const fam: Family = bytes.length === 4 ? 'ipv4-unicast' : 'ipv6-unicast';
  if (family !== undefined && fam !== family) throw new Error(`prefix ${prefix} is not ${family}`);
  if (length > bytes.length * 8) throw new Error(`prefix length out of range: ${JSON.stringify(prefix)}`);
  maskHostBits(bytes, length);
  return { bytes, length };
}

/** Zeroes the bits of `bytes` beyond the first `length` bits, in place. */
function maskHostBits(bytes: Uint8Array, length: number): void {
  const full = length >>> 3;
  const rem = length & 7;
  let i = full;
  if (rem !== 0 && i < bytes.length) {
    bytes[i] = (bytes[i] as number) & (0xff << (8 - rem)) & 0xff;
    i++;
  }
  for (; i < bytes.length; i++) bytes[i] = 0;
}

/**
 * True when `prefix` is an IPv4 prefix in canonical text already: a dotted quad and a length 0..32 without leading
 * zeros, host bits zero. {@link canonicalPrefix} returns such a text itself (no parse, no new string).
 */
export function isCanonicalIPv4Prefix(prefix: string): boolean {
  const n = prefix.length;
  let value = 0; // the address's 32 bits, as an int32
  let parts = 0;
  let octet = 0;
  let digits = 0;
  let i = 0;
  for (; i < n; i++) {
    const c = prefix.charCodeAt(i);
    if (c >= 48 && c <= 57) {
      if (digits === 1 && octet === 0) return false; // a leading zero
      octet = octet * 10 + (c - 48);
      if (++digits > 3 || octet > 255) return false;
    } else if (c === 46 || c === 47) {
      if (digits === 0) return false;
      value = (value << 8) | octet;
      parts++;
      octet = 0;
      digits = 0;
      if (c === 47) break;
      if (parts > 3) return false;
    } else return false;
  }
  if (parts !== 4 || i >= n) return false;
  const lenDigits = n - i - 1;
  if (lenDigits < 1 || lenDigits > 2) return false;
  let length = 0;
  for (let j = i + 1; j < n; j++) {
    const c = prefix.charCodeAt(j);
    if (c < 48 || c > 57) return false;
    length = length * 10 + (c - 48);
  }
  if (length > 32 || (lenDigits === 2 && prefix.charCodeAt(i + 1) === 48)) return false;
  // Shifting the network bits out leaves the host bits (a shift by 32 would shift by 0).
  return length === 32 || value << length === 0;
}

/** Canonical form of a prefix string: host bits zeroed, address in canonical text. Throws Error on malformed text. */
export function canonicalPrefix(prefix: string): string {
  if (isCanonicalIPv4Prefix(prefix)) return prefix;
  const { bytes, length } = parsePrefix(prefix);
  return `${bytes.length === 4 ? formatIPv4(bytes, 0) : formatIPv6(bytes, 0)}/${length}`;
}

/**
 * Octets the prefix occupies on the wire, without a Path Identifier: 1 (length octet) + ceil(bits/8)
 * (RFC 4271 §4.3). Add 4 per entry when ADD-PATH is on (RFC 7911 §3). Throws Error on malformed text.
 */
export function nlriLength(prefix: string): number {
  const slash = prefix.lastIndexOf('/');
  const bits = Number(prefix.slice(slash + 1));
  if (slash < 0 || !Number.isInteger(bits) || bits < 0 || bits > 128) throw new Error(`invalid prefix: ${JSON.stringify(prefix)}`);
  return 1 + ((bits + 7) >>> 3);
}

// ---------------------------------------------------------------------------------------------------------------
// Decoding

/** Scratch for IPv6 prefix formatting (single-threaded; never escapes). */
const scratch16 = new Uint8Array(16);

/**
 * Formats the prefix whose length octet says `bits` and whose `ceil(bits/8)` octets start at `buf[off]`,
 * zeroing host bits. The caller has checked bounds and `bits <= 32/128`.
 */
function formatPrefixAt(buf: Buffer, off: number, bits: number, v6: boolean): string {
  const n = (bits + 7) >>> 3;
  if (!v6) {
    let a = 0;
    let b = 0;
    let c = 0;
    let d = 0;
    if (n > 0) a = buf[off] as number;
    if (n > 1) b = buf[off + 1] as number;
    if (n > 2) c = buf[off + 2] as number;
    if (n > 3) d = buf[off + 3] as number;
    const rem = bits & 7;
    if (rem !== 0) {
      const mask = (0xff << (8 - rem)) & 0xff;
      if (n === 1) a &= mask;
      else if (n === 2) b &= mask;
      else if (n === 3) c &= mask;
      else d &= mask;
    }
    return (OCTET_DOT[a] as string) + (OCTET_DOT[b] as string) + (OCTET_DOT[c] as string) + (OCTET[d] as string) + (SLASH_BITS[bits] as string);
  }
  scratch16.fill(0);
  for (let i = 0; i < n; i++) scratch16[i] = buf[off + i] as number;
  const rem = bits & 7;
  if (rem !== 0) scratch16[n - 1] = (scratch16[n - 1] as number) & (0xff << (8 - rem)) & 0xff;
  return formatIPv6(scratch16, 0) + (SLASH_BITS[bits] as string);
}

/**
 * Decodes the NLRI entries in `buf[start, end)` and appends them to `out` (RFC 4271 §4.3; RFC 4760 §5 for
 * IPv6; RFC 7911 §3 when `addPath`: each entry is preceded by a 4-octet Path Identifier).
 * Host bits are zeroed. Throws BgpError 3/10 (Invalid Network Field, RFC 4271 §6.3 / RFC 7606 §5.3) if a
 * prefix length exceeds 32/128 or an entry runs past `end`; `where` names the field in the error detail.
 */
export function decodeNlriInto(
  buf: Buffer,
  start: number,
  end: number,
  family: Family,
  addPath: boolean,
  out: NlriEntry[],
  where = 'NLRI',
): void {
  const v6 = family === 'ipv6-unicast';
  const max = v6 ? 128 : 32;
  let p = start;
  while (p < end) {
    let pathId = 0;
    if (addPath) {
      if (end - p < 5) throw BgpError.invalidNetworkField(`${where}: truncated ADD-PATH entry at offset ${p - start}`);
      pathId = uint32At(buf, p);
      p += 4;
    }
    const bits = buf[p] as number;
    const n = checkedPrefixOctets(bits, max, p, end, where, start);
    const prefix = formatPrefixAt(buf, p + 1, bits, v6);
    out.push(addPath ? { prefix, pathId } : { prefix });
    p += 1 + n;
  }
}

/**
 * Octets of the address part of a prefix of `bits` whose length octet is at `p`; throws BgpError 3/10 when `bits`
 * exceeds `max` or the octets run past `end`. `start` is where the field begins (error offsets are relative to it).
 */
function checkedPrefixOctets(bits: number, max: number, p: number, end: number, where: string, start: number): number {
  if (bits > max) throw BgpError.invalidNetworkField(`${where}: prefix length ${bits} > ${max} at offset ${p - start}`);
  const n = (bits + 7) >>> 3;
  if (p + 1 + n > end) throw BgpError.invalidNetworkField(`${where}: prefix of /${bits} overruns the field at offset ${p - start}`);
  return n;
}

/**
 * Decodes the one prefix at `buf[off]` in NLRI encoding (RFC 4271 §4.3: a length octet in bits, then ceil(bits/8)
 * octets; no Path Identifier), for fields that hold a single prefix, such as the prefix of an MRT RIB record
 * (RFC 6396 §4.3.2). Host bits are zeroed.
 * @returns the canonical prefix text and the offset after its last octet.
 * Throws BgpError 3/10 (Invalid Network Field) when `off >= end`, the length exceeds 32/128 or the octets run past
 * `end`; `where` names the field in the error detail.
 */
export function decodePrefixAt(buf: Buffer, off: number, end: number, family: Family, where = 'NLRI'): { prefix: string; next: number } {
  if (off >= end) throw BgpError.invalidNetworkField(`${where}: missing prefix length octet`);
  const v6 = family === 'ipv6-unicast';
  const bits = buf[off] as number;
  const n = checkedPrefixOctets(bits, v6 ? 128 : 32, off, end, where, off);
  return { prefix: formatPrefixAt(buf, off + 1, bits, v6), next: off + 1 + n };
}

/**
 * Canonical text of the prefix of `bits` whose address octets start at `buf[off]` (the form that stores a length
 * beside an address, e.g. MRT TABLE_DUMP, RFC 6396 §4.2: octets past ceil(bits/8) are ignored). Host bits are zeroed.
 * Throws BgpError 3/10 when `bits` exceeds 32/128 or the ceil(bits/8) octets run past `end`.
 */
export function formatPrefixBits(buf: Buffer, off: number, end: number, bits: number, family: Family, where = 'prefix'): string {
  const v6 = family === 'ipv6-unicast';
  checkedPrefixOctets(bits, v6 ? 128 : 32, off - 1, end, where, off - 1);
  return formatPrefixAt(buf, off, bits, v6);
}

/**
 * Decodes a whole NLRI field (RFC 4271 §4.3 / RFC 4760 §5 / RFC 7911 §3).
 * @returns entries in wire order, prefixes canonical (host bits zeroed), `pathId` present only when `addPath`.
 * Throws BgpError 3/10 (Invalid Network Field) on a prefix length > 32/128 or a truncated entry.
 */
export function decodeNlri(buf: Buffer, family: Family, addPath: boolean): NlriEntry[] {
  const out: NlriEntry[] = [];
  decodeNlriInto(buf, 0, buf.length, family, addPath, out);
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// Encoding

/** Octets `entries` occupy on the wire. Throws Error on malformed prefix text. */
export function nlriFieldLength(entries: readonly NlriEntry[], addPath: boolean): number {
  let n = 0;
  for (const e of entries) n += nlriLength(e.prefix) + (addPath ? 4 : 0);
  return n;
}

/**
 * Writes the NLRI entries at `out[off]` and returns the offset after them. `out` must have room
 * (see nlriFieldLength). Throws Error on malformed prefix text, a prefix of the wrong family, or (with
 * `addPath`) a missing or out-of-range pathId.
 */
export function encodeNlriAt(entries: readonly NlriEntry[], family: Family, addPath: boolean, out: Buffer, off: number): number {
  const v6 = family === 'ipv6-unicast';
  let p = off;
  for (const e of entries) {
    if (addPath) {
      const id = e.pathId ?? 0;
      if (!Number.isInteger(id) || id < 0 || id > 0xffffffff) throw new Error(`invalid ADD-PATH path identifier ${id}`);
      out.writeUInt32BE(id, p);
      p += 4;
    }
    const s = e.prefix;
    const slash = s.indexOf('/');
    if (slash < 0) throw new Error(`invalid prefix (no /length): ${JSON.stringify(s)}`);
    const bits = Number(s.slice(slash + 1));
    if (!Number.isInteger(bits) || bits < 0 || bits > (v6 ? 128 : 32) || slash === s.length - 1) {
      throw new Error(`invalid prefix length for ${family}: ${JSON.stringify(s)}`);
    }
    const addrText = s.slice(0, slash);
    if (addrText.includes(':') !== v6) throw new Error(`prefix ${s} is not ${family}`);
    const n = (bits + 7) >>> 3;
    out[p] = bits;
    if (v6) {
      parseIPv6Into(addrText, scratch16, 0);
      for (let i = 0; i < n; i++) out[p + 1 + i] = scratch16[i] as number;
    } else {
      parseIPv4Into(addrText, scratch16, 0);
      for (let i = 0; i < n; i++) out[p + 1 + i] = scratch16[i] as number;
    }
    const rem = bits & 7;
    if (rem !== 0) out[p + n] = (out[p + n] as number) & (0xff << (8 - rem)) & 0xff;
    p += 1 + n;
  }
  return p;
}

/**
 * Appends NLRI entries to `w` (the wire form of encodeNlri; nothing for an empty list). Throws Error on malformed
 * prefix text or a prefix of the wrong family, RangeError never (the field is sized first).
 */
export function writeNlri(w: ByteWriter, entries: readonly NlriEntry[], family: Family, addPath: boolean): void {
  if (entries.length > 0) w.bytes(encodeNlri(entries, family, addPath));
}

/**
 * Encodes NLRI entries (RFC 4271 §4.3; RFC 4760 §5; RFC 7911 §3 with `addPath`, using `pathId ?? 0`).
 * Host bits in the text are zeroed on the wire. Throws Error on malformed prefix text or a prefix of the
 * wrong family.
 */
export function encodeNlri(entries: readonly NlriEntry[], family: Family, addPath: boolean): Buffer {
  const out = Buffer.alloc(nlriFieldLength(entries, addPath));
  encodeNlriAt(entries, family, addPath, out, 0);
  return out;
}
