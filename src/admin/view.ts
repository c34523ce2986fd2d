/**
 * The read/act surface the admin API, the metrics and the CLI need from the running daemon.
 *
 * `DaemonView` is deliberately small and made of plain JSON-able data so the HTTP layer is tested
 * with fastify `inject` and a fake view, and so the same shapes are what `herald ... --json` prints.
 * Durations are seconds, timestamps ISO 8601 strings (UTC).
 */

export type { PeerBfdView, PeerErrorView, PeerView } from './peer-view.ts';
import type { FromSchema } from './schema-type.ts';
import type { vipAttributesSchema } from './schemas.ts';
import type { PeerView } from './peer-view.ts';

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

/**
 * What one advertisement sends for a VIP from this node when traffic steering applies (docs/traffic-steering.md): the
 * controller's `VipRouteAttributes` (src/controller/steering.ts) with what route assembly adds (`heldUntil`, the rate
 * limit of `attributeChangeInterval`; `withheld`); its type is its schema's (schemas.ts `vipAttributesSchema`).
 */
export type VipAttributesView = FromSchema<typeof vipAttributesSchema>;

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
  /**
   * Input refused whole, whose last good version (or nothing) stays in force: manifest files that cannot be read or
   * parsed, and configuration objects (BGPPeer, ...) every node ignores (docs/operations.md "Refused input").
   */
  refused?: RefusedView[];
}

/** One refused input. */
export interface RefusedView {
  /** `file` (a manifest file, the manifests directory) or the kind of a configuration object (`BGPPeer`, ...). */
  kind: string;
  /** The file's path, or the object's name. */
  name: string;
  /** 1-based line of the problem in the file, when known. */
  line?: number;
  /** What is wrong, with the fix (every problem of an object, "; " between them). */
  reason: string;
}

/** "file /etc/herald/manifests/web.yaml:12: reason", "BGPPeer tor-dup: reason" (readiness detail, the CLI). */
export function refusedText(r: RefusedView): string {
  return `${r.kind} ${r.name}${r.line !== undefined ? `:${r.line}` : ''}: ${r.reason}`;
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
