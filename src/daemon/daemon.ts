/**
 * The running daemon: wires config → Speaker peers, static routes + Service VIPs (source →
 * Controller (computeDesiredRoutes, per-Service incremental) → health gate) → the speaker (`updateRoutes` with what
 * changed; `setRoutes` with the whole desired set on a full recompute; per-peer filtering via `route.peers`), and
 * implements the admin API's {@link DaemonView}.
 *
 * Level-triggered, applied incrementally: any change (source objects, health gates, reload, node labels) leads to
 * one reconcile that brings the desired set up to date. It re-reads only what the controller reports as changed
 * (`DesiredChanges`: Services and prefixes) plus the static routes, so one EndpointSlice change costs O(Services it
 * touches); start, reload, a node-level health change, a controller full result (resync) and a failed reconcile
 * recompute everything. `markInitialSyncDone()` is called after the
 * first reconcile that saw a synced source (at once with static routes only), so End-of-RIB
 * follows the first complete table (decisions.md, RFC 4724 §4.1).
 *
 * Reload (`reload(newConfig)`): the new config was validated by the caller; peers are applied as a
 * diff (diff.ts): unchanged keep their sessions, changed are updated (the Speaker restarts a session
 * only for session-relevant fields), removed get Cease / Peer De-configured, new ones start.
 * Restart-only settings keep their running values and are reported.
 */
import type { EventEmitter } from 'node:events';
import { isIP } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import type { PeerConfig as SpeakerPeerConfig, PeerStatus, SpeakerOptions } from '../../bgp/speaker.ts';
import type { Route } from '../../bgp/rib/route.ts';
import type { StateReason } from '../../bgp/fsm/state.ts';
import { describeNotification } from '../../bgp/errors.ts';
import type { BfdStateEvent } from '../../bgp/index.ts';
import type { Config } from '../config/schema.ts';
import type { RuntimeIdentity } from '../config/load.ts';
import type { DesiredResult, DesiredRoute, DesiredRoutesContext, ServiceDecision } from '../controller/desired-routes.ts';
import type { DesiredChanges } from '../controller/controller.ts';
import { Controller } from '../controller/controller.ts';
import { matchesSelector } from '../k8s/selector.ts';
import type { Source } from '../sources/source.ts';
import type { CheckSpec } from '../health/types.ts';
import { invalidCheck, kubeProxyNodeCheck, kubeProxyServiceCheck, nodeAddressFor, serviceAnnotationCheck, staticRouteCheck, timingFromConfig } from '../health/specs.ts';
import { formatAnnotationErrors, parseHealthAnnotations } from '../health/annotations.ts';
import type { DaemonView, HealthCheckView, PeerView, RouteView, ServiceView, StatusView } from '../admin/view.ts';
import { NotFoundError } from '../admin/view.ts';
import type { HeraldMetrics } from '../metrics/metrics.ts';
import { diffConfig, diffPeers, effectiveReloadConfig } from './diff.ts';
import type { ConfigDiff } from './diff.ts';
import type { PeerHistory } from './mapping.ts';
import { desiredRoute, errorView, MappingError, peerView, prefixMatches, resolvePassword, routeView, staticRoute, staticRouteGate, toSpeakerPeer } from './mapping.ts';

/** What the daemon needs from bgp/speaker.ts's Speaker (a fake implements it in tests). */
export interface SpeakerLike extends EventEmitter {
  readonly localAs: number;
  ready(): Promise<void>;
  /** Bind the listener again after ready() rejected; rejects with the OS error again (bgp/speaker.ts). */
  retryListen?(): Promise<void>;
  addPeer(cfg: SpeakerPeerConfig): void;
  updatePeer(cfg: SpeakerPeerConfig): void;
  removePeer(name: string): Promise<void>;
  setRoutes(routes: readonly Route[] | ReadonlyMap<string, Route>): void;
  /** Incremental setRoutes (bgp/speaker.ts); without it every reconcile hands the whole set to setRoutes. */
  updateRoutes?(changed: Iterable<Route>, removed: Iterable<string>): void;
  markInitialSyncDone(): void;
  drain(opts: { waitTimeSec: number }): Promise<void>;
  undrain(): void;
  readonly draining: boolean;
  shutdown(opts: { graceful: boolean; message?: string; waitTimeSec?: number }): Promise<void>;
  resetPeer(name: string, opts: { soft: boolean }): void;
  peers(): PeerStatus[];
  adjRibOut(peerName: string): (Route & { nextHop: string; asPath: readonly number[] })[];
}

/** What the daemon needs from the HealthManager (src/health). */
export interface HealthLike extends EventEmitter {
  status?(): {
    checks: Array<{ key: string; gate: string; scope: 'gate' | 'node'; kind: string; target: string; state: string; since: number; intervalSec: number; rise: number; fall: number; consecutiveOk: number; consecutiveFail: number; latencyMs: number | null; lastFailure: { code?: string; message: string } | null }>;
    invalid: Array<{ key: string; gate: string; message: string }>;
  };
  setChecks(specs: readonly CheckSpec[]): { errors: Array<{ key: string; gate: string; message: string }> };
  gate(key: string): { pass: boolean; reasons: Array<{ code: string; message: string; since?: number | null; until?: number | null }> };
  setAnnounced(key: string, announced: boolean): void;
  close(): Promise<void>;
}

/** Dependencies of {@link Daemon}; everything external is injected. */
export interface DaemonDeps {
  createSpeaker: (opts: SpeakerOptions) => SpeakerLike;
  health: HealthLike;
  /** The object source, when the config has one (created by the caller from `config.source`). */
  source?: Source;
  logger: Logger;
  metrics: HeraldMetrics;
  version: string;
  /** Set the R bit (we restarted within the Graceful Restart window). */
  restarting: boolean;
  env?: NodeJS.ProcessEnv;
  nowMs?: () => number;
  /** Backoff of BGP listener bind retries, ms: first delay, doubled per attempt up to maxMs (default 1000 / 30000). */
  listenRetry?: { firstMs: number; maxMs: number };
  /** Called with every full desired result from the controller (e.g. to post Kubernetes Events on changes). */
  onResult?: (result: DesiredResult, changes?: DesiredChanges) => void;
}

