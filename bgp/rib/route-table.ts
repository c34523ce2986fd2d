/**
 * The desired routes of a Speaker in columnar form: the one full route table of the speaker thread, shared by every
 * peer's Adj-RIB-Out (bgp/rib/adj-rib-out.ts; docs/routes.md "Route table").
 *
 * A route is a slot: its prefix in typed arrays (family, length, an IPv4 address as a uint32 or an IPv6 address as
 * 16 octets) and the id of its attribute set. Attribute sets are interned by their signature (export.ts
 * `attributeSignature`: everything but the prefix), so 100,000 routes with the same attributes share one set and one
 * validation, and a route costs about 24 octets here, not the objects, strings and Map entries of a Route and a
 * record. An open-addressing index (linear probing over the prefix bits) finds a prefix's slot.
 *
 * Slots stay allocated while a peer holds the route (`acquire`/`release`, counted per slot), so a withdrawal can
 * still be written after the route left the desired set; a slot that is neither desired nor held is freed at the end
 * of the change that freed it and may be reused by a later change. Readers that keep slot numbers across changes
 * (the Adj-RIB-Out's queues) check them against the slot's current state.
 *
 * Changes come in batches (`replace`, `update`): every route of a batch is validated first, and a batch with a
 * malformed route throws RouteError listing the problems and changes nothing (the Speaker's contract). A batch
 * returns its diff: the slots whose attributes changed or that became desired, and the slots that left the set.
 */
import { isIP } from 'node:net';
import type { Family } from '../constants.ts';
import { attributeSignature } from './export.ts';
import { formatIPv6 } from '../codec/nlri.ts';
import { MAX_AS_PATH_PREPEND, MAX_COMMUNITY_OCTETS, parseRoutePrefix, RouteError } from './route.ts';
import type { Route, RouteKey } from './route.ts';

/** The attributes routes share (everything but the prefix), interned by signature. */
export interface AttrSet {
  /** A small integer, reused once the set is dropped: compare sets, not ids, across changes. */
  readonly id: number;
  /** attributeSignature() of its routes. */
  readonly sig: string;
  readonly family: Family;
  /** A route with these attributes (the first one seen; its prefix means nothing here). */
  readonly route: Route;
  /** Desired routes with these attributes. */
  refs: number;
}

/** Changes of one batch, as slot numbers, computed once and given to every peer. */
export interface DesiredDiff {
  /** Slots that became desired or whose attribute set changed. */
  readonly changed: readonly number[];
  /** Slots that left the desired set (their prefix is kept while a peer holds the route). */
  readonly removed: readonly number[];
}

const FREE = 0;
const V4 = 1;
const V6 = 2;

const isU32 = (v: unknown): boolean => typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= 0xffffffff;

