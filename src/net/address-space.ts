/**
 * Sets of addresses as sorted, coalesced ranges of integers per IP family: what an operator allows (pools,
 * `allowedPrefixes`, docs/decisions.md "Allowed address space") and the tests "is this address inside" and "does
 * this whole prefix lie inside". The texts are those of the configuration: CIDRs (`10.0.0.0/24`), ranges of one
 * family (`10.0.0.10-10.0.0.20`) and single addresses.
 */
import type { IpFamily } from './address.ts';
import { addressBits, addressValue, formatAddressValue } from './address.ts';

/** An inclusive range of addresses of one family, as integers. */
export interface AddressRange {
  readonly family: IpFamily;
  readonly first: bigint;
  readonly last: bigint;
}

/**
 * One range from its text: a CIDR "A/len" (host bits must be zero), a range "A-B" of one family (A not after B), or
 * one address.
 * @throws Error naming the text and what is wrong with it
 */
export function parseAddressRange(text: string): AddressRange {
  const s = text.trim();
  const dash = s.indexOf('-');
  if (dash > 0) {
    const a = addressValue(s.slice(0, dash).trim());
    const b = addressValue(s.slice(dash + 1).trim());
    if (!a || !b) throw new Error(`"${text}" is not a range of two addresses (A-B)`);
    if (a.family !== b.family) throw new Error(`"${text}" mixes IPv4 and IPv6`);
    if (a.value > b.value) throw new Error(`"${text}": the first address is after the last`);
    return { family: a.family, first: a.value, last: b.value };
  }
  const slash = s.indexOf('/');
  if (slash > 0) {
    const base = addressValue(s.slice(0, slash));
    const lenText = s.slice(slash + 1);
    const len = /^\d{1,3}$/.test(lenText) ? Number(lenText) : NaN;
    if (!base) throw new Error(`"${text}" is not a CIDR`);
    const bits = addressBits(base.family);
    if (!(len >= 0 && len <= bits)) throw new Error(`"${text}": prefix length must be 0..${bits}`);
    const size = 1n << BigInt(bits - len);
    const first = base.value - (base.value % size);
    if (first !== base.value) throw new Error(`"${text}" has host bits set (did you mean ${formatAddressValue(base.family, first)}/${len}?)`);
    return { family: base.family, first, last: first + size - 1n };
  }
  const single = addressValue(s);
  if (!single) throw new Error(`"${text}" is neither a CIDR, a range A-B nor an address`);
  return { family: single.family, first: single.value, last: single.value };
}

/** The addresses of a CIDR text whose host bits may be set ("10.0.0.7/24" covers 10.0.0.0-10.0.0.255), or undefined. */
function prefixRange(prefix: string): AddressRange | undefined {
  const slash = prefix.lastIndexOf('/');
  const a = addressValue(slash < 0 ? prefix : prefix.slice(0, slash));
  if (!a) return undefined;
  const bits = addressBits(a.family);
  const lenText = slash < 0 ? String(bits) : prefix.slice(slash + 1);
  if (!/^\d{1,3}$/.test(lenText) || Number(lenText) > bits) return undefined;
  const size = 1n << BigInt(bits - Number(lenText));
  const first = a.value - (a.value % size);
  return { family: a.family, first, last: first + size - 1n };
}

/** An immutable set of addresses of both families. */
export class AddressSpace {
  /** Sorted by `first`, disjoint and not adjacent, per family. */
  readonly #ranges: Readonly<Record<IpFamily, readonly AddressRange[]>>;

  /** The empty space. */
  static readonly EMPTY = new AddressSpace([]);

  /** The union of `ranges` (any order, overlapping or not). */
  constructor(ranges: Iterable<AddressRange>) {
    const by: Record<IpFamily, AddressRange[]> = { IPv4: [], IPv6: [] };
    for (const r of ranges) by[r.family].push(r);
    this.#ranges = { IPv4: coalesce(by.IPv4), IPv6: coalesce(by.IPv6) };
  }

