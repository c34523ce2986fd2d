/**
 * The running daemon: the composition root. It builds the stages, wires their events, and runs the pipeline
 * (docs/architecture.md "The daemon's pipeline"):
 *
 *   source ─▶ Controller ─▶ HealthGate ─▶ RouteAssembly ─▶ Speaker
 *   (objects)  (candidates)  (verdicts)     (merged routes)   (sessions)
 *
 * One pass (`#run`) takes what changed since the last one (the controller's candidate changes, the health checker's
 * verdict changes) through the gate and route assembly to the speaker, so one EndpointSlice change costs O(Services
 * it touches). Everything is recomputed on start, reload, a full candidate set (first set, this node changed,
 * context change, resync) and after a failed pass. Passes are coalesced: bursts of changes cost one pass on the next
 * turn of the event loop. End-of-RIB waits for the first complete pass (initial-sync.ts).
 *
 * Beside the pipeline: the peer set (peer-set.ts), the BGP listener's retries (listener-retry.ts), the admin view
 * (admin-view.ts), and the lifecycle here: reload (peers as a diff, restart-only settings kept and reported), drain
 * and undrain (RFC 8326), shutdown.
 *
 * The configuration in force is the file's merged with Herald's objects from the source (src/crd/merge.ts,
 * docs/decisions.md "Configuration sources"): a change of an object takes the reload's path (`#apply`), so only what
 * changed reaches the sessions. Objects read before the source has synced are applied once, just before the
 * controller's first full pass.
 */
