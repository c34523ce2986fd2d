/**
 * The one place where operator names (config, Kubernetes) map to RFC 4271 names (bgp/), and where
 * bgp/ status objects become admin API views.
 *
 * - config peer → Speaker PeerConfig (`holdTime` → `holdTimeSec`, `nextHop` → `nextHopIPv4`, ...),
 *   with the TCP MD5 password read from its file or environment variable;
 * - config → the controller's context (advertisements, class, service CIDRs, the AS of the link bandwidth);
 * - static routes and controller DesiredRoutes → Speaker Routes (communities as 32-bit values);
 * - Speaker PeerStatus / ExportedRoute → PeerView / RouteView.
 */
import type { LargeCommunity, PeerBfdConfig, PeerBfdStatus, PeerConfig as SpeakerPeerConfig, PeerStatus, Route, StateReason } from '../../bgp/main-thread.ts';
import { describeNotification, formatCommunity, formatLargeCommunity, linkBandwidth, parseCommunity, parseLargeCommunity } from '../../bgp/main-thread.ts';
import type { Advertisement, DesiredRoutesContext } from '../controller/desired-routes.ts';
import type { DesiredRoute } from '../controller/route-merge.ts';
import { canonicalCIDR } from '../net/address.ts';
import type { AdvertisementConfig, Config, ConfigIssue, PeerConfig, StaticRouteConfig } from '../config/schema.ts';
import { formatExtendedCommunityText, parseBandwidthText, parseExtendedCommunityText } from '../config/extended-communities.ts';
import { md5KeyProblem } from '../config/secrets.ts';
import type { SecretFileTexts } from '../config/secrets.ts';
import type { PeerBfdView, PeerErrorView, PeerView, RouteView } from '../admin/view.ts';

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

/**
 * What a session takes from its node rather than from the Speaker: the AS number and BGP Identifier of a node with a
 * BGPNodeConfigOverride (or a peer's own `localAs`), only where they differ from the Speaker's.
 */
export interface SessionIdentity {
  readonly localAs?: number;
  readonly bgpIdentifier?: string;
  /** The source address when the peer sets no `localAddress` (a BGPNodeConfigOverride's `sourceAddresses`). */
  readonly localAddress?: string;
}

/** Config peer → Speaker PeerConfig (RFC names, seconds suffixed). Absent options stay absent. */
export function toSpeakerPeer(p: PeerConfig, md5Password: string | undefined, session: SessionIdentity = {}): SpeakerPeerConfig {
  return {
    name: p.name,
    address: p.address,
    port: p.port,
    peerAs: p.peerAs,
    ...(session.localAs !== undefined ? { localAs: session.localAs } : {}),
    ...(session.bgpIdentifier !== undefined ? { bgpIdentifier: session.bgpIdentifier } : {}),
    holdTimeSec: p.holdTime,
    connectRetryTimeSec: p.connectRetryTime,
    passive: p.passive,
    ttlSecurity: p.ttlSecurity,
    families: [...p.families],
    gracefulRestart: p.gracefulRestart?.enabled ? { restartTimeSec: p.gracefulRestart.restartTime } : false,
    ...(p.localAddress !== undefined ? { localAddress: p.localAddress } : session.localAddress !== undefined ? { localAddress: session.localAddress } : {}),
    ...(p.keepaliveTime !== undefined ? { keepaliveTimeSec: p.keepaliveTime } : {}),
    ...(md5Password !== undefined ? { md5Password } : {}),
    ...(p.ebgpMultihop !== undefined ? { ebgpMultihop: p.ebgpMultihop } : {}),
    ...(p.nextHop !== undefined ? { nextHopIPv4: p.nextHop } : {}),
    ...(p.nextHopV6 !== undefined ? { nextHopIPv6: p.nextHopV6 } : {}),
    ...(p.maxPrefixes !== undefined ? { maxPrefixes: p.maxPrefixes } : {}),
    ...(p.bfd?.enabled ? { bfd: toSpeakerBfd(p.bfd) } : {}),
  };
}

/** Config `bfd` (MetalLB BFDProfile names, ms) → Speaker PeerBfdConfig (ms suffixed). */
function toSpeakerBfd(b: NonNullable<PeerConfig['bfd']>): PeerBfdConfig {
  return {
    transmitIntervalMs: b.transmitInterval,
    receiveIntervalMs: b.receiveInterval,
    detectMultiplier: b.detectMultiplier,
    passive: b.passive,
    ...(b.multihop !== undefined ? { multihop: b.multihop } : {}),
    ...(b.minimumTtl !== undefined ? { minimumTtl: b.minimumTtl } : {}),
  };
}

/** The controller's context from a configuration, for node `nodeName`. */
export function desiredRoutesContext(cfg: Config, nodeName: string): DesiredRoutesContext {
  return {
    nodeName,
    ...(cfg.loadBalancerClass !== undefined ? { loadBalancerClass: cfg.loadBalancerClass } : {}),
    ...(cfg.advertisements !== undefined ? { advertisements: cfg.advertisements.map(advertisement) } : {}),
    ...(cfg.serviceCIDRs !== undefined ? { serviceCIDRs: cfg.serviceCIDRs } : {}),
    ...(cfg.allowedPrefixes !== undefined ? { allowedPrefixes: cfg.allowedPrefixes } : {}),
    ...(cfg.pools !== undefined ? { poolAddresses: cfg.pools.flatMap((p) => p.addresses) } : {}),
    countServingTerminating: cfg.countServingTerminating,
    departureDrains: gracefulShutdownConfigured(cfg),
    localAs: cfg.bgp.localAs,
  };
}

