/**
 * `herald run`: load the config, build the daemon (speaker, source, health, metrics), serve the
 * admin API and, with `metrics:`, the metrics-only listener (src/metrics/server.ts), and handle signals:
 * - SIGTERM / SIGINT → a stop in the mode the node's state calls for (a restart, or a departure when it is drained
 *   or leaving service; src/daemon/stop-mode.ts, docs/upgrades.md), exit 0;
 * - SIGHUP, or a change of the config file (polled every `watchIntervalMs`, which also sees
 *   ConfigMap symlink swaps) → reload: the new file is validated first; a bad file is rejected
 *   with every error logged and the running config stays; content read already is not parsed again.
 *
 * Logs are pino JSON lines on stdout.
 */
import { statSync } from 'node:fs';
import { hostname } from 'node:os';
import { pino } from 'pino';
import type { Logger } from 'pino';
import type { FastifyInstance } from 'fastify';
import { ConfigFile, ConfigError, metricsListener, resolveIdentity } from '../config/load.ts';
import { placeholderWarnings, readSecretFiles } from '../config/secrets.ts';
import type { SecretFileTexts } from '../config/secrets.ts';
import type { Config, ListenerAddress } from '../config/schema.ts';
import { buildAdminServer } from '../admin/server.ts';
import { HeraldMetrics } from '../metrics/metrics.ts';
import { buildMetricsServer } from '../metrics/server.ts';
import { HealthManager } from '../health/manager.ts';
import { probeCheck } from '../health/probe.ts';
import { flapControlFromConfig } from '../health/specs.ts';
import type { KubeClient, KubeClientOptions } from '../k8s/client.ts';
import type { RunningAllocator } from '../ipam/run.ts';
import type { Source } from '../sources/source.ts';
import type { KubernetesSource } from '../sources/kubernetes.ts';
import { boundsFanOut } from '../controller/steering.ts';
import { version as packageVersion } from '../version.ts';
import { Daemon } from './daemon.ts';
import type { DecisionChanges, DecisionSet } from './health-gate.ts';
import type { SpeakerLike } from './speaker-like.ts';
import type { SpeakerThread } from '../../bgp/main-thread.ts';
import { MappingError, resolvePassword } from './mapping.ts';
import { DRAIN_ANNOTATION } from '../controller/node-eligibility.ts';
import { readRestartInfo, writeHeartbeat } from './state.ts';
import { annotationDrainRecord, fileDrainRecord } from './drain.ts';
import type { DrainRecord } from './drain.ts';
import { ForbiddenCalls } from '../k8s/forbidden.ts';
import type { SecretCache } from '../k8s/secrets.ts';
import type { NodeStatusWriter } from '../status/node-status.ts';
import type { ObjectStatusWriter } from '../status/object-status-writer.ts';

/** Options of {@link runDaemon}. */
/** Exit code when the speaker thread died (EX_SOFTWARE of sysexits.h): the supervisor restarts Herald. */
export const EXIT_SPEAKER_THREAD = 70;

/**
 * Test hook (docs/development.md): with HERALD_TEST_BLOCK_MS=N in the environment, SIGUSR2 busy-loops the main
 * event loop for N ms — the admin API, the controller and the health checks stop; the BGP sessions in the speaker
 * thread must not (test/interop/daemon-main-block-bird.test.ts). Off unless the variable is set.
 */
function installBlockHook(env: NodeJS.ProcessEnv, log: Logger): (() => void) | undefined {
  const ms = Number(env['HERALD_TEST_BLOCK_MS'] ?? '');
  if (!Number.isFinite(ms) || ms <= 0) return undefined;
  const onBlock = (): void => {
    log.warn({ ms }, 'main event loop blocked on purpose (test hook HERALD_TEST_BLOCK_MS)');
    log.flush?.();
    const end = Date.now() + ms;
    while (Date.now() < end) {
      /* blocked on purpose */
    }
    log.warn({ ms }, 'main event loop unblocked (test hook HERALD_TEST_BLOCK_MS)');
  };
  process.on('SIGUSR2', onBlock);
  return () => process.off('SIGUSR2', onBlock);
}