import { performance } from 'node:perf_hooks';
import { isDeepStrictEqual } from 'node:util';
import type { Logger } from 'pino';
import type { Clock, StopOutcome } from '../../bgp/main-thread.ts';
import { realClock } from '../../bgp/main-thread.ts';
import type { Config } from '../config/schema.ts';
import type { SecretFileTexts } from '../config/secrets.ts';
import type { ConfigObjects, MergedConfig } from '../crd/merge.ts';
import { mergeConfig, NO_OBJECTS } from '../crd/merge.ts';
import { noAddressSpaceNote } from '../config/notes.ts';
import { HERALD_KEY_PREFIX } from '../k8s/keys.ts';
import type { SecretLookup } from '../k8s/secrets.ts';
import type { NodeStatusInput } from '../status/node-status.ts';
import type { RuntimeIdentity } from '../config/load.ts';
import type { CandidateSet } from '../controller/controller.ts';
import { Controller } from '../controller/controller.ts';
import { Quarantine } from '../controller/quarantine.ts';
import type { HealthLike } from '../health/types.ts';
import { formatAnnotationErrors } from '../k8s/annotations.ts';
import type { HeraldMetrics } from '../metrics/metrics.ts';
import type { Source } from '../sources/source.ts';
import type { StatusView } from '../admin/view.ts';
import { NotFoundError } from '../admin/view.ts';
import { AdminView, handledVips, refusedInputs } from './admin-view.ts';
import { checkContext } from './check-specs.ts';
import { diffConfig, effectiveReloadConfig } from './diff.ts';
import type { ConfigDiff } from './diff.ts';
import type { DecisionChanges, DecisionSet, GateInputs } from './health-gate.ts';
import { HealthGate } from './health-gate.ts';
import { DrainControl } from './drain.ts';
import type { DrainRecord } from './drain.ts';
import { InitialSync } from './initial-sync.ts';
import type { ListenBackoff } from './listener-retry.ts';
import { ListenerRetry } from './listener-retry.ts';
import { desiredRoutesContext, gracefulShutdownConfigured } from './mapping.ts';
import { decideStopMode } from './stop-mode.ts';
import { followsNodeLabels, PeerSet, resolvePeers } from './peer-set.ts';
import type { SessionIdentity } from './mapping.ts';
import { RouteAssembly } from './route-assembly.ts';
import type { BfdStateEvent, PeerStateEvent, SpeakerFactory, SpeakerLike, ThreadExitEvent, UnsentRoutesEvent, UpdateSentEvent } from './speaker-like.ts';

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
  /** The configuration file (restart-only settings as running). */
  #file: Config;
  /** The file merged with Herald's objects: what is in force. */
  #merged: MergedConfig;
  /** `#merged.config`. */
  #config: Config;
  /** Objects changed before the source synced: applied on 'synced'. */
  #objectsPending = false;
  #objectsQueued = false;
  /** The invalid objects last logged: "Kind/name" → their problems. */
  #verdictsLogged = new Map<string, string>();
  /** Peers left out by the last resolution, "peer: why". */
  #peerProblems: string[] = [];
  readonly #deps: DaemonDeps;
  readonly #log: Logger;
  readonly #clock: Clock;
  readonly #env: NodeJS.ProcessEnv;
  /** The secret files of the configuration in force, read ahead (replaced by each reload). */
  #secretFiles: SecretFileTexts;
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
  readonly #controller: Controller | undefined;
  /** The controller's latest candidates (undefined until the source has synced). */
  #candidates: CandidateSet | undefined;
  /** Candidate changes not yet taken through the pipeline. */
  readonly #pending = { all: true, services: new Set<string>(), serviceCIDRs: true };
  /** The next pass recomputes everything (start, reload, after a failed pass). */
  #fullNext = true;
  #runQueued = false;
  /** JSON of the Node addresses the gate's inputs were built from. */
  #nodeAddressesText = 'null';
  #stopping = false;
  #lastReload: StatusView['lastReload'];
  /** Message of the last failed pass. */
  #runError: string | undefined;
  readonly #passes = { full: 0, incremental: 0 };
  /** The configuration in force allows no LoadBalancer or external address (logged when it became so). */
  #noAddressSpace = false;
  /** The annotation errors last logged per Service ("ns/name" → their text). */
  readonly #annotationErrors = new Map<string, string>();

  /**
   * Build the stages and the peers. Does not run the pipeline yet: call {@link start}.
   * @throws MappingError when a peer password cannot be resolved
   */
  constructor(config: Config, identity: RuntimeIdentity, deps: DaemonDeps) {
    this.identity = identity;
    this.#deps = deps;
    this.#file = config;
    this.#merged = mergeConfig(config, this.#objects(), identity.nodeName);
    this.#config = this.#merged.config;
    this.#log = deps.logger;
    this.#clock = deps.clock ?? realClock;
    this.#env = deps.env ?? process.env;
    this.#secretFiles = deps.secretFiles ?? new Map();
    const startedAtMs = this.#clock.now();
    const peers = this.#resolvePeers(this.#merged); // throws before anything starts
    const speaker = deps.createSpeaker({
      localAs: config.bgp.localAs,
      bgpIdentifier: identity.routerId,
      ...(config.bgp.listen ? { listen: { address: config.bgp.listen.address, port: config.bgp.listen.port }, deferListen: true } : {}),
      gracefulRestart: { restarting: deps.restarting },
    });
    this.#speaker = speaker;
    this.#peers = new PeerSet({ speaker, log: this.#log, metrics: deps.metrics, clock: this.#clock });
  this.#quarantine = new Quarantine({
      clock: this.#clock,
      onChange: (entered, released) => {
        for (const q of entered) this.#log.warn({ kind: q.kind, name: q.name, reason: q.reason }, 'object quarantined: treated as absent until a usable version replaces it');
        for (const q of released) this.#log.info({ kind: q.kind, name: q.name }, 'object out of quarantine');
        deps.metrics.setQuarantined(this.#quarantine.list());
      },
    });
    this.#gate = new HealthGate({ health: deps.health, log: this.#log, inputs: this.#gateInputs(config), onVerdictsChanged: () => this.#schedule('health'), quarantine: this.#quarantine });
    this.#assembly = new RouteAssembly(speaker, { clock: this.#clock, attributeChangeIntervalMs: config.attributeChangeInterval * 1000, onDue: () => this.#schedule('held attribute changes due') });
    this.#listener = new ListenerRetry({ speaker, log: this.#log, ...(deps.listenRetry ? { backoff: deps.listenRetry } : {}), clock: this.#clock });
    this.#initialSync = new InitialSync({ markDone: () => speaker.markInitialSyncDone(), recheck: () => this.#schedule('health checks settle deadline'), log: this.#log, clock: this.#clock });
    this.#drains = new DrainControl({
      speaker,
      log: this.#log,
      record: deps.drainRecord,
      nodeName: identity.nodeName,
      waitSec: () => this.#effectiveWaitSec(this.#gracefulWait().waitTimeSec),
      departureDrains: () => gracefulShutdownConfigured(this.#config),
      onChange: () => this.#drainMetrics(),
    });
    this.view = new AdminView({
      version: deps.version,
      identity,
      clock: this.#clock,
      startedAtMs,
      speaker,
      peers: this.#peers,
      decisions: this.#gate,
      health: deps.health,
      metrics: deps.metrics,
      source: deps.source,
      daemon: {
        localAs: () => this.#merged.override?.localAs ?? this.#config.bgp.localAs,
        notReady: () => this.#notReady(),
        stopping: () => this.#stopping,
        desiredRoutes: () => this.#assembly.size,
        heldAttributeChanges: () => this.#assembly.held(),
        lastReload: () => this.#lastReload,
        forbidden: () => [...(this.#deps.source?.status().resources ?? []).flatMap((r) => (r.forbidden !== undefined ? [r.forbidden] : [])), ...(this.#deps.forbidden?.() ?? [])],
        quarantined: () => this.#quarantine.list(),
        resetPeer: (name, soft) => this.resetPeer(name, soft),
        drain: (reason) => this.drain(reason),
        undrain: () => this.undrain(),
        drainSources: () => this.#drains.sources,
      },
    });

    if (deps.source) {
      this.#controller = new Controller({
        source: deps.source,
        quarantine: this.#quarantine,
        context: desiredRoutesContext(config, identity.nodeName),
        sink: {
          onCandidates: (candidates, changes) => {
            this.#candidates = candidates;
            this.#logAnnotations(candidates, changes.services);
            if (changes.all) this.#pending.all = true;
            for (const k of changes.services) this.#pending.services.add(k);
            if (changes.serviceCIDRs) this.#pending.serviceCIDRs = true;
            this.#run('controller');
          },
        },
      });
    }
    this.#subscribe();
    this.#peers.apply(peers);
    deps.metrics.observeConfigLoaded(startedAtMs);
  }

  /** The events that feed the stages: speaker → peer set (sessions, BFD), logs and metrics; source → peers by node labels, metrics. */
  #subscribe(): void {
    const { metrics } = this.#deps;
    const speaker = this.#speaker;
    speaker.on('peerState', (e: PeerStateEvent) => {
      this.#peers.observe(e);
      this.#deps.onStatusChange?.();
    });
    speaker.on('updateSent', (e: UpdateSentEvent) => this.#peers.observeUpdateSent(e));
    speaker.on('error', (err: unknown) => {
      // A listener that cannot bind is reported (once per attempt, without a stack) by the listener retry.
      if ((err as NodeJS.ErrnoException | undefined)?.syscall === 'listen') return;
      this.#log.error({ err }, 'speaker error');
    });
    speaker.on('drained', () => this.#log.info('drain finished: every route withdrawn'));
    speaker.on('bfdState', (e: BfdStateEvent) => {
      this.#peers.observeBfd(e);
      this.#deps.onStatusChange?.();
    });
    speaker.on('unsentRoutes', (e: UnsentRoutesEvent) => this.#peers.observeUnsent(e));
    speaker.on('threadExit', (e: ThreadExitEvent) => {
      this.#speakerFailure = e.message;
      this.#log.fatal({ err: e.message }, 'the speaker thread died: every BGP session is closed');
      this.#deps.onStatusChange?.();
    });
    metrics.setPeersProvider(() => this.view.peers());
    metrics.setVipsProvider(() => handledVips(this.view.services()));
    metrics.setRefusalsProvider(() => refusedInputs(this.view.services()));
    const source = this.#deps.source;
    if (!source) return;
    this.#controller?.on('error', (key: string, err: unknown) => this.#log.warn({ key, err }, 'controller error (retried)'));
    // Node labels may select or deselect peers (nodeSelector); Herald's objects change the configuration.
    source.on('change', (keys: readonly string[]) => {
      if (keys.some((k) => k.startsWith(HERALD_KEY_PREFIX))) {
        if (source.synced()) this.#scheduleObjects();
        else this.#objectsPending = true;
      }
      if (followsNodeLabels(this.#config)) this.#schedule('source');
    });
    // Registered before the controller's own 'synced' listener (it subscribes in start()): the objects read while
    // syncing are in the context of its first full pass.
    source.on('synced', () => {
      this.#log.info('source synced');
      if (this.#objectsPending) this.#applyObjects('objects read');
      this.#logAddressSpace();
    });
    this.#deps.secrets?.on('change', () => this.#scheduleObjects());
    // KubernetesSource emits (kind, err), ManifestSource (fileError): name the resource when there is one.
    source.on('error', (...args: unknown[]) => this.#log.warn({ ...(args.length > 1 ? { kind: args[0] } : {}), err: args[args.length - 1] }, 'source error'));
    source.on('restart', (kind: string) => metrics.kubernetesWatchRestarts.inc({ resource: String(kind) }));
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
    this.#drains.start(this.#config.stateDir);
    this.#fullNext = true;
    this.#run('start');
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
    return { ...this.#passes, ...this.#gate.stats, ...this.#assembly.stats };
  }

  // ------------------------------------------------------------------------------------------
  // The pipeline
  // ------------------------------------------------------------------------------------------

  /** Coalesce bursts of changes into one pass on the next turn of the event loop. */
  #schedule(why: string): void {
    if (this.#runQueued || this.#stopping) return;
    this.#runQueued = true;
    setImmediate(() => {
      this.#runQueued = false;
      if (!this.#stopping) this.#run(why);
    });
  }

  /**
   * One pass: candidates → health gate → route assembly → speaker. Never throws; a failure makes the next pass full.
   * @returns false when it failed (logged; the previous routes stay announced)
   */
  #run(why: string): boolean {
    const t0 = performance.now();
    const cfg = this.#config;
    const full = this.#fullNext || this.#pending.all;
    this.#fullNext = true;
    try {
      if (this.#deps.source && followsNodeLabels(cfg)) {
        // Node labels may have changed: peers selected by nodeSelector come and go.
        try {
          this.#peers.apply(this.#resolvePeers(this.#merged));
        } catch (err) {
          this.#log.error({ err }, 'cannot apply peers');
        }
      }
      const candidates = this.#candidates;
      // Before the routes go to the speaker: a node found drained announces nothing, not even for a moment.
      this.#drains.observe(candidates?.node);
      this.#followNodeAddresses(candidates);
      if (full) this.#passes.full++;
      else if (candidates) this.#passes.incremental++;
      const gated = this.#gate.run(candidates, full ? 'all' : this.#pending.services);
      if (full || this.#pending.serviceCIDRs) this.#assembly.setServiceCIDRs(candidates?.serviceCIDRs.contributions ?? []);
      for (const [service, pieces] of gated.services) this.#assembly.setService(service, pieces);
      // Until the drain is known (the Node annotation not read yet), a node that may be starting drained announces
      // nothing; with graceful restart the peers keep the previous routes meanwhile.
      this.#assembly.setStatic(this.#drains.unknown === undefined ? gated.staticRoutes : []);
      const flushed = this.#assembly.flush(full);
      this.#gate.commit(gated);
      this.#pending.all = false;
      this.#pending.services.clear();
      this.#pending.serviceCIDRs = false;
      this.#fullNext = false;
      this.#deps.metrics.desiredRoutes.set(flushed.routes);
      if (candidates && (full || gated.decisionsChanged.length > 0)) this.#observe({ all: full, services: gated.decisionsChanged });
      if (!this.#initialSync.done && (!this.#deps.source || candidates !== undefined)) this.#initialSync.observe(this.#gate.pendingChecks(), this.#gate.specs(), flushed.routes);
      this.#log.debug({ why, full, routes: flushed.routes, changed: flushed.changed, removed: flushed.removed }, 'reconciled');
      return true;
    } catch (err) {
      this.#log.error({ err, why }, 'reconcile failed; previous routes stay announced');
      this.#runError = err instanceof Error ? err.message : String(err);
      return false;
    } finally {
      this.#deps.metrics.reconcileDuration.observe((performance.now() - t0) / 1000);
    }
  }

  /** Log each bad path-attribute annotation once when it appears or changes, and when a Service's become valid again. */
  #logAnnotations(candidates: CandidateSet, services: readonly string[]): void {
    for (const key of services) {
      const c = candidates.service(key);
      const errors = c?.annotations.errors ?? [];
      const text = errors.length > 0 ? formatAnnotationErrors(errors) : undefined;
      if (text === this.#annotationErrors.get(key)) continue;
      if (text === undefined) {
        this.#annotationErrors.delete(key);
        if (c !== undefined) this.#log.info({ service: key }, 'path-attribute annotations valid again');
        continue;
      }
      this.#annotationErrors.set(key, text);
      for (const r of c?.annotations.notes ?? []) this.#log.warn({ service: key }, r.message);
    }
  }

  #observe(changes: DecisionChanges): void {
    try {
      this.#deps.onDecisions?.(this.#gate, changes);
      this.#deps.onStatusChange?.();
    } catch (err) {
      this.#log.warn({ err: (err as Error).message }, 'decision observer failed');
    }
  }

  #gateInputs(cfg: Config): GateInputs {
    return { checks: checkContext(cfg, this.identity, this.#candidates?.node.addresses), routes: cfg.routes };
  }

  /** The Node's InternalIPs changed (or became known): the checks that probe them are built again. */
  #followNodeAddresses(candidates: CandidateSet | undefined): void {
    const text = JSON.stringify(candidates?.node.addresses ?? null);
    if (text === this.#nodeAddressesText) return;
    this.#nodeAddressesText = text;
    this.#gate.configure(this.#gateInputs(this.#config));
  }

  /** Herald's objects from the source (none without one). */
  #objects(): ConfigObjects {
    const snap = this.#deps.source?.snapshot();
    if (!snap) return NO_OBJECTS;
    return {
      BGPPeer: [...snap.heraldObjects('BGPPeer')],
      BGPAdvertisement: [...snap.heraldObjects('BGPAdvertisement')],
      IPAddressPool: [...snap.heraldObjects('IPAddressPool')],
      BGPNodeConfigOverride: [...snap.heraldObjects('BGPNodeConfigOverride')],
    };
  }

  /** This node's peers for `merged`, with its override's AS number and router ID; peers left out are recorded. */
  #resolvePeers(merged: MergedConfig): ReturnType<typeof resolvePeers> {
    const o = merged.override;
    const node: SessionIdentity = {
      ...(o?.localAs !== undefined ? { localAs: o.localAs } : {}),
      ...(o?.routerId !== undefined && o.routerId !== this.identity.routerId ? { bgpIdentifier: o.routerId } : {}),
    };
    const problems: string[] = [];
    const peers = resolvePeers(merged.config, this.#nodeLabels(), this.#env, {
      node,
      files: this.#secretFiles,
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

  #scheduleObjects(): void {
    if (this.#objectsQueued || this.#stopping) return;
    this.#objectsQueued = true;
    setImmediate(() => {
      this.#objectsQueued = false;
      if (!this.#stopping) this.#applyObjects('objects changed');
    });
  }

  /**
   * Merge the objects again and apply what changed, as a reload does. Status-only changes of objects (the leader's
   * conditions) change nothing and cost one merge. Never throws: a peer whose password file went missing is logged.
   */
  #applyObjects(why: string): void {
    this.#objectsPending = false;
    this.#deps.onStatusChange?.();
    const merged = mergeConfig(this.#file, this.#objects(), this.identity.nodeName);
    this.#logVerdicts(merged);
    const same = isDeepStrictEqual(merged.config, this.#config) && isDeepStrictEqual(merged.override, this.#merged.override);
    if (same) {
      this.#merged = merged;
      // A Secret that became readable changes no configuration, only the peers this node can run.
      try {
        this.#peers.apply(this.#resolvePeers(merged));
      } catch (err) {
        this.#log.error({ err }, 'cannot apply peers');
      }
      return;
    }
    try {
      const d = this.#apply(this.#file, merged);
      this.#run(why);
      this.#log.info({ added: d.peers.added.map((p) => p.name), removed: d.peers.removed.map((p) => p.name), changed: d.peers.changed.map((c) => c.name), policyChanged: d.policyChanged, invalid: merged.verdicts.filter((v) => v.issues.length > 0).map((v) => `${v.kind}/${v.name}`) }, 'configuration objects applied');
    } catch (err) {
      this.#log.error({ err }, 'cannot apply the configuration objects; the running configuration stays');
    }
  }

  /** Warns once per object and distinct set of problems: an invalid object is ignored, with its fields named. */
  #logVerdicts(merged: MergedConfig): void {
    const now = new Map<string, string>();
    for (const v of merged.verdicts) {
      if (v.issues.length === 0) continue;
      const key = `${v.kind}/${v.name}`;
      const text = v.issues.map((i) => `${i.path}: ${i.message}`).join('; ');
      now.set(key, text);
      if (this.#verdictsLogged.get(key) !== text) this.#log.warn({ object: key, generation: v.generation, problems: v.issues.map((i) => `${i.path}: ${i.message}`) }, 'configuration object ignored');
    }
    this.#verdictsLogged = now;
  }

  /**
   * Put `merged` (of `file`) in force: peers as a diff, the controller's context and the gate's inputs when they
   * changed. The next pass is full; the caller runs it.
   * @throws MappingError (nothing applied) when a peer's password file or variable cannot be read
   */
  #apply(file: Config, merged: MergedConfig): ConfigDiff {
    const d = diffConfig(this.#config, merged.config);
    const peers = this.#resolvePeers(merged); // may throw: nothing applied yet
    const departureChanged = gracefulShutdownConfigured(this.#config) !== gracefulShutdownConfigured(merged.config);
    this.#file = file;
    this.#merged = merged;
    this.#config = merged.config;
    if (d.logLevelChanged) this.#log.level = merged.config.logLevel;
    this.#peers.apply(peers);
    if (d.policyChanged || d.healthChanged || departureChanged) this.#controller?.setContext(desiredRoutesContext(merged.config, this.identity.nodeName));
    this.#gate.configure(this.#gateInputs(merged.config));
    this.#assembly.setAttributeChangeInterval(merged.config.attributeChangeInterval * 1000);
    this.#fullNext = true;
    if (this.#deps.source?.synced()) this.#logAddressSpace();
    return d;
  }

  /** Says once, when it becomes true, that no LoadBalancer or external address can be announced (src/config/notes.ts). */
  #logAddressSpace(): void {
    const note = noAddressSpaceNote(this.#config);
    if ((note !== undefined) === this.#noAddressSpace) return;
    this.#noAddressSpace = note !== undefined;
    if (note !== undefined) this.#log.warn({ field: note.path }, note.message);
    else this.#log.info('pools or allowedPrefixes now allow LoadBalancer and external addresses');
  }

  /** What this node's BGPNodeStatus shows (node-status.ts). */
  nodeStatusInput(): NodeStatusInput {
    const o = this.#merged.override;
    return {
      peers: this.view.peers(),
      services: this.view.services(),
      origins: this.#merged.origins,
      myASN: o?.localAs ?? this.#config.bgp.localAs,
      routerID: o?.routerId ?? this.identity.routerId,
      ...(o ? { override: o.name } : {}),
      problems: [...this.#peerProblems],
      heraldVersion: this.#deps.version,
    };
  }

  /** Herald's objects as this node merged them, and the peers it cannot run (node status, the leader's conditions). */
  objects(): ObjectsView {
    return { merged: this.#merged, problems: [...this.#peerProblems] };
  }

  #nodeLabels(): Record<string, string> {
    return this.#deps.source?.snapshot().node(this.identity.nodeName)?.metadata?.labels ?? {};
  }

  #notReady(): string[] {
    const out: string[] = [];
    if (this.#speakerFailure !== undefined) out.push(this.#speakerFailure);
    const listener = this.#listener.problem();
    if (listener !== undefined) out.push(listener);
    const source = this.#deps.source?.status();
    if (source && !source.synced) {
      // Name what keeps each resource from syncing (e.g. a 403: the RBAC rule to add).
      const why = source.resources.filter((r) => !r.synced && (r.forbidden ?? r.lastError) !== '').map((r) => `${r.kind}: ${r.forbidden ?? r.lastError}`);
      out.push(`${source.type} source not synced${why.length > 0 ? ` (${why.join('; ')})` : ''}`);
    }
    const held = this.#drains.unknown;
    if (held !== undefined) out.push(held);
    if (!this.#initialSync.done) out.push('initial route computation pending');
    if (this.#stopping) out.push('shutting down');
    return out;
  }

  // ------------------------------------------------------------------------------------------
  // Reload, drain, shutdown
  // ------------------------------------------------------------------------------------------

  /** Current configuration (after reloads). */
  get currentConfig(): Config {
    return this.#config;
  }

  /**
   * Apply a validated configuration. Peer passwords are resolved first; on failure nothing changes.
   * @param files its secret files, read ahead (src/config/secrets.ts `readSecretFiles`; default: those read before)
   * @returns the diff that was applied
   * @throws MappingError (nothing applied)
   */
  reload(next: Config, files: SecretFileTexts = this.#secretFiles): ConfigDiff {
    const restartRequired = diffConfig(this.#file, next).restartRequired;
    const eff = effectiveReloadConfig(this.#file, next);
    const before = this.#secretFiles;
    this.#secretFiles = files;
    let diff: ConfigDiff;
    try {
      diff = this.#apply(eff, mergeConfig(eff, this.#objects(), this.identity.nodeName)); // may throw: nothing applied
    } catch (err) {
      this.#secretFiles = before;
      throw err;
    }
    const d: ConfigDiff = { ...diff, restartRequired, empty: diff.empty && restartRequired.length === 0 };
    if (d.restartRequired.length > 0) this.#log.warn({ fields: d.restartRequired }, 'these settings change only on restart; running values kept');
    // A reload whose routes cannot be applied is reported as failed, with the cause.
    const applied = this.#run('reload');
    const at = new Date(this.#clock.now()).toISOString();
    this.#lastReload = applied ? { at, ok: true } : { at, ok: false, errors: [`the new configuration is in force but its routes could not be applied (the previous routes stay announced): ${this.#runError ?? 'unknown error'}`] };
    this.#deps.metrics.observeReload(applied, this.#clock.now());
    this.#log.info(
      { added: d.peers.added.map((p) => p.name), removed: d.peers.removed.map((p) => p.name), changed: d.peers.changed.map((c) => c.name), routesChanged: d.routesChanged, policyChanged: d.policyChanged },
      'configuration reloaded',
    );
    return d;
  }

  /** Record a rejected reload (invalid file): the running config stays. */
  reloadRejected(errors: string[]): void {
    this.#lastReload = { at: new Date(this.#clock.now()).toISOString(), ok: false, errors };
    this.#deps.metrics.observeReload(false, this.#clock.now());
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
    this.#listener.stop();
    this.#initialSync.stop();
    this.#assembly.close();
    const cfg = this.#config;
    const { mode, why } = decideStopMode({ onTerm: cfg.shutdown.onTerm, kubernetes: cfg.source?.kubernetes !== undefined, drained: this.#drains.drained, departing: this.#drains.departing });
    const g = this.#gracefulWait();
    const waitTimeSec = g.graceful ? this.#effectiveWaitSec(g.waitTimeSec) : 0;
    const departure = { waitTimeSec, drainedAlready: this.#drains.phase === 'withdrawn', ...(waitTimeSec !== g.waitTimeSec ? { skippedWait: 'no Established session' } : {}) };
    this.#log.info({ reason, mode, why, ...(mode === 'departure' ? departure : {}) }, `stopping (${reason}): ${mode}: ${why}`);
    const message = mode === 'restart' ? `herald restarting (${reason})` : `herald leaving: ${why}`;
    let outcome: StopOutcome | undefined;
    try {
      outcome = await this.#speaker.stop({ mode, message, ...(mode === 'departure' ? { waitTimeSec } : {}) });
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

  /** The drained and departing gauges. */
  #drainMetrics(): void {
    this.#deps.metrics.drained.set(this.#drains.sources.length > 0 ? 1 : 0);
    this.#deps.metrics.nodeDeparting.set(this.#drains.departing !== undefined ? 1 : 0);
  }

  /** Largest gracefulShutdown.waitTime among peers that enable it (0 when none does). */
  #gracefulWait(): { graceful: boolean; waitTimeSec: number } {
    let graceful = false;
    let waitTimeSec = 0;
    for (const p of this.#config.peers) {
      if (p.gracefulShutdown?.enabled) {
        graceful = true;
        waitTimeSec = Math.max(waitTimeSec, p.gracefulShutdown.waitTime);
      }
    }
    return { graceful, waitTimeSec };
  }

  /**
   * The RFC 8326 wait (seconds) lets peers move traffic away before the withdrawal: with no Established session
   * there is nothing to move, so it is 0 then (a stop or drain right after start does not wait for nothing).
   */
  #effectiveWaitSec(waitTimeSec: number): number {
    return this.#speaker.peers().some((p) => p.state === 'Established') ? waitTimeSec : 0;
  }
}
