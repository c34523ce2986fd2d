/**
 * Path attributes (RFC 4271 §4.3, §5): the per-type table (name, RFC flags, RFC 7606 error action), decoding of
 * one attribute value into the PathAttribute union, the attribute-list walker shared by the RFC 7606 decoder and
 * the strict RFC 4271 §6.3 validator, and the encoder.
 *
 * Each attribute on the wire: Flags (1) | Type Code (1) | Length (1, or 2 with the Extended Length flag) | Value.
 * Decoded attributes keep their received flags octet, and are listed in received order, so encode(decode(b)) == b.
 *
 * Attribute value checks (length, value) produce an `AttrIssue` carrying the RFC 4271 §6.3 subcode; callers decide:
 * the strict validator turns the first issue into a BgpError, the RFC 7606 decoder applies the per-type action of
 * ATTRIBUTE_INFO (treat-as-withdraw, attribute-discard, or session reset).
 */
import { AS_TRANS, AttrFlag, AttrTypeCode, Origin, UpdateSubcode } from '../constants.ts';
import { BgpError } from '../errors.ts';
import { uint32At } from '../wire/reader.ts';
import { ByteWriter } from '../wire/writer.ts';
import { asPathSegmentsLength, decodeAsPathSegments, writeAsPathSegments } from './as-path.ts';
import { decodeMpReach, decodeMpUnreach, mpReachValueLength, mpUnreachValueLength, writeMpReachValue, writeMpUnreachValue } from './mp-nlri.ts';
import { formatIPv4, parseIPv4Into } from './nlri.ts';
import type { AsPathSegment, CodecContext, ExtendedCommunity, Ipv6ExtendedCommunity, LargeCommunity, PathAttribute } from './types.ts';

/** What RFC 7606 §2 says to do when an attribute of this type is malformed. */
export type ErrorAction = 'treat-as-withdraw' | 'attribute-discard' | 'session-reset';

/** Static facts about a known attribute type. */
export interface AttributeInfo {
  /** IANA / RFC name, also the PathAttribute `type`. */
  readonly name: Exclude<PathAttribute['type'], 'UNKNOWN'>;
  /** RFC default flags (Optional / Transitive bits; builders use these). */
  readonly flags: number;
  /** RFC 7606 action when the attribute is malformed (RFC 7606 §7.x, RFC 6793 §6, RFC 8092 §6, RFC 4760 §7). */
  readonly action: ErrorAction;
}

const WT = AttrFlag.Transitive; // well-known (mandatory or discretionary): O=0, T=1
const ON = AttrFlag.Optional; // optional non-transitive
const OT = AttrFlag.Optional | AttrFlag.Transitive; // optional transitive

