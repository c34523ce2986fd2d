/**
 * `herald controller` (docs/security.md "Components and rights"): the cluster-wide writers, apart from the nodes —
 * the LoadBalancer allocator (Service status, Events on Services; Lease `herald-allocator`), the conditions of
 * Herald's objects (Lease `herald-status`), and the Warning Events of refused tenant input on Services (posted by the
 * holder of `herald-status`; refusals are the same on every node: src/controller/refusals.ts). It runs as a
 * Deployment with its own ServiceAccount, reads the same configuration file and kubeconfig as `herald run`, and with
 * it `herald run --separate-controller` writes nothing but its own BGPNodeStatus and its own Node's drain annotation.
 *
 * Components, in start order (components.ts): source (Services and Herald's objects only) · probes and metrics
 * listener (GET /healthz, /readyz, /metrics) · object status · allocator · refusal events · configuration watcher.
 */
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import { realClock } from '../../bgp/main-thread.ts';
import type { DesiredRoutesContext, ServiceDecision } from '../controller/desired-routes.ts';
import { refusalsOf } from '../controller/refusals.ts';
import type { KubeClient } from '../k8s/client.ts';
import type { ForbiddenCalls } from '../k8s/forbidden.ts';
import type { HeraldMetrics } from '../metrics/metrics.ts';
import { buildMetricsServer } from '../metrics/server.ts';
import type { Source } from '../sources/source.ts';
import { LeaseReleases, allocatorComponent, createSource, forbiddenCalls, kubernetesObserver, objectStatusComponent, sourceComponent } from './cluster-components.ts';
import type { SourceParts } from './cluster-components.ts';
import { configWatcher, listenerComponent } from './components.ts';
import type { Component } from './components.ts';
import { ConfigInForce } from './config-in-force.ts';
import type { InForce } from './config-in-force.ts';
import type { DecisionChanges, DecisionSet } from './health-gate.ts';
import { desiredRoutesContext } from './mapping.ts';
import { boot, cannotStart, serve } from './process.ts';

/** The controller's probes and metrics listener when `--listen` does not say (every address: a pod's own network). */
export const DEFAULT_CONTROLLER_LISTEN = { address: '0.0.0.0', port: 9180 };

/** Options of {@link runController}. */
export interface ControllerRunOptions {
  configPath: string;
  env?: NodeJS.ProcessEnv;
  /** The probes and metrics listener (default {@link DEFAULT_CONTROLLER_LISTEN}). */
  listen?: { address: string; port: number };
  /** The holder identity of its Leases (default POD_NAME, else `<hostname>-<pid>`). */
  identity?: string;
  /** Config file poll period, ms (default 2000; 0 disables watching). */
  watchIntervalMs?: number;
  /** Resolves to stop (tests); signals also stop it. */
  stopSignal?: Promise<unknown>;
  /** Where the JSON log lines go (default stdout; tests). */
  logStream?: { write(line: string): void };
}

/**
 * Run `herald controller` until a stop signal.
 * @returns the process exit code (0 after a clean stop, 1 when it could not start)
 */
export async function runController(o: ControllerRunOptions): Promise<number> {
  const env = o.env ?? process.env;
  const b = await boot('controller', o.configPath, env, o.logStream);
  if (b === undefined) return 1;
  const { config, log, metrics } = b;
  if (config.source?.kubernetes === undefined) {
    process.stderr.write('herald controller: the configuration has no source.kubernetes: the controller writes through the apiserver (allocator, status, Events)\n');
    return 1;
  }
  const identity = o.identity ?? env['POD_NAME'] ?? `${hostname()}-${process.pid}`;
  const forbidden = forbiddenCalls(log);
  let parts: SourceParts;
  try {
    parts = await createSource(config, env, forbidden, { role: 'controller', version: b.version, observer: kubernetesObserver(metrics, log) }, 'controller');
  } catch (err) {
    return cannotStart('controller', log, err);
  }
  const { source, kc, namespace } = parts;
  if (!source || !kc || namespace === undefined) return cannotStart('controller', log, new Error('no Kubernetes source'));
  const inForce = new ConfigInForce({ file: config, nodeName: '', source, log, metrics, clock: realClock });
  // The Lease releases of a stop, awaited (bounded) by the source's stop (cluster-components.ts LeaseReleases).
  const releases = new LeaseReleases();
  const objectStatus = await objectStatusComponent({ kc, namespace, identity, source, inForce, loadBalancerClass: config.loadBalancerClass, forbidden, log, metrics, releases, env });
  const allocator = allocatorComponent({ kc, source, inForce, identity, loadBalancerClass: config.loadBalancerClass, env, forbidden, log, metrics, releases });
  const refusals = refusalEventsComponent({ source, inForce, kc, forbidden, log, metrics, identity, env, posts: () => objectStatus.isLeader() });
  inForce.listen({
    apply: (change) => {
      if (change.diff.logLevelChanged) log.level = change.merged.config.logLevel;
      allocator.check();
      refusals.reconsider();
    },
    refresh: () => undefined,
  });
  inForce.follow();
  const watcher = configWatcher({
    file: b.file,
    path: b.path,
    stamp: b.stamp,
    intervalMs: o.watchIntervalMs ?? 2000,
    log,
    target: { reload: async (next) => inForce.reloaded(inForce.reload(next)), rejected: (issues) => inForce.rejected(issues), failed: () => false },
  });
  const notReady = (): string[] => {
    const s = source.status();
    return s.synced ? [] : [`kubernetes source not synced (${s.resources.filter((r) => !r.synced).map((r) => `${r.kind}${(r.forbidden ?? r.lastError) ? `: ${r.forbidden ?? r.lastError}` : ''}`).join('; ')})`];
  };
  // Kubernetes calls refused with 403 (RBAC): the source's, the writers', the status writer's informers'.
  const calls = (): string[] => [...source.status().resources.flatMap((r) => (r.forbidden !== undefined ? [r.forbidden] : [])), ...forbidden.list(), ...objectStatus.forbidden(), ...allocator.forbidden()];
  const listen = o.listen ?? DEFAULT_CONTROLLER_LISTEN;
  log.info({ version: b.version, identity, namespace, listen: `${listen.address}:${listen.port}` }, 'herald controller starting');
  const components: Component[] = [
    sourceComponent(parts, { log, metrics, releases, runs: true }),
    listenerComponent({ name: 'probes and metrics listener', logged: 'probes and metrics', fields: '--listen', at: listen, build: () => buildMetricsServer({ text: () => metrics.text(), probes: { notReady, forbidden: calls }, logger: log.child({ component: 'metrics' }), onRefused: (reason) => metrics.metricsRefused.inc({ reason }) }), log }),
    objectStatus,
    allocator,
    refusals,
    watcher,
  ];
  return serve({ command: 'controller', components, log, env, reload: (why) => watcher.reload(why), ...(o.stopSignal ? { stopSignal: o.stopSignal } : {}) });
}

