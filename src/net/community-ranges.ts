/**
 * Which BGP communities an operator allows: the entries of an advertisement's `serviceAttributes.communities` and
 * `serviceAttributes.largeCommunities` (docs/decisions.md "Path attributes from Services"). An entry is one community
 * or a range of the last field: `"65000:100"`, `"65000:100-199"` (RFC 1997), `"65000:1:2"`, `"65000:1:0-99"`
 * (RFC 8092). The well-known range 65535:0-65535:65535 (RFC 1997 §"Well-known Communities", the IANA registry) is
 * never allowed from a Service: {@link isWellKnownCommunity}.
 */
import type { LargeCommunity } from '../../bgp/main-thread.ts';
import { parseCommunity, parseLargeCommunity } from '../../bgp/main-thread.ts';

/** First value of the reserved well-known range, 65535:0 (RFC 1997). */
const WELL_KNOWN_FIRST = 0xffff0000;

/** True for a community in 65535:0-65535:65535 (NO_EXPORT, NO_ADVERTISE, BLACKHOLE, GRACEFUL_SHUTDOWN, ...). */
export function isWellKnownCommunity(value: number): boolean {
  return value >>> 0 >= WELL_KNOWN_FIRST;
}

/** Standard communities as ranges of their 32-bit values, inclusive. */
export interface CommunityRange {
  readonly first: number;
  readonly last: number;
}

/** Large communities with equal first two fields, and a range of the third, inclusive. */
export interface LargeCommunityRange {
  readonly global: number;
  readonly local1: number;
  readonly first: number;
  readonly last: number;
}

/**
 * An allowed-communities entry: "ASN:VALUE" or "ASN:LO-HI" (0..65535 each), or a well-known name.
 * @throws Error naming the entry and the form to use
 */
export function parseCommunityRange(text: string): CommunityRange {
  const m = /^\s*(\d{1,5}):(\d{1,5})-(\d{1,5})\s*$/.exec(text);
  if (m) {
    const asn = Number(m[1]);
    const lo = Number(m[2]);
    const hi = Number(m[3]);
    if (asn > 0xffff || lo > 0xffff || hi > 0xffff) throw new Error(`${JSON.stringify(text)}: each part must be 0..65535`);
    if (lo > hi) throw new Error(`${JSON.stringify(text)}: the range is reversed (did you mean ${asn}:${hi}-${lo}?)`);
    return { first: ((asn << 16) | lo) >>> 0, last: ((asn << 16) | hi) >>> 0 };
  }
  let v: number;
  try {
    v = parseCommunity(text);
  } catch {
    throw new Error(`${JSON.stringify(text)} is not a community "ASN:VALUE" or a range "ASN:LO-HI" (0..65535 each)`);
  }
  return { first: v, last: v };
}

/**
 * An allowed-large-communities entry: "GLOBAL:LOCAL1:LOCAL2" or "GLOBAL:LOCAL1:LO-HI" (0..4294967295 each).
 * @throws Error naming the entry and the form to use
 */
export function parseLargeCommunityRange(text: string): LargeCommunityRange {
  const m = /^\s*(\d{1,10}):(\d{1,10}):(\d{1,10})-(\d{1,10})\s*$/.exec(text);
  const bad = () => new Error(`${JSON.stringify(text)} is not a large community "GLOBAL:LOCAL1:LOCAL2" or a range "GLOBAL:LOCAL1:LO-HI" (0..4294967295 each)`);
  if (m) {
    const [g, l1, lo, hi] = [m[1], m[2], m[3], m[4]].map(Number) as [number, number, number, number];
    if ([g, l1, lo, hi].some((x) => x > 0xffffffff)) throw bad();
    if (lo > hi) throw new Error(`${JSON.stringify(text)}: the range is reversed (did you mean ${g}:${l1}:${hi}-${lo}?)`);
    return { global: g, local1: l1, first: lo, last: hi };
  }
  let c: LargeCommunity;
  try {
    c = parseLargeCommunity(text);
  } catch {
    throw bad();
  }
  return { global: c[0], local1: c[1], first: c[2], last: c[2] };
}

/** Whether `value` (a parsed community) lies in one of `ranges`. */
export function inCommunityRanges(value: number, ranges: readonly CommunityRange[]): boolean {
  const v = value >>> 0;
  return ranges.some((r) => v >= r.first && v <= r.last);
}

/** Whether the large community `c` lies in one of `ranges`. */
export function inLargeCommunityRanges(c: LargeCommunity, ranges: readonly LargeCommunityRange[]): boolean {
  return ranges.some((r) => c[0] === r.global && c[1] === r.local1 && c[2] >= r.first && c[2] <= r.last);
}

/** Whether a range reaches into the well-known communities (an operator's list may never allow those from a Service). */
export function reachesWellKnown(r: CommunityRange): boolean {
  return isWellKnownCommunity(r.last);
}