/** Description of a reason for logs: "NOTIFICATION sent: Cease / Administrative Shutdown". */
export function describeStateReason(r: StateReason | undefined): string {
  if (!r) return 'unknown';
  switch (r.kind) {
    case 'notificationSent':
    case 'notificationReceived':
      return `NOTIFICATION ${r.kind === 'notificationSent' ? 'sent' : 'received'}: ${describeNotification(r.code, r.subcode)}${r.text ? ` "${r.text}"` : ''}`;
    case 'holdTimerExpired':
      return 'hold timer expired';
    case 'transportError':
      return `transport error: ${r.message}`;
    case 'connectionClosed':
      return 'connection closed by peer';
    case 'admin':
    case 'progress':
      return r.message;
    default:
      return r.kind;
  }
}

/**
 * Whether kube-proxy's health endpoints are probed: `kubeProxy.enabled` when set, else only with the Kubernetes
 * source (a manifests-driven plain Linux host has no kube-proxy unless the operator says so).
 */
export function kubeProxyEnabled(cfg: Config): boolean {
  if (!cfg.source) return false;
  return cfg.kubeProxy.enabled ?? cfg.source.kubernetes !== undefined;
}

/** See the module comment. */
export class Daemon implements DaemonView {
  private config: Config;
  readonly identity: RuntimeIdentity;
  private readonly deps: DaemonDeps;
  private readonly log: Logger;
  private readonly speaker: SpeakerLike;
  private readonly startedAtMs: number;
  private readonly now: () => number;
  /** Speaker peer configs currently applied, by name. */
  private applied = new Map<string, SpeakerPeerConfig>();
  private readonly history = new Map<string, PeerHistory>();
  private lastResult: DesiredResult | undefined;
  private desiredCount = 0;
  /** Gates reported announced to the HealthManager (setAnnounced true): Service VIP gates and static route gates. */
  private announcedGates = new Set<string>();
  /** Gates that have checks registered with the HealthManager (last setChecks). */
  private registeredGates = new Set<string>();
  // ---- incremental reconcile state (see reconcile()) ----
  /** Controller changes not yet applied to the state below. */
  private pendingAll = true;
  private readonly pendingServices = new Set<string>();
  private readonly pendingPrefixes = new Set<string>();
  /** Next reconcile recomputes everything (start, reload, node-level health change, a failed reconcile). */
  private needFull = true;
  /** Service VIP routes by prefix: the controller's route and the Speaker Route made from it (kept while it is the same object). */
  private svcRoutes = new Map<string, { d: DesiredRoute; route: Route }>();
  /** Static routes announced at the last reconcile, by prefix. */
  private staticNow = new Map<string, Route>();
  /** Static route gates announced at the last reconcile. */
  private staticGates = new Set<string>();
  /** Speaker Route of each static route config object (same config object → same Route object). */
  private staticCache = new WeakMap<object, Route>();
  /** The desired set last handed to the speaker, by prefix (static routes win over Service VIPs). */
  private desired = new Map<string, Route>();
  /** Announced VIP gates per Service ("ns/name"). */
  private svcGates = new Map<string, string[]>();
  /** Health check specs per Service, with their JSON (to tell a change). */
  private svcSpecs = new Map<string, { specs: CheckSpec[]; json: string }>();
  /** Static route and node-level check specs (from the config). */
  private baseSpecs: CheckSpec[] = [];
  /** Test hook: counts of the work done by reconciles (Service decisions applied, Routes made, checks recomputed). */
  readonly reconcileStats = { full: 0, incremental: 0, servicesApplied: 0, routesMade: 0, specsComputed: 0, setChecks: 0 };
  private initialSyncMarked = false;
  /** Latest time (epoch ms) End-of-RIB may wait for pending health checks; set on the first eligible reconcile. */
  private initialSyncDeadlineMs: number | undefined;
  private reconcileQueued = false;
  private stopping = false;
  private drainedByApi = false;
  private lastReload: StatusView['lastReload'];
  /** Message of the last failed reconcile. */
  private reconcileError: string | undefined;
  private speakerReady = false;
  private speakerError: string | undefined;
  /** BGP listener bind attempts so far, and the timer of the next retry. */
  private listenAttempts = 0;
  private listenTimer: NodeJS.Timeout | undefined;
  private readonly controller: Controller | undefined;

