/**
 * Shared data shapes of the health subsystem: probe results, reasons, check specifications, gate verdicts, and
 * `HealthLike`, what a health checker offers the daemon.
 *
 * Durations carry their unit in the name (`intervalSec`, `latencyMs`). Timestamps (`since`,
 * `until`, `atMs`) are epoch milliseconds on the manager's {@link Clock}.
 */
import type { EventEmitter } from 'node:events';


/**
 * Health reason codes: probe outcomes (one per probe) and gate outcomes (why a VIP may not be announced). The
 * controller's reason chains have their own codes (src/controller/reasons.ts `ReasonCode`).
 *
 * Probe failures are kept distinct on purpose: a refused connection (kube-proxy not serving the
 * port) is not the same as a 503 (kube-proxy says "no local endpoints").
 */
export const HealthCode = {
  /** Probe: TCP connect refused (RST to SYN). */
  ConnectionRefused: 'ConnectionRefused',
  /** Probe: the peer closed or reset the connection before a full answer. */
  ConnectionClosed: 'ConnectionClosed',
  /** Probe: other socket errors (EHOSTUNREACH, ENETUNREACH, EADDRNOTAVAIL, ...). */
  NetworkError: 'NetworkError',
  /** Probe: TLS handshake failed (https checks). */
  TLSError: 'TLSError',
  /** Probe: no complete answer within the check's timeout. */
  Timeout: 'Timeout',
  /** Probe: an answer that cannot be understood (kube-proxy 200 with empty/non-JSON body, odd status). */
  BadResponse: 'BadResponse',
  /** Probe: HTTP status not in the check's expected set. */
  UnexpectedStatus: 'UnexpectedStatus',
  /** Probe: kube-proxy service health answered 503 with `localEndpoints: 0`. */
  NoLocalEndpoints: 'NoLocalEndpoints',
  /** Probe: kube-proxy answered 503 because its proxier is unhealthy (`serviceProxyHealthy: false`). */
  ProxyUnhealthy: 'ProxyUnhealthy',
  /** Probe: kube-proxy `/healthz` answered 503 with `nodeEligible: false` (node being deleted/scaled down). */
  NodeNotEligible: 'NodeNotEligible',
  /** Gate: a check has not yet passed `rise` times, and the VIP is not announced yet. */
  Pending: 'Pending',
  /** Gate: a check for this key has invalid settings; blocks new announcements (keeps announced ones) until fixed. */
  InvalidCheck: 'InvalidCheck',
  /**
   * Gate: a check applies but this node has no address of the family it must probe (kube-proxy's health servers
   * are probed on the node's InternalIP of the VIP's family); blocks like InvalidCheck.
   */
  NodeAddressUnknown: 'NodeAddressUnknown',
  /** Gate: a node-level check is down (or pending), so nothing is announced from this node. */
  NodeUnhealthy: 'NodeUnhealthy',
  /** Gate: the VIP was withdrawn recently; it may not be re-announced before `until`. */
  HoldDown: 'HoldDown',
  /** Gate: the VIP flapped too often; it is suppressed until its penalty decays (`until`). */
  Suppressed: 'Suppressed',
  /**
   * Gate, passing: hold-down or suppression would block the key, but no other node can serve it, so it is announced
   * anyway (flap control prefers stable nodes; it never keeps a Service dark; docs/decisions.md "Flap control").
   */
  FlapControlWaived: 'FlapControlWaived',
} as const;
export type HealthCode = (typeof HealthCode)[keyof typeof HealthCode];

/** Codes a single probe can return when it fails. */
export type ProbeFailureCode = Exclude<HealthCode, 'Pending' | 'InvalidCheck' | 'NodeAddressUnknown' | 'NodeUnhealthy' | 'HoldDown' | 'Suppressed' | 'FlapControlWaived'>;

/**
 * A reason, as data, for the admin API, logs, metrics and Kubernetes Events.
 * `since`/`until` are epoch milliseconds; `check` is the key of the check concerned, if any.
 */
export interface HealthReason {
  code: HealthCode;
  message: string;
  since?: number;
  until?: number;
  check?: string;
}

/** Outcome of one probe. `latencyMs` is wall time from start of the network work to the verdict. */
export interface ProbeResult {
  ok: boolean;
  /** Present when `ok` is false. */
  code?: ProbeFailureCode;
  /** Human-readable detail ("connection refused", "HTTP 503, localEndpoints 0", ...). */
  message: string;
  latencyMs: number;
  /** HTTP status, when an HTTP answer arrived. */
  status?: number;
  /** kube-proxy `localEndpoints` from the JSON body, when present. */
  localEndpoints?: number;
}

