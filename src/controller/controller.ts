/**
 * The controller: keeps the candidates of every Service (desired-routes.ts `decideService`) up to date with the
 * source, incrementally, and hands them to a sink.
 *
 * - Nothing is computed or handed to the sink until the source has synced once (every informer listed once;
 *   MetalLB's initialLoadPerformed gate), so a restart never withdraws routes because of a half-filled cache.
 * - Change keys (src/k8s/keys.ts) go through a coalescing `WorkQueue`. A `service:ns/name` key recomputes only that
 *   Service (cost proportional to its EndpointSlices); a change of THIS node's eligibility or labels, `all`, or a
 *   context change recomputes every Service (other updates of this Node, e.g. status heartbeats, are ignored);
 *   `servicecidr:*` recomputes the service CIDRs. Other nodes' changes matter only when an advertisement bounds
 *   fan-out (`maxNodesPerVip`, steering.ts): a change of another node's eligibility or labels then recomputes every
 *   Service, reported as Service changes (this node's own state did not change); their heartbeats are ignored.
 * - Each Service is computed with its previous candidates, which carry the last good values of its path-attribute
 *   annotations (steering.ts).
 * - When the queue drains, one `emit` key hands the candidate set and what changed since the sink last accepted one
 *   to `sink.onCandidates`. A throwing/rejecting sink is retried with backoff; the retry hands over the newest set.
 *
 * - An object it cannot use (quarantine.ts) is treated as absent and reported; a Service whose decision throws gets
 *   no VIP (never its earlier decision) and every other Service is decided as usual: nothing here is retried for
 *   an object's sake, and nothing but a failing sink reaches the queue's retry.
 *
 * The controller knows nothing of health checks: the health gate comes after it (docs/architecture.md).
 */
import { EventEmitter } from 'node:events';
import type { Clock } from '../../bgp/main-thread.ts';
import { realClock } from '../../bgp/main-thread.ts';
import type { Source } from '../sources/source.ts';
import { ALL_KEY, objectKey } from '../k8s/keys.ts';
import type { DesiredRoutesContext, ServiceCandidates, ServiceCIDRCandidates } from './desired-routes.ts';
import { decideService, serviceCIDRContributions } from './desired-routes.ts';
import type { NodeState } from './node-eligibility.ts';
import { evaluateNode } from './node-eligibility.ts';
import type { ClusterNodes } from './steering.ts';
import { boundsFanOut, clusterNodesOf, NO_ANNOTATIONS, NO_CLUSTER_NODES, withNode } from './steering.ts';
import { NODE_SET_KEY } from '../k8s/node-set.ts';
import { WorkQueue } from './workqueue.ts';
import { Quarantine } from './quarantine.ts';
import type { QuarantineEntry } from './quarantine.ts';
import { ReasonCode } from './reasons.ts';
import type { EndpointSlice, Node, Service } from '../k8s/types.ts';
import type { Snapshot } from '../k8s/object-store.ts';

/**
 * The candidates of this node: a live view of the controller's state, read by the sink while `onCandidates` runs
 * (and until the next emit; objects inside are never mutated, unchanged ones keep their identity).
 */
export interface CandidateSet {
  readonly node: NodeState;
  readonly serviceCIDRs: ServiceCIDRCandidates;
  /** The candidates of Service "ns/name", or undefined when it does not exist. */
  service(key: string): ServiceCandidates | undefined;
  /** Every Service's candidates, any order. */
  services(): Iterable<ServiceCandidates>;
}

/**
 * What changed since the previous set the sink accepted. `all` is true after a full recompute (first set, this node
 * changed, context change, resync); `services` then lists every Service recomputed or removed.
 */
export interface CandidateChanges {
  readonly all: boolean;
  /** "ns/name" of Services whose candidates may have changed, appeared or disappeared, sorted. */
  readonly services: readonly string[];
  /** True when the service CIDR decisions may have changed. */
  readonly serviceCIDRs: boolean;
}

/** Receives every new candidate set. May be async; throw/reject to have it retried. */
export interface CandidateSink {
  onCandidates(candidates: CandidateSet, changes: CandidateChanges): void | Promise<void>;
}

/** Options of `Controller`. */
export interface ControllerOptions {
  source: Source;
  context: DesiredRoutesContext;
  sink: CandidateSink;
  clock?: Clock;
  /** First retry delay in ms after a failing sink (default 100). */
  retryBaseMs?: number;
  /** Retry delay cap in ms (default 30000). */
  retryMaxMs?: number;
  /** Periodic full recompute in ms (default 300000; 0 disables). client-node has no resync of its own. */
  resyncIntervalMs?: number;
  /** Where objects the controller cannot use are recorded (default: its own). */
  quarantine?: Quarantine;
}

