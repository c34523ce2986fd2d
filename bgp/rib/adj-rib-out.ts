/**
 * Adj-RIB-Out of one peer (RFC 4271 §3.2, §9.2): what we want the peer to have (desired), what it has (advertised),
 * and the pending difference, drained one UPDATE at a time by the session's tx pump (pull model, see
 * docs/routes.md): withdrawals first, then announcements grouped by byte-identical encoded attributes, each UPDATE
 * filled up to the negotiated maximum message length, then End-of-RIB per family (RFC 4724 §2) once the first full
 * table is out and `markInitialSyncDone()` was called.
 *
 * Latest change per key wins: pending state is keyed by RouteKey, so a route changed twice before it is sent is sent
 * once, and announce-then-withdraw of a route the peer never had sends nothing. A message returned by
 * `nextMessage()` counts as sent (the session hands it to the socket at once).
 */
import type { Family } from '../constants.ts';
import { attributeSignature, exportRoute } from './export.ts';
import type { ExportedAttributes, ExportPeer } from './export.ts';
import {
  announceCapacity,
  buildAnnounce,
  buildWithdraw,
  encodeAttributes,
  endOfRibMessage,
  ipv6NextHopBytes,
  withdrawCapacity,
} from './packer.ts';
import { nlriSize, parsePrefix, routeKey } from './route.ts';
import type { ParsedPrefix, Route, RouteKey } from './route.ts';

/** A validated route with its key, parsed prefix and attribute signature; shared by every peer's Adj-RIB-Out. */
export interface RouteRecord {
  readonly key: RouteKey;
  readonly route: Route;
  readonly prefix: ParsedPrefix;
  /** attributeSignature(route): equal signatures export to equal attributes. */
  readonly sig: string;
}

/** Validates a route and builds its record. Throws RouteError on a malformed prefix. */
export function makeRecord(route: Route): RouteRecord {
  const prefix = parsePrefix(route.prefix, route.family);
  return { key: routeKey(route), route, prefix, sig: attributeSignature(route) };
}

/** Routes sharing byte-identical encoded attributes toward one peer. */
interface AttrGroup {
  readonly family: Family;
  /** Encoded path attributes (without MP_REACH_NLRI). */
  readonly attrs: Buffer;
  /** IPv6 next hop octets for MP_REACH_NLRI (undefined for IPv4). */
  readonly mpNextHop: Buffer | undefined;
  readonly exported: ExportedAttributes;
  /** Announcements of this group waiting to be sent, in arrival order. */
  readonly pending: Map<RouteKey, RouteRecord>;
}

/** What the last `nextMessage()` call returned, for counters and events. */
export interface SentInfo {
  readonly kind: 'withdraw' | 'announce' | 'endOfRib';
  readonly family: Family;
  /** Number of NLRI in the message. */
  readonly prefixes: number;
  readonly bytes: number;
}

/** A route as exported to a peer, for display (admin API, tests). */
export interface ExportedRoute extends Route {
  readonly nextHop: string;
  /** AS numbers of the AS_PATH's AS_SEQUENCE (empty toward iBGP). */
  readonly asPath: readonly number[];
}

const FAMILIES: readonly Family[] = ['ipv4-unicast', 'ipv6-unicast'];

/** Per-peer Adj-RIB-Out plus UPDATE packing. Not thread-safe; one instance per peer. */
export class AdjRibOut {
  /** Export context while the session is Established; undefined otherwise (nothing is pending then). */
  private peer: ExportPeer | undefined;
  private readonly desired = new Map<RouteKey, RouteRecord>();
  private readonly advertised = new Map<RouteKey, AttrGroup>();
  private readonly advertisedPrefix = new Map<RouteKey, ParsedPrefix>();
  private readonly pendingWithdraw = new Map<Family, Map<RouteKey, ParsedPrefix>>(FAMILIES.map((f) => [f, new Map()]));
  private readonly pendingGroupOf = new Map<RouteKey, AttrGroup>();
  private readonly pendingGroups = new Set<AttrGroup>();
  /** signature → group, or null when the route is not exported to this peer. */
  private groupsBySig = new Map<string, AttrGroup | null>();
  private groupsByBytes = new Map<string, AttrGroup>();
  private readonly eorDue = new Set<Family>();
  private initialSyncDone = false;
  private readonly scratch: ParsedPrefix[] = [];
  /** Families whose End-of-RIB was sent on the current session. */
  readonly endOfRibSent = new Set<Family>();
  /** Set by every `nextMessage()` that returned a message. */
  lastSent: SentInfo | undefined;

  /** True while a session is Established (between `start()` and `reset()`). */
  get active(): boolean {
    return this.peer !== undefined;
  }

  /** Number of routes the peer currently holds from us. */
  get advertisedCount(): number {
    return this.advertised.size;
  }

  /** Number of desired routes (before per-peer export filtering). */
  get desiredCount(): number {
    return this.desired.size;
  }

