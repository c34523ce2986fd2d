/**
 * Route records: a desired route validated once and shared by every peer's Adj-RIB-Out (bgp/rib/adj-rib-out.ts),
 * and the diff between two desired sets.
 */
import { isIP } from 'node:net';
import { attributeSignature } from './export.ts';
import { MAX_AS_PATH_PREPEND, MAX_COMMUNITY_OCTETS, parseRoutePrefix, RouteError } from './route.ts';
import type { ParsedPrefix, Route, RouteKey } from './route.ts';

/**
 * A validated route with its key, parsed prefix (the ParsedPrefix fields, inline: one object per route) and attribute
 * signature; shared by every peer's Adj-RIB-Out.
 *
 * `key` is the route's RouteKey, its canonical prefix (bgp/rib/route.ts).
 */
export interface RouteRecord extends ParsedPrefix {
  readonly key: RouteKey;
  readonly route: Route;
  /** attributeSignature(route): equal signatures export to equal attributes. */
  readonly sig: string;
}

const isU32 = (v: unknown): boolean => typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= 0xffffffff;

/** Checks the optional attributes of a route; throws RouteError naming the first bad field. */
function checkAttributes(route: Route): void {
  const bad = (what: string): never => {
    throw new RouteError(`${route.prefix}: ${what}`);
  };
  if (route.med !== undefined && !isU32(route.med)) bad(`MED must be an integer 0..4294967295, got ${route.med}`);
  if (route.localPref !== undefined && !isU32(route.localPref)) bad(`LOCAL_PREF must be an integer 0..4294967295, got ${route.localPref}`);
  if (route.asPathPrepend !== undefined && !(Number.isInteger(route.asPathPrepend) && route.asPathPrepend >= 0 && route.asPathPrepend <= MAX_AS_PATH_PREPEND)) {
    bad(`AS path prepend must be an integer 0..${MAX_AS_PATH_PREPEND}, got ${route.asPathPrepend}`);
  }
  if (route.origin !== undefined && route.origin !== 0 && route.origin !== 1 && route.origin !== 2) bad(`ORIGIN must be 0, 1 or 2, got ${route.origin}`);
  if (route.communities !== undefined && !route.communities.every(isU32)) bad('communities must be 32-bit unsigned integers (AS * 65536 + value)');
  if (route.largeCommunities !== undefined && !route.largeCommunities.every((c) => c.length === 3 && c.every(isU32))) bad('large communities must be three 32-bit unsigned integers');
  if (route.extendedCommunities !== undefined && !route.extendedCommunities.every((c) => c.value.length === 8)) bad('extended communities must be 8 octets');
  if (route.ipv6ExtendedCommunities !== undefined && !route.ipv6ExtendedCommunities.every((c) => c.value.length === 20)) bad('IPv6 address specific extended communities must be 20 octets');
  if (route.nextHop !== undefined && !isIP(route.nextHop)) bad(`next hop is not an IP address: ${JSON.stringify(route.nextHop)}`);
  // every route must fit one 4096-octet UPDATE with its other attributes and its NLRI (about 170 octets)
  const size =
    4 * (route.communities?.length ?? 0) +
    12 * (route.largeCommunities?.length ?? 0) +
    8 * (route.extendedCommunities?.length ?? 0) +
    20 * (route.ipv6ExtendedCommunities?.length ?? 0);
  if (size > MAX_COMMUNITY_OCTETS) bad(`communities take ${size} octets; at most ${MAX_COMMUNITY_OCTETS} fit a 4096-octet UPDATE`);
}

/** Validates a route and builds its record. Throws RouteError on a malformed prefix or attribute. */
export function makeRecord(route: Route): RouteRecord {
  const p = parseRoutePrefix(route.prefix, route.family);
  if (route.med !== undefined || route.localPref !== undefined || route.asPathPrepend !== undefined || route.origin !== undefined || route.communities !== undefined || route.largeCommunities !== undefined || route.extendedCommunities !== undefined || route.ipv6ExtendedCommunities !== undefined || route.nextHop !== undefined) {
    checkAttributes(route);
  }
  return { key: route.prefix, route, sig: attributeSignature(route), family: p.family, length: p.length, v4: p.v4, v6: p.v6 };
}

/** Changes between two desired sets, computed once by the caller and shared by every peer. */
export interface DesiredDiff {
  /** Records new or with changed attributes (signature) in the new set. */
  readonly changed: readonly RouteRecord[];
  /** Records of the old set whose key is absent from the new set. */
  readonly removed: readonly RouteRecord[];
}

/** Computes the diff between two desired sets (records are compared by signature). */
export function diffDesired(prev: ReadonlyMap<RouteKey, RouteRecord>, next: ReadonlyMap<RouteKey, RouteRecord>): DesiredDiff {
  const changed: RouteRecord[] = [];
  const removed: RouteRecord[] = [];
  for (const [key, rec] of next) {
    const old = prev.get(key);
    if (old !== rec && (old === undefined || old.sig !== rec.sig)) changed.push(rec);
  }
  for (const [key, rec] of prev) if (!next.has(key)) removed.push(rec);
  return { changed, removed };
}
