/**
 * Per-peer export rules: which of our routes a peer gets, and with which path attributes. Pure functions, no state.
 *
 * Rules (RFC 4271 §5.1, §9.1.3; RFC 6793 §4.2.2; RFC 8326 §5; Herald decisions in docs/routes.md):
 * - ORIGIN from the route, default IGP (RFC 4271 §5.1.1).
 * - eBGP: AS_PATH = AS_SEQUENCE [localAs], with `route.asPathPrepend` extra copies of localAs (RFC 4271 §5.1.2,
 *   §9.1.2.2 a). iBGP: empty AS_PATH, prepend ignored (an iBGP peer would see its own AS and drop the path).
 * - Toward a peer without the 4-octet AS capability and a localAs > 65535: AS_PATH carries AS_TRANS (23456) and
 *   AS4_PATH carries the real AS (RFC 6793 §4.2.2).
 * - LOCAL_PREF only toward iBGP peers (RFC 4271 §5.1.5): the route's, default 100.
 * - NEXT_HOP: the route's, else the peer configuration's (nextHopIPv4 / nextHopIPv6), else the session's local
 *   address when it has the route's family. IPv4 routes need an IPv4 next hop and IPv6 routes an IPv6 one (no
 *   RFC 8950); without one the route is not exported to that peer (so IPv6 routes over an IPv4 session only when the
 *   peer configures an IPv6 next hop, or the route carries one).
 * - MULTI_EXIT_DISC, COMMUNITIES, LARGE_COMMUNITY, EXTENDED_COMMUNITIES and the IPv6 Address Specific Extended
 *   Community attribute (RFC 5701) from the route, to iBGP and eBGP peers alike. Non-transitive extended communities
 *   (Transitive bit set, RFC 4360 §2, e.g. a 0x40 link bandwidth) are sent to eBGP peers too: Herald originates the
 *   route, so the community describes the link to Herald itself; RFC 4360 §6's removal at the AS boundary is for
 *   routes passed on (docs/routes.md "Extended communities").
 * - Routes go only to peers whose negotiated families include theirs, and only to the peers listed in route.peers
 *   when that list is given.
 * - Graceful shutdown (RFC 8326 §5): while draining, every route carries GRACEFUL_SHUTDOWN (65535:0), and toward
 *   iBGP LOCAL_PREF 0.
 */
import { isIPv4, isIPv6 } from 'node:net';
import { AS_TRANS, AsPathSegmentType, AttrFlag, WellKnownCommunity } from '../constants.ts';
import type { Family } from '../constants.ts';
import type { PathAttribute } from '../codec/types.ts';
import type { Route } from './route.ts';

/** What the export rules need to know about one peer's session. */
export interface ExportPeer {
  /** Peer name (matched against route.peers). */
  readonly name: string;
  readonly localAs: number;
  readonly peerAs: number;
  /** Both sides sent the 4-octet AS capability (RFC 6793). */
  readonly fourOctetAs: boolean;
  /** Families negotiated on the session (RFC 4760 §8); routes of other families are not exported. */
  readonly families: ReadonlySet<Family>;
  /** The session's local address (the TCP socket's), used as the default next hop of its own family. */
  readonly localAddress?: string;
  /** Configured next hop for IPv4 routes toward this peer (overrides localAddress). */
  readonly nextHopIPv4?: string;
  /** Configured next hop for IPv6 routes toward this peer (needed to send IPv6 routes over an IPv4 session). */
  readonly nextHopIPv6?: string;
  /** RFC 8326 graceful shutdown in progress: add 65535:0 (and LOCAL_PREF 0 toward iBGP). */
  readonly gracefulShutdown?: boolean;
}

/** The attributes of one route toward one peer. For IPv6, `nextHop` goes into MP_REACH_NLRI (RFC 4760 §3). */
export interface ExportedAttributes {
  readonly family: Family;
  readonly nextHop: string;
  /** Path attributes in type-code order, NEXT_HOP included for IPv4, MP_REACH_NLRI not included for IPv6. */
  readonly attributes: readonly PathAttribute[];
}

/**
 * Why a route is not exported to a peer. `unsent`: the route is meant for this peer (its family is negotiated, the
 * route names it) but cannot go, so the Adj-RIB-Out reports it as unsent (UnsentRoutes) instead of leaving it out
 * silently.
 */
export type ExportSkip = { readonly skip: string; readonly unsent?: true };

