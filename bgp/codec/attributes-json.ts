/**
 * Stable JSON views of UPDATE messages and path attributes, for `herald decode`, logs and the admin API.
 * The field names are a documented contract (docs/codec.md, "UPDATE and path attributes"); add fields, never
 * rename them.
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

const ORIGIN_NAMES = ['IGP', 'EGP', 'INCOMPLETE'] as const;

function segmentsJson(segments: readonly AsPathSegment[]): { type: string; asns: number[] }[] {
  return segments.map((s) => ({ type: AS_PATH_SEGMENT_NAMES[s.type] ?? String(s.type), asns: [...s.asns] }));
}

function prefixes(entries: readonly NlriEntry[]): string[] {
  return entries.map((e) => e.prefix);
}

function pathIds(entries: readonly NlriEntry[]): number[] | undefined {
  return entries.some((e) => e.pathId !== undefined) ? entries.map((e) => e.pathId ?? 0) : undefined;
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

/** Sets `out[k]` unless an earlier attribute of the same type set it (repeated types: the first wins). */
function setOnce(out: Record<string, unknown>, k: string, v: unknown): void {
  if (!(k in out)) out[k] = v;
}

/** JSON view of a path attribute list (field names in the module comment). Repeated types: the first wins. */
export function attributesToJson(attrs: readonly PathAttribute[]): Record<string, unknown> {
  return attributesInto(attrs, {});
}

/** Adds the JSON fields of `attrs` to `out` (which holds no attribute field yet) and returns it. */
function attributesInto(attrs: readonly PathAttribute[], out: Record<string, unknown>): Record<string, unknown> {
  let unknown: { typeCode: number; flags: number; value: string }[] | undefined;
  for (const a of attrs) {
    switch (a.type) {
      case 'ORIGIN':
        setOnce(out, 'origin', ORIGIN_NAMES[a.origin] ?? a.origin);
        break;
      case 'AS_PATH':
        setOnce(out, 'asPath', segmentsJson(a.segments));
        setOnce(out, 'asPathString', formatAsPath(a.segments));
        break;
      case 'NEXT_HOP':
        setOnce(out, 'nextHop', a.nextHop);
        break;
      case 'MULTI_EXIT_DISC':
        setOnce(out, 'med', a.med);
        break;
      case 'LOCAL_PREF':
        setOnce(out, 'localPref', a.localPref);
        break;
      case 'ATOMIC_AGGREGATE':
        setOnce(out, 'atomicAggregate', true);
        break;
      case 'AGGREGATOR':
        setOnce(out, 'aggregator', { asNumber: a.asNumber, address: a.address });
        break;
      case 'COMMUNITIES':
        setOnce(out, 'communities', a.communities.map(formatCommunity));
        break;
      case 'ORIGINATOR_ID':
        setOnce(out, 'originatorId', a.originatorId);
        break;
      case 'CLUSTER_LIST':
        setOnce(out, 'clusterList', [...a.clusterIds]);
        break;
      case 'MP_REACH_NLRI': {
        const ids = pathIds(a.nlri);
        setOnce(out, 'mpReach', {
          afi: a.afi,
          safi: a.safi,
          nextHops: [...a.nextHops],
          nlri: prefixes(a.nlri),
          ...(ids ? { nlriPathIds: ids } : {}),
          ...(a.raw ? { raw: a.raw.toString('hex') } : {}),
        });
        break;
      }
      case 'MP_UNREACH_NLRI': {
        const ids = pathIds(a.withdrawnRoutes);
        setOnce(out, 'mpUnreach', {
          afi: a.afi,
          safi: a.safi,
          withdrawnRoutes: prefixes(a.withdrawnRoutes),
          ...(ids ? { withdrawnPathIds: ids } : {}),
          ...(a.raw ? { raw: a.raw.toString('hex') } : {}),
        });
        break;
      }
      case 'EXTENDED_COMMUNITIES':
        setOnce(out, 'extendedCommunities', a.extendedCommunities.map(extendedCommunityToJson));
        break;
      case 'AS4_PATH':
        setOnce(out, 'as4Path', segmentsJson(a.segments));
        setOnce(out, 'as4PathString', formatAsPath(a.segments));
        break;
      case 'AS4_AGGREGATOR':
        setOnce(out, 'as4Aggregator', { asNumber: a.asNumber, address: a.address });
        break;
      case 'IPV6_ADDRESS_SPECIFIC_EXTENDED_COMMUNITY':
        setOnce(out, 'ipv6ExtendedCommunities', a.ipv6ExtendedCommunities.map(ipv6ExtendedCommunityToJson));
        break;
      case 'LARGE_COMMUNITY':
        setOnce(out, 'largeCommunities', a.largeCommunities.map(formatLargeCommunity));
        break;
      case 'UNKNOWN':
        (unknown ??= []).push({ typeCode: a.typeCode, flags: a.flags, value: a.value.toString('hex') });
        break;
    }
  }
  if (unknown) out.unknownAttributes = unknown;
  return out;
}

/**
 * JSON view of an UPDATE: `withdrawnRoutes` and `nlri` (always present, prefix strings), `withdrawnPathIds` /
 * `nlriPathIds` when entries carry ADD-PATH identifiers, the attribute fields of attributesToJson, and `endOfRib`
 * when the UPDATE is an End-of-RIB marker. The fields are added to `out` (a new object by default), after the ones
 * it has (messageToJson passes `{ type: 'UPDATE' }`), and `out` is returned.
 */
export function updateToJson(msg: UpdateMessage, out: Record<string, unknown> = {}): Record<string, unknown> {
  out.withdrawnRoutes = prefixes(msg.withdrawnRoutes);
  out.nlri = prefixes(msg.nlri);
  const wIds = pathIds(msg.withdrawnRoutes);
  if (wIds) out.withdrawnPathIds = wIds;
  const nIds = pathIds(msg.nlri);
  if (nIds) out.nlriPathIds = nIds;
  attributesInto(msg.pathAttributes, out);
  const eor = endOfRibFamily(msg);
  if (eor !== undefined) out.endOfRib = eor;
  return out;
}
