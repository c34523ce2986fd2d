/**
 * Reason chains: why a VIP is or is not announced from this node, as data (a code for machines, a sentence for
 * operators). They are what `herald services` and `/api/v1/services` show (docs/kubernetes.md "Reasons").
 */
import { SharedTable } from '../k8s/terms.ts';

/** Machine-readable reason codes. Negative codes block announcing; positive ones explain it. */
export const ReasonCode = {
  NodeNotFound: 'NodeNotFound',
  NodeExcluded: 'NodeExcluded',
  NodeToBeDeleted: 'NodeToBeDeleted',
  NodeOutOfService: 'NodeOutOfService',
  NodeDeleting: 'NodeDeleting',
  NodeNotReady: 'NodeNotReady',
  NodeNetworkUnavailable: 'NodeNetworkUnavailable',
  /** This node's Node object cannot be used (quarantine.ts): as if missing. */
  NodeQuarantined: 'NodeQuarantined',
  /** The Service cannot be used or decided (quarantine.ts): treated as absent, no VIP. */
  Quarantined: 'Quarantined',
  ServiceProxyNameSet: 'ServiceProxyNameSet',
  ForeignLoadBalancerClass: 'ForeignLoadBalancerClass',
  IPModeProxy: 'IPModeProxy',
  InvalidAddress: 'InvalidAddress',
  InvalidAdvertisement: 'InvalidAdvertisement',
  /**
   * A LoadBalancer or external address outside the operator's allowed space (pools, allowedPrefixes), or a prefix an
   * aggregation would widen past it (admission.ts): never announced.
   */
  PrefixNotAllowed: 'PrefixNotAllowed',
  /**
   * A path-attribute annotation the advertisement does not accept (no serviceAttributes for it, a value outside its
   * list, a well-known community): not sent; the VIP is announced with the advertisement's attributes (admission.ts).
   */
  AttributeNotAllowed: 'AttributeNotAllowed',
  /**
   * An admitted Service attribute not on the wire: the Services behind the prefix do not all ask for the same, or it
   * does not fit one UPDATE (route-merge.ts; shown by the admin API, src/daemon/admin-view.ts `onTheWire`).
   */
  AttributeNotSent: 'AttributeNotSent',
  NoAdvertisement: 'NoAdvertisement',
  NoReadyEndpoint: 'NoReadyEndpoint',
  NoLocalReadyEndpoint: 'NoLocalReadyEndpoint',
  HealthCheckFailing: 'HealthCheckFailing',
  /** maxNodesPerVip: the rendezvous choice picked other nodes for this VIP. */
  NotChosen: 'NotChosen',
  /**
   * maxNodesPerVip: the published node set (src/k8s/node-set.ts) does not list this node yet, cannot be read, or does
   * not carry a label the advertisement's nodeSelector reads: the choice cannot be made the way every node makes it.
   */
  NodeSetUnknown: 'NodeSetUnknown',
  /** A bad path-attribute annotation: blocking when no good value is known for it, else a note (last good kept). */
  InvalidAnnotation: 'InvalidAnnotation',
  // service-level notes
  Headless: 'Headless',
  ExternalName: 'ExternalName',
  // positive
  ReadyEndpoint: 'ReadyEndpoint',
  LocalReadyEndpoint: 'LocalReadyEndpoint',
  Advertised: 'Advertised',

  /** Announced although flap control would hold it back: no other node can serve it (its causes say which rule). */
  FlapControlWaived: 'FlapControlWaived',
  /** maxNodesPerVip: this node is among the chosen ones. */
  Chosen: 'Chosen',
  /** weighting: endpoints: the link bandwidth this node attaches. */
  Weighted: 'Weighted',
  /** weighting: endpoints on a VIP whose policy is Cluster: no link bandwidth (every node spreads over all endpoints). */
  Unweighted: 'Unweighted',
  /** locality: this node has a ready local endpoint and is sent as preferred. */
  LocalityPreferred: 'LocalityPreferred',
  /** locality: no ready local endpoint here; sent less preferred (MED, AS path prepend) as a fallback. */
  LocalityFallback: 'LocalityFallback',
  /** The herald.io/ path-attribute annotations applied. */
  ServiceAttributes: 'ServiceAttributes',
} as const;
export type ReasonCode = (typeof ReasonCode)[keyof typeof ReasonCode];

/** One machine-readable cause of a failing health gate; `until` (ISO 8601) for time-bound ones (hold-down, suppression). */
export interface HealthCause {
  code: string;
  message: string;
  since?: string;
  until?: string;
}

/** One link of a reason chain. */
export interface Reason {
  code: ReasonCode;
  message: string;
  /** For HealthCheckFailing: the health layer's causes, as data (codes and absolute times). */
  causes?: HealthCause[];
  /** For Advertised: the advertisement announcing it. */
  advertisement?: string;
}