  /** True when an UPDATE (or End-of-RIB) is waiting to be sent. */
  hasPending(): boolean {
    if (this.peer === undefined) return false;
    if (this.pendingGroups.size > 0) return true;
    for (const w of this.pendingWithdraw.values()) if (w.size > 0) return true;
    return this.initialSyncDone && this.eorDue.size > 0;
  }

  /**
   * Session Established: the peer has nothing from us. Queues the whole desired set (as exported to `peer`) and an
   * End-of-RIB for every negotiated family.
   */
  start(peer: ExportPeer): void {
    this.clearSessionState();
    this.peer = peer;
    for (const f of FAMILIES) if (peer.families.has(f)) this.eorDue.add(f);
    for (const rec of this.desired.values()) this.schedule(rec.key, rec);
  }

  /** Session down: the peer forgot everything we sent. The desired set is kept. */
  reset(): void {
    this.clearSessionState();
    this.peer = undefined;
  }

  private clearSessionState(): void {
    this.advertised.clear();
    this.advertisedPrefix.clear();
    for (const w of this.pendingWithdraw.values()) w.clear();
    this.pendingGroupOf.clear();
    this.pendingGroups.clear();
    this.groupsBySig = new Map();
    this.groupsByBytes = new Map();
    this.eorDue.clear();
    this.endOfRibSent.clear();
  }

  /**
   * The export context changed during the session (graceful shutdown on/off, configured next hop, ...): re-export
   * every desired route; routes whose encoded attributes changed are re-announced, others are left alone.
   */
  setExportPeer(peer: ExportPeer): void {
    if (this.peer === undefined) return;
    this.peer = peer;
    this.groupsBySig = new Map();
    // Keep only groups the peer holds routes of, so unchanged attributes map to the same group object.
    const keep = new Map<string, AttrGroup>();
    for (const [bytesKey, g] of this.groupsByBytes) {
      g.pending.clear();
      keep.set(bytesKey, g);
    }
    this.groupsByBytes = keep;
    this.pendingGroupOf.clear();
    this.pendingGroups.clear();
    for (const rec of this.desired.values()) this.schedule(rec.key, rec);
    for (const [key, g] of this.advertised) if (!this.desired.has(key)) this.queueWithdraw(key, g.family);
  }

  /**
   * Replaces the desired set. Records equal by identity to the current ones are unchanged; others are (re)queued.
   * Routes no longer present are withdrawn if the peer has them, or dropped from the queue if it never had them.
   */
  setDesired(records: ReadonlyMap<RouteKey, RouteRecord>): void {
    for (const [key, rec] of records) {
      const prev = this.desired.get(key);
      if (prev === rec) continue;
      this.desired.set(key, rec);
      if (this.peer !== undefined && (prev === undefined || prev.sig !== rec.sig)) {
        this.schedule(key, rec);
      }
    }
    if (this.desired.size !== records.size) {
      for (const key of this.desired.keys()) {
        if (records.has(key)) continue;
        this.desired.delete(key);
        if (this.peer !== undefined) this.schedule(key, undefined);
      }
    }
  }

  /** RFC 2918 ROUTE-REFRESH: re-send every route of `family` the peer should have. */
  refresh(family: Family): void {
    if (this.peer === undefined) return;
    for (const rec of this.desired.values()) {
      if (rec.route.family !== family) continue;
      const g = this.groupFor(rec);
      if (g === null) continue;
      this.cancelPending(rec.key);
      this.addPending(rec, g);
    }
  }

  /** From now on, End-of-RIB may be sent once the initial table is out (decisions.md: only after the first full sync). */
  markInitialSyncDone(): void {
    this.initialSyncDone = true;
  }

  /** The routes the peer holds from us, with the attributes we sent. */
  advertisedRoutes(): ExportedRoute[] {
    const out: ExportedRoute[] = [];
    for (const [key, g] of this.advertised) {
      const rec = this.desired.get(key);
      const prefix = rec?.route.prefix ?? key.slice(key.indexOf(' ') + 1);
      out.push(describeExport(prefix, g.exported));
    }
    return out;
  }

  private groupFor(rec: RouteRecord): AttrGroup | null {
    let g = this.groupsBySig.get(rec.sig);
    if (g !== undefined) return g;
    const peer = this.peer;
    if (peer === undefined) return null;
    const ex = exportRoute(rec.route, peer);
    if ('skip' in ex) {
      g = null;
    } else {
      const attrs = encodeAttributes(ex.attributes, peer.fourOctetAs);
      const mpNextHop = ex.family === 'ipv6-unicast' ? ipv6NextHopBytes(ex.nextHop) : undefined;
      const bytesKey = `${ex.family} ${attrs.toString('latin1')} ${mpNextHop?.toString('latin1') ?? ''}`;
      g = this.groupsByBytes.get(bytesKey) ?? null;
      if (g === null) {
        g = { family: ex.family, attrs, mpNextHop, exported: ex, pending: new Map() };
        this.groupsByBytes.set(bytesKey, g);
      }
    }
    this.groupsBySig.set(rec.sig, g);
    return g;
  }

