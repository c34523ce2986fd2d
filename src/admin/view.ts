/**
 * The read/act surface the admin API, the metrics and the CLI need from the running daemon.
 *
 * `DaemonView` is deliberately small and made of plain JSON-able data so the HTTP layer is tested
 * with fastify `inject` and a fake view, and so the same shapes are what `herald ... --json` prints.
 * Durations are seconds, timestamps ISO 8601 strings (UTC).
 */

/** Why a session last went down, or the NOTIFICATION last exchanged. */
export interface PeerErrorView {
  /** StateReason kind: notificationSent, notificationReceived, holdTimerExpired, transportError, ...; unsentRoutes while routes cannot be sent. */
  kind: string;
  /** NOTIFICATION error code / subcode (RFC 4271 §4.5), when one was sent or received. */
  code?: number;
  subcode?: number;
  /** Name of code/subcode, e.g. "Cease / Administrative Shutdown". */
  description?: string;
  /** Shutdown communication (RFC 9003) or transport error text. */
  message?: string;
  /** When it happened. */
  at?: string;
}

/** One BGP neighbour as the operator sees it. */
export interface PeerView {
  name: string;
  address: string;
  port: number;
  localAs: number;
  peerAs: number;
  /** RFC 4271 §8 state name: Idle, Connect, Active, OpenSent, OpenConfirm, Established. */
  state: string;
  /** Seconds since the session reached Established (absent when not Established). */
  uptimeSec?: number;
  /** Since when the session is in its current state. */
  since?: string;
  /** Negotiated parameters (absent before OPEN exchange). */
  negotiated?: {
    holdTimeSec: number;
    keepaliveTimeSec: number;
    /** Families both sides carry, e.g. ["ipv4-unicast"]. */
    families: string[];
    fourOctetAs: boolean;
    extendedMessage: boolean;
    routeRefresh: boolean;
    gracefulRestart: boolean;
    peerBgpIdentifier?: string;
  };
  lastError?: PeerErrorView;
  /** Messages by type (open, update, notification, keepalive, routeRefresh). */
  messages: { sent: Record<string, number>; received: Record<string, number> };
  /** Prefixes in our Adj-RIB-Out toward the peer (sent) and NLRI the peer announced (received). */
  prefixes: { sent: number; received: number };
  /** Times the session left Established. */
  flaps: number;
  /** The peer's BFD session (RFC 5880), when BFD is on for it. */
  bfd?: PeerBfdView;
  /** Desired routes that cannot be encoded toward this peer (e.g. an IPv6 next hop with a zone id), by reason; the others are sent. */
  unsentRoutes?: { reason: string; prefixes: number; example: string }[];
}

/** A peer's BFD session. Intervals in milliseconds. */
export interface PeerBfdView {
  /** RFC 5880 state: AdminDown, Down, Init or Up; remoteState as the router last reported it. */
  state: string;
  remoteState: string;
  /** Why our state last changed (RFC 5880 §4.1 Diag), e.g. "Control Detection Time Expired". */
  diagnostic: string;
  multihop: boolean;
  localDiscriminator: number;
  remoteDiscriminator: number;
  /** Negotiated interval of our packets. */
  transmitIntervalMs: number;
  /** Silence after which the session is declared down. */
  detectionTimeMs: number;
  /** kernel (TTL checked), none (multihop without minimumTtl) or unavailable (see ttlCheckReason). */
  ttlCheck: string;
  ttlCheckReason?: string;
  /** Why the session cannot run (its sockets), when it cannot. */
  error?: string;
  stateChanges: number;
  upSince?: string;
  /** The last time it left Up; a failure (not AdminDown) resets BGP with Cease / BFD Down. */
  lastDown?: { at: string; diagnostic: string; remoteState: string; detectionTimeMs: number };
}

/** One route of a peer's Adj-RIB-Out, with the attributes as sent. */
export interface RouteView {
  peer: string;
  prefix: string;
  family: string;
  nextHop?: string;
  origin?: string;
  asPath?: number[];
  localPref?: number;
  med?: number;
  /** "ASN:VALUE" strings. */
  communities?: string[];
  /** "G:L1:L2" strings. */
  largeCommunities?: string[];
  /** Extended communities in the config's text: "lb:65001:375000000" (link bandwidth, bytes/s), "rt:65001:100", "0x…". */
  extendedCommunities?: string[];
}

/** One link of a reason chain. */
export interface ReasonView {
  code: string;
  message: string;
  /** For Advertised: the advertisement announcing it. */
  advertisement?: string;
}

