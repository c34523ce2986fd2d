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
import { attributeSignature, describeExport, exportRoute } from './export.ts';
import type { ExportedAttributes, ExportedRoute, ExportPeer } from './export.ts';
import { announceCapacity, buildAnnounce, buildWithdraw, encodeGroup, endOfRibMessage, MAX_NLRI_OCTETS, withdrawCapacity } from './packer.ts';
import { isIP } from 'node:net';
import { MAX_AS_PATH_PREPEND, nlriSize, parsePrefix, RouteError } from './route.ts';
import type { ParsedPrefix, Route } from './route.ts';

/** Internal map key: the canonical prefix (see RouteRecord). */
type RouteKey = string;

/**
 * A validated route with its key, parsed prefix (the ParsedPrefix fields, inline: one object per route) and attribute
 * signature; shared by every peer's Adj-RIB-Out.
 *
 * `key` is the canonical prefix string itself: it is unique across the two families (only IPv6 text has a colon, and
 * parsePrefix checks the family), so the maps need no extra "family prefix" string per route; `routeKey()` gives the
 * RouteKey form for display.
 */
export interface RouteRecord extends ParsedPrefix {
  readonly key: string;
  readonly route: Route;
  /** attributeSignature(route): equal signatures export to equal attributes. */
  readonly sig: string;
}

const isU32 = (v: unknown): boolean => typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= 0xffffffff;

/** Checks the optional attributes of a route; throws RouteError naming the first bad field. */
function checkAttributes(route: Route): void {
  const bad = (what: string): never => {
    throw new RouteError(`${route.prefix}: ${what}`);
  };
  if (route.med !== undefined && !isU32(route.med)) bad(`MED must be an integer 0..4294967295, got ${route.med}`);
  if (route.localPref !== undefined && !isU32(route.localPref)) bad(`LOCAL_PREF must be an integer 0..4294967295, got ${route.localPref}`);
  if (route.asPathPrepend !== undefined && !(Number.isInteger(route.asPathPrepend) && route.asPathPrepend >= 0 && route.asPathPrepend <= MAX_AS_PATH_PREPEND)) {
    bad(`AS path prepend must be an integer 0..${MAX_AS_PATH_PREPEND}, got ${route.asPathPrepend}`);
  }
  if (route.origin !== undefined && route.origin !== 0 && route.origin !== 1 && route.origin !== 2) bad(`ORIGIN must be 0, 1 or 2, got ${route.origin}`);
  if (route.communities !== undefined && !route.communities.every(isU32)) bad('communities must be 32-bit unsigned integers (AS * 65536 + value)');
  if (route.largeCommunities !== undefined && !route.largeCommunities.every((c) => c.length === 3 && c.every(isU32))) bad('large communities must be three 32-bit unsigned integers');
  if (route.extendedCommunities !== undefined && !route.extendedCommunities.every((c) => c.value.length === 8)) bad('extended communities must be 8 octets');
  if (route.ipv6ExtendedCommunities !== undefined && !route.ipv6ExtendedCommunities.every((c) => c.value.length === 20)) bad('IPv6 address specific extended communities must be 20 octets');
  if (route.nextHop !== undefined && !isIP(route.nextHop)) bad(`next hop is not an IP address: ${JSON.stringify(route.nextHop)}`);
  // every route must fit one 4096-octet UPDATE with its other attributes and its NLRI (about 170 octets)
  const size =
    4 * (route.communities?.length ?? 0) +
    12 * (route.largeCommunities?.length ?? 0) +
    8 * (route.extendedCommunities?.length ?? 0) +
    20 * (route.ipv6ExtendedCommunities?.length ?? 0);
  if (size > MAX_COMMUNITY_OCTETS) bad(`communities take ${size} octets; at most ${MAX_COMMUNITY_OCTETS} fit a 4096-octet UPDATE`);
}

/** Octets of (large/extended) community values one route may carry: 4096 minus headers, other attributes and NLRI. */
export const MAX_COMMUNITY_OCTETS = 3800;

/** Validates a route and builds its record. Throws RouteError on a malformed prefix or attribute. */
export function makeRecord(route: Route): RouteRecord {
  const p = parsePrefix(route.prefix, route.family);
  if (route.med !== undefined || route.localPref !== undefined || route.asPathPrepend !== undefined || route.origin !== undefined || route.communities !== undefined || route.largeCommunities !== undefined || route.extendedCommunities !== undefined || route.ipv6ExtendedCommunities !== undefined || route.nextHop !== undefined) {
    checkAttributes(route);
  }
  return { key: route.prefix, route, sig: attributeSignature(route), family: p.family, length: p.length, v4: p.v4, v6: p.v6 };
}

