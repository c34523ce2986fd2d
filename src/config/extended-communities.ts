/**
 * Extended community text in Herald's configuration (static routes; the same text later for advertisements and
 * annotations). One community per string:
 *
 * | text                                   | community                                                             |
 * |----------------------------------------|-----------------------------------------------------------------------|
 * | `rt:65000:100`, `ro:65000:100`          | route target / route origin, two-octet AS specific (RFC 4360 §3.1, §4-§5) |
 * | `rt:4200000000:100`                    | four-octet AS specific when the AS is above 65535 (RFC 5668)          |
 * | `rt:192.0.2.1:100`                     | IPv4 address specific (RFC 4360 §3.2)                                 |
 * | `rt:[2001:db8::1]:100`                 | IPv6 address specific (RFC 5701), sent in attribute type 25           |
 * | `lb:65000:125000000`, `lb:65000:1gbps` | link bandwidth (RFC 10005): bytes per second, or `kbps`/`mbps`/`gbps` (bits, SI); transitive (type 0x00) |
 * | `lb:65000:1gbps:non-transitive`        | the same with type 0x40                                               |
 * | `0x0002fde800000064`                   | any 8 octets (16 hex digits); 20 octets (40 hex digits) for an IPv6 one |
 *
 * `soo:` is accepted for `ro:` (FRR's "site of origin"). Names are case-insensitive. Addresses are recognised by
 * src/net/address.ts; the octets are written by the BGP codec's builders (bgp/main-thread.ts).
 */
import {
  ExtCommunitySubtype,
  extendedCommunityFromBytes,
  extendedCommunityKind,
  extendedCommunityView,
  linkBandwidthOf,
  fourOctetAsSpecific,
  ipv4AddressSpecific,
  ipv6AddressSpecific,
  ipv6ExtendedCommunityFromBytes,
  linkBandwidth,
  twoOctetAsSpecific,
} from '../../bgp/main-thread.ts';
import type { ExtendedCommunity, Ipv6ExtendedCommunity } from '../../bgp/main-thread.ts';
import { ipFamilyOf } from '../net/address.ts';

/** A parsed community: an 8-octet one (attribute 16) or a 20-octet IPv6 address specific one (attribute 25). */
export type ParsedExtendedCommunity =
  | { readonly attribute: 'extended'; readonly community: ExtendedCommunity }
  | { readonly attribute: 'ipv6'; readonly community: Ipv6ExtendedCommunity };

/** The short description used in error messages. */
export const EXTENDED_COMMUNITY_FORMS = 'rt:AS:N, rt:IPv4:N, rt:[IPv6]:N, ro:…, lb:AS:BANDWIDTH[:non-transitive] or 0x + 16 hex digits';

const BITS: Readonly<Record<string, number>> = { kbps: 1e3, mbps: 1e6, gbps: 1e9 };

function integer(text: string, max: number, what: string): number {
  if (!/^\d{1,10}$/.test(text) || Number(text) > max) throw new Error(`${what} must be an integer 0..${max}, got ${JSON.stringify(text)}`);
  return Number(text);
}

/**
 * Bytes per second from "125000000" (bytes/s) or "1gbps" / "100mbps" / "10kbps" (bits/s, SI; any case).
 * Throws Error naming both forms otherwise. The link bandwidth of RFC 10005 is in bytes per second.
 */
export function parseBandwidthText(text: string): number {
  const m = /^(\d+(?:\.\d+)?)([kmg]bps)?$/i.exec(text);
  if (!m) throw new Error(`link bandwidth must be bytes per second ("125000000") or bits with a unit ("1gbps", "100mbps"), got ${JSON.stringify(text)}`);
  const n = Number(m[1]);
  return m[2] === undefined ? n : (n * (BITS[m[2].toLowerCase()] as number)) / 8;
}

