/**
 * Stable JSON views of UPDATE messages and path attributes, for `herald decode`, logs and the admin API.
 * The field names are a documented contract (docs/codec.md, "UPDATE and path attributes"); add fields, never
 * rename them.
 *
 * One definition, as text: `updateJsonText` / `attributesJsonText` write the JSON text directly (no intermediate
 * objects: the hot path of `herald decode`, which prints every UPDATE of a dump), and the object views
 * `updateToJson` / `attributesToJson` are that text parsed. The text is exactly what `JSON.stringify` prints for
 * the object view (no spaces, field order as listed): strings written without escaping are made only of digits,
 * hex, '.', ':', '/', ' ', '{', '}', '(', ')', '[', ']', ',' and names from constant tables; the two extended
 * community lists are `JSON.stringify` of their object views.
 *
 * Shapes (all optional except withdrawnRoutes/nlri in updateToJson):
 *   withdrawnRoutes: string[]; nlri: string[]; nlriPathIds / withdrawnPathIds: number[] (ADD-PATH only)
 *   origin: "IGP" | "EGP" | "INCOMPLETE"
 *   asPath: [{ type: "AS_SEQUENCE" | "AS_SET" | "AS_CONFED_SEQUENCE" | "AS_CONFED_SET", asns: number[] }]
 *   asPathString: bgpdump text, "1 2 {3,4}"
 *   nextHop: string; med: number; localPref: number; atomicAggregate: true
 *   aggregator / as4Aggregator: { asNumber, address }
 *   communities: ["65000:1", ...] (well-known ones in number form too, "65535:65281")
 *   largeCommunities: ["a:b:c", ...]
 *   extendedCommunities: [ { type, subtype, kind, transitive, value } for route-target / route-origin, plus asNumber and
 *     bytesPerSecond for link-bandwidth; else 16 hex digits ]
 *   ipv6ExtendedCommunities: [ { type, subtype, kind, transitive, value: "[2001:db8::1]:n" } for route-target /
 *     route-origin, else 40 hex digits ]
 *   originatorId: string; clusterList: string[]
 *   mpReach: { afi, safi, nextHops: string[], nlri: string[], nlriPathIds?: number[], raw?: hex }
 *   mpUnreach: { afi, safi, withdrawnRoutes: string[], withdrawnPathIds?: number[], raw?: hex }
 *   as4Path: same shape as asPath; as4PathString
 *   unknownAttributes: [{ typeCode, flags, value: hex }]
 *   endOfRib: "ipv4-unicast" | "ipv6-unicast" | "afi/safi" when the UPDATE is an End-of-RIB marker (RFC 4724 §2)
 */
import { AsPathSegmentType, AttrTypeCode } from '../constants.ts';
import { AS_PATH_SEGMENT_NAMES, formatAsPath } from './as-path.ts';
import { formatLargeCommunity } from './build.ts';
import {
  extendedCommunityKind,
  extendedCommunityView,
  ipv6ExtendedCommunityKind,
  ipv6ExtendedCommunityView,
  linkBandwidthOf,
} from './ext-communities.ts';
import { JsonOut } from './json-out.ts';
import type { AsPathSegment, ExtendedCommunity, Ipv6ExtendedCommunity, NlriEntry, PathAttribute, UpdateMessage } from './types.ts';
import { endOfRibFamily } from './update.ts';

const ORIGIN_TEXT = ['"IGP"', '"EGP"', '"INCOMPLETE"'];

/** Scratch writer of the string forms (attributesJsonText, updateJsonText); single-threaded, reset on each use. */
const scratch = new JsonOut(1024);

/** `["a","b"]` of strings that need no JSON escaping. */
function writeQuotedList(o: JsonOut, items: readonly string[]): void {
  o.byte(0x5b); // [
  for (let i = 0; i < items.length; i++) {
    o.ascii(i === 0 ? '"' : ',"');
    o.ascii(items[i] as string);
    o.byte(0x22); // "
  }
  o.byte(0x5d); // ]
}

/** `["10.0.0.0/8",...]`: the prefixes of NLRI entries. */
function writePrefixList(o: JsonOut, entries: readonly NlriEntry[]): void {
  o.byte(0x5b);
  for (let i = 0; i < entries.length; i++) {
    o.ascii(i === 0 ? '"' : ',"');
    o.ascii((entries[i] as NlriEntry).prefix);
    o.byte(0x22);
  }
  o.byte(0x5d);
}

/** Whether any NLRI entry carries a path id (ADD-PATH). */
function hasPathIds(entries: readonly NlriEntry[]): boolean {
  for (let i = 0; i < entries.length; i++) if ((entries[i] as NlriEntry).pathId !== undefined) return true;
  return false;
}

