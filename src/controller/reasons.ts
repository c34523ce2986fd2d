/**
 * Reason chains: why a VIP is or is not announced from this node, as data (a code for machines, a sentence for
 * operators). They are what `herald services` and `/api/v1/services` show (docs/kubernetes.md "Reasons").
 */

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
  /** maxNodesPerVip: the rendezvous choice picked other nodes for this VIP. */
  NotChosen: 'NotChosen',
  /** A bad path-attribute annotation: blocking when no good value is known for it, else a note (last good kept). */
  InvalidAnnotation: 'InvalidAnnotation',
  // service-level notes
  Headless: 'Headless',
  ExternalName: 'ExternalName',
  // positive
  ReadyEndpoint: 'ReadyEndpoint',
  LocalReadyEndpoint: 'LocalReadyEndpoint',
  Advertised: 'Advertised',
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
}
