/**
 * Adj-RIB-Out of one peer (RFC 4271 §3.2, §9.2): what we want the peer to have (the Speaker's route table,
 * route-table.ts, shared by every peer), what it has (advertised), and the pending difference, drained one UPDATE at
 * a time by the session's tx pump (pull model, see docs/routes.md): withdrawals first, then announcements grouped by
 * byte-identical encoded attributes, each UPDATE filled up to the negotiated maximum message length, then End-of-RIB
 * per family (RFC 4724 §2) once the first full table is out and `markInitialSyncDone()` was called.
 *
 * Latest change per route wins: queued entries are route table slots, checked against the table and what the peer
 * holds when they are packed, so a route changed twice before it is sent is sent once, and announce-then-withdraw of
 * a route the peer never had sends nothing. A message returned by `nextMessage()` counts as sent (the session hands
 * it to the socket at once).
 */
import type { Family } from '../constants.ts';
import { describeExport, exportRoute } from './export.ts';
import type { ExportedAttributes, ExportedRoute, ExportPeer } from './export.ts';
import { announceCapacity, buildAnnounce, buildWithdraw, encodeGroup, endOfRibMessage, MAX_NLRI_OCTETS, withdrawCapacity } from './packer.ts';
import type { SentInfo } from './packer.ts';
import { fitsPackedTable } from './packed-table.ts';
import type { PackedTable } from './packed-table.ts';
import type { AttrSet, DesiredDiff, RouteTable } from './route-table.ts';

/** Routes sharing byte-identical encoded attributes toward one peer. */
interface AttrGroup {
  /** Its number in this Adj-RIB-Out (1 upwards): what `held` records per slot. */
  readonly id: number;
  readonly family: Family;
  /** Encoded path attributes (without MP_REACH_NLRI). */
  readonly attrs: Buffer;
  /** IPv6 next hop octets for MP_REACH_NLRI (undefined for IPv4). */
  readonly mpNextHop: Buffer | undefined;
  readonly exported: ExportedAttributes;
  /** Slots queued for announcement with this group, consumed from `head`; re-validated when packed (lazy cancel). */
  queue: number[];
  head: number;
  /** Entries before `cleanEnd` were queued by a full rebuild at change sequence `cleanSeq`: while no change happened
   *  since, they are known valid and unique, and packing skips their re-check (the initial table's fast path). */
  cleanSeq: number;
  cleanEnd: number;
}

/**
 * Routes that cannot be sent to this peer although they are desired and exported to it: their path attributes (or
 * MP_REACH_NLRI next hop) cannot be encoded, e.g. an IPv6 next hop with a zone id ("fe80::1%eth0"), or there is no
 * next hop of their family (an IPv6 route over an IPv4 session without a configured IPv6 next hop). Grouped by
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
  queue: number[];
  head: number;
  cleanSeq: number;
  cleanEnd: number;
}

/** What an attribute set exports to toward this peer: a group, or null (not exported, or not encodable: `unsendable`). */
interface Export {
  readonly set: AttrSet;
  readonly g: AttrGroup | null;
  readonly unsendable: string | undefined;
}

/** The routes `queue[from, to)` one packed UPDATE announces with group `g`. */
interface Run {
  readonly g: AttrGroup;
  readonly queue: readonly number[];
  readonly from: number;
  readonly to: number;
}

/** What the UPDATEs of a packed table leave behind in an Adj-RIB-Out (see `prepare()`). */
interface PackedState {
  /** `runs[i]`: the routes `messages[i]` announces. */
  readonly runs: readonly Run[];
  readonly exports: (Export | undefined)[];
  readonly unsendableSets: number;
  readonly groups: AttrGroup[];
  readonly groupsByBytes: Map<string, AttrGroup>;
  readonly unsent: ReadonlyMap<number, string>;
  /** The `onUnsendable` reports of the table, made when a session adopts it: [reason, example prefix]. */
  readonly reports: readonly (readonly [string, string])[];
}

