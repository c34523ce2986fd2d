/**
 * The running daemon as the admin API, the metrics and the CLI see it: the {@link DaemonView} implementation.
 * Read methods assemble plain JSON-able views from the stages (peer set, health gate, health checker, speaker);
 * actions go to the daemon (reset, drain, undrain). Nothing here changes what is announced.
 */
import type { Clock } from '../../bgp/main-thread.ts';
import type { RuntimeIdentity } from '../config/load.ts';
import type { HealthLike } from '../health/types.ts';
import type { HandledVip, HeraldMetrics } from '../metrics/metrics.ts';
import { handlesVip, ReasonCode, REFUSAL_CODES } from '../controller/reasons.ts';
import type { DesiredRoute } from '../controller/route-merge.ts';
import { isDeepStrictEqual } from 'node:util';
import type { Source } from '../sources/source.ts';
import { prefixMatches } from '../net/address.ts';
import type { DaemonView, HealthCheckView, PeerView, RefusedView, RouteView, ServiceView, StatusView, VipAttributesView, VipView } from '../admin/view.ts';
import type { DecisionSet } from './health-gate.ts';
import { routeView } from './mapping.ts';
import type { PeerSet } from './peer-set.ts';
import type { Quarantine } from '../controller/quarantine.ts';
import type { ConfigInForce } from './config-in-force.ts';
import type { DrainControl } from './drain.ts';
import type { InitialSync } from './initial-sync.ts';
import type { ListenerRetry } from './listener-retry.ts';
import type { RouteAssembly } from './route-assembly.ts';
import type { SpeakerLike } from './speaker-like.ts';

/**
 * The VIPs of `services` this node handles (src/controller/reasons.ts `handlesVip`): what `herald_vip_announced`
 * reports (docs/metrics.md).
 */
export function* handledVips(services: readonly ServiceView[]): Iterable<HandledVip> {
  for (const s of services) {
    for (const v of s.vips) if (handlesVip(v)) yield { service: s.service, address: v.address, announced: v.announced };
  }
}

/**
 * How many VIPs of `services` each refusal reason code (src/controller/reasons.ts `REFUSAL_CODES`) holds back now,
 * every code listed (0 when none): what `herald_tenant_inputs_refused` reports (docs/metrics.md, docs/security.md).
 */
export function refusedInputs(services: readonly ServiceView[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const code of REFUSAL_CODES) counts.set(code, 0);
  for (const s of services) {
    for (const v of s.vips) {
      const codes = new Set<string>();
      for (const r of v.reasons) if (REFUSAL_CODES.has(r.code)) codes.add(r.code);
      for (const c of codes) counts.set(c, (counts.get(c) ?? 0) + 1);
    }
  }
  return counts;
}

/** What the view reads from the daemon's lifecycle, and the actions it forwards. */
export interface DaemonLifecycle {
  /** Why the speaker thread died, once it has. */
  speakerFailure(): string | undefined;
  stopping(): boolean;
  /** Kubernetes calls refused with 403 until they succeed ("call: apiserver message"). */
  forbidden(): string[];
  /** @throws NotFoundError for a peer that does not run */
  resetPeer(name: string, soft: boolean): Promise<void>;
  /** The operator's drain (`reason` is recorded with it); resolves with what was done. */
  drain(reason?: string): Promise<string>;
  undrain(): Promise<string>;
}

/** Options of {@link AdminView}: the stages it reads. */
export interface AdminViewOptions {
  version: string;
  identity: RuntimeIdentity;
  clock: Clock;
  startedAtMs: number;
  speaker: SpeakerLike;
  peers: PeerSet;
  decisions: DecisionSet;
  health: HealthLike;
  metrics: HeraldMetrics;
  source: Source | undefined;
  /** The configuration in force (this node's AS number) and the last reload. */
  inForce: Pick<ConfigInForce, 'config' | 'merged' | 'lastReload'>;
  /** The routes in the desired set, the attribute changes the rate limit holds back, and what each prefix carries. */
  assembly: Pick<RouteAssembly, 'size' | 'held' | 'wireRoute'>;
  /** What holds the node drained, or keeps its drain unknown. */
  drains: Pick<DrainControl, 'sources' | 'unknown'>;
  /** Objects treated as absent, with the reason (src/controller/quarantine.ts). */
  quarantine: Pick<Quarantine, 'list'>;
  listener: Pick<ListenerRetry, 'problem'>;
  initialSync: Pick<InitialSync, 'done'>;
  daemon: DaemonLifecycle;
}

/** See the module comment. */
export class AdminView implements DaemonView {
  readonly #o: AdminViewOptions;

  constructor(opts: AdminViewOptions) {
    this.#o = opts;
  }

