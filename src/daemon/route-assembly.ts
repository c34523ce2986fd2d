/**
 * Route assembly (docs/architecture.md): the last stage before the Speaker. It holds the route pieces of every
 * owner (each Service's gated pieces, the service CIDRs' pieces), merges them per prefix (src/controller/
 * route-merge.ts), adds the static routes that passed their gates (a static route wins over a Service VIP with the
 * same prefix), maps each merged route to a Speaker Route once (mapping.ts), and hands the Speaker either the whole
 * desired set (`flush(true)`: start, reload, a full recompute) or exactly what changed (`updateRoutes`).
 *
 * Incremental: only the prefixes of owners that changed are merged again, an unchanged merged route keeps its
 * object and its Speaker Route, so one EndpointSlice change costs O(prefixes it touches) here.
 */
import type { Route } from '../../bgp/index.ts';
import type { DesiredRoute, RouteContribution } from '../controller/route-merge.ts';
import { mergePrefix, sameRoute } from '../controller/route-merge.ts';
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
  readonly #dirty = new Set<string>();
  /** Static routes passing their gates, by prefix; the Speaker Route of each config object is made once. */
  #static = new Map<string, Route>();
  readonly #staticRoutes = new WeakMap<StaticRouteConfig, Route>();
  /** The desired set last handed to the sink, by prefix. */
  #desired = new Map<string, Route>();
  /** Test hook: Speaker Routes made from merged routes. */
  readonly stats = { routesMade: 0 };

  constructor(sink: RouteSink) {
    this.#sink = sink;
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

  /** The static routes that pass their gates now, in config order. */
  setStatic(routes: readonly StaticRouteConfig[]): void {
    const next = new Map<string, Route>();
    for (const r of routes) {
      let route = this.#staticRoutes.get(r);
      if (route === undefined) this.#staticRoutes.set(r, (route = staticRoute(r)));
      next.set(route.prefix, route);
    }
    for (const p of this.#static.keys()) this.#dirty.add(p);
    for (const p of next.keys()) this.#dirty.add(p);
    this.#static = next;
  }

  /**
   * Merge what changed and hand it to the sink: the whole desired set when `full`, else the changed and removed
   * routes (nothing when nothing changed).
   */
  flush(full: boolean): FlushResult {
    const changed: Route[] = [];
    const removed: string[] = [];
    for (const p of this.#dirty) this.#merge(p);
    if (full) {
      const desired = new Map<string, Route>();
      for (const e of this.#merged.values()) desired.set(e.route.prefix, e.route);
      for (const r of this.#static.values()) desired.set(r.prefix, r);
      this.#desired = desired;
      this.#dirty.clear();
      this.#sink.setRoutes(desired);
      return { routes: desired.size, changed: desired.size, removed: 0 };
    }
    for (const p of this.#dirty) {
      const next = this.#static.get(p) ?? this.#merged.get(p)?.route;
      const prev = this.#desired.get(p);
      if (next === prev) continue;
      if (next === undefined) {
        this.#desired.delete(p);
        removed.push(p);
      } else {
        this.#desired.set(p, next);
        changed.push(next);
      }
    }
    this.#dirty.clear();
    if (changed.length > 0 || removed.length > 0) this.#sink.updateRoutes(changed, removed);
    return { routes: this.#desired.size, changed: changed.length, removed: removed.length };
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
    this.stats.routesMade++;
    this.#merged.set(prefix, { d, route: desiredRoute(d) });
  }
}
