/**
 * The pipeline's passes (docs/architecture.md "The daemon's pipeline"): one pass takes what changed since the last
 * one — the controller's candidate changes, the health checker's verdict changes — through the health gate and route
 * assembly to the speaker, so one EndpointSlice change costs O(Services it touches):
 *
 *   Controller ─▶ HealthGate ─▶ RouteAssembly ─▶ Speaker
 *   (candidates)  (verdicts)     (merged routes)   (sessions)
 *
 * Everything is recomputed on start, on a configuration change, on a full candidate set (first set, this node
 * changed, context change, resync) and after a failed pass. Passes are coalesced: bursts of changes cost one pass on
 * the next turn of the event loop. A pass never throws: a failing pass logs, keeps what is announced, and makes the
 * next pass full. End-of-RIB waits for the first complete pass (initial-sync.ts).
 */
import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import type { Clock } from '../../bgp/main-thread.ts';
import type { RuntimeIdentity } from '../config/load.ts';
import type { Config } from '../config/schema.ts';
import type { CandidateChanges, CandidateSet } from '../controller/controller.ts';
import { Quarantine } from '../controller/quarantine.ts';
import { formatAnnotationErrors } from '../k8s/annotations.ts';
import type { HeraldMetrics } from '../metrics/metrics.ts';
import { checkContext } from './check-specs.ts';
import type { DrainControl } from './drain.ts';
import type { DecisionChanges, DecisionSet, GateInputs, HealthGate } from './health-gate.ts';
import type { InitialSync } from './initial-sync.ts';
import type { RouteAssembly } from './route-assembly.ts';

/**
 * The quarantine of objects the controller or the health gate cannot use (src/controller/quarantine.ts): each entry
 * and release logged, the list counted (`herald_quarantined_objects`).
 */
export function loggedQuarantine(clock: Clock, log: Logger, metrics: HeraldMetrics): Quarantine {
  const q: Quarantine = new Quarantine({
    clock,
    onChange: (entered, released) => {
      for (const e of entered) log.warn({ kind: e.kind, name: e.name, reason: e.reason }, 'object quarantined: treated as absent until a usable version replaces it');
      for (const e of released) log.info({ kind: e.kind, name: e.name }, 'object out of quarantine');
      metrics.setQuarantined(q.list());
    },
  });
  return q;
}

/** Options of {@link Pipeline}. */
export interface PipelineOptions {
  readonly identity: RuntimeIdentity;
  /** The configuration in force at start (then {@link Pipeline.configure}). */
  readonly config: Config;
  readonly gate: HealthGate;
  readonly assembly: RouteAssembly;
  /** Where the operator's drain and the Node's departure hold routes back. */
  readonly drains: DrainControl;
  readonly initialSync: InitialSync;
  readonly log: Logger;
  readonly metrics: HeraldMetrics;
  /** With a source, End-of-RIB waits for its first candidates; without one the first pass is complete. */
  readonly hasSource: boolean;
  /** Called first in every pass (node labels may select other peers). Never throws. */
  readonly beforePass?: () => void;
  /** Called after every pass that changed decisions (Kubernetes Events, this node's status). */
  readonly onDecisions?: (decisions: DecisionSet, changes: DecisionChanges) => void;
}

/** See the module comment. */
export class Pipeline {
  readonly #o: PipelineOptions;
  #config: Config;
  /** The controller's latest candidates (undefined until the source has synced). */
  #candidates: CandidateSet | undefined;
  /** Candidate changes not yet taken through the pipeline. */
  readonly #pending = { all: true, services: new Set<string>(), serviceCIDRs: true };
  /** The next pass recomputes everything (start, configuration change, after a failed pass). */
  #fullNext = true;
  #runQueued = false;
  #stopped = false;
  /** JSON of the Node addresses the gate's inputs were built from. */
  #nodeAddressesText = 'null';
  /** Message of the last failed pass. */
  #runError: string | undefined;
  readonly #passes = { full: 0, incremental: 0 };
  /** The annotation errors last logged per Service ("ns/name" → their text). */
  readonly #annotationErrors = new Map<string, string>();

  constructor(o: PipelineOptions) {
    this.#o = o;
    this.#config = o.config;
  }