/** Some peer has RFC 8326 graceful shutdown enabled: drains and departures re-announce with 65535:0 and wait. */
export function gracefulShutdownConfigured(cfg: Config): boolean {
  return cfg.peers.some((p) => p.gracefulShutdown?.enabled === true);
}

/** A config advertisement → the controller's (bandwidth text → bytes per second; the schema validated it). */
function advertisement(a: AdvertisementConfig): Advertisement {
  const { bandwidthPerEndpoint, ...rest } = a;
  if (bandwidthPerEndpoint === undefined) return rest;
  return { ...rest, bandwidthPerEndpoint: typeof bandwidthPerEndpoint === 'number' ? bandwidthPerEndpoint : parseBandwidthText(bandwidthPerEndpoint) };
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

/** A StateReason → the admin API's error view (undefined for reasons that are not errors). */
export function errorView(reason: StateReason | undefined, at?: string): PeerErrorView | undefined {
  if (!reason) return undefined;
  const base = at !== undefined ? { at } : {};
  switch (reason.kind) {
    case 'notificationSent':
    case 'notificationReceived':
      return {
        kind: reason.kind,
        code: reason.code,
        subcode: reason.subcode,
        description: describeNotification(reason.code, reason.subcode),
        ...(reason.text !== undefined ? { message: reason.text } : {}),
        ...(reason.kind === 'notificationSent' && reason.cause !== undefined ? { message: reason.cause } : {}),
        ...base,
      };
    case 'holdTimerExpired':
      return { kind: reason.kind, ...base };
    case 'transportError':
    case 'admin':
      return { kind: reason.kind, message: reason.message, ...base };
    case 'connectionClosed':
    case 'collision':
      return { kind: reason.kind, ...base };
    default:
      return undefined;
  }
}

/** Per-peer bookkeeping the daemon keeps from 'peerState' events. */
export interface PeerHistory {
  since?: string;
  flaps: number;
  lastError?: PeerErrorView;
}

/** Speaker PeerStatus → admin PeerView. */
export function peerView(s: PeerStatus, h: PeerHistory | undefined): PeerView {
  const v: PeerView = {
    name: s.name,
    address: s.address,
    port: s.port,
    localAs: s.localAs,
    peerAs: s.peerAs,
    state: s.state,
    messages: { sent: { ...s.messagesSent }, received: { ...s.messagesReceived } },
    prefixes: { sent: s.prefixesAdvertised, received: s.prefixesReceived },
    flaps: h?.flaps ?? 0,
  };
  if (s.uptimeSec !== undefined) v.uptimeSec = Math.round(s.uptimeSec * 1000) / 1000;
  if (h?.since !== undefined) v.since = h.since;
  if (s.negotiated) {
    v.negotiated = {
      holdTimeSec: s.negotiated.holdTimeSec,
      keepaliveTimeSec: s.negotiated.keepaliveTimeSec,
      families: [...s.negotiated.families],
      fourOctetAs: s.negotiated.fourOctetAs,
      extendedMessage: s.negotiated.extendedMessage,
      routeRefresh: s.negotiated.routeRefresh,
      gracefulRestart: s.negotiated.peerGracefulRestart !== undefined,
    };
  }
  const err = h?.lastError ?? errorView(s.lastReason);
  if (err) v.lastError = err;
  if (s.unsentRoutes !== undefined && s.unsentRoutes.length > 0) {
    // the current problem of an Established session: routes it cannot carry (bgp/rib/adj-rib-out.ts UnsentRoutes)
    v.unsentRoutes = s.unsentRoutes.map((u) => ({ reason: u.reason, prefixes: u.prefixes, example: u.example }));
    v.lastError = { kind: 'unsentRoutes', message: s.unsentRoutes.map((u) => `${u.prefixes} route(s) not sent, e.g. ${u.example}: ${u.reason}`).join('; ') };
  }
  if (s.bfd) v.bfd = bfdView(s.bfd);
  return v;
}
/** Speaker PeerBfdStatus → admin PeerBfdView (Clock milliseconds → ISO 8601). */
function bfdView(b: PeerBfdStatus): PeerBfdView {
  const iso = (ms: number) => new Date(ms).toISOString();
  return {
    state: b.state,
    remoteState: b.remoteState,
    diagnostic: b.diagnostic,
    multihop: b.multihop,
    localDiscriminator: b.localDiscriminator,
    remoteDiscriminator: b.remoteDiscriminator,
    transmitIntervalMs: b.transmitIntervalMs,
    detectionTimeMs: b.detectionTimeMs,
    ttlCheck: b.ttlCheck,
    ...(b.ttlCheckReason !== undefined ? { ttlCheckReason: b.ttlCheckReason } : {}),
    ...(b.error !== undefined ? { error: b.error } : {}),
    stateChanges: b.stateChanges,
    ...(b.upSince !== undefined ? { upSince: iso(b.upSince) } : {}),
    ...(b.lastDown ? { lastDown: { ...b.lastDown, at: iso(b.lastDown.at) } } : {}),
  };
}