/** `[1,2]`: the path ids of NLRI entries (0 when absent). */
function writePathIdList(o: JsonOut, entries: readonly NlriEntry[]): void {
  o.byte(0x5b);
  for (let i = 0; i < entries.length; i++) {
    if (i > 0) o.byte(0x2c); // ,
    o.num((entries[i] as NlriEntry).pathId ?? 0);
  }
  o.byte(0x5d);
}

/** `1,2,3` (sep ',') or `1 2 3` (sep ' '): the ASes of a segment. */
function writeAsns(o: JsonOut, asns: readonly number[], sep: number): void {
  for (let i = 0; i < asns.length; i++) {
    if (i > 0) o.byte(sep);
    o.num(asns[i] as number);
  }
}

/** `[{"type":"AS_SEQUENCE","asns":[1,2]},...]`. */
function writeSegmentList(o: JsonOut, segments: readonly AsPathSegment[]): void {
  o.byte(0x5b);
  for (let i = 0; i < segments.length; i++) {
    const seg = segments[i] as AsPathSegment;
    o.ascii(i > 0 ? ',{"type":"' : '{"type":"');
    o.ascii(AS_PATH_SEGMENT_NAMES[seg.type] ?? String(seg.type));
    o.ascii('","asns":[');
    writeAsns(o, seg.asns, 0x2c);
    o.ascii(']}');
  }
  o.byte(0x5d);
}

/** The AS path as a JSON string: `"1 2 {3,4}"`, the text of formatAsPath (as-path.ts), written without building it. */
function writeAsPathString(o: JsonOut, segments: readonly AsPathSegment[]): void {
  o.byte(0x22);
  const start = o.pos;
  for (let i = 0; i < segments.length; i++) {
    const seg = segments[i] as AsPathSegment;
    // As formatAsPath: a space only after some text (a segment without ASes writes none).
    if (o.pos > start) o.byte(0x20);
    switch (seg.type) {
      case AsPathSegmentType.AS_SEQUENCE:
        writeAsns(o, seg.asns, 0x20);
        break;
      case AsPathSegmentType.AS_SET:
        o.byte(0x7b); // {
        writeAsns(o, seg.asns, 0x2c);
        o.byte(0x7d);
        break;
      case AsPathSegmentType.AS_CONFED_SEQUENCE:
        o.byte(0x28); // (
        writeAsns(o, seg.asns, 0x20);
        o.byte(0x29);
        break;
      case AsPathSegmentType.AS_CONFED_SET:
        o.byte(0x5b); // [
        writeAsns(o, seg.asns, 0x2c);
        o.byte(0x5d);
        break;
      default:
        o.ascii(formatAsPath([seg]));
    }
  }
  o.byte(0x22);
}

/** `{"asNumber":n,"address":"a.b.c.d"}` of AGGREGATOR / AS4_AGGREGATOR. */
function writeAggregator(o: JsonOut, asNumber: number, address: string): void {
  o.ascii('{"asNumber":');
  o.num(asNumber);
  o.ascii(',"address":"');
  o.ascii(address);
  o.ascii('"}');
}

/** `["65000:1",...]`: the text of formatCommunity (build.ts), written without building it. */
function writeCommunityList(o: JsonOut, communities: readonly number[]): void {
  o.byte(0x5b);
  for (let i = 0; i < communities.length; i++) {
    const c = communities[i] as number;
    o.ascii(i === 0 ? '"' : ',"');
    o.num(c >>> 16);
    o.byte(0x3a); // :
    o.num(c & 0xffff);
    o.byte(0x22);
  }
  o.byte(0x5d);
}

/** `"raw":"<hex>"` of an MP attribute whose NLRI the codec does not decode. */
function writeRaw(o: JsonOut, raw: Buffer): void {
  o.ascii(',"raw":"');
  o.ascii(raw.toString('hex'));
  o.byte(0x22);
}

/**
 * JSON view of an RFC 4360 extended community. Named sub-types (ext-communities.ts) are objects
 * `{ type, subtype, kind, transitive, value }`: route target (0x02) and route origin (0x03) of the two-octet AS
 * (type 0x00/0x40), IPv4 (0x01/0x41) and four-octet AS (0x02/0x42) layouts, `value` "AS:n" or "a.b.c.d:n"; link
 * bandwidth (type 0x00/0x40, sub-type 0x04, RFC 10005) adds `asNumber` and `bytesPerSecond`, `value` "AS:bytes/s".
 * Every other community is its 16 hex digits.
 */