/** The attributes Herald decodes, by type code. */
export const ATTRIBUTE_INFO: Readonly<Record<number, AttributeInfo>> = {
  [AttrTypeCode.ORIGIN]: { name: 'ORIGIN', flags: WT, action: 'treat-as-withdraw' }, // RFC 7606 §7.1
  [AttrTypeCode.AS_PATH]: { name: 'AS_PATH', flags: WT, action: 'treat-as-withdraw' }, // §7.2
  [AttrTypeCode.NEXT_HOP]: { name: 'NEXT_HOP', flags: WT, action: 'treat-as-withdraw' }, // §7.3
  [AttrTypeCode.MULTI_EXIT_DISC]: { name: 'MULTI_EXIT_DISC', flags: ON, action: 'treat-as-withdraw' }, // §7.4
  [AttrTypeCode.LOCAL_PREF]: { name: 'LOCAL_PREF', flags: WT, action: 'treat-as-withdraw' }, // §7.5
  [AttrTypeCode.ATOMIC_AGGREGATE]: { name: 'ATOMIC_AGGREGATE', flags: WT, action: 'attribute-discard' }, // §7.6
  [AttrTypeCode.AGGREGATOR]: { name: 'AGGREGATOR', flags: OT, action: 'attribute-discard' }, // §7.7
  [AttrTypeCode.COMMUNITIES]: { name: 'COMMUNITIES', flags: OT, action: 'treat-as-withdraw' }, // §7.8
  [AttrTypeCode.ORIGINATOR_ID]: { name: 'ORIGINATOR_ID', flags: ON, action: 'treat-as-withdraw' }, // §7.9
  [AttrTypeCode.CLUSTER_LIST]: { name: 'CLUSTER_LIST', flags: ON, action: 'treat-as-withdraw' }, // §7.10
  [AttrTypeCode.MP_REACH_NLRI]: { name: 'MP_REACH_NLRI', flags: ON, action: 'session-reset' }, // §7.11, RFC 4760 §7
  [AttrTypeCode.MP_UNREACH_NLRI]: { name: 'MP_UNREACH_NLRI', flags: ON, action: 'session-reset' }, // §7.11
  [AttrTypeCode.EXTENDED_COMMUNITIES]: { name: 'EXTENDED_COMMUNITIES', flags: OT, action: 'treat-as-withdraw' }, // §7.14
  [AttrTypeCode.AS4_PATH]: { name: 'AS4_PATH', flags: OT, action: 'attribute-discard' }, // RFC 6793 §6
  [AttrTypeCode.AS4_AGGREGATOR]: { name: 'AS4_AGGREGATOR', flags: OT, action: 'attribute-discard' }, // RFC 6793 §6
  [AttrTypeCode.IPV6_ADDRESS_SPECIFIC_EXTENDED_COMMUNITY]: { name: 'IPV6_ADDRESS_SPECIFIC_EXTENDED_COMMUNITY', flags: OT, action: 'treat-as-withdraw' }, // §7.15
  [AttrTypeCode.LARGE_COMMUNITY]: { name: 'LARGE_COMMUNITY', flags: OT, action: 'treat-as-withdraw' }, // RFC 8092 §6
};

/**
 * The wire type code of an attribute (RFC 4271 §4.3): `typeCode` of an UNKNOWN one, else the code its `type` names
 * in AttrTypeCode (constants.ts, the one table of type codes). Never throws.
 */
export function attributeTypeCode(attr: PathAttribute): number {
  return attr.type === 'UNKNOWN' ? attr.typeCode : AttrTypeCode[attr.type];
}

/** A problem with one attribute's flags, length or value: the RFC 4271 §6.3 UPDATE subcode and a reason. */
export interface AttrIssue {
  readonly subcode: number;
  readonly detail: string;
}

function isIssue(x: PathAttribute | AttrIssue): x is AttrIssue {
  return (x as AttrIssue).subcode !== undefined;
}

function lengthIssue(name: string, len: number, want: string): AttrIssue {
  return { subcode: UpdateSubcode.AttributeLengthError, detail: `${name} length ${len}, expected ${want}` };
}

/** True when a segment list holds AS 0, which RFC 7607 §2 forbids in AS_PATH and AS4_PATH. */
function hasAsZero(segments: readonly AsPathSegment[]): boolean {
  for (const s of segments) if (s.asns.includes(0)) return true;
  return false;
}

/**
 * Decodes the value `buf[vs, ve)` of a known attribute type, checking its length and value. Flags are checked by
 * the caller. @returns the attribute (values copied out of `buf`), or an AttrIssue. Never throws.
 */
