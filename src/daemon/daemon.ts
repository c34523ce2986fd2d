/**
 * The running daemon: the pipeline's stages, built and wired (docs/architecture.md "The daemon's pipeline"):
 *
 *   ConfigInForce ──changes──▶ Daemon ──▶ peers, contexts, gate inputs
 *   source ─▶ Controller ─▶ Pipeline (HealthGate ─▶ RouteAssembly) ─▶ Speaker
 *
 * The configuration in force (config-in-force.ts: the file merged with Herald's objects and Secrets) hands each change
 * to the daemon, which puts it in force: peers as a diff, the controller's context, the gate's inputs; the passes
 * themselves are the pipeline's (pipeline.ts). Beside them: the peer set (peer-set.ts), the BGP listener's retries
 * (listener-retry.ts), the drain (drain.ts), End-of-RIB (initial-sync.ts), the admin view (admin-view.ts), and the
 * lifecycle here: start, reload (restart-only settings kept and reported), drain and undrain (RFC 8326), shutdown.
 */
import { isDeepStrictEqual } from 'node:util';
import type { Logger } from 'pino';
import type { Clock, StopOutcome } from '../../bgp/main-thread.ts';
import { realClock } from '../../bgp/main-thread.ts';
import type { Config } from '../config/schema.ts';
import type { SecretFileTexts } from '../config/secrets.ts';
import type { MergedConfig } from '../crd/merge.ts';
import type { SecretLookup } from '../k8s/secrets.ts';
import type { RuntimeIdentity } from '../config/load.ts';
import { Controller } from '../controller/controller.ts';
import type { Quarantine } from '../controller/quarantine.ts';
import type { HealthLike } from '../health/types.ts';
import type { HeraldMetrics } from '../metrics/metrics.ts';
import type { Source } from '../sources/source.ts';
import { NotFoundError } from '../admin/view.ts';
import { AdminView, handledVips, refusedInputs } from './admin-view.ts';
import { checkContext } from './check-specs.ts';
import { ConfigInForce } from './config-in-force.ts';
import type { ConfigChange, InForce } from './config-in-force.ts';
import type { ConfigDiff } from './diff.ts';
import type { DecisionChanges, DecisionSet } from './health-gate.ts';
import { HealthGate } from './health-gate.ts';
import { DrainControl } from './drain.ts';
import type { DrainRecord } from './drain.ts';
import { InitialSync } from './initial-sync.ts';
import type { ListenBackoff } from './listener-retry.ts';
import { ListenerRetry } from './listener-retry.ts';
import { desiredRoutesContext, gracefulShutdownConfigured } from './mapping.ts';
import type { SessionIdentity } from '../config/peer-fields.ts';
import { loggedQuarantine, Pipeline } from './pipeline.ts';
import { gracefulWait, stopPlan } from './stop-mode.ts';
import { followsNodeLabels, PeerSet, resolvePeers } from './peer-set.ts';
import { RouteAssembly } from './route-assembly.ts';
import type { SpeakerFactory, SpeakerLike, ThreadExitEvent } from './speaker-like.ts';

/** Dependencies of {@link Daemon}; everything external is injected. */
export interface DaemonDeps {
  createSpeaker: SpeakerFactory;
  health: HealthLike;
  /** The object source, when the config has one (created by the caller from `config.source`). */
  source?: Source;
  logger: Logger;
  metrics: HeraldMetrics;
  version: string;
  /** Set the R bit (we restarted within the Graceful Restart window). */
  restarting: boolean;
  env?: NodeJS.ProcessEnv;
  clock?: Clock;
  /** Backoff of BGP listener bind retries (default 1 s doubling to 30 s). */
  listenRetry?: ListenBackoff;
  /** Called after every pass that changed decisions (e.g. to post Kubernetes Events on changes). */
  onDecisions?: (decisions: DecisionSet, changes: DecisionChanges) => void;
  /** Something this node's status shows may have changed (a session or BFD state, decisions, objects): node-status.ts. */
  onStatusChange?: () => void;
  /** Kubernetes writes refused with 403 ("call: message"; src/k8s/forbidden.ts), for status().forbidden. */
  forbidden?: () => readonly string[];
  /** Passwords of peers' `passwordSecret` (the Kubernetes source); its changes are applied as an object change is. */
  secrets?: SecretLookup & { on(event: 'change', listener: () => void): unknown };
  /** Where the operator's drain is kept (drain.ts: the Node annotation, or stateDir); default: in memory only. */
  drainRecord?: DrainRecord;
  /** The configuration's secret files, read ahead (src/config/secrets.ts `readSecretFiles`); default none read. */
  secretFiles?: SecretFileTexts;
}