  private cancelPending(key: RouteKey): void {
    const pg = this.pendingGroupOf.get(key);
    if (pg !== undefined) {
      pg.pending.delete(key);
      this.pendingGroupOf.delete(key);
      if (pg.pending.size === 0) this.pendingGroups.delete(pg);
    }
    for (const w of this.pendingWithdraw.values()) w.delete(key);
  }

  private addPending(rec: RouteRecord, g: AttrGroup): void {
    g.pending.set(rec.key, rec);
    this.pendingGroupOf.set(rec.key, g);
    this.pendingGroups.add(g);
  }

  private queueWithdraw(key: RouteKey, family: Family): void {
    const p = this.advertisedPrefix.get(key);
    if (p !== undefined) this.pendingWithdraw.get(family)!.set(key, p);
  }

  /** Brings the pending state of `key` in line with `rec` (undefined = not desired). Latest change wins. */
  private schedule(key: RouteKey, rec: RouteRecord | undefined): void {
    this.cancelPending(key);
    const target = rec === undefined ? null : this.groupFor(rec);
    const adv = this.advertised.get(key);
    if (target !== null) {
      if (adv !== target) this.addPending(rec!, target);
    } else if (adv !== undefined) {
      this.queueWithdraw(key, adv.family);
    }
  }

  /**
   * The next UPDATE to send (whole message, header included), or undefined when nothing is pending. Order:
   * withdrawals (IPv4, then IPv6), then announcement groups in arrival order, then End-of-RIB markers (only once
   * markInitialSyncDone() was called). Every message is at most `maxLength` octets (4096, or 65535 with RFC 8654).
   */
  nextMessage(maxLength: number): Buffer | undefined {
    if (this.peer === undefined) return undefined;
    const out = this.scratch;
    out.length = 0;
    for (const family of FAMILIES) {
      const w = this.pendingWithdraw.get(family)!;
      if (w.size === 0) continue;
      const cap = withdrawCapacity(family, maxLength);
      let used = 0;
      for (const [key, p] of w) {
        const s = nlriSize(p);
        if (used + s > cap) break;
        used += s;
        out.push(p);
        w.delete(key);
        this.advertised.delete(key);
        this.advertisedPrefix.delete(key);
      }
      const buf = buildWithdraw(family, out);
      this.lastSent = { kind: 'withdraw', family, prefixes: out.length, bytes: buf.length };
      out.length = 0;
      return buf;
    }
    const first = this.pendingGroups.values().next();
    if (first.done !== true) {
      const g = first.value;
      const cap = announceCapacity(g.family, g.attrs, g.mpNextHop, maxLength);
      if (cap < 17) throw new RangeError(`path attributes too long for a ${maxLength}-octet UPDATE`);
      let used = 0;
      for (const [key, rec] of g.pending) {
        const s = nlriSize(rec.prefix);
        if (used + s > cap) break;
        used += s;
        out.push(rec.prefix);
        g.pending.delete(key);
        this.pendingGroupOf.delete(key);
        this.advertised.set(key, g);
        this.advertisedPrefix.set(key, rec.prefix);
      }
      if (g.pending.size === 0) this.pendingGroups.delete(g);
      const buf = buildAnnounce(g.family, g.attrs, g.mpNextHop, out);
      this.lastSent = { kind: 'announce', family: g.family, prefixes: out.length, bytes: buf.length };
      out.length = 0;
      return buf;
    }
    if (this.initialSyncDone && this.eorDue.size > 0) {
      const family = this.eorDue.values().next().value!;
      this.eorDue.delete(family);
      this.endOfRibSent.add(family);
      const buf = endOfRibMessage(family);
      this.lastSent = { kind: 'endOfRib', family, prefixes: 0, bytes: buf.length };
      return buf;
    }
    return undefined;
  }
}

/** Turns exported attributes back into a Route-shaped description. */
export function describeExport(prefix: string, ex: ExportedAttributes): ExportedRoute {
  let asPath: number[] = [];
  let as4: number[] | undefined;
  const r: {
    -readonly [K in keyof ExportedRoute]?: ExportedRoute[K];
  } = { prefix, family: ex.family, nextHop: ex.nextHop };
  for (const a of ex.attributes) {
    if (a.type === 'ORIGIN') r.origin = a.origin;
    else if (a.type === 'AS_PATH') asPath = a.segments.flatMap((s) => [...s.asns]);
    else if (a.type === 'AS4_PATH') as4 = a.segments.flatMap((s) => [...s.asns]);
    else if (a.type === 'MULTI_EXIT_DISC') r.med = a.med;
    else if (a.type === 'LOCAL_PREF') r.localPref = a.localPref;
    else if (a.type === 'COMMUNITIES') r.communities = a.communities;
    else if (a.type === 'LARGE_COMMUNITY') r.largeCommunities = a.largeCommunities;
    else if (a.type === 'EXTENDED_COMMUNITIES') r.extendedCommunities = a.extendedCommunities;
  }
  r.asPath = as4 ?? asPath;
  return r as ExportedRoute;
}
