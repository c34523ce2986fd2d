/**
 * The compact form in which routes cross between the main thread and the speaker thread (bgp/speaker-thread/).
 *
 * A structured clone of 100,000 Route objects costs the sending thread 60–120 ms (a walk of every object graph),
 * and grouping routes by attribute signature costs as much (a string built and hashed per route;
 * bench/speaker-thread.ts). A RouteBatch is columnar instead: per route one Uint16 of flags (IPv6, and which optional
 * fields it has), its numeric fields appended to one Float64Array (exact for every JS number, so the speaker
 * thread's validation sees the values as given), its text fields (next hop, peers, extended community octets) to one
 * string, and its prefix to another. Both arrays are transferred, not copied; the strings are copied as flat blocks.
 * Encoding 100,000 routes costs a few typed-array writes and one string append per route.
 *
 * Route order is kept, so "a later duplicate of the same prefix wins" holds across the channel as it does for the
 * Speaker itself. The encoder checks only what the format needs (a known family, numbers where numbers go); the
 * Speaker in the speaker thread validates the rest and reports a RouteError from there.
 */
import type { Family } from '../constants.ts';
import type { ExtendedCommunity, Ipv6ExtendedCommunity, LargeCommunity } from '../codec/types.ts';
import type { ExportedRoute } from '../rib/export.ts';
import { RouteError } from '../rib/route.ts';
import type { RouteEdit } from '../rib/route-table.ts';
import type { Route } from '../rib/route.ts';

/** Routes in channel form. See the module comment. */
export interface RouteBatch {
  readonly count: number;
  /** Per route: the FLAG_* bits. Transferred. */
  readonly flags: Uint16Array<ArrayBuffer>;
  /**
   * The numeric fields, route after route, each route's in this order when present: MED, LOCAL_PREF, ORIGIN, AS path
   * prepend; communities (count, values); large communities (count, three values each); extended and
   * IPv6 extended communities (count, then type and subtype of each). Only the first `numberCount` are used.
   * Transferred.
   */
  readonly numbers: Float64Array<ArrayBuffer>;
  readonly numberCount: number;
  /** The text fields, route after route, each followed by "\n": next hop and peers as JSON; each extended community's octets as hex. */
  readonly texts: string;
  /** Every route's prefix, in order, each followed by "\n". */
  readonly prefixes: string;
}

const FLAG_IPV6 = 1;
const FLAG_MED = 2;
const FLAG_LOCAL_PREF = 4;
const FLAG_ORIGIN = 8;
const FLAG_NEXT_HOP = 16;
const FLAG_COMMUNITIES = 32;
const FLAG_LARGE = 64;
const FLAG_EXTENDED = 128;
const FLAG_IPV6_EXTENDED = 256;
const FLAG_PEERS = 512;
const FLAG_AS_PATH_PREPEND = 1024;

/** A growable Float64Array. */
class Numbers {
  array: Float64Array<ArrayBuffer>;
  length = 0;
  constructor(capacity: number) {
    this.array = new Float64Array(Math.max(16, capacity));
  }
  push(v: number): void {
    if (this.length === this.array.length) {
      const next = new Float64Array(this.array.length * 2);
      next.set(this.array);
      this.array = next;
    }
    this.array[this.length++] = v;
  }
}

/**
 * One batch of the `count` routes of `routes`, in iteration order, and the buffers to transfer with it. Throws
 * RouteError for a route the format cannot carry (unknown family, a non-number where a number goes), and RangeError
 * when `count` is wrong.
 */
