/**
 * Route assembly (docs/architecture.md): the last stage before the Speaker. It holds the route pieces of every
 * owner (each Service's gated pieces, the service CIDRs' pieces), merges them per prefix (src/controller/
 * route-merge.ts), adds the static routes that passed their gates (a static route wins over a Service VIP with the
 * same prefix), maps each merged route to a Speaker Route once (mapping.ts), and hands the Speaker what changed
 * (`updateRoutes`): the Speaker thread holds the one full table (bgp/rib/route-table.ts). Only the first flush hands
 * over the whole set (`setRoutes`), and the flush after a failed pass or a hand-over that threw (it heals them).
 *
 * Incremental: only the prefixes of owners that changed are merged again, an unchanged merged route keeps its
 * object and its Speaker Route, so one EndpointSlice change costs O(prefixes it touches) here. Static routes are
 * diffed as lists against those last handed over: the same config objects in the same places cost a comparison each
 * and make no Route (a reload keeps the objects of unchanged routes, src/config/load.ts), and only the changed middle
 * of two lists is matched by prefix, so a reload that empties or fills a table of 100,000 routes builds no second
 * table of them. The static routes by prefix (to let them win over Service routes) are indexed only once Service
 * routes need it.
 *
 * Attribute changes are rate-limited per prefix (`attributeChangeInterval`, docs/traffic-steering.md "Rate limit"):
 * a Service route already handed over whose attributes change (a link bandwidth that follows the endpoints of a
 * scaling Deployment, a locality flip, an annotation edit) goes out at once when its last change is at least one
 * interval old, else it is held and its latest value goes out when the interval ends (`onDue` asks for the flush
 * that sends it). So each prefix changes at most once per interval, and no value waits longer than one interval.
 * First announcements, withdrawals and static routes are never held.
 */
import { isDeepStrictEqual } from 'node:util';
import type { Clock, Route, TimerHandle } from '../../bgp/main-thread.ts';
import { realClock } from '../../bgp/main-thread.ts';
import type { DesiredRoute, RouteContribution } from '../controller/route-merge.ts';
import { mergePrefix, sameAttributes, sameRoute } from '../controller/route-merge.ts';
import type { StaticRouteConfig } from '../config/schema.ts';
import { desiredRoute, staticRoute } from './mapping.ts';
import type { SpeakerLike } from './speaker-like.ts';

/** What route assembly hands the routes to. */
export type RouteSink = Pick<SpeakerLike, 'setRoutes' | 'updateRoutes'>;

/** What one flush handed over. */
export interface FlushResult {
  /** Routes in the desired set. */
  readonly routes: number;
  readonly changed: number;
  readonly removed: number;
  /** Attribute changes held back by the rate limit (sent when their interval ends). */
  readonly held: number;
}

/** Options of {@link RouteAssembly}. */
export interface RouteAssemblyOptions {
  clock?: Clock;
  /** Shortest time between two attribute changes of one announced Service route, ms (default 0: no limit). */
  attributeChangeIntervalMs?: number;
  /** Called when held changes are due: the caller runs a flush (a pass). */
  onDue?: () => void;
}

const CIDR_OWNER = 'cidr';
const serviceOwner = (service: string): string => `service:${service}`;

/** The static routes of `next` as Speaker Routes, and what changed since `prev` (handed over as `prevRoutes`). */
interface StaticDiff {
  /** One Route per entry of `next`, in order. */
  readonly routes: readonly Route[];
  /** Routes new or of another config object than before. */
  readonly changed: readonly Route[];
  /** Prefixes no longer among them. */
  readonly removed: readonly string[];
}

/**
 * Diffs two static route lists: the same object at the same place (from either end) is unchanged and keeps its
 * Route; the rest in the middle is matched by prefix (a route equal to the one handed over is unchanged too), without
 * a map when one side of it is empty.
 */
