/**
 * Reason chains: why a VIP is or is not announced from this node, as data (a code for machines, a sentence for
 * operators). They are what `herald services` and `/api/v1/services` show (docs/kubernetes.md "Reasons").
 */

/** Machine-readable reason codes. Negative codes block announcing; positive ones explain it. */
export const ReasonCode = {
  NodeNotFound: 'NodeNotFound',
  NodeExcluded: 'NodeExcluded',
  NodeToBeDeleted: 'NodeToBeDeleted',
  NodeOutOfService: 'NodeOutOfService',
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
  /** Announced although flap control would hold it back: no other node can serve it (its causes say which rule). */
  FlapControlWaived: 'FlapControlWaived',
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
