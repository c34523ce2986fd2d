/**
 * PURE computation of the routes THIS node should announce, with the reason chain behind every
 * Service VIP decision ("why is this VIP not announced from node X?").
 *
 * `computeDesiredRoutes(snapshot, ctx)` reads only its arguments (plus the optional `healthGate`
 * callback, which must itself be side-effect free) and returns the whole desired set; callers
 * replace the previous set with it (level-triggered). The per-service pieces (`evaluateNode`,
 * `decideService`, `serviceCIDRContributions`, `mergeRoutes`) are exported so the controller can
 * recompute only the Services a change touched.
 *
 * Semantics (docs/kubernetes.md has the table; sources: kubernetes-notes §1–3, decisions.md):
 * - VIPs of a Service: `status.loadBalancer.ingress[].ip` (type LoadBalancer only, not
 *   `ipMode: Proxy`), `spec.externalIPs[]`, `spec.clusterIPs[]` (host routes). Headless and
 *   ExternalName Services have none. Dual-stack Services give one VIP per family.
 * - externalTrafficPolicy governs loadBalancer and externalIP VIPs, internalTrafficPolicy the
 *   clusterIP VIPs. Local needs a usable endpoint on this node, Cluster a usable endpoint
 *   anywhere; both look only at EndpointSlices of the VIP's address family (kube-proxy runs one
 *   proxier per family), all slices of the Service combined. Usable = has an address, ready
 *   (nil = true) and not terminating (nil = false); with `countServingTerminating`, serving
 *   (nil = true) terminating endpoints count too.
 * - Node eligibility: missing Node object, exclude label present, ToBeDeletedByClusterAutoscaler
 *   taint, deletionTimestamp, Ready False/Unknown, NetworkUnavailable True ⇒ nothing announced.
 *   Cordon (spec.unschedulable) alone keeps announcing.
 * - loadBalancerClass: with our class unset only class-less Services' LB IPs are ours; with it
 *   set, only an exact match. The class filters loadBalancer VIPs only.
 * - Advertisements: none configured ⇒ LB ingress IPs to every peer. Otherwise each VIP is
 *   announced by every advertisement selecting its address kind, namespace, Service labels and
 *   this node's labels; `aggregationLength(V6)` widens the prefix. Identical prefixes (several
 *   Services sharing an IP, several advertisements) merge into one route: peers union ('all'
 *   wins), communities union, highest localPref, lowest MED.
 */
import type { EndpointSlice, Node, Service } from '../k8s/types.ts';
import { objectKey } from '../k8s/keys.ts';
import type { LabelSelector } from '../k8s/selector.ts';
import { matchesSelector } from '../k8s/selector.ts';
import type { Snapshot } from '../k8s/object-store.ts';
import type { Family } from '../../bgp/index.ts';
import type { IpFamily } from '../net/address.ts';
import { canonicalCIDR, ipFamilyOf, routeFamilyOf, toPrefix } from '../net/address.ts';

/** Kinds of address an advertisement can select. */
export type AddressKind = 'loadBalancer' | 'externalIP' | 'clusterIP' | 'serviceCIDR';

/** Kinds of Service VIP (serviceCIDR is not per Service). */
export type VipKind = 'loadBalancer' | 'externalIP' | 'clusterIP';

/** One configured advertisement (config shape `advertisements[]`). */
export interface Advertisement {
  name: string;
  /** Address kinds this advertisement announces. */
  addressKinds: AddressKind[];
  /** Services whose labels match (undefined = all). Not applied to serviceCIDR. */
  serviceSelector?: LabelSelector;
  /** Namespaces of the Services (undefined or empty = all). Not applied to serviceCIDR. */
  namespaces?: string[];
  /** This node's labels must match (undefined = every node). */
  nodeSelector?: LabelSelector;
  /** Peer names to announce to (undefined or empty = every peer). */
  peers?: string[];
  /** Standard communities, "65535:0" form (RFC 1997). */
  communities?: string[];
  /** Large communities, "a:b:c" form (RFC 8092). */
  largeCommunities?: string[];
  /** LOCAL_PREF (RFC 4271 §5.1.5), iBGP only; applied by the BGP side. */
  localPref?: number;
  /** MULTI_EXIT_DISC (RFC 4271 §5.1.4). */
  med?: number;
  /** IPv4 prefix length announced for a VIP (default 32). */
  aggregationLength?: number;
  /** IPv6 prefix length announced for a VIP (default 128). */
  aggregationLengthV6?: number;
}