/** Check kinds. */
export const CheckKind = {
  /** kube-proxy per-Service health server on `healthCheckNodePort` (GET `/health`; 200 = local endpoints). */
  KubeProxyService: 'kube-proxy-service',
  /** kube-proxy node health, GET `/healthz` on port 10256 by default. */
  KubeProxyNode: 'kube-proxy-node',
  /** TCP connect. */
  Tcp: 'tcp',
  /** HTTP GET with expected status codes. */
  Http: 'http',
  /** HTTPS GET with expected status codes (certificate not verified, like kubelet probes). */
  Https: 'https',
} as const;
export type CheckKind = (typeof CheckKind)[keyof typeof CheckKind];

/** Timing of a check. Seconds, fractions allowed; counts are consecutive probe results. */
export interface CheckTiming {
  /** Time between probe starts, seconds (> 0). */
  intervalSec: number;
  /** Deadline of one probe (connect + answer), seconds (> 0). */
  timeoutSec: number;
  /** Consecutive successes to become `up`. */
  rise: number;
  /** Consecutive failures to become `down`. */
  fall: number;
}

/**
 * One check the manager should run.
 *
 * - `key` identifies the check (unique within one `setChecks` call).
 * - `gate` is the subject it gates (e.g. a VIP key); several checks may share one gate, and the gate
 *   passes only when all of them pass. Ignored when `scope` is `'node'`.
 * - `scope: 'node'` makes the check gate every key (kube-proxy `/healthz`).
 * - `hosts`: IP literals to probe; the probe passes if **any** host passes (local endpoints).
 */
export interface CheckSpec extends CheckTiming {
  key: string;
  gate: string;
  scope?: 'gate' | 'node';
  kind: CheckKind;
  hosts: string[];
  port: number;
  /** HTTP path for http/https/kube-proxy kinds (default `/health` for kube-proxy-service, `/healthz` for node). */
  path?: string;
  /** Accepted HTTP statuses for http/https (default 200-399). */
  expectedStatus?: number[];
  /**
   * Set when the check could not be built from its source (bad annotation, bad config, no node address to probe):
   * the manager runs nothing and the gate reports `errorCode` (default `InvalidCheck`) with this message (no new
   * announcement; an announced key is kept).
   */
  error?: string;
  /** The reason code of `error`. */
  errorCode?: InvalidCheckCode;
}

/** Health reason codes of a check that applies but could not be built. */
export type InvalidCheckCode = typeof HealthCode.InvalidCheck | typeof HealthCode.NodeAddressUnknown;

/** Health state of one check. */
export type HealthState = 'unknown' | 'up' | 'down';

/** Result of `gate(key)`: may the key be announced, and if not (or if only kept), why. */
export interface GateResult {
  pass: boolean;
  reasons: HealthReason[];
}

/** What a `change` event says besides the keys: a node-scope check changed (re-evaluate every key). */
export interface ChangeInfo {
  nodeLevel: boolean;
}

/** Events of a health checker: `change` (gate keys whose verdict may have changed, and whether node checks did). */
export type HealthEvents = { change: [keys: string[], info: ChangeInfo] };

/** One check as the admin view shows it (a subset of the manager's `CheckStatus`). */
export interface CheckSummary {
  key: string;
  gate: string;
  scope: 'gate' | 'node';
  kind: string;
  target: string;
  state: HealthState;
  since: number;
  intervalSec: number;
  rise: number;
  fall: number;
  consecutiveOk: number;
  consecutiveFail: number;
  latencyMs: number | null;
  lastFailure: { code?: string; message: string } | null;
}

/**
 * What the daemon's health gate needs from a health checker (the HealthManager implements it; tests fake it).
 * Keys are the gate texts of src/daemon/gate-key.ts; the checker treats them as opaque.
 */
export interface HealthLike extends EventEmitter<HealthEvents> {
  /** Replace the whole set of checks (level-triggered); bad specs are returned, never thrown. */
  setChecks(specs: readonly CheckSpec[]): { errors: Array<{ key: string; gate: string; message: string }> };
  /**
   * May `key` be announced from this node? `othersCanServe: false`: no other node can serve it, so hold-down and
   * suppression do not block it (a passing result carries a `FlapControlWaived` reason instead).
   */
  gate(key: string, opts?: { othersCanServe?: boolean }): GateResult;
  /** Whether `key` is announced from this node now (announced → withdrawn feeds hold-down and damping). */
  setAnnounced(key: string, announced: boolean): void;
  /** Checks and invalid specs, for the admin API. */
  status(): { checks: readonly CheckSummary[]; invalid: ReadonlyArray<{ key: string; gate: string; message: string; code?: InvalidCheckCode; scope?: 'gate' | 'node' }> };
  /** Stop every probe and timer. */
  close(): Promise<void>;
}
