/**
 * The components of `herald run` (components.ts), built in one place and started in this order
 * (docs/architecture.md "Components"):
 *
 *   source · admin API · metrics listener · state file · pipeline (speaker thread, controller, health gate, route
 *   assembly, peers) · node status · object status · allocator · configuration watcher
 *
 * and stopped in the reverse order: the configuration watcher first (a reload in progress finishes), the writers
 * (whose Lease releases go on beside the stops after them), then the pipeline (the speaker's stop in the mode the
 * node's state calls for), the state file's last heartbeat after it, the listeners, and the source last: the Secrets'
 * cache, the Lease releases waited for at most 3 s, the Kubernetes client closed (docs/decisions.md "Stop modes").
 * Object status, the allocator and the Events on Services are built only when no `herald controller` runs them
 * (`--separate-controller`, src/daemon/controller-components.ts). Building them is what can fail before anything runs (a password file,
 * a kubeconfig): {@link buildNode} then releases what it built and throws.
 */
import type { Logger } from 'pino';
import type { SpeakerThread } from '../../bgp/main-thread.ts';
import { MemoryReducer } from '../../bgp/main-thread.ts';
import { buildAdminServer } from '../admin/server.ts';
import type { Config, ListenerAddress } from '../config/schema.ts';
import type { RuntimeIdentity } from '../config/load.ts';
import type { ConfigFile } from '../config/load.ts';
import { placeholderWarnings, readSecretFiles } from '../config/secrets.ts';
import type { SecretFileTexts } from '../config/secrets.ts';
import { DRAIN_ANNOTATION } from '../controller/node-eligibility.ts';
import { boundsFanOut } from '../controller/steering.ts';
import { countsInNodeStatus } from '../controller/reasons.ts';
import { HealthManager } from '../health/manager.ts';
import { probeCheck } from '../health/probe.ts';
import { flapControlFromConfig } from '../health/specs.ts';
import type { KubeClient } from '../k8s/client.ts';
import type { ForbiddenCalls } from '../k8s/forbidden.ts';
import type { HeraldMetrics } from '../metrics/metrics.ts';
import { buildMetricsServer } from '../metrics/server.ts';
import type { NodeStatusWriter } from '../status/node-status.ts';
import { LeaseReleases, allocatorComponent, createSource, forbiddenCalls, kubernetesObserver, objectStatusComponent, sourceComponent } from './cluster-components.ts';
import type { AllocatorComponent, ObjectStatusComponent, SourceParts } from './cluster-components.ts';
import { configWatcher, heartbeatComponent, listenerComponent } from './components.ts';
import type { Component, ConfigWatcher } from './components.ts';
import { Daemon } from './daemon.ts';
import type { DecisionChanges, DecisionSet } from './health-gate.ts';
import { annotationDrainRecord, fileDrainRecord } from './drain.ts';
import type { DrainRecord } from './drain.ts';
import { resolvePassword } from './mapping.ts';
import type { SpeakerLike } from './speaker-like.ts';
import { readRestartInfo } from './state.ts';

/** What `herald run` has read before it builds its components. */
export interface NodeInputs {
  readonly config: Config;
  readonly file: ConfigFile;
  /** The file's path, and its stamp taken before it was first read. */
  readonly path: string;
  readonly stamp: string;
  readonly identity: RuntimeIdentity;
  /** The metrics-only listener, when `metrics:` asks for one. */
  readonly metricsAt: ListenerAddress | undefined;
  readonly env: NodeJS.ProcessEnv;
  readonly log: Logger;
  readonly version: string;
  readonly metrics: HeraldMetrics;
  /** The thread the Speaker runs on, spawned ahead (default one spawned when the Speaker starts). */
  readonly speakerThread?: SpeakerThread;
  /** State file heartbeat period, ms (default 5000). */
  readonly heartbeatIntervalMs?: number;
  /** Config file poll period, ms (default 2000; 0 disables watching). */
  readonly watchIntervalMs?: number;
  /** The speaker thread died: the process stops (with EXIT_SPEAKER_THREAD). */
  readonly onSpeakerThreadExit: () => void;
  /**
   * `herald controller` runs the cluster-wide writers: no object status, no allocator, no Events here (so no Lease,
   * no Service status, no Event is written by this process: docs/security.md "Components and rights").
   */
  readonly separateController?: boolean;
}