export function encodeRouteBatch(routes: Iterable<Route>, count: number): { readonly batch: RouteBatch; readonly transfer: ArrayBuffer[] } {
  const flags = new Uint16Array(count);
  const numbers = new Numbers(count);
  let texts = '';
  let prefixes = '';
  let i = 0;
  for (const r of routes) {
    if (i === count) throw new RangeError(`more routes than the ${count} announced`);
    let f = r.family === 'ipv6-unicast' ? FLAG_IPV6 : 0;
    if (f === 0 && r.family !== 'ipv4-unicast') throw new RouteError(`${r.prefix}: unsupported family ${JSON.stringify(r.family)}`);
    if (r.med !== undefined) {
      f |= FLAG_MED;
      numbers.push(num(r.med, r, 'MED'));
    }
    if (r.localPref !== undefined) {
      f |= FLAG_LOCAL_PREF;
      numbers.push(num(r.localPref, r, 'LOCAL_PREF'));
    }
    if (r.origin !== undefined) {
      // the message of the Speaker's own check (bgp/rib/adj-rib-out.ts): the channel carries only 0, 1, 2
      if (r.origin !== 0 && r.origin !== 1 && r.origin !== 2) throw new RouteError(`${r.prefix}: ORIGIN must be 0, 1 or 2, got ${String(r.origin)}`);
      f |= FLAG_ORIGIN;
      numbers.push(r.origin);
    }
    if (r.asPathPrepend !== undefined) {
      f |= FLAG_AS_PATH_PREPEND;
      numbers.push(num(r.asPathPrepend, r, 'AS path prepend'));
    }
    if (r.nextHop !== undefined) {
      f |= FLAG_NEXT_HOP;
      texts += JSON.stringify(r.nextHop) + '\n';
    }
    if (r.communities !== undefined) {
      f |= FLAG_COMMUNITIES;
      numbers.push(r.communities.length);
      for (const c of r.communities) numbers.push(num(c, r, 'a community'));
    }
    if (r.largeCommunities !== undefined) {
      f |= FLAG_LARGE;
      numbers.push(r.largeCommunities.length);
      for (const c of r.largeCommunities) {
        if (c.length !== 3) throw new RouteError(`${r.prefix}: large communities must be three 32-bit unsigned integers`);
        for (const v of c) numbers.push(num(v, r, 'a large community'));
      }
    }
    if (r.extendedCommunities !== undefined) {
      f |= FLAG_EXTENDED;
      texts += pushCommunities(numbers, r.extendedCommunities);
    }
    if (r.ipv6ExtendedCommunities !== undefined) {
      f |= FLAG_IPV6_EXTENDED;
      texts += pushCommunities(numbers, r.ipv6ExtendedCommunities);
    }
    if (r.peers !== undefined) {
      f |= FLAG_PEERS;
      texts += JSON.stringify(r.peers) + '\n';
    }
    flags[i++] = f;
    prefixes += r.prefix + '\n';
  }
  if (i !== count) throw new RangeError(`${i} routes, ${count} announced`);
  const batch: RouteBatch = { count, flags, numbers: numbers.array, numberCount: numbers.length, texts, prefixes };
  return { batch, transfer: [flags.buffer, numbers.array.buffer] };
}

/** `v`, which must be a number (the channel carries numbers there). */
function num(v: unknown, r: Route, what: string): number {
  if (typeof v !== 'number') throw new RouteError(`${r.prefix}: ${what} must be a number, got ${JSON.stringify(v)}`);
  return v;
}

function pushCommunities(numbers: Numbers, list: readonly (ExtendedCommunity | Ipv6ExtendedCommunity)[]): string {
  let hex = '';
  numbers.push(list.length);
  for (const c of list) {
    numbers.push(c.type);
    numbers.push(c.subtype);
    hex += c.value.toString('hex') + '\n';
  }
  return hex;
}

/**
 * Calls `each` with every route of a batch, in order: where its prefix is in `batch.prefixes` ([start, end)), its
 * family, and its other fields as a Route whose `prefix` is `prefixOf()` of those bounds (undefined for a route with
 * nothing but a prefix: no object is made for it). Throws RangeError for a batch that does not add up.
 */
function forEachRoute(batch: RouteBatch, each: (start: number, end: number, family: Family, attrs: Route | undefined) => void): void {
  const text = batch.prefixes;
  const texts = decodePrefixes(batch.texts);
  if (batch.flags.length !== batch.count) throw new RangeError(`route batch of ${batch.count} routes carries ${batch.flags.length} flags`);
  const nums = batch.numbers;
  let n = 0;
  let t = 0;
  const num = (): number => {
    if (n >= batch.numberCount) throw new RangeError('route batch: numbers run short');
    return nums[n++]!;
  };
  const nextText = (): string => {
    const s = texts[t++];
    if (s === undefined) throw new RangeError('route batch: texts run short');
    return s;
  };
  const communities = (): (ExtendedCommunity & Ipv6ExtendedCommunity)[] => {
    const out = new Array<ExtendedCommunity & Ipv6ExtendedCommunity>(num());
    for (let k = 0; k < out.length; k++) out[k] = { type: num(), subtype: num(), value: Buffer.from(nextText(), 'hex') };
    return out;
  };
  let start = 0;
  for (let i = 0; i < batch.count; i++) {
    const end = text.indexOf('\n', start);
    if (end < 0) throw new RangeError(`route batch of ${batch.count} routes carries ${i} prefixes`);
    const f = batch.flags[i]!;
    const family: Family = f & FLAG_IPV6 ? 'ipv6-unicast' : 'ipv4-unicast';
    if (f === 0 || f === FLAG_IPV6) {
      each(start, end, family, undefined);
      start = end + 1;
      continue;
    }
    const r: { -readonly [K in keyof Route]: Route[K] } = { prefix: text.slice(start, end), family };
    if (f & FLAG_MED) r.med = num();
    if (f & FLAG_LOCAL_PREF) r.localPref = num();
    if (f & FLAG_ORIGIN) {
      const o = num();
      if (o !== 0 && o !== 1 && o !== 2) throw new RangeError(`route batch: ORIGIN ${o}`);
      r.origin = o;
    }
    if (f & FLAG_AS_PATH_PREPEND) r.asPathPrepend = num();
    if (f & FLAG_NEXT_HOP) r.nextHop = jsonText(nextText());
    if (f & FLAG_COMMUNITIES) {
      const c = new Array<number>(num());
      for (let k = 0; k < c.length; k++) c[k] = num();
      r.communities = c;
    }
    if (f & FLAG_LARGE) {
      const list = new Array<LargeCommunity>(num());
      for (let k = 0; k < list.length; k++) list[k] = [num(), num(), num()];
      r.largeCommunities = list;
    }
    if (f & FLAG_EXTENDED) r.extendedCommunities = communities();
    if (f & FLAG_IPV6_EXTENDED) r.ipv6ExtendedCommunities = communities();
    if (f & FLAG_PEERS) r.peers = jsonTexts(nextText());
    each(start, end, family, r);
    start = end + 1;
  }
  if (start !== text.length) throw new RangeError(`route batch of ${batch.count} routes carries more prefixes`);
}