/**
 * Per-peer Adj-RIB-Out plus UPDATE packing. One instance per peer, all over one RouteTable.
 *
 * Cost model (100,000 routes must pack fast): what the peer holds is one typed-array entry per slot (the group it was
 * announced with), so entering or leaving it costs a store, not a Map operation; a change costs one queue push; the
 * group of an attribute set is looked up once per set. Queues are cancelled lazily: an entry is re-checked against
 * the table and what the peer holds when it is packed, so a route changed many times is sent once, with its latest
 * attributes. Entries pushed by one batch into an empty queue (the initial table, a burst) are unique and valid when
 * pushed, and are trusted without re-check until the next change (`changeSeq`).
 */
export class AdjRibOut {
  readonly #table: RouteTable;

  /**
   * `table` holds the desired routes (the Speaker's, shared by every peer; each change of it is given to
   * `setDesired`). `onUnsendable` is called once per session and reason when routes turn out impossible to encode
   * toward this peer (see UnsentRoutes), with one affected prefix.
   */
  constructor(table: RouteTable, opts: { onUnsendable?: (reason: string, example: string) => void } = {}) {
    this.#table = table;
    this.onUnsendable = opts.onUnsendable;
  }

  /** Export context while the session is Established; undefined otherwise (nothing is pending then). */
  private peer: ExportPeer | undefined;
  /** The peer is to hold nothing, whatever the table says (a drain withdrew everything: `withhold()`). */
  #withheld = false;
  /** Per slot: the id of the group the peer holds the route with, 0 when it does not hold it. */
  #held = new Uint32Array(0);
  #heldCount = 0;
  /** The groups of this session, `#groups[id - 1]`. */
  #groups: AttrGroup[] = [];
  /** Per attribute set id: what it exports to (checked against the set itself: ids are reused). */
  #exports: (Export | undefined)[] = [];
  /** Sets in `#exports` that cannot be encoded toward this peer. */
  #unsendableSets = 0;
  private groupsByBytes = new Map<string, AttrGroup>();
  /** `changeSeq` right after `start()` queued the table (-1: none); see `lastRun`. */
  private startSeq = -1;
  /** Withdrawal candidates per family (re-checked when packed). */
  private readonly withdrawQueue = new Map<Family, WithdrawQueue>(FAMILIES.map((f) => [f, { queue: [], head: 0, cleanSeq: -1, cleanEnd: 0 }]));
  private readonly pendingGroups = new Set<AttrGroup>();
  /** Slots a ROUTE-REFRESH asked to resend even though the peer has them with the same attributes. */
  private readonly forced = new Set<number>();
  private queued = 0;
  /** Incremented by every change that can invalidate queued entries (see AttrGroup.cleanSeq). */
  private changeSeq = 0;
  private readonly eorDue = new Set<Family>();
  private initialSyncDone = false;
  private readonly scratch: number[] = [];
  /** Desired routes kept from the peer because their attributes cannot be encoded: slot → reason. */
  private readonly unsent = new Map<number, string>();
  /** Reasons already reported through `onUnsendable` on this session. */
  private readonly reported = new Set<string>();
  private readonly onUnsendable: ((reason: string, example: string) => void) | undefined;
  /** While `prepare()` packs: the reports it holds back until a session adopts the table. */
  private heldReports: [string, string][] | undefined;
  /** The initial table packed by `prepare()`, while the desired set is the one it was packed from. */
  private packed: PackedTable<PackedState> | undefined;
  /**
   * The packed table the current session is sending, and the index of its next message. Each message sent enters
   * its run as held. A change before the last one drops the rest (`clearQueues()`), and what the peer then lacks is
   * queued as at a fresh start.
   */
  private replay: { readonly table: PackedTable<PackedState>; next: number } | undefined;
  /** The last announcement packed from clean entries of a fresh start, whole (what `prepare()` keeps per message). */
  #lastRun: Run | undefined;
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
    return this.#heldCount;
  }

  /** Number of desired routes (before per-peer export filtering). */
  get desiredCount(): number {
    return this.#withheld ? 0 : this.#table.size;
  }

  /** `#held` as long as the table's slots (the table grows between changes). */
  #sync(): Uint32Array {
    if (this.#held.length < this.#table.capacity) {
      const next = new Uint32Array(this.#table.capacity);
      next.set(this.#held);
      this.#held = next;
    }
    return this.#held;
  }

  /** The peer holds `slot` with `g` from now on. */
  #hold(slot: number, g: AttrGroup): void {
    const held = this.#held;
    if (held[slot] === 0) {
      this.#heldCount++;
      this.#table.acquire(slot);
    }
    held[slot] = g.id;
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
    const runs: Run[] = [];
    try {
      this.start(peer);
      // a fresh start queues announcements only (the peer holds nothing): each call packs one UPDATE of them
      while (this.pendingGroups.size > 0) {
        const m = this.nextMessage(maxLength);
        // every message's routes must be one run: that is what the replay enters as held
        if (m === undefined || this.lastSent?.kind !== 'announce' || this.#lastRun === undefined) break;
        messages.push(m);
        runs.push(this.#lastRun);
      }
      const families = new Set<Family>();
      if (!this.#withheld) for (const f of FAMILIES) if (this.#table.familySize(f) > 0) families.add(f);
      if (this.pendingGroups.size === 0 && runs.length === messages.length) {
        const state: PackedState = { runs, exports: this.#exports, unsendableSets: this.#unsendableSets, groups: this.#groups, groupsByBytes: this.groupsByBytes, unsent: new Map(this.unsent), reports };
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
    this.#exports = st.exports;
    this.#unsendableSets = st.unsendableSets;
    this.#groups = st.groups;
    this.groupsByBytes = st.groupsByBytes;
    for (const g of st.groups) {
      g.queue = [];
      g.head = 0;
      g.cleanEnd = 0;
    }
    for (const [slot, reason] of st.unsent) this.unsent.set(slot, reason);
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
    for (const g of this.#groups) {
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
    const held = this.#held;
    if (this.#heldCount > 0) {
      for (let s = 0; s < held.length; s++) if (held[s] !== 0) this.#table.release(s);
      held.fill(0);
      this.#heldCount = 0;
    }
    this.#groups = [];
    this.#exports = [];
    this.#unsendableSets = 0;
    this.groupsByBytes = new Map();
    this.unsent.clear();
    this.reported.clear();
    this.eorDue.clear();
    this.endOfRibSent.clear();
  }

  /** Rebuilds every queue from desired vs advertised (after a context change, or to compact long queues). */
  private requeueAll(): void {
    this.clearQueues();
    this.unsent.clear();
    const held = this.#sync();
    if (!this.#withheld) this.#table.forEachDesired((s) => this.schedule(s));
    // held, not desired any more (or withheld): withdraw
    for (let s = 0; s < held.length; s++) if (held[s] !== 0 && (this.#withheld || this.#table.attrOf(s) === undefined)) this.pushWithdraw(s);
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
    this.#exports = [];
    this.#unsendableSets = 0;
    this.requeueAll();
  }

  /**
   * The route table changed by `diff` (route-table.ts). Routes no longer desired are withdrawn if the peer has them,
   * or dropped from the queue if it never had them.
   */
  setDesired(diff: DesiredDiff): void {
    this.#sync();
    if (diff.changed.length === 0 && diff.removed.length === 0) return;
    this.packed = undefined;
    this.changeSeq++;
    if (this.peer === undefined || this.#withheld) return;
    // the rest of an adopted table is not sent: queue what the peer lacks now
    if (this.replay !== undefined) return this.requeueAll();
    const before = new Set(this.pendingGroups);
    const wBefore = new Map<WithdrawQueue, boolean>();
    for (const w of this.withdrawQueue.values()) wBefore.set(w, w.head >= w.queue.length);
    for (const s of diff.changed) this.schedule(s);
    const held = this.#held;
    for (const s of diff.removed) {
      if (held[s] !== 0) this.pushWithdraw(s);
      if (this.unsent.size > 0) this.unsent.delete(s);
    }
    this.markClean(before, wBefore);
    // long queues of cancelled entries (a stuck socket while routes flap): rebuild them
    if (this.queued > 2 * (this.#table.size + this.#heldCount) + 10_000) this.requeueAll();
  }

  /**
   * Whether the peer is to hold nothing whatever the table says (RFC 8326 drain, withdrawal phase): withholding
   * withdraws what it holds; ending it sends the desired set again.
   */
  withhold(on: boolean): void {
    if (on === this.#withheld) return;
    this.#withheld = on;
    this.packed = undefined;
    if (this.peer !== undefined) this.requeueAll();
    else this.changeSeq++;
  }

  /** RFC 2918 ROUTE-REFRESH: re-send every route of `family` the peer should have. */
  refresh(family: Family): void {
    if (this.peer === undefined) return;
    if (this.replay !== undefined) this.requeueAll();
    this.changeSeq++;
    if (this.#withheld) return;
    const held = this.#sync();
    const table = this.#table;
    table.forEachDesired((s) => {
      if (table.family(s) !== family) return;
      const g = this.#target(s);
      if (g === null) return;
      if (held[s] === g.id) this.forced.add(s);
      this.pushAnnounce(s, g);
    });
  }

  /** From now on, End-of-RIB may be sent once the initial table is out (decisions.md: only after the first full sync). */
  markInitialSyncDone(): void {
    this.initialSyncDone = true;
  }

  /** Desired routes that cannot be sent to this peer, by reason (empty while all can). */
  unsentRoutes(): UnsentRoutes[] {
    const byReason = new Map<string, { reason: string; prefixes: number; example: string }>();
    for (const [slot, reason] of this.unsent) {
      const u = byReason.get(reason);
      if (u === undefined) byReason.set(reason, { reason, prefixes: 1, example: this.#table.prefixText(slot) });
      else u.prefixes++;
    }
    return [...byReason.values()];
  }

  /** The routes the peer holds from us, with the attributes we sent. */
  advertisedRoutes(): ExportedRoute[] {
    const out: ExportedRoute[] = [];
    const held = this.#held;
    for (let s = 0; s < held.length; s++) if (held[s] !== 0) out.push(describeExport(this.#table.prefixText(s), this.#groups[held[s]! - 1]!.exported));
    return out;
  }

  /** What attribute set `set` exports to toward this peer; `slot` names an example route in a report. */
  #export(set: AttrSet, slot: number): Export {
    const known = this.#exports[set.id];
    if (known !== undefined && known.set === set) return known;
    const peer = this.peer;
    if (peer === undefined) return { set, g: null, unsendable: undefined }; // nothing is exported without a session
    if (known?.unsendable !== undefined) this.#unsendableSets--; // the id belonged to a set since dropped
    const e = this.#exportTo(set, slot, peer);
    if (e.unsendable !== undefined) this.#unsendableSets++;
    this.#exports[set.id] = e;
    return e;
  }

  #exportTo(set: AttrSet, slot: number, peer: ExportPeer): Export {
    const ex = exportRoute(set.route, peer);
    if ('skip' in ex) {
      if (ex.unsent === undefined) return { set, g: null, unsendable: undefined };
      this.report(ex.skip, this.#table.prefixText(slot));
      return { set, g: null, unsendable: ex.skip };
    }
    const encoded = encodeGroup(ex, peer.fourOctetAs);
    if ('unsendable' in encoded) {
      this.report(encoded.unsendable, this.#table.prefixText(slot));
      return { set, g: null, unsendable: encoded.unsendable };
    }
    const { attrs, mpNextHop } = encoded;
    const bytesKey = `${ex.family} ${attrs.toString('latin1')} ${mpNextHop?.toString('latin1') ?? ''}`;
    let g = this.groupsByBytes.get(bytesKey);
    if (g === undefined) {
      g = { id: this.#groups.length + 1, family: ex.family, attrs, mpNextHop, exported: ex, queue: [], head: 0, cleanSeq: -1, cleanEnd: 0 };
      this.#groups.push(g);
      this.groupsByBytes.set(bytesKey, g);
    }
    return { set, g, unsendable: undefined };
  }

  /** The group `slot` should be advertised with now, or null (withdraw / never). */
  #target(slot: number): AttrGroup | null {
    if (this.#withheld) return null;
    const set = this.#table.attrOf(slot);
    return set === undefined ? null : this.#export(set, slot).g;
  }

  private pushAnnounce(slot: number, g: AttrGroup): void {
    // a group is in pendingGroups exactly while head < queue.length
    if (g.queue.push(slot) - g.head === 1) this.pendingGroups.add(g);
    this.queued++;
  }

  private pushWithdraw(slot: number): void {
    this.withdrawQueue.get(this.#table.family(slot))!.queue.push(slot);
    this.queued++;
  }

  /** Queues what the desired route in `slot` needs toward this peer. */
  private schedule(slot: number): void {
    const set = this.#table.attrOf(slot);
    const e = set === undefined ? undefined : this.#export(set, slot);
    const target = e?.g ?? null;
    const adv = this.#held[slot]!;
    if (target !== null) {
      if (adv !== target.id) this.pushAnnounce(slot, target);
    } else if (adv !== 0) {
      this.pushWithdraw(slot);
    }
    if (this.#unsendableSets === 0 && this.unsent.size === 0) return;
    const reason = e?.unsendable;
    if (reason !== undefined) this.unsent.set(slot, reason);
    else this.unsent.delete(slot);
  }

  /**
   * The next UPDATE to send (whole message, header included), or undefined when nothing is pending. Order: the
   * UPDATEs of an adopted packed table (`start()`), withdrawals (IPv4, then IPv6), then announcement groups in
   * arrival order, then End-of-RIB markers (only once markInitialSyncDone() was called). Every message is at most `maxLength` octets (4096, or 65535 with RFC 8654).
   */
  nextMessage(maxLength: number): Buffer | undefined {
    if (this.peer === undefined) return undefined;
    const held = this.#sync();
    const table = this.#table;
    this.#lastRun = undefined;
    // an adopted packed table goes first: what is queued later was queued against what it announces
    const replay = this.replay;
    if (replay !== undefined) {
      const i = replay.next++;
      if (replay.next >= replay.table.messages.length) this.replay = undefined;
      const run = replay.table.state.runs[i]!;
      const buf = replay.table.messages[i]!;
      for (let k = run.from; k < run.to; k++) this.#hold(run.queue[k]!, run.g);
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
        const s = q[i]!;
        // still valid: the peer has it, and it is not (re-)desired for this peer
        if (i >= cleanEnd && (held[s] === 0 || this.#target(s) !== null)) continue;
        const size = table.nlriSize(s);
        if (used + size > cap) break;
        used += size;
        out.push(s);
        held[s] = 0; // a later entry of the same slot is not sent again; the table is told below
      }
      this.queued -= i - w.head;
      w.head = i;
      if (w.head >= q.length) {
        w.queue = [];
        w.head = 0;
        w.cleanEnd = 0;
      }
      if (out.length === 0) continue;
      const buf = buildWithdraw(family, table, out);
      // released once written: a slot neither desired nor held is freed
      this.#heldCount -= out.length;
      for (const s of out) table.release(s);
      this.lastSent = { kind: 'withdraw', family, prefixes: out.length, bytes: buf.length };
      out.length = 0;
      return buf;
    }
    for (const g of this.pendingGroups) {
      const cap = announceCapacity(g.family, g.attrs, g.mpNextHop, maxLength);
      if (cap < MAX_NLRI_OCTETS) throw new RangeError(`path attributes too long for a ${maxLength}-octet UPDATE`);
      let used = 0;
      const q = g.queue;
      const from = g.head;
      let i = from;
      const cleanEnd = g.cleanSeq === this.changeSeq ? g.cleanEnd : 0;
      for (; i < q.length; i++) {
        const s = q[i]!;
        if (i >= cleanEnd) {
          // lazy cancel: skip entries no longer desired with this group, or already sent with it
          if (this.#target(s) !== g) continue;
          if (held[s] === g.id && !(this.forced.size > 0 && this.forced.delete(s))) continue;
        }
        const size = table.nlriSize(s);
        if (used + size > cap) break;
        used += size;
        out.push(s);
        this.#hold(s, g);
      }
      // a whole run of clean entries of a fresh start: what prepare() keeps with the message
      if (this.changeSeq === this.startSeq && cleanEnd === q.length && i > from) this.#lastRun = { g, queue: q, from, to: i };
      this.queued -= i - from;
      g.head = i;
      if (g.head >= q.length) {
        g.queue = [];
        g.head = 0;
        g.cleanEnd = 0;
        this.pendingGroups.delete(g);
      }
      if (out.length === 0) continue;
      const buf = buildAnnounce(g.family, g.attrs, g.mpNextHop, table, out);
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
