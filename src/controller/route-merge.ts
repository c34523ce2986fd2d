/**
 * Route pieces and how they merge. Every (VIP or service CIDR, advertisement) pair that is announced contributes one
 * `RouteContribution`; identical prefixes (several Services sharing an IP, several advertisements, an aggregation
 * length that folds VIPs together) merge into one `DesiredRoute`: peers union ('all' wins), communities union,
 * highest LOCAL_PREF, lowest MED, fewest AS path prepends, and the link bandwidths of the VIPs behind the prefix added
 * up (docs/kubernetes.md "Which routes", docs/decisions.md "Services sharing an IP", docs/traffic-steering.md).
 */
import type { Family } from '../../bgp/main-thread.ts';
import { MAX_COMMUNITY_OCTETS, parseCommunity } from '../../bgp/main-thread.ts';
import { MAX_LINK_BANDWIDTH } from './link-bandwidth.ts';

/** A VIP's link bandwidth on this node (weighting: endpoints, docs/traffic-steering.md). */
export interface LinkBandwidthPiece {
  /** The link bandwidth community's Global Administrator: this speaker's AS. */
  readonly asn: number;
  /** Bytes per second, a float32 value. */
  readonly bytesPerSecond: number;
  /** "ns/name address": the VIP it weighs (the same VIP through two advertisements counts once). */
  readonly vip: string;
}

/** A merged route's link bandwidth: the sum over the VIPs behind it. */
export interface RouteLinkBandwidth {
  readonly asn: number;
  /** Bytes per second, a float32 value (clamped to the largest one). */
  readonly bytesPerSecond: number;
}

/** A route piece from one (VIP or CIDR, advertisement) pair, before merging. */
export interface RouteContribution {
  prefix: string;
  family: Family;
  peers: string[] | 'all';
  communities: string[];
  largeCommunities: string[];
  localPref?: number;
  med?: number;
  /** Extra copies of the local AS toward eBGP peers (locality's prependOthers, herald.io/as-path-prepend). */
  asPathPrepend?: number;
  linkBandwidth?: LinkBandwidthPiece;
  service?: string;
  advertisement: string;
}

/** One route this node wants announced. */
export interface DesiredRoute {
  /** Canonical prefix, host bits zero: "10.0.0.1/32", "2001:db8::1/128". */
  prefix: string;
  family: Family;
  /** Peer names, sorted, or 'all'. */
  peers: string[] | 'all';
  communities: string[];
  largeCommunities: string[];
  localPref?: number;
  med?: number;
  /** Extra copies of the local AS toward eBGP peers, > 0 (absent: none). */
  asPathPrepend?: number;
  linkBandwidth?: RouteLinkBandwidth;
  /** "ns/name" of every Service wanting the prefix, sorted. */
  services: string[];
  /** Names of the advertisements behind it, sorted. */
  advertisements: string[];
}

/** Route order: IPv4 unicast first, then by prefix string. */
export function compareRoutes(a: { family: Family; prefix: string }, b: { family: Family; prefix: string }): number {
  if (a.family !== b.family) return a.family === 'ipv4-unicast' ? -1 : 1;
  return a.prefix < b.prefix ? -1 : a.prefix > b.prefix ? 1 : 0;
}

/** Merge contributions into one route per prefix. Sorted by {@link compareRoutes}. */
export function mergeRoutes(contributions: Iterable<RouteContribution>): DesiredRoute[] {
  const byPrefix = new Map<string, RouteContribution[]>();
  for (const c of contributions) {
    const l = byPrefix.get(c.prefix);
    if (l) l.push(c);
    else byPrefix.set(c.prefix, [c]);
  }
  const out: DesiredRoute[] = [];
  for (const l of byPrefix.values()) out.push(mergePrefix(l));
  return out.sort(compareRoutes);
}

const sortedUnique = (xs: readonly string[]): string[] => (xs.length <= 1 ? [...xs] : [...new Set(xs)].sort());

/**
 * Merge the contributions of ONE prefix (non-empty list, all with the same prefix) into its route.
 * @throws Error when the list is empty.
 */
