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
import { AttrTypeCode } from '../constants.ts';
import { AS_PATH_SEGMENT_NAMES, formatAsPath } from './as-path.ts';
import { formatCommunity, formatLargeCommunity } from './build.ts';
import {
  extendedCommunityKind,
  extendedCommunityView,
  ipv6ExtendedCommunityKind,
  ipv6ExtendedCommunityView,
  linkBandwidthOf,
} from './ext-communities.ts';
import type { AsPathSegment, ExtendedCommunity, Ipv6ExtendedCommunity, NlriEntry, PathAttribute, UpdateMessage } from './types.ts';
import { endOfRibFamily } from './update.ts';

const ORIGIN_TEXT = ['"IGP"', '"EGP"', '"INCOMPLETE"'];

/** `"s"`, for strings that need no JSON escaping (see the module comment). */
function quoted(s: string): string {
  return '"' + s + '"';
}

/** `["a","b"]` of strings that need no JSON escaping. */
function quotedList(items: readonly string[]): string {
  if (items.length === 0) return '[]';
  let s = '["' + items[0];
  for (let i = 1; i < items.length; i++) s += '","' + items[i];
  return s + '"]';
}

/** `["10.0.0.0/8",...]`: the prefixes of NLRI entries. */
function prefixList(entries: readonly NlriEntry[]): string {
  if (entries.length === 0) return '[]';
  let s = '["' + (entries[0] as NlriEntry).prefix;
  for (let i = 1; i < entries.length; i++) s += '","' + (entries[i] as NlriEntry).prefix;
  return s + '"]';
}

/** `[1,2]`: the path ids of NLRI entries (0 when absent), or undefined when no entry has one (no ADD-PATH). */
function pathIdList(entries: readonly NlriEntry[]): string | undefined {
  let any = false;
  for (let i = 0; i < entries.length && !any; i++) any = (entries[i] as NlriEntry).pathId !== undefined;
  if (!any) return undefined;
  let s = '[';
  for (let i = 0; i < entries.length; i++) s += (i > 0 ? ',' : '') + ((entries[i] as NlriEntry).pathId ?? 0);
  return s + ']';
}

/** `[{"type":"AS_SEQUENCE","asns":[1,2]},...]`. */
function segmentList(segments: readonly AsPathSegment[]): string {
  let s = '[';
  for (let i = 0; i < segments.length; i++) {
    const seg = segments[i] as AsPathSegment;
    if (i > 0) s += ',';
    s += '{"type":"' + (AS_PATH_SEGMENT_NAMES[seg.type] ?? String(seg.type)) + '","asns":[' + seg.asns.join(',') + ']}';
  }
  return s + ']';
}

/** `{"asNumber":n,"address":"a.b.c.d"}` of AGGREGATOR / AS4_AGGREGATOR. */
function aggregatorText(asNumber: number, address: string): string {
  return '{"asNumber":' + asNumber + ',"address":"' + address + '"}';
}