export function extendedCommunityToJson(c: ExtendedCommunity): string | Record<string, unknown> {
  const kind = c.value.length === 8 ? extendedCommunityKind(c) : undefined;
  if (kind === undefined) return c.value.toString('hex');
  const base = { type: c.type, subtype: c.subtype, kind };
  const lb = kind === 'link-bandwidth' ? linkBandwidthOf(c) : undefined;
  if (lb) return { ...base, transitive: lb.transitive, value: `${lb.asNumber}:${lb.bytesPerSecond}`, asNumber: lb.asNumber, bytesPerSecond: lb.bytesPerSecond };
  const v = extendedCommunityView(c);
  if (v.layout === 'opaque' || v.layout === 'other') return c.value.toString('hex');
  return { ...base, transitive: v.transitive, value: `${v.globalAdministrator}:${v.localAdministrator}` };
}

/**
 * JSON view of an RFC 5701 IPv6 Address Specific extended community: route target / route origin (type 0x00/0x40,
 * sub-type 0x02/0x03) as `{ type, subtype, kind, transitive, value: "[2001:db8::1]:n" }`; others as 40 hex digits.
 */
export function ipv6ExtendedCommunityToJson(c: Ipv6ExtendedCommunity): string | Record<string, unknown> {
  const kind = c.value.length === 20 ? ipv6ExtendedCommunityKind(c) : undefined;
  if (kind === undefined) return c.value.toString('hex');
  const v = ipv6ExtendedCommunityView(c);
  return { type: c.type, subtype: c.subtype, kind, transitive: v.transitive, value: `[${v.globalAdministrator}]:${v.localAdministrator}` };
}

/**
 * Writes the JSON fields of a path attribute list, each as `,"name":value` (field names in the module comment). When
 * a type appears twice the first wins; `unknownAttributes` comes last.
 */
function writeAttributeFields(o: JsonOut, attrs: readonly PathAttribute[]): void {
  let unknown = 0;
  // Types written so far, one bit per type code mod 32: unique for the codes of AttrTypeCode (1..25, and 32 → bit 0).
  let written = 0;
  for (let i = 0; i < attrs.length; i++) {
    const a = attrs[i] as PathAttribute;
    if (a.type === 'UNKNOWN') {
      unknown++;
      continue;
    }
    const bit = 1 << (AttrTypeCode[a.type] & 31);
    if ((written & bit) !== 0) continue;
    written |= bit;
    switch (a.type) {
      case 'ORIGIN':
        o.ascii(',"origin":');
        o.ascii(ORIGIN_TEXT[a.origin] ?? String(a.origin));
        break;
      case 'AS_PATH':
        o.ascii(',"asPath":');
        writeSegmentList(o, a.segments);
        o.ascii(',"asPathString":');
        writeAsPathString(o, a.segments);
        break;
      case 'NEXT_HOP':
        o.ascii(',"nextHop":"');
        o.ascii(a.nextHop);
        o.byte(0x22);
        break;
      case 'MULTI_EXIT_DISC':
        o.ascii(',"med":');
        o.num(a.med);
        break;
      case 'LOCAL_PREF':
        o.ascii(',"localPref":');
        o.num(a.localPref);
        break;
      case 'ATOMIC_AGGREGATE':
        o.ascii(',"atomicAggregate":true');
        break;
      case 'AGGREGATOR':
        o.ascii(',"aggregator":');
        writeAggregator(o, a.asNumber, a.address);
        break;
      case 'COMMUNITIES':
        o.ascii(',"communities":');
        writeCommunityList(o, a.communities);
        break;
      case 'ORIGINATOR_ID':
        o.ascii(',"originatorId":"');
        o.ascii(a.originatorId);
        o.byte(0x22);
        break;
      case 'CLUSTER_LIST':
        o.ascii(',"clusterList":');
        writeQuotedList(o, a.clusterIds);
        break;
      case 'MP_REACH_NLRI':
        o.ascii(',"mpReach":{"afi":');
        o.num(a.afi);
        o.ascii(',"safi":');
        o.num(a.safi);
        o.ascii(',"nextHops":');
        writeQuotedList(o, a.nextHops);
        o.ascii(',"nlri":');
        writePrefixList(o, a.nlri);
        if (hasPathIds(a.nlri)) {
          o.ascii(',"nlriPathIds":');
          writePathIdList(o, a.nlri);
        }
        if (a.raw) writeRaw(o, a.raw);
        o.byte(0x7d);
        break;
      case 'MP_UNREACH_NLRI':
        o.ascii(',"mpUnreach":{"afi":');
        o.num(a.afi);
        o.ascii(',"safi":');
        o.num(a.safi);
        o.ascii(',"withdrawnRoutes":');
        writePrefixList(o, a.withdrawnRoutes);
        if (hasPathIds(a.withdrawnRoutes)) {
          o.ascii(',"withdrawnPathIds":');
          writePathIdList(o, a.withdrawnRoutes);
        }
        if (a.raw) writeRaw(o, a.raw);
        o.byte(0x7d);
        break;
      case 'EXTENDED_COMMUNITIES':
        o.ascii(',"extendedCommunities":');
        o.utf8(JSON.stringify(a.extendedCommunities.map(extendedCommunityToJson)));
        break;
      case 'AS4_PATH':
        o.ascii(',"as4Path":');
        writeSegmentList(o, a.segments);
        o.ascii(',"as4PathString":');
        writeAsPathString(o, a.segments);
        break;
      case 'AS4_AGGREGATOR':
        o.ascii(',"as4Aggregator":');
        writeAggregator(o, a.asNumber, a.address);
        break;
      case 'IPV6_ADDRESS_SPECIFIC_EXTENDED_COMMUNITY':
        o.ascii(',"ipv6ExtendedCommunities":');
        o.utf8(JSON.stringify(a.ipv6ExtendedCommunities.map(ipv6ExtendedCommunityToJson)));
        break;
      case 'LARGE_COMMUNITY':
        o.ascii(',"largeCommunities":');
        writeQuotedList(o, a.largeCommunities.map(formatLargeCommunity));
        break;
    }
  }
  if (unknown === 0) return;
  o.ascii(',"unknownAttributes":[');
  let first = true;
  for (let i = 0; i < attrs.length; i++) {
    const a = attrs[i] as PathAttribute;
    if (a.type !== 'UNKNOWN') continue;
    o.ascii(first ? '{"typeCode":' : ',{"typeCode":');
    first = false;
    o.num(a.typeCode);
    o.ascii(',"flags":');
    o.num(a.flags);
    o.ascii(',"value":"');
    o.ascii(a.value.toString('hex'));
    o.ascii('"}');
  }
  o.byte(0x5d);
}

