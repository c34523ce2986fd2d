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
 *   extendedCommunities: [ { type, subtype, kind, value } for route-target / route-origin, else 16 hex digits ]
 *   originatorId: string; clusterList: string[]
 *   mpReach: { afi, safi, nextHops: string[], nlri: string[], nlriPathIds?: number[], raw?: hex }
 *   mpUnreach: { afi, safi, withdrawnRoutes: string[], withdrawnPathIds?: number[], raw?: hex }
 *   as4Path: same shape as asPath; as4PathString
 *   unknownAttributes: [{ typeCode, flags, value: hex }]
 *   endOfRib: "ipv4-unicast" | "ipv6-unicast" | "afi/safi" when the UPDATE is an End-of-RIB marker (RFC 4724 §2)
 */
import { AS_PATH_SEGMENT_NAMES, formatAsPath } from './as-path.ts';
import { formatCommunity, formatLargeCommunity } from './build.ts';
import { formatIPv4 } from './nlri.ts';
import type { AsPathSegment, ExtendedCommunity, NlriEntry, PathAttribute, UpdateMessage } from './types.ts';
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
 * JSON view of an RFC 4360 extended community: route target (subtype 0x02) and route origin (0x03) of the
 * 2-octet-AS (type 0x00/0x40), IPv4 (0x01/0x41) and 4-octet-AS (0x02/0x42) kinds are decoded to
 * `{ type, subtype, kind: "route-target" | "route-origin", value: "AS:n" | "a.b.c.d:n" }`; others are 16 hex digits.
 */
export function extendedCommunityToJson(c: ExtendedCommunity): string | Record<string, unknown> {
  const v = c.value;
  const kind = c.subtype === 0x02 ? 'route-target' : c.subtype === 0x03 ? 'route-origin' : undefined;
  const t = c.type & 0xbf; // ignore the Transitive bit (0x40 = non-transitive)
  if (kind && v.length === 8) {
    if (t === 0x00) return { type: c.type, subtype: c.subtype, kind, value: `${v.readUInt16BE(2)}:${v.readUInt32BE(4)}` };
    if (t === 0x01) return { type: c.type, subtype: c.subtype, kind, value: `${formatIPv4(v, 2)}:${v.readUInt16BE(6)}` };
    if (t === 0x02) return { type: c.type, subtype: c.subtype, kind, value: `${v.readUInt32BE(2)}:${v.readUInt16BE(6)}` };
  }
  return v.toString('hex');
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
