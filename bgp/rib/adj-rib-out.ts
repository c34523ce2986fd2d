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
import { describeExport, exportRoute } from './export.ts';
import type { ExportedAttributes, ExportedRoute, ExportPeer } from './export.ts';
import { announceCapacity, buildAnnounce, buildWithdraw, encodeGroup, endOfRibMessage, MAX_NLRI_OCTETS, withdrawCapacity } from './packer.ts';
import type { SentInfo } from './packer.ts';
import { fitsPackedTable } from './packed-table.ts';
import type { PackedTable } from './packed-table.ts';
import { diffDesired, makeRecord } from './record.ts';
import type { DesiredDiff, RouteRecord } from './record.ts';
import { nlriSize } from './route.ts';
import type { ParsedPrefix, RouteKey } from './route.ts';

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

const FAMILIES: readonly Family[] = ['ipv4-unicast', 'ipv6-unicast'];

/** Withdrawal candidates of one family; same lazy/clean rules as AttrGroup queues. */
interface WithdrawQueue {
  queue: RouteRecord[];
  head: number;
  cleanSeq: number;
  cleanEnd: number;
}
const EMPTY: ReadonlyMap<RouteKey, RouteRecord> = new Map();

/** A run `queue[from, to)` of routes announced with group `g` and not yet entered in `advertised` (see `deferred`). */
interface DeferredRun {
  readonly g: AttrGroup;
  readonly queue: readonly RouteRecord[];
  readonly from: number;
  readonly to: number;
}