/** Result of a per-VIP health gate (health checks are built elsewhere). */
export interface HealthGateResult {
  pass: boolean;
  reason?: string;
  /** The health layer's own reasons (e.g. Suppressed, HoldDown, NoLocalEndpoints, ConnectionRefused), kept as data. */
  causes?: HealthCause[];
}

/** One machine-readable cause of a failing health gate; `until` (ISO 8601) for time-bound ones (hold-down, suppression). */
export interface HealthCause {
  code: string;
  message: string;
  since?: string;
  until?: string;
}

/** Inputs besides the snapshot. */
export interface DesiredRoutesContext {
  /** Name of the Node this speaker runs on (kube-proxy's hostname). */
  nodeName: string;
  /** Our loadBalancerClass; undefined = we are the default implementation (class-less Services only). */
  loadBalancerClass?: string;
  /** Configured advertisements; undefined or empty = LB ingress IPs to every peer. */
  advertisements?: Advertisement[];
  /** Service CIDRs from config (announced with the `serviceCIDR` kind, together with ServiceCIDR objects). */
  serviceCIDRs?: string[];
  /** Count serving-but-terminating endpoints as usable (default false; decisions.md). */
  countServingTerminating?: boolean;
  /** Optional gate consulted for a VIP that passed every other check. Must not throw. */
  healthGate?: (service: string, address: string) => HealthGateResult;
}

/** Machine-readable reason codes. Negative codes block announcing; positive ones explain it. */
export const ReasonCode = {
  NodeNotFound: 'NodeNotFound',
  NodeExcluded: 'NodeExcluded',
  NodeToBeDeleted: 'NodeToBeDeleted',
  NodeDeleting: 'NodeDeleting',
  NodeNotReady: 'NodeNotReady',
  NodeNetworkUnavailable: 'NodeNetworkUnavailable',
  ServiceProxyNameSet: 'ServiceProxyNameSet',
  ForeignLoadBalancerClass: 'ForeignLoadBalancerClass',
  IPModeProxy: 'IPModeProxy',
  InvalidAddress: 'InvalidAddress',
  InvalidAdvertisement: 'InvalidAdvertisement',
  NoAdvertisement: 'NoAdvertisement',
  NoReadyEndpoint: 'NoReadyEndpoint',
  NoLocalReadyEndpoint: 'NoLocalReadyEndpoint',
  HealthCheckFailing: 'HealthCheckFailing',
  // service-level notes
  Headless: 'Headless',
  ExternalName: 'ExternalName',
  // positive
  ReadyEndpoint: 'ReadyEndpoint',
  LocalReadyEndpoint: 'LocalReadyEndpoint',
  Advertised: 'Advertised',
} as const;
export type ReasonCode = (typeof ReasonCode)[keyof typeof ReasonCode];

/** One link of a reason chain: a code for machines and a sentence for operators. */
export interface Reason {
  code: ReasonCode;
  message: string;
  /** For HealthCheckFailing: the health layer's causes, as data (codes and absolute times). */
  causes?: HealthCause[];
}

/**
 * Decision for one VIP of one Service on this node. `reasons` lists every blocking reason when not
 * announced; when announced, the positive ones (plus any InvalidAdvertisement that was skipped).
 */
export interface VipDecision {
  address: string;
  kind: VipKind;
  announced: boolean;
  reasons: Reason[];
}

/** Decisions for one Service. `reasons` holds service-level notes (headless, ExternalName). */
export interface ServiceDecision {
  service: string; // "ns/name"
  vips: VipDecision[];
  reasons: Reason[];
}