function decodeKnownValue(
  code: number,
  flags: number,
  buf: Buffer,
  vs: number,
  ve: number,
  ctx: CodecContext,
  mrtRibEntry: boolean,
): PathAttribute | AttrIssue {
  const len = ve - vs;
  switch (code) {
    case AttrTypeCode.ORIGIN: {
      if (len !== 1) return lengthIssue('ORIGIN', len, '1');
      const origin = buf[vs] as number;
      if (origin > Origin.INCOMPLETE) return { subcode: UpdateSubcode.InvalidOriginAttribute, detail: `ORIGIN value ${origin} undefined` };
      return { type: 'ORIGIN', flags, origin: origin as Origin };
    }
    case AttrTypeCode.AS_PATH: {
      const segs = decodeAsPathSegments(buf, vs, ve, ctx.fourOctetAs ? 4 : 2);
      if (typeof segs === 'string') return { subcode: UpdateSubcode.MalformedAsPath, detail: segs };
      // RFC 7607 §2: AS 0 in AS_PATH makes it malformed (RFC 7606 §7.2: treat-as-withdraw;
      // test/bgp/codec/regressions.test.ts).
      if (hasAsZero(segs)) return { subcode: UpdateSubcode.MalformedAsPath, detail: 'AS_PATH contains AS 0 (RFC 7607)' };
      return { type: 'AS_PATH', flags, segments: segs };
    }
    case AttrTypeCode.NEXT_HOP:
      if (len !== 4) return lengthIssue('NEXT_HOP', len, '4');
      return { type: 'NEXT_HOP', flags, nextHop: formatIPv4(buf, vs) };
    case AttrTypeCode.MULTI_EXIT_DISC:
      if (len !== 4) return lengthIssue('MULTI_EXIT_DISC', len, '4');
      return { type: 'MULTI_EXIT_DISC', flags, med: uint32At(buf, vs) };
    case AttrTypeCode.LOCAL_PREF:
      if (len !== 4) return lengthIssue('LOCAL_PREF', len, '4');
      return { type: 'LOCAL_PREF', flags, localPref: uint32At(buf, vs) };
    case AttrTypeCode.ATOMIC_AGGREGATE:
      if (len !== 0) return lengthIssue('ATOMIC_AGGREGATE', len, '0');
      return { type: 'ATOMIC_AGGREGATE', flags };
    case AttrTypeCode.AGGREGATOR: {
      const want = ctx.fourOctetAs ? 8 : 6;
      if (len !== want) return lengthIssue('AGGREGATOR', len, String(want));
      const asNumber = ctx.fourOctetAs ? buf.readUInt32BE(vs) : buf.readUInt16BE(vs);
      // RFC 7607 §2: AS 0 makes AGGREGATOR malformed (RFC 7606 §7.7: attribute-discard).
      if (asNumber === 0) return { subcode: UpdateSubcode.OptionalAttributeError, detail: 'AGGREGATOR AS 0 (RFC 7607)' };
      return { type: 'AGGREGATOR', flags, asNumber, address: formatIPv4(buf, vs + want - 4) };
    }
    case AttrTypeCode.COMMUNITIES: {
      if (len === 0 || len % 4 !== 0) return lengthIssue('COMMUNITIES', len, 'a non-zero multiple of 4');
      const communities = new Array<number>(len >>> 2);
      for (let i = 0; i < communities.length; i++) communities[i] = uint32At(buf, vs + 4 * i);
      return { type: 'COMMUNITIES', flags, communities };
    }
    case AttrTypeCode.ORIGINATOR_ID:
      if (len !== 4) return lengthIssue('ORIGINATOR_ID', len, '4');
      return { type: 'ORIGINATOR_ID', flags, originatorId: formatIPv4(buf, vs) };
    case AttrTypeCode.CLUSTER_LIST: {
      if (len === 0 || len % 4 !== 0) return lengthIssue('CLUSTER_LIST', len, 'a non-zero multiple of 4');
      const clusterIds = new Array<string>(len >>> 2);
      for (let i = 0; i < clusterIds.length; i++) clusterIds[i] = formatIPv4(buf, vs + 4 * i);
      return { type: 'CLUSTER_LIST', flags, clusterIds };
    }
    case AttrTypeCode.MP_REACH_NLRI:
      return decodeMpReach(buf, vs, ve, flags, ctx, mrtRibEntry);
    case AttrTypeCode.MP_UNREACH_NLRI:
      return decodeMpUnreach(buf, vs, ve, flags, ctx);
    case AttrTypeCode.EXTENDED_COMMUNITIES: {
      // RFC 7606 §7.14: a length that is not a non-zero multiple of 8 is malformed (treat-as-withdraw).
      if (len === 0 || len % 8 !== 0) return lengthIssue('EXTENDED_COMMUNITIES', len, 'a non-zero multiple of 8');
      const copy = Buffer.from(buf.subarray(vs, ve));
      const extendedCommunities = new Array<ExtendedCommunity>(len >>> 3);
      for (let i = 0; i < extendedCommunities.length; i++) {
        extendedCommunities[i] = { type: copy[8 * i] as number, subtype: copy[8 * i + 1] as number, value: copy.subarray(8 * i, 8 * i + 8) };
      }
      return { type: 'EXTENDED_COMMUNITIES', flags, extendedCommunities };
    }
    case AttrTypeCode.IPV6_ADDRESS_SPECIFIC_EXTENDED_COMMUNITY: {
      // RFC 7606 §7.15: a length that is not a non-zero multiple of 20 is malformed (treat-as-withdraw).
      if (len === 0 || len % 20 !== 0) return lengthIssue('IPV6_ADDRESS_SPECIFIC_EXTENDED_COMMUNITY', len, 'a non-zero multiple of 20');
      const copy = Buffer.from(buf.subarray(vs, ve));
      const ipv6ExtendedCommunities = new Array<Ipv6ExtendedCommunity>(len / 20);
      for (let i = 0, p = 0; i < ipv6ExtendedCommunities.length; i++, p += 20) {
        ipv6ExtendedCommunities[i] = { type: copy[p] as number, subtype: copy[p + 1] as number, value: copy.subarray(p, p + 20) };
      }
      return { type: 'IPV6_ADDRESS_SPECIFIC_EXTENDED_COMMUNITY', flags, ipv6ExtendedCommunities };
    }
    case AttrTypeCode.AS4_PATH: {
      const segs = decodeAsPathSegments(buf, vs, ve, 4);
      if (typeof segs === 'string') return { subcode: UpdateSubcode.OptionalAttributeError, detail: `AS4_PATH: ${segs}` };
      // RFC 7607 §2 with RFC 6793 §6: AS 0 makes AS4_PATH malformed (attribute-discard).
      if (hasAsZero(segs)) return { subcode: UpdateSubcode.OptionalAttributeError, detail: 'AS4_PATH contains AS 0 (RFC 7607)' };
      return { type: 'AS4_PATH', flags, segments: segs };
    }
    case AttrTypeCode.AS4_AGGREGATOR: {
      if (len !== 8) return lengthIssue('AS4_AGGREGATOR', len, '8');
      const asNumber = buf.readUInt32BE(vs);
      if (asNumber === 0) return { subcode: UpdateSubcode.OptionalAttributeError, detail: 'AS4_AGGREGATOR AS 0 (RFC 7607)' };
      return { type: 'AS4_AGGREGATOR', flags, asNumber, address: formatIPv4(buf, vs + 4) };
    }
    case AttrTypeCode.LARGE_COMMUNITY: {
      if (len === 0 || len % 12 !== 0) return lengthIssue('LARGE_COMMUNITY', len, 'a non-zero multiple of 12');
      const largeCommunities = new Array<LargeCommunity>(len / 12);
      for (let i = 0, p = vs; i < largeCommunities.length; i++, p += 12) {
        largeCommunities[i] = [uint32At(buf, p), uint32At(buf, p + 4), uint32At(buf, p + 8)];
      }
      return { type: 'LARGE_COMMUNITY', flags, largeCommunities };
    }
    default:
      return { type: 'UNKNOWN', flags, typeCode: code, value: Buffer.from(buf.subarray(vs, ve)) };
  }
}

