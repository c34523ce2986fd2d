/**
 * Builders of path attributes and UPDATEs with the RFC default flags (RFC 4271 §5, RFC 4760, RFC 1997, RFC 8092, RFC 4360, RFC 5701),
 * and community text helpers. Built values are canonical (addresses and prefixes in canonical text), so that
 * decode(encode(x)) deep-equals x. The Extended Length flag is set when the value exceeds 255 octets.
 *
 * All builders throw a plain Error (a local bug or bad config, never a BgpError) on malformed input.
 */
import type { Family } from '../constants.ts';
import { AttrFlag, AttrTypeCode, Origin } from '../constants.ts';
import { ATTRIBUTE_INFO } from './attributes.ts';
import type { AttributeInfo } from './attributes.ts';
import { familyAfiSafi } from './mp-nlri.ts';
import { canonicalAddress, canonicalPrefix, familyOfPrefix, nlriLength } from './nlri.ts';
import { asPathSegmentsLength } from './as-path.ts';
import { ExtCommunitySubtype, extendedCommunityFromBytes, ipv6ExtendedCommunityFromBytes, twoOctetAsSpecific } from './ext-communities.ts';
import { parseCommunity, parseLargeCommunity, u32 } from './communities.ts';
import type { AsPathSegment, ExtendedCommunity, Ipv6ExtendedCommunity, LargeCommunity, NlriEntry, PathAttribute, UpdateMessage } from './types.ts';

type Attr<T extends PathAttribute['type']> = Extract<PathAttribute, { type: T }>;

/** RFC default flags of an attribute type, from the one attribute table (ATTRIBUTE_INFO in attributes.ts). */
function rfcFlags(code: AttrTypeCode): number {
  return (ATTRIBUTE_INFO[code] as AttributeInfo).flags;
}
const WT = rfcFlags(AttrTypeCode.ORIGIN); // well-known: Transitive
const ON = rfcFlags(AttrTypeCode.MULTI_EXIT_DISC); // optional non-transitive
const OT = rfcFlags(AttrTypeCode.COMMUNITIES); // optional transitive

/** Upper bound of the octets NLRI entries take (a 4-octet path id counted only where `pathId` is set). */
function nlriOctets(entries: readonly NlriEntry[]): number {
  let n = 0;
  for (const e of entries) n += nlriLength(e.prefix) + (e.pathId === undefined ? 0 : 4);
  return n;
}

function ext(base: number, valueLength: number): number {
  return valueLength > 255 ? base | AttrFlag.ExtendedLength : base;
}


/** ORIGIN (RFC 4271 §5.1.1), well-known mandatory: 0 IGP, 1 EGP, 2 INCOMPLETE, or the name. */
export function origin(o: Origin | 'IGP' | 'EGP' | 'INCOMPLETE'): Attr<'ORIGIN'> {
  const v = typeof o === 'string' ? Origin[o] : o;
  if (v !== 0 && v !== 1 && v !== 2) throw new Error(`invalid ORIGIN ${String(o)}`);
  return { type: 'ORIGIN', flags: WT, origin: v };
}

/**
 * AS_PATH (RFC 4271 §5.1.2), well-known mandatory. Length for the flags is computed as 4-octet ASes (the
 * Extended Length bit is set above 255 octets). Throws Error on an AS outside 0..4294967295 or an empty segment.
 */
export function asPath(segments: readonly AsPathSegment[]): Attr<'AS_PATH'> {
  const segs = segments.map((s) => {
    if (s.asns.length === 0) throw new Error('AS_PATH segment with no AS');
    return { type: s.type, asns: s.asns.map((a) => u32(a, 'AS number')) };
  });
  return { type: 'AS_PATH', flags: ext(WT, asPathSegmentsLength(segs, 4)), segments: segs };
}

/** AS_PATH of one AS_SEQUENCE (empty array → empty AS_PATH, as for iBGP-originated routes). */
export function asSequence(asns: readonly number[]): Attr<'AS_PATH'> {
  return asPath(asns.length === 0 ? [] : [{ type: 2, asns }]);
}

/** NEXT_HOP (RFC 4271 §5.1.3), well-known mandatory for IPv4 NLRI: an IPv4 address. */
export function nextHop(addr: string): Attr<'NEXT_HOP'> {
  if (addr.includes(':')) throw new Error(`NEXT_HOP must be IPv4 (use mpReach for IPv6): ${addr}`);
  return { type: 'NEXT_HOP', flags: WT, nextHop: canonicalAddress(addr) };
}