/** True when the session is iBGP (same AS on both ends; RFC 4271 §3). */
export function isIbgp(peer: Pick<ExportPeer, 'localAs' | 'peerAs'>): boolean {
  return peer.localAs === peer.peerAs;
}

/** Default LOCAL_PREF toward iBGP when the route sets none (the common default of BIRD, FRR and GoBGP). */
export const DEFAULT_LOCAL_PREF = 100;

/**
 * Picks the next hop of `route` toward `peer`, or undefined when there is none of the route's family.
 */
export function chooseNextHop(route: Route, peer: ExportPeer): string | undefined {
  const v4 = route.family === 'ipv4-unicast';
  const fits = (a: string | undefined): a is string => a !== undefined && (v4 ? isIPv4(a) : isIPv6(a));
  if (fits(route.nextHop)) return route.nextHop;
  const configured = v4 ? peer.nextHopIPv4 : peer.nextHopIPv6;
  if (fits(configured)) return configured;
  if (fits(peer.localAddress)) return peer.localAddress;
  return undefined;
}

/**
 * Applies the export rules. Returns the attributes to send, or `{ skip }` with a reason when the route does not go to
 * this peer (filtered by route.peers, family not negotiated, or no next hop of the route's family: `unsent`).
 */
export function exportRoute(route: Route, peer: ExportPeer): ExportedAttributes | ExportSkip {
  if (route.peers !== undefined && !route.peers.includes(peer.name)) return { skip: `route.peers excludes ${peer.name}` };
  if (!peer.families.has(route.family)) return { skip: `${route.family} not negotiated with ${peer.name}` };
  const nextHop = chooseNextHop(route, peer);
  if (nextHop === undefined) {
    const fam = route.family === 'ipv4-unicast' ? 'IPv4' : 'IPv6';
    const session = peer.localAddress === undefined ? 'the session has no local address' : `the session's local address ${peer.localAddress} is not ${fam}`;
    return { skip: `${route.family} has no ${fam} next hop toward ${peer.name}: ${session} and neither the route nor the peer configures an ${fam} next hop; configure one for the peer`, unsent: true };
  }
  const ibgp = isIbgp(peer);
  const attrs: PathAttribute[] = [];
  attrs.push({ type: 'ORIGIN', flags: AttrFlag.Transitive, origin: route.origin ?? 0 });
  let as4Path: PathAttribute | undefined;
  if (ibgp) {
    attrs.push({ type: 'AS_PATH', flags: AttrFlag.Transitive, segments: [] });
  } else {
    const copies = 1 + (route.asPathPrepend ?? 0);
    if (!peer.fourOctetAs && peer.localAs > 0xffff) {
      attrs.push({ type: 'AS_PATH', flags: AttrFlag.Transitive, segments: [{ type: AsPathSegmentType.AS_SEQUENCE, asns: repeated(AS_TRANS, copies) }] });
      as4Path = {
        type: 'AS4_PATH',
        flags: AttrFlag.Optional | AttrFlag.Transitive,
        segments: [{ type: AsPathSegmentType.AS_SEQUENCE, asns: repeated(peer.localAs, copies) }],
      };
    } else {
      attrs.push({ type: 'AS_PATH', flags: AttrFlag.Transitive, segments: [{ type: AsPathSegmentType.AS_SEQUENCE, asns: repeated(peer.localAs, copies) }] });
    }
  }
  if (route.family === 'ipv4-unicast') attrs.push({ type: 'NEXT_HOP', flags: AttrFlag.Transitive, nextHop });
  if (route.med !== undefined) attrs.push({ type: 'MULTI_EXIT_DISC', flags: AttrFlag.Optional, med: route.med });
  if (ibgp) {
    const localPref = peer.gracefulShutdown ? 0 : (route.localPref ?? DEFAULT_LOCAL_PREF);
    attrs.push({ type: 'LOCAL_PREF', flags: AttrFlag.Transitive, localPref });
  }
  let communities = route.communities ?? [];
  if (peer.gracefulShutdown && !communities.includes(WellKnownCommunity.GRACEFUL_SHUTDOWN)) {
    communities = [...communities, WellKnownCommunity.GRACEFUL_SHUTDOWN];
  }
  if (communities.length > 0) {
    attrs.push({ type: 'COMMUNITIES', flags: AttrFlag.Optional | AttrFlag.Transitive, communities });
  }
  if (route.extendedCommunities !== undefined && route.extendedCommunities.length > 0) {
    attrs.push({
      type: 'EXTENDED_COMMUNITIES',
      flags: AttrFlag.Optional | AttrFlag.Transitive,
      extendedCommunities: route.extendedCommunities,
    });
  }
  if (as4Path !== undefined) attrs.push(as4Path);
  if (route.ipv6ExtendedCommunities !== undefined && route.ipv6ExtendedCommunities.length > 0) {
    attrs.push({
      type: 'IPV6_ADDRESS_SPECIFIC_EXTENDED_COMMUNITY',
      flags: AttrFlag.Optional | AttrFlag.Transitive,
      ipv6ExtendedCommunities: route.ipv6ExtendedCommunities,
    });
  }
  if (route.largeCommunities !== undefined && route.largeCommunities.length > 0) {
    attrs.push({ type: 'LARGE_COMMUNITY', flags: AttrFlag.Optional | AttrFlag.Transitive, largeCommunities: route.largeCommunities });
  }
  return { family: route.family, nextHop, attributes: attrs };
}

