/**
 * Route assembly (docs/architecture.md): the last stage before the Speaker. It holds the route pieces of every
 * owner (each Service's gated pieces, the service CIDRs' pieces), merges them per prefix (src/controller/
 * route-merge.ts), adds the static routes that passed their gates (a static route wins over a Service VIP with the
 * same prefix), maps each merged route to a Speaker Route once (mapping.ts), and hands the Speaker either the whole
 * desired set (`flush(true)`: start, reload, a full recompute) or exactly what changed (`updateRoutes`).
 *
 * Incremental: only the prefixes of owners that changed are merged again, an unchanged merged route keeps its
 * object and its Speaker Route, so one EndpointSlice change costs O(prefixes it touches) here.
 *
 * Attribute changes are rate-limited per prefix (`attributeChangeInterval`, docs/traffic-steering.md "Rate limit"):
 * a Service route already handed over whose attributes change (a link bandwidth that follows the endpoints of a
 * scaling Deployment, a locality flip, an annotation edit) goes out at once when its last change is at least one
 * interval old, else it is held and its latest value goes out when the interval ends (`onDue` asks for the flush
 * that sends it). So each prefix changes at most once per interval, and no value waits longer than one interval.
 * First announcements, withdrawals and static routes are never held.
 */
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
  /**
   * Prefixes whose static route changed since the last flush (new, another object, gone); `'all'`: every prefix of
   * `#static`, set when `setStatic` replaced an empty set (100,000 new routes need no per-prefix bookkeeping: a full
   * flush takes the static routes whole, an incremental one walks `#static`).
   */
  #staticDirty: Set<string> | 'all' = new Set();
  /** Static routes passing their gates, by prefix. */
  #static = new Map<string, Route>();
  /** The Speaker Route made from each config object of the last `setStatic` (made once while the object stays). */
  #staticRoutes = new Map<StaticRouteConfig, Route>();
  /** The desired set last handed to the sink, by prefix. */
  #desired = new Map<string, Route>();
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

  /** Number of routes in the desired set last handed over. */
  get size(): number {
    return this.#desired.size;
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
   * The static routes that pass their gates now, in config order. Only prefixes whose static route changed (new,
   * another object, gone) are merged again.
   */
  setStatic(routes: readonly StaticRouteConfig[]): void {
    const prev = this.#static;
    const made = this.#staticRoutes;
    const next = new Map<string, Route>();
    const nextMade = new Map<StaticRouteConfig, Route>();
    if (this.#staticDirty === 'all') this.#staticDirty = new Set(prev.keys());
    const dirty = prev.size === 0 && this.#staticDirty.size === 0 ? undefined : this.#staticDirty;
    for (const r of routes) {
      const route = made.get(r) ?? staticRoute(r);
      nextMade.set(r, route);
      next.set(route.prefix, route);
      if (dirty !== undefined && prev.get(route.prefix) !== route) dirty.add(route.prefix);
    }
    if (dirty === undefined) {
      if (next.size > 0) this.#staticDirty = 'all';
    } else {
      for (const p of prev.keys()) if (!next.has(p)) dirty.add(p);
    }
    this.#static = next;
    this.#staticRoutes = nextMade;
  }

  /**
   * Merge what changed and hand it to the sink: the whole desired set when `full`, else the changed and removed
   * routes (nothing when nothing changed).
   */
  flush(full: boolean): FlushResult {
    const changed: Route[] = [];
    const removed: string[] = [];
    const now = this.#clock.now();
    for (const [p, at] of this.#held) if (at <= now) this.#dirty.add(p);
    for (const p of this.#dirty) this.#merge(p);
    if (full) {
      const desired = new Map<string, Route>();
      const statics = this.#static;
      for (const e of this.#merged.values()) if (!statics.has(e.route.prefix)) desired.set(e.route.prefix, this.#next(e.route.prefix, e.route, now));
      // Static routes win and are never held: what was kept for a merged route of their prefix goes below.
      for (const r of statics.values()) desired.set(r.prefix, r);
      for (const p of this.#sentAt.keys()) if (!desired.has(p) || statics.has(p)) this.#sentAt.delete(p);
      for (const p of this.#sentMerged.keys()) if (!desired.has(p) || statics.has(p)) this.#sentMerged.delete(p);
      for (const p of this.#held.keys()) if (!desired.has(p) || statics.has(p)) this.#held.delete(p);
      this.#desired = desired;
      this.#dirty.clear();
      this.#staticDirty = new Set();
      this.#sink.setRoutes(desired);
      this.#arm();
      return { routes: desired.size, changed: desired.size, removed: 0, held: this.#held.size };
    }
    for (const p of this.#staticDirty === 'all' ? this.#static.keys() : this.#staticDirty) this.#dirty.add(p);
    this.#staticDirty = new Set();
    for (const p of this.#dirty) {
      const wanted = this.#static.get(p) ?? this.#merged.get(p)?.route;
      const prev = this.#desired.get(p);
      if (wanted === undefined) {
        this.#held.delete(p);
        this.#sentAt.delete(p);
        this.#sentMerged.delete(p);
        if (prev === undefined) continue;
        this.#desired.delete(p);
        removed.push(p);
        continue;
      }
      const next = this.#next(p, wanted, now);
      if (next === prev) continue;
      this.#desired.set(p, next);
      changed.push(next);
    }
    this.#dirty.clear();
    if (changed.length > 0 || removed.length > 0) this.#sink.updateRoutes(changed, removed);
    this.#arm();
    return { routes: this.#desired.size, changed: changed.length, removed: removed.length, held: this.#held.size };
  }

  /**
   * The route to hand over for `prefix` now: `wanted`, or the route handed over before while an attribute change of
   * a Service route is held by the rate limit (see the module comment).
   */
  #next(prefix: string, wanted: Route, now: number): Route {
    const prev = this.#desired.get(prefix);
    if (wanted === prev) {
      this.#held.delete(prefix); // changed back before its interval ended: nothing to send
      return wanted;
    }
    if (this.#static.get(prefix) === wanted) {
      // Static routes are the operator's own and never held.
      this.#sentAt.delete(prefix);
      this.#sentMerged.delete(prefix);
      this.#held.delete(prefix);
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
    if (byOwner === undefined && this.#merged.size === 0) return; // a static prefix, nothing merged anywhere
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
