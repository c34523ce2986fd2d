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
 * Changes come in batches (`replace`, `update`, or a `RouteEdit` filled and applied): every route of a batch is
 * validated first, and a batch with a malformed route throws RouteError listing the problems and changes nothing (the
 * Speaker's contract). A batch returns its diff: the slots whose attributes changed or that became desired, and the
 * slots that left the set. A RouteEdit takes prefixes as ranges of a text (`addText`, `removeText`), so a batch of
 * 100,000 routes off the speaker thread's channel (bgp/speaker-thread/route-batch.ts) makes no string and no object per
 * route without attributes: canonical IPv4 prefixes are parsed in place.
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

/** Ids of the plain attribute sets (no attribute but the prefix) of IPv4 and of IPv6 routes: made first, never dropped. */
const PLAIN_V4_ID = 1;
const PLAIN_V6_ID = 2;

/** A prefix in slot form: family (V4, V6), length, IPv4 address, IPv6 octets. */
interface SlotPrefix {
  fam: number;
  len: number;
  v4: number;
  v6: Uint8Array | undefined;
}

/**
 * Parses the canonical prefix `text[start, end)` of `family` (undefined: IPv6 when it has a colon) into `out`;
 * canonical IPv4 without making a string. Returns undefined, or the RouteError message of parseRoutePrefix.
 */
function parsePrefixInto(text: string, start: number, end: number, family: Family | undefined, out: SlotPrefix): string | undefined {
  if (family !== 'ipv6-unicast') {
    const v4 = parseCanonicalIPv4(text, start, end, out);
    if (v4 >= 0) {
      out.fam = V4;
      out.v4 = v4;
      out.v6 = undefined;
      return undefined;
    }
  }
  const prefix = start === 0 && end === text.length ? text : text.slice(start, end);
  try {
    const p = parseRoutePrefix(prefix, family ?? (prefix.includes(':') ? 'ipv6-unicast' : 'ipv4-unicast'));
    out.fam = p.v6 === undefined ? V4 : V6;
    out.len = p.length;
    out.v4 = p.v4;
    out.v6 = p.v6;
    return undefined;
  } catch (err) {
    if (err instanceof RouteError) return err.message;
    throw err;
  }
}

/**
 * Parses a canonical IPv4 prefix in `text[start, end)` ("10.0.0.1/32": no leading zeros, host bits zero). Returns
 * the address (uint32) and sets `out.len`, or -1 when the text is anything else (the caller then parses it the long
 * way, for the exact error). Makes no string and no object.
 */
function parseCanonicalIPv4(text: string, start: number, end: number, out: { len: number }): number {
  let v = 0;
  let octet = 0;
  let digits = 0;
  let parts = 0;
  let i = start;
  for (; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c >= 48 && c <= 57) {
      if (digits === 1 && octet === 0) return -1; // a leading zero
      octet = octet * 10 + (c - 48);
      if (++digits > 3 || octet > 255) return -1;
    } else if ((c === 46 || c === 47) && digits > 0) {
      v = v * 256 + octet;
      parts++;
      octet = 0;
      digits = 0;
      if (c === 47) break;
      if (parts > 3) return -1;
    } else return -1;
  }
  if (parts !== 4 || i >= end) return -1;
  let len = 0;
  const lenDigits = end - i - 1;
  if (lenDigits < 1 || lenDigits > 2 || (lenDigits === 2 && text.charCodeAt(i + 1) === 48)) return -1;
  for (let j = i + 1; j < end; j++) {
    const c = text.charCodeAt(j);
    if (c < 48 || c > 57) return -1;
    len = len * 10 + (c - 48);
  }
  if (len > 32) return -1;
  if (len < 32 && (len === 0 ? v : v % 2 ** (32 - len)) !== 0) return -1; // host bits
  out.len = len;
  return v;
}

/**
 * Changes to one RouteTable, staged: routes to add or replace, prefixes to remove, parsed and validated as they are
 * given. Nothing changes until `RouteTable.apply` (a RouteError there names every problem; the table stays as it was).
 */