/** Decision for one service CIDR. */
export interface ServiceCIDRDecision {
  cidr: string;
  source: string; // "config" or "ServiceCIDR/<name>"
  announced: boolean;
  reasons: Reason[];
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
  /** "ns/name" of every Service wanting the prefix, sorted. */
  services: string[];
  /** Names of the advertisements behind it, sorted. */
  advertisements: string[];
}

/** Output of `computeDesiredRoutes`. Routes and services are sorted for stable comparison. */
export interface DesiredResult {
  routes: DesiredRoute[];
  services: ServiceDecision[];
  serviceCIDRs: ServiceCIDRDecision[];
  node: NodeState;
}

/** Eligibility of this node. */
export interface NodeState {
  name: string;
  eligible: boolean;
  /** Blocking reasons (empty when eligible). */
  reasons: Reason[];
  labels: Record<string, string>;
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
  service?: string;
  advertisement: string;
}

/** Label whose presence excludes a node (presence rule, decisions.md). */
export const EXCLUDE_LABEL = 'node.kubernetes.io/exclude-from-external-load-balancers';
/** Taint set by cluster-autoscaler before scale-down. */
export const TO_BE_DELETED_TAINT = 'ToBeDeletedByClusterAutoscaler';
/** Label making kube-proxy ignore a Service. */
export const SERVICE_PROXY_NAME_LABEL = 'service.kubernetes.io/service-proxy-name';

/** The advertisement used when none is configured: LB ingress IPs to every peer. */
export const DEFAULT_ADVERTISEMENT: Advertisement = { name: 'default', addressKinds: ['loadBalancer'] };

/** Eligibility of node `name` from its Node object (undefined = not found). */
export function evaluateNode(node: Node | undefined, name: string): NodeState {
  if (!node) {
    return { name, eligible: false, labels: {}, reasons: [{ code: ReasonCode.NodeNotFound, message: `Node ${name} is not known; announcing nothing` }] };
  }
  const reasons: Reason[] = [];
  const labels = node.metadata?.labels ?? {};
  if (Object.hasOwn(labels, EXCLUDE_LABEL)) {
    reasons.push({ code: ReasonCode.NodeExcluded, message: `Node ${name} has label ${EXCLUDE_LABEL}` });
  }
  if ((node.spec?.taints ?? []).some((t) => t.key === TO_BE_DELETED_TAINT)) {
    reasons.push({ code: ReasonCode.NodeToBeDeleted, message: `Node ${name} has taint ${TO_BE_DELETED_TAINT}` });
  }
  if (node.metadata?.deletionTimestamp != null) {
    reasons.push({ code: ReasonCode.NodeDeleting, message: `Node ${name} is being deleted` });
  }
  for (const c of node.status?.conditions ?? []) {
    if (c.type === 'Ready' && (c.status === 'False' || c.status === 'Unknown')) {
      reasons.push({ code: ReasonCode.NodeNotReady, message: `Node ${name} condition Ready is ${c.status}` });
    }
    if (c.type === 'NetworkUnavailable' && c.status === 'True') {
      reasons.push({ code: ReasonCode.NodeNetworkUnavailable, message: `Node ${name} condition NetworkUnavailable is True` });
    }
  }
  return { name, eligible: reasons.length === 0, reasons, labels };
}

function advertisementsOf(ctx: DesiredRoutesContext): Advertisement[] {
  return ctx.advertisements && ctx.advertisements.length > 0 ? ctx.advertisements : [DEFAULT_ADVERTISEMENT];
}

function peersOf(ad: Advertisement): string[] | 'all' {
  return ad.peers && ad.peers.length > 0 ? [...ad.peers].sort() : 'all';
}

interface EndpointCounts {
  /** usable endpoints on this node */
  local: number;
  /** usable endpoints anywhere */
  total: number;
  /** terminating endpoints (any node) not counted */
  terminating: number;
  /** not-ready, not terminating endpoints (any node) */
  notReady: number;
}