/** `["65000:1",...]` (formatCommunity). */
function communityList(communities: readonly number[]): string {
  if (communities.length === 0) return '[]';
  let s = '["' + formatCommunity(communities[0] as number);
  for (let i = 1; i < communities.length; i++) s += '","' + formatCommunity(communities[i] as number);
  return s + '"]';
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
 * The JSON fields of a path attribute list, each as `,"name":value` (field names in the module comment). When a type
 * appears twice the first wins; `unknownAttributes` comes last.
 */
function attributeFields(attrs: readonly PathAttribute[]): string {
  let s = '';
  let unknown = '';
  // Types written so far, one bit per type code mod 32: unique for the codes of AttrTypeCode (1..25, and 32 → bit 0).
  let written = 0;
  for (const a of attrs) {
    if (a.type === 'UNKNOWN') {
      unknown += (unknown === '' ? '[' : ',') + '{"typeCode":' + a.typeCode + ',"flags":' + a.flags + ',"value":"' + a.value.toString('hex') + '"}';
      continue;
    }
    const bit = 1 << (AttrTypeCode[a.type] & 31);
    if ((written & bit) !== 0) continue;
    written |= bit;
    switch (a.type) {
      case 'ORIGIN':
        s += ',"origin":' + (ORIGIN_TEXT[a.origin] ?? String(a.origin));
        break;
      case 'AS_PATH':
        s += ',"asPath":' + segmentList(a.segments) + ',"asPathString":' + quoted(formatAsPath(a.segments));
        break;
      case 'NEXT_HOP':
        s += ',"nextHop":' + quoted(a.nextHop);
        break;
      case 'MULTI_EXIT_DISC':
        s += ',"med":' + a.med;
        break;
      case 'LOCAL_PREF':
        s += ',"localPref":' + a.localPref;
        break;
      case 'ATOMIC_AGGREGATE':
        s += ',"atomicAggregate":true';
        break;
      case 'AGGREGATOR':
        s += ',"aggregator":' + aggregatorText(a.asNumber, a.address);
        break;
      case 'COMMUNITIES':
        s += ',"communities":' + communityList(a.communities);
        break;
      case 'ORIGINATOR_ID':
        s += ',"originatorId":' + quoted(a.originatorId);
        break;
      case 'CLUSTER_LIST':
        s += ',"clusterList":' + quotedList(a.clusterIds);
        break;
      case 'MP_REACH_NLRI': {
        const ids = pathIdList(a.nlri);
        s += ',"mpReach":{"afi":' + a.afi + ',"safi":' + a.safi + ',"nextHops":' + quotedList(a.nextHops) + ',"nlri":' + prefixList(a.nlri);
        if (ids !== undefined) s += ',"nlriPathIds":' + ids;
        if (a.raw) s += ',"raw":"' + a.raw.toString('hex') + '"';
        s += '}';
        break;
      }
      case 'MP_UNREACH_NLRI': {
        const ids = pathIdList(a.withdrawnRoutes);
        s += ',"mpUnreach":{"afi":' + a.afi + ',"safi":' + a.safi + ',"withdrawnRoutes":' + prefixList(a.withdrawnRoutes);
        if (ids !== undefined) s += ',"withdrawnPathIds":' + ids;
        if (a.raw) s += ',"raw":"' + a.raw.toString('hex') + '"';
        s += '}';
        break;
      }
      case 'EXTENDED_COMMUNITIES':
        s += ',"extendedCommunities":' + JSON.stringify(a.extendedCommunities.map(extendedCommunityToJson));
        break;
      case 'AS4_PATH':
        s += ',"as4Path":' + segmentList(a.segments) + ',"as4PathString":' + quoted(formatAsPath(a.segments));
        break;
      case 'AS4_AGGREGATOR':
        s += ',"as4Aggregator":' + aggregatorText(a.asNumber, a.address);
        break;
      case 'IPV6_ADDRESS_SPECIFIC_EXTENDED_COMMUNITY':
        s += ',"ipv6ExtendedCommunities":' + JSON.stringify(a.ipv6ExtendedCommunities.map(ipv6ExtendedCommunityToJson));
        break;
      case 'LARGE_COMMUNITY':
        s += ',"largeCommunities":' + quotedList(a.largeCommunities.map(formatLargeCommunity));
        break;
    }
  }
  return unknown === '' ? s : s + ',"unknownAttributes":' + unknown + ']';
}

/**
 * JSON text of a path attribute list: an object with the fields of the module comment (`{}` for no attributes).
 * Repeated types: the first wins. Never throws.
 */
export function attributesJsonText(attrs: readonly PathAttribute[]): string {
  const fields = attributeFields(attrs);
  return fields === '' ? '{}' : '{' + fields.slice(1) + '}';
}

/** JSON view of a path attribute list: `JSON.parse(attributesJsonText(attrs))`. */
export function attributesToJson(attrs: readonly PathAttribute[]): Record<string, unknown> {
  return JSON.parse(attributesJsonText(attrs)) as Record<string, unknown>;
}

/**
 * The fields of an UPDATE's JSON text without the braces: `"withdrawnRoutes":[...],"nlri":[...]`, then
 * `withdrawnPathIds` / `nlriPathIds` when entries carry ADD-PATH identifiers, the attribute fields, and `endOfRib`
 * when the UPDATE is an End-of-RIB marker (RFC 4724 §2). For messageJsonText (json.ts), which puts `type` first.
 */
export function updateJsonFields(msg: UpdateMessage): string {
  let s = '"withdrawnRoutes":' + prefixList(msg.withdrawnRoutes) + ',"nlri":' + prefixList(msg.nlri);
  const wIds = pathIdList(msg.withdrawnRoutes);
  if (wIds !== undefined) s += ',"withdrawnPathIds":' + wIds;
  const nIds = pathIdList(msg.nlri);
  if (nIds !== undefined) s += ',"nlriPathIds":' + nIds;
  s += attributeFields(msg.pathAttributes);
  const eor = endOfRibFamily(msg);
  if (eor !== undefined) s += ',"endOfRib":"' + eor + '"';
  return s;
}

/**
 * JSON text of an UPDATE: `withdrawnRoutes` and `nlri` (always present, prefix strings), `withdrawnPathIds` /
 * `nlriPathIds` with ADD-PATH, the attribute fields of attributesJsonText, and `endOfRib` for an End-of-RIB marker.
 * Never throws.
 */
export function updateJsonText(msg: UpdateMessage): string {
  return '{' + updateJsonFields(msg) + '}';
}

/** JSON view of an UPDATE: `JSON.parse(updateJsonText(msg))`, its fields added to `out` when given. */
export function updateToJson(msg: UpdateMessage, out: Record<string, unknown> = {}): Record<string, unknown> {
  return Object.assign(out, JSON.parse(updateJsonText(msg)) as Record<string, unknown>);
}
