/**
 * Route pieces and how they merge. Every (VIP or service CIDR, advertisement) pair that is announced contributes one
 * `RouteContribution`; identical prefixes (several Services sharing an IP, several advertisements, an aggregation
 * length that folds VIPs together) merge into one `DesiredRoute`: peers union ('all' wins), the advertisements'
 * communities union, highest LOCAL_PREF, lowest MED, fewest AS path prepends, and the link bandwidths of the VIPs
 * behind the prefix added up (docs/kubernetes.md "Which routes", docs/decisions.md "Services sharing an IP",
 * docs/traffic-steering.md).
 *
 * What Services ask for with their annotations (admitted by admission.ts, `fromService`) is never a union across
 * Services: an attribute goes out only when every piece behind the prefix carries the same value of it (so one
 * tenant's community never rides on another tenant's route), and it then replaces (MED, prepend) or joins
 * (communities) the advertisements'. An attribute set that would not fit one UPDATE keeps the advertisements'
 * attributes and leaves the Services' out; nothing is left out silently: `withheld` says what and why
 * (docs/decisions.md "Path attributes from Services").
 */
import type { Family } from '../../bgp/main-thread.ts';
import { MAX_COMMUNITY_OCTETS, parseCommunity } from '../../bgp/main-thread.ts';
import { isWellKnownCommunity } from '../net/community-ranges.ts';
import { MAX_LINK_BANDWIDTH } from './link-bandwidth.ts';
import type { ServiceAttributeName, ServiceAttributes } from './service-attributes.ts';

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
  /**
   * What the Service's annotations add, as the advertisement admitted it (admission.ts); MED and prepend include
   * locality's offsets. Sent only when every piece of the prefix carries the same (see the module comment).
   */
  fromService?: ServiceAttributes;
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
  /** What Services asked for that this route does not carry, and why (absent: everything asked for is sent). */
  withheld?: string[];
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
    return first.fromService === undefined ? fitCommunities(r, NO_SERVICE_ATTRIBUTES, []) : withServiceAttributes(r, first.fromService, []);
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
  if (!list.some((c) => c.fromService !== undefined)) return fitCommunities(r, NO_SERVICE_ATTRIBUTES, []);
  const agreed = agreedServiceAttributes(r.prefix, list);
  return withServiceAttributes(r, agreed.attributes, agreed.withheld);
}

const NO_SERVICE_ATTRIBUTES: ServiceAttributes = Object.freeze({});
const ATTRIBUTE_NAMES: readonly ServiceAttributeName[] = ['communities', 'largeCommunities', 'med', 'asPathPrepend'];
const ANNOTATION_TEXT: Readonly<Record<ServiceAttributeName, string>> = {
  communities: 'herald.io/communities',
  largeCommunities: 'herald.io/large-communities',
  med: 'herald.io/med',
  asPathPrepend: 'herald.io/as-path-prepend',
};

/** A value of one Service attribute as text ('none' when the piece has none), for comparing and for messages. */
function attributeText(a: ServiceAttributes | undefined, name: ServiceAttributeName): string {
  const v = a?.[name];
  if (v === undefined) return 'none';
  return typeof v === 'number' ? String(v) : sortedUnique(v).join(' ');
}

/**
 * The Service attributes every piece of the prefix carries with the same value; the others are withheld, with the
 * pieces' values in the reason (never a union across Services).
 */
function agreedServiceAttributes(prefix: string, list: readonly RouteContribution[]): { attributes: ServiceAttributes; withheld: string[] } {
  const out: { -readonly [K in keyof ServiceAttributes]: ServiceAttributes[K] } = {};
  const withheld: string[] = [];
  for (const name of ATTRIBUTE_NAMES) {
    if (list.every((c) => c.fromService?.[name] === undefined)) continue;
    const texts = list.map((c) => attributeText(c.fromService, name));
    if (texts.every((x) => x === texts[0]) && texts[0] !== 'none') {
      Object.assign(out, { [name]: (list[0] as RouteContribution).fromService?.[name] });
      continue;
    }
    const asks = [...new Set(list.map((c, i) => `${c.service ?? 'service CIDR'} (${c.advertisement}): ${texts[i]}`))].sort();
    withheld.push(`${ANNOTATION_TEXT[name]} not sent on ${prefix}: not every Service and advertisement behind it asks for the same (${asks.slice(0, 4).join('; ')}${asks.length > 4 ? `; ${asks.length - 4} more` : ''})`);
  }
  return { attributes: out, withheld };
}