export interface RunOptions {
  configPath: string;
  nodeName?: string;
  nodeIp?: string;
  env?: NodeJS.ProcessEnv;
  /** Config file poll period, ms (default 2000; 0 disables watching). */
  watchIntervalMs?: number;
  /** Resolves to stop the daemon (tests); signals also stop it. */
  stopSignal?: Promise<unknown>;
  /** Where the JSON log lines go (default stdout; tests). */
  logStream?: { write(line: string): void };
  /** State file heartbeat period, ms (default 5000; tests). */
  heartbeatIntervalMs?: number;
  /** The thread the Speaker runs on, spawned ahead (bgp/speaker-thread/thread.ts); default one spawned when it starts. */
  speakerThread?: SpeakerThread;
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
 * The source of the configuration: manifests, or the apiserver (Services, EndpointSlices, this node's Node — every
 * Node while an advertisement sets `maxNodesPerVip` —, ServiceCIDRs and Herald's objects in its namespace,
 * src/k8s/client.ts `heraldNamespace`) with the Secrets of `passwordSecret` peers.
 */
async function createSource(cfg: Config, env: NodeJS.ProcessEnv, forbidden: ForbiddenCalls, client: KubeClientOptions, nodeName: string): Promise<{ source?: Source; kube?: KubernetesSource; kc?: KubeClient; secrets?: SecretCache; namespace?: string }> {
  if (!cfg.source) return {};
  if (cfg.source.manifests !== undefined) {
    const { ManifestSource } = await import('../sources/manifests.ts');
    return { source: new ManifestSource({ dir: cfg.source.manifests }) };
  }
  const { heraldNamespace, loadKubeConfig } = await import('../k8s/client.ts');
  const { KubernetesSource } = await import('../sources/kubernetes.ts');
  const { SecretCache, apiSecretReader } = await import('../k8s/secrets.ts');
  const k = cfg.source.kubernetes;
  const limit = { ...(k?.qps !== undefined ? { qps: k.qps } : {}), ...(k?.burst !== undefined ? { burst: k.burst } : {}) };
  const { kc } = loadKubeConfig(k?.kubeconfig, env, { ...client, limit });
  const namespace = heraldNamespace(env);
  const secrets = new SecretCache({ read: apiSecretReader(kc, namespace, forbidden), namespace });
  // This node's Node by name; every Node (trimmed at ingestion) only while maxNodesPerVip, from the file or a
  // BGPAdvertisement, needs them (docs/decisions.md "Node watch"). The status writer reads them itself while it leads.
  // Test hook (docs/development.md): HERALD_TEST_MIN_WATCH_TIMEOUT_SEC=N makes every watch ask for N to 2N seconds.
  const minWatch = Number(env['HERALD_TEST_MIN_WATCH_TIMEOUT_SEC'] ?? '');
  const watch = Number.isFinite(minWatch) && minWatch > 0 ? { minWatchTimeoutSec: minWatch } : {};
  const kube = new KubernetesSource({ kc, heraldNamespace: namespace, nodeName, allNodes: boundsFanOut(cfg.advertisements), ...watch });
  return { source: kube, kube, kc, secrets, namespace };
}

/**
 * An expected start failure (a user error: port in use, no permission, a missing file) is logged as message and
 * code only; anything else is a bug and keeps its stack.
 */
function startErrorLog(err: unknown): object {
  const e = err as NodeJS.ErrnoException;
  if (err instanceof MappingError || err instanceof ConfigError) return { errors: err.issues.map((i) => `${i.path}: ${i.message}`) };
  if (typeof e?.code === 'string' && /^E[A-Z]+$/.test(e.code)) return { error: e.message, code: e.code };
  return { err };
}

function fileStamp(path: string): string {
  try {
    const st = statSync(path);
    return `${st.mtimeMs}:${st.size}:${st.ino}`;
  } catch {
    return 'missing';
  }
}

/**
 * Run the daemon until a stop signal.
 * @returns the process exit code (0 after a clean stop, 1 when it could not start)
 */
export async function runDaemon(opts: RunOptions): Promise<number> {
  const env = opts.env ?? process.env;
  let config: Config;
  // Reloads of the same content (SIGHUP and the file watcher seeing one change) parse it once.
  const configFile = new ConfigFile(opts.configPath, { env });
  // Stamped before the first read, so a change made while Herald starts is reloaded after it (a
  // stamp taken later would hide it; reading the same content twice is a no-op).
  let stamp = fileStamp(opts.configPath);
  try {
    config = await configFile.load();
  } catch (err) {
    process.stderr.write(`herald run: ${(err as Error).message}\n`);
    return 1;
  }
  const logOpts = { level: config.logLevel, base: { pid: process.pid }, timestamp: pino.stdTimeFunctions.isoTime };
  const log = opts.logStream ? pino(logOpts, opts.logStream) : pino(logOpts);
  let identity;
  let metricsAt: ListenerAddress | undefined;
  try {
    identity = resolveIdentity(config, { ...(opts.nodeName !== undefined ? { nodeName: opts.nodeName } : {}), ...(opts.nodeIp !== undefined ? { nodeIp: opts.nodeIp } : {}), env }, hostname());
    metricsAt = metricsListener(config, identity);
  } catch (err) {
    process.stderr.write(`herald run: ${(err as Error).message}\n`);
    return 1;
  }
  const version = await packageVersion();
  const metrics = new HeraldMetrics({ version });
  // Password and token files, read ahead by the bounded reader (never a blocking read on this thread).
  let secretFiles = await readSecretFiles(config);

  // Graceful Restart: did we run within the restart window?
  const windowSec = Math.max(0, ...config.peers.map((p) => (p.gracefulRestart?.enabled ? p.gracefulRestart.restartTime : 0)));
  const restart = readRestartInfo(config.stateDir, windowSec, Date.now());
  // Warned once per distinct problem (the heartbeat runs every 5 s), and once more when it is solved.
  let heartbeatProblem: string | undefined;
  const heartbeat = () => {
    try {
      writeHeartbeat(config.stateDir, Date.now());
      if (heartbeatProblem !== undefined) log.info({ stateDir: config.stateDir }, 'state file written again');
      heartbeatProblem = undefined;
    } catch (err) {
      const problem = (err as Error).message;
      if (problem !== heartbeatProblem) log.warn({ stateDir: config.stateDir, err: problem, code: (err as NodeJS.ErrnoException).code }, 'cannot write state file (graceful restart detection and drain persistence disabled; warned once)');
      heartbeatProblem = problem;
    }
  };

  const health = new HealthManager({
    flapControl: flapControlFromConfig(config.flapControl),
    probe: async (spec, signal) => {
      const r = await probeCheck(spec, signal);
      metrics.observeHealthCheck(r.ok ? 'ok' : (r.code ?? 'error'), r.latencyMs / 1000);
      return r;
    },
  });

  // Kubernetes writes refused by RBAC: warned once each, shown in `herald status` until they succeed.
  const forbidden = new ForbiddenCalls({
    onForbidden: (c) => log.warn({ call: c.call, err: c.message }, 'Kubernetes API call forbidden (403): grant it in the RBAC rules (deploy/kubernetes/rbac.yaml)'),
    onAllowed: (call) => log.info({ call }, 'Kubernetes API call allowed again'),
  });
  let daemon: Daemon;
  let source: Source | undefined;
  let kube: KubernetesSource | undefined;
  let kc: KubeClient | undefined;
  let secrets: SecretCache | undefined;
  let nodeStatus: NodeStatusWriter | undefined;
  let objectStatus: ObjectStatusWriter | undefined;
  // Starts the allocator when the configuration in force first has a pool (set once the daemon has started).
  let checkAllocator: () => void = () => undefined;
  let allocator: RunningAllocator | undefined;
  let admin: FastifyInstance | undefined;
  let metricsServer: FastifyInstance | undefined;
  try {
    let namespace: string | undefined;
    ({ source, kube, kc, secrets, namespace } = await createSource(config, env, forbidden, { role: 'speaker', version, observer: metrics.kubernetesObserver() }, identity.nodeName));
    // Kubernetes Events on a Service when this node's announcement of it changes (rate-limited, de-duplicated).
    let onDecisions: ((d: DecisionSet, c: DecisionChanges) => void) | undefined;
    if (kc) {
      const { EventRecorder, KubernetesEventSink } = await import('../events/recorder.ts');
      const { AnnouncementEvents } = await import('./service-events.ts');
      const recorder = new EventRecorder(new KubernetesEventSink(kc, 'herald', identity.nodeName, forbidden), {
        onError: (err, e) => log.debug({ err: (err as Error).message, service: e.service }, 'cannot record event'),
        onDropped: (_e, reason) => metrics.kubernetesEventsDropped.inc({ component: 'herald', reason }),
      });
      // Refusals are the same on every node: the status writer's Lease holder posts them (one writer).
      const events = new AnnouncementEvents(identity.nodeName, recorder, { refusals: () => objectStatus?.isLeader() ?? true });
      onDecisions = (d, c) => events.observe(d, c);
    }
    // Kubernetes: the drain is the Node annotation herald.io/drain (RBAC: patch nodes); standalone: stateDir.
    let drainRecord: DrainRecord = fileDrainRecord(config.stateDir);
    if (kc) {
      const { patchNodeAnnotation } = await import('../k8s/node-annotations.ts');
      const cluster = kc;
      drainRecord = annotationDrainRecord((value) => forbidden.track('patch nodes', () => patchNodeAnnotation(cluster, identity.nodeName, DRAIN_ANNOTATION, value)));
    }
    // The Speaker runs in its own worker thread: nothing on this thread can delay a KEEPALIVE or a hold timer.
    const { SpeakerProxy } = await import('../../bgp/main-thread.ts');
    daemon = new Daemon(config, identity, {
      createSpeaker: (o) => {
        const speaker = SpeakerProxy.start({ localAs: o.localAs, bgpIdentifier: o.bgpIdentifier, ...(o.listen ? { listen: o.listen } : {}), ...(o.deferListen ? { deferListen: true } : {}), ...(o.gracefulRestart ? { gracefulRestart: o.gracefulRestart } : {}) }, opts.speakerThread);
        // Its death closed every session: stop, so that the restart comes up as a graceful restart (docs/architecture.md "Threads").
        speaker.on('threadExit', () => void stop('speaker thread exited', EXIT_SPEAKER_THREAD));
        return speaker satisfies SpeakerLike;
      },
      health,
      ...(source ? { source } : {}),
      ...(secrets ? { secrets } : {}),
      logger: log,
      metrics,
      version,
      restarting: restart.restarting,
      env,
      ...(onDecisions ? { onDecisions } : {}),
      forbidden: () => [...forbidden.list(), ...(objectStatus?.forbidden() ?? [])],
      onStatusChange: () => {
        nodeStatus?.changed();
        checkAllocator();
      },
      drainRecord,
      secretFiles,
    });
    if (kc && namespace !== undefined) {
      // This node's BGPNodeStatus, at a bounded rate; a write that fails is warned once per distinct problem.
      const { NodeStatusWriter, apiNodeStatusSink, nodeStatusOf } = await import('../status/node-status.ts');
      const d = daemon;
      let lastProblem = '';
      nodeStatus = new NodeStatusWriter({
        build: () => nodeStatusOf(d.nodeStatusInput()),
        sink: apiNodeStatusSink(kc, namespace, identity.nodeName, () => source?.snapshot().node(identity.nodeName)?.metadata?.uid, forbidden),
        onError: (err) => {
          const problem = (err as Error).message;
          if (problem !== lastProblem) log.warn({ err: problem }, 'cannot write this node\'s BGPNodeStatus (retried; warned once)');
          lastProblem = problem;
        },
      });
    }
    if (kc && namespace !== undefined && source) {
      // The conditions of the configuration objects: written by the elected status writer only (src/status/).
      const { ObjectStatusWriter } = await import('../status/object-status-writer.ts');
      const { poolUsage } = await import('../ipam/usage.ts');
      const { parsePool } = await import('../ipam/pool.ts');
      const d = daemon;
      const s = source;
      objectStatus = new ObjectStatusWriter({
        kc,
        namespace,
        identity: identity.nodeName,
        source: s,
        merged: () => d.objects().merged,
        // Pools in force are valid (the schema checked their addresses); usage as the allocator counts it.
        poolUsage: () => poolUsage(s.snapshot().services(), (d.currentConfig.pools ?? []).map((p, i) => parsePool(p, i)), config.loadBalancerClass !== undefined ? { loadBalancerClass: config.loadBalancerClass } : {}),
        forbidden,
        log,
        onWrite: (kind, result) => metrics.objectStatusWrites.inc({ kind, result }),
      });
      const w = objectStatus;
      metrics.setStatusWriterProvider(() => w);
    }
  } catch (err) {
    const msg = err instanceof MappingError || err instanceof ConfigError ? err.message : `${(err as Error).message}`;
    log.fatal(startErrorLog(err), 'cannot start');
    process.stderr.write(`herald run: cannot start: ${msg}\n`);
    await health.close();
    secrets?.stop();
    return 1;
  }
  log.info({ version, node: identity.nodeName, routerId: identity.routerId, localAs: config.bgp.localAs, peers: config.peers.length, restarting: restart.restarting }, 'herald starting');

  let token = readToken(config, env, log, secretFiles);
  for (const w of placeholderWarnings(config, token, (p, i) => resolvePassword(p, i, env, secretFiles))) log.warn(w.fields, w.message);
  try {
    admin = await buildAdminServer({ view: daemon.view, token: () => token, logger: log.child({ component: 'admin' }) });
    await admin.listen({ host: config.admin.address, port: config.admin.port });
    const a = admin.server.address();
    log.info({ address: config.admin.address, port: typeof a === 'object' && a ? a.port : config.admin.port }, 'admin API listening');
  } catch (err) {
    log.fatal(startErrorLog(err), 'admin API cannot listen');
    process.stderr.write(`herald run: admin API cannot listen on ${config.admin.address}:${config.admin.port}: ${(err as Error).message}\n`);
    await daemon.shutdown('admin API failed');
    return 1;
  }
  if (metricsAt) {
    try {
      metricsServer = await buildMetricsServer({ text: () => daemon.view.metrics(), logger: log.child({ component: 'metrics' }), onRefused: (reason) => metrics.metricsRefused.inc({ reason }) });
      await metricsServer.listen({ host: metricsAt.address, port: metricsAt.port });
      const a = metricsServer.server.address();
      log.info({ address: metricsAt.address, port: typeof a === 'object' && a ? a.port : metricsAt.port }, 'metrics listening');
    } catch (err) {
      log.fatal(startErrorLog(err), 'metrics listener cannot listen');
      process.stderr.write(`herald run: metrics listener cannot listen on ${metricsAt.address}:${metricsAt.port}: ${(err as Error).message} (metrics.address, metrics.port)\n`);
      await admin.close().catch(() => undefined);
      await daemon.shutdown('metrics listener failed');
      return 1;
    }
  }

  // Signals are handled from here on, also while starting: a reload asked for during start runs
  // after it; a stop waits for it.
  let markStarted!: () => void;
  const started = new Promise<void>((resolve) => (markStarted = resolve));
  let reloading: Promise<void> = started;
  const reload = (why: string) => {
    reloading = reloading.then(async () => {
      log.info({ why, file: opts.configPath }, 'reloading configuration');
      let next: Config;
      try {
        const changed = await configFile.reload();
        if (changed === undefined) {
          log.info({ file: opts.configPath }, 'configuration unchanged since it was last read: nothing to reload');
          return;
        }
        next = changed;
      } catch (err) {
        const issues = err instanceof ConfigError ? err.issues.map((i) => `${i.path}: ${i.message}`) : [(err as Error).message];
        log.error({ errors: issues }, 'new configuration rejected; running configuration kept');
        daemon.reloadRejected(issues);
        return;
      }
      try {
        const files = await readSecretFiles(next, daemon.currentConfig);
        daemon.reload(next, files);
        kube?.setAllNodes(boundsFanOut(next.advertisements));
        secretFiles = files;
        token = readToken(daemon.currentConfig, env, log, secretFiles);
        if (daemon.view.status().lastReload?.ok === false) configFile.forget(); // its routes failed: the same file may be retried
      } catch (err) {
        configFile.forget(); // e.g. a password file not there yet: the same file may be retried
        const issues = err instanceof MappingError ? err.issues.map((i) => `${i.path}: ${i.message}`) : [(err as Error).message];
        log.error({ errors: issues }, 'new configuration rejected; running configuration kept');
        daemon.reloadRejected(issues);
      }
    });
  };
  let hbTimer: NodeJS.Timeout | undefined;
  let watchTimer: NodeJS.Timeout | undefined;
  let resolveDone!: (code: number) => void;
  const done = new Promise<number>((resolve) => (resolveDone = resolve));
  let stopped = false;
  const stop = async (why: string, exitCode = 0) => {
    if (stopped) {
      if (why === 'SIGTERM' || why === 'SIGINT') {
        log.warn({ signal: why }, 'second signal during shutdown: exiting now');
        log.flush?.();
        process.exit(1);
      }
      return;
    }
    stopped = true;
    if (hbTimer) clearInterval(hbTimer);
    if (watchTimer) clearInterval(watchTimer);
    await reloading.catch(() => undefined);
    await allocator?.stop().catch(() => undefined);
    await objectStatus?.stop().catch(() => undefined);
    nodeStatus?.stop();
    await daemon.shutdown(why);
    secrets?.stop();
    heartbeat();
    await admin?.close().catch(() => undefined);
    await metricsServer?.close().catch(() => undefined);
    process.off('SIGTERM', onTerm);
    process.off('SIGINT', onInt);
    process.off('SIGHUP', onHup);
    removeBlockHook?.();
    log.info({ exitCode }, 'stopped');
    log.flush?.();
    resolveDone(exitCode);
  };
  const onTerm = () => void stop('SIGTERM');
  const onInt = () => void stop('SIGINT');
  const onHup = () => reload('SIGHUP');
  process.on('SIGTERM', onTerm);
  process.on('SIGINT', onInt);
  process.on('SIGHUP', onHup);
  const removeBlockHook = installBlockHook(env, log);
  opts.stopSignal?.then(() => stop('stop requested'));

  // The first route set, then the peers and the BGP listener (docs/sessions.md "Start-up order"), once the admin API
  // is built: the speaker thread then sends the table while this thread is idle (docs/benchmarks.md "Daemon").
  try {
    await daemon.start();
  } catch (err) {
    log.error({ err }, 'start failed; continuing (see /readyz)');
  }
  markStarted();
  if (!stopped) objectStatus?.start();
  // LoadBalancer IPAM needs the apiserver (it writes Service status): pools with another source are reported and
  // ignored. With it, the allocator starts once the configuration in force (the file's pools and IPAddressPool
  // objects) has a pool, and reads the pools in force at every pass.
  const startAllocatorOnce = async () => {
    if (stopped || allocator !== undefined || !kc || !source || (daemon.currentConfig.pools ?? []).length === 0) return;
    try {
      const { startAllocator } = await import('../ipam/run.ts');
      if (stopped || allocator !== undefined) return;
      allocator = startAllocator({
        kc,
        source,
        pools: () => daemon.currentConfig.pools ?? [],
        nodeName: identity.nodeName,
        log,
        env,
        forbidden,
        onEventDropped: (reason) => metrics.kubernetesEventsDropped.inc({ component: 'herald-allocator', reason }),
        ...(config.loadBalancerClass !== undefined ? { loadBalancerClass: config.loadBalancerClass } : {}),
      });
      metrics.setAllocatorProvider(() => allocator);
    } catch (err) {
      log.error({ err: (err as Error).message }, 'cannot start the LoadBalancer allocator; announcing continues');
    }
  };
  if (!stopped && config.pools && config.pools.length > 0 && !kc) log.warn('pools are configured but need source.kubernetes: no LoadBalancer addresses are allocated');
  await startAllocatorOnce();
  checkAllocator = () => void startAllocatorOnce();
  if (!stopped) {
    heartbeat();
    hbTimer = setInterval(heartbeat, opts.heartbeatIntervalMs ?? 5000);
    hbTimer.unref();
    // Reload when the file changes (polling also sees ConfigMap symlink swaps).
    const watchMs = opts.watchIntervalMs ?? 2000;
    if (watchMs > 0) {
      watchTimer = setInterval(() => {
        const st = fileStamp(opts.configPath);
        if (st !== stamp) {
          stamp = st;
          if (st !== 'missing') reload('file changed');
        }
      }, watchMs);
      watchTimer.unref();
    }
  }
  return done;
}