function routeTargetOrOrigin(subtype: number, rest: string): ParsedExtendedCommunity {
  const colon = rest.lastIndexOf(':');
  if (colon < 0) throw new Error('needs GLOBAL:LOCAL, e.g. 65000:100, 192.0.2.1:100 or [2001:db8::1]:100');
  const global = rest.slice(0, colon);
  const localText = rest.slice(colon + 1);
  if (global.startsWith('[') && global.endsWith(']')) {
    const addr = global.slice(1, -1);
    if (addr.includes('%') || ipFamilyOf(addr) !== 'IPv6') throw new Error(`${JSON.stringify(addr)} is not an IPv6 address`);
    return { attribute: 'ipv6', community: ipv6AddressSpecific(subtype, addr, integer(localText, 0xffff, 'the local part after an IPv6 address')) };
  }
  if (global.includes('.')) {
    if (ipFamilyOf(global) !== 'IPv4') throw new Error(`${JSON.stringify(global)} is not an IPv4 address`);
    return { attribute: 'extended', community: ipv4AddressSpecific(subtype, global, integer(localText, 0xffff, 'the local part after an IPv4 address')) };
  }
  const as = integer(global, 0xffffffff, 'the AS');
  if (as <= 0xffff) return { attribute: 'extended', community: twoOctetAsSpecific(subtype, as, integer(localText, 0xffffffff, 'the local part after a 2-octet AS')) };
  return { attribute: 'extended', community: fourOctetAsSpecific(subtype, as, integer(localText, 0xffff, 'the local part after a 4-octet AS')) };
}

/**
 * Parses one extended community text (forms in the module comment).
 * @returns the community, or a message saying what is wrong and which forms are accepted. Never throws.
 */
export function parseExtendedCommunityText(text: string): ParsedExtendedCommunity | { readonly error: string } {
  const s = text.trim();
  try {
    const hex = /^0x([0-9a-f]+)$/i.exec(s)?.[1];
    if (hex !== undefined) {
      if (hex.length === 16) return { attribute: 'extended', community: extendedCommunityFromBytes(Buffer.from(hex, 'hex')) };
      if (hex.length === 40) return { attribute: 'ipv6', community: ipv6ExtendedCommunityFromBytes(Buffer.from(hex, 'hex')) };
      throw new Error(`raw hex must be 16 digits (8 octets) or 40 digits (20 octets, IPv6 address specific), got ${hex.length}`);
    }
    const colon = s.indexOf(':');
    const name = colon < 0 ? '' : s.slice(0, colon).toLowerCase();
    const rest = s.slice(colon + 1);
    if (name === 'rt') return routeTargetOrOrigin(ExtCommunitySubtype.RouteTarget, rest);
    if (name === 'ro' || name === 'soo') return routeTargetOrOrigin(ExtCommunitySubtype.RouteOrigin, rest);
    if (name === 'lb') {
      const [asText = '', bwText = '', flag, ...extra] = rest.split(':');
      if (extra.length > 0 || (flag !== undefined && flag.toLowerCase() !== 'non-transitive' && flag.toLowerCase() !== 'transitive')) {
        throw new Error('must be lb:AS:BANDWIDTH, optionally followed by :non-transitive');
      }
      const as = integer(asText, 0xffffffff, 'the AS');
      return { attribute: 'extended', community: linkBandwidth(as, parseBandwidthText(bwText), flag?.toLowerCase() !== 'non-transitive') };
    }
    throw new Error(`unknown form ${JSON.stringify(name || s)}`);
  } catch (err) {
    return { error: `${JSON.stringify(text)}: ${(err as Error).message} (forms: ${EXTENDED_COMMUNITY_FORMS})` };
  }
}

/**
 * The text of an 8-octet extended community in the forms above, so that parsing it gives the same octets back:
 * `lb:AS:BYTES` (`:non-transitive` for type 0x40), `rt:`/`ro:` with an AS or an IPv4 address, else `0x` + 16 hex
 * digits. For the admin API and `herald routes`. Never throws.
 */
export function formatExtendedCommunityText(c: ExtendedCommunity): string {
  const lb = linkBandwidthOf(c);
  if (lb !== undefined && Number.isFinite(lb.bytesPerSecond) && lb.bytesPerSecond >= 0) return `lb:${lb.asNumber}:${lb.bytesPerSecond}${lb.transitive ? '' : ':non-transitive'}`;
  const kind = extendedCommunityKind(c);
  const v = extendedCommunityView(c);
  if ((kind === 'route-target' || kind === 'route-origin') && v.transitive && v.layout !== 'opaque' && v.layout !== 'other') {
    return `${kind === 'route-target' ? 'rt' : 'ro'}:${v.globalAdministrator}:${v.localAdministrator}`;
  }
  return `0x${c.value.toString('hex')}`;
}