/** `r` (the advertisements' attributes merged) with the Services' agreed attributes added, fitted to one UPDATE. */
function withServiceAttributes(r: DesiredRoute, a: ServiceAttributes, withheld: string[]): DesiredRoute {
  if (a.med !== undefined) r.med = a.med;
  if (a.asPathPrepend !== undefined) {
    if (a.asPathPrepend > 0) r.asPathPrepend = a.asPathPrepend;
    else delete r.asPathPrepend;
  }
  return fitCommunities(r, a, withheld);
}

/** Octets of community values as the speaker counts them (4 per distinct community, 12 per large, 8 for the link bandwidth). */
function communityOctets(communities: readonly string[], large: readonly string[], linkBandwidth: boolean): number {
  return 4 * new Set(communities.map((c) => parseCommunity(c))).size + 12 * large.length + (linkBandwidth ? 8 : 0);
}

/**
 * Puts the Services' agreed communities (`a`) beside the advertisements' on `r`, within the octets the speaker accepts
 * (MAX_COMMUNITY_OCTETS): the config checks every advertisement alone, but several advertisements and Services sharing
 * one prefix could add up beyond it, and the speaker would refuse the whole route. Then the Services' communities are
 * left out (the advertisements' go out); if the advertisements' alone do not fit, their well-known communities
 * (NO_EXPORT, ...) are kept and the others left out from the end. Every omission is in `withheld`.
 */
function fitCommunities(r: DesiredRoute, a: ServiceAttributes, withheld: string[]): DesiredRoute {
  const lb = r.linkBandwidth !== undefined;
  const serviceCommunities = a.communities ?? [];
  const serviceLarge = a.largeCommunities ?? [];
  const all = serviceCommunities.length > 0 ? sortedUnique([...r.communities, ...serviceCommunities]) : r.communities;
  const allLarge = serviceLarge.length > 0 ? sortedUnique([...r.largeCommunities, ...serviceLarge]) : r.largeCommunities;
  if (communityOctets(all, allLarge, lb) <= MAX_COMMUNITY_OCTETS) {
    r.communities = all;
    r.largeCommunities = allLarge;
  } else {
    if (serviceCommunities.length > 0 || serviceLarge.length > 0) {
      const asked = [...serviceCommunities, ...serviceLarge].join(' ');
      withheld.push(`the Services' communities (${asked}) not sent on ${r.prefix}: with the advertisements' they exceed the ${MAX_COMMUNITY_OCTETS} octets of communities one UPDATE carries; the advertisements' are sent`);
    }
    if (communityOctets(r.communities, r.largeCommunities, lb) > MAX_COMMUNITY_OCTETS) {
      const dropped: string[] = [];
      while (r.largeCommunities.length > 0 && communityOctets(r.communities, r.largeCommunities, lb) > MAX_COMMUNITY_OCTETS) dropped.push(r.largeCommunities.pop() as string);
      const wellKnown = r.communities.filter((c) => isWellKnownCommunity(parseCommunity(c)));
      const others = r.communities.filter((c) => !isWellKnownCommunity(parseCommunity(c)));
      while (others.length > 0 && communityOctets([...wellKnown, ...others], r.largeCommunities, lb) > MAX_COMMUNITY_OCTETS) dropped.push(others.pop() as string);
      r.communities = sortedUnique([...wellKnown, ...others]);
      withheld.push(`the advertisements' communities ${dropped.join(' ')} not sent on ${r.prefix}: together they exceed the ${MAX_COMMUNITY_OCTETS} octets of communities one UPDATE carries (well-known ones are always kept)`);
    }
  }
  if (withheld.length > 0) r.withheld = withheld;
  return r;
}

const sameList = (a: readonly (string | number)[], b: readonly (string | number)[]): boolean => a.length === b.length && a.every((x, i) => x === b[i]);

/** Whether two merged routes are equal field by field (an unchanged route keeps its object: consumers compare identity). */
export function sameRoute(a: DesiredRoute, b: DesiredRoute): boolean {
  return sameAttributes(a, b) && sameList(a.services, b.services) && sameList(a.advertisements, b.advertisements) && sameList(a.withheld ?? [], b.withheld ?? []);
}

/** Keys of a merged route that go on the wire (not the Services, advertisements and omissions behind it). */
const wireKeys = (r: DesiredRoute): number => Object.keys(r).length - (r.withheld !== undefined ? 1 : 0);

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
    wireKeys(a) === wireKeys(b)
  );
}
