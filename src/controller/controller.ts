/**
 * The controller: turns source change keys into the full desired result for a sink.
 *
 * - Nothing is computed or handed to the sink until the source has synced once (every informer
 *   listed once; MetalLB's initialLoadPerformed gate), so a restart never withdraws routes
 *   because of a half-filled cache.
 * - Change keys go through a coalescing `WorkQueue`. A `service:ns/name` key recomputes only
 *   that Service's decision (cost proportional to its EndpointSlices); a change of THIS node's
 *   eligibility or labels, `all`, or a context change recomputes every Service (other updates of
 *   this Node, e.g. status heartbeats, are ignored); `servicecidr:*` recomputes the service
 *   CIDRs; other nodes' changes are ignored (they cannot change this node's routes).
 * - When the queue drains, one `emit` key hands the full `DesiredResult` to `sink.onDesired`
 *   (level-triggered: the sink replaces its whole desired set). A throwing/rejecting sink is
 *   retried with backoff; the retry hands over the newest result.
 */
import { EventEmitter } from 'node:events';
import type { DesiredResult, DesiredRoute, DesiredRoutesContext, NodeState, RouteContribution, ServiceCIDRDecision, ServiceDecision } from './desired-routes.ts';
import { compareRoutes, decideService, evaluateNode, mergePrefix, serviceCIDRContributions } from './desired-routes.ts';
import type { Clock } from '../../bgp/index.ts';
import { WorkQueue } from './workqueue.ts';
import type { Source } from '../sources/source.ts';
import { ALL_KEY, objectKey } from '../k8s/keys.ts';

/**
 * What changed since the previous result the sink accepted (for sinks that want to work
 * incrementally; the result itself is always complete). `all` is true after a full recompute
 * (first result, this node changed, context change, resync); the lists are then complete too.
 */
export interface DesiredChanges {
  all: boolean;
  /** "ns/name" of Services whose decision may have changed, appeared or disappeared. */
  services: string[];
  /** Prefixes whose route may have changed, appeared or disappeared. */
  prefixes: string[];
}

/**
 * Receives every new desired result. May be async; throw/reject to have it retried.
 * The result and its arrays are not mutated afterwards; unchanged routes and decisions keep their
 * object identity from one result to the next.
 */
export interface DesiredSink {
  onDesired(result: DesiredResult, changes: DesiredChanges): void | Promise<void>;
}

/** Options of `Controller`. */
export interface ControllerOptions {
  source: Source;
  context: DesiredRoutesContext;
  sink: DesiredSink;
  clock?: Clock;
  /** First retry delay in ms after a failing sink (default 100). */
  retryBaseMs?: number;
  /** Retry delay cap in ms (default 30000). */
  retryMaxMs?: number;
  /** Periodic full recompute in ms (default 300000; 0 disables). client-node has no resync of its own. */
  resyncIntervalMs?: number;
}

/** Plain-number counters for metrics. */
export interface ControllerStats {
  /** Keys processed (excluding emits). */
  reconciles: number;
  /** Services recomputed. */
  servicesComputed: number;
  /** Results handed to the sink successfully. */
  emits: number;
  /** Sink failures. */
  sinkErrors: number;
  /** Time of the last successful emit (ms since the epoch, 0 = never). */
  lastEmitAtMs: number;
}

const EMIT_KEY = '\u0000emit';

const sameList = (a: readonly (string | number)[], b: readonly (string | number)[]): boolean => a.length === b.length && a.every((x, i) => x === b[i]);

/** Whether two merged routes are equal field by field. */
function sameRoute(a: DesiredRoute, b: DesiredRoute): boolean {
  return (
    a.prefix === b.prefix &&
    a.family === b.family &&
    a.localPref === b.localPref &&
    a.med === b.med &&
    (a.peers === 'all' || b.peers === 'all' ? a.peers === b.peers : sameList(a.peers, b.peers)) &&
    sameList(a.communities, b.communities) &&
    sameList(a.largeCommunities, b.largeCommunities) &&
    sameList(a.services, b.services) &&
    sameList(a.advertisements, b.advertisements) &&
    Object.keys(a).length === Object.keys(b).length
  );
}