/**
 * Codes saying this node does not handle a VIP at all, as opposed to handling it and not announcing it now: no
 * advertisement selects it for this node and Service, another implementation's (loadBalancerClass,
 * service.kubernetes.io/service-proxy-name, ipMode Proxy), not an address, or outside what the operator allows
 * (a tenant's address is no series of Herald's metrics: `herald_tenant_inputs_refused` counts them instead).
 */
const NOT_HANDLED: ReadonlySet<string> = new Set<ReasonCode>([
  ReasonCode.NoAdvertisement,
  ReasonCode.ForeignLoadBalancerClass,
  ReasonCode.ServiceProxyNameSet,
  ReasonCode.IPModeProxy,
  ReasonCode.InvalidAddress,
  ReasonCode.PrefixNotAllowed,
]);

/**
 * True when this node handles the VIP: it announces it, or would once what blocks it now (node state, endpoints,
 * health checks) clears. The VIPs `herald_vip_announced` reports (docs/metrics.md).
 */
export function handlesVip(vip: { readonly announced: boolean; readonly reasons: readonly { code: string }[] }): boolean {
  return vip.announced || !vip.reasons.some((r) => NOT_HANDLED.has(r.code));
}

/**
 * Codes of refused tenant input (admission.ts): each is a Warning Event on the Service (src/daemon/service-events.ts)
 * and counted by `herald_tenant_inputs_refused` (docs/security.md).
 */
export const REFUSAL_CODES: ReadonlySet<string> = new Set<ReasonCode>([ReasonCode.PrefixNotAllowed, ReasonCode.AttributeNotAllowed]);

/**
 * True when a VIP counts in this node's BGPNodeStatus summary (src/status/node-status.ts): this node handles it
 * ({@link handlesVip}), or refused it as tenant input ({@link REFUSAL_CODES}), which the operator sees counted under
 * its reason. A VIP nothing selects here (a ClusterIP no advertisement announces) is not counted.
 */
export function countsInNodeStatus(vip: { readonly announced: boolean; readonly reasons: readonly { code: string }[] }): boolean {
  return handlesVip(vip) || vip.reasons.some((r) => REFUSAL_CODES.has(r.code));
}

/** Most distinct shared reasons held (then the table starts again, see `sharedReason`). */
export const MAX_SHARED_REASONS = 4096;

const shared = new Map<ReasonCode, Map<string, Reason>>();
let sharedCount = 0;

/**
 * The one (frozen) Reason `{ code, message }` for every Service that has it. Most Services of a cluster share their
 * endpoint reasons word for word (`externalTrafficPolicy is Local and node n1 has no ready IPv4 endpoint (3 ready on
 * other nodes; ...)`): at 10,000 Services one object and one message each instead of one per VIP
 * (docs/benchmarks.md "Where the memory goes"). Only for reasons without a per-VIP part (an address, a prefix): the
 * table is bounded by `MAX_SHARED_REASONS` and starts again empty when full (reasons handed out before stay valid).
 */
export function sharedReason(code: ReasonCode, message: string): Reason {
  let byMessage = shared.get(code);
  if (byMessage === undefined) shared.set(code, (byMessage = new Map()));
  const known = byMessage.get(message);
  if (known !== undefined) return known;
  if (sharedCount >= MAX_SHARED_REASONS) {
    shared.clear();
    sharedCount = 0;
    shared.set(code, (byMessage = new Map()));
  }
  const reason: Reason = Object.freeze({ code, message });
  byMessage.set(message, reason);
  sharedCount++;
  return reason;
}

const sharedLists = new SharedTable<Reason[]>(MAX_SHARED_REASONS);

/**
 * The reason chain `reasons` as the VIP keeps it: when every reason in it is a shared one (`sharedReason`), the one
 * frozen list of them for every VIP blocked for the same reasons (at 10,000 Services most VIPs of a node are blocked
 * by the same endpoint or advertisement reason: docs/benchmarks.md "Where the memory goes"); otherwise a copy of its
 * exact length (a list grown by `push` keeps room for 17). An empty chain is the one frozen empty list. Bounded
 * with the shared reasons' table.
 */
export function sharedReasons(reasons: readonly Reason[]): Reason[] {
  const copy = reasons.slice();
  if (!copy.every((r) => Object.isFrozen(r) && shared.get(r.code)?.get(r.message) === r)) return copy;
  const text = copy.map((r) => `${r.code}\u0000${r.message}`).join('\u0001');
  const known = sharedLists.get(text);
  if (known !== undefined) return known;
  Object.freeze(copy);
  return sharedLists.hold(text, copy);
}