  /** The gate's inputs from `cfg` and the Node's addresses as the candidates last showed them. */
  gateInputs(cfg: Config): GateInputs {
    return { checks: checkContext(cfg, this.#o.identity, this.#candidates?.node.addresses), routes: cfg.routes };
  }

  /** A new configuration is in force: the gate's inputs and the attribute rate limit follow; the next pass is full. */
  configure(cfg: Config): void {
    this.#config = cfg;
    this.#o.gate.configure(this.gateInputs(cfg));
    this.#o.assembly.setAttributeChangeInterval(cfg.attributeChangeInterval * 1000);
    this.#fullNext = true;
  }

  /** The controller's sink: new candidates, and which changed. Runs a pass now. */
  onCandidates(candidates: CandidateSet, changes: CandidateChanges): void {
    this.#candidates = candidates;
    this.#logAnnotations(candidates, changes.services);
    if (changes.all) this.#pending.all = true;
    for (const k of changes.services) this.#pending.services.add(k);
    if (changes.serviceCIDRs) this.#pending.serviceCIDRs = true;
    this.run('controller');
  }

  /** Work done by passes (test hook): full and incremental passes. */
  get passes(): { full: number; incremental: number } {
    return { ...this.#passes };
  }

  /** Message of the last failed pass, if one failed. */
  get lastError(): string | undefined {
    return this.#runError;
  }

  /** No pass after this (shutdown). */
  stop(): void {
    this.#stopped = true;
  }

  /** Coalesce bursts of changes into one pass on the next turn of the event loop. */
  schedule(why: string): void {
    if (this.#runQueued || this.#stopped) return;
    this.#runQueued = true;
    setImmediate(() => {
      this.#runQueued = false;
      if (!this.#stopped) this.run(why);
    });
  }

  /**
   * One pass: candidates → health gate → route assembly → speaker. Never throws; a failure makes the next pass full,
   * and it hands the Speaker the whole set.
   * @param o.full recompute everything, whatever changed (start)
   * @returns false when it failed (logged; the previous routes stay announced)
   */
  run(why: string, o: { full?: boolean } = {}): boolean {
    const { gate, assembly, drains, initialSync, metrics, log } = this.#o;
    const t0 = performance.now();
    const full = o.full === true || this.#fullNext || this.#pending.all;
    this.#fullNext = true;
    try {
      this.#o.beforePass?.();
      const candidates = this.#candidates;
      // Before the routes go to the speaker: a node found drained announces nothing, not even for a moment.
      drains.observe(candidates?.node);
      this.#followNodeAddresses(candidates);
      if (full) this.#passes.full++;
      else if (candidates) this.#passes.incremental++;
      const gated = gate.run(candidates, full ? 'all' : this.#pending.services);
      if (full || this.#pending.serviceCIDRs) assembly.setServiceCIDRs(candidates?.serviceCIDRs.contributions ?? []);
      for (const [service, pieces] of gated.services) assembly.setService(service, pieces);
      // Until the drain is known (the Node annotation not read yet), a node that may be starting drained announces
      // nothing; with graceful restart the peers keep the previous routes meanwhile.
      assembly.setStatic(drains.unknown === undefined ? gated.staticRoutes : []);
      const flushed = assembly.flush(full);
      gate.commit(gated);
      this.#pending.all = false;
      this.#pending.services.clear();
      this.#pending.serviceCIDRs = false;
      this.#fullNext = false;
      metrics.desiredRoutes.set(flushed.routes);
      if (candidates && (full || gated.decisionsChanged.length > 0)) this.#observe({ all: full, services: gated.decisionsChanged });
      if (!initialSync.done && (!this.#o.hasSource || candidates !== undefined)) initialSync.observe(gate.pendingChecks(), gate.specs(), flushed.routes);
      log.debug({ why, full, routes: flushed.routes, changed: flushed.changed, removed: flushed.removed }, 'reconciled');
      return true;
    } catch (err) {
      log.error({ err, why }, 'reconcile failed; previous routes stay announced');
      this.#runError = err instanceof Error ? err.message : String(err);
      assembly.handOverWhole(); // the next pass heals whatever this one left half done
      return false;
    } finally {
      metrics.reconcileDuration.observe((performance.now() - t0) / 1000);
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
        if (c !== undefined) this.#o.log.info({ service: key }, 'path-attribute annotations valid again');
        continue;
      }
      this.#annotationErrors.set(key, text);
      for (const r of c?.annotations.notes ?? []) this.#o.log.warn({ service: key }, r.message);
    }
  }

  #observe(changes: DecisionChanges): void {
    try {
      this.#o.onDecisions?.(this.#o.gate, changes);
    } catch (err) {
      this.#o.log.warn({ err: (err as Error).message }, 'decision observer failed');
    }
  }

  /** The Node's InternalIPs changed (or became known): the checks that probe them are built again. */
  #followNodeAddresses(candidates: CandidateSet | undefined): void {
    const text = JSON.stringify(candidates?.node.addresses ?? null);
    if (text === this.#nodeAddressesText) return;
    this.#nodeAddressesText = text;
    this.#o.gate.configure(this.gateInputs(this.#config));
  }
}