/**
 * RFC 4271 §6.3 semantic check of the 4 NEXT_HOP octets at `buf[off]`: 0.0.0.0, 255.255.255.255 and multicast
 * (224.0.0.0/4) are not valid next hops. @returns a reason, or undefined when valid. The caller checks bounds.
 */
function invalidNextHopAt(buf: Uint8Array, off: number): string | undefined {
  const a = buf[off] as number;
  const b = buf[off + 1] as number;
  const c = buf[off + 2] as number;
  const d = buf[off + 3] as number;
  if ((a | b | c | d) === 0) return 'NEXT_HOP 0.0.0.0';
  if ((a & b & c & d) === 0xff) return 'NEXT_HOP 255.255.255.255 (limited broadcast)';
  if (a >= 224 && a <= 239) return `NEXT_HOP ${a}.${b}.${c}.${d} is multicast`;
  return undefined;
}

/**
 * RFC 4271 §6.3 semantic check of a NEXT_HOP address text: 0.0.0.0, 255.255.255.255 and multicast (224.0.0.0/4)
 * are not valid next hops. @returns a reason, or undefined when valid. Throws Error on text that is not IPv4.
 */
export function invalidNextHopReason(nextHop: string): string | undefined {
  const b = new Uint8Array(4);
  parseIPv4Into(nextHop, b, 0);
  return invalidNextHopAt(b, 0);
}