/** `herald run`, built: its components in start order, the daemon, and the watcher SIGHUP reloads through. */
export interface Node {
  readonly daemon: Daemon;
  readonly components: Component[];
  readonly watcher: ConfigWatcher;
}

/** The admin token in force: `admin.tokenFile` as read ahead (`files`), else HERALD_ADMIN_TOKEN; undefined: none. */
function readToken(cfg: Config, env: NodeJS.ProcessEnv, log: Logger, files: SecretFileTexts): string | undefined {
  if (cfg.admin.tokenFile !== undefined) {
    const read = files.get(cfg.admin.tokenFile) ?? { problem: 'not read' };
    if ('problem' in read) {
      log.warn({ file: cfg.admin.tokenFile, err: read.problem }, 'cannot read admin token file: mutating endpoints disabled');
      return undefined;
    }
    const t = read.text.trim();
    if (t !== '') return t;
    log.warn({ file: cfg.admin.tokenFile }, 'admin token file is empty: mutating endpoints disabled');
    return undefined;
  }
  const t = env['HERALD_ADMIN_TOKEN'];
  return t !== undefined && t.trim() !== '' ? t.trim() : undefined;
}

/**
 * Build the components of `herald run` (see the module comment). Nothing runs yet but the speaker thread, which
 * waits for its Speaker; the source is not started.
 * @throws MappingError, ConfigError or another Error when something cannot be built (what was built is released)
 */