/** What the daemon knows of Herald's objects, for the node's status and the leader's conditions. */
export interface ObjectsView {
  readonly merged: MergedConfig;
  /** Peers of the merged configuration this node does not run, and why (a Secret not readable). */
  readonly problems: readonly string[];
}

/** See the module comment. */
export class Daemon {
  readonly identity: RuntimeIdentity;
  /** The daemon as the admin API sees it. */
  readonly view: AdminView;
  /** The file merged with Herald's objects: what is in force. */
  readonly #inForce: ConfigInForce;
  /** Peers left out by the last resolution, "peer: why". */
  #peerProblems: string[] = [];
  readonly #deps: DaemonDeps;
  readonly #log: Logger;
  readonly #clock: Clock;
  readonly #env: NodeJS.ProcessEnv;
  readonly #speaker: SpeakerLike;
  /** Objects the controller or the health gate cannot use, treated as absent (src/controller/quarantine.ts). */
  readonly #quarantine: Quarantine;
  /** Why the speaker thread died, once it has (a readiness reason; `herald run` then stops). */
  #speakerFailure: string | undefined;
  readonly #peers: PeerSet;
  readonly #gate: HealthGate;
  readonly #assembly: RouteAssembly;
  readonly #listener: ListenerRetry;
  readonly #initialSync: InitialSync;
  readonly #drains: DrainControl;
  readonly #pipeline: Pipeline;
  readonly #controller: Controller | undefined;
  #stopping = false;

