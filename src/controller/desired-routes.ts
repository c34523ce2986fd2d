/**
 * PURE computation of what THIS node should announce, with the reason chain behind every Service VIP decision
 * ("why is this VIP not announced from node X?"). Nothing here reads anything but its arguments.
 *
 * Two steps, in pipeline order (docs/architecture.md):
 * 1. `decideService` turns one Service and its EndpointSlices into **candidates**: every VIP either has blocking
 *    reasons, or passes every rule below and waits only for its health gate (`candidate: true`, with the route
 *    pieces it would announce and its usable local endpoints). `serviceCIDRContributions` does the same for the
 *    service CIDRs, which have no health gate.
 * 2. `gateService` applies health verdicts to one Service's candidates: a failing verdict turns a candidate into a
 *    `HealthCheckFailing` decision, a passing one keeps its route pieces. The daemon's health gate stage
 *    (src/daemon/health-gate.ts) calls it with the health manager's verdicts; `computeDesiredRoutes` composes both
 *    steps and the merge (route-merge.ts) into the whole desired set, the reference the incremental path is tested
 *    against.
 *
 * Semantics (docs/kubernetes.md has the table; docs/decisions.md the product decisions):
 * - VIPs of a Service: `status.loadBalancer.ingress[].ip` (type LoadBalancer only, not `ipMode: Proxy`),
 *   `spec.externalIPs[]`, `spec.clusterIPs[]` (host routes). Headless and ExternalName Services have none.
 *   Dual-stack Services give one VIP per family.
 * - externalTrafficPolicy governs loadBalancer and externalIP VIPs, internalTrafficPolicy the clusterIP VIPs.
 *   Local needs a usable endpoint on this node, Cluster a usable endpoint anywhere, both of the VIP's IP family
 *   (endpoints.ts has the one rule).
 * - Node eligibility: node-eligibility.ts.
 * - loadBalancerClass: with our class unset only class-less Services' LB IPs are ours; with it set, only an exact
 *   match. The class filters loadBalancer VIPs only.
 * - Advertisements: none configured ⇒ LB ingress IPs to every peer. Otherwise each VIP is announced by every
 *   advertisement selecting its address kind, namespace, Service labels, this node's labels and (when it selects
 *   pools) the address's pool;
 *   `aggregationLength(V6)` widens the prefix.
 * - Admission (admission.ts), before any route piece exists: a LoadBalancer or external address outside the
 *   operator's allowed space, and a prefix an advertisement would widen past it, are never announced
 *   (PrefixNotAllowed); the other advertisements of the VIP still announce it.
 * - Steering (steering.ts): maxNodesPerVip may leave this node out (NotChosen); weighting, locality and the
 *   path-attribute annotations set the route pieces' attributes; a bad annotation never blocks (InvalidAnnotation
 *   notes say what is sent instead).
 */