/** `n` copies of `as` (n >= 1; one element, the common case, without a fill). */
function repeated(as: number, n: number): number[] {
  return n === 1 ? [as] : new Array<number>(n).fill(as);
}

const PLAIN_V4 = 'ipv4-unicast||||||||||*';
const PLAIN_V6 = 'ipv6-unicast||||||||||*';

/**
 * A string that is equal for two routes exactly when the export rules give them the same attributes toward any peer
 * (everything except the prefix). Used to share one encoded attribute group among many routes.
 */
export function attributeSignature(route: Route): string {
  if (
    route.nextHop === undefined && route.origin === undefined && route.med === undefined && route.localPref === undefined && route.asPathPrepend === undefined &&
    route.communities === undefined && route.largeCommunities === undefined && route.extendedCommunities === undefined &&
    route.ipv6ExtendedCommunities === undefined && route.peers === undefined
  ) {
    return route.family === 'ipv4-unicast' ? PLAIN_V4 : PLAIN_V6;
  }
  const lc = route.largeCommunities?.map((c) => c.join(':')).join(',') ?? '';
  const ec = route.extendedCommunities?.map((c) => c.value.toString('hex')).join(',') ?? '';
  const ec6 = route.ipv6ExtendedCommunities?.map((c) => c.value.toString('hex')).join(',') ?? '';
  const peers = route.peers === undefined ? '*' : route.peers.join(',');
  return `${route.family}|${route.nextHop ?? ''}|${route.origin ?? ''}|${route.med ?? ''}|${route.localPref ?? ''}|${route.asPathPrepend ?? ''}|${
    route.communities?.join(',') ?? ''
  }|${lc}|${ec}|${ec6}|${peers}`;
}

/** A route as exported to a peer, for display (admin API, tests). */
export interface ExportedRoute extends Route {
  readonly nextHop: string;
  /** AS numbers of the AS_PATH's AS_SEQUENCE (empty toward iBGP). */
  readonly asPath: readonly number[];
}

/** Turns exported attributes back into a Route-shaped description. */
export function describeExport(prefix: string, ex: ExportedAttributes): ExportedRoute {
  let asPath: number[] = [];
  let as4: number[] | undefined;
  const r: {
    -readonly [K in keyof ExportedRoute]?: ExportedRoute[K];
  } = { prefix, family: ex.family, nextHop: ex.nextHop };
  for (const a of ex.attributes) {
    if (a.type === 'ORIGIN') r.origin = a.origin;
    else if (a.type === 'AS_PATH') asPath = a.segments.flatMap((s) => [...s.asns]);
    else if (a.type === 'AS4_PATH') as4 = a.segments.flatMap((s) => [...s.asns]);
    else if (a.type === 'MULTI_EXIT_DISC') r.med = a.med;
    else if (a.type === 'LOCAL_PREF') r.localPref = a.localPref;
    else if (a.type === 'COMMUNITIES') r.communities = a.communities;
    else if (a.type === 'LARGE_COMMUNITY') r.largeCommunities = a.largeCommunities;
    else if (a.type === 'EXTENDED_COMMUNITIES') r.extendedCommunities = a.extendedCommunities;
    else if (a.type === 'IPV6_ADDRESS_SPECIFIC_EXTENDED_COMMUNITY') r.ipv6ExtendedCommunities = a.ipv6ExtendedCommunities;
  }
  r.asPath = as4 ?? asPath;
  return r as ExportedRoute;
}