/** The routes of a batch, in order. Throws RangeError for a batch that does not add up. */
export function decodeRouteBatch(batch: RouteBatch): Route[] {
  const out: Route[] = [];
  forEachRoute(batch, (start, end, family, attrs) => out.push(attrs ?? { prefix: batch.prefixes.slice(start, end), family }));
  return out;
}

/**
 * Stages the routes of a batch in a route table edit (bgp/rib/route-table.ts), in order, parsed where they lie in the
 * batch's text: a route with nothing but a prefix costs no object and no string. Throws RangeError for a batch that
 * does not add up (the edit is then not to be applied).
 */
export function stageRouteBatch(batch: RouteBatch, edit: RouteEdit): void {
  forEachRoute(batch, (start, end, family, attrs) => edit.addText(batch.prefixes, start, end, family, attrs));
}

/** Stages the removal of every prefix of an `encodePrefixes` text in a route table edit, parsed where it lies. */
export function stageRemovals(text: string, edit: RouteEdit): void {
  let start = 0;
  for (let end = text.indexOf('\n'); end >= 0; end = text.indexOf('\n', start)) {
    edit.removeText(text, start, end);
    start = end + 1;
  }
}

/** A JSON string of the texts column. */
function jsonText(s: string): string {
  const v: unknown = JSON.parse(s);
  if (typeof v !== 'string') throw new RangeError('route batch: a text field is not a string');
  return v;
}

/** A JSON array of strings of the texts column. */
function jsonTexts(s: string): string[] {
  const v: unknown = JSON.parse(s);
  if (!Array.isArray(v)) throw new RangeError('route batch: a list field is not a list');
  return v.map((x: unknown) => (typeof x === 'string' ? x : String(x)));
}

/** Prefixes in channel form: each followed by "\n". */
export function encodePrefixes(prefixes: Iterable<string>): string {
  let out = '';
  for (const p of prefixes) out += p + '\n';
  return out;
}

/** The prefixes of `encodePrefixes` text. */
export function decodePrefixes(text: string): string[] {
  if (text === '') return [];
  const out = text.split('\n');
  out.pop();
  return out;
}

/** An (IPv6 address specific) extended community of an ExportedRoute on the channel: type, subtype, octets as hex. */
export interface WireCommunity {
  readonly type: number;
  readonly subtype: number;
  readonly hex: string;
}

/** An ExportedRoute (what a peer holds from us) in channel form. */
export type WireExportedRoute = Omit<ExportedRoute, 'extendedCommunities' | 'ipv6ExtendedCommunities'> & {
  readonly extendedCommunities?: readonly WireCommunity[];
  readonly ipv6ExtendedCommunities?: readonly WireCommunity[];
};

/** An ExportedRoute in channel form. */
export function wireExportedRoute(r: ExportedRoute): WireExportedRoute {
  const { extendedCommunities, ipv6ExtendedCommunities, ...rest } = r;
  return {
    ...rest,
    ...(extendedCommunities !== undefined ? { extendedCommunities: extendedCommunities.map(wireCommunity) } : {}),
    ...(ipv6ExtendedCommunities !== undefined ? { ipv6ExtendedCommunities: ipv6ExtendedCommunities.map(wireCommunity) } : {}),
  };
}

/** The ExportedRoute of its channel form. */
export function exportedRoute(w: WireExportedRoute): ExportedRoute {
  const { extendedCommunities, ipv6ExtendedCommunities, ...rest } = w;
  return {
    ...rest,
    ...(extendedCommunities !== undefined ? { extendedCommunities: extendedCommunities.map(community) } : {}),
    ...(ipv6ExtendedCommunities !== undefined ? { ipv6ExtendedCommunities: ipv6ExtendedCommunities.map(community) } : {}),
  };
}

function wireCommunity(c: ExtendedCommunity | Ipv6ExtendedCommunity): WireCommunity {
  return { type: c.type, subtype: c.subtype, hex: c.value.toString('hex') };
}

function community(w: WireCommunity): ExtendedCommunity & Ipv6ExtendedCommunity {
  return { type: w.type, subtype: w.subtype, value: Buffer.from(w.hex, 'hex') };
}
