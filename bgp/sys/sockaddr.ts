/**
 * Socket address structures for the libc calls of bgp/sys/libc.ts (Linux layout): struct sockaddr_in (16 octets:
 * family, port, address) and struct sockaddr_in6 (28 octets: family, port, flow info, address, scope id), written
 * alone for bind(2) or into a larger structure (struct tcp_md5sig starts with a sockaddr_storage).
 */
import { parseAddress } from '../codec/nlri.ts';

export const AF_INET = 2;
export const AF_INET6 = 10;

/** The IP version of an address text (a colon means IPv6). */
export function familyOf(address: string): 4 | 6 {
  return address.includes(':') ? 6 : 4;
}

/**
 * Writes the sockaddr_in or sockaddr_in6 of `address`:`port` into `into` at `offset` (the rest of it left as it is:
 * zero in a new Buffer). Returns the structure's length. Throws Error for text that is not an IP address.
 */
export function writeSockaddr(address: string, port: number, into: Buffer, offset = 0): number {
  const bytes = parseAddress(address);
  const v6 = bytes.length === 16;
  into.writeUInt16LE(v6 ? AF_INET6 : AF_INET, offset); // sa_family_t, host order
  into.writeUInt16BE(port, offset + 2); // network order
  bytes.copy(into, offset + (v6 ? 8 : 4));
  return v6 ? 28 : 16;
}

/** A new struct sockaddr_in / sockaddr_in6 for `address`:`port` of IP version `family`. Throws Error otherwise. */
export function sockaddr(family: 4 | 6, address: string, port: number): Buffer {
  const sa = Buffer.alloc(family === 4 ? 16 : 28);
  if (familyOf(address) !== family) throw new Error(`${address} is not an IPv${family} address`);
  writeSockaddr(address, port, sa);
  return sa;
}
