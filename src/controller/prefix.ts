/**
 * Canonical IP address and prefix strings for route keys.
 *
 * IPv4 prefixes print as dotted quad ("10.0.0.0/24"); IPv6 in RFC 5952 form ("2001:db8::/64");
 * host bits are always zeroed. IPv4-mapped IPv6 addresses stay IPv6 (mixed notation, RFC 5952 §5). The text is the
 * BGP codec's `canonicalPrefix`, so Service routes and the Speaker's route keys agree.
 */
import { isIPv4, isIPv6 } from 'node:net';
import { canonicalPrefix } from '../../bgp/codec/nlri.ts';

/** Address family of a route. */
export type Family = 'ipv4' | 'ipv6';

/** Family of an IP address string, or undefined when it is not an IP address. */
export function addressFamily(address: string): Family | undefined {
  if (isIPv4(address)) return 'ipv4';
  if (isIPv6(address)) return 'ipv6';
  return undefined;
}

/**
 * Canonical prefix of `address` masked to `length` bits.
 * @param length prefix length; defaults to the host length (32 or 128).
 * @throws Error when `address` is not an IP or `length` is out of range for its family.
 */
export function toPrefix(address: string, length?: number): { prefix: string; family: Family } {
  const family = addressFamily(address);
  if (!family) throw new Error(`not an IP address: ${JSON.stringify(address)}`);
  const max = family === 'ipv4' ? 32 : 128;
  const len = length ?? max;
  if (!Number.isInteger(len) || len < 0 || len > max) throw new Error(`prefix length ${len} out of range 0..${max} for ${address}`);
  // One canonical text for the whole project: the codec's (the same the BGP layer keys routes by).
  return { prefix: canonicalPrefix(`${address}/${len}`), family };
}

/**
 * Canonical form of a CIDR string "addr/len" (host bits zeroed).
 * @throws Error when the string is not a valid CIDR.
 */
export function canonicalCIDR(cidr: string): { prefix: string; family: Family } {
  const slash = cidr.lastIndexOf('/');
  if (slash < 0) throw new Error(`not a CIDR (missing /len): ${JSON.stringify(cidr)}`);
  const lenText = cidr.slice(slash + 1);
  if (!/^\d{1,3}$/.test(lenText)) throw new Error(`not a CIDR (bad length): ${JSON.stringify(cidr)}`);
  return toPrefix(cidr.slice(0, slash), Number(lenText));
}