/** Routes sharing byte-identical encoded attributes toward one peer. */
interface AttrGroup {
  readonly family: Family;
  /** Encoded path attributes (without MP_REACH_NLRI). */
  readonly attrs: Buffer;
  /** IPv6 next hop octets for MP_REACH_NLRI (undefined for IPv4). */
  readonly mpNextHop: Buffer | undefined;
  readonly exported: ExportedAttributes;
  /** Announcements queued for this group, consumed from `head`; entries are re-validated when packed (lazy cancel). */
  queue: RouteRecord[];
  head: number;
  /** Entries before `cleanEnd` were queued by a full rebuild at change sequence `cleanSeq`: while no change happened
   *  since, they are known valid and unique, and packing skips their re-check (the initial table's fast path). */
  cleanSeq: number;
  cleanEnd: number;
}

/**
 * Routes that cannot be sent to this peer although they are desired and exported to it: their path attributes (or
 * MP_REACH_NLRI next hop) cannot be encoded, e.g. an IPv6 next hop with a zone id ("fe80::1%eth0"). Grouped by
 * reason. They are withdrawn if the peer had them; every other route is sent as usual.
 */
export interface UnsentRoutes {
  /** What cannot be encoded and why, e.g. `ipv6-unicast next hop "fe80::1%eth0" cannot be encoded: ...`. */
  readonly reason: string;
  /** How many desired routes it keeps from the peer. */
  readonly prefixes: number;
  /** One of them (a canonical prefix). */
  readonly example: string;
}

/** What the last `nextMessage()` call returned, for counters and events. */
export interface SentInfo {
  readonly kind: 'withdraw' | 'announce' | 'endOfRib';
  readonly family: Family;
  /** Number of NLRI in the message. */
  readonly prefixes: number;
  readonly bytes: number;
}

/** Changes between two desired sets, computed once by the caller and shared by every peer. */
export interface DesiredDiff {
  /** Records new or with changed attributes (signature) in the new set. */
  readonly changed: readonly RouteRecord[];
  /** Records of the old set whose key is absent from the new set. */
  readonly removed: readonly RouteRecord[];
}

/** Computes the diff between two desired sets (records are compared by signature). */
export function diffDesired(prev: ReadonlyMap<RouteKey, RouteRecord>, next: ReadonlyMap<RouteKey, RouteRecord>): DesiredDiff {
  const changed: RouteRecord[] = [];
  const removed: RouteRecord[] = [];
  for (const [key, rec] of next) {
    const old = prev.get(key);
    if (old !== rec && (old === undefined || old.sig !== rec.sig)) changed.push(rec);
  }
  for (const [key, rec] of prev) if (!next.has(key)) removed.push(rec);
  return { changed, removed };
}

const FAMILIES: readonly Family[] = ['ipv4-unicast', 'ipv6-unicast'];

/** Withdrawal candidates of one family; same lazy/clean rules as AttrGroup queues. */
interface WithdrawQueue {
  queue: RouteRecord[];
  head: number;
  cleanSeq: number;
  cleanEnd: number;
}
const EMPTY: ReadonlyMap<RouteKey, RouteRecord> = new Map();

/**
 * Per-peer Adj-RIB-Out plus UPDATE packing. One instance per peer.
 *
 * Cost model (100,000 routes must pack fast): the desired map is shared with the caller (never copied); a change
 * costs one queue push and two Map lookups; packing a route costs one Map.set (plus two lookups for entries that
 * are not trusted). Queues are cancelled lazily: an entry is re-checked against the current desired/advertised state
 * when it is packed, so a route changed many times is sent once, with its latest attributes. Entries pushed by one
 * batch into an empty queue (the initial table, a burst) are unique and valid when pushed, and are trusted without
 * re-check until the next change (`changeSeq`).
 */
export class AdjRibOut {
  /**
   * `onUnsendable` is called once per session and reason when routes turn out impossible to encode toward this peer
   * (see UnsentRoutes), with one affected prefix.
   */
  constructor(opts: { onUnsendable?: (reason: string, example: string) => void } = {}) {
    this.onUnsendable = opts.onUnsendable;
  }