  /**
   * The union of the ranges written in `texts` (CIDRs, "A-B" ranges, addresses).
   * @throws Error naming the first text that is none of these
   */
  static of(texts: Iterable<string>): AddressSpace {
    const out: AddressRange[] = [];
    for (const t of texts) out.push(parseAddressRange(t));
    return new AddressSpace(out);
  }

  /** True when the space holds no address. */
  get empty(): boolean {
    return this.#ranges.IPv4.length === 0 && this.#ranges.IPv6.length === 0;
  }

  /** Its ranges, IPv4 first, each sorted. */
  ranges(): AddressRange[] {
    return [...this.#ranges.IPv4, ...this.#ranges.IPv6];
  }

  /** The union of this space and `other`. */
  union(other: AddressSpace): AddressSpace {
    if (other.empty) return this;
    if (this.empty) return other;
    return new AddressSpace([...this.ranges(), ...other.ranges()]);
  }

  /** The addresses in both this space and `other`. */
  intersect(other: AddressSpace): AddressSpace {
    const out: AddressRange[] = [];
    for (const family of ['IPv4', 'IPv6'] as const) {
      const a = this.#ranges[family];
      const b = other.#ranges[family];
      let i = 0;
      let j = 0;
      while (i < a.length && j < b.length) {
        const x = a[i] as AddressRange;
        const y = b[j] as AddressRange;
        const first = x.first > y.first ? x.first : y.first;
        const last = x.last < y.last ? x.last : y.last;
        if (first <= last) out.push({ family, first, last });
        if (x.last < y.last) i++;
        else j++;
      }
    }
    return new AddressSpace(out);
  }

  /** True when the address literal `address` lies in the space (false for anything that is not an address). */
  contains(address: string): boolean {
    const a = addressValue(address);
    return a !== undefined && this.#covers({ family: a.family, first: a.value, last: a.value });
  }

  /**
   * True when every address of `prefix` ("10.0.0.0/24"; host bits may be set; an address alone is its host route)
   * lies in the space. False for anything that is not a prefix.
   */
  coversPrefix(prefix: string): boolean {
    const r = prefixRange(prefix);
    return r !== undefined && this.#covers(r);
  }

  /** True when one range of the space holds all of `r` (ranges are coalesced, so one must, if any part does). */
  #covers(r: AddressRange): boolean {
    const list = this.#ranges[r.family];
    // Binary search for the last range starting at or before r.first.
    let lo = 0;
    let hi = list.length - 1;
    let at = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if ((list[mid] as AddressRange).first <= r.first) {
        at = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return at >= 0 && (list[at] as AddressRange).last >= r.last;
  }

  /** The space written as CIDRs and ranges ("10.0.0.0/24, 10.0.1.5-10.0.1.9"), for messages; "nothing" when empty. */
  toString(): string {
    if (this.empty) return 'nothing';
    return this.ranges().map(rangeText).join(', ');
  }
}

/** A range as the shortest text: one address, a CIDR when it is exactly one, else "A-B". */
export function rangeText(r: AddressRange): string {
  const from = formatAddressValue(r.family, r.first);
  if (r.first === r.last) return from;
  const size = r.last - r.first + 1n;
  if ((size & (size - 1n)) === 0n && r.first % size === 0n) {
    const bits = addressBits(r.family);
    let len = bits;
    for (let s = size; s > 1n; s >>= 1n) len--;
    return `${from}/${len}`;
  }
  return `${from}-${formatAddressValue(r.family, r.last)}`;
}

/** Sorted, merged (overlapping or adjacent ranges joined). */
function coalesce(list: AddressRange[]): AddressRange[] {
  if (list.length === 0) return [];
  const sorted = [...list].sort((a, b) => (a.first < b.first ? -1 : a.first > b.first ? 1 : 0));
  const out: AddressRange[] = [];
  let cur = sorted[0] as AddressRange;
  for (let i = 1; i < sorted.length; i++) {
    const r = sorted[i] as AddressRange;
    if (r.first <= cur.last + 1n) {
      if (r.last > cur.last) cur = { family: cur.family, first: cur.first, last: r.last };
    } else {
      out.push(cur);
      cur = r;
    }
  }
  out.push(cur);
  return out;
}