/** One problem found while walking an attribute list, with where the attribute sits in the buffer. */
export interface WalkIssue extends AttrIssue {
  readonly typeCode: number;
  /**
   * What RFC 7606 says to do about it: its per-type action, 'discard-duplicate' for a repeat (§3 g), or 'ignored'
   * for what only RFC 4271 treats as an error (the Partial bit on a well-known or optional non-transitive attribute).
   */
  readonly action: ErrorAction | 'discard-duplicate' | 'ignored';
  /** The whole attribute (flags, type, length, value): a view into the walked buffer. */
  readonly attribute: Buffer;
}

/** Result of walking an attribute list. */
export interface WalkResult {
  /** Attributes in received order; malformed ones with action treat-as-withdraw are kept as UNKNOWN (raw). */
  readonly attrs: PathAttribute[];
  /** Problems in received order (empty for a clean list). */
  readonly issues: readonly WalkIssue[];
  /** Type codes seen on the wire (set bits), including malformed ones: `seen[code >>> 5] & (1 << (code & 31))`. */
  readonly seen: Uint32Array;
}

/** Whether `code` was seen in a walk. */
export function wasSeen(seen: Uint32Array, code: number): boolean {
  return ((seen[code >>> 5] as number) & (1 << (code & 31))) !== 0;
}

const NO_ISSUES: readonly WalkIssue[] = Object.freeze([]);

/** A WalkIssue for the attribute `buf[attrStart, end)` of type `typeCode`; problems are rare, so the view is made only here. */
function walkIssue(buf: Buffer, attrStart: number, end: number, typeCode: number, subcode: number, detail: string, action: WalkIssue['action']): WalkIssue {
  return { subcode, detail, typeCode, action, attribute: buf.subarray(attrStart, end) };
}

/**
 * Walks the attribute list in `buf[start, end)` (RFC 4271 §4.3), decoding each attribute and collecting problems
 * instead of stopping at them. Dropped from `attrs`: attribute-discard cases and repeated attributes (the first
 * one wins, RFC 7606 §3 g). Kept as UNKNOWN: malformed attributes whose action is treat-as-withdraw or
 * session-reset, so that nothing received is lost.
 *
 * Throws BgpError 3/1 (Malformed Attribute List) if an attribute header or value overruns the list (framing
 * error: the rest of the list cannot be trusted, including any MP_REACH/MP_UNREACH in it).
 */