function countEndpoints(slices: readonly EndpointSlice[], family: IpFamily, nodeName: string, countServingTerminating: boolean): EndpointCounts {
  // Dedupe by address: an endpoint moving between slices may briefly appear twice.
  const best = new Map<string, { usable: boolean; local: boolean; terminating: boolean }>();
  for (const slice of slices) {
    if (slice.addressType !== family) continue;
    for (const ep of slice.endpoints ?? []) {
      const addr = ep.addresses?.[0];
      if (!addr) continue;
      const c = ep.conditions ?? {};
      const ready = c.ready ?? true;
      const serving = c.serving ?? true;
      const terminating = c.terminating ?? false;
      const usable = (ready && !terminating) || (countServingTerminating && serving && terminating);
      const local = ep.nodeName === nodeName;
      const prev = best.get(addr);
      // Prefer a usable copy, then a local one.
      if (!prev || (usable && !prev.usable) || (usable === prev.usable && local && !prev.local)) {
        best.set(addr, { usable, local, terminating });
      }
    }
  }
  const out: EndpointCounts = { local: 0, total: 0, terminating: 0, notReady: 0 };
  for (const e of best.values()) {
    if (e.usable) {
      out.total++;
      if (e.local) out.local++;
    } else if (e.terminating) out.terminating++;
    else out.notReady++;
  }
  return out;
}

function vipsOf(svc: Service): Array<{ address: string; kind: VipKind; ipMode?: string }> {
  const out: Array<{ address: string; kind: VipKind; ipMode?: string }> = [];
  const seen = new Set<string>();
  const add = (address: string | undefined, kind: VipKind, ipMode?: string): void => {
    if (!address) return;
    const k = `${kind} ${address}`;
    if (seen.has(k)) return;
    seen.add(k);
    out.push(ipMode === undefined ? { address, kind } : { address, kind, ipMode });
  };
  const spec = svc.spec ?? {};
  if ((spec.type ?? 'ClusterIP') === 'LoadBalancer') {
    for (const ing of svc.status?.loadBalancer?.ingress ?? []) add(ing.ip, 'loadBalancer', ing.ipMode);
  }
  for (const ip of spec.externalIPs ?? []) add(ip, 'externalIP');
  const cips = spec.clusterIPs && spec.clusterIPs.length > 0 ? spec.clusterIPs : spec.clusterIP ? [spec.clusterIP] : [];
  for (const ip of cips) if (ip !== 'None') add(ip, 'clusterIP');
  return out;
}

/**
 * Decide every VIP of one Service on this node and produce its route contributions.
 * @param slices all EndpointSlices labelled for this Service.
 */
