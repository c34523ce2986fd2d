/**
 * Routes Herald originates (our "DesiredRoutes", the Loc-RIB of locally originated routes) and their identity.
 *
 * A route is identified by its `RouteKey`: its canonical prefix, e.g. "10.0.0.0/24" (host bits zeroed; IPv6 in
 * RFC 5952 form). The text is unique across the two families (only IPv6 text has a colon, and the prefix is checked
 * against the route's family), so no second key string is built per route; `routeLabel()` gives the
 * "family prefix" form for display. Prefixes are parsed once into a compact `ParsedPrefix` (an IPv4 address as a
 * uint32, an IPv6 address as 16 octets) that the route table (route-table.ts) keeps in its columns and the packer
 * writes as NLRI (RFC 4271 §4.3, RFC 4760 §5) without building per-route Buffers. (The codec's `parsePrefix` and
 * `writeNlri`, bgp/codec/nlri.ts, read and write prefix text of messages; `parseRoutePrefix` is the Speaker's
 * stricter form for the routes it is given.)
 */
import type { Family, Origin } from '../constants.ts';
import type { ExtendedCommunity, Ipv6ExtendedCommunity, LargeCommunity } from '../codec/types.ts';
import { formatIPv6, parseIPv6Into } from '../codec/nlri.ts';

/** A locally originated route, as the controller describes it. All fields except `prefix` and `family` are optional. */
export interface Route {
  /** Canonical prefix, "192.0.2.10/32" or "2001:db8::10/128" (host bits must be zero). */
  readonly prefix: string;
  readonly family: Family;
  /** Explicit NEXT_HOP (RFC 4271 §5.1.3) or MP_REACH_NLRI next hop (RFC 4760 §3); default: chosen by export rules. */
  readonly nextHop?: string;
  /** RFC 1997 communities, each a 32-bit value (high 16 bits AS, low 16 bits value). */
  readonly communities?: readonly number[];
  /** RFC 8092 large communities. */
  readonly largeCommunities?: readonly LargeCommunity[];
  /**
   * RFC 4360 extended communities (8 raw octets each; builders in codec/ext-communities.ts, e.g. link bandwidth),
   * sent in EXTENDED_COMMUNITIES to every peer the route goes to, transitive or not (docs/routes.md).
   */
  readonly extendedCommunities?: readonly ExtendedCommunity[];
  /** RFC 5701 IPv6 Address Specific extended communities (20 raw octets each), sent in attribute type 25. */
  readonly ipv6ExtendedCommunities?: readonly Ipv6ExtendedCommunity[];
  /** LOCAL_PREF (RFC 4271 §5.1.5), sent only toward iBGP peers; default 100. */
  readonly localPref?: number;
  /** MULTI_EXIT_DISC (RFC 4271 §5.1.4). */
  readonly med?: number;
  /**
   * Extra copies of the local AS in AS_PATH toward eBGP peers (0..MAX_AS_PATH_PREPEND; default 0), to make this path
   * less preferred (RFC 4271 §9.1.2.2 a: shorter AS_PATH wins). Never applied toward iBGP: the path stays empty there,
   * since an iBGP peer would find its own AS in it and drop the route (RFC 4271 §9.1.2 loop detection).
   */
  readonly asPathPrepend?: number;
  /** ORIGIN (RFC 4271 §5.1.1); default IGP (0). */
  readonly origin?: Origin;
  /** Names of the peers this route goes to; absent = every peer whose session carries the family. */
  readonly peers?: readonly string[];
}

/** Most extra copies of the local AS a route may ask for (one AS_SEQUENCE segment holds 255 ASNs, RFC 4271 §4.3). */
export const MAX_AS_PATH_PREPEND = 254;

/**
 * Octets of community values one route may carry (4 per standard community, 12 per large, 8 per extended, 20 per IPv6
 * address specific one): 4096 minus headers, the other attributes and the NLRI.
 */
export const MAX_COMMUNITY_OCTETS = 3800;

/** The identity of a route: its canonical prefix, "10.0.0.0/24" or "2001:db8::/32" (see the module comment). */
export type RouteKey = string;

/** A prefix in wire-ready form. `v4` holds the IPv4 address (uint32) when family is IPv4; `v6` the 16 octets for IPv6. */
export interface ParsedPrefix {
  readonly family: Family;
  /** Prefix length in bits (0..32 or 0..128). */
  readonly length: number;
  readonly v4: number;
  readonly v6: Buffer | undefined;
}