  live(): boolean {
    return !this.#o.daemon.stopping();
  }

  /** Why the daemon is not ready (empty when ready): what `/readyz` and `herald status` show. */
  notReady(): string[] {
    const o = this.#o;
    const out: string[] = [];
    const failure = o.daemon.speakerFailure();
    if (failure !== undefined) out.push(failure);
    const listener = o.listener.problem();
    if (listener !== undefined) out.push(listener);
    const source = o.source?.status();
    if (source && !source.synced) {
      // Name what keeps each resource from syncing (e.g. a 403: the RBAC rule to add).
      const why = source.resources.filter((r) => !r.synced && (r.forbidden ?? r.lastError) !== '').map((r) => `${r.kind}: ${r.forbidden ?? r.lastError}`);
      out.push(`${source.type} source not synced${why.length > 0 ? ` (${why.join('; ')})` : ''}`);
    }
    const held = o.drains.unknown;
    if (held !== undefined) out.push(held);
    if (!o.initialSync.done) out.push('initial route computation pending');
    if (o.daemon.stopping()) out.push('shutting down');
    return out;
  }

  status(): StatusView {
    const o = this.#o;
    const notReady = this.notReady();
    const peers = o.speaker.peers();
    const now = o.clock.now();
    const s: StatusView = {
      version: o.version,
      node: o.identity.nodeName,
      routerId: o.identity.routerId,
      localAs: o.inForce.merged.override?.localAs ?? o.inForce.config.bgp.localAs,
      startedAt: new Date(o.startedAtMs).toISOString(),
      uptimeSec: Math.round(now - o.startedAtMs) / 1000,
      ready: notReady.length === 0,
      notReady,
      drained: o.speaker.draining,
      drain: [...o.drains.sources],
      peers: { configured: peers.length, established: peers.filter((p) => p.state === 'Established').length },
      routes: { desired: o.assembly.size },
    };
    const lastReload = o.inForce.lastReload;
    if (lastReload) s.lastReload = lastReload;
    const forbidden = [...(o.source?.status().resources ?? []).flatMap((r) => (r.forbidden !== undefined ? [r.forbidden] : [])), ...o.daemon.forbidden()];
    if (forbidden.length > 0) s.forbidden = forbidden;
    const quarantined = o.quarantine.list();
    if (quarantined.length > 0) s.quarantined = quarantined.map((q) => ({ kind: q.kind, name: q.name, reason: q.reason, since: new Date(q.since).toISOString() }));
    const refused = this.refused();
    if (refused.length > 0) s.refused = refused;
    return s;
  }

  /**
   * Input refused whole (docs/operations.md "Refused input"): the manifest source's file errors (a file that cannot be
   * read or parsed keeps its last good version) and the configuration objects every node ignores.
   */
  refused(): RefusedView[] {
    const o = this.#o;
    const out: RefusedView[] = [];
    for (const e of o.source?.status().fileErrors ?? []) out.push({ kind: 'file', name: e.path, ...(e.line !== undefined ? { line: e.line } : {}), reason: e.message });
    for (const v of o.inForce.merged.verdicts) {
      if (v.issues.length > 0) out.push({ kind: v.kind, name: v.name, reason: v.issues.map((i) => `${i.path}: ${i.message}`).join('; ') });
    }
    return out;
  }

  peers(): PeerView[] {
    return this.#o.peers.views();
  }

  async routes(filter: { peer?: string; prefix?: string }): Promise<RouteView[]> {
    const out: RouteView[] = [];
    for (const p of this.#o.speaker.peers()) {
      if (filter.peer !== undefined && p.name !== filter.peer) continue;
      for (const r of await this.#o.speaker.adjRibOut(p.name)) {
        if (filter.prefix !== undefined && !prefixMatches(r.prefix, filter.prefix)) continue;
        out.push(routeView(p.name, r));
      }
    }
    return out;
  }

  services(): ServiceView[] {
    // The gate's decisions already have the view's shape (read-only; no copy of the decisions per request).
    const route = (prefix: string) => this.#o.assembly.wireRoute(prefix);
    const list = this.#o.decisions.services().map((s) => onTheWire(s, route));
    const held = this.#o.assembly.held();
    return held.size === 0 ? list : list.map((s) => withHeld(s, held));
  }