export function decideService(
  svc: Service,
  slices: readonly EndpointSlice[],
  node: NodeState,
  ctx: DesiredRoutesContext,
): { decision: ServiceDecision; contributions: RouteContribution[] } {
  const key = objectKey(svc);
  const decision: ServiceDecision = { service: key, vips: [], reasons: [] };
  const contributions: RouteContribution[] = [];
  const spec = svc.spec ?? {};
  const type = spec.type ?? 'ClusterIP';
  if (type === 'ExternalName') {
    decision.reasons.push({ code: ReasonCode.ExternalName, message: 'ExternalName Services have no IP' });
    return { decision, contributions };
  }
  if (spec.clusterIP === 'None') {
    decision.reasons.push({ code: ReasonCode.Headless, message: 'headless Service (clusterIP None) has no VIP' });
    return { decision, contributions };
  }
  const ns = svc.metadata?.namespace ?? '';
  const svcLabels = svc.metadata?.labels ?? {};
  const proxyName = svcLabels[SERVICE_PROXY_NAME_LABEL];
  const ads = advertisementsOf(ctx);
  const countsByFamily = new Map<IpFamily, EndpointCounts>();

  for (const vip of vipsOf(svc)) {
    const blocking: Reason[] = [...node.reasons];
    const family = ipFamilyOf(vip.address);
    if (!family) {
      blocking.push({ code: ReasonCode.InvalidAddress, message: `${JSON.stringify(vip.address)} is not an IP address` });
      decision.vips.push({ address: vip.address, kind: vip.kind, announced: false, reasons: blocking });
      continue;
    }
    if (proxyName !== undefined) {
      blocking.push({ code: ReasonCode.ServiceProxyNameSet, message: `label ${SERVICE_PROXY_NAME_LABEL}=${proxyName}: kube-proxy does not serve this Service` });
    }
    if (vip.kind === 'loadBalancer') {
      const cls = spec.loadBalancerClass;
      if (ctx.loadBalancerClass === undefined ? cls != null : cls !== ctx.loadBalancerClass) {
        blocking.push({
          code: ReasonCode.ForeignLoadBalancerClass,
          message: `loadBalancerClass ${cls == null ? 'is unset' : JSON.stringify(cls)} but Herald handles ${ctx.loadBalancerClass === undefined ? 'only Services without a class' : JSON.stringify(ctx.loadBalancerClass)}`,
        });
      }
      if (vip.ipMode === 'Proxy') {
        blocking.push({ code: ReasonCode.IPModeProxy, message: 'ingress ipMode is Proxy: kube-proxy does not capture this IP' });
      }
    }
    // Advertisements selecting this VIP.
    const selecting = ads.filter((ad) => ad.addressKinds.includes(vip.kind));
    const matching = selecting.filter(
      (ad) =>
        (!ad.namespaces || ad.namespaces.length === 0 || ad.namespaces.includes(ns)) &&
        matchesSelector(ad.serviceSelector, svcLabels) &&
        matchesSelector(ad.nodeSelector, node.labels),
    );
    if (matching.length === 0) {
      blocking.push({
        code: ReasonCode.NoAdvertisement,
        message:
          selecting.length === 0
            ? `no advertisement selects address kind ${vip.kind}`
            : `advertisement(s) ${selecting.map((a) => a.name).join(', ')} select ${vip.kind} but not this Service's namespace/labels or this node's labels`,
      });
    }
    // Endpoints.
    const policyField = vip.kind === 'clusterIP' ? 'internalTrafficPolicy' : 'externalTrafficPolicy';
    const policy = (vip.kind === 'clusterIP' ? spec.internalTrafficPolicy : spec.externalTrafficPolicy) ?? 'Cluster';
    let counts = countsByFamily.get(family);
    if (!counts) countsByFamily.set(family, (counts = countEndpoints(slices, family, node.name, ctx.countServingTerminating ?? false)));
    const extra = `${counts.notReady} not ready, ${counts.terminating} terminating${ctx.countServingTerminating ? ' and not serving' : ''}`;
    let positive: Reason;
    if (policy === 'Local') {
      if (counts.local === 0) {
        blocking.push({
          code: ReasonCode.NoLocalReadyEndpoint,
          message: `${policyField} is Local and node ${node.name} has no ready ${family} endpoint (${counts.total} ready on other nodes; ${extra})`,
        });
      }
      positive = { code: ReasonCode.LocalReadyEndpoint, message: `${policyField} is Local; ${counts.local} ready ${family} endpoint(s) on node ${node.name}` };
    } else {
      if (counts.total === 0) {
        blocking.push({ code: ReasonCode.NoReadyEndpoint, message: `${policyField} is Cluster and no ready ${family} endpoint exists (${extra})` });
      }
      positive = { code: ReasonCode.ReadyEndpoint, message: `${policyField} is Cluster; ${counts.total} ready ${family} endpoint(s) in the cluster` };
    }
    if (blocking.length === 0 && ctx.healthGate) {
      const g = ctx.healthGate(key, vip.address);
      if (!g.pass) blocking.push({ code: ReasonCode.HealthCheckFailing, message: g.reason ?? 'health check not passing', ...(g.causes && g.causes.length > 0 ? { causes: g.causes } : {}) });
    }
    if (blocking.length > 0) {
      decision.vips.push({ address: vip.address, kind: vip.kind, announced: false, reasons: blocking });
      continue;
    }
    const reasons: Reason[] = [positive];
    const bad: Reason[] = [];
    for (const ad of matching) {
      const len = family === 'IPv4' ? ad.aggregationLength : ad.aggregationLengthV6;
      let prefix: string;
      try {
        prefix = toPrefix(vip.address, len).prefix;
      } catch (e) {
        // Config validation should prevent this; one bad advertisement must not disturb the others.
        bad.push({ code: ReasonCode.InvalidAdvertisement, message: `advertisement ${ad.name}: ${(e as Error).message}` });
        continue;
      }
      const peers = peersOf(ad);
      contributions.push(route(prefix, routeFamilyOf(family), ad, key));
      reasons.push({ code: ReasonCode.Advertised, message: `advertisement ${ad.name} announces ${prefix} to ${peers === 'all' ? 'all peers' : peers.join(', ')}` });
    }
    const announced = reasons.length > 1;
    decision.vips.push({ address: vip.address, kind: vip.kind, announced, reasons: announced ? [...reasons, ...bad] : bad });
  }
  return { decision, contributions };
}