import type { EndpointSlice, Service } from '../k8s/types.ts';
import { objectKey } from '../k8s/keys.ts';
import type { Snapshot } from '../k8s/object-store.ts';
import type { LabelSelector } from '../k8s/selector.ts';
import { matchesSelectors } from '../k8s/selector.ts';
import { AddressSpace } from '../net/address-space.ts';
import type { Family } from '../../bgp/main-thread.ts';
import type { IpFamily } from '../net/address.ts';
import { canonicalIP, canonicalCIDR, ipFamilyOf, ipv4MappedAddress, routeFamilyOf, toPrefix } from '../net/address.ts';
import type { EndpointCounts } from './endpoints.ts';
import { countEndpoints } from './endpoints.ts';
import type { NodeState } from './node-eligibility.ts';
import { evaluateNode } from './node-eligibility.ts';
import type { HealthCause, Reason } from './reasons.ts';
import { ReasonCode, sharedReason, sharedReasons } from './reasons.ts';
import type { DesiredRoute, RouteContribution } from './route-merge.ts';
import { mergeRoutes } from './route-merge.ts';
import type { AdmissionInputs, ServiceAttributesPolicy } from './admission.ts';
import { admitAddress, admitAttributes, admitPrefix } from './admission.ts';
import type { ClusterNodes, ServiceAnnotations, SteeringContext, VipRouteAttributes } from './steering.ts';
import { boundsFanOut, clusterNodesOf, describeAttributes, NO_CLUSTER_NODES, serviceAnnotations, steer } from './steering.ts';
import { nodesWithUsableEndpoints } from './endpoints.ts';

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
  /** Services whose labels match any of these (undefined or empty = all; MetalLB's list). Not applied to serviceCIDR. */
  serviceSelectors?: LabelSelector[];
  /** Namespaces of the Services (undefined or empty = all). Not applied to serviceCIDR. */
  namespaces?: string[];
  /**
   * The pools it selects (config `ipAddressPools`, `ipAddressPoolSelectors`, resolved against the pools in force by
   * src/daemon/mapping.ts): only addresses inside their `addresses` (CIDRs and "A-B" ranges), as MetalLB's
   * BGPAdvertisement. Undefined: any address.
   */
  pools?: { readonly names: readonly string[]; readonly addresses: readonly string[] };
  /** This node's labels must match (undefined = every node). */
  nodeSelector?: LabelSelector;
  /** This node's labels must match any of these (undefined or empty = every node; MetalLB's list). */
  nodeSelectors?: LabelSelector[];
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
  /** 'endpoints': the link bandwidth community weighs Local VIPs by this node's usable local endpoints (steering.ts). */
  weighting?: 'endpoints';
  /** Bytes per second of one endpoint under weighting (default 1 Gbit/s = 125000000). */
  bandwidthPerEndpoint?: number;
  /** Cluster VIPs: nodes without a usable local endpoint add `med` to the MED and prepend `prependOthers` times. */
  locality?: { preferLocal: boolean; med?: number; prependOthers?: number };
  /** Announce each VIP from at most this many eligible nodes (rendezvous choice, steering.ts). */
  maxNodesPerVip?: number;
  /** CIDRs this advertisement may announce inside; they only narrow the allowed space (admission.ts). */
  allowedPrefixes?: string[];
  /** What Services may set with the path-attribute annotations through this advertisement (admission.ts); absent: nothing. */
  serviceAttributes?: ServiceAttributesPolicy;
}

const poolSpaces = new WeakMap<object, AddressSpace>();

/** Whether `address` lies inside the pools `ad` selects (true when it selects none: any address). */
function inPools(ad: Advertisement, address: string): boolean {
  const pools = ad.pools;
  if (pools === undefined) return true;
  let space = poolSpaces.get(pools);
  if (space === undefined) {
    space = AddressSpace.EMPTY;
    for (const text of pools.addresses) {
      try {
        space = space.union(AddressSpace.of([text]));
      } catch {
        // validated by the config schema; a text that is not an address range selects nothing (fail closed)
      }
    }
    poolSpaces.set(pools, space);
  }
  return space.contains(address);
}

/** Inputs besides the snapshot, all from the configuration (the admission policy's among them: admission.ts). */
export interface DesiredRoutesContext extends AdmissionInputs {
  /** Name of the Node this speaker runs on (kube-proxy's hostname). */
  nodeName: string;
  /** Our loadBalancerClass; undefined = we are the default implementation (class-less Services only). */
  loadBalancerClass?: string;
  /** Configured advertisements; undefined or empty = LB ingress IPs to every peer. */
  advertisements?: Advertisement[];
  /**
   * Service CIDRs from config (announced with the `serviceCIDR` kind, together with ServiceCIDR objects; an
   * aggregated ClusterIP prefix may reach inside them).
   */
  serviceCIDRs?: string[];
  /** Top-level `allowedPrefixes`: where LoadBalancer and external addresses may be announced, besides the pools. */
  allowedPrefixes?: string[];
  /** Every pool's `addresses`: LoadBalancer and external addresses inside them may be announced. */
  poolAddresses?: string[];
  /** Count serving-but-terminating endpoints as usable (default false; docs/decisions.md). */
  countServingTerminating?: boolean;