  /** Export context while the session is Established; undefined otherwise (nothing is pending then). */
  private peer: ExportPeer | undefined;
  private desired: ReadonlyMap<RouteKey, RouteRecord> = EMPTY;
  /** What the peer holds: key → the group it was last announced with. Read and written only through `held()`. */
  private readonly advertised = new Map<RouteKey, AttrGroup>();
  /**
   * Announced but not yet entered in `advertised`: runs `queue[from, to)` of group `g`, packed by the initial
   * table's fast path. Entering 100,000 keys in a Map was most of the CPU time of sending a full table; it is done
   * by the first `held()` instead, after the table is out. The runs hold distinct keys absent from `advertised`
   * (see `deferOk`), so `advertisedCount` adds their lengths.
   */
  private deferred: { readonly g: AttrGroup; readonly queue: readonly RouteRecord[]; readonly from: number; readonly to: number }[] = [];
  private deferredCount = 0;
  /**
   * `changeSeq` right after `start()` queued the table (-1: none). While no change followed (`deferOk`), every queued
   * entry is clean, queued into an empty Adj-RIB-Out (distinct keys, none held), and packed entries may be deferred.
   */
  private startSeq = -1;
  /** Withdrawal candidates per family (re-checked when packed). */
  private readonly withdrawQueue = new Map<Family, WithdrawQueue>(FAMILIES.map((f) => [f, { queue: [], head: 0, cleanSeq: -1, cleanEnd: 0 }]));
  private readonly pendingGroups = new Set<AttrGroup>();
  /** Keys a ROUTE-REFRESH asked to resend even though the peer has them with the same attributes. */
  private readonly forced = new Set<RouteKey>();
  private queued = 0;
  /** Incremented by every change that can invalidate queued entries (see AttrGroup.cleanSeq). */
  private changeSeq = 0;
  /** signature → group, or null when the route is not exported to this peer. */
  private groupsBySig = new Map<string, AttrGroup | null>();
  private groupsByBytes = new Map<string, AttrGroup>();
  private readonly eorDue = new Set<Family>();
  private initialSyncDone = false;
  private readonly scratch: ParsedPrefix[] = [];
  /** signature → why routes of that signature cannot be encoded toward this peer (their groupsBySig entry is null). */
  private unsendable = new Map<string, string>();
  /** Desired routes kept from the peer by `unsendable`: key → reason. */
  private readonly unsent = new Map<RouteKey, string>();
  /** Reasons already reported through `onUnsendable` on this session. */
  private readonly reported = new Set<string>();
  private readonly onUnsendable: ((reason: string, example: string) => void) | undefined;
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
    return this.advertised.size + this.deferredCount;
  }

  /** `advertised`, with the deferred runs entered first (in the order they were packed). */
  private held(): Map<RouteKey, AttrGroup> {
    if (this.deferred.length > 0) {
      for (const d of this.deferred) for (let i = d.from; i < d.to; i++) this.advertised.set(d.queue[i]!.key, d.g);
      this.deferred = [];
      this.deferredCount = 0;
    }
    return this.advertised;
  }

  /** See `startSeq`. */
  private get deferOk(): boolean {
    return this.changeSeq === this.startSeq;
  }

  /** Number of desired routes (before per-peer export filtering). */
  get desiredCount(): number {
    return this.desired.size;
  }

  /** True when an UPDATE (or End-of-RIB) may be waiting to be sent (queued entries may turn out cancelled). */
  hasPending(): boolean {
    if (this.peer === undefined) return false;
    if (this.pendingGroups.size > 0) return true;
    for (const w of this.withdrawQueue.values()) if (w.head < w.queue.length) return true;
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
    this.requeueAll();
    this.startSeq = this.changeSeq;
  }

  /** Session down: the peer forgot everything we sent. The desired set is kept. */
  reset(): void {
    this.clearSessionState();
    this.peer = undefined;
  }

  private clearQueues(): void {
    this.changeSeq++;
    for (const w of this.withdrawQueue.values()) {
      w.queue = [];
      w.head = 0;
      w.cleanEnd = 0;
    }
    for (const g of this.groupsByBytes.values()) {
      g.queue = [];
      g.head = 0;
      g.cleanEnd = 0;
    }
    this.pendingGroups.clear();
    this.forced.clear();
    this.queued = 0;
  }

  private clearSessionState(): void {
    this.clearQueues();
    this.advertised.clear();
    this.deferred = [];
    this.deferredCount = 0;
    this.groupsBySig = new Map();
    this.groupsByBytes = new Map();
    this.unsendable = new Map();
    this.unsent.clear();
    this.reported.clear();
    this.eorDue.clear();
    this.endOfRibSent.clear();
  }

  /** Rebuilds every queue from desired vs advertised (after a context change, or to compact long queues). */
  private requeueAll(): void {
    this.clearQueues();
    this.unsent.clear();
    for (const rec of this.desired.values()) this.schedule(rec);
    for (const [key, g] of this.held()) {
      if (this.desired.has(key)) continue;
      // not desired any more: withdraw (the prefix is rebuilt from the key)
      this.pushWithdraw(makeRecord({ prefix: key, family: g.family }));
    }
    this.markClean(undefined, undefined);
  }

  /**
   * Marks as clean (valid and unique until the next change) the entries of every queue that was empty before the
   * current batch of pushes: `before` = the groups pending before it (undefined = none), `wBefore` = the withdraw queue
   * lengths before it (undefined = all empty). Entries pushed by one batch are unique and were valid when pushed.
   */
  private markClean(before: ReadonlySet<AttrGroup> | undefined, wBefore: ReadonlyMap<WithdrawQueue, boolean> | undefined): void {
    for (const g of this.pendingGroups) {
      if (before?.has(g)) continue;
      g.cleanSeq = this.changeSeq;
      g.cleanEnd = g.queue.length;
    }
    for (const w of this.withdrawQueue.values()) {
      if (wBefore !== undefined && wBefore.get(w) !== true) continue;
      w.cleanSeq = this.changeSeq;
      w.cleanEnd = w.queue.length;
    }
  }

  /**
   * The export context changed during the session (graceful shutdown on/off, configured next hop, ...): re-export
   * every desired route; routes whose encoded attributes changed are re-announced, others are left alone.
   */
  setExportPeer(peer: ExportPeer): void {
    if (this.peer === undefined) return;
    this.peer = peer;
    this.groupsBySig = new Map();
    this.unsendable = new Map();
    this.requeueAll();
  }

  /**
   * Replaces the desired set. `next` is kept by reference (the caller must not mutate it afterwards). `diff`, when
   * the caller computed it once for all peers, saves this peer the comparison. Routes no longer present are
   * withdrawn if the peer has them, or dropped from the queue if it never had them.
   */
  setDesired(next: ReadonlyMap<RouteKey, RouteRecord>, diff?: DesiredDiff): void {
    const d = diff ?? diffDesired(this.desired, next);
    this.desired = next;
    if (this.peer === undefined) return;
    if (d.changed.length === 0 && d.removed.length === 0) return;
    this.changeSeq++;
    const before = new Set(this.pendingGroups);
    const wBefore = new Map<WithdrawQueue, boolean>();
    for (const w of this.withdrawQueue.values()) wBefore.set(w, w.head >= w.queue.length);
    for (const rec of d.changed) this.schedule(rec);
    for (const rec of d.removed) {
      if (this.held().has(rec.key)) this.pushWithdraw(rec);
      if (this.unsent.size > 0) this.unsent.delete(rec.key);
    }
    this.markClean(before, wBefore);
    // long queues of cancelled entries (a stuck socket while routes flap): rebuild them
    if (this.queued > 2 * (this.desired.size + this.advertisedCount) + 10_000) this.requeueAll();
  }

  /** RFC 2918 ROUTE-REFRESH: re-send every route of `family` the peer should have. */
  refresh(family: Family): void {
    if (this.peer === undefined) return;
    this.changeSeq++;
    for (const rec of this.desired.values()) {
      if (rec.route.family !== family) continue;
      const g = this.groupFor(rec);
      if (g === null) continue;
      if (this.held().get(rec.key) === g) this.forced.add(rec.key);
      this.pushAnnounce(rec, g);
    }
  }

  /** From now on, End-of-RIB may be sent once the initial table is out (decisions.md: only after the first full sync). */
  markInitialSyncDone(): void {
    this.initialSyncDone = true;
  }

  /** Desired routes that cannot be sent to this peer, by reason (empty while all can). */
  unsentRoutes(): UnsentRoutes[] {
    const byReason = new Map<string, { reason: string; prefixes: number; example: string }>();
    for (const [key, reason] of this.unsent) {
      const u = byReason.get(reason);
      if (u === undefined) byReason.set(reason, { reason, prefixes: 1, example: key });
      else u.prefixes++;
    }
    return [...byReason.values()];
  }

  /** The routes the peer holds from us, with the attributes we sent. */
  advertisedRoutes(): ExportedRoute[] {
    const out: ExportedRoute[] = [];
    for (const [key, g] of this.held()) out.push(describeExport(key, g.exported));
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
      const encoded = encodeGroup(ex, peer.fourOctetAs);
      if ('unsendable' in encoded) {
        this.unsendable.set(rec.sig, encoded.unsendable);
        this.groupsBySig.set(rec.sig, null);
        if (!this.reported.has(encoded.unsendable)) {
          this.reported.add(encoded.unsendable);
          this.onUnsendable?.(encoded.unsendable, rec.key);
        }
        return null;
      }
      const { attrs, mpNextHop } = encoded;
      const bytesKey = `${ex.family} ${attrs.toString('latin1')} ${mpNextHop?.toString('latin1') ?? ''}`;
      g = this.groupsByBytes.get(bytesKey) ?? null;
      if (g === null) {
        g = { family: ex.family, attrs, mpNextHop, exported: ex, queue: [], head: 0, cleanSeq: -1, cleanEnd: 0 };
        this.groupsByBytes.set(bytesKey, g);
      }
    }
    this.groupsBySig.set(rec.sig, g);
    return g;
  }

  private pushAnnounce(rec: RouteRecord, g: AttrGroup): void {
    // a group is in pendingGroups exactly while head < queue.length
    if (g.queue.push(rec) - g.head === 1) this.pendingGroups.add(g);
    this.queued++;
  }

  private pushWithdraw(rec: RouteRecord): void {
    this.withdrawQueue.get(rec.route.family)!.queue.push(rec);
    this.queued++;
  }

  /** Queues what `rec` (the current desired record of its key) needs toward this peer. */
  private schedule(rec: RouteRecord): void {
    const target = this.groupFor(rec);
    const adv = this.held().get(rec.key);
    if (target !== null) {
      if (adv !== target) this.pushAnnounce(rec, target);
    } else if (adv !== undefined) {
      this.pushWithdraw(rec);
    }
    if (this.unsendable.size === 0) return;
    const reason = target === null ? this.unsendable.get(rec.sig) : undefined;
    if (reason !== undefined) this.unsent.set(rec.key, reason);
    else this.unsent.delete(rec.key);
  }

  /** The group a key should be advertised with now, or null (withdraw / never). */
  private currentTarget(key: RouteKey): AttrGroup | null {
    const cur = this.desired.get(key);
    return cur === undefined ? null : this.groupFor(cur);
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
      const w = this.withdrawQueue.get(family)!;
      if (w.head >= w.queue.length) continue;
      const cap = withdrawCapacity(family, maxLength);
      let used = 0;
      const q = w.queue;
      let i = w.head;
      const cleanEnd = w.cleanSeq === this.changeSeq ? w.cleanEnd : 0;
      for (; i < q.length; i++) {
        const rec = q[i]!;
        // still valid: the peer has it, and it is not (re-)desired for this peer
        if (i >= cleanEnd && (!this.held().has(rec.key) || this.currentTarget(rec.key) !== null)) continue;
        const s = nlriSize(rec);
        if (used + s > cap) break;
        used += s;
        out.push(rec);
        this.held().delete(rec.key);
      }
      this.queued -= i - w.head;
      w.head = i;
      if (w.head >= q.length) {
        w.queue = [];
        w.head = 0;
        w.cleanEnd = 0;
      }
      if (out.length === 0) continue;
      const buf = buildWithdraw(family, out);
      this.lastSent = { kind: 'withdraw', family, prefixes: out.length, bytes: buf.length };
      out.length = 0;
      return buf;
    }
    for (const g of this.pendingGroups) {
      const cap = announceCapacity(g.family, g.attrs, g.mpNextHop, maxLength);
      if (cap < MAX_NLRI_OCTETS) throw new RangeError(`path attributes too long for a ${maxLength}-octet UPDATE`);
      let used = 0;
      const q = g.queue;
      let i = g.head;
      const cleanEnd = g.cleanSeq === this.changeSeq ? g.cleanEnd : 0;
      // every entry is clean then (deferOk), so the whole message's NLRI can be entered in `advertised` later
      const defer = this.deferOk && cleanEnd === q.length;
      for (; i < q.length; i++) {
        const rec = q[i]!;
        const key = rec.key;
        if (i >= cleanEnd) {
          const cur = this.desired.get(key);
          // lazy cancel: skip entries whose key is gone, changed group, or already sent with this group
          if (cur === undefined || (cur.sig !== rec.sig && this.groupFor(cur) !== g)) continue;
          if (this.held().get(key) === g && !(this.forced.size > 0 && this.forced.delete(key))) continue;
        }
        const s = nlriSize(rec);
        if (used + s > cap) break;
        used += s;
        out.push(rec);
        if (!defer) this.held().set(key, g);
      }
      if (defer && i > g.head) {
        this.deferred.push({ g, queue: q, from: g.head, to: i });
        this.deferredCount += i - g.head;
      }
      this.queued -= i - g.head;
      g.head = i;
      if (g.head >= q.length) {
        g.queue = [];
        g.head = 0;
        g.cleanEnd = 0;
        this.pendingGroups.delete(g);
      }
      if (out.length === 0) continue;
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