  /**
   * Build the speaker and peers. Does not reconcile yet: call {@link start}.
   * @throws MappingError when a peer password cannot be resolved
   */
  constructor(config: Config, identity: RuntimeIdentity, deps: DaemonDeps) {
    this.config = config;
    this.identity = identity;
    this.deps = deps;
    this.log = deps.logger;
    this.now = deps.nowMs ?? Date.now;
    this.startedAtMs = this.now();
    const peers = this.resolvePeers(config); // throws before anything starts
    this.speaker = deps.createSpeaker({
      localAs: config.bgp.localAs,
      bgpIdentifier: identity.routerId,
      ...(config.bgp.listen ? { listen: { address: config.bgp.listen.address, port: config.bgp.listen.port } } : {}),
      gracefulRestart: { restarting: deps.restarting },
    });
    this.speaker.on('peerState', (e: { peer: string; from: string; to: string; reason?: StateReason }) => this.onPeerState(e));
    this.speaker.on('updateSent', (e: { peer: string; packMs?: number }) => {
      if (typeof e.packMs === 'number') deps.metrics.updateSendDuration.observe({ peer: e.peer }, e.packMs / 1000);
    });
    this.speaker.on('error', (err: unknown) => {
      // A listener that cannot bind is reported (once per attempt, without a stack) by watchListener.
      if ((err as NodeJS.ErrnoException | undefined)?.syscall === 'listen') return;
      this.log.error({ err }, 'speaker error');
    });
    this.speaker.on('drained', () => this.log.info('drain finished: every route withdrawn'));
    this.speaker.on('bfdState', (e: BfdStateEvent) => this.onBfdState(e));
    deps.metrics.setPeersProvider(() => this.peers());
    deps.health.on('change', (keys: string[], info?: { nodeLevel?: boolean }) => {
      // Service VIP gates are "svc:<ns/name> <address>": recompute those Services (all on a node-level change).
      if (this.controller) {
        if (info?.nodeLevel) {
          this.needFull = true;
          this.controller.invalidate();
        }
        else for (const k of new Set((keys ?? []).filter((k) => k.startsWith('svc:')).map((k) => k.slice(4).split(' ')[0] as string))) this.controller.invalidate(k);
      }
      this.scheduleReconcile('health');
    });
    if (deps.source) {
      this.controller = new Controller({
        source: deps.source,
        context: this.controllerContext(config),
        sink: {
          onDesired: (result, changes?: DesiredChanges) => {
            this.lastResult = result;
            try {
              deps.onResult?.(result, changes);
            } catch (err) {
              this.log.warn({ err: (err as Error).message }, 'result observer failed');
            }
            if (!changes || changes.all) this.pendingAll = true;
            else {
              for (const k of changes.services) this.pendingServices.add(k);
              for (const p of changes.prefixes) this.pendingPrefixes.add(p);
            }
            this.reconcile('controller');
          },
        },
      });
      this.controller.on('error', (key: string, err: unknown) => this.log.warn({ key, err }, 'controller error (retried)'));
      // Node labels may select or deselect peers (nodeSelector).
      deps.source.on('change', () => {
        if (this.config.peers.some((p) => p.nodeSelector)) this.scheduleReconcile('source');
      });
      deps.source.on('synced', () => this.log.info('source synced'));
      deps.source.on('error', (...args: unknown[]) => this.log.warn({ err: args[args.length - 1] }, 'source error'));
      deps.source.on('restart', (kind: string) => deps.metrics.kubernetesWatchRestarts.inc({ resource: String(kind) }));
    }
    this.applyPeers(peers);
  }

  /**
   * Start the source and the first reconcile; resolves once the speaker's listener is bound, or once its first
   * bind failed: binding is then retried with capped exponential backoff (`deps.listenRetry`), each failure logged
   * once (message and code) and shown in status().notReady until it binds. Never rejects for a bind failure.
   */
  async start(): Promise<void> {
    const first = this.watchListener(this.speaker.ready());
    this.reconcile('start');
    if (this.controller) await this.controller.start();
    await first;
  }

  /** Track one bind attempt of the BGP listener; on failure schedule the next (when the speaker can retry). */
  private watchListener(attempt: Promise<void>): Promise<void> {
    this.listenAttempts++;
    const n = this.listenAttempts;
    return attempt.then(
      () => {
        this.speakerReady = true;
        if (this.speakerError !== undefined) this.log.info({ attempt: n }, 'BGP listener bound');
        this.speakerError = undefined;
      },
      (err: unknown) => {
        const e = err as NodeJS.ErrnoException;
        const canRetry = this.speaker.retryListen !== undefined && !this.stopping;
        const { firstMs, maxMs } = this.deps.listenRetry ?? { firstMs: 1000, maxMs: 30000 };
        const delayMs = Math.min(maxMs, firstMs * 2 ** Math.min(n - 1, 30));
        this.speakerError = `${e?.message ?? String(err)}${canRetry ? ` (attempt ${n}; retrying in ${delayMs / 1000} s)` : ''}`;
        this.log.error({ error: e?.message ?? String(err), code: e?.code, attempt: n, ...(canRetry ? { retryInSec: delayMs / 1000 } : {}) }, 'BGP listener cannot bind');
        if (!canRetry) return;
        this.listenTimer = setTimeout(() => {
          this.listenTimer = undefined;
          if (!this.stopping && this.speaker.retryListen) void this.watchListener(this.speaker.retryListen());
        }, delayMs);
      },
    );
  }

  /** The controller's context from a config (health gate included). */
  private controllerContext(cfg: Config): DesiredRoutesContext {
    return {
      nodeName: this.identity.nodeName,
      ...(cfg.loadBalancerClass !== undefined ? { loadBalancerClass: cfg.loadBalancerClass } : {}),
      ...(cfg.advertisements !== undefined ? { advertisements: cfg.advertisements } : {}),
      ...(cfg.serviceCIDRs !== undefined ? { serviceCIDRs: cfg.serviceCIDRs } : {}),
      countServingTerminating: cfg.countServingTerminating,
      healthGate: (service, address) => {
        const gate = `svc:${service} ${address}`;
        // A VIP that needs a check not registered yet must wait for it (never announced unchecked);
        // one already announced is kept (adding a check must not cause a flap).
        if (!this.registeredGates.has(gate) && !this.announcedGates.has(gate) && this.vipChecks(this.config, service, address).length > 0) {
          return { pass: false, reason: 'health check not started yet' };
        }
        const g = this.deps.health.gate(gate);
        if (g.pass) return { pass: true };
        // The health reasons stay data (code, absolute since/until) so the API shows e.g. Suppressed until T.
        const causes = g.reasons.map((r) => ({
          code: r.code,
          message: r.message,
          ...(typeof r.since === 'number' ? { since: new Date(r.since).toISOString() } : {}),
          ...(typeof r.until === 'number' ? { until: new Date(r.until).toISOString() } : {}),
        }));
        return { pass: false, reason: g.reasons.map((r) => r.message).join('; ') || 'health check failing', causes };
      },
    };
  }