export function walkAttributes(buf: Buffer, start: number, end: number, ctx: CodecContext, mrtRibEntry = false): WalkResult {
  const attrs: PathAttribute[] = [];
  // Problems are rare: the issue list is only built when one is found.
  let issues: WalkIssue[] | undefined;
  const seen = new Uint32Array(8);
  let p = start;
  while (p < end) {
    const attrStart = p;
    if (end - p < 3) throw BgpError.malformedAttributeList(`attribute header truncated: ${end - p} octets left at offset ${p - start}`);
    const flags = buf[p] as number;
    const code = buf[p + 1] as number;
    let len: number;
    if (flags & AttrFlag.ExtendedLength) {
      if (end - p < 4) throw BgpError.malformedAttributeList(`attribute header truncated: ${end - p} octets left at offset ${p - start}`);
      len = ((buf[p + 2] as number) << 8) | (buf[p + 3] as number);
      p += 4;
    } else {
      len = buf[p + 2] as number;
      p += 3;
    }
    if (p + len > end) {
      throw BgpError.malformedAttributeList(`attribute type ${code} length ${len} overruns the attribute list (${end - p} octets left)`);
    }
    const vs = p;
    const ve = p + len;
    p = ve;
    const info = ATTRIBUTE_INFO[code];
    const word = code >>> 5;
    const bit = 1 << (code & 31);
    if (((seen[word] as number) & bit) !== 0) {
      // RFC 7606 §3 g: a repeated MP_REACH/MP_UNREACH is session-fatal; any other repeat: keep the first only.
      const fatal = code === AttrTypeCode.MP_REACH_NLRI || code === AttrTypeCode.MP_UNREACH_NLRI;
      (issues ??= []).push(walkIssue(buf, attrStart, ve, code, UpdateSubcode.MalformedAttributeList, `attribute type ${code} repeated`, fatal ? 'session-reset' : 'discard-duplicate'));
      continue;
    }
    seen[word] = (seen[word] as number) | bit;
    if (!info) {
      if ((flags & AttrFlag.Optional) === 0) {
        // RFC 4271 §6.3: an unrecognised well-known attribute (3/2). Under RFC 7606 we withdraw and keep it raw.
        (issues ??= []).push(walkIssue(buf, attrStart, ve, code, UpdateSubcode.UnrecognizedWellKnownAttribute, `unrecognized well-known attribute type ${code}`, 'treat-as-withdraw'));
      }
      attrs.push({ type: 'UNKNOWN', flags, typeCode: code, value: Buffer.from(buf.subarray(vs, ve)) });
      continue;
    }
    if ((flags & (AttrFlag.Optional | AttrFlag.Transitive)) !== info.flags) {
      // RFC 7606 §3 c: flags conflicting with the type make the attribute malformed (its own action applies).
      (issues ??= []).push(walkIssue(buf, attrStart, ve, code, UpdateSubcode.AttributeFlagsError, `${info.name} flags 0x${flags.toString(16)}, expected Optional/Transitive 0x${info.flags.toString(16)}`, info.action));
      if (info.action !== 'attribute-discard') attrs.push({ type: 'UNKNOWN', flags, typeCode: code, value: Buffer.from(buf.subarray(vs, ve)) });
      continue;
    }
    if ((flags & AttrFlag.Partial) !== 0 && info.flags !== OT) {
      // RFC 4271 §4.3: Partial must be 0 on well-known and optional non-transitive attributes (strict 3/4); RFC 7606
      // §3 c only looks at the Optional and Transitive bits, so the attribute is used as received.
      (issues ??= []).push(walkIssue(buf, attrStart, ve, code, UpdateSubcode.AttributeFlagsError, `${info.name} has the Partial bit set`, 'ignored'));
    }
    const decoded = decodeKnownValue(code, flags, buf, vs, ve, ctx, mrtRibEntry);
    if (isIssue(decoded)) {
      (issues ??= []).push(walkIssue(buf, attrStart, ve, code, decoded.subcode, decoded.detail, info.action));
      if (info.action !== 'attribute-discard') attrs.push({ type: 'UNKNOWN', flags, typeCode: code, value: Buffer.from(buf.subarray(vs, ve)) });
      continue;
    }
    if (code === AttrTypeCode.NEXT_HOP) {
      const why = invalidNextHopAt(buf, vs);
      if (why) (issues ??= []).push(walkIssue(buf, attrStart, ve, code, UpdateSubcode.InvalidNextHopAttribute, why, 'treat-as-withdraw'));
    }
    attrs.push(decoded);
  }
  return { attrs, issues: issues ?? NO_ISSUES, seen };
}

/** The BgpError RFC 4271 §6.3 prescribes for an issue (data: the whole attribute for 3/2, 3/4, 3/5, 3/6, 3/8, 3/9). */
export function issueToError(issue: WalkIssue): BgpError {
  switch (issue.subcode) {
    case UpdateSubcode.UnrecognizedWellKnownAttribute:
      return BgpError.unrecognizedWellKnownAttribute(issue.attribute);
    case UpdateSubcode.AttributeFlagsError:
      return BgpError.attributeFlagsError(issue.attribute, issue.detail);
    case UpdateSubcode.AttributeLengthError:
      return BgpError.attributeLengthError(issue.attribute, issue.detail);
    case UpdateSubcode.InvalidOriginAttribute:
      return BgpError.invalidOriginAttribute(issue.attribute);
    case UpdateSubcode.InvalidNextHopAttribute:
      return BgpError.invalidNextHopAttribute(issue.attribute, issue.detail);
    case UpdateSubcode.OptionalAttributeError:
      return BgpError.optionalAttributeError(issue.attribute, issue.detail);
    case UpdateSubcode.InvalidNetworkField:
      return BgpError.invalidNetworkField(issue.detail);
    case UpdateSubcode.MalformedAsPath:
      return BgpError.malformedAsPath(issue.detail);
    default:
      return BgpError.malformedAttributeList(issue.detail);
  }
}

