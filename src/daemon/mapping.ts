/**
 * Operator names (config, Kubernetes) to RFC 4271 names (bgp/) beyond a peer's fields, and bgp/ routes to views.
 *
 * - a peer's TCP MD5 password read from its file or environment variable (the peer's other fields map by their
 *   table, src/config/peer-fields.ts `toSpeakerPeer`);
 * - config → the controller's context (advertisements, class, service CIDRs, the AS of the link bandwidth);
 * - static routes and controller DesiredRoutes → Speaker Routes (communities as 32-bit values);
 * - Speaker ExportedRoute → RouteView (a peer's view: src/admin/peer-view.ts).
 */
import type { LargeCommunity, Route } from '../../bgp/main-thread.ts';
import { formatCommunity, formatLargeCommunity, linkBandwidth, parseCommunity, parseLargeCommunity } from '../../bgp/main-thread.ts';
import type { Advertisement, DesiredRoutesContext } from '../controller/desired-routes.ts';
import type { DesiredRoute } from '../controller/route-merge.ts';
import { canonicalCIDR } from '../net/address.ts';
import type { AdvertisementConfig, Config, ConfigIssue, PeerConfig, StaticRouteConfig } from '../config/schema.ts';
import { formatExtendedCommunityText, parseBandwidthText, parseExtendedCommunityText } from '../config/extended-communities.ts';
import { md5KeyProblem } from '../config/secrets.ts';
import { resolveCommunityAliases } from '../config/schema.ts';
import { matchesSelectors } from '../k8s/selector.ts';
import type { SecretFileTexts } from '../config/secrets.ts';
import type { RouteView } from '../admin/view.ts';

/** A problem resolving a secret or mapping a value; `path` names the config field. */
export class MappingError extends Error {
  readonly issues: ConfigIssue[];
  constructor(issues: ConfigIssue[]) {
    super(issues.map((i) => `${i.path}: ${i.message}`).join('; '));
    this.name = 'MappingError';
    this.issues = issues;
  }
}

/**
 * A peer's TCP MD5 password, from its variable or its file as read ahead (src/config/secrets.ts `readSecretFiles`:
 * nothing is read here, so nothing here can block).
 * @param files the secret files read for this configuration (a file missing from it: "not read")
 * @returns the password, or undefined when none is configured
 * @throws MappingError when the file cannot be read, the variable is unset/empty, or the key is longer than Linux takes
 */
export function resolvePassword(p: PeerConfig, index: number, env: NodeJS.ProcessEnv = process.env, files: SecretFileTexts = new Map()): string | undefined {
  const pw = p.password;
  if (pw === undefined) return undefined;
  const path = `peers[${index}].password`;
  if (pw.file !== undefined) {
    const read = files.get(pw.file) ?? { problem: 'not read yet (it is read at start and at each reload)' };
    if ('problem' in read) throw new MappingError([{ path: `${path}.file`, message: `cannot read ${pw.file}: ${read.problem}` }]);
    const v = read.text.replace(/\r?\n$/, '');
    if (v === '') throw new MappingError([{ path: `${path}.file`, message: `${pw.file} is empty` }]);
    const long = md5KeyProblem(v);
    if (long !== undefined) throw new MappingError([{ path: `${path}.file`, message: `${pw.file}: ${long}` }]);
    return v;
  }
  const v = env[pw.env as string];
  if (v === undefined || v === '') throw new MappingError([{ path: `${path}.env`, message: `environment variable ${pw.env} is not set` }]);
  const long = md5KeyProblem(v);
  if (long !== undefined) throw new MappingError([{ path: `${path}.env`, message: `environment variable ${pw.env}: ${long}` }]);
  return v;
}

/** The controller's context from a configuration, for node `nodeName`. */
export function desiredRoutesContext(cfg: Config, nodeName: string): DesiredRoutesContext {
  return {
    nodeName,
    ...(cfg.loadBalancerClass !== undefined ? { loadBalancerClass: cfg.loadBalancerClass } : {}),
    ...(cfg.advertisements !== undefined ? { advertisements: cfg.advertisements.map((a) => advertisement(a, cfg)) } : {}),
    ...(cfg.serviceCIDRs !== undefined ? { serviceCIDRs: cfg.serviceCIDRs } : {}),
    ...(cfg.allowedPrefixes !== undefined ? { allowedPrefixes: cfg.allowedPrefixes } : {}),
    ...(cfg.pools !== undefined ? { poolAddresses: cfg.pools.flatMap((p) => p.addresses) } : {}),
    countServingTerminating: cfg.countServingTerminating,
    departureDrains: gracefulShutdownConfigured(cfg),
    ignoreExcludeLB: cfg.ignoreExcludeLB,
    localAs: cfg.bgp.localAs,
  };
}

/** Some peer has RFC 8326 graceful shutdown enabled: drains and departures re-announce with 65535:0 and wait. */
export function gracefulShutdownConfigured(cfg: Config): boolean {
  return cfg.peers.some((p) => p.gracefulShutdown?.enabled === true);
}

