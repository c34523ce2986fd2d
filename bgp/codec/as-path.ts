/**
 * AS_PATH and AS4_PATH: segments of `<type octet><count octet><count ASes of 2 or 4 octets>` (RFC 4271 §4.3,
 * RFC 6793 §3/§4, RFC 5065 §3 for the confederation segment types), the RFC 6793 §4.2.3 merge of AS_PATH with
 * AS4_PATH, and the bgpdump-style text form ("1 2 {3,4} (5 6) [7,8]").
 */
import { AS_TRANS, AsPathSegmentType } from '../constants.ts';
import { uint32At } from '../wire/reader.ts';
import type { ByteWriter } from '../wire/writer.ts';
import type { AsPathSegment, PathAttribute } from './types.ts';

/** RFC names of segment types by type code, as used in JSON ({1: "AS_SET", 2: "AS_SEQUENCE", ...}); from AsPathSegmentType. */
export const AS_PATH_SEGMENT_NAMES: Readonly<Record<number, string>> = Object.freeze(
  Object.fromEntries(Object.entries(AsPathSegmentType).map(([name, code]) => [code, name])),
);

/**
 * Decodes AS_PATH/AS4_PATH segments in `buf[start, end)` with ASes of `asSize` octets (2 or 4).
 * @returns the segments, or a string describing why the value is malformed (RFC 7606 §7.2: unknown segment
 * type, a segment of zero ASes, or a segment overrunning the attribute). Never throws.
 */
export function decodeAsPathSegments(buf: Buffer, start: number, end: number, asSize: 2 | 4): AsPathSegment[] | string {
  const segments: AsPathSegment[] = [];
  let p = start;
  while (p < end) {
    if (end - p < 2) return `AS_PATH segment header truncated at offset ${p - start}`;
    const type = buf[p] as number;
    const count = buf[p + 1] as number;
    if (type < 1 || type > 4) return `AS_PATH segment type ${type} unknown at offset ${p - start}`;
    if (count === 0) return `AS_PATH segment of zero ASes at offset ${p - start}`;
    p += 2;
    if (p + count * asSize > end) return `AS_PATH segment of ${count} ASes overruns the attribute`;
    const asns = new Array<number>(count);
    if (asSize === 4) {
      for (let i = 0; i < count; i++, p += 4) asns[i] = uint32At(buf, p);
    } else {
      for (let i = 0; i < count; i++, p += 2) asns[i] = ((buf[p] as number) << 8) | (buf[p + 1] as number);
    }
    segments.push({ type: type as AsPathSegmentType, asns });
  }
  return segments;
}

/**
 * Writes AS_PATH segments with ASes of `asSize` octets. With `asSize` 2, an AS above 65535 is written as
 * AS_TRANS (23456), as RFC 6793 §4.2.2 requires toward a 2-octet-AS speaker (the caller adds AS4_PATH).
 * A segment of more than 255 ASes is split into several segments of the same type (RFC 4271 §9.2.2.1 style).
 * Throws RangeError on an AS outside 0..4294967295 or an unknown segment type.
 */
export function writeAsPathSegments(w: ByteWriter, segments: readonly AsPathSegment[], asSize: 2 | 4): void {
  for (const seg of segments) {
    if (seg.type < 1 || seg.type > 4) throw new RangeError(`unknown AS_PATH segment type ${seg.type}`);
    const asns = seg.asns;
    for (let i = 0; i < asns.length || i === 0; i += 255) {
      const chunk = Math.min(255, asns.length - i);
      if (chunk <= 0) break;
      w.u8(seg.type).u8(chunk);
      for (let j = i; j < i + chunk; j++) {
        const as = asns[j] as number;
        if (asSize === 4) w.u32(as);
        else w.u16(as > 0xffff && as <= 0xffffffff ? AS_TRANS : as);
      }
    }
  }
}

/** Octets the segments take with ASes of `asSize` octets (counting the 255-AS splits of writeAsPathSegments). */
export function asPathSegmentsLength(segments: readonly AsPathSegment[], asSize: 2 | 4): number {
  let n = 0;
  for (const seg of segments) n += 2 * Math.ceil(seg.asns.length / 255) + seg.asns.length * asSize;
  return n;
}

/**
 * Path length for RFC 6793 §4.2.3 and best-path purposes (RFC 4271 §9.1.2.2 a): each AS in an AS_SEQUENCE counts
 * 1, each AS_SET counts 1, confederation segments count 0 (RFC 5065 §5.3).
 */
export function asPathLength(segments: readonly AsPathSegment[]): number {
  let n = 0;
  for (const s of segments) {
    if (s.type === AsPathSegmentType.AS_SEQUENCE) n += s.asns.length;
    else if (s.type === AsPathSegmentType.AS_SET) n += 1;
  }
  return n;
}

/**
 * Reconstructs the real AS path from AS_PATH (2-octet, with AS_TRANS) and AS4_PATH (RFC 6793 §4.2.3).
 * Confederation segments in AS4_PATH are ignored (RFC 6793 §3). If AS_PATH counts fewer ASes than AS4_PATH,
 * AS4_PATH is ignored and AS_PATH returned unchanged; otherwise the leading (count(AS_PATH) − count(AS4_PATH))
 * ASes of AS_PATH (whole AS_SETs, and the confederation segments met up to the cut, including those leading
 * AS_PATH when the counts are equal) are prepended to AS4_PATH. Counting per RFC 6793 §4.2.3 (asPathLength).
 * @param asPath AS_PATH segments as received (2-octet ASes, AS_TRANS in place of 4-octet ones).
 * @param as4Path AS4_PATH segments (4-octet ASes). @returns the reconstructed segments. Pure, never throws.
 */