/** MULTI_EXIT_DISC (RFC 4271 §5.1.4), optional non-transitive, 0..4294967295. */
export function med(n: number): Attr<'MULTI_EXIT_DISC'> {
  return { type: 'MULTI_EXIT_DISC', flags: ON, med: u32(n, 'MED') };
}

/** LOCAL_PREF (RFC 4271 §5.1.5), well-known, iBGP only, 0..4294967295. */
export function localPref(n: number): Attr<'LOCAL_PREF'> {
  return { type: 'LOCAL_PREF', flags: WT, localPref: u32(n, 'LOCAL_PREF') };
}

/** ATOMIC_AGGREGATE (RFC 4271 §5.1.6), well-known discretionary. */
export function atomicAggregate(): Attr<'ATOMIC_AGGREGATE'> {
  return { type: 'ATOMIC_AGGREGATE', flags: WT };
}

/** AGGREGATOR (RFC 4271 §5.1.7), optional transitive: AS and IPv4 address. */
export function aggregator(asNumber: number, address: string): Attr<'AGGREGATOR'> {
  return { type: 'AGGREGATOR', flags: OT, asNumber: u32(asNumber, 'AS number'), address: canonicalAddress(address) };
}

/** COMMUNITIES (RFC 1997), optional transitive. Each item a 32-bit number or text accepted by parseCommunity. */
export function communities(list: readonly (number | string)[]): Attr<'COMMUNITIES'> {
  if (list.length === 0) throw new Error('COMMUNITIES needs at least one community (RFC 7606 §7.8)');
  const values = list.map((c) => (typeof c === 'number' ? u32(c, 'community') : parseCommunity(c)));
  return { type: 'COMMUNITIES', flags: ext(OT, values.length * 4), communities: values };
}

/** LARGE_COMMUNITY (RFC 8092), optional transitive. Each item [global, local1, local2] or "a:b:c". */
export function largeCommunities(list: readonly (LargeCommunity | string)[]): Attr<'LARGE_COMMUNITY'> {
  if (list.length === 0) throw new Error('LARGE_COMMUNITY needs at least one community (RFC 8092 §6)');
  const values = list.map((c): LargeCommunity => {
    if (typeof c === 'string') return parseLargeCommunity(c);
    return [u32(c[0], 'large community'), u32(c[1], 'large community'), u32(c[2], 'large community')];
  });
  return { type: 'LARGE_COMMUNITY', flags: ext(OT, values.length * 12), largeCommunities: values };
}

/**
 * EXTENDED_COMMUNITIES (RFC 4360), optional transitive. Each item an ExtendedCommunity (ext-communities.ts
 * builders), 8 octets (Buffer) or 16 hex digits. Throws Error on an empty list or a wrong size.
 */
export function extendedCommunities(list: readonly (ExtendedCommunity | Buffer | string)[]): Attr<'EXTENDED_COMMUNITIES'> {
  if (list.length === 0) throw new Error('EXTENDED_COMMUNITIES needs at least one community (RFC 7606 §7.14)');
  const values = list.map((c): ExtendedCommunity => {
    if (typeof c === 'string') {
      if (!/^[0-9a-fA-F]{16}$/.test(c)) throw new Error(`extended community must be 8 octets (16 hex digits): ${c}`);
      return extendedCommunityFromBytes(Buffer.from(c, 'hex'));
    }
    return extendedCommunityFromBytes(Buffer.isBuffer(c) ? c : c.value);
  });
  return { type: 'EXTENDED_COMMUNITIES', flags: ext(OT, values.length * 8), extendedCommunities: values };
}

/**
 * IPv6 Address Specific Extended Community attribute (RFC 5701, type code 25), optional transitive. Each item an
 * Ipv6ExtendedCommunity (ext-communities.ts builders), 20 octets (Buffer) or 40 hex digits. Throws Error on an empty
 * list or a wrong size.
 */
export function ipv6ExtendedCommunities(list: readonly (Ipv6ExtendedCommunity | Buffer | string)[]): Attr<'IPV6_ADDRESS_SPECIFIC_EXTENDED_COMMUNITY'> {
  if (list.length === 0) throw new Error('IPV6_ADDRESS_SPECIFIC_EXTENDED_COMMUNITY needs at least one community (RFC 7606 §7.15)');
  const values = list.map((c): Ipv6ExtendedCommunity => {
    if (typeof c === 'string') {
      if (!/^[0-9a-fA-F]{40}$/.test(c)) throw new Error(`IPv6 address specific extended community must be 20 octets (40 hex digits): ${c}`);
      return ipv6ExtendedCommunityFromBytes(Buffer.from(c, 'hex'));
    }
    return ipv6ExtendedCommunityFromBytes(Buffer.isBuffer(c) ? c : c.value);
  });
  return { type: 'IPV6_ADDRESS_SPECIFIC_EXTENDED_COMMUNITY', flags: ext(OT, values.length * 20), ipv6ExtendedCommunities: values };
}