  /** Node departure signals drain instead of withdrawing at once (some peer has gracefulShutdown; node-eligibility.ts). */
  departureDrains?: boolean;
  /** `ignoreExcludeLB`: the label exclude-from-external-load-balancers is not a departure signal (node-eligibility.ts). */
  ignoreExcludeLB?: boolean;
  /** This speaker's AS: the Global Administrator of the link bandwidth community (default 0). */
  localAs?: number;
}

/** What decideService reads besides the Service, its slices and this node. */
export interface DecideInputs {
  /** The cluster's eligible Nodes, for maxNodesPerVip (default: none known; only read when an advertisement bounds). */
  readonly cluster?: ClusterNodes;
  /** The Service's previous candidates from the same controller: the last good annotation values are kept from them. */
  readonly previous?: ServiceCandidates | undefined;
}

/** The health layer's verdict on one VIP that passed every other rule. */
export interface HealthVerdict {
  pass: boolean;
  reason?: string;
  /** The health layer's own reasons (e.g. Suppressed, HoldDown, NoLocalEndpoints, ConnectionRefused), kept as data. */
  causes?: HealthCause[];
  /** Passing: a rule the health layer waived (FlapControlWaived), shown among the VIP's reasons. */
  waived?: HealthCause[];
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
  /** Per advertisement, what is sent when steering applies (weighting, locality, maxNodesPerVip, annotations). */
  attributes?: VipRouteAttributes[];
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

/** One VIP before its health gate. */
export interface VipCandidate {
  /** The decision when no health check objects: blocked (reasons say why) or announced. Same object as in the Service's decision. */
  readonly decision: VipDecision;
  /** True when every rule but the health gate passed: only a failing health verdict can still block it. */
  readonly candidate: boolean;
  /** Route pieces it announces once its gate passes (empty when not a candidate). */
  readonly contributions: readonly RouteContribution[];
  /** Usable endpoints of the VIP's IP family (endpoints.ts), undefined when the address is not an IP address. */
  readonly endpoints: EndpointCounts | undefined;
  /**
   * Other nodes can serve this VIP while this one cannot: its traffic policy is Local and usable endpoints exist on
   * other nodes. False for Cluster policy (every eligible node sees the same endpoints, and so the same flaps).
   * Flap control holds a VIP back only while this is true (docs/decisions.md "Flap control").
   */
  readonly othersCanServe: boolean;
}

/** One Service before the health gate: what `decideService` computed, and the object it was computed from. */
export interface ServiceCandidates {
  /** "ns/name". */
  readonly service: string;
  /** The Service object (health check annotations and kube-proxy fields are read from it by the gate). */
  readonly object: Service;
  /** The decision when every candidate passes its gate (VIPs in `vips` order). */
  readonly decision: ServiceDecision;
  /** Per VIP, in `decision.vips` order. */
  readonly vips: readonly VipCandidate[];
  /** Every candidate VIP's route pieces (what the Service announces when every gate passes). */
  readonly contributions: readonly RouteContribution[];
  /** The path-attribute annotations as they applied (the next computation keeps their last good values). */
  readonly annotations: ServiceAnnotations;
}

/** Service CIDR decisions and the route pieces of the announced ones (no health gate applies to them). */
export interface ServiceCIDRCandidates {
  readonly decisions: ServiceCIDRDecision[];
  readonly contributions: RouteContribution[];
}

/** One Service after its health gate: the final decision and the route pieces announced. */
export interface GatedService {
  readonly decision: ServiceDecision;
  /** `candidates.contributions` itself when every candidate passed (so callers can compare identity). */
  readonly contributions: readonly RouteContribution[];
}

/** Output of `computeDesiredRoutes`. Routes and services are sorted for stable comparison. */
export interface DesiredResult {
  routes: DesiredRoute[];
  services: ServiceDecision[];
  serviceCIDRs: ServiceCIDRDecision[];
  node: NodeState;
}

const NO_CONTRIBUTIONS: readonly RouteContribution[] = Object.freeze([]);

/**
 * A copy of `list` of its exact length. V8 gives an array grown by `push` room for 17 elements (about 150 bytes)
 * whatever it holds; a copy by `slice` has room for its elements only. Used on the lists a decision keeps.
 */
function exact<T>(list: T[]): T[] {
  return list.slice();
}

/** Label making kube-proxy ignore a Service. */
export const SERVICE_PROXY_NAME_LABEL = 'service.kubernetes.io/service-proxy-name';

/** The advertisement used when none is configured: LB ingress IPs to every peer. */
export const DEFAULT_ADVERTISEMENT: Advertisement = { name: 'default', addressKinds: ['loadBalancer'] };

function advertisementsOf(ctx: DesiredRoutesContext): Advertisement[] {
  return ctx.advertisements && ctx.advertisements.length > 0 ? ctx.advertisements : [DEFAULT_ADVERTISEMENT];
}

function peersOf(ad: Advertisement): string[] | 'all' {
  return ad.peers && ad.peers.length > 0 ? [...ad.peers].sort() : 'all';
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

/**
 * The candidates of one Service on this node: every VIP decided by every rule but its health gate.
 * Never throws for odd objects: a bad VIP gets an InvalidAddress reason, an advertisement with an impossible
 * aggregation length an InvalidAdvertisement reason (the other advertisements still apply).
 * @param slices all EndpointSlices labelled for this Service.
 */
export function decideService(svc: Service, slices: readonly EndpointSlice[], node: NodeState, ctx: DesiredRoutesContext, inputs: DecideInputs = {}): ServiceCandidates {
  const key = objectKey(svc);
  const decision: ServiceDecision = { service: key, vips: [], reasons: [] };
  const vips: VipCandidate[] = [];
  const all: RouteContribution[] = [];
  const annotations = serviceAnnotations(svc.metadata?.annotations, inputs.previous?.annotations);
  // The lists grown by push get their exact size (`exact`) before they are kept: Controller keeps the candidates of
  // every Service (docs/benchmarks.md "Where the memory goes").
  const done = (): ServiceCandidates => {
    decision.vips = exact(decision.vips);
    decision.reasons = sharedReasons(decision.reasons);
    return { service: key, object: svc, decision, vips: exact(vips), contributions: all.length > 0 ? exact(all) : NO_CONTRIBUTIONS, annotations };
  };
  const blocked = (vip: { address: string; kind: VipKind }, reasons: Reason[], endpoints: EndpointCounts | undefined): void => {
    const d: VipDecision = { address: vip.address, kind: vip.kind, announced: false, reasons: sharedReasons(reasons) };
    decision.vips.push(d);
    vips.push({ decision: d, candidate: false, contributions: NO_CONTRIBUTIONS, endpoints, othersCanServe: false });
  };
  const spec = svc.spec ?? {};
  const type = spec.type ?? 'ClusterIP';
  if (type === 'ExternalName') {
    decision.reasons.push(sharedReason(ReasonCode.ExternalName, 'ExternalName Services have no IP'));
    return done();
  }
  if (spec.clusterIP === 'None') {
    decision.reasons.push(sharedReason(ReasonCode.Headless, 'headless Service (clusterIP None) has no VIP'));
    return done();
  }
  const ns = svc.metadata?.namespace ?? '';
  const svcLabels = svc.metadata?.labels ?? {};
  const proxyName = svcLabels[SERVICE_PROXY_NAME_LABEL];
  const ads = advertisementsOf(ctx);
  const countsByFamily = new Map<IpFamily, EndpointCounts>();
  const holdersByFamily = new Map<IpFamily, ReadonlySet<string>>();
  const holders = (family: IpFamily) => (): ReadonlySet<string> => {
    let h = holdersByFamily.get(family);
    if (!h) holdersByFamily.set(family, (h = nodesWithUsableEndpoints(slices, family, ctx.countServingTerminating ?? false)));
    return h;
  };

  for (const vip of vipsOf(svc)) {
    const blocking: Reason[] = [...node.reasons];
    const family = ipFamilyOf(vip.address);
    if (!family) {
      blocking.push({ code: ReasonCode.InvalidAddress, message: `${JSON.stringify(vip.address)} is not an IP address` });
      blocked(vip, blocking, undefined);
      continue;
    }
    const mapped = ipv4MappedAddress(vip.address);
    if (mapped !== undefined) {
      // Kubernetes reads it as the IPv4 address; announced as an IPv6 /128 it would reach no one (issue 35).
      blocking.push({ code: ReasonCode.InvalidAddress, message: `${JSON.stringify(vip.address)} is an IPv4-mapped IPv6 address (::ffff:0:0/96), which Herald does not announce in either form: write the IPv4 address ${mapped}` });
      blocked(vip, blocking, undefined);
      continue;
    }
    if (proxyName !== undefined) {
      blocking.push(sharedReason(ReasonCode.ServiceProxyNameSet, `label ${SERVICE_PROXY_NAME_LABEL}=${proxyName}: kube-proxy does not serve this Service`));
    }
    if (vip.kind === 'loadBalancer') {
      const cls = spec.loadBalancerClass;
      if (ctx.loadBalancerClass === undefined ? cls != null : cls !== ctx.loadBalancerClass) {
        blocking.push(
          sharedReason(
            ReasonCode.ForeignLoadBalancerClass,
            `loadBalancerClass ${cls == null ? 'is unset' : JSON.stringify(cls)} but Herald handles ${ctx.loadBalancerClass === undefined ? 'only Services without a class' : JSON.stringify(ctx.loadBalancerClass)}`,
          ),
        );
      }
      if (vip.ipMode === 'Proxy') {
        blocking.push(sharedReason(ReasonCode.IPModeProxy, 'ingress ipMode is Proxy: kube-proxy does not capture this IP'));
      }
    }
    // Admission (admission.ts): a tenant's address outside what the operator allows is never announced.
    const refused = admitAddress(vip.kind, vip.address, ctx);
    if (refused !== undefined) blocking.push(refused);
    // Advertisements selecting this VIP.
    const selecting = ads.filter((ad) => ad.addressKinds.includes(vip.kind));
    const matching = selecting.filter(
      (ad) =>
        (!ad.namespaces || ad.namespaces.length === 0 || ad.namespaces.includes(ns)) &&
        inPools(ad, vip.address) &&
        matchesSelectors(ad.serviceSelector, ad.serviceSelectors, svcLabels) &&
        matchesSelectors(ad.nodeSelector, ad.nodeSelectors, node.labels),
    );
    if (matching.length === 0) {
      blocking.push(
        sharedReason(
          ReasonCode.NoAdvertisement,
          selecting.length === 0
            ? `no advertisement selects address kind ${vip.kind}`
            : `advertisement(s) ${selecting.map((a) => a.name).join(', ')} select ${vip.kind} but not this Service's namespace/labels, this node's labels or this address's pool`,
        ),
      );
    }
    // The prefix each advertisement announces, admitted (its aggregation length may not widen it past the allowed space).
    const routes: Array<{ ad: Advertisement; prefix: string }> = [];
    const bad: Reason[] = [];
    const narrowed: Reason[] = [];
    if (refused === undefined) {
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
        const no = admitPrefix(vip.kind, canonicalIP(vip.address) ?? vip.address, prefix, ad, ctx);
        if (no !== undefined) narrowed.push(no);
        else routes.push({ ad, prefix });
      }
      if (routes.length === 0 && narrowed.length > 0) blocking.push(...narrowed);
    }
    // Endpoints.
    const policyField = vip.kind === 'clusterIP' ? 'internalTrafficPolicy' : 'externalTrafficPolicy';
    const policy = (vip.kind === 'clusterIP' ? spec.internalTrafficPolicy : spec.externalTrafficPolicy) ?? 'Cluster';
    let counts = countsByFamily.get(family);
    if (!counts) countsByFamily.set(family, (counts = countEndpoints(slices, family, node.name, ctx.countServingTerminating ?? false)));
    // The endpoint reasons name no VIP: shared by every Service in the same situation (reasons.ts sharedReason).
    const extra = (c: EndpointCounts): string => `${c.notReady} not ready, ${c.terminating} terminating${ctx.countServingTerminating ? ' and not serving' : ''}`;
    if (policy === 'Local' && counts.local === 0) {
      blocking.push(sharedReason(ReasonCode.NoLocalReadyEndpoint, `${policyField} is Local and node ${node.name} has no ready ${family} endpoint (${counts.total} ready on other nodes; ${extra(counts)})`));
    } else if (policy !== 'Local' && counts.total === 0) {
      blocking.push(sharedReason(ReasonCode.NoReadyEndpoint, `${policyField} is Cluster and no ready ${family} endpoint exists (${extra(counts)})`));
    }
    if (blocking.length > 0) {
      blocked(vip, blocking, counts);
      continue;
    }
    const positive =
      policy === 'Local'
        ? sharedReason(ReasonCode.LocalReadyEndpoint, `${policyField} is Local; ${counts.local} ready ${family} endpoint(s) on node ${node.name}`)
        : sharedReason(ReasonCode.ReadyEndpoint, `${policyField} is Cluster; ${counts.total} ready ${family} endpoint(s) in the cluster`);
    const reasons: Reason[] = [positive];
    const contributions: RouteContribution[] = [];
    const notChosen: Reason[] = [];
    let attributes: VipRouteAttributes[] | undefined;
    const steering: SteeringContext = {
      service: key,
      address: canonicalIP(vip.address) ?? vip.address,
      family,
      local: policy === 'Local',
      counts,
      node,
      cluster: inputs.cluster ?? NO_CLUSTER_NODES,
      endpointNodes: holders(family),
      annotations,
      localAs: ctx.localAs ?? 0,
      announcedBefore: (prefix, advertisement) => inputs.previous?.contributions.some((pc) => pc.prefix === prefix && pc.advertisement === advertisement) ?? false,
    };
    const refusedAttributes: Reason[] = [];
    for (const { ad, prefix } of routes) {
      const peers = peersOf(ad);
      const c = route(prefix, routeFamilyOf(family), ad, key);
      // Admission of the Service's path attributes: only what this advertisement accepts goes with its piece.
      const admitted = admitAttributes(annotations.attributes, ad);
      const steered = steer(c, ad, steering, admitted.attributes);
      if (steered.attributes !== undefined) (attributes ??= []).push(steered.attributes);
      if (!steered.chosen) {
        for (const r of steered.reasons) notChosen.push(r);
        continue;
      }
      contributions.push(c);
      reasons.push({ code: ReasonCode.Advertised, message: `advertisement ${ad.name} announces ${prefix} to ${peers === 'all' ? 'all peers' : peers.join(', ')}`, advertisement: ad.name });
      for (const r of steered.reasons) reasons.push(r);
      const sent = describeAttributes(admitted.attributes);
      if (sent !== '') reasons.push({ code: ReasonCode.ServiceAttributes, message: `annotations accepted by advertisement ${ad.name}: ${sent}`, advertisement: ad.name });
      for (const r of admitted.refused) refusedAttributes.push(r);
    }
    const announced = contributions.length > 0;
    if (!announced && notChosen.length > 0) {
      // Not this node's VIP: blocked, no health check needed here (the chosen nodes check theirs).
      const d: VipDecision = { address: vip.address, kind: vip.kind, announced: false, reasons: exact([...notChosen, ...narrowed, ...bad]) };
      if (attributes !== undefined) d.attributes = exact(attributes);
      decision.vips.push(d);
      vips.push({ decision: d, candidate: false, contributions: NO_CONTRIBUTIONS, endpoints: counts, othersCanServe: false });
      continue;
    }
    const d: VipDecision = { address: vip.address, kind: vip.kind, announced, reasons: exact(announced ? [...reasons, ...annotations.notes, ...refusedAttributes, ...notChosen, ...narrowed, ...bad] : bad) };
    if (attributes !== undefined) d.attributes = exact(attributes);
    decision.vips.push(d);
    vips.push({ decision: d, candidate: true, contributions: exact(contributions), endpoints: counts, othersCanServe: policy === 'Local' && counts.total > counts.local });
    for (const c of contributions) all.push(c);
  }
  return done();
}

/** The Service's final decision and route pieces under `verdictOf(vip)` for each candidate VIP. Pure. */
export function gateService(candidates: ServiceCandidates, verdictOf: (vip: VipCandidate) => HealthVerdict): GatedService {
  let vips: VipDecision[] | undefined;
  let failed = false;
  const contributions: RouteContribution[] = [];
  candidates.vips.forEach((v, i) => {
    if (!v.candidate) return;
    const verdict = verdictOf(v);
    if (verdict.pass) {
      for (const c of v.contributions) contributions.push(c);
      if (verdict.waived && verdict.waived.length > 0) {
        vips ??= [...candidates.decision.vips];
        const message = verdict.waived.map((w) => w.message).join('; ');
        vips[i] = { ...v.decision, reasons: [...v.decision.reasons, { code: ReasonCode.FlapControlWaived, message, causes: verdict.waived }] };
      }
      return;
    }
    failed = true;
    vips ??= [...candidates.decision.vips];
    vips[i] = {
      address: v.decision.address,
      kind: v.decision.kind,
      announced: false,
      reasons: [{ code: ReasonCode.HealthCheckFailing, message: verdict.reason ?? 'health check not passing', ...(verdict.causes && verdict.causes.length > 0 ? { causes: verdict.causes } : {}) }],
    };
  });
  if (!failed) return { decision: vips ? { ...candidates.decision, vips } : candidates.decision, contributions: candidates.contributions };
  return { decision: { ...candidates.decision, vips: vips ?? candidates.decision.vips }, contributions };
}

/** Service CIDR decisions and contributions: config CIDRs plus ServiceCIDR objects not being deleted. */
export function serviceCIDRContributions(snapshot: Snapshot, node: NodeState, ctx: DesiredRoutesContext): ServiceCIDRCandidates {
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
    const matching = ads.filter((ad) => matchesSelectors(ad.nodeSelector, ad.nodeSelectors, node.labels));
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
    const narrowed: Reason[] = [];
    for (const ad of matching) {
      const no = admitPrefix('serviceCIDR', canon.prefix, canon.prefix, ad, ctx);
      if (no !== undefined) {
        narrowed.push(no);
        continue;
      }
      contributions.push(route(canon.prefix, canon.family, ad, undefined));
      const peers = peersOf(ad);
      reasons.push({ code: ReasonCode.Advertised, message: `advertisement ${ad.name} announces ${canon.prefix} to ${peers === 'all' ? 'all peers' : peers.join(', ')}`, advertisement: ad.name });
    }
    decisions.push({ cidr, source, announced: reasons.length > 0, reasons: [...reasons, ...narrowed] });
  }
  return { decisions, contributions };
}