function route(prefix: string, family: Family, ad: Advertisement, service: string | undefined): RouteContribution {
  const c: RouteContribution = {
    prefix,
    family,
    peers: peersOf(ad),
    communities: [...(ad.communities ?? [])],
    largeCommunities: [...(ad.largeCommunities ?? [])],
    advertisement: ad.name,
  };
  if (ad.localPref !== undefined) c.localPref = ad.localPref;
  if (ad.med !== undefined) c.med = ad.med;
  if (service !== undefined) c.service = service;
  return c;
}

/** Service CIDR decisions and contributions: config CIDRs plus ServiceCIDR objects not being deleted. */
export function serviceCIDRContributions(
  snapshot: Snapshot,
  node: NodeState,
  ctx: DesiredRoutesContext,
): { decisions: ServiceCIDRDecision[]; contributions: RouteContribution[] } {
  const decisions: ServiceCIDRDecision[] = [];
  const contributions: RouteContribution[] = [];
  const sources: Array<{ cidr: string; source: string }> = [];
  for (const c of ctx.serviceCIDRs ?? []) sources.push({ cidr: c, source: 'config' });
  for (const obj of snapshot.serviceCIDRs()) {
    if (obj.metadata?.deletionTimestamp != null) continue;
    for (const c of obj.spec?.cidrs ?? []) sources.push({ cidr: c, source: `ServiceCIDR/${obj.metadata?.name ?? ''}` });
  }
  const ads = advertisementsOf(ctx).filter((ad) => ad.addressKinds.includes('serviceCIDR'));
  for (const { cidr, source } of sources) {
    const blocking: Reason[] = [...node.reasons];
    let canon: { prefix: string; family: Family } | undefined;
    try {
      canon = canonicalCIDR(cidr);
    } catch (e) {
      blocking.push({ code: ReasonCode.InvalidAddress, message: (e as Error).message });
    }
    const matching = ads.filter((ad) => matchesSelector(ad.nodeSelector, node.labels));
    if (matching.length === 0) {
      blocking.push({
        code: ReasonCode.NoAdvertisement,
        message: ads.length === 0 ? 'no advertisement selects address kind serviceCIDR' : `advertisement(s) ${ads.map((a) => a.name).join(', ')} do not select this node's labels`,
      });
    }
    if (blocking.length > 0 || !canon) {
      decisions.push({ cidr, source, announced: false, reasons: blocking });
      continue;
    }
    const reasons: Reason[] = [];
    for (const ad of matching) {
      contributions.push(route(canon.prefix, canon.family, ad, undefined));
      const peers = peersOf(ad);
      reasons.push({ code: ReasonCode.Advertised, message: `advertisement ${ad.name} announces ${canon.prefix} to ${peers === 'all' ? 'all peers' : peers.join(', ')}` });
    }
    decisions.push({ cidr, source, announced: true, reasons });
  }
  return { decisions, contributions };
}