  /** Resolves when the controller has nothing queued (tests). */
  async idle(): Promise<void> {
    await this.controller?.whenIdle();
    await new Promise((r) => setImmediate(r));
  }

  // ------------------------------------------------------------------------------------------
  // Peers
  // ------------------------------------------------------------------------------------------

  private nodeLabels(): Record<string, string> {
    const node = this.deps.source?.snapshot().node(this.identity.nodeName);
    return node?.metadata?.labels ?? {};
  }

  /** Speaker configs of the peers that apply to this node (nodeSelector), passwords resolved. */
  private resolvePeers(cfg: Config): SpeakerPeerConfig[] {
    const labels = this.deps?.source ? this.nodeLabels() : {};
    const issues: MappingError['issues'] = [];
    const out: SpeakerPeerConfig[] = [];
    cfg.peers.forEach((p, i) => {
      if (p.nodeSelector && !matchesSelector(p.nodeSelector, labels)) return;
      try {
        out.push(toSpeakerPeer(p, resolvePassword(p, i, this.deps?.env ?? process.env)));
      } catch (err) {
        if (err instanceof MappingError) issues.push(...err.issues);
        else throw err;
      }
    });
    if (issues.length > 0) throw new MappingError(issues);
    return out;
  }

  /** Apply a desired peer list as a diff against what runs. */
  private applyPeers(next: SpeakerPeerConfig[]): void {
    const d = diffPeers([...this.applied.values()], next, []);
    for (const p of d.removed) {
      this.log.info({ peer: p.name }, 'peer removed: Cease / Peer De-configured');
      this.applied.delete(p.name);
      this.history.delete(p.name);
      this.speaker.removePeer(p.name).catch((err: unknown) => this.log.warn({ err, peer: p.name }, 'removing peer failed'));
    }
    for (const c of d.changed) {
      this.log.info({ peer: c.name, fields: c.fields }, 'peer changed');
      this.applied.set(c.name, c.after);
      this.speaker.updatePeer(c.after);
    }
    for (const p of d.added) {
      this.log.info({ peer: p.name, address: p.address, port: p.port, peerAs: p.peerAs }, 'peer added');
      this.applied.set(p.name, p);
      this.history.set(p.name, { flaps: 0, since: new Date(this.now()).toISOString() });
      this.speaker.addPeer(p);
    }
  }

  private onPeerState(e: { peer: string; from: string; to: string; reason?: StateReason }): void {
    const known = this.applied.has(e.peer);
    const h = this.history.get(e.peer) ?? { flaps: 0 };
    const at = new Date(this.now()).toISOString();
    h.since = at;
    if (e.from === 'Established' && e.to !== 'Established') h.flaps += 1;
    const err = errorView(e.reason, at);
    if (err && e.to !== 'Established') h.lastError = err;
    if (known) this.history.set(e.peer, h); // a removed peer's last transitions are logged, not kept
    this.deps.metrics.observeStateChange(e.peer, e.from, e.to);
    if (e.reason?.kind === 'notificationSent' || e.reason?.kind === 'notificationReceived') {
      this.deps.metrics.observeNotification(e.peer, e.reason.kind === 'notificationSent' ? 'sent' : 'received', e.reason.code, e.reason.subcode);
    }
    const fields = { peer: e.peer, from: e.from, to: e.to, reason: describeStateReason(e.reason), ...(e.reason ? { reasonKind: e.reason.kind } : {}) };
    if (e.to === 'Established') this.log.info(fields, 'session established');
    else if (e.from === 'Established') this.log.warn(fields, 'session down');
    else this.log.info(fields, 'session state change');
  }

  private onBfdState(e: BfdStateEvent): void {
    this.deps.metrics.observeBfdStateChange(e.peer, e.from, e.to);
    const fields = { peer: e.peer, from: e.from, to: e.to, diagnostic: e.diagnostic, remoteState: e.remoteState, detectionTimeMs: e.detectionTimeMs };
    if (e.failure) this.log.warn(fields, 'BFD down: forwarding path to the peer failed; resetting the BGP session (Cease / BFD Down)');
    else if (e.to === 'Up') this.log.info(fields, 'BFD up');
    else this.log.info(fields, 'BFD state change');
  }

  // ------------------------------------------------------------------------------------------
  // Reconcile
  // ------------------------------------------------------------------------------------------

  /** Coalesce bursts of changes into one reconcile on the next turn of the event loop. */
  scheduleReconcile(why: string): void {
    if (this.reconcileQueued || this.stopping) return;
    this.reconcileQueued = true;
    setImmediate(() => {
      this.reconcileQueued = false;
      if (!this.stopping) this.reconcile(why);
    });
  }