/** Options of {@link refusalEventsComponent}. */
export interface RefusalEventsOptions {
  readonly source: Source;
  readonly inForce: InForce;
  readonly kc: KubeClient;
  readonly forbidden: ForbiddenCalls;
  readonly log: Logger;
  readonly metrics: HeraldMetrics;
  /** The Events' reporting instance. */
  readonly identity: string;
  /** Whether this instance posts (the holder of `herald-status`: one writer). */
  readonly posts: () => boolean;
  /** Test hooks (HERALD_TEST_EVENT_REPEAT_SEC, src/events/recorder.ts `repeatAfterFromEnv`). */
  readonly env?: NodeJS.ProcessEnv;
}

/** The refusal Events' component: `reconsider` after a change of the configuration in force. */
export interface RefusalEventsComponent extends Component {
  reconsider(): void;
}

/**
 * Warning Events of refused tenant input (src/controller/refusals.ts) on the Services, one per refusal that appears
 * (src/daemon/service-events.ts `AnnouncementEvents`: the first pass records what is there and posts nothing, so a
 * restart posts nothing new), rate-limited and correlated by the EventRecorder. Services changed since the last pass
 * are looked at again; every Service after a change of the configuration in force.
 */
export function refusalEventsComponent(o: RefusalEventsOptions): RefusalEventsComponent {
  const decisions = new Map<string, ServiceDecision>();
  let events: { observe(d: DecisionSet, c: DecisionChanges): void } | undefined;
  const pending = new Set<string>();
  let all = true;
  let queued = false;
  let running = false;
  let ctx: { from: unknown; value: DesiredRoutesContext } | undefined;
  const context = (): DesiredRoutesContext => {
    const cfg = o.inForce.config;
    if (ctx?.from !== cfg) ctx = { from: cfg, value: desiredRoutesContext(cfg, '') };
    return ctx.value;
  };
  const set: DecisionSet = {
    services: () => [...decisions.keys()].sort().map((k) => decisions.get(k) as ServiceDecision),
    service: (k) => decisions.get(k),
  };
  const pass = () => {
    queued = false;
    if (!running || !events || !o.source.synced()) return;
    const snap = o.source.snapshot();
    const keys = all ? new Set([...[...snap.services()].map((s) => `${s.metadata?.namespace ?? ''}/${s.metadata?.name ?? ''}`), ...decisions.keys()]) : new Set(pending);
    const full = all;
    all = false;
    pending.clear();
    const c = context();
    for (const k of keys) {
      const svc = snap.service(k);
      if (svc) decisions.set(k, refusalsOf(svc, c));
      else decisions.delete(k);
    }
    try {
      events.observe(set, { all: full, services: [...keys].sort() });
    } catch (err) {
      o.log.warn({ err: (err as Error).message }, 'refusal events failed');
    }
  };
  const schedule = () => {
    if (queued || !running) return;
    queued = true;
    setImmediate(pass);
  };
  const onChange = (keys: readonly string[]) => {
    for (const k of keys) if (k.startsWith('service:')) pending.add(k.slice('service:'.length));
    if (pending.size > 0) schedule();
  };
  const reconsider = () => {
    all = true;
    schedule();
  };
  return {
    name: 'refusal events',
    reconsider,
    async start() {
      const { EventRecorder, KubernetesEventSink, repeatAfterFromEnv } = await import('../events/recorder.ts');
      const { AnnouncementEvents } = await import('./service-events.ts');
      const recorder = new EventRecorder(new KubernetesEventSink(o.kc, 'herald-controller', o.identity, o.forbidden), {
        ...repeatAfterFromEnv(o.env ?? {}),
        onError: (err, e) => o.log.debug({ err: (err as Error).message, service: e.service }, 'cannot record event'),
        onDropped: (_e, reason) => o.metrics.kubernetesEventsDropped.inc({ component: 'herald-controller', reason }),
      });
      events = new AnnouncementEvents(o.identity, recorder, { refusals: o.posts });
      running = true;
      o.source.on('change', onChange);
      o.source.on('synced', reconsider);
      reconsider();
    },
    stop() {
      running = false;
      o.source.off('change', onChange);
      o.source.off('synced', reconsider);
    },
  };
}