export async function buildNode(i: NodeInputs): Promise<Node> {
  const { config, identity, env, log, metrics } = i;
  // Password and token files, read ahead by the bounded reader (never a blocking read on this thread).
  let secretFiles = await readSecretFiles(config);
  const memory = new MemoryReducer();
  // Graceful Restart: did we run within the restart window?
  const windowSec = Math.max(0, ...config.peers.map((p) => (p.gracefulRestart?.enabled ? p.gracefulRestart.restartTime : 0)));
  const restart = readRestartInfo(config.stateDir, windowSec, Date.now());
  const health = new HealthManager({
    flapControl: flapControlFromConfig(config.flapControl),
    probe: async (spec, signal) => {
      const r = await probeCheck(spec, signal);
      metrics.observeHealthCheck(r.ok ? 'ok' : (r.code ?? 'error'), r.latencyMs / 1000);
      return r;
    },
  });
  const forbidden = forbiddenCalls(log);
  let parts: SourceParts = {};
  try {
    parts = await createSource(config, env, forbidden, { role: 'speaker', version: i.version, observer: kubernetesObserver(metrics, log) }, { nodeName: identity.nodeName });
    const { source, kc, secrets, namespace } = parts;
    const cluster = kc && namespace !== undefined ? { kc, namespace } : undefined;
    // Standalone, this process runs the cluster-wide writers too; beside `herald controller`, none of them.
    const writers = cluster && !i.separateController ? cluster : undefined;
    let nodeStatus: NodeStatusWriter | undefined;
    let objectStatus: ObjectStatusComponent | undefined;
    const allocatorRef: { check(): void } = { check: () => undefined };
    // The Speaker runs in its own worker thread: nothing on this thread can delay a KEEPALIVE or a hold timer.
    const { SpeakerProxy } = await import('../../bgp/main-thread.ts');
    const daemon = new Daemon(config, identity, {
      createSpeaker: (o) => {
        const speaker = SpeakerProxy.start({ localAs: o.localAs, bgpIdentifier: o.bgpIdentifier, ...(o.listen ? { listen: o.listen } : {}), ...(o.deferListen ? { deferListen: true } : {}), ...(o.gracefulRestart ? { gracefulRestart: o.gracefulRestart } : {}) }, i.speakerThread);
        // Its death closed every session: stop, so that the restart comes up as a graceful restart (docs/architecture.md "Threads").
        speaker.on('threadExit', () => i.onSpeakerThreadExit());
        return speaker satisfies SpeakerLike;
      },
      health,
      ...(source ? { source } : {}),
      ...(secrets ? { secrets } : {}),
      logger: log,
      metrics,
      version: i.version,
      restarting: restart.restarting,
      env,
      // Refusals are the same on every node: the status writer's Lease holder posts them (one writer).
      ...(writers ? { onDecisions: await announcementEvents(i, writers.kc, forbidden, () => objectStatus?.isLeader() ?? true) } : {}),
      forbidden: () => [...forbidden.list(), ...(objectStatus?.forbidden() ?? []), ...(allocator?.forbidden() ?? [])],
      onStatusChange: () => {
        nodeStatus?.changed();
        allocatorRef.check();
      },
      drainRecord: await drainRecord(config, identity, kc, forbidden),
      secretFiles,
    });
    if (cluster) nodeStatus = await nodeStatusWriter(i, cluster, daemon, () => source?.snapshot().node(identity.nodeName)?.metadata?.uid, forbidden);
    const releases = new LeaseReleases();
    if (writers && source) objectStatus = await objectStatusComponent({ ...writers, identity: identity.nodeName, source, inForce: daemon.inForce, loadBalancerClass: config.loadBalancerClass, forbidden, log, metrics, releases, env });
    let allocator: AllocatorComponent | undefined;
    if (!i.separateController) {
      const a = (allocator = allocatorComponent({ kc, source, inForce: daemon.inForce, identity: identity.nodeName, loadBalancerClass: config.loadBalancerClass, env, forbidden, log, metrics, releases }));
      allocatorRef.check = () => a.check();
    }
    log.info({ version: i.version, node: identity.nodeName, routerId: identity.routerId, localAs: config.bgp.localAs, peers: config.peers.length, restarting: restart.restarting, ...(i.separateController ? { separateController: true } : {}) }, 'herald starting');

    let token = readToken(config, env, log, secretFiles);
    for (const w of placeholderWarnings(config, token, (p, n) => resolvePassword(p, n, env, secretFiles))) log.warn(w.fields, w.message);
    const watcher = configWatcher({
      file: i.file,
      path: i.path,
      stamp: i.stamp,
      intervalMs: i.watchIntervalMs ?? 2000,
      log,
      target: {
        reload: async (next) => {
          const files = await readSecretFiles(next, daemon.currentConfig);
          const before = daemon.currentConfig.routes.length;
          daemon.reload(next, files);
          // The replaced configuration's objects go back to the system once this thread is quiet (bgp/memory.ts).
          memory.note(before + next.routes.length);
          parts.kube?.followNodeSet(boundsFanOut(next.advertisements));
          secretFiles = files;
          token = readToken(daemon.currentConfig, env, log, secretFiles);
        },
        rejected: (issues) => daemon.reloadRejected(issues),
        failed: () => daemon.view.status().lastReload?.ok === false,
      },
    });
    const components: Component[] = [
      sourceComponent(parts, { log, metrics, releases }),
      listenerComponent({ name: 'admin API', logged: 'admin API', at: config.admin, build: () => buildAdminServer({ view: daemon.view, token: () => token, logger: log.child({ component: 'admin' }) }), log }),
      ...(i.metricsAt ? [listenerComponent({ name: 'metrics listener', logged: 'metrics', fields: 'metrics.address, metrics.port', at: i.metricsAt, build: () => buildMetricsServer({ text: () => daemon.view.metrics(), views: daemon.view, logger: log.child({ component: 'metrics' }), onRefused: (reason) => metrics.metricsRefused.inc({ reason }) }), log })] : []),
      heartbeatComponent({ stateDir: () => config.stateDir, intervalMs: i.heartbeatIntervalMs ?? 5000, log }),
      pipelineComponent(daemon, log),
      ...(nodeStatus ? [{ name: 'node status', start: () => undefined, stop: () => nodeStatus.stop() }] : []),
      ...(objectStatus ? [objectStatus] : []),
      ...(allocator ? [allocator] : []),
      watcher,
    ];
    return { daemon, components, watcher };
  } catch (err) {
    await health.close();
    parts.secrets?.stop();
    throw err;
  }
}