/** What the UPDATEs of a packed table leave behind in an Adj-RIB-Out (see `prepare()`). */
interface PackedState {
  /** `runs[i]`: the routes `messages[i]` announces. */
  readonly runs: readonly DeferredRun[];
  readonly groupsBySig: Map<string, AttrGroup | null>;
  readonly groupsByBytes: Map<string, AttrGroup>;
  readonly unsendable: Map<string, string>;
  readonly unsent: ReadonlyMap<RouteKey, string>;
  /** The `onUnsendable` reports of the table, made when a session adopts it: [reason, example prefix]. */
  readonly reports: readonly (readonly [string, string])[];
}

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
  private deferred: DeferredRun[] = [];
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
  /** While `prepare()` packs: the reports it holds back until a session adopts the table. */
  private heldReports: [string, string][] | undefined;
  /** The initial table packed by `prepare()`, while the desired set is the one it was packed from. */
  private packed: PackedTable<PackedState> | undefined;
  /**
   * The packed table the current session is sending, and the index of its next message. Each message sent enters
   * its run in `deferred`. A change before the last one drops the rest (`clearQueues()`), and what the peer then
   * lacks is queued as at a fresh start.
   */
  private replay: { readonly table: PackedTable<PackedState>; next: number } | undefined;
  /** Families whose End-of-RIB was sent on the current session. */
  readonly endOfRibSent = new Set<Family>();
  /** Set by every `nextMessage()` that returned a message: what it holds. */
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
    if (this.replay !== undefined || this.pendingGroups.size > 0) return true;
    for (const w of this.withdrawQueue.values()) if (w.head < w.queue.length) return true;
    return this.initialSyncDone && this.eorDue.size > 0;
  }

  /**
   * Session Established: the peer has nothing from us. Queues the whole desired set (as exported to `peer`) and an
   * End-of-RIB for every negotiated family. When `prepare()` packed the table for this context and `maxLength` (the
   * session's maximum message length) and the desired set did not change since, its UPDATEs are sent as they are.
   */
  start(peer: ExportPeer, maxLength?: number): void {
    this.clearSessionState();
    this.peer = peer;
    for (const f of FAMILIES) if (peer.families.has(f)) this.eorDue.add(f);
    const table = this.packed;
    if (table !== undefined && maxLength !== undefined && fitsPackedTable(table, peer, maxLength)) this.adopt(table);
    else this.requeueAll();
    this.startSeq = this.changeSeq;
  }

  /**
   * Packs the initial table toward a session that is not up yet and would have export context `peer` and maximum
   * message length `maxLength`, and keeps it for `start()` until the desired set changes (bgp/rib/packed-table.ts).
   * Costs what sending the table at session start costs; keeps the messages (about 5 octets per IPv4 /32). No-op
   * while a session is up or when the kept table already fits. Reports of unsendable routes wait for the session.
   * Never throws: when packing fails, nothing is kept.
   */
  prepare(peer: ExportPeer, maxLength: number): void {
    if (this.peer !== undefined) return;
    if (this.packed !== undefined && fitsPackedTable(this.packed, peer, maxLength)) return;
    this.packed = undefined;
    const reports: [string, string][] = [];
    this.heldReports = reports;
    const messages: Buffer[] = [];
    try {
      this.start(peer);
      // a fresh start queues announcements only (the peer holds nothing): each call packs one UPDATE of them
      while (this.pendingGroups.size > 0) {
        const m = this.nextMessage(maxLength);
        if (m === undefined || this.lastSent?.kind !== 'announce') break;
        messages.push(m);
      }
      const families = new Set<Family>();
      for (const rec of this.desired.values()) families.add(rec.family);
      // every message's routes must be one deferred run: that is what the replay enters as sent
      if (this.pendingGroups.size === 0 && this.advertised.size === 0 && this.deferred.length === messages.length) {
        const state: PackedState = { runs: this.deferred, groupsBySig: this.groupsBySig, groupsByBytes: this.groupsByBytes, unsendable: this.unsendable, unsent: new Map(this.unsent), reports };
        this.packed = { peer, maxLength, families, messages, state };
      }
    } catch {
      // nothing kept: the session start packs the table itself and meets the same error where it is handled
    } finally {
      this.heldReports = undefined;
      this.reset();
    }
  }

  /** Makes the session's state what sending `table` leaves, and sends its UPDATEs first (see `nextMessage()`). */
  private adopt(table: PackedTable<PackedState>): void {
    const st = table.state;
    this.groupsBySig = st.groupsBySig;
    this.groupsByBytes = st.groupsByBytes;
    this.unsendable = st.unsendable;
    for (const g of st.groupsByBytes.values()) {
      g.queue = [];
      g.head = 0;
      g.cleanEnd = 0;
    }
    for (const [key, reason] of st.unsent) this.unsent.set(key, reason);
    if (table.messages.length > 0) this.replay = { table, next: 0 };
    for (const [reason, example] of st.reports) this.report(reason, example);
  }

  /** `onUnsendable` once per session and reason (held back while `prepare()` packs). */
  private report(reason: string, example: string): void {
    if (this.reported.has(reason)) return;
    this.reported.add(reason);
    if (this.heldReports !== undefined) this.heldReports.push([reason, example]);
    else this.onUnsendable?.(reason, example);
  }

  /** Session down: the peer forgot everything we sent. The desired set is kept. */
  reset(): void {
    this.clearSessionState();
    this.peer = undefined;
  }

  private clearQueues(): void {
    this.changeSeq++;
    this.replay = undefined;
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
    if (d.changed.length === 0 && d.removed.length === 0) return;
    this.packed = undefined;
    if (this.peer === undefined) return;
    // the rest of an adopted table is not sent: queue what the peer lacks now
    if (this.replay !== undefined) return this.requeueAll();
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
    if (this.replay !== undefined) this.requeueAll();
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
        this.report(encoded.unsendable, rec.key);
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
   * The next UPDATE to send (whole message, header included), or undefined when nothing is pending. Order: the
   * UPDATEs of an adopted packed table (`start()`), withdrawals (IPv4, then IPv6), then announcement groups in
   * arrival order, then End-of-RIB markers (only once markInitialSyncDone() was called). Every message is at most `maxLength` octets (4096, or 65535 with RFC 8654).
   */
  nextMessage(maxLength: number): Buffer | undefined {
    if (this.peer === undefined) return undefined;
    // an adopted packed table goes first: what is queued later was queued against what it announces
    const replay = this.replay;
    if (replay !== undefined) {
      const i = replay.next++;
      if (replay.next >= replay.table.messages.length) this.replay = undefined;
      const run = replay.table.state.runs[i]!;
      const buf = replay.table.messages[i]!;
      this.deferred.push(run);
      this.deferredCount += run.to - run.from;
      this.lastSent = { kind: 'announce', family: run.g.family, prefixes: run.to - run.from, bytes: buf.length };
      return buf;
    }
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
