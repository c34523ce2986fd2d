/**
 * IP addresses and prefixes as src/ reads them from users (config, annotations, pools, API filters) and writes them.
 *
 * Two words, one each: an address's **IP family** is Kubernetes' `IPFamily` (`'IPv4'`/`'IPv6'`, the spelling of
 * `spec.ipFamilies` and EndpointSlice `addressType`), and a prefix's **route family** is the BGP layer's `Family`
 * (`'ipv4-unicast'`/`'ipv6-unicast'`, RFC 4760 AFI/SAFI), the family a Speaker Route carries.
 *
 * Address literals are recognised by `node:net` `isIP` (dotted quad, RFC 4291 text, no `/len`; it accepts an IPv6
 * zone id such as `%eth0`, which the BGP encoder refuses); their numeric
 * value comes from `ip-address`. Every canonical text (host bits zeroed, IPv6 in RFC 5952 form, IPv4-mapped IPv6 in
 * mixed notation, §5) comes from the BGP codec's `canonicalPrefix` / `formatAddress`, so the controller's prefixes,
 * the config's and the Speaker's agree byte for byte.
 */
import { isIP } from 'node:net';
import { Address4, Address6 } from 'ip-address';
import type { Family } from '../../bgp/main-thread.ts';
import { canonicalPrefix, formatAddress, isCanonicalIPv4Prefix } from '../../bgp/main-thread.ts';

/** The IP family of an address (Kubernetes core/v1 IPFamily). */
export type IpFamily = 'IPv4' | 'IPv6';

/** IP family of an address literal ("10.0.0.1", "2001:db8::1"; no `/len`), or undefined when `text` is not one. */
export function ipFamilyOf(text: string): IpFamily | undefined {
  const v = isIP(text);
  return v === 4 ? 'IPv4' : v === 6 ? 'IPv6' : undefined;
}

/** The route family that carries prefixes of an IP family (unicast: RFC 4760 AFI 1/2, SAFI 1). */
export function routeFamilyOf(family: IpFamily): Family {
  return family === 'IPv4' ? 'ipv4-unicast' : 'ipv6-unicast';
}

/** Bits of an address of `family`: 32 or 128. */
export function addressBits(family: IpFamily): 32 | 128 {
  return family === 'IPv4' ? 32 : 128;
}

/** An address literal as an unsigned integer (IPv4: 32 bits, IPv6: 128 bits); undefined when it is not one. */
export function addressValue(text: string): { family: IpFamily; value: bigint } | undefined {
  const family = ipFamilyOf(text);
  if (family === undefined) return undefined;
  return { family, value: family === 'IPv4' ? new Address4(text).bigInt() : new Address6(text).bigInt() };
}

/**
 * Canonical text of an address given as an integer.
 * @throws RangeError when `value` does not fit the family
 */
export function formatAddressValue(family: IpFamily, value: bigint): string {
  const len = family === 'IPv4' ? 4 : 16;
  if (value < 0n || value >= 1n << BigInt(len * 8)) throw new RangeError(`${value} is not an ${family} address value`);
  const bytes = new Uint8Array(len);
  let v = value;
  for (let i = len - 1; i >= 0; i--) {
    bytes[i] = Number(v & 0xffn);
    v >>= 8n;
  }
  return formatAddress(bytes, 0, len);
}

/**
 * Canonical text of an IP a user wrote (" 2001:DB8:0::1 " → "2001:db8::1", surrounding blanks ignored), or undefined
 * when it is not an address literal. (The codec's `canonicalAddress` takes text it trusts and throws otherwise.)
 */
export function canonicalIP(text: string): string | undefined {
  const a = addressValue(text.trim());
  return a === undefined ? undefined : formatAddressValue(a.family, a.value);
}

/**
 * The IPv4 address an IPv4-mapped IPv6 address (`::ffff:a.b.c.d`, ::ffff:0:0/96, RFC 4291 §2.5.5.2) stands for, or
 * undefined for any other text. Kubernetes (Go's net.IP) reads such an address as the IPv4 one; Herald announces
 * neither form of it (docs/decisions.md "IPv4-mapped addresses").
 */