function diffStatic(prev: readonly StaticRouteConfig[], prevRoutes: readonly Route[], next: readonly StaticRouteConfig[]): StaticDiff {
  const n0 = prev.length;
  const n1 = next.length;
  let a = 0;
  const lim = Math.min(n0, n1);
  while (a < lim && prev[a] === next[a]) a++;
  let e0 = n0;
  let e1 = n1;
  while (e0 > a && e1 > a && prev[e0 - 1] === next[e1 - 1]) {
    e0--;
    e1--;
  }
  if (a === n0 && a === n1) return { routes: prevRoutes, changed: [], removed: [] };
  const routes = new Array<Route>(n1);
  for (let i = 0; i < a; i++) routes[i] = prevRoutes[i]!;
  for (let i = e1, j = e0; i < n1; i++, j++) routes[i] = prevRoutes[j]!;
  const changed: Route[] = [];
  const removed: string[] = [];
  if (e0 === a) {
    for (let i = a; i < e1; i++) changed.push((routes[i] = staticRoute(next[i]!)));
  } else if (e1 === a) {
    for (let j = a; j < e0; j++) removed.push(prevRoutes[j]!.prefix);
  } else {
    const old = new Map<string, number>();
    for (let j = a; j < e0; j++) old.set(prevRoutes[j]!.prefix, j);
    for (let i = a; i < e1; i++) {
      const made = staticRoute(next[i]!);
      const j = old.get(made.prefix);
      if (j !== undefined) old.delete(made.prefix);
      // the same route from another config object (a file parsed again, an object merged again) is no change
      if (j !== undefined && (prev[j] === next[i] || isDeepStrictEqual(prevRoutes[j], made))) routes[i] = prevRoutes[j]!;
      else changed.push((routes[i] = made));
    }
    for (const j of old.values()) removed.push(prevRoutes[j]!.prefix);
  }
  return { routes, changed, removed };
}

/** See the module comment. */
export class RouteAssembly {
  readonly #sink: RouteSink;
  /** prefix → owner → its pieces of that prefix. */
  readonly #owners = new Map<string, Map<string, RouteContribution[]>>();
  /** owner → the pieces it contributes (identity tells a change) and their prefixes. */
  readonly #byOwner = new Map<string, { contributions: readonly RouteContribution[]; prefixes: Set<string> }>();
  /** Merged routes of the owners, with the Speaker Route made from each (kept while the merged route is the same object). */
  readonly #merged = new Map<string, { d: DesiredRoute; route: Route }>();
  /** Prefixes whose owners' pieces changed (merged again at the next flush) or whose held change is due. */
  readonly #dirty = new Set<string>();
  /** Static routes passing their gates now (the last `setStatic`), in config order. */
  #static: readonly StaticRouteConfig[] = [];
  /** The static routes last handed over, and the Speaker Route made from each (same order). */
  #handedStatic: readonly StaticRouteConfig[] = [];
  #handedStaticRoutes: readonly Route[] = [];
  /** The handed-over static Routes by prefix: built once Service routes need it, then kept up to date. */
  #staticIndex: Map<string, Route> | undefined;
  /** The merged routes last handed over, by prefix (prefixes without a static route). */
  readonly #handedMerged = new Map<string, Route>();
  /** The whole set goes at the next flush: nothing was handed over yet, or the last hand-over threw. */
  #whole = true;
  /** When each prefix's merged route was last handed over (first announcement or attribute change), clock ms. */
  readonly #sentAt = new Map<string, number>();
  /** The merged route last handed over per prefix (while it is a merged one, not a static one). */
  readonly #sentMerged = new Map<string, { d: DesiredRoute; route: Route }>();
  /** Prefixes whose attribute change is held, and when it may go. */
  readonly #held = new Map<string, number>();
  readonly #clock: Clock;
  #intervalMs: number;
  readonly #onDue: (() => void) | undefined;
  #timer: { handle: TimerHandle; at: number } | undefined;
  /** Test hook: Speaker Routes made from merged routes; attribute changes held by the rate limit. */
  readonly stats = { routesMade: 0, attributeChangesHeld: 0 };

  constructor(sink: RouteSink, opts: RouteAssemblyOptions = {}) {
    this.#sink = sink;
    this.#clock = opts.clock ?? realClock;
    this.#intervalMs = opts.attributeChangeIntervalMs ?? 0;
    this.#onDue = opts.onDue;
  }