  /**
   * Build the stages and the peers. Does not run the pipeline yet: call {@link start}.
   * @throws MappingError when a peer password cannot be resolved
   */
  constructor(config: Config, identity: RuntimeIdentity, deps: DaemonDeps) {
    this.identity = identity;
    this.#deps = deps;
    this.#log = deps.logger;
    this.#clock = deps.clock ?? realClock;
    this.#env = deps.env ?? process.env;
    const { source, secrets, metrics } = deps;
    this.#inForce = new ConfigInForce({ file: config, ...(deps.secretFiles ? { files: deps.secretFiles } : {}), nodeName: identity.nodeName, ...(source ? { source } : {}), ...(secrets ? { secrets } : {}), log: this.#log, metrics, clock: this.#clock, onObjectsRead: () => deps.onStatusChange?.() });
    const startedAtMs = this.#clock.now();
    const peers = this.#resolvePeers(this.#inForce.merged, this.#inForce.files); // throws before anything starts
    const speaker = deps.createSpeaker({
      localAs: config.bgp.localAs,
      bgpIdentifier: identity.routerId,
      ...(config.bgp.listen ? { listen: { address: config.bgp.listen.address, port: config.bgp.listen.port }, deferListen: true } : {}),
      gracefulRestart: { restarting: deps.restarting },
    });
    this.#speaker = speaker;
    this.#peers = new PeerSet({ speaker, log: this.#log, metrics, clock: this.#clock });
    this.#quarantine = loggedQuarantine(this.#clock, this.#log, metrics);
    const schedule = (why: string) => () => this.#pipeline.schedule(why);
    this.#gate = new HealthGate({ health: deps.health, log: this.#log, inputs: { checks: checkContext(config, identity, undefined), routes: config.routes }, onVerdictsChanged: schedule('health'), quarantine: this.#quarantine });
    this.#assembly = new RouteAssembly(speaker, { clock: this.#clock, attributeChangeIntervalMs: config.attributeChangeInterval * 1000, onDue: schedule('held attribute changes due') });
    this.#listener = new ListenerRetry({ speaker, log: this.#log, ...(deps.listenRetry ? { backoff: deps.listenRetry } : {}), clock: this.#clock });
    this.#initialSync = new InitialSync({ markDone: () => speaker.markInitialSyncDone(), recheck: schedule('health checks settle deadline'), log: this.#log, clock: this.#clock });
    this.#drains = new DrainControl({
      speaker,
      log: this.#log,
      record: deps.drainRecord,
      nodeName: identity.nodeName,
      waitSec: () => (this.#established() ? gracefulWait(this.#inForce.config).waitTimeSec : 0),
      departureDrains: () => gracefulShutdownConfigured(this.#inForce.config),
      onChange: () => {
        metrics.drained.set(this.#drains.sources.length > 0 ? 1 : 0);
        metrics.nodeDeparting.set(this.#drains.departing !== undefined ? 1 : 0);
      },
    });
    this.#pipeline = new Pipeline({
      identity,
      config: this.#inForce.config,
      gate: this.#gate,
      assembly: this.#assembly,
      drains: this.#drains,
      initialSync: this.#initialSync,
      log: this.#log,
      metrics,
      hasSource: source !== undefined,
      beforePass: () => {
        // Node labels may have changed: peers selected by nodeSelector come and go.
        if (source && followsNodeLabels(this.#inForce.config)) this.#refreshPeers(this.#inForce.merged, this.#inForce.files);
      },
      onDecisions: (decisions, changes) => {
        deps.onDecisions?.(decisions, changes);
        deps.onStatusChange?.();
      },
    });
    this.view = new AdminView({
      version: deps.version, identity, clock: this.#clock, startedAtMs, speaker, peers: this.#peers, decisions: this.#gate, health: deps.health, metrics, source,
      inForce: this.#inForce, assembly: this.#assembly, drains: this.#drains, quarantine: this.#quarantine, listener: this.#listener, initialSync: this.#initialSync,
      daemon: {
        speakerFailure: () => this.#speakerFailure,
        stopping: () => this.#stopping,
        forbidden: () => [...(deps.forbidden?.() ?? [])],
        resetPeer: (name, soft) => this.resetPeer(name, soft),
        drain: (reason) => this.drain(reason),
        undrain: () => this.undrain(),
      },
    });
    if (source) {
      const pipeline = this.#pipeline;
      this.#controller = new Controller({ source, quarantine: this.#quarantine, context: desiredRoutesContext(config, identity.nodeName), sink: { onCandidates: (c, changes) => pipeline.onCandidates(c, changes) } });
    }
    this.#subscribe();
    this.#peers.apply(peers);
    metrics.observeConfigLoaded(startedAtMs);
  }

  /** The events that feed the stages: speaker → peer set (sessions, BFD), logs and metrics; source → peers by node labels, metrics; the configuration's changes. */
  #subscribe(): void {
    const { metrics } = this.#deps;
    const speaker = this.#speaker;
    this.#peers.follow(speaker, () => this.#deps.onStatusChange?.());
    speaker.on('error', (err: unknown) => {
      // A listener that cannot bind is reported (once per attempt, without a stack) by the listener retry.
      if ((err as NodeJS.ErrnoException | undefined)?.syscall === 'listen') return;
      this.#log.error({ err }, 'speaker error');
    });
    speaker.on('drained', () => this.#log.info('drain finished: every route withdrawn'));
    speaker.on('threadExit', (e: ThreadExitEvent) => {
      this.#speakerFailure = e.message;
      this.#log.fatal({ err: e.message }, 'the speaker thread died: every BGP session is closed');
      this.#deps.onStatusChange?.();
    });
    metrics.setPeersProvider(() => this.view.peers());
    metrics.setVipsProvider(() => handledVips(this.view.services()));
    metrics.setRefusalsProvider(() => refusedInputs(this.view.services()));
    this.#inForce.listen({ apply: (change) => this.#apply(change), refresh: (merged, files) => this.#refreshPeers(merged, files) });
    const source = this.#deps.source;
    if (!source) return;
    this.#controller?.on('error', (key: string, err: unknown) => this.#log.warn({ key, err }, 'controller error (retried)'));
    source.on('synced', () => this.#log.info('source synced'));
    // Herald's objects change the configuration. Registered before the controller's own 'synced' listener (it
    // subscribes in start()): the objects read while syncing are in the context of its first full pass.
    this.#inForce.follow();
    // Node labels may select or deselect peers (nodeSelector).
    source.on('change', () => {
      if (followsNodeLabels(this.#inForce.config)) this.#pipeline.schedule('source');
    });
  }

  /**
   * The first pass, then the peers and the BGP listener, then the source; resolves once the listener is bound, or
   * once its first bind failed (binding is then retried, see listener-retry.ts). Never rejects for a bind failure.
   *
   * Order (docs/sessions.md "Start-up order"): the first route set is handed to the speaker before any peer is added
   * or the listener bound, so a session never comes up to an empty table and waits for it; End-of-RIB still waits
   * for the first complete set (initial-sync.ts: with a source, the pass after it synced).
   */
  async start(): Promise<void> {
    this.#drains.start(this.#inForce.config.stateDir);
    this.#pipeline.run('start', { full: true });
    this.#peers.open();
    const bound = this.#listener.start();
    if (this.#controller) await this.#controller.start();
    await bound;
  }

  /** Resolves when the controller has nothing queued and a scheduled pass has run (tests). */
  async idle(): Promise<void> {
    await this.#controller?.whenIdle();
    await new Promise((r) => setImmediate(r));
  }

  /** Test hook: work done by passes (full and incremental passes, Services gated, Routes made, checks recomputed). */
  get reconcileStats(): { full: number; incremental: number; servicesApplied: number; routesMade: number; attributeChangesHeld: number; specsComputed: number; setChecks: number } {
    return { ...this.#pipeline.passes, ...this.#gate.stats, ...this.#assembly.stats };
  }

  /**
   * Put a change of the configuration in force (config-in-force.ts): peers as a diff, the controller's context and
   * the gate's inputs when they changed; the next pass is full. A change of the objects runs it now; a reload's
   * caller does. @throws MappingError (nothing applied) when a peer's password file or variable cannot be read
   */
  #apply(change: ConfigChange): void {
    const { merged, previous, diff: d } = change;
    const peers = this.#resolvePeers(merged, change.files); // may throw: nothing applied yet
    if (d.logLevelChanged) this.#log.level = merged.config.logLevel;
    this.#peers.apply(peers);
    const departureChanged = gracefulShutdownConfigured(previous) !== gracefulShutdownConfigured(merged.config);
    if (d.policyChanged || d.healthChanged || departureChanged) this.#controller?.setContext(desiredRoutesContext(merged.config, this.identity.nodeName));
    this.#pipeline.configure(merged.config);
    if (change.why !== 'reload') this.#pipeline.run(change.why);
  }

  /** The peers this node runs for `merged` again (node labels, a Secret now readable). Never throws. */
  #refreshPeers(merged: MergedConfig, files: SecretFileTexts): void {
    try {
      this.#peers.apply(this.#resolvePeers(merged, files));
    } catch (err) {
      this.#log.error({ err }, 'cannot apply peers');
    }
  }

  /** This node's peers for `merged`, with its override's AS number and router ID; peers left out are recorded. */
  #resolvePeers(merged: MergedConfig, files: SecretFileTexts): ReturnType<typeof resolvePeers> {
    const o = merged.override;
    const node: SessionIdentity = {
      ...(o?.localAs !== undefined ? { localAs: o.localAs } : {}),
      ...(o?.routerId !== undefined && o.routerId !== this.identity.routerId ? { bgpIdentifier: o.routerId } : {}),
    };
    const problems: string[] = [];
    const labels = this.#deps.source?.snapshot().node(this.identity.nodeName)?.metadata?.labels ?? {};
    const peers = resolvePeers(merged.config, labels, this.#env, {
      node,
      files,
      ...(o?.sourceAddresses !== undefined ? { sourceAddresses: o.sourceAddresses } : {}),
      ...(this.#deps.secrets ? { secrets: this.#deps.secrets } : {}),
      skipped: (peer, problem) => problems.push(`${peer}: ${problem}`),
    });
    if (!isDeepStrictEqual(problems, this.#peerProblems)) {
      for (const p of problems) this.#log.warn({ peer: p.slice(0, p.indexOf(':')), problem: p.slice(p.indexOf(':') + 2) }, 'peer not run until its password can be read');
    }
    this.#peerProblems = problems;
    return peers;
  }

  /** Herald's objects as this node merged them, and the peers it cannot run (node status, the leader's conditions). */
  objects(): ObjectsView {
    return { merged: this.#inForce.merged, problems: [...this.#peerProblems] };
  }

  /** The configuration in force: the file merged with the objects (config-in-force.ts). */
  get inForce(): InForce {
    return this.#inForce;
  }

  /** Current configuration (after reloads). */
  get currentConfig(): Config {
    return this.#inForce.config;
  }

  /**
   * Apply a validated configuration. Peer passwords are resolved first; on failure nothing changes.
   * @param files its secret files, read ahead (src/config/secrets.ts `readSecretFiles`; default: those read before)
   * @returns the diff that was applied
   * @throws MappingError (nothing applied)
   */
  reload(next: Config, files?: SecretFileTexts): ConfigDiff {
    const d = this.#inForce.reload(next, files); // may throw: nothing applied
    // A reload whose routes cannot be applied is reported as failed, with the cause.
    const applied = this.#pipeline.run('reload');
    this.#inForce.reloaded(d, applied ? undefined : (this.#pipeline.lastError ?? 'unknown error'));
    return d;
  }

  /** Record a rejected reload (invalid file): the running config stays. */
  reloadRejected(errors: string[]): void {
    this.#inForce.rejected(errors);
  }

  /**
   * Stop everything in the mode the node's state calls for (stop-mode.ts, docs/decisions.md "Stop modes"): a
   * restart keeps the routers' forwarding state, a departure moves traffic away first (the speaker's drain when it
   * has not run, then Cease / Hard Reset). The log line says which mode and why; the next one how each peer's
   * session ended. Idempotent.
   * @param reason what asked for the stop (`SIGTERM`, `admin API failed`, ...)
   */
  async shutdown(reason: string): Promise<StopOutcome | undefined> {
    if (this.#stopping) return undefined;
    this.#stopping = true;
    this.#inForce.stop();
    this.#pipeline.stop();
    this.#listener.stop();
    this.#initialSync.stop();
    this.#assembly.close();
    const plan = stopPlan(this.#inForce.config, { reason, drained: this.#drains.drained, departing: this.#drains.departing, withdrawn: this.#drains.phase === 'withdrawn', established: this.#established() });
    this.#log.info(plan.log, plan.line);
    let outcome: StopOutcome | undefined;
    try {
      outcome = await this.#speaker.stop(plan.stop);
      const { mode } = plan.stop;
      this.#log.info({ mode, peers: outcome.peers }, `BGP sessions ended (${mode}): ${outcome.peers.map((p) => `${p.peer} ${p.ending}`).join(', ') || 'no peers'}`);
    } catch (err) {
      this.#log.warn({ err }, 'speaker stop failed');
    }
    await this.#deps.health.close().catch(() => undefined);
    if (this.#controller) await this.#controller.stop().catch(() => undefined);
    else await this.#deps.source?.stop().catch(() => undefined);
    return outcome;
  }

  /** Soft (ROUTE-REFRESH resend) or hard reset of one session. @throws NotFoundError for an unknown peer */
  async resetPeer(name: string, soft: boolean): Promise<void> {
    if (!this.#peers.has(name)) throw new NotFoundError(`no peer named "${name}"`);
    this.#log.info({ peer: name, soft }, 'peer reset requested');
    this.#speaker.resetPeer(name, { soft });
  }

  /**
   * The operator's drain (RFC 8326; drain.ts): recorded where the node keeps it (the Node annotation, or stateDir),
   * then the speaker drains. Returns what was done. @throws Error naming the fix when it cannot be recorded
   */
  async drain(reason?: string): Promise<string> {
    this.#log.info({ reason }, 'drain requested');
    return this.#drains.drain(reason);
  }

  /** Ends the operator's drain (a departing node stays drained). @throws Error naming the fix */
  async undrain(): Promise<string> {
    this.#log.info('undrain requested');
    return this.#drains.undrain();
  }

  /**
   * Some session is Established. The RFC 8326 wait lets peers move traffic away before the withdrawal: with no
   * Established session there is nothing to move, so a stop or drain right after start does not wait for nothing.
   */
  #established(): boolean {
    return this.#speaker.peers().some((p) => p.state === 'Established');
  }
}