export function mergeAs4Path(asPath: readonly AsPathSegment[], as4Path: readonly AsPathSegment[]): AsPathSegment[] {
  const as4 = as4Path.filter(
    (s) => s.type !== AsPathSegmentType.AS_CONFED_SEQUENCE && s.type !== AsPathSegmentType.AS_CONFED_SET,
  );
  const n2 = asPathLength(asPath);
  const n4 = asPathLength(as4);
  if (n2 < n4) return asPath.map((s) => ({ type: s.type, asns: [...s.asns] }));
  let take = n2 - n4;
  const out: AsPathSegment[] = [];
  for (const seg of asPath) {
    const confed = seg.type === AsPathSegmentType.AS_CONFED_SEQUENCE || seg.type === AsPathSegmentType.AS_CONFED_SET;
    // Confederation segments count 0 and AS4_PATH cannot carry them (RFC 6793 §3), so the ones leading AS_PATH are
    // kept even when no AS needs to be taken (equal counts); stop at the first counted segment once `take` is 0.
    if (take === 0 && !confed) break;
    if (seg.type === AsPathSegmentType.AS_SEQUENCE) {
      const k = Math.min(take, seg.asns.length);
      out.push({ type: seg.type, asns: seg.asns.slice(0, k) });
      take -= k;
    } else if (seg.type === AsPathSegmentType.AS_SET) {
      out.push({ type: seg.type, asns: [...seg.asns] });
      take -= 1;
    } else {
      out.push({ type: seg.type, asns: [...seg.asns] });
    }
  }
  for (let i = 0; i < as4.length; i++) {
    const seg = as4[i] as AsPathSegment;
    const last = out[out.length - 1];
    // Join the two halves of one AS_SEQUENCE cut by the merge.
    if (i === 0 && last && last.type === AsPathSegmentType.AS_SEQUENCE && seg.type === AsPathSegmentType.AS_SEQUENCE) {
      out[out.length - 1] = { type: last.type, asns: [...last.asns, ...seg.asns] };
    } else out.push({ type: seg.type, asns: [...seg.asns] });
  }
  return out;
}

/**
 * The AS path to use for a route (RFC 6793 §4.2.3): AS_PATH merged with AS4_PATH when both are present, else
 * AS_PATH's segments, else [] (no AS_PATH attribute). AS4_PATH is ignored when an AGGREGATOR carries an AS other
 * than AS_TRANS (the route was aggregated by an OLD speaker after the AS4_PATH was added). Meant for UPDATEs
 * received over a 2-octet-AS session; on a 4-octet session AS4_PATH should not appear (RFC 6793 §4.1).
 */
export function effectiveAsPath(attrs: readonly PathAttribute[]): AsPathSegment[] {
  let asPath: readonly AsPathSegment[] | undefined;
  let as4Path: readonly AsPathSegment[] | undefined;
  let aggregatorAs: number | undefined;
  for (const a of attrs) {
    if (a.type === 'AS_PATH') asPath ??= a.segments;
    else if (a.type === 'AS4_PATH') as4Path ??= a.segments;
    else if (a.type === 'AGGREGATOR') aggregatorAs ??= a.asNumber;
  }
  if (!asPath) return [];
  if (!as4Path || (aggregatorAs !== undefined && aggregatorAs !== AS_TRANS)) return asPath.map((s) => ({ type: s.type, asns: [...s.asns] }));
  return mergeAs4Path(asPath, as4Path);
}

/**
 * The aggregator of a route (RFC 6793 §4.2.3): AS4_AGGREGATOR when AGGREGATOR carries AS_TRANS and AS4_AGGREGATOR
 * is present, else AGGREGATOR, else undefined.
 */
export function effectiveAggregator(attrs: readonly PathAttribute[]): { asNumber: number; address: string } | undefined {
  let agg: { asNumber: number; address: string } | undefined;
  let agg4: { asNumber: number; address: string } | undefined;
  for (const a of attrs) {
    if (a.type === 'AGGREGATOR') agg ??= { asNumber: a.asNumber, address: a.address };
    else if (a.type === 'AS4_AGGREGATOR') agg4 ??= { asNumber: a.asNumber, address: a.address };
  }
  if (agg && agg.asNumber === AS_TRANS && agg4) return agg4;
  return agg;
}

/**
 * bgpdump-style text of an AS path: sequences as space-separated ASes, AS_SET as "{a,b}", AS_CONFED_SEQUENCE as
 * "(a b)", AS_CONFED_SET as "[a,b]"; segments joined by spaces. Empty path → "".
 */
export function formatAsPath(segments: readonly AsPathSegment[]): string {
  let s = '';
  for (const seg of segments) {
    if (s.length > 0) s += ' ';
    switch (seg.type) {
      case AsPathSegmentType.AS_SEQUENCE:
        s += seg.asns.join(' ');
        break;
      case AsPathSegmentType.AS_SET:
        s += `{${seg.asns.join(',')}}`;
        break;
      case AsPathSegmentType.AS_CONFED_SEQUENCE:
        s += `(${seg.asns.join(' ')})`;
        break;
      case AsPathSegmentType.AS_CONFED_SET:
        s += `[${seg.asns.join(',')}]`;
        break;
      default:
        s += `?${(seg as AsPathSegment).type}?`;
    }
  }
  return s;
}