export class RouteEdit {
  readonly #table: RouteTable;
  count = 0;
  fam = new Uint8Array(64);
  len = new Uint8Array(64);
  v4 = new Uint32Array(64);
  v6: Uint8Array | undefined;
  sets: AttrSet[] = [];
  /** Prefixes to remove, in the same columns' form. */
  removals = 0;
  rFam = new Uint8Array(16);
  rLen = new Uint8Array(16);
  rV4 = new Uint32Array(16);
  rV6: Uint8Array | undefined;
  /** Sets interned by this edit (dropped again if no route ends up using them). */
  readonly created: AttrSet[] = [];
  readonly problems: string[] = [];
  readonly #prefix: SlotPrefix = { fam: V4, len: 0, v4: 0, v6: undefined };

  /** @internal made by RouteTable.edit() */
  constructor(table: RouteTable) {
    this.#table = table;
  }

  /** Adds or replaces `route` (a later one of the same prefix wins). */
  add(route: Route): void {
    this.#add(route.prefix, 0, route.prefix.length, route.family, route);
  }

  /**
   * Adds or replaces the route whose prefix is `text[start, end)`, of `family`, with the attributes of `attrs` (its
   * prefix is not read; undefined: no attribute but the prefix).
   */
  addText(text: string, start: number, end: number, family: Family, attrs: Route | undefined): void {
    this.#add(text, start, end, family, attrs);
  }

  /** Removes the route of canonical prefix `prefix` (nothing when there is none; an invalid text is ignored). */
  remove(prefix: string): void {
    this.removeText(prefix, 0, prefix.length);
  }

  /** {@link remove} of the prefix `text[start, end)`. */
  removeText(text: string, start: number, end: number): void {
    const p = this.#prefix;
    if (parsePrefixInto(text, start, end, undefined, p) !== undefined) return;
    const i = this.removals++;
    if (i === this.rFam.length) {
      this.rFam = grow8(this.rFam, i * 2);
      this.rLen = grow8(this.rLen, i * 2);
      this.rV4 = grow32(this.rV4, i * 2);
      if (this.rV6 !== undefined) this.rV6 = grow8(this.rV6, i * 32);
    }
    this.rFam[i] = p.fam;
    this.rLen[i] = p.len;
    this.rV4[i] = p.v4;
    if (p.v6 !== undefined) {
      this.rV6 ??= new Uint8Array(this.rFam.length * 16);
      this.rV6.set(p.v6, i * 16);
    }
  }

  #add(text: string, start: number, end: number, family: Family, attrs: Route | undefined): void {
    const p = this.#prefix;
    const problem = parsePrefixInto(text, start, end, family, p);
    if (problem !== undefined) {
      this.problems.push(problem);
      return;
    }
    const { fam, len, v4, v6 } = p;
    const set = this.#table.intern(attrs, family, this);
    if (set === undefined) return;
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
  /** slotOf's parsed prefix. */
  readonly #lookup: SlotPrefix = { fam: V4, len: 0, v4: 0, v6: undefined };