/**
 * The pipeline: the first route set, then the peers and the BGP listener (docs/sessions.md "Start-up order"), once
 * the admin API is built: the speaker thread then sends the table while this thread is idle (docs/benchmarks.md
 * "Daemon"). A start that fails is logged and the process goes on (see /readyz); its stop is the daemon's shutdown.
 */
function pipelineComponent(daemon: Daemon, log: Logger): Component {
  return {
    name: 'pipeline',
    async start() {
      try {
        await daemon.start();
      } catch (err) {
        log.error({ err }, 'start failed; continuing (see /readyz)');
      }
    },
    stop: async (why) => {
      await daemon.shutdown(why);
    },
  };
}

/** Kubernetes Events on a Service when this node's announcement of it changes (rate-limited, de-duplicated). */
async function announcementEvents(i: NodeInputs, kc: KubeClient, forbidden: ForbiddenCalls, refusals: () => boolean): Promise<(d: DecisionSet, c: DecisionChanges) => void> {
  const { EventRecorder, KubernetesEventSink, repeatAfterFromEnv } = await import('../events/recorder.ts');
  const { AnnouncementEvents } = await import('./service-events.ts');
  const recorder = new EventRecorder(new KubernetesEventSink(kc, 'herald', i.identity.nodeName, forbidden), {
    ...repeatAfterFromEnv(i.env),
    onError: (err, e) => i.log.debug({ err: (err as Error).message, service: e.service }, 'cannot record event'),
    onDropped: (_e, reason) => i.metrics.kubernetesEventsDropped.inc({ component: 'herald', reason }),
  });
  const events = new AnnouncementEvents(i.identity.nodeName, recorder, { refusals });
  return (d, c) => events.observe(d, c);
}

/** Where the operator's drain is kept: the Node annotation herald.io/drain (Kubernetes; RBAC: patch nodes), else stateDir. */
async function drainRecord(config: Config, identity: RuntimeIdentity, kc: KubeClient | undefined, forbidden: ForbiddenCalls): Promise<DrainRecord> {
  if (!kc) return fileDrainRecord(config.stateDir);
  const { patchNodeAnnotation } = await import('../k8s/node-annotations.ts');
  return annotationDrainRecord((value) => forbidden.track('patch nodes', () => patchNodeAnnotation(kc, identity.nodeName, DRAIN_ANNOTATION, value)));
}

/** This node's BGPNodeStatus, at a bounded rate; a write that fails is warned once per distinct problem. */
async function nodeStatusWriter(i: NodeInputs, cluster: { kc: KubeClient; namespace: string }, daemon: Daemon, nodeUid: () => string | undefined, forbidden: ForbiddenCalls): Promise<NodeStatusWriter> {
  const { NodeStatusWriter, apiNodeStatusSink, nodeStatusOf } = await import('../status/node-status.ts');
  let lastProblem = '';
  return new NodeStatusWriter({
    build: () => {
      const { merged, problems } = daemon.objects();
      const o = merged.override;
      return nodeStatusOf({ peers: daemon.view.peers(), services: daemon.view.services(), origins: merged.origins, myASN: o?.localAs ?? merged.config.bgp.localAs, routerID: o?.routerId ?? daemon.identity.routerId, ...(o ? { override: o.name } : {}), problems, heraldVersion: i.version, handles: countsInNodeStatus });
    },
    sink: apiNodeStatusSink(cluster.kc, cluster.namespace, i.identity.nodeName, nodeUid, forbidden),
    onError: (err) => {
      const problem = (err as Error).message;
      if (problem !== lastProblem) i.log.warn({ err: problem }, 'cannot write this node\'s BGPNodeStatus (retried; warned once)');
      lastProblem = problem;
    },
  });
}