/**
 * A config advertisement → the controller's: bandwidth text → bytes per second (the schema validated it); community
 * aliases → their values (`communityAliases`; a large one joins `largeCommunities`); `ipAddressPools` and
 * `ipAddressPoolSelectors` → the pools in force they select (a name no pool has selects nothing, as MetalLB's).
 */
export function advertisement(a: AdvertisementConfig, cfg: Pick<Config, 'pools' | 'communityAliases'>): Advertisement {
  const { bandwidthPerEndpoint, ipAddressPools, ipAddressPoolSelectors, ...rest } = a;
  const resolved = resolveCommunityAliases(a, cfg.communityAliases);
  const out: Advertisement = {
    ...rest,
    ...(resolved.communities !== undefined ? { communities: resolved.communities } : {}),
    ...(resolved.largeCommunities !== undefined ? { largeCommunities: resolved.largeCommunities } : {}),
  };
  if ((ipAddressPools?.length ?? 0) > 0 || (ipAddressPoolSelectors?.length ?? 0) > 0) {
    const selected = (cfg.pools ?? []).filter((p) => ipAddressPools?.includes(p.name) === true || (ipAddressPoolSelectors !== undefined && ipAddressPoolSelectors.length > 0 && matchesSelectors(undefined, ipAddressPoolSelectors, p.labels ?? {})));
    out.pools = { names: selected.map((p) => p.name), addresses: selected.flatMap((p) => p.addresses) };
  }
  if (bandwidthPerEndpoint !== undefined) out.bandwidthPerEndpoint = typeof bandwidthPerEndpoint === 'number' ? bandwidthPerEndpoint : parseBandwidthText(bandwidthPerEndpoint);
  return out;
}

/** Community texts (validated by the config schema) → distinct 32-bit values, or undefined for none. */
function communities(list: readonly string[] | undefined): number[] | undefined {
  if (!list || list.length === 0) return undefined;
  return [...new Set(list.map(parseCommunity))];
}

function largeCommunities(list: readonly string[] | undefined): LargeCommunity[] | undefined {
  if (!list || list.length === 0) return undefined;
  return list.map(parseLargeCommunity);
}

/** A (validated) static route → Speaker Route. */
export function staticRoute(r: StaticRouteConfig): Route {
  const { prefix, family } = canonicalCIDR(r.prefix);
  const out: { -readonly [K in keyof Route]: Route[K] } = { prefix, family };
  if (r.nextHop !== undefined) out.nextHop = r.nextHop;
  const c = communities(r.communities);
  if (c) out.communities = c;
  const lc = largeCommunities(r.largeCommunities);
  if (lc) out.largeCommunities = lc;
  for (const text of r.extendedCommunities ?? []) {
    const ec = parseExtendedCommunityText(text);
    if ('error' in ec) throw new MappingError([{ path: 'routes[].extendedCommunities', message: ec.error }]); // the schema rejects these first
    if (ec.attribute === 'ipv6') out.ipv6ExtendedCommunities = [...(out.ipv6ExtendedCommunities ?? []), ec.community];
    else out.extendedCommunities = [...(out.extendedCommunities ?? []), ec.community];
  }
  if (r.localPref !== undefined) out.localPref = r.localPref;
  if (r.med !== undefined) out.med = r.med;
  if (r.peers !== undefined) out.peers = [...r.peers];
  return out;
}

/** A controller DesiredRoute → Speaker Route ('all' peers → no peer filter). */
export function desiredRoute(d: DesiredRoute): Route {
  const out: { -readonly [K in keyof Route]: Route[K] } = { prefix: d.prefix, family: d.family };
  const c = communities(d.communities);
  if (c) out.communities = c;
  const lc = largeCommunities(d.largeCommunities);
  if (lc) out.largeCommunities = lc;
  if (d.localPref !== undefined) out.localPref = d.localPref;
  if (d.med !== undefined) out.med = d.med;
  if (d.asPathPrepend !== undefined) out.asPathPrepend = d.asPathPrepend;
  if (d.linkBandwidth !== undefined) out.extendedCommunities = [linkBandwidth(d.linkBandwidth.asn, d.linkBandwidth.bytesPerSecond)];
  if (d.peers !== 'all') out.peers = [...d.peers];
  return out;
}

const ORIGIN_NAMES = ['igp', 'egp', 'incomplete'];

/** Speaker's exported route → admin RouteView. */
export function routeView(peer: string, r: Route & { nextHop?: string; asPath?: readonly number[] }): RouteView {
  const out: RouteView = { peer, prefix: r.prefix, family: r.family };
  if (r.nextHop !== undefined) out.nextHop = r.nextHop;
  out.origin = ORIGIN_NAMES[r.origin ?? 0] ?? String(r.origin);
  if (r.asPath !== undefined) out.asPath = [...r.asPath];
  if (r.localPref !== undefined) out.localPref = r.localPref;
  if (r.med !== undefined) out.med = r.med;
  if (r.communities && r.communities.length > 0) out.communities = r.communities.map(formatCommunity);
  if (r.largeCommunities && r.largeCommunities.length > 0) out.largeCommunities = r.largeCommunities.map(formatLargeCommunity);
  if (r.extendedCommunities && r.extendedCommunities.length > 0) out.extendedCommunities = r.extendedCommunities.map(formatExtendedCommunityText);
  return out;
}