  health(): HealthCheckView[] {
    const st = this.#o.health.status();
    const out: HealthCheckView[] = st.checks.map((c) => {
      const v: HealthCheckView = {
        key: c.key,
        gate: c.gate,
        scope: c.scope,
        kind: c.kind,
        target: c.target,
        state: c.state,
        since: new Date(c.since).toISOString(),
        intervalSec: c.intervalSec,
        rise: c.rise,
        fall: c.fall,
        consecutiveOk: c.consecutiveOk,
        consecutiveFail: c.consecutiveFail,
      };
      if (c.latencyMs !== null) v.latencyMs = Math.round(c.latencyMs * 1000) / 1000;
      if (c.lastFailure) v.lastFailure = { code: c.lastFailure.code ?? 'error', message: c.lastFailure.message };
      return v;
    });
    for (const i of st.invalid) out.push({ key: i.key, gate: i.gate, scope: i.scope ?? 'gate', kind: '-', target: '-', state: 'invalid', lastFailure: { code: i.code ?? 'InvalidCheck', message: i.message } });
    return out.sort((a, b) => (a.gate < b.gate ? -1 : a.gate > b.gate ? 1 : a.key < b.key ? -1 : 1));
  }

  resetPeer(name: string, soft: boolean): Promise<void> {
    return this.#o.daemon.resetPeer(name, soft);
  }

  drain(opts: { reason?: string } = {}): Promise<string> {
    return this.#o.daemon.drain(opts.reason);
  }

  undrain(): Promise<string> {
    return this.#o.daemon.undrain();
  }

  async metrics(): Promise<{ contentType: string; body: string }> {
    const { source, metrics, speaker } = this.#o;
    if (source) {
      for (const r of source.status().resources) {
        if (r.lastEventAtMs > 0) metrics.kubernetesLastSync.set({ resource: r.kind }, r.lastEventAtMs / 1000);
        if (r.lastWatchConnectAtMs > 0) metrics.kubernetesWatchLastConnect.set({ resource: r.kind }, r.lastWatchConnectAtMs / 1000);
      }
    }
    // drained: what holds the node drained (the daemon keeps it current), or the speaker's own drain.
    metrics.drained.set(this.#o.drains.sources.length > 0 || speaker.draining ? 1 : 0);
    metrics.setRefused(this.refused());
    return metrics.text();
  }
}

/**
 * `s` with each announced steering entry (`VipView.attributes`) showing what its prefix carries on the wire: the
 * merged route's communities, MED and prepend (every advertisement's, and the Services' only where they all agree:
 * route-merge.ts), and `withheld`, what was asked for and is not sent, with why; such a VIP gets an AttributeNotSent
 * reason per note (docs/decisions.md "Path attributes from Services"). `s` itself when every entry shows the wire.
 * @param routeOf the merged route handed over for a prefix
 */
export function onTheWire(s: ServiceView, routeOf: (prefix: string) => DesiredRoute | undefined): ServiceView {
  let vips: VipView[] | undefined;
  s.vips.forEach((v, i) => {
    if (v.attributes === undefined || !v.attributes.some((a) => a.announced)) return;
    const notes = new Set<string>();
    let changed = false;
    const attributes = v.attributes.map((a) => {
      const r = a.announced ? routeOf(a.prefix) : undefined;
      if (r === undefined) return a;
      for (const w of r.withheld ?? []) notes.add(w);
      const wire: VipAttributesView = { ...a };
      for (const k of ['communities', 'largeCommunities', 'med', 'asPathPrepend'] as const) delete wire[k];
      if (r.med !== undefined) wire.med = r.med;
      if (r.asPathPrepend !== undefined) wire.asPathPrepend = r.asPathPrepend;
      if (r.communities.length > 0) wire.communities = [...r.communities];
      if (r.largeCommunities.length > 0) wire.largeCommunities = [...r.largeCommunities];
      if (r.withheld !== undefined) wire.withheld = [...r.withheld];
      if (isDeepStrictEqual(wire, a)) return a;
      changed = true;
      return wire;
    });
    if (!changed && notes.size === 0) return;
    vips ??= [...s.vips];
    vips[i] = { ...v, attributes, reasons: [...v.reasons, ...[...notes].map((message) => ({ code: ReasonCode.AttributeNotSent, message }))] };
  });
  return vips === undefined ? s : { ...s, vips };
}

/**
 * `s` with `heldUntil` on the steering attributes whose prefix has an attribute change held by the rate limit
 * (route-assembly.ts): what the view shows is already the new value, the peers still have the previous one.
 * `s` itself when none of its prefixes is held.
 */
function withHeld(s: ServiceView, held: ReadonlyMap<string, number>): ServiceView {
  if (!s.vips.some((v) => v.attributes?.some((a) => held.has(a.prefix)))) return s;
  return {
    ...s,
    vips: s.vips.map((v) => {
      if (!v.attributes?.some((a) => held.has(a.prefix))) return v;
      return { ...v, attributes: v.attributes.map((a) => (held.has(a.prefix) && a.announced ? { ...a, heldUntil: new Date(held.get(a.prefix) as number).toISOString() } : a)) };
    }),
  };
}