  /**
   * Checks gating one Service VIP on this node: kube-proxy's per-Service health server
   * (externalTrafficPolicy Local with a healthCheckNodePort, Kubernetes source) and the
   * `herald.io/health-check-*` annotations (docs/health-checks.md). Invalid annotations give an
   * InvalidCheck spec (the VIP is not newly announced; an announced one is kept).
   */
  private vipChecks(cfg: Config, serviceKey: string, address: string): CheckSpec[] {
    const out: CheckSpec[] = [];
    const src = this.deps.source;
    if (!src) return out;
    const snap = src.snapshot();
    const svc = snap.service(serviceKey);
    if (!svc) return out;
    const gate = `svc:${serviceKey} ${address}`;
    const timing = timingFromConfig(cfg.healthChecks);
    const nodeIp = this.identity.nodeIp;
    const isClusterIP = (svc.spec?.clusterIPs ?? [svc.spec?.clusterIP]).includes(address);
    const port = svc.spec?.healthCheckNodePort;
    if (kubeProxyEnabled(cfg) && cfg.kubeProxy.checkServices && nodeIp !== undefined && !isClusterIP && svc.spec?.externalTrafficPolicy === 'Local' && port) {
      const host = nodeAddressFor(address, [nodeIp]);
      if (host !== null) out.push(kubeProxyServiceCheck({ gate, nodeIP: host, healthCheckNodePort: port, timing }));
    }
    const parsed = parseHealthAnnotations(svc.metadata?.annotations, timing);
    if (!parsed.ok) {
      out.push(invalidCheck(`annotation:${gate}`, gate, formatAnnotationErrors(parsed.errors)));
    } else if (parsed.check) {
      const family = isIP(address);
      const local: string[] = [];
      for (const sl of snap.endpointSlicesFor(serviceKey)) {
        for (const ep of sl.endpoints ?? []) {
          if (ep.nodeName !== this.identity.nodeName || ep.conditions?.ready === false) continue;
          for (const a of ep.addresses ?? []) if (isIP(a) === family) local.push(a);
        }
      }
      // null: nothing to probe on this node (no local endpoint, no address): no check.
      const spec = serviceAnnotationCheck({ gate, check: parsed.check, localEndpoints: local });
      if (spec) out.push(spec);
    }
    return out;
  }

  /** Check specs from the config alone: static routes' checks and kube-proxy's node check. */
  private configSpecs(cfg: Config): CheckSpec[] {
    const timing = timingFromConfig(cfg.healthChecks);
    const specs: CheckSpec[] = [];
    const nodeIp = this.identity.nodeIp;
    for (const r of cfg.routes) {
      if (!r.healthCheck) continue;
      const host = r.healthCheck.host ?? nodeIp;
      if (host === undefined) {
        // Never announce an unchecked route that was meant to be checked: the gate fails with InvalidCheck.
        specs.push(invalidCheck(`route:${staticRouteGate(r)}`, staticRouteGate(r), 'no address to probe: set healthCheck.host, node.ip or --node-ip'));
        continue;
      }
      specs.push(staticRouteCheck({ gate: staticRouteGate(r), check: { ...r.healthCheck, host }, defaults: timing, nodeIP: host }));
    }
    if (kubeProxyEnabled(cfg) && nodeIp !== undefined) {
      specs.push(kubeProxyNodeCheck({ nodeIPs: nodeIp, port: cfg.kubeProxy.healthzPort, timing }));
    }
    return specs;
  }

  /** Checks of one Service's VIPs that are announced, or blocked only by their health gate. */
  private serviceSpecs(cfg: Config, s: ServiceDecision): CheckSpec[] {
    this.reconcileStats.specsComputed++;
    const specs: CheckSpec[] = [];
    for (const v of s.vips) {
      if (v.announced || (v.reasons.length > 0 && v.reasons.every((r) => r.code === 'HealthCheckFailing'))) specs.push(...this.vipChecks(cfg, s.service, v.address));
    }
    return specs;
  }

  /** Every check spec: config ones first, then each Service's. */
  private allSpecs(): CheckSpec[] {
    const out = [...this.baseSpecs];
    for (const e of this.svcSpecs.values()) for (const x of e.specs) out.push(x);
    return out;
  }

  /** The Speaker Route of a controller route, reusing the previous object while the controller's is the same. */
  private svcRoute(d: DesiredRoute): { d: DesiredRoute; route: Route } {
    const old = this.svcRoutes.get(d.prefix);
    if (old !== undefined && old.d === d) return old;
    this.reconcileStats.routesMade++;
    return { d, route: desiredRoute(d) };
  }

  /** Whether gate `k` is announced according to the current state (static route gate or Service VIP gate). */
  private gateAnnounced(k: string): boolean {
    if (this.staticGates.has(k)) return true;
    if (!k.startsWith('svc:')) return false;
    return this.svcGates.get(k.slice(4).split(' ')[0] as string)?.includes(k) ?? false;
  }

  /** Announced VIP gates of one Service decision. */
  private static announcedGatesOf(s: ServiceDecision): string[] {
    const out: string[] = [];
    for (const v of s.vips) if (v.announced) out.push(`svc:${s.service} ${v.address}`);
    return out;
  }