  /** A new rate limit (reload); held changes become due by the new interval at the next flush. */
  setAttributeChangeInterval(ms: number): void {
    this.#intervalMs = ms;
    for (const [p, at] of this.#held) this.#held.set(p, Math.min(at, (this.#sentAt.get(p) ?? 0) + ms));
    this.#arm();
  }

  /** Prefixes whose attribute change is held by the rate limit, and when it goes out (clock ms). Live view. */
  held(): ReadonlyMap<string, number> {
    return this.#held;
  }

  /** Stop the timer of held changes (shutdown). */
  close(): void {
    this.#clock.clearTimer(this.#timer?.handle);
    this.#timer = undefined;
  }

  /**
   * The merged route of `prefix` when one was handed over for it (no static route takes its place); undefined
   * otherwise. What `herald services` shows as on the wire (admin-view.ts `onTheWire`; a change the rate limit holds
   * shows with its `heldUntil`).
   */
  wireRoute(prefix: string): DesiredRoute | undefined {
    return this.#handedMerged.has(prefix) ? this.#merged.get(prefix)?.d : undefined;
  }

  /** Number of routes in the desired set last handed over. */
  get size(): number {
    return this.#handedStaticRoutes.length + this.#handedMerged.size;
  }

  /** The next flush hands over the whole set (after a failed pass: what the Speaker holds is then set again). */
  handOverWhole(): void {
    this.#whole = true;
  }

  /** Replace the pieces of Service "ns/name" (empty: it announces nothing). Same array as before: no-op. */
  setService(service: string, contributions: readonly RouteContribution[]): void {
    this.#setOwner(serviceOwner(service), contributions);
  }

  /** Replace the service CIDRs' pieces. */
  setServiceCIDRs(contributions: readonly RouteContribution[]): void {
    this.#setOwner(CIDR_OWNER, contributions);
  }

  /**
   * The static routes that pass their gates now, in config order (the list is kept as given, not copied). What
   * changed is found at the next flush.
   */
  setStatic(routes: readonly StaticRouteConfig[]): void {
    this.#static = routes;
  }

  /**
   * Merge what changed and hand it to the sink: the changed and removed routes (nothing when nothing changed), or the
   * whole set at the first flush. `full` looks at every merged prefix again, not only those whose pieces changed.
   */
  flush(full: boolean): FlushResult {
    const now = this.#clock.now();
    for (const [p, at] of this.#held) if (at <= now) this.#dirty.add(p);
    for (const p of this.#dirty) this.#merge(p);
    const changed: Route[] = [];
    const removed: string[] = [];
    // Static routes: what changed in their list; they win over merged routes of their prefix and are never held.
    const sd = diffStatic(this.#handedStatic, this.#handedStaticRoutes, this.#static);
    const look = new Set(this.#dirty);
    if (full) {
      for (const p of this.#merged.keys()) look.add(p);
      for (const p of this.#handedMerged.keys()) look.add(p);
    }
    for (const p of sd.removed) {
      if (this.#merged.has(p)) look.add(p); // a merged route takes the prefix back
      else removed.push(p);
    }
    for (const r of sd.changed) {
      changed.push(r);
      this.#handedMerged.delete(r.prefix);
      this.#forget(r.prefix);
    }
    const index = look.size > 0 || this.#staticIndex !== undefined ? this.#indexStatic(sd) : undefined;
    for (const p of look) {
      if (index?.has(p) === true) {
        this.#forget(p);
        continue;
      }
      const wanted = this.#merged.get(p)?.route;
      const prev = this.#handedMerged.get(p);
      if (wanted === undefined) {
        this.#forget(p);
        if (prev === undefined) continue;
        this.#handedMerged.delete(p);
        removed.push(p);
        continue;
      }
      const next = this.#next(p, wanted, prev, now);
      if (next === prev) continue;
      this.#handedMerged.set(p, next);
      changed.push(next);
    }
    this.#dirty.clear();
    this.#handedStatic = this.#static;
    this.#handedStaticRoutes = sd.routes;
    const whole = this.#whole;
    try {
      if (whole) this.#sink.setRoutes([...sd.routes, ...this.#handedMerged.values()]);
      else if (changed.length > 0 || removed.length > 0) this.#sink.updateRoutes(changed, removed);
    } catch (err) {
      this.#whole = true; // the next flush hands over everything again
      throw err;
    }
    this.#whole = false;
    this.#arm();
    const routes = this.size;
    return whole ? { routes, changed: routes, removed: 0, held: this.#held.size } : { routes, changed: changed.length, removed: removed.length, held: this.#held.size };
  }

  /** The static routes of `sd` by prefix, when they are indexed already or Service routes need them. */
  #indexStatic(sd: StaticDiff): Map<string, Route> | undefined {
    let index = this.#staticIndex;
    if (index === undefined) {
      if (sd.routes.length === 0) return undefined;
      index = new Map();
      for (const r of sd.routes) index.set(r.prefix, r);
      this.#staticIndex = index;
      return index;
    }
    for (const p of sd.removed) index.delete(p);
    for (const r of sd.changed) index.set(r.prefix, r);
    return index;
  }

  /** Drops the rate-limit bookkeeping of a prefix that has no merged route handed over any more. */
  #forget(prefix: string): void {
    this.#sentAt.delete(prefix);
    this.#sentMerged.delete(prefix);
    this.#held.delete(prefix);
  }

  /**
   * The merged route to hand over for `prefix` now: `wanted`, or `prev` (handed over before) while an attribute
   * change is held by the rate limit (see the module comment).
   */
  #next(prefix: string, wanted: Route, prev: Route | undefined, now: number): Route {
    if (wanted === prev) {
      this.#held.delete(prefix); // changed back before its interval ended: nothing to send
      return wanted;
    }
    const last = this.#sentAt.get(prefix);
    if (prev !== undefined && last !== undefined && this.#intervalMs > 0 && now - last < this.#intervalMs) {
      if (!this.#held.has(prefix)) this.stats.attributeChangesHeld++;
      this.#held.set(prefix, last + this.#intervalMs);
      return prev;
    }
    this.#held.delete(prefix);
    this.#sentAt.set(prefix, now);
    const merged = this.#merged.get(prefix);
    if (merged !== undefined) this.#sentMerged.set(prefix, merged);
    return wanted;
  }

  /** One timer for the earliest held change. */
  #arm(): void {
    let at = Infinity;
    for (const t of this.#held.values()) at = Math.min(at, t);
    if (this.#timer !== undefined && this.#timer.at === at) return;
    this.#clock.clearTimer(this.#timer?.handle);
    this.#timer = undefined;
    if (at === Infinity || this.#onDue === undefined) return;
    const onDue = this.#onDue;
    const handle = this.#clock.setTimer(() => {
      this.#timer = undefined;
      onDue();
    }, at - this.#clock.now());
    this.#timer = { handle, at };
  }

  #setOwner(owner: string, contributions: readonly RouteContribution[]): void {
    const old = this.#byOwner.get(owner);
    if (old?.contributions === contributions) return;
    if (old) {
      for (const p of old.prefixes) {
        this.#owners.get(p)?.delete(owner);
        this.#dirty.add(p);
      }
    }
    if (contributions.length === 0) {
      this.#byOwner.delete(owner);
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
      this.#dirty.add(c.prefix);
    }
    this.#byOwner.set(owner, { contributions, prefixes });
  }

  /** Merge the pieces of one prefix again; an unchanged result keeps its objects. */
  #merge(prefix: string): void {
    const byOwner = this.#owners.get(prefix);
    const list: RouteContribution[] = [];
    if (byOwner) for (const l of byOwner.values()) for (const c of l) list.push(c);
    if (list.length === 0) {
      this.#owners.delete(prefix);
      this.#merged.delete(prefix);
      return;
    }
    const d = mergePrefix(list);
    const old = this.#merged.get(prefix);
    if (old !== undefined && sameRoute(old.d, d)) return;
    if (old !== undefined && sameAttributes(old.d, d)) {
      // Only the Services or advertisements behind it changed: the Speaker Route (what goes out) stays the same.
      this.#merged.set(prefix, { d, route: old.route });
      return;
    }
    const sent = this.#sentMerged.get(prefix);
    if (sent !== undefined && sameAttributes(sent.d, d)) {
      // Back to what was handed over (a held change undone): that Route again, so nothing is sent.
      this.#merged.set(prefix, { d, route: sent.route });
      return;
    }
    this.stats.routesMade++;
    this.#merged.set(prefix, { d, route: desiredRoute(d) });
  }
}