/** Route order: IPv4 unicast first, then by prefix string. */
export function compareRoutes(a: { family: Family; prefix: string }, b: { family: Family; prefix: string }): number {
  if (a.family !== b.family) return a.family === 'ipv4-unicast' ? -1 : 1;
  return a.prefix < b.prefix ? -1 : a.prefix > b.prefix ? 1 : 0;
}

/** Merge contributions into one route per prefix (see module doc for the merge rules). Sorted ipv4 first, then by prefix. */
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
  if (list.length === 1) {
    // Fast path: most prefixes have exactly one contributor.
    const r: DesiredRoute = {
      prefix: first.prefix,
      family: first.family,
      peers: first.peers === 'all' ? 'all' : sortedUnique(first.peers),
      communities: sortedUnique(first.communities),
      largeCommunities: sortedUnique(first.largeCommunities),
      services: first.service === undefined ? [] : [first.service],
      advertisements: [first.advertisement],
    };
    if (first.localPref !== undefined) r.localPref = first.localPref;
    if (first.med !== undefined) r.med = first.med;
    return r;
  }
  return mergeSlow(list);
}

function mergeSlow(contributions: readonly RouteContribution[]): DesiredRoute {
  const acc = new Map<string, { r: DesiredRoute; peers: Set<string> | 'all'; comm: Set<string>; large: Set<string>; svcs: Set<string>; ads: Set<string> }>();
  for (const c of contributions) {
    let e = acc.get(c.prefix);
    if (!e) {
      e = {
        r: { prefix: c.prefix, family: c.family, peers: 'all', communities: [], largeCommunities: [], services: [], advertisements: [] },
        peers: new Set(),
        comm: new Set(),
        large: new Set(),
        svcs: new Set(),
        ads: new Set(),
      };
      acc.set(c.prefix, e);
    }
    if (c.peers === 'all' || e.peers === 'all') e.peers = 'all';
    else for (const p of c.peers) e.peers.add(p);
    for (const x of c.communities) e.comm.add(x);
    for (const x of c.largeCommunities) e.large.add(x);
    if (c.service !== undefined) e.svcs.add(c.service);
    e.ads.add(c.advertisement);
    if (c.localPref !== undefined) e.r.localPref = e.r.localPref === undefined ? c.localPref : Math.max(e.r.localPref, c.localPref);
    if (c.med !== undefined) e.r.med = e.r.med === undefined ? c.med : Math.min(e.r.med, c.med);
  }
  const out: DesiredRoute[] = [];
  for (const e of acc.values()) {
    e.r.peers = e.peers === 'all' ? 'all' : [...e.peers].sort();
    e.r.communities = [...e.comm].sort();
    e.r.largeCommunities = [...e.large].sort();
    e.r.services = [...e.svcs].sort();
    e.r.advertisements = [...e.ads].sort();
    out.push(e.r);
  }
  return out[0] as DesiredRoute;
}

/**
 * The whole desired state of this node.
 * Never throws: a bad VIP or CIDR gets an InvalidAddress reason, an advertisement with an
 * impossible aggregation length an InvalidAdvertisement reason (other advertisements still apply).
 */
export function computeDesiredRoutes(snapshot: Snapshot, ctx: DesiredRoutesContext): DesiredResult {
  const node = evaluateNode(snapshot.node(ctx.nodeName), ctx.nodeName);
  const services: ServiceDecision[] = [];
  const contributions: RouteContribution[] = [];
  for (const svc of snapshot.services()) {
    const key = objectKey(svc);
    const r = decideService(svc, snapshot.endpointSlicesFor(key), node, ctx);
    services.push(r.decision);
    contributions.push(...r.contributions);
  }
  const cidrs = serviceCIDRContributions(snapshot, node, ctx);
  contributions.push(...cidrs.contributions);
  services.sort((a, b) => (a.service < b.service ? -1 : a.service > b.service ? 1 : 0));
  return { routes: mergeRoutes(contributions), services, serviceCIDRs: cidrs.decisions, node };
}
