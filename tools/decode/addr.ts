/**
 * Address and prefix text for `herald decode`: IPv4 dotted quad, IPv6 in RFC 5952 form, and prefixes in
 * the BGP NLRI encoding (RFC 4271 §4.3: a length in bits, then the minimum number of octets) with host bits zeroed.
 */

import { formatIPv4, formatIPv6 } from './codec.ts';

/** Dotted-quad text of the 4 octets at `o` (the codec's formatter, so container and message addresses agree). */
export function ipv4String(b: Buffer, o: number): string {
  return formatIPv4(b, o);
}

/** RFC 5952 text of the 16 octets at `o`, as the codec prints next hops (glibc inet_ntop form, ::ffff:a.b.c.d). */
export function ipv6String(b: Buffer, o: number): string {
  return formatIPv6(b, o);
}

/** Address text of `len` (4 or 16) octets at `o`. */
export function ipString(b: Buffer, o: number, len: number): string {
  return len === 4 ? ipv4String(b, o) : ipv6String(b, o);
}

/**
 * Reads one prefix in NLRI encoding at `o` for an address of `addrLen` octets (4 or 16).
 * Returns the canonical prefix string ("10.0.0.0/8", host bits zeroed) and the offset after it, or undefined when the
 * length exceeds the family or the octets run past `end`.
 */
export function readPrefix(b: Buffer, o: number, end: number, addrLen: number): { prefix: string; next: number } | undefined {
  if (o >= end) return undefined;
  const bits = b[o] ?? 0;
  if (bits > addrLen * 8) return undefined;
  const n = (bits + 7) >> 3;
  if (o + 1 + n > end) return undefined;
  const addr = Buffer.alloc(addrLen);
  b.copy(addr, 0, o + 1, o + 1 + n);
  if (bits % 8 !== 0) addr[n - 1] = (addr[n - 1] ?? 0) & (0xff << (8 - (bits % 8)));
  return { prefix: `${ipString(addr, 0, addrLen)}/${bits}`, next: o + 1 + n };
}