/** Checks the optional attributes of a route; throws RouteError naming the first bad field. */
export function checkAttributes(route: Route): void {
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

/**
 * Validates a route as the Speaker does (prefix canonical and of its family, attributes in range) and returns it;
 * throws RouteError naming the problem.
 */
export function validateRoute(route: Route): Route {
  parseRoutePrefix(route.prefix, route.family);
  checkAttributes(route);
  return route;
}

/** Routes staged for one batch: parsed and validated, not yet in the table. */
class Staged {
  count = 0;
  fam = new Uint8Array(64);
  len = new Uint8Array(64);
  v4 = new Uint32Array(64);
  v6: Uint8Array | undefined;
  sets: AttrSet[] = [];
  /** Sets interned by this batch (dropped again if no route ends up using them). */
  readonly created: AttrSet[] = [];

  push(fam: number, len: number, v4: number, v6: Uint8Array | undefined, set: AttrSet): void {
    const i = this.count++;
    if (i === this.fam.length) {
      this.fam = grow8(this.fam, i * 2);
      this.len = grow8(this.len, i * 2);
      this.v4 = grow32(this.v4, i * 2);
      if (this.v6 !== undefined) this.v6 = grow8(this.v6, i * 32);
    }
    this.fam[i] = fam;
    this.len[i] = len;
    this.v4[i] = v4;
    if (v6 !== undefined) {
      this.v6 ??= new Uint8Array(this.fam.length * 16);
      this.v6.set(v6, i * 16);
    }
    this.sets.push(set);
  }
}

function grow8(a: Uint8Array, n: number): Uint8Array<ArrayBuffer> {
  const b = new Uint8Array(n);
  b.set(a);
  return b;
}
function grow32(a: Uint32Array, n: number): Uint32Array<ArrayBuffer> {
  const b = new Uint32Array(n);
  b.set(a);
  return b;
}
function grow16(a: Uint16Array, n: number): Uint16Array<ArrayBuffer> {
  const b = new Uint16Array(n);
  b.set(a);
  return b;
}

/** See the module comment. */
export class RouteTable {
  /** Per slot: FREE, V4 or V6; prefix length; IPv4 address; attribute set id (0: not desired); peers holding it. */
  #fam = new Uint8Array(0);
  #len = new Uint8Array(0);
  #v4 = new Uint32Array(0);
  /** 16 octets per slot, allocated with the first IPv6 route. */
  #v6: Uint8Array | undefined;
  #attr = new Uint32Array(0);
  #holders = new Uint16Array(0);
  /** Slot + 1 per position, 0 empty; a power of two at least twice the allocated slots. */
  #index = new Int32Array(16);
  /** Slots below this were used once; slots freed since are in `#free`. */
  #top = 0;
  #free: number[] = [];
  #allocated = 0;
  #size = 0;
  readonly #familyCount = [0, 0, 0];
  /** Attribute sets by id (index 0 unused) and by signature. */
  readonly #sets: (AttrSet | undefined)[] = [undefined];
  readonly #bySig = new Map<string, AttrSet>();
  readonly #freeIds: number[] = [];
  /** Freed at the end of the current batch (slots are never reused within one). */
  #pendingFree: number[] = [];
  /** Per slot, the batch that last touched it, and the slots touched by the current one with their set before it. */
  #mark = new Uint32Array(0);
  #epoch = 0;
  readonly #touched: number[] = [];
  readonly #before: (AttrSet | undefined)[] = [];

  /** Number of desired routes. */
  get size(): number {
    return this.#size;
  }

  /** Slots allocated so far (live or not): per-slot arrays of readers need this length. */
  get capacity(): number {
    return this.#fam.length;
  }

  /** Desired routes of `family`. */
  familySize(family: Family): number {
    return this.#familyCount[family === 'ipv4-unicast' ? V4 : V6]!;
  }

  /** The attribute set of a desired slot, undefined when the slot is not desired (or free). */
  attrOf(slot: number): AttrSet | undefined {
    const id = this.#attr[slot];
    return id === undefined || id === 0 ? undefined : this.#sets[id];
  }

  /** Family of an allocated slot. */
  family(slot: number): Family {
    return this.#fam[slot] === V6 ? 'ipv6-unicast' : 'ipv4-unicast';
  }

  /** Octets the slot's prefix takes as an NLRI entry: 1 length octet + ceil(length/8) (RFC 4271 §4.3). */
  nlriSize(slot: number): number {
    return 1 + ((this.#len[slot]! + 7) >> 3);
  }

  /** Writes the slot's prefix as an NLRI entry at `off` in `buf`; returns the new offset. */
  writeNlri(buf: Buffer, off: number, slot: number): number {
    const length = this.#len[slot]!;
    const n = (length + 7) >> 3;
    buf[off++] = length;
    if (this.#fam[slot] === V4) {
      const v = this.#v4[slot]!;
      if (n > 0) buf[off++] = v >>> 24;
      if (n > 1) buf[off++] = (v >>> 16) & 0xff;
      if (n > 2) buf[off++] = (v >>> 8) & 0xff;
      if (n > 3) buf[off++] = v & 0xff;
    } else {
      const at = slot * 16;
      for (let k = 0; k < n; k++) buf[off++] = this.#v6![at + k]!;
    }
    return off;
  }

  /** The canonical prefix text of an allocated slot ("10.0.0.1/32", "2001:db8::/64"). */
  prefixText(slot: number): RouteKey {
    if (this.#fam[slot] === V6) return `${formatIPv6(this.#v6!, slot * 16)}/${this.#len[slot]}`;
    const v = this.#v4[slot]!;
    return `${v >>> 24}.${(v >>> 16) & 0xff}.${(v >>> 8) & 0xff}.${v & 0xff}/${this.#len[slot]}`;
  }

  /** Calls `fn` with every desired slot, in slot order. */
  forEachDesired(fn: (slot: number) => void): void {
    const attr = this.#attr;
    for (let s = 0; s < this.#top; s++) if (attr[s] !== 0) fn(s);
  }

  /** The desired routes, as Routes (prefix text and the attributes of their set), in slot order. */
  routes(): Route[] {
    const out: Route[] = [];
    this.forEachDesired((s) => out.push({ ...this.attrOf(s)!.route, prefix: this.prefixText(s) }));
    return out;
  }

  /** The desired slot of a canonical prefix text, or -1. */
  slotOf(prefix: RouteKey): number {
    const p = this.#parse(prefix, prefix.includes(':') ? 'ipv6-unicast' : 'ipv4-unicast');
    if (typeof p === 'string') return -1;
    const s = this.#find(p.fam, p.len, p.v4, p.v6);
    return s >= 0 && this.#attr[s] !== 0 ? s : -1;
  }

  /** A peer holds the slot's route: it stays allocated until released. */
  acquire(slot: number): void {
    this.#holders[slot]!++;
  }

  /** A peer no longer holds the slot's route; a slot neither held nor desired is freed. */
  release(slot: number): void {
    if (--this.#holders[slot]! === 0 && this.#attr[slot] === 0) {
      this.#freeSlot(slot);
    }
  }

  /**
   * Replaces the whole desired set by `routes` (a later duplicate of a prefix wins). Every route is validated first;
   * on any malformed route a RouteError listing the problems is thrown and nothing changes.
   */
  replace(routes: Iterable<Route>): DesiredDiff {
    const staged = this.#stage(routes);
    this.#begin();
    this.#applyStaged(staged);
    const attr = this.#attr;
    const mark = this.#mark;
    const epoch = this.#epoch;
    for (let s = 0; s < this.#top; s++) if (attr[s] !== 0 && mark[s] !== epoch) this.#remove(s);
    return this.#end(staged.created);
  }

  /**
   * Upserts `changed` (a later duplicate of a prefix wins) and removes the desired routes of the `removed` prefixes
   * (canonical text; others are ignored); a prefix in both ends up removed. Validation as {@link replace}. Costs
   * O(changed + removed), whatever the size of the table.
   */
  update(changed: Iterable<Route>, removed: Iterable<string> = []): DesiredDiff {
    const staged = this.#stage(changed);
    this.#begin();
    this.#applyStaged(staged);
    for (const prefix of removed) {
      const s = this.slotOf(prefix);
      if (s >= 0) this.#remove(s);
    }
    return this.#end(staged.created);
  }

  /** Parses and validates `routes`; throws RouteError (nothing changed) on problems. */
  #stage(routes: Iterable<Route>): Staged {
    const staged = new Staged();
    const problems: string[] = [];
    const created = staged.created;
    for (const route of routes) {
      const p = this.#parse(route.prefix, route.family);
      if (typeof p === 'string') {
        problems.push(p);
        continue;
      }
      const sig = attributeSignature(route);
      let set = this.#bySig.get(sig);
      if (set === undefined) {
        try {
          checkAttributes(route);
        } catch (err) {
          if (err instanceof RouteError) problems.push(err.message);
          else throw err;
          continue;
        }
        set = this.#newSet(sig, route);
        created.push(set);
      }
      staged.push(p.fam, p.len, p.v4, p.v6, set);
    }
    if (problems.length > 0) {
      for (const set of created) if (set.refs === 0) this.#dropSet(set);
      throw new RouteError(`${problems.length} invalid route(s): ${problems.slice(0, 5).join('; ')}${problems.length > 5 ? '; ...' : ''}`);
    }
    return staged;
  }

  /** The prefix in slot form, or the RouteError message (parseRoutePrefix's checks, route.ts). */
  #parse(prefix: string, family: Family): { fam: number; len: number; v4: number; v6: Uint8Array | undefined } | string {
    try {
      const p = parseRoutePrefix(prefix, family);
      return { fam: p.v6 === undefined ? V4 : V6, len: p.length, v4: p.v4, v6: p.v6 };
    } catch (err) {
      if (err instanceof RouteError) return err.message;
      throw err;
    }
  }

  #newSet(sig: string, route: Route): AttrSet {
    const id = this.#freeIds.pop() ?? this.#sets.length;
    const set: AttrSet = { id, sig, family: route.family, route, refs: 0 };
    this.#sets[id] = set;
    this.#bySig.set(sig, set);
    return set;
  }

  #dropSet(set: AttrSet): void {
    this.#bySig.delete(set.sig);
    this.#sets[set.id] = undefined;
    this.#freeIds.push(set.id);
  }

  #begin(): void {
    this.#epoch = (this.#epoch + 1) >>> 0 || 1;
    if (this.#epoch === 1) this.#mark.fill(0);
  }

  #touch(slot: number): void {
    if (this.#mark[slot] === this.#epoch) return;
    this.#mark[slot] = this.#epoch;
    this.#touched.push(slot);
    this.#before.push(this.attrOf(slot));
  }

  #applyStaged(st: Staged): void {
    for (let i = 0; i < st.count; i++) {
      const fam = st.fam[i]!;
      const v6 = fam === V6 ? st.v6!.subarray(i * 16, i * 16 + 16) : undefined;
      let s = this.#find(fam, st.len[i]!, st.v4[i]!, v6);
      if (s < 0) s = this.#allocate(fam, st.len[i]!, st.v4[i]!, v6);
      this.#touch(s);
      const set = st.sets[i]!;
      const old = this.#attr[s]!;
      if (old === set.id) continue;
      if (old !== 0) this.#sets[old]!.refs--;
      else {
        this.#size++;
        this.#familyCount[fam]!++;
      }
      set.refs++;
      this.#attr[s] = set.id;
    }
  }

  #remove(slot: number): void {
    const old = this.#attr[slot]!;
    if (old === 0) return;
    this.#touch(slot);
    this.#sets[old]!.refs--;
    this.#attr[slot] = 0;
    this.#size--;
    this.#familyCount[this.#fam[slot]!]!--;
  }

  /** Ends a batch: its diff; slots neither desired nor held are freed, sets without routes dropped. */
  #end(created: readonly AttrSet[]): DesiredDiff {
    const changed: number[] = [];
    const removed: number[] = [];
    const touched = this.#touched;
    const before = this.#before;
    for (let i = 0; i < touched.length; i++) {
      const s = touched[i]!;
      const now = this.attrOf(s);
      const was = before[i];
      if (now !== undefined) {
        if (now !== was) changed.push(s);
      } else {
        if (was !== undefined) removed.push(s);
        if (this.#holders[s] === 0) this.#pendingFree.push(s);
      }
      if (was !== undefined && was.refs === 0 && this.#sets[was.id] === was) this.#dropSet(was);
    }
    touched.length = 0;
    before.length = 0;
    // sets the batch created whose routes were all superseded within it
    for (const set of created) if (set.refs === 0 && this.#sets[set.id] === set) this.#dropSet(set);
    const pending = this.#pendingFree;
    this.#pendingFree = [];
    for (const s of pending) if (this.#fam[s] !== FREE && this.#attr[s] === 0 && this.#holders[s] === 0) this.#freeSlot(s);
    return { changed, removed };
  }

  /** The slot of a prefix (allocated, desired or held), or -1. */
  #find(fam: number, len: number, v4: number, v6: Uint8Array | undefined): number {
    const index = this.#index;
    const mask = index.length - 1;
    for (let i = this.#hash(fam, len, v4, v6) & mask; ; i = (i + 1) & mask) {
      const e = index[i]!;
      if (e === 0) return -1;
      const s = e - 1;
      if (this.#fam[s] === fam && this.#len[s] === len && (fam === V4 ? this.#v4[s] === v4 : this.#sameV6(s, v6!))) return s;
    }
  }

  #sameV6(slot: number, v6: Uint8Array): boolean {
    const a = this.#v6!;
    const at = slot * 16;
    for (let k = 0; k < 16; k++) if (a[at + k] !== v6[k]) return false;
    return true;
  }

  #hash(fam: number, len: number, v4: number, v6: Uint8Array | undefined): number {
    let h = v4;
    if (v6 !== undefined) {
      for (let k = 0; k < 16; k += 4) h = Math.imul(h ^ ((v6[k]! << 24) | (v6[k + 1]! << 16) | (v6[k + 2]! << 8) | v6[k + 3]!), 0x9e3779b1);
    }
    h = Math.imul(h ^ (len << 2) ^ fam, 0x85ebca6b);
    h ^= h >>> 13;
    h = Math.imul(h, 0xc2b2ae35);
    return (h ^ (h >>> 16)) >>> 0;
  }

  #slotHash(slot: number): number {
    const fam = this.#fam[slot]!;
    return this.#hash(fam, this.#len[slot]!, this.#v4[slot]!, fam === V6 ? this.#v6!.subarray(slot * 16, slot * 16 + 16) : undefined);
  }

  #allocate(fam: number, len: number, v4: number, v6: Uint8Array | undefined): number {
    let s = this.#free.pop();
    if (s === undefined) {
      s = this.#top++;
      if (s >= this.#fam.length) this.#growSlots(Math.max(64, this.#fam.length * 2));
    }
    this.#fam[s] = fam;
    this.#len[s] = len;
    this.#v4[s] = v4;
    if (v6 !== undefined) {
      if (this.#v6 === undefined) this.#v6 = new Uint8Array(this.#fam.length * 16);
      this.#v6.set(v6, s * 16);
    }
    this.#attr[s] = 0;
    this.#holders[s] = 0;
    this.#allocated++;
    if (this.#allocated * 2 > this.#index.length) this.#rehash(this.#index.length * 2);
    else this.#insert(s);
    return s;
  }

  #growSlots(n: number): void {
    this.#fam = grow8(this.#fam, n);
    this.#len = grow8(this.#len, n);
    this.#v4 = grow32(this.#v4, n);
    if (this.#v6 !== undefined) this.#v6 = grow8(this.#v6, n * 16);
    this.#attr = grow32(this.#attr, n);
    this.#holders = grow16(this.#holders, n);
    this.#mark = grow32(this.#mark, n);
  }

  #insert(slot: number): void {
    const index = this.#index;
    const mask = index.length - 1;
    let i = this.#slotHash(slot) & mask;
    while (index[i] !== 0) i = (i + 1) & mask;
    index[i] = slot + 1;
  }

  #rehash(n: number): void {
    this.#index = new Int32Array(n);
    for (let s = 0; s < this.#top; s++) if (this.#fam[s] !== FREE) this.#insert(s);
  }

  /** Removes the slot from the index (backward-shift deletion, no tombstones) and puts it on the free list. */
  #freeSlot(slot: number): void {
    const index = this.#index;
    const mask = index.length - 1;
    let i = this.#slotHash(slot) & mask;
    while (index[i] !== slot + 1) i = (i + 1) & mask;
    for (let j = (i + 1) & mask; index[j] !== 0; j = (j + 1) & mask) {
      const home = this.#slotHash(index[j]! - 1) & mask;
      // the entry at j may move to the hole at i when i lies cyclically in [home, j)
      if (j > i ? home <= i || home > j : home <= i && home > j) {
        index[i] = index[j]!;
        i = j;
      }
    }
    index[i] = 0;
    this.#fam[slot] = FREE;
    this.#allocated--;
    this.#free.push(slot);
  }
}