const PASS: HealthVerdict = { pass: true };

/**
 * The whole desired state of this node, from scratch: candidates of every Service, gated by `verdict` (every VIP
 * passes when it is omitted), merged with the service CIDRs. Never throws for odd objects (see `decideService`).
 */
export function computeDesiredRoutes(snapshot: Snapshot, ctx: DesiredRoutesContext, verdict?: (service: string, address: string) => HealthVerdict): DesiredResult {
  const ignoreExcludeLabel = ctx.ignoreExcludeLB ?? false;
  const node = evaluateNode(snapshot.node(ctx.nodeName), ctx.nodeName, { departureDrains: ctx.departureDrains ?? false, ignoreExcludeLabel });
  const services: ServiceDecision[] = [];
  const contributions: RouteContribution[] = [];
  const inputs: DecideInputs = { cluster: boundsFanOut(ctx.advertisements) ? clusterNodesOf(snapshot, ctx.nodeName, snapshot.nodes(), { ignoreExcludeLabel }) : NO_CLUSTER_NODES };
  for (const svc of snapshot.services()) {
    const key = objectKey(svc);
    const gated = gateService(decideService(svc, snapshot.endpointSlicesFor(key), node, ctx, inputs), verdict ? (vip) => verdict(key, vip.decision.address) : () => PASS);
    services.push(gated.decision);
    contributions.push(...gated.contributions);
  }
  const cidrs = serviceCIDRContributions(snapshot, node, ctx);
  contributions.push(...cidrs.contributions);
  services.sort((a, b) => (a.service < b.service ? -1 : a.service > b.service ? 1 : 0));
  return { routes: mergeRoutes(contributions), services, serviceCIDRs: cidrs.decisions, node };
}