/** First index of `arr` (sorted by compareRoutes) whose route is not before `r`. */
function lowerBound(arr: readonly DesiredRoute[], r: { family: DesiredRoute['family']; prefix: string }): number {
  let lo = 0;
  let hi = arr.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compareRoutes(arr[mid] as DesiredRoute, r) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** See module doc. Events: 'desired' (result) after each successful emit, 'error' (key, err) for retried failures. */
export class Controller extends EventEmitter {
  readonly #source: Source;
  readonly #sink: DesiredSink;
  readonly #clock: Clock | undefined;
  readonly #queue: WorkQueue;
  readonly #resyncIntervalMs: number;
  #ctx: DesiredRoutesContext;
  #node: NodeState | undefined;
  readonly #decisions = new Map<string, { decision: ServiceDecision; contributions: RouteContribution[] }>();
  #cidrs: { decisions: ServiceCIDRDecision[]; contributions: RouteContribution[] } = { decisions: [], contributions: [] };
  /** prefix -> owner ("service:ns/name" or "cidr") -> its contributions to that prefix */
  readonly #owners = new Map<string, Map<string, RouteContribution[]>>();
  /** owner -> prefixes it contributes to */
  readonly #ownerPrefixes = new Map<string, Set<string>>();
  readonly #routes = new Map<string, DesiredRoute>();
  readonly #dirtyPrefixes = new Set<string>();
  #sortedRoutes: DesiredRoute[] | undefined;
  #servicesArr: ServiceDecision[] | undefined;
  readonly #serviceIdx = new Map<string, number>();
  /** Services changed since #servicesArr was built (membership changes rebuild it). */
  readonly #patchServices = new Set<string>();
  /** Changes not yet accepted by the sink. */
  readonly #reportServices = new Set<string>();
  readonly #reportPrefixes = new Set<string>();
  #reportAll = true;
  #dirty = false;
  #started = false;
  #resyncTimer: ReturnType<typeof setInterval> | undefined;
  #last: DesiredResult | undefined;
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
    this.#clock = opts.clock;
    this.#resyncIntervalMs = opts.resyncIntervalMs ?? 300_000;
    this.#queue = new WorkQueue((k) => this.#process(k), {
      baseDelayMs: opts.retryBaseMs ?? 100,
      maxDelayMs: opts.retryMaxMs ?? 30_000,
      ...(opts.clock ? { clock: opts.clock } : {}),
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

  /** Recompute one Service ("ns/name"), or everything (e.g. after a health-check state change). */
  invalidate(serviceKey?: string): void {
    if (!this.#source.synced()) return;
    this.#queue.add(serviceKey === undefined ? ALL_KEY : `service:${serviceKey}`);
  }

  /** True once the source has synced (results flow only from then on). */
  synced(): boolean {
    return this.#source.synced();
  }

  /** Status for /readyz and metrics: source status, counters, queue depth. */
  status(): { synced: boolean; source: ReturnType<Source['status']>; stats: ControllerStats; queued: number; pendingRetries: number } {
    return { synced: this.#source.synced(), source: this.#source.status(), stats: { ...this.stats }, queued: this.#queue.length, pendingRetries: this.#queue.pendingRetries };
  }

  /** The last result handed to the sink, if any. */
  last(): DesiredResult | undefined {
    return this.#last;
  }

  /**
   * The route of `prefix` in the newest result handed (or being handed) to the sink, or undefined when that result has
   * none — an O(1) lookup for sinks that apply `changes.prefixes` incrementally. Same object as in `result.routes`.
   */
  route(prefix: string): DesiredRoute | undefined {
    return this.#routes.get(prefix);
  }

  /** Resolves when no key is queued or running (tests, graceful shutdown). */
  whenIdle(): Promise<void> {
    return this.#queue.whenIdle();
  }

  async #process(key: string): Promise<void> {
    if (key === EMIT_KEY) return this.#emit();
    this.stats.reconciles++;
    const snap = this.#source.snapshot();
    if (key === `node:${this.#ctx.nodeName}` && this.#node !== undefined) {
      // Node status heartbeats change the object but rarely what matters (eligibility, labels).
      const next = evaluateNode(snap.node(this.#ctx.nodeName), this.#ctx.nodeName);
      if (JSON.stringify(next) === JSON.stringify(this.#node)) return;
    }
    if (key === ALL_KEY || key === `node:${this.#ctx.nodeName}` || this.#node === undefined) {
      this.#node = evaluateNode(snap.node(this.#ctx.nodeName), this.#ctx.nodeName);
      this.#reportAll = true;
      const stale = new Set(this.#decisions.keys());
      for (const svc of snap.services()) {
        const k = objectKey(svc);
        stale.delete(k);
        this.#computeService(k);
      }
      for (const k of stale) this.#computeService(k); // vanished: removes them
      this.#cidrs = serviceCIDRContributions(snap, this.#node, this.#ctx);
      this.#setContributions('cidr', this.#cidrs.contributions);
      this.#dirty = true;
    } else if (key.startsWith('service:')) {
      this.#computeService(key.slice('service:'.length));
      this.#dirty = true;
    } else if (key.startsWith('servicecidr:')) {
      this.#cidrs = serviceCIDRContributions(snap, this.#node, this.#ctx);
      this.#setContributions('cidr', this.#cidrs.contributions);
      this.#dirty = true;
    }
    // node:<other> — irrelevant to this node's routes
  }

  #computeService(key: string): void {
    const snap = this.#source.snapshot();
    const svc = snap.service(key);
    if (!svc) {
      if (this.#decisions.delete(key)) {
        this.#servicesArr = undefined;
        this.#reportServices.add(key);
      }
      this.#setContributions(`service:${key}`, []);
      return;
    }
    this.stats.servicesComputed++;
    const d = decideService(svc, snap.endpointSlicesFor(key), this.#node as NodeState, this.#ctx);
    if (!this.#decisions.has(key)) this.#servicesArr = undefined;
    this.#decisions.set(key, d);
    this.#patchServices.add(key);
    this.#reportServices.add(key);
    this.#setContributions(`service:${key}`, d.contributions);
  }

  /** Replace an owner's contributions; marks the prefixes it touched or touches dirty. */
  #setContributions(owner: string, contributions: readonly RouteContribution[]): void {
    const old = this.#ownerPrefixes.get(owner);
    if (old) {
      for (const p of old) {
        this.#owners.get(p)?.delete(owner);
        this.#dirtyPrefixes.add(p);
      }
    }
    if (contributions.length === 0) {
      this.#ownerPrefixes.delete(owner);
      return;
    }
    const prefixes = new Set<string>();
    for (const c of contributions) {
      let byOwner = this.#owners.get(c.prefix);
      if (!byOwner) this.#owners.set(c.prefix, (byOwner = new Map()));
      const l = byOwner.get(owner);
      if (l) l.push(c);
      else byOwner.set(owner, [c]);
      prefixes.add(c.prefix);
      this.#dirtyPrefixes.add(c.prefix);
    }
    this.#ownerPrefixes.set(owner, prefixes);
  }

  /**
   * Re-merge dirty prefixes only. The sorted route list of the previous result is copied (pointers only) and patched
   * in place by binary search (replace, insert or remove one entry per dirty prefix); it is rebuilt and sorted only the
   * first time or when many prefixes changed at once. O(dirty × log routes) plus one pointer copy.
   */
  #currentRoutes(): DesiredRoute[] {
    const prev = this.#sortedRoutes;
    let arr = prev !== undefined && this.#dirtyPrefixes.size <= Math.max(64, prev.length >>> 4) ? prev.slice() : undefined;
    for (const p of this.#dirtyPrefixes) {
      const old = this.#routes.get(p);
      const byOwner = this.#owners.get(p);
      const list: RouteContribution[] = [];
      if (byOwner) for (const l of byOwner.values()) list.push(...l);
      let next: DesiredRoute | undefined;
      if (list.length === 0) {
        this.#owners.delete(p);
        this.#routes.delete(p);
      } else {
        next = mergePrefix(list);
        if (old !== undefined && sameRoute(old, next)) next = old; // unchanged: keep the object (sinks compare identity)
        this.#routes.set(p, next);
      }
      if (arr === undefined || old === next) continue;
      const i = lowerBound(arr, (old ?? next) as DesiredRoute);
      if (old !== undefined && arr[i] !== old) arr = undefined; // not where expected: rebuild below (never seen)
      else if (old === undefined) arr.splice(i, 0, next as DesiredRoute);
      else if (next === undefined) arr.splice(i, 1);
      else arr[i] = next;
    }
    for (const p of this.#dirtyPrefixes) this.#reportPrefixes.add(p);
    this.#dirtyPrefixes.clear();
    this.#sortedRoutes = arr ?? [...this.#routes.values()].sort(compareRoutes);
    return this.#sortedRoutes;
  }

  /** Sorted Service decisions; rebuilt only when the set of Services changed, else copied and patched. */
  #currentServices(): ServiceDecision[] {
    if (!this.#servicesArr) {
      const keys = [...this.#decisions.keys()].sort();
      this.#servicesArr = keys.map((k) => (this.#decisions.get(k) as { decision: ServiceDecision }).decision);
      this.#serviceIdx.clear();
      keys.forEach((k, i) => this.#serviceIdx.set(k, i));
    } else if (this.#patchServices.size > 0) {
      const arr = this.#servicesArr.slice();
      for (const k of this.#patchServices) arr[this.#serviceIdx.get(k) as number] = (this.#decisions.get(k) as { decision: ServiceDecision }).decision;
      this.#servicesArr = arr;
    }
    this.#patchServices.clear();
    return this.#servicesArr;
  }

  async #emit(): Promise<void> {
    if (!this.#dirty || !this.#node) return;
    this.#dirty = false;
    // Both arrays are fresh for this result (never mutated later), built in O(changes) + a pointer copy.
    const result: DesiredResult = { routes: this.#currentRoutes(), services: this.#currentServices(), serviceCIDRs: this.#cidrs.decisions, node: this.#node };
    const changes: DesiredChanges = { all: this.#reportAll, services: [...this.#reportServices].sort(), prefixes: [...this.#reportPrefixes].sort() };
    try {
      await this.#sink.onDesired(result, changes);
      this.#reportAll = false;
      this.#reportServices.clear();
      this.#reportPrefixes.clear();
    } catch (e) {
      this.stats.sinkErrors++;
      this.#dirty = true; // retried with backoff by the queue (unless a newer change emits first)
      throw e;
    }
    this.#last = result;
    this.stats.emits++;
    this.stats.lastEmitAtMs = this.#clock ? this.#clock.now() : Date.now();
    this.emit('desired', result);
  }
}