/**
 * Decodes a bare path attribute list (no UPDATE framing), e.g. from an MRT RIB entry (RFC 6396 §4.3.4) or a
 * BGP4MP record. With `opts.mrtRibEntry`, MP_REACH_NLRI may be the abbreviated form (next-hop length + next hop)
 * or the full RFC 4760 form (quagga and RIS write the full form); both are accepted.
 *
 * Lenient like RFC 7606: malformed attributes are kept as UNKNOWN (raw), attribute-discard cases and repeats are
 * dropped. Throws BgpError only for session-fatal problems: 3/1 on framing overrun or a repeated MP attribute,
 * 3/9 or 3/10 for a malformed MP_REACH_NLRI / MP_UNREACH_NLRI, 3/4 if their flags are wrong.
 */
export function decodePathAttributes(buf: Buffer, ctx: CodecContext, opts?: { mrtRibEntry?: boolean }): PathAttribute[] {
  const r = walkAttributes(buf, 0, buf.length, ctx, opts?.mrtRibEntry === true);
  for (const i of r.issues) if (i.action === 'session-reset') throw issueToError(i);
  return r.attrs;
}

// ---------------------------------------------------------------------------------------------------------------
// Encoding

/** Octets of an attribute's value. Throws Error/RangeError on values that cannot be encoded. */
export function attributeValueLength(attr: PathAttribute, ctx: CodecContext): number {
  switch (attr.type) {
    case 'ORIGIN':
      return 1;
    case 'AS_PATH':
      return asPathSegmentsLength(attr.segments, ctx.fourOctetAs ? 4 : 2);
    case 'NEXT_HOP':
    case 'MULTI_EXIT_DISC':
    case 'LOCAL_PREF':
    case 'ORIGINATOR_ID':
      return 4;
    case 'ATOMIC_AGGREGATE':
      return 0;
    case 'AGGREGATOR':
      return ctx.fourOctetAs ? 8 : 6;
    case 'COMMUNITIES':
      return attr.communities.length * 4;
    case 'CLUSTER_LIST':
      return attr.clusterIds.length * 4;
    case 'MP_REACH_NLRI':
      return mpReachValueLength(attr, ctx);
    case 'MP_UNREACH_NLRI':
      return mpUnreachValueLength(attr, ctx);
    case 'EXTENDED_COMMUNITIES':
      return attr.extendedCommunities.length * 8;
    case 'AS4_PATH':
      return asPathSegmentsLength(attr.segments, 4);
    case 'AS4_AGGREGATOR':
      return 8;
    case 'IPV6_ADDRESS_SPECIFIC_EXTENDED_COMMUNITY':
      return attr.ipv6ExtendedCommunities.length * 20;
    case 'LARGE_COMMUNITY':
      return attr.largeCommunities.length * 12;
    case 'UNKNOWN':
      return attr.value.length;
  }
}

const ip4 = new Uint8Array(4);
function writeIPv4(w: ByteWriter, addr: string): void {
  parseIPv4Into(addr, ip4, 0);
  w.bytes(ip4);
}