/**
 * Writes the JSON text of a path attribute list into `o`: an object with the fields of the module comment (`{}` for
 * no attributes). Repeated types: the first wins. Never throws.
 */
export function writeAttributesJson(o: JsonOut, attrs: readonly PathAttribute[]): void {
  const at = o.pos;
  writeAttributeFields(o, attrs);
  // The fields start with a comma: it becomes the opening brace.
  if (o.pos === at) o.ascii('{}');
  else {
    o.buf[at] = 0x7b;
    o.byte(0x7d);
  }
}

/**
 * JSON text of a path attribute list: an object with the fields of the module comment (`{}` for no attributes).
 * Repeated types: the first wins. Never throws.
 */
export function attributesJsonText(attrs: readonly PathAttribute[]): string {
  scratch.reset();
  writeAttributesJson(scratch, attrs);
  return scratch.text();
}

/** JSON view of a path attribute list: `JSON.parse(attributesJsonText(attrs))`. */
export function attributesToJson(attrs: readonly PathAttribute[]): Record<string, unknown> {
  return JSON.parse(attributesJsonText(attrs)) as Record<string, unknown>;
}

/**
 * Writes the fields of an UPDATE's JSON text without the braces: `"withdrawnRoutes":[...],"nlri":[...]`, then
 * `withdrawnPathIds` / `nlriPathIds` when entries carry ADD-PATH identifiers, the attribute fields, and `endOfRib`
 * when the UPDATE is an End-of-RIB marker (RFC 4724 §2). For writeMessageJson (json.ts), which puts `type` first.
 */
export function writeUpdateJsonFields(o: JsonOut, msg: UpdateMessage): void {
  o.ascii('"withdrawnRoutes":');
  writePrefixList(o, msg.withdrawnRoutes);
  o.ascii(',"nlri":');
  writePrefixList(o, msg.nlri);
  if (hasPathIds(msg.withdrawnRoutes)) {
    o.ascii(',"withdrawnPathIds":');
    writePathIdList(o, msg.withdrawnRoutes);
  }
  if (hasPathIds(msg.nlri)) {
    o.ascii(',"nlriPathIds":');
    writePathIdList(o, msg.nlri);
  }
  writeAttributeFields(o, msg.pathAttributes);
  const eor = endOfRibFamily(msg);
  if (eor !== undefined) {
    o.ascii(',"endOfRib":"');
    o.ascii(eor);
    o.byte(0x22);
  }
}

/**
 * JSON text of an UPDATE: `withdrawnRoutes` and `nlri` (always present, prefix strings), `withdrawnPathIds` /
 * `nlriPathIds` with ADD-PATH, the attribute fields of attributesJsonText, and `endOfRib` for an End-of-RIB marker.
 * Never throws.
 */
export function updateJsonText(msg: UpdateMessage): string {
  scratch.reset();
  scratch.byte(0x7b);
  writeUpdateJsonFields(scratch, msg);
  scratch.byte(0x7d);
  return scratch.text();
}

/** JSON view of an UPDATE: `JSON.parse(updateJsonText(msg))`, its fields added to `out` when given. */
export function updateToJson(msg: UpdateMessage, out: Record<string, unknown> = {}): Record<string, unknown> {
  return Object.assign(out, JSON.parse(updateJsonText(msg)) as Record<string, unknown>);
}