/** A route's identity for display: `${family} ${prefix}`, e.g. "ipv4-unicast 10.0.0.0/24". Does not validate. */
export function routeLabel(route: Pick<Route, 'family' | 'prefix'>): string {
  return `${route.family} ${route.prefix}`;
}

/** Error thrown for a malformed route (never a BgpError: it is local input, not a protocol event). */
export class RouteError extends Error {
  override readonly name = 'RouteError';
}

/**
 * Parses a dotted-quad IPv4 address into a uint32 (strict: four decimal octets 0..255, no leading zeros).
 * Throws RouteError when malformed.
 */
export function parseIPv4(addr: string): number {
  return parseIPv4Range(addr, 0, addr.length);
}

/** parseIPv4 over addr[start, end) without slicing (hot path of route parsing). */
function parseIPv4Range(addr: string, start: number, end: number): number {
  let v = 0;
  let octet = -1;
  let digits = 0;
  let dots = 0;
  for (let i = start; i < end; i++) {
    const c = addr.charCodeAt(i);
    if (c >= 48 && c <= 57) {
      if (digits > 0 && octet === 0) return badIPv4(addr.slice(start, end)); // leading zero
      octet = (octet < 0 ? 0 : octet) * 10 + (c - 48);
      if (++digits > 3 || octet > 255) return badIPv4(addr.slice(start, end));
    } else if (c === 46 && digits > 0 && dots < 3) {
      v = v * 256 + octet;
      octet = -1;
      digits = 0;
      dots++;
    } else {
      return badIPv4(addr.slice(start, end));
    }
  }
  if (dots !== 3 || digits === 0) return badIPv4(addr.slice(start, end));
  return (v * 256 + octet) >>> 0;
}

function badIPv4(addr: string): never {
  throw new RouteError(`not an IPv4 address: ${JSON.stringify(addr)}`);
}

/** Parses an IPv6 address (RFC 4291 §2.2 text forms, incl. "::" and a trailing dotted quad) into 16 octets. */
export function parseIPv6(addr: string): Buffer {
  const out = Buffer.alloc(16);
  try {
    parseIPv6Into(addr, out, 0);
  } catch {
    throw new RouteError(`not an IPv6 address: ${JSON.stringify(addr)}`);
  }
  return out;
}

/**
 * Parses and checks a route's prefix against its family. Throws RouteError when the prefix is malformed, the length is
 * out of range, host bits are set, or the family does not match (RFC 4271 §4.3: trailing bits are irrelevant on the
 * wire, but our keys must be canonical so that one prefix has one key).
 */
export function parseRoutePrefix(prefix: string, family: Family): ParsedPrefix {
  const slash = prefix.indexOf('/');
  if (slash < 0) throw new RouteError(`prefix without length: ${JSON.stringify(prefix)}`);
  let length = 0;
  const lenDigits = prefix.length - slash - 1;
  if (lenDigits < 1 || lenDigits > 3 || (lenDigits > 1 && prefix.charCodeAt(slash + 1) === 48)) length = NaN;
  for (let i = slash + 1; i < prefix.length; i++) {
    const c = prefix.charCodeAt(i);
    length = c >= 48 && c <= 57 ? length * 10 + (c - 48) : NaN;
  }
  if (family === 'ipv4-unicast') {
    if (!(length >= 0 && length <= 32)) throw new RouteError(`bad IPv4 prefix length in ${JSON.stringify(prefix)}`);
    const v4 = parseIPv4Range(prefix, 0, slash);
    const mask = length === 0 ? 0 : (0xffffffff << (32 - length)) >>> 0;
    if ((v4 & ~mask) >>> 0 !== 0) throw new RouteError(`host bits set in ${JSON.stringify(prefix)}`);
    return { family, length, v4, v6: undefined };
  }
  const addr = prefix.slice(0, slash);
  if (family === 'ipv6-unicast') {
    if (!(length >= 0 && length <= 128)) throw new RouteError(`bad IPv6 prefix length in ${JSON.stringify(prefix)}`);
    const v6 = parseIPv6(addr);
    for (let bit = length; bit < 128; bit++) {
      if (v6[bit >> 3]! & (0x80 >> (bit & 7))) throw new RouteError(`host bits set in ${JSON.stringify(prefix)}`);
    }
    if (formatIPv6(v6) !== addr) throw new RouteError(`IPv6 prefix not in RFC 5952 form: ${JSON.stringify(prefix)} (want ${formatIPv6(v6)}/${length})`);
    return { family, length, v4: 0, v6 };
  }
  throw new RouteError(`unsupported family ${JSON.stringify(family)}`);
}