export function mergePrefix(list: readonly RouteContribution[]): DesiredRoute {
  const first = list[0];
  if (!first) throw new Error('mergePrefix: no contribution');
  const r: DesiredRoute = { prefix: first.prefix, family: first.family, peers: 'all', communities: [], largeCommunities: [], services: [], advertisements: [] };
  if (list.length === 1) {
    // Most prefixes have exactly one contributor.
    r.peers = first.peers === 'all' ? 'all' : sortedUnique(first.peers);
    r.communities = sortedUnique(first.communities);
    r.largeCommunities = sortedUnique(first.largeCommunities);
    r.services = first.service === undefined ? [] : [first.service];
    r.advertisements = [first.advertisement];
    if (first.localPref !== undefined) r.localPref = first.localPref;
    if (first.med !== undefined) r.med = first.med;
    if (first.asPathPrepend !== undefined && first.asPathPrepend > 0) r.asPathPrepend = first.asPathPrepend;
    if (first.linkBandwidth !== undefined) r.linkBandwidth = { asn: first.linkBandwidth.asn, bytesPerSecond: first.linkBandwidth.bytesPerSecond };
    return fitCommunities(r);
  }
  let peers: Set<string> | 'all' = new Set();
  const comm = new Set<string>();
  const large = new Set<string>();
  const svcs = new Set<string>();
  const ads = new Set<string>();
  let prepend = Infinity;
  let bandwidths: Map<string, number> | undefined;
  let asn = 0;
  for (const c of list) {
    prepend = Math.min(prepend, c.asPathPrepend ?? 0);
    if (c.linkBandwidth !== undefined) {
      asn = c.linkBandwidth.asn;
      bandwidths ??= new Map();
      bandwidths.set(c.linkBandwidth.vip, Math.max(bandwidths.get(c.linkBandwidth.vip) ?? 0, c.linkBandwidth.bytesPerSecond));
    }
    if (c.peers === 'all' || peers === 'all') peers = 'all';
    else for (const p of c.peers) peers.add(p);
    for (const x of c.communities) comm.add(x);
    for (const x of c.largeCommunities) large.add(x);
    if (c.service !== undefined) svcs.add(c.service);
    ads.add(c.advertisement);
    if (c.localPref !== undefined) r.localPref = r.localPref === undefined ? c.localPref : Math.max(r.localPref, c.localPref);
    if (c.med !== undefined) r.med = r.med === undefined ? c.med : Math.min(r.med, c.med);
  }
  r.peers = peers === 'all' ? 'all' : [...peers].sort();
  r.communities = [...comm].sort();
  r.largeCommunities = [...large].sort();
  r.services = [...svcs].sort();
  r.advertisements = [...ads].sort();
  if (prepend > 0) r.asPathPrepend = prepend;
  if (bandwidths !== undefined) {
    let sum = 0;
    for (const b of bandwidths.values()) sum += b;
    r.linkBandwidth = { asn, bytesPerSecond: Math.min(Math.fround(sum), MAX_LINK_BANDWIDTH) };
  }
  return fitCommunities(r);
}

/** Octets of community values a route carries as the speaker counts them (4 per distinct community, 12 per large, 8 for the link bandwidth). */
function communityOctets(r: DesiredRoute, distinct: number): number {
  return 4 * distinct + 12 * r.largeCommunities.length + (r.linkBandwidth !== undefined ? 8 : 0);
}

/**
 * Keeps a merged route within the octets the speaker accepts (MAX_COMMUNITY_OCTETS): the config validates every
 * advertisement alone, but the communities of several advertisements and of Services' annotations sharing one prefix
 * could add up beyond it, and the speaker would refuse the whole route set. Then the last large communities and then
 * the last standard ones (in sorted order) are left off, so the route still goes out (docs/traffic-steering.md).
 */
function fitCommunities(r: DesiredRoute): DesiredRoute {
  if (communityOctets(r, r.communities.length) <= MAX_COMMUNITY_OCTETS) return r;
  const distinct = (list: readonly string[]): number => new Set(list.map((c) => parseCommunity(c))).size;
  const standard = distinct(r.communities);
  while (r.largeCommunities.length > 0 && communityOctets(r, standard) > MAX_COMMUNITY_OCTETS) r.largeCommunities.pop();
  while (r.communities.length > 0 && communityOctets(r, distinct(r.communities)) > MAX_COMMUNITY_OCTETS) r.communities.pop();
  return r;
}

const sameList = (a: readonly (string | number)[], b: readonly (string | number)[]): boolean => a.length === b.length && a.every((x, i) => x === b[i]);

/** Whether two merged routes are equal field by field (an unchanged route keeps its object: consumers compare identity). */
export function sameRoute(a: DesiredRoute, b: DesiredRoute): boolean {
  return sameAttributes(a, b) && sameList(a.services, b.services) && sameList(a.advertisements, b.advertisements);
}

/** Whether two merged routes announce the same thing: equal but for the Services and advertisements behind them. */
export function sameAttributes(a: DesiredRoute, b: DesiredRoute): boolean {
  return (
    a.prefix === b.prefix &&
    a.family === b.family &&
    a.localPref === b.localPref &&
    a.med === b.med &&
    a.asPathPrepend === b.asPathPrepend &&
    a.linkBandwidth?.bytesPerSecond === b.linkBandwidth?.bytesPerSecond &&
    a.linkBandwidth?.asn === b.linkBandwidth?.asn &&
    (a.peers === 'all' || b.peers === 'all' ? a.peers === b.peers : sameList(a.peers, b.peers)) &&
    sameList(a.communities, b.communities) &&
    sameList(a.largeCommunities, b.largeCommunities) &&
    Object.keys(a).length === Object.keys(b).length
  );
}