/** Route Target extended community, 2-octet AS specific (RFC 4360 §4: type 0x00, subtype 0x02), as 8 octets. */
export function routeTarget(asNumber: number, local: number): Buffer {
  return twoOctetAsSpecific(ExtCommunitySubtype.RouteTarget, asNumber, local).value;
}

function nlriEntries(entries: readonly (NlriEntry | string)[], family: Family): NlriEntry[] {
  return entries.map((e) => {
    const entry = typeof e === 'string' ? { prefix: e } : e;
    if (familyOfPrefix(entry.prefix) !== family) throw new Error(`prefix ${entry.prefix} is not ${family}`);
    const prefix = canonicalPrefix(entry.prefix);
    return entry.pathId === undefined ? { prefix } : { prefix, pathId: u32(entry.pathId, 'path identifier') };
  });
}

/**
 * MP_REACH_NLRI (RFC 4760 §3), optional non-transitive, for IPv4 or IPv6 unicast. `nextHops`: one address, or
 * for IPv6 a global and a link-local address (RFC 2545 §3). NLRI entries are prefix strings or NlriEntry (with
 * pathId for ADD-PATH sessions). The Extended Length flag is set when the value may exceed 255 octets.
 */
export function mpReach(family: Family, nextHops: readonly string[], nlri: readonly (NlriEntry | string)[]): Attr<'MP_REACH_NLRI'> {
  if (nextHops.length < 1 || nextHops.length > 2) throw new Error('MP_REACH_NLRI needs one or two next hops');
  if (nextHops.length === 2 && nextHops.some((h) => !h.includes(':'))) throw new Error('two next hops must both be IPv6 (global, link-local)');
  const hops = nextHops.map(canonicalAddress);
  const entries = nlriEntries(nlri, family);
  const { afi, safi } = familyAfiSafi(family);
  let len = 5;
  for (const h of hops) len += h.includes(':') ? 16 : 4;
  // Counting path ids wherever set: the flag must not depend on the session's ADD-PATH setting.
  len += nlriOctets(entries);
  return { type: 'MP_REACH_NLRI', flags: ext(ON, len), afi, safi, nextHops: hops, nlri: entries };
}

/** MP_UNREACH_NLRI (RFC 4760 §4), optional non-transitive. An empty list is the End-of-RIB marker (RFC 4724 §2). */
export function mpUnreach(family: Family, withdrawn: readonly (NlriEntry | string)[]): Attr<'MP_UNREACH_NLRI'> {
  const entries = nlriEntries(withdrawn, family);
  const { afi, safi } = familyAfiSafi(family);
  return { type: 'MP_UNREACH_NLRI', flags: ext(ON, 3 + nlriOctets(entries)), afi, safi, withdrawnRoutes: entries };
}

/** An UPDATE (RFC 4271 §4.3) from parts; prefix strings are canonicalised. */
export function update(parts: {
  withdrawnRoutes?: readonly (NlriEntry | string)[];
  pathAttributes?: readonly PathAttribute[];
  nlri?: readonly (NlriEntry | string)[];
}): UpdateMessage {
  return {
    type: 'UPDATE',
    withdrawnRoutes: nlriEntries(parts.withdrawnRoutes ?? [], 'ipv4-unicast'),
    pathAttributes: [...(parts.pathAttributes ?? [])],
    nlri: nlriEntries(parts.nlri ?? [], 'ipv4-unicast'),
  };
}

/**
 * The End-of-RIB marker of a family (RFC 4724 §2): for IPv4 unicast an UPDATE with no withdrawn routes, no
 * attributes and no NLRI; for other families an UPDATE holding only an empty MP_UNREACH_NLRI.
 */
export function endOfRib(family: Family): UpdateMessage {
  if (family === 'ipv4-unicast') return { type: 'UPDATE', withdrawnRoutes: [], pathAttributes: [], nlri: [] };
  return { type: 'UPDATE', withdrawnRoutes: [], pathAttributes: [mpUnreach(family, [])], nlri: [] };
}

// Community text (bgp/codec/communities.ts), reachable as build.parseCommunity too.
export { formatCommunity, formatLargeCommunity, parseCommunity, parseLargeCommunity } from './communities.ts';