  constructor() {
    // the plain sets, ids PLAIN_V4_ID and PLAIN_V6_ID: routes with nothing but a prefix, the common case, need no signature
    for (const family of ['ipv4-unicast', 'ipv6-unicast'] as const) this.#newSet(attributeSignature({ prefix: '', family }), { prefix: '', family });
  }

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
    const p = this.#lookup;
    if (parsePrefixInto(prefix, 0, prefix.length, undefined, p) !== undefined) return -1;
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
    return this.change((e) => {
      for (const r of routes) e.add(r);
    }, { replace: true });
  }

  /**
   * Upserts `changed` (a later duplicate of a prefix wins) and removes the desired routes of the `removed` prefixes
   * (canonical text; others are ignored); a prefix in both ends up removed. Validation as {@link replace}. Costs
   * O(changed + removed), whatever the size of the table.
   */
  update(changed: Iterable<Route>, removed: Iterable<string> = []): DesiredDiff {
    return this.change((e) => {
      for (const r of changed) e.add(r);
      for (const p of removed) e.remove(p);
    }, { replace: false });
  }

  /**
   * The changes `stage` puts in a new edit, applied ({@link apply}). When `stage` throws (a route batch that does not
   * add up), the edit is dropped with what it interned and the error goes on: the table is as before.
   */
  change(stage: (edit: RouteEdit) => void, opts: { readonly replace: boolean }): DesiredDiff {
    const edit = new RouteEdit(this);
    try {
      stage(edit);
    } catch (err) {
      this.#discard(edit);
      throw err;
    }
    return this.apply(edit, opts);
  }

  /** A new, empty set of changes to this table (see RouteEdit). */
  edit(): RouteEdit {
    return new RouteEdit(this);
  }

  /**
   * Applies `edit`: its routes added or replaced, then its removals; with `replace`, every desired route the edit does
   * not add is removed too. Throws RouteError listing the problems of the edit (nothing changes then). Costs
   * O(edit), plus one pass over the slots with `replace`.
   */
  apply(edit: RouteEdit, opts: { readonly replace: boolean }): DesiredDiff {
    if (edit.problems.length > 0) {
      this.#discard(edit);
      const problems = edit.problems;
      throw new RouteError(`${problems.length} invalid route(s): ${problems.slice(0, 5).join('; ')}${problems.length > 5 ? '; ...' : ''}`);
    }
    this.#begin();
    this.#applyAdds(edit);
    if (opts.replace) {
      const attr = this.#attr;
      const mark = this.#mark;
      const epoch = this.#epoch;
      for (let s = 0; s < this.#top; s++) if (attr[s] !== 0 && mark[s] !== epoch) this.#remove(s);
    }
    for (let i = 0; i < edit.removals; i++) {
      const fam = edit.rFam[i]!;
      const s = this.#find(fam, edit.rLen[i]!, edit.rV4[i]!, fam === V6 ? edit.rV6!.subarray(i * 16, i * 16 + 16) : undefined);
      if (s >= 0) this.#remove(s);
    }
    return this.#end(edit.created);
  }

  /** Drops what staging `edit` interned (attribute sets no route uses): an edit that is not applied. */
  #discard(edit: RouteEdit): void {
    for (const set of edit.created) if (set.refs === 0 && this.#sets[set.id] === set) this.#dropSet(set);
  }

  /** Attribute sets interned now (the two plain ones included). */
  get attributeSets(): number {
    return this.#bySig.size;
  }

  /**
   * The attribute set of routes with the attributes of `attrs` (undefined: none but the prefix) and `family`,
   * interned; a new one is validated and noted in `edit.created`. Undefined when the attributes are invalid (the
   * problem is noted in `edit.problems`).
   */
  intern(attrs: Route | undefined, family: Family, edit: RouteEdit): AttrSet | undefined {
    if (attrs === undefined) return this.#sets[family === 'ipv4-unicast' ? PLAIN_V4_ID : PLAIN_V6_ID]!;
    const sig = attributeSignature(attrs);
    let set = this.#bySig.get(sig);
    if (set !== undefined) return set;
    try {
      checkAttributes(attrs);
    } catch (err) {
      if (err instanceof RouteError) edit.problems.push(err.message);
      else throw err;
      return undefined;
    }
    set = this.#newSet(sig, attrs);
    edit.created.push(set);
    return set;
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

  #applyAdds(e: RouteEdit): void {
    const sets = e.sets;
    const familyCount = this.#familyCount;
    for (let i = 0; i < e.count; i++) {
      const fam = e.fam[i]!;
      const len = e.len[i]!;
      const v4 = e.v4[i]!;
      const v6 = fam === V6 ? e.v6!.subarray(i * 16, i * 16 + 16) : undefined;
      let s = this.#find(fam, len, v4, v6);
      if (s < 0) s = this.#allocate(fam, len, v4, v6);
      this.#touch(s);
      const set = sets[i]!;
      const attr = this.#attr;
      const old = attr[s]!;
      if (old === set.id) continue;
      if (old !== 0) this.#sets[old]!.refs--;
      else {
        this.#size++;
        familyCount[fam]!++;
      }
      set.refs++;
      attr[s] = set.id;
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
      if (was !== undefined && was.refs === 0 && was.id > PLAIN_V6_ID && this.#sets[was.id] === was) this.#dropSet(was);
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