/** What one advertisement sends for a VIP from this node when traffic steering applies (docs/traffic-steering.md). */
export interface VipAttributesView {
  advertisement: string;
  prefix: string;
  /** False when the maxNodesPerVip choice picked other nodes. */
  announced: boolean;
  med?: number;
  /** Extra copies of the local AS toward eBGP peers. */
  asPathPrepend?: number;
  /** Link bandwidth, bytes per second (weighting: endpoints). */
  linkBandwidth?: number;
  /** Usable endpoints of the VIP's family, on this node and in the cluster. */
  endpoints?: { local: number; total: number };
  /** locality: 'preferred' (a local endpoint here) or 'fallback'. */
  locality?: 'preferred' | 'fallback';
  /** maxNodesPerVip: the bound, the eligible nodes counted, the chosen ones by rank. */
  choice?: { maxNodes: number; eligible: number; nodes: string[] };
  communities?: string[];
  largeCommunities?: string[];
  /**
   * ISO 8601: these attributes differ from what the peers have, and go out then (the rate limit,
   * `attributeChangeInterval`). Absent: the peers have these.
   */
  heldUntil?: string;
  /** What the Services behind the prefix asked for that is not sent, and why (docs/decisions.md "Path attributes from Services"). */
  withheld?: string[];
}

/** One VIP of a Service on this node. */
export interface VipView {
  address: string;
  kind: string;
  announced: boolean;
  reasons: ReasonView[];
  /** Per advertisement, when weighting, locality, maxNodesPerVip or path-attribute annotations apply. */
  attributes?: VipAttributesView[];
}

/** A Service and its VIP decisions on this node. */
export interface ServiceView {
  /** "namespace/name" */
  service: string;
  vips: VipView[];
  reasons: ReasonView[];
}

/** One health check and its state (docs/health-checks.md). */
export interface HealthCheckView {
  key: string;
  /** What it gates: "route:<prefix>", "svc:<ns/name> <address>", or "" for a node-level check. */
  gate: string;
  scope: 'gate' | 'node';
  kind: string;
  /** host:port[/path] probed. */
  target: string;
  /** unknown (not yet passed `rise` times), up, down; invalid for a check that could not be built. */
  state: string;
  since?: string;
  intervalSec?: number;
  rise?: number;
  fall?: number;
  consecutiveOk?: number;
  consecutiveFail?: number;
  /** Last probe latency, ms. */
  latencyMs?: number;
  lastFailure?: { code: string; message: string };
}

/** Daemon summary for `herald status`. */
export interface StatusView {
  version: string;
  node: string;
  routerId: string;
  localAs: number;
  startedAt: string;
  uptimeSec: number;
  ready: boolean;
  /** Why not ready (empty when ready). */
  notReady: string[];
  /** The speaker's RFC 8326 drain is in effect (65535:0 attached, or every route withdrawn). */
  drained: boolean;
  /** What holds the node drained, e.g. `annotation herald.io/drain="maintenance" on Node n1` (empty when not). */
  drain: string[];
  peers: { configured: number; established: number };
  routes: { desired: number };
  /** Last reload: when, and its outcome. */
  lastReload?: { at: string; ok: boolean; errors?: string[] };
  /** Kubernetes API calls refused with 403 (RBAC): "call: apiserver message" (src/k8s/forbidden.ts). */
  forbidden?: string[];
  /** Objects the controller cannot use, treated as absent (src/controller/quarantine.ts; docs/operations.md). */
  quarantined?: QuarantineView[];
}

/** One quarantined Kubernetes object. */
export interface QuarantineView {
  kind: string;
  /** "namespace/name" (Node, ServiceCIDR: name). */
  name: string;
  reason: string;
  /** Since when (ISO 8601). */
  since: string;
}

/** Thrown by DaemonView actions for an unknown name (→ HTTP 404). */
export class NotFoundError extends Error {
  override readonly name = 'NotFoundError';
}

/** What the daemon exposes to the admin API. Implementations must not throw from read methods. */
export interface DaemonView {
  status(): StatusView;
  /** Liveness: false only when the process is wedged (e.g. shutting down). */
  live(): boolean;
  peers(): PeerView[];
  /** Routes as exported to the peers (a speaker in a worker thread answers asynchronously). */
  routes(filter: { peer?: string; prefix?: string }): Promise<RouteView[]>;
  services(): ServiceView[];
  /** Health checks and their state. */
  health(): HealthCheckView[];
  /** @throws NotFoundError for an unknown peer */
  resetPeer(name: string, soft: boolean): Promise<void>;
  /**
   * RFC 8326 drain, recorded where the node keeps it (Kubernetes: the Node annotation herald.io/drain; standalone:
   * stateDir), so a restart stays drained until undrain. Resolves with what was done.
   * @throws Error naming the fix when it cannot be recorded (RBAC, stateDir)
   */
  drain(opts?: { reason?: string }): Promise<string>;
  /** Ends the operator's drain; resolves with what was done (a departing node stays drained). */
  undrain(): Promise<string>;
  /** Prometheus text exposition. */
  metrics(): Promise<{ contentType: string; body: string }>;
}