/** Plain-number counters for metrics. */
export interface ControllerStats {
  /** Keys processed (excluding emits). */
  reconciles: number;
  /** Services recomputed. */
  servicesComputed: number;
  /** Candidate sets handed to the sink successfully. */
  emits: number;
  /** Sink failures. */
  sinkErrors: number;
  /** Time of the last successful emit (ms since the epoch, 0 = never). */
  lastEmitAtMs: number;
}

const EMIT_KEY = '\u0000emit';

/** See module doc. Events: 'candidates' (set) after each successful emit, 'error' (key, err) for retried failures. */
export class Controller extends EventEmitter {
  readonly #source: Source;
  readonly #sink: CandidateSink;
  readonly #clock: Clock;
  readonly #queue: WorkQueue;
  readonly #resyncIntervalMs: number;
  /** Objects treated as absent, with the reason (quarantine.ts). */
  readonly quarantine: Quarantine;
  #ctx: DesiredRoutesContext;
  #node: NodeState | undefined;

  /** The last Node object seen for this node. */
  #lastSeen: Node | undefined;
  /** The cluster's eligible Nodes (only followed while an advertisement bounds fan-out). */
  #cluster: ClusterNodes = NO_CLUSTER_NODES;
  readonly #candidates = new Map<string, ServiceCandidates>();
  #cidrs: ServiceCIDRCandidates = { decisions: [], contributions: [] };
  /** Changes not yet accepted by the sink. */
  readonly #reportServices = new Set<string>();
  #reportAll = true;
  #reportCidrs = true;
  #dirty = false;
  #started = false;
  #resyncTimer: ReturnType<typeof setInterval> | undefined;
  #last: CandidateSet | undefined;
  readonly stats: ControllerStats = { reconciles: 0, servicesComputed: 0, emits: 0, sinkErrors: 0, lastEmitAtMs: 0 };
  readonly #onChange = (keys: string[]): void => {
    if (!this.#source.synced()) return; // the full pass after sync covers it
    for (const k of keys) this.#queue.add(k);
  };
  readonly #onSynced = (): void => this.#queue.add(ALL_KEY);