function writeValue(w: ByteWriter, attr: PathAttribute, ctx: CodecContext): void {
  switch (attr.type) {
    case 'ORIGIN':
      w.u8(attr.origin);
      return;
    case 'AS_PATH':
      writeAsPathSegments(w, attr.segments, ctx.fourOctetAs ? 4 : 2);
      return;
    case 'NEXT_HOP':
      writeIPv4(w, attr.nextHop);
      return;
    case 'MULTI_EXIT_DISC':
      w.u32(attr.med);
      return;
    case 'LOCAL_PREF':
      w.u32(attr.localPref);
      return;
    case 'ATOMIC_AGGREGATE':
      return;
    case 'AGGREGATOR':
      // RFC 6793 §4.2.2: toward a 2-octet-AS speaker a 4-octet AS is sent as AS_TRANS (caller adds AS4_AGGREGATOR).
      if (ctx.fourOctetAs) w.u32(attr.asNumber);
      else w.u16(attr.asNumber > 0xffff ? AS_TRANS : attr.asNumber);
      writeIPv4(w, attr.address);
      return;
    case 'COMMUNITIES':
      for (const c of attr.communities) w.u32(c);
      return;
    case 'ORIGINATOR_ID':
      writeIPv4(w, attr.originatorId);
      return;
    case 'CLUSTER_LIST':
      for (const c of attr.clusterIds) writeIPv4(w, c);
      return;
    case 'MP_REACH_NLRI':
      writeMpReachValue(w, attr, ctx);
      return;
    case 'MP_UNREACH_NLRI':
      writeMpUnreachValue(w, attr, ctx);
      return;
    case 'EXTENDED_COMMUNITIES':
      for (const c of attr.extendedCommunities) {
        if (c.value.length !== 8) throw new RangeError(`extended community must be 8 octets, got ${c.value.length}`);
        w.bytes(c.value);
      }
      return;
    case 'AS4_PATH':
      writeAsPathSegments(w, attr.segments, 4);
      return;
    case 'AS4_AGGREGATOR':
      w.u32(attr.asNumber);
      writeIPv4(w, attr.address);
      return;
    case 'IPV6_ADDRESS_SPECIFIC_EXTENDED_COMMUNITY':
      for (const c of attr.ipv6ExtendedCommunities) {
        if (c.value.length !== 20) throw new RangeError(`IPv6 address specific extended community must be 20 octets, got ${c.value.length}`);
        w.bytes(c.value);
      }
      return;
    case 'LARGE_COMMUNITY':
      for (const [g, l1, l2] of attr.largeCommunities) w.u32(g).u32(l1).u32(l2);
      return;
    case 'UNKNOWN':
      w.bytes(attr.value);
      return;
  }
}

/**
 * Appends one attribute (flags, type, length, value) to `w`. The flags octet is written as given, except that the
 * Extended Length bit is added when the value exceeds 255 octets (RFC 4271 §4.3); a set Extended Length bit is
 * kept (2-octet length) even for short values, so received attributes re-encode exactly.
 * Throws Error/RangeError on values that cannot be encoded (bad address text, out-of-range numbers, > 65535 octets).
 */
export function writeAttribute(w: ByteWriter, attr: PathAttribute, ctx: CodecContext): void {
  const len = attributeValueLength(attr, ctx);
  let flags = attr.flags & 0xff;
  if (len > 0xff) flags |= AttrFlag.ExtendedLength;
  if (len > 0xffff) throw new RangeError(`attribute type ${attributeTypeCode(attr)} value of ${len} octets exceeds 65535`);
  w.u8(flags).u8(attributeTypeCode(attr));
  if (flags & AttrFlag.ExtendedLength) w.u16(len);
  else w.u8(len);
  const before = w.length;
  writeValue(w, attr, ctx);
  if (w.length - before !== len) throw new Error(`internal: attribute type ${attributeTypeCode(attr)} wrote ${w.length - before} octets, computed ${len}`);
}

/**
 * Encodes a path attribute list in the given order (RFC 4271 §4.3), each attribute as by writeAttribute.
 * Throws Error/RangeError on values that cannot be encoded.
 */
export function encodePathAttributes(attrs: readonly PathAttribute[], ctx: CodecContext): Buffer {
  const w = new ByteWriter(64 + attrs.length * 16);
  for (const a of attrs) writeAttribute(w, a, ctx);
  return w.toBuffer();
}

/**
 * The flags a builder should use: the RFC default flags of the type, plus Extended Length when the value is
 * longer than 255 octets, so that decode(encode(attr)) equals the built attribute.
 */
export function defaultFlags(attr: PathAttribute, ctx: CodecContext): number {
  const code = attributeTypeCode(attr);
  const base = ATTRIBUTE_INFO[code]?.flags ?? attr.flags;
  return attributeValueLength(attr, ctx) > 0xff ? base | AttrFlag.ExtendedLength : base;
}