  /** The decision of Service `key` in `result` (services are sorted by key), or undefined. */
  private static findService(result: DesiredResult, key: string): ServiceDecision | undefined {
    const a = result.services;
    let lo = 0;
    let hi = a.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const k = (a[mid] as ServiceDecision).service;
      if (k === key) return a[mid];
      if (k < key) lo = mid + 1;
      else hi = mid - 1;
    }
    return undefined;
  }

  /**
   * Bring the desired set up to date and hand the difference to the speaker. Never throws.
   *
   * Level-triggered, applied incrementally: the controller reports which Services and prefixes changed
   * (`DesiredChanges`), and only those are re-read here — their routes (a Route object is made only for a route the
   * controller changed), their health checks and their announced gates — so one EndpointSlice change costs
   * O(Services it touches), not O(Services in the cluster). Static routes (a handful, from the config) are re-read
   * every time. Everything is recomputed from the controller's last full result on start, reload, a node-level
   * health change, a controller full recompute (`changes.all`: first result, context change, resync) and after a
   * failed reconcile.
   * @returns false when it failed (logged; the previous routes stay announced)
   */
  reconcile(why: string): boolean {
    const t0 = performance.now();
    const cfg = this.config;
    try {
      const health = this.deps.health;
      if (this.deps.source && cfg.peers.some((p) => p.nodeSelector)) {
        // Node labels may have changed: peers selected by nodeSelector come and go.
        try {
          this.applyPeers(this.resolvePeers(cfg));
        } catch (err) {
          this.log.error({ err }, 'cannot apply peers');
        }
      }
      const source = this.deps.source;
      // Service VIPs: the controller's last result (it emits only once the source has synced).
      const result = this.lastResult;
      const full = this.needFull || this.pendingAll || why === 'reload' || why === 'start';
      // A failure below leaves the state half-updated: the next reconcile then recomputes everything.
      this.needFull = true;
      /** Prefixes whose final route may have changed. */
      const touched = new Set<string>();
      /** Gates whose announced state may have changed. */
      const gatesTouched = new Set<string>();
      const newlyRegistered: string[] = [];
      let specsChanged = full;
      if (full) {
        this.reconcileStats.full++;
        const routes = new Map<string, { d: DesiredRoute; route: Route }>();
        for (const d of result?.routes ?? []) routes.set(d.prefix, this.svcRoute(d));
        this.svcRoutes = routes;
        const gates = new Map<string, string[]>();
        const specs = new Map<string, { specs: CheckSpec[]; json: string }>();
        for (const sd of result?.services ?? []) {
          this.reconcileStats.servicesApplied++;
          const g = Daemon.announcedGatesOf(sd);
          if (g.length > 0) gates.set(sd.service, g);
          const sp = this.serviceSpecs(cfg, sd);
          if (sp.length > 0) specs.set(sd.service, { specs: sp, json: '' });
        }
        this.svcGates = gates;
        this.svcSpecs = specs;
        this.baseSpecs = this.configSpecs(cfg);
        const registered = new Set<string>();
        for (const x of this.allSpecs()) {
          if (x.scope === 'node') continue;
          if (!this.registeredGates.has(x.gate)) newlyRegistered.push(x.gate);
          registered.add(x.gate);
        }
        this.registeredGates = registered;
        for (const k of this.announcedGates) gatesTouched.add(k);
        for (const l of gates.values()) for (const k of l) gatesTouched.add(k);
      } else if (result) {
        this.reconcileStats.incremental++;
        for (const p of this.pendingPrefixes) {
          const d = this.controller?.route(p);
          if (d === undefined) this.svcRoutes.delete(p);
          else this.svcRoutes.set(p, this.svcRoute(d));
          touched.add(p);
        }
        for (const key of this.pendingServices) {
          this.reconcileStats.servicesApplied++;
          const sd = Daemon.findService(result, key);
          const oldGates = this.svcGates.get(key) ?? [];
          const newGates = sd ? Daemon.announcedGatesOf(sd) : [];
          if (newGates.length > 0) this.svcGates.set(key, newGates);
          else this.svcGates.delete(key);
          for (const k of oldGates) gatesTouched.add(k);
          for (const k of newGates) gatesTouched.add(k);
          const old = this.svcSpecs.get(key);
          const sp = sd ? this.serviceSpecs(cfg, sd) : [];
          const oldJson = old ? (old.json || (old.json = JSON.stringify(old.specs))) : '[]';
          const json = sp.length > 0 ? JSON.stringify(sp) : '[]';
          if (json === oldJson) continue;
          specsChanged = true;
          if (sp.length > 0) this.svcSpecs.set(key, { specs: sp, json });
          else this.svcSpecs.delete(key);
          const checkGates = new Set<string>();
          for (const x of sp) if (x.scope !== 'node') checkGates.add(x.gate);
          for (const x of old?.specs ?? []) if (x.scope !== 'node' && !checkGates.has(x.gate)) this.registeredGates.delete(x.gate);
          for (const g of checkGates) {
            if (this.registeredGates.has(g)) continue;
            newlyRegistered.push(g);
            this.registeredGates.add(g);
          }
        }
      }
      this.pendingAll = false;
      this.pendingServices.clear();
      this.pendingPrefixes.clear();
      // Checks first: a static route's gate is read only once its check exists (a new check starts unknown).
      if (specsChanged) {
        this.reconcileStats.setChecks++;
        const check = health.setChecks(this.allSpecs());
        for (const e of check.errors) this.log.warn({ check: e.key, gate: e.gate }, `invalid health check: ${e.message}`);
      }
      // Services whose gate just got its check: recompute them now that the gate is known.
      for (const g of newlyRegistered) if (g.startsWith('svc:')) this.controller?.invalidate(g.slice(4).split(' ')[0] as string);
      // Static routes (a static route wins over a Service VIP with the same prefix): few, re-read every time.
      const staticNow = new Map<string, Route>();
      const staticGates = new Set<string>();
      for (const r of cfg.routes) {
        let route = this.staticCache.get(r);
        if (route === undefined) this.staticCache.set(r, (route = staticRoute(r)));
        if (r.healthCheck) {
          const key = staticRouteGate(r);
          const g = health.gate(key);
          if (!g.pass) continue;
          staticGates.add(key);
        }
        staticNow.set(route.prefix, route);
      }
      for (const k of staticGates) gatesTouched.add(k);
      for (const k of this.staticGates) gatesTouched.add(k);
      for (const p of staticNow.keys()) touched.add(p);
      for (const p of this.staticNow.keys()) touched.add(p);
      this.staticNow = staticNow;
      this.staticGates = staticGates;
      // The desired set and what the speaker gets.
      const changed: Route[] = [];
      const removed: string[] = [];
      if (full) {
        const desired = new Map<string, Route>();
        for (const e of this.svcRoutes.values()) desired.set(e.route.prefix, e.route);
        for (const r of staticNow.values()) desired.set(r.prefix, r);
        this.desired = desired;
        this.speaker.setRoutes(desired);
      } else {
        for (const p of touched) {
          const next = staticNow.get(p) ?? this.svcRoutes.get(p)?.route;
          const prev = this.desired.get(p);
          if (next === prev) continue;
          if (next === undefined) {
            this.desired.delete(p);
            removed.push(p);
          } else {
            this.desired.set(p, next);
            changed.push(next);
          }
        }
        if (this.speaker.updateRoutes) {
          if (changed.length > 0 || removed.length > 0) this.speaker.updateRoutes(changed, removed);
        } else {
          this.speaker.setRoutes(this.desired);
        }
      }
      const size = this.desired.size;
      this.desiredCount = size;
      this.deps.metrics.desiredRoutes.set(size);
      // Only gates whose state changed are reported (announced ones first, then withdrawn ones, as before).
      const off: string[] = [];
      for (const k of gatesTouched) {
        const wanted = this.gateAnnounced(k);
        if (wanted && !this.announcedGates.has(k)) {
          this.announcedGates.add(k);
          health.setAnnounced(k, true);
        } else if (!wanted && this.announcedGates.has(k)) off.push(k);
      }
      for (const k of off) {
        this.announcedGates.delete(k);
        health.setAnnounced(k, false);
      }
      this.needFull = false;
      if (!this.initialSyncMarked && (!source || result !== undefined)) this.maybeMarkInitialSync(this.allSpecs(), size);
      this.log.debug({ why, full, routes: size, changed: changed.length, removed: removed.length }, 'reconciled');
      return true;
    } catch (err) {
      this.log.error({ err, why }, 'reconcile failed; previous routes stay announced');
      this.reconcileError = err instanceof Error ? err.message : String(err);
      return false;
    } finally {
      this.deps.metrics.reconcileDuration.observe((performance.now() - t0) / 1000);
    }
  }

  /**
   * End-of-RIB waits for the first full desired set (decisions.md), and that includes the first verdict of every health
   * check gating a route: after a restart, checks start unknown (`Pending`), and an End-of-RIB sent before they pass
   * would make the routers flush the stale routes that graceful restart kept — moving traffic for nothing. Bounded: at
   * the latest after the slowest check could have passed `rise` times (rise × interval + timeout, plus 2 s).
   */
  private maybeMarkInitialSync(specs: readonly CheckSpec[], routeCount: number): void {
    const health = this.deps.health;
    const pending = [...this.registeredGates].filter((g) => health.gate(g).reasons.some((r) => r.code === 'Pending'));
    const now = Date.now();
    if (this.initialSyncDeadlineMs === undefined) {
      const settleMs = Math.max(0, ...specs.map((x) => (x.rise * x.intervalSec + x.timeoutSec) * 1000)) + 2000;
      this.initialSyncDeadlineMs = now + settleMs;
      if (pending.length > 0) setTimeout(() => this.scheduleReconcile('health checks settle deadline'), settleMs).unref();
    }
    if (pending.length > 0 && now < this.initialSyncDeadlineMs) {
      this.log.debug({ pending: pending.length }, 'End-of-RIB waits for the first verdict of health checks');
      return;
    }
    this.initialSyncMarked = true;
    this.speaker.markInitialSyncDone();
    this.log.info({ routes: routeCount, pendingChecks: pending.length }, 'initial sync done: End-of-RIB may be sent');
  }

  // ------------------------------------------------------------------------------------------
  // Reload, drain, shutdown
  // ------------------------------------------------------------------------------------------

  /** Current configuration (after reloads). */
  get currentConfig(): Config {
    return this.config;
  }

  /**
   * Apply a validated configuration. Peer passwords are resolved first; on failure nothing changes.
   * @returns the diff that was applied
   * @throws MappingError (nothing applied)
   */
  reload(next: Config): ConfigDiff {
    const d = diffConfig(this.config, next);
    const eff = effectiveReloadConfig(this.config, next);
    const peers = this.resolvePeers(eff); // may throw: nothing applied yet
    if (d.restartRequired.length > 0) this.log.warn({ fields: d.restartRequired }, 'these settings change only on restart; running values kept');
    this.config = eff;
    if (d.logLevelChanged) this.log.level = eff.logLevel;
    this.applyPeers(peers);
    if (d.policyChanged || d.healthChanged) this.controller?.setContext(this.controllerContext(eff));
    // A reload whose routes cannot be applied is reported as failed, with the cause.
    const applied = this.reconcile('reload');
    const at = new Date(this.now()).toISOString();
    this.lastReload = applied ? { at, ok: true } : { at, ok: false, errors: [`the new configuration is in force but its routes could not be applied (the previous routes stay announced): ${this.reconcileError ?? 'unknown error'}`] };
    this.deps.metrics.configReloads.inc({ result: applied ? 'ok' : 'invalid' });
    this.log.info(
      { added: d.peers.added.map((p) => p.name), removed: d.peers.removed.map((p) => p.name), changed: d.peers.changed.map((c) => c.name), routesChanged: d.routesChanged, policyChanged: d.policyChanged },
      'configuration reloaded',
    );
    return d;
  }

  /** Record a rejected reload (invalid file): the running config stays. */
  reloadRejected(errors: string[]): void {
    this.lastReload = { at: new Date(this.now()).toISOString(), ok: false, errors };
    this.deps.metrics.configReloads.inc({ result: 'invalid' });
  }

  /** Largest gracefulShutdown.waitTime among peers that enable it (0 when none does). */
  private gracefulWaitSec(): { graceful: boolean; waitTimeSec: number } {
    let graceful = false;
    let waitTimeSec = 0;
    for (const p of this.config.peers) {
      if (p.gracefulShutdown?.enabled) {
        graceful = true;
        waitTimeSec = Math.max(waitTimeSec, p.gracefulShutdown.waitTime);
      }
    }
    return { graceful, waitTimeSec };
  }

  /** Stop everything: graceful (RFC 8326) when configured, then Cease / Administrative Shutdown. Idempotent. */
  async shutdown(reason: string): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    if (this.listenTimer) clearTimeout(this.listenTimer);
    const g = this.gracefulWaitSec();
    const waitTimeSec = this.effectiveWaitSec(g.waitTimeSec);
    this.log.info({ reason, graceful: g.graceful, waitTimeSec, ...(waitTimeSec !== g.waitTimeSec ? { skippedWait: 'no Established session' } : {}) }, 'shutting down');
    await this.speaker.shutdown({ graceful: g.graceful, waitTimeSec, message: `herald: ${reason}` }).catch((err: unknown) => this.log.warn({ err }, 'speaker shutdown failed'));
    await this.deps.health.close().catch(() => undefined);
    if (this.controller) await this.controller.stop().catch(() => undefined);
    else await this.deps.source?.stop().catch(() => undefined);
  }

  // ------------------------------------------------------------------------------------------
  // DaemonView
  // ------------------------------------------------------------------------------------------

  live(): boolean {
    return !this.stopping;
  }

  status(): StatusView {
    const notReady: string[] = [];
    if (this.speakerError !== undefined) notReady.push(`BGP listener: ${this.speakerError}`);
    else if (!this.speakerReady) notReady.push('BGP listener not bound yet');
    if (this.deps.source && !this.deps.source.synced()) notReady.push(`${this.deps.source.status().type} source not synced`);
    if (!this.initialSyncMarked) notReady.push('initial route computation pending');
    if (this.stopping) notReady.push('shutting down');
    const peers = this.speaker.peers();
    const s: StatusView = {
      version: this.deps.version,
      node: this.identity.nodeName,
      routerId: this.identity.routerId,
      localAs: this.config.bgp.localAs,
      startedAt: new Date(this.startedAtMs).toISOString(),
      uptimeSec: Math.round(this.now() - this.startedAtMs) / 1000,
      ready: notReady.length === 0,
      notReady,
      drained: this.speaker.draining,
      peers: { configured: peers.length, established: peers.filter((p) => p.state === 'Established').length },
      routes: { desired: this.desiredCount },
    };
    if (this.lastReload) s.lastReload = this.lastReload;
    return s;
  }

  peers(): PeerView[] {
    return this.speaker.peers().map((p) => peerView(p, this.speaker.localAs, this.history.get(p.name)));
  }

  routes(filter: { peer?: string; prefix?: string }): RouteView[] {
    const out: RouteView[] = [];
    for (const p of this.speaker.peers()) {
      if (filter.peer !== undefined && p.name !== filter.peer) continue;
      for (const r of this.speaker.adjRibOut(p.name)) {
        if (filter.prefix !== undefined && !prefixMatches(r.prefix, filter.prefix)) continue;
        out.push(routeView(p.name, r));
      }
    }
    return out;
  }

  services(): ServiceView[] {
    // The controller's decisions already have the view's shape (read-only; no copy per request).
    return this.lastResult?.services ?? [];
  }

  health(): HealthCheckView[] {
    const st = this.deps.health.status?.();
    if (!st) return [];
    const out: HealthCheckView[] = st.checks.map((c) => {
      const v: HealthCheckView = {
        key: c.key,
        gate: c.gate,
        scope: c.scope,
        kind: c.kind,
        target: c.target,
        state: c.state,
        since: new Date(c.since).toISOString(),
        intervalSec: c.intervalSec,
        rise: c.rise,
        fall: c.fall,
        consecutiveOk: c.consecutiveOk,
        consecutiveFail: c.consecutiveFail,
      };
      if (c.latencyMs !== null) v.latencyMs = Math.round(c.latencyMs * 1000) / 1000;
      if (c.lastFailure) v.lastFailure = { code: c.lastFailure.code ?? 'error', message: c.lastFailure.message };
      return v;
    });
    for (const i of st.invalid) out.push({ key: i.key, gate: i.gate, scope: 'gate', kind: '-', target: '-', state: 'invalid', lastFailure: { code: 'InvalidCheck', message: i.message } });
    return out.sort((a, b) => (a.gate < b.gate ? -1 : a.gate > b.gate ? 1 : a.key < b.key ? -1 : 1));
  }

  async resetPeer(name: string, soft: boolean): Promise<void> {
    if (!this.applied.has(name)) throw new NotFoundError(`no peer named "${name}"`);
    this.log.info({ peer: name, soft }, 'peer reset requested');
    this.speaker.resetPeer(name, { soft });
  }

  /**
   * The RFC 8326 wait (seconds) lets peers move traffic away before the withdrawal: with no Established session
   * there is nothing to move, so it is 0 then (a stop or drain right after start does not wait for nothing).
   */
  private effectiveWaitSec(waitTimeSec: number): number {
    return this.speaker.peers().some((p) => p.state === 'Established') ? waitTimeSec : 0;
  }

  /** RFC 8326 drain; returns once started (the withdrawal follows after the wait time; none without an Established session). */
  async drain(): Promise<void> {
    const waitTimeSec = this.effectiveWaitSec(this.gracefulWaitSec().waitTimeSec);
    this.drainedByApi = true;
    this.log.info({ waitTimeSec }, 'drain requested');
    this.speaker.drain({ waitTimeSec }).catch((err: unknown) => this.log.error({ err }, 'drain failed'));
  }

  async undrain(): Promise<void> {
    this.drainedByApi = false;
    this.log.info('undrain requested');
    this.speaker.undrain();
  }

  /** True while drained through the API. */
  get drainRequested(): boolean {
    return this.drainedByApi;
  }

  async metrics(): Promise<{ contentType: string; body: string }> {
    const src = this.deps.source;
    if (src) {
      for (const r of src.status().resources) if (r.lastEventAtMs > 0) this.deps.metrics.kubernetesLastSync.set({ resource: r.kind }, r.lastEventAtMs / 1000);
    }
    this.deps.metrics.drained.set(this.speaker.draining ? 1 : 0);
    return this.deps.metrics.text();
  }
}