  constructor(opts: ControllerOptions) {
    super();
    this.#source = opts.source;
    this.#sink = opts.sink;
    this.#ctx = opts.context;
    this.#clock = opts.clock ?? realClock;
    this.#resyncIntervalMs = opts.resyncIntervalMs ?? 300_000;
    this.quarantine = opts.quarantine ?? new Quarantine({ clock: this.#clock });
    this.#queue = new WorkQueue((k) => this.#process(k), {
      baseDelayMs: opts.retryBaseMs ?? 100,
      maxDelayMs: opts.retryMaxMs ?? 30_000,
      clock: this.#clock,
    });
    this.#queue.on('error', (key: string, err: unknown) => {
      if (this.listenerCount('error') > 0) this.emit('error', key === EMIT_KEY ? 'emit' : key, err);
    });
    this.#queue.on('idle', () => {
      // While a failed emit waits for its backoff, its retry timer re-adds the key.
      if (this.#dirty && this.#queue.failures(EMIT_KEY) === 0) this.#queue.add(EMIT_KEY);
    });
  }

  /** Subscribe to the source and start it. Resolves after the source's first attempt. */
  async start(): Promise<void> {
    if (this.#started) return;
    this.#started = true;
    this.#source.on('change', this.#onChange);
    this.#source.on('synced', this.#onSynced);
    if (this.#resyncIntervalMs > 0) {
      this.#resyncTimer = setInterval(() => this.invalidate(), this.#resyncIntervalMs);
      this.#resyncTimer.unref();
    }
    await this.#source.start();
    if (this.#source.synced()) this.#queue.add(ALL_KEY);
  }

  /** Stop the source and the queue (waits for a running reconcile or sink call). */
  async stop(): Promise<void> {
    this.#started = false;
    if (this.#resyncTimer) clearInterval(this.#resyncTimer);
    this.#resyncTimer = undefined;
    this.#source.off('change', this.#onChange);
    this.#source.off('synced', this.#onSynced);
    await this.#queue.shutDown();
    await this.#source.stop();
  }

  /** Replace the context (config reload); recomputes everything. */
  setContext(ctx: DesiredRoutesContext): void {
    this.#ctx = ctx;
    this.invalidate();
  }

  /** Recompute everything (resync). */
  invalidate(): void {
    if (!this.#source.synced()) return;
    this.#queue.add(ALL_KEY);
  }

  /** True once the source has synced (candidates flow only from then on). */
  synced(): boolean {
    return this.#source.synced();
  }

  /** Status for /readyz and metrics: source status, counters, queue depth. */
  status(): { synced: boolean; source: ReturnType<Source['status']>; stats: ControllerStats; queued: number; pendingRetries: number } {
    return { synced: this.#source.synced(), source: this.#source.status(), stats: { ...this.stats }, queued: this.#queue.length, pendingRetries: this.#queue.pendingRetries };
  }

  /** The candidate set last accepted by the sink, if any. */
  last(): CandidateSet | undefined {
    return this.#last;
  }

  /** Resolves when no key is queued or running (tests, graceful shutdown). */
  whenIdle(): Promise<void> {
    return this.#queue.whenIdle();
  }

  async #process(key: string): Promise<void> {
    if (key === EMIT_KEY) return this.#emit();
    this.stats.reconciles++;
    const snap = this.#source.snapshot();
    const me = this.#ctx.nodeName;
    if (key === `node:${me}` && this.#node !== undefined) {
      // Node status heartbeats change the object but rarely what matters (eligibility, departure, labels,
      // addresses, the drain annotation).
      const next = this.#evaluateNode(snap);
      if (JSON.stringify(next) === JSON.stringify(this.#node)) return;
    }
    const bounded = boundsFanOut(this.#ctx.advertisements);
    if (key === ALL_KEY || key === `node:${me}` || this.#node === undefined) {
      this.#node = this.#evaluateNode(snap);
      this.#cluster = bounded ? clusterNodesOf(snap, me, this.#usableNodes(snap), { ignoreExcludeLabel: this.#ctx.ignoreExcludeLB ?? false }) : NO_CLUSTER_NODES;
      this.#reportAll = true;
      const stale = new Set(this.#candidates.keys());
      for (const svc of snap.services()) {
        const k = objectKey(svc);
        stale.delete(k);
        this.#computeService(k);
      }
      for (const k of stale) this.#computeService(k); // vanished: removes them
      this.#computeCidrs();
    } else if (key.startsWith('service:')) {
      this.#computeService(key.slice('service:'.length));
    } else if (key.startsWith('servicecidr:')) {
      this.#computeCidrs();
    } else if (key === NODE_SET_KEY && bounded) {
      // The published node set changed (rare: a Node's eligibility or a label a nodeSelector reads).
      this.#cluster = clusterNodesOf(snap, me, this.#usableNodes(snap), { ignoreExcludeLabel: this.#ctx.ignoreExcludeLB ?? false });
      for (const k of [...this.#candidates.keys()]) this.#computeService(k);
    } else if (key.startsWith('node:') && bounded && snap.nodeSet() === undefined) {
      // Another node: only its eligibility and labels matter (the rendezvous choice), not its heartbeats.
      const name = key.slice('node:'.length);
      const obj = snap.node(name);
      const next = withNode(this.#cluster, name, obj !== undefined && this.quarantine.problem('Node', obj) === undefined ? obj : undefined, { ignoreExcludeLabel: this.#ctx.ignoreExcludeLB ?? false });
      if (next === undefined) return;
      this.#cluster = next;
      for (const k of [...this.#candidates.keys()]) this.#computeService(k);
    }
    // node:<other> without bounded fan-out — irrelevant to this node's candidates
  }

  /** The Nodes of the snapshot for the rendezvous choice: a quarantined one counts as missing, as this node's does. */
  *#usableNodes(snap: Snapshot): Iterable<Node> {
    for (const n of snap.nodes()) if (this.quarantine.problem('Node', n) === undefined) yield n;
  }

  /**
   * This node's state. Its Node object quarantined (or throwing) counts as missing: nothing is announced. A Node
   * seen once and gone since departs with its last labels (node-eligibility.ts).
   */
  #evaluateNode(snap: Snapshot): NodeState {
    const me = this.#ctx.nodeName;
    const obj = snap.node(me);
    let problem = obj === undefined ? undefined : this.quarantine.problem('Node', obj);
    const opts = { departureDrains: this.#ctx.departureDrains ?? false, ignoreExcludeLabel: this.#ctx.ignoreExcludeLB ?? false, ...(this.#lastSeen ? { lastSeen: this.#lastSeen } : {}) };
    let state: NodeState | undefined;
    if (obj !== undefined && problem === undefined) {
      try {
        state = evaluateNode(obj, me, opts);
        this.#lastSeen = obj;
      } catch (err) {
        problem = `cannot be evaluated: ${errorText(err)}`;
      }
    }
    this.quarantine.set('node', problem === undefined ? [] : [{ kind: 'Node', name: me, reason: problem }]);
    if (state !== undefined) return state;
    if (problem === undefined) return evaluateNode(undefined, me, opts);
    return { name: me, eligible: false, labels: {}, addresses: {}, departing: [], reasons: [{ code: ReasonCode.NodeQuarantined, message: `Node ${me} is quarantined (${problem}): announcing nothing` }] };
  }

  #computeService(key: string): void {
    const snap = this.#source.snapshot();
    const svc = snap.service(key);
    const owner = `service:${key}`;
    if (!svc) {
      this.quarantine.set(owner, []);
      if (this.#candidates.delete(key)) {
        this.#reportServices.add(key);
        this.#dirty = true;
      }
      return;
    }
    this.#dirty = true;
    this.#reportServices.add(key);
    this.stats.servicesComputed++;
    const previous = this.#candidates.get(key);
    const entries: QuarantineEntry[] = [];
    const problem = this.quarantine.problem('Service', svc);
    let candidates: ServiceCandidates | undefined;
    if (problem !== undefined) {
      entries.push({ kind: 'Service', name: key, reason: `${problem} (the Service has no VIP until it is fixed)` });
    } else {
      const slices: EndpointSlice[] = [];
      for (const s of snap.endpointSlicesFor(key)) {
        const p = this.quarantine.problem('EndpointSlice', s);
        if (p === undefined) slices.push(s);
        else entries.push({ kind: 'EndpointSlice', name: objectKey(s), reason: `${p} (its endpoints count as not ready)` });
      }
      try {
        candidates = decideService(svc, slices, this.#node as NodeState, this.#ctx, { cluster: this.#cluster, previous });
      } catch (err) {
        entries.push({ kind: 'Service', name: key, reason: `its decision cannot be computed: ${errorText(err)} (the Service has no VIP until it changes)` });
      }
    }
    this.quarantine.set(owner, entries);
    const next = candidates ?? quarantinedService(key, svc, entries[entries.length - 1]?.reason ?? 'quarantined', previous);
    // Keyed by the candidates' own "ns/name" (the same text as `key`): one string for both.
    this.#candidates.set(next.service, next);
  }

  #computeCidrs(): void {
    const snap = this.#source.snapshot();
    const entries: QuarantineEntry[] = [];
    const usable = [...snap.serviceCIDRs()].filter((c) => {
      const p = this.quarantine.problem('ServiceCIDR', c);
      if (p !== undefined) entries.push({ kind: 'ServiceCIDR', name: objectKey(c), reason: `${p} (its CIDRs are not announced)` });
      return p === undefined;
    });
    try {
      this.#cidrs = serviceCIDRContributions({ ...snapshotView(snap), serviceCIDRs: () => usable }, this.#node as NodeState, this.#ctx);
    } catch (err) {
      entries.push({ kind: 'ServiceCIDR', name: '*', reason: `the service CIDR decisions cannot be computed: ${errorText(err)} (no service CIDR is announced)` });
      this.#cidrs = { decisions: [], contributions: [] };
    }
    this.quarantine.set('servicecidrs', entries);
    this.#reportCidrs = true;
    this.#dirty = true;
  }

  async #emit(): Promise<void> {
    if (!this.#dirty || !this.#node) return;
    this.#dirty = false;
    const candidates = this.#candidates;
    const set: CandidateSet = {
      node: this.#node,
      serviceCIDRs: this.#cidrs,
      service: (key) => candidates.get(key),
      services: () => candidates.values(),
    };
    const changes: CandidateChanges = { all: this.#reportAll, services: [...this.#reportServices].sort(), serviceCIDRs: this.#reportCidrs || this.#reportAll };
    try {
      await this.#sink.onCandidates(set, changes);
      this.#reportAll = false;
      this.#reportCidrs = false;
      this.#reportServices.clear();
    } catch (e) {
      this.stats.sinkErrors++;
      this.#dirty = true; // retried with backoff by the queue (unless a newer change emits first)
      throw e;
    }
    this.#last = set;
    this.stats.emits++;
    this.stats.lastEmitAtMs = this.#clock.now();
    this.emit('candidates', set);
  }
}

/**
 * The candidates of a quarantined Service: no VIP, one reason saying why (the object is treated as absent). The last
 * good path-attribute annotations of `previous` are kept for when it is usable again (steering.ts).
 */
function quarantinedService(key: string, svc: Service, reason: string, previous: ServiceCandidates | undefined): ServiceCandidates {
  const decision = { service: key, vips: [], reasons: [{ code: ReasonCode.Quarantined, message: `Service ${key} is quarantined: ${reason}` }] };
  // Only its name is read further down the pipeline (check specs read nothing of a Service without candidates).
  return { service: key, object: { metadata: { name: svc.metadata?.name ?? '', namespace: svc.metadata?.namespace ?? '' } }, decision, vips: [], contributions: [], annotations: previous?.annotations ?? NO_ANNOTATIONS };
}

/** A Snapshot's methods, bound, so that one of them can be replaced. */
function snapshotView(s: Snapshot): Snapshot {
  return { services: () => s.services(), service: (k) => s.service(k), endpointSlicesFor: (k) => s.endpointSlicesFor(k), node: (n) => s.node(n), nodes: () => s.nodes(), serviceCIDRs: () => s.serviceCIDRs(), heraldObjects: (k) => s.heraldObjects(k), nodeSet: () => s.nodeSet() };
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