export function ipv4MappedAddress(text: string): string | undefined {
  const v = addressValue(text);
  if (v?.family !== 'IPv6' || v.value >> 32n !== 0xffffn) return undefined;
  return formatAddressValue('IPv4', v.value & 0xffffffffn);
}

/** A canonical prefix and the route family that carries it. */
export interface CanonicalPrefix {
  /** "10.0.0.0/24", "2001:db8::/64": host bits zero, address in canonical text. */
  readonly prefix: string;
  readonly family: Family;
}

/**
 * Canonical prefix of `address` masked to `length` bits.
 * @param length prefix length; defaults to the host length (32 or 128).
 * @throws Error when `address` is not an IP address or `length` is out of range for its family.
 */
export function toPrefix(address: string, length?: number): CanonicalPrefix {
  const family = ipFamilyOf(address);
  if (family === undefined) throw new Error(`not an IP address: ${JSON.stringify(address)}`);
  const max = addressBits(family);
  const len = length ?? max;
  if (!Number.isInteger(len) || len < 0 || len > max) throw new Error(`prefix length ${len} out of range 0..${max} for ${address}`);
  return { prefix: canonicalPrefix(`${address}/${len}`), family: routeFamilyOf(family) };
}

/**
 * Canonical form of a CIDR text "addr/len" (host bits zeroed).
 * @throws Error when the text is not a CIDR.
 */
export function canonicalCIDR(cidr: string): CanonicalPrefix {
  // The common case of a big static table: the text is canonical already, and is returned itself.
  if (isCanonicalIPv4Prefix(cidr)) return { prefix: cidr, family: 'ipv4-unicast' };
  const slash = cidr.lastIndexOf('/');
  if (slash < 0) throw new Error(`not a CIDR (missing /len): ${JSON.stringify(cidr)}`);
  const lenText = cidr.slice(slash + 1);
  if (!/^\d{1,3}$/.test(lenText)) throw new Error(`not a CIDR (bad length): ${JSON.stringify(cidr)}`);
  return toPrefix(cidr.slice(0, slash), Number(lenText));
}

/**
 * Does the route `routePrefix` ("addr/len", canonical) match a filter? The filter is a prefix (matches routes equal
 * to it or inside it) or an address (matches routes containing it). A malformed filter matches nothing.
 */
export function prefixMatches(routePrefix: string, filter: string): boolean {
  const [ra = '', rl] = routePrefix.split('/');
  const r = addressValue(ra);
  if (!r) return false;
  const bits = addressBits(r.family);
  const rLen = rl === undefined ? bits : Number(rl);
  const fParts = filter.split('/');
  if (fParts.length > 2) return false; // "10.1.0.0/24/5" is no prefix
  const [fa = '', fl] = fParts;
  const f = addressValue(fa);
  if (!f || f.family !== r.family) return false;
  const mask = (len: number) => (len === 0 ? 0n : ((1n << BigInt(len)) - 1n) << BigInt(bits - len));
  if (fl === undefined) return (f.value & mask(rLen)) === (r.value & mask(rLen));
  if (!/^\d{1,3}$/.test(fl)) return false;
  const fLen = Number(fl);
  if (fLen > bits) return false;
  return rLen >= fLen && (r.value & mask(fLen)) === (f.value & mask(fLen));
}

/**
 * The addresses of a node-IP text: one IP, or one per IP family separated by a comma (the form of kubelet's
 * `--node-ip` and of the downward API's `status.hostIPs`), e.g. `10.0.0.5,fd00::5`. Returns the message of the first
 * problem instead when the text is not that.
 */
export function parseNodeIps(text: string): readonly string[] | { error: string } {
  const parts = text.split(',').map((p) => p.trim());
  const seen = new Map<string, string>();
  for (const p of parts) {
    const zone = p.indexOf('%');
    if (zone >= 0) return { error: `must be an IP address without a zone id ("${p.slice(zone)}"): Herald's probes take no interface scope` };
    const family = ipFamilyOf(p);
    if (family === undefined) return { error: `must be an IP address, or one per IP family separated by a comma; ${JSON.stringify(p)} is not an IP address` };
    const other = seen.get(family);
    if (other !== undefined) return { error: `at most one ${family} address: ${other} and ${p}` };
    seen.set(family, p);
  }
  return parts;
}
