/**
 * MP_REACH_NLRI (type 14) and MP_UNREACH_NLRI (type 15) values (RFC 4760 §3, §4).
 *
 * MP_REACH_NLRI value: AFI (2) | SAFI (1) | Next Hop Length (1) | Next Hop | Reserved (1) | NLRI.
 * MP_UNREACH_NLRI value: AFI (2) | SAFI (1) | Withdrawn Routes.
 *
 * IPv4 and IPv6 unicast are decoded: next hops of 4 octets (IPv4), 16 (IPv6) or 32 (IPv6 global + link-local,
 * RFC 2545 §3), which also covers IPv4 NLRI with an IPv6 next hop (RFC 8950); NLRI with ADD-PATH per family from
 * the context (RFC 7911). Other AFI/SAFI pairs are kept raw (`raw` = the whole value) and re-encoded byte for byte.
 * A decoded unicast value with a non-zero Reserved octet also keeps `raw`, so it re-encodes exactly.
 *
 * Errors: a malformed header or next hop is RFC 4760 §7's "Optional Attribute Error" (3/9, data = the whole
 * attribute); a bad prefix inside is 3/10 Invalid Network Field. Both are session-fatal (RFC 7606 §3 j, §5.3):
 * the decoders return an AttrIssue and the caller throws.
 */
import type { Family } from '../constants.ts';
import { UpdateSubcode } from '../constants.ts';
import { BgpError } from '../errors.ts';
import type { ByteWriter } from '../wire/writer.ts';
import type { AttrIssue } from './attributes.ts';
import { decodeNlriInto, formatIPv4, formatIPv6, formatPrefixBits, nlriFieldLength, parseAddress, writeNlri } from './nlri.ts';
import type { CodecContext, NlriEntry, PathAttribute } from './types.ts';
import { familyOf } from './types.ts';

type MpReach = Extract<PathAttribute, { type: 'MP_REACH_NLRI' }>;
type MpUnreach = Extract<PathAttribute, { type: 'MP_UNREACH_NLRI' }>;

/** AFI/SAFI of a family we decode. */
export function familyAfiSafi(family: Family): { afi: number; safi: number } {
  return family === 'ipv4-unicast' ? { afi: 1, safi: 1 } : { afi: 2, safi: 1 };
}

/** Whether NLRI of `family` carry a Path Identifier in this direction (RFC 7911 §3). */
export function addPathFor(ctx: CodecContext, family: Family): boolean {
  return family === 'ipv4-unicast' ? ctx.addPath.ipv4 === true : ctx.addPath.ipv6 === true;
}

function decodeNextHops(buf: Buffer, off: number, len: number): string[] | undefined {
  if (len === 4) return [formatIPv4(buf, off)];
  if (len === 16) return [formatIPv6(buf, off)];
  if (len === 32) return [formatIPv6(buf, off), formatIPv6(buf, off + 16)];
  return undefined;
}

function mpIssue(detail: string): AttrIssue {
  return { subcode: UpdateSubcode.OptionalAttributeError, detail };
}

/** Runs an NLRI decode, turning its BgpError 3/10 into an AttrIssue. */
function nlriIssue(e: unknown): AttrIssue {
  // Keep only the detail after "UPDATE Message Error / Invalid Network Field: "; the caller rebuilds the error.
  if (e instanceof BgpError) return { subcode: e.subcode, detail: e.message.replace(/^[^:]*: /, '') };
  throw e;
}

/**
 * Decodes an MP_REACH_NLRI value in `buf[start, end)`. With `mrtRibEntry`, also accepts the RFC 6396 §4.3.4
 * abbreviated form (next-hop length + next hop only), recognised by its length (1 + next-hop length); AFI is then
 * inferred from the next-hop length (4 → IPv4, else IPv6), SAFI 1, and `mrtAbbreviated` is set.
 * @returns the attribute, or an AttrIssue (3/9 malformed header/next hop, 3/10 bad prefix). Never throws.
 */
export function decodeMpReach(buf: Buffer, start: number, end: number, flags: number, ctx: CodecContext, mrtRibEntry: boolean): MpReach | AttrIssue {
  const len = end - start;
  if (mrtRibEntry && len >= 1 && (buf[start] as number) + 1 === len) {
    const nhLen = buf[start] as number;
    const nextHops = decodeNextHops(buf, start + 1, nhLen);
    if (!nextHops) return mpIssue(`MP_REACH_NLRI (MRT abbreviated): next hop length ${nhLen} not 4, 16 or 32`);
    return { type: 'MP_REACH_NLRI', flags, afi: nhLen === 4 ? 1 : 2, safi: 1, nextHops, nlri: [], mrtAbbreviated: true };
  }
  if (len < 5) return mpIssue(`MP_REACH_NLRI value of ${len} octets is shorter than 5`);
  const afi = ((buf[start] as number) << 8) | (buf[start + 1] as number);
  const safi = buf[start + 2] as number;
  const nhLen = buf[start + 3] as number;
  if (4 + nhLen + 1 > len) return mpIssue(`MP_REACH_NLRI next hop length ${nhLen} overruns the attribute (${len} octets)`);
  const family = familyOf(afi, safi);
  if (!family) {
    return { type: 'MP_REACH_NLRI', flags, afi, safi, nextHops: [], nlri: [], raw: Buffer.from(buf.subarray(start, end)) };
  }
  const nextHops = decodeNextHops(buf, start + 4, nhLen);
  if (!nextHops) return mpIssue(`MP_REACH_NLRI ${family}: next hop length ${nhLen} not 4, 16 or 32`);
  const reserved = buf[start + 4 + nhLen] as number;
  const nlri: NlriEntry[] = [];
  try {
    decodeNlriInto(buf, start + 5 + nhLen, end, family, addPathFor(ctx, family), nlri, `MP_REACH_NLRI ${family}`);
  } catch (e) {
    return nlriIssue(e);
  }
  if (reserved !== 0) {
    return { type: 'MP_REACH_NLRI', flags, afi, safi, nextHops, nlri, raw: Buffer.from(buf.subarray(start, end)) };
  }
  return { type: 'MP_REACH_NLRI', flags, afi, safi, nextHops, nlri };
}

/**
 * Decodes an MP_UNREACH_NLRI value in `buf[start, end)` (RFC 4760 §4). Empty withdrawn routes = End-of-RIB
 * (RFC 4724 §2). @returns the attribute, or an AttrIssue (3/9 shorter than 3 octets, 3/10 bad prefix). Never throws.
 */
export function decodeMpUnreach(buf: Buffer, start: number, end: number, flags: number, ctx: CodecContext): MpUnreach | AttrIssue {
  const len = end - start;
  if (len < 3) return mpIssue(`MP_UNREACH_NLRI value of ${len} octets is shorter than 3`);
  const afi = ((buf[start] as number) << 8) | (buf[start + 1] as number);
  const safi = buf[start + 2] as number;
  const family = familyOf(afi, safi);
  if (!family) return { type: 'MP_UNREACH_NLRI', flags, afi, safi, withdrawnRoutes: [], raw: Buffer.from(buf.subarray(start, end)) };
  const withdrawnRoutes: NlriEntry[] = [];
  try {
    decodeNlriInto(buf, start + 3, end, family, addPathFor(ctx, family), withdrawnRoutes, `MP_UNREACH_NLRI ${family}`);
  } catch (e) {
    return nlriIssue(e);
  }
  return { type: 'MP_UNREACH_NLRI', flags, afi, safi, withdrawnRoutes };
}

/** One labeled (RFC 8277) or VPN (RFC 4364 §4.3.4, RFC 4659) NLRI: MPLS labels, Route Distinguisher, prefix. */
export interface LabeledPrefix {
  /** The 20-bit label values, outermost first. */
  readonly labels: readonly number[];
  /** Route Distinguisher text (see formatRouteDistinguisher); VPN NLRI only. */
  readonly routeDistinguisher?: string;
  /** Canonical prefix, host bits zeroed. */
  readonly prefix: string;
}

/**
 * Decodes one labeled (SAFI 4, RFC 8277 §2) or, with `vpn`, VPN (SAFI 128, RFC 4364 §4.3.4) NLRI at `buf[off]`:
 * Length in bits (covering labels, RD and prefix) | labels, 3 octets each, up to the one with the Bottom-of-Stack
 * bit (or the withdrawal value 0x800000, RFC 8277 §2.4) | Route Distinguisher, 8 octets (VPN) | prefix octets.
 * @returns the entry and the offset after it.
 * Throws BgpError 3/10 (Invalid Network Field) when the label stack or RD is truncated, the prefix length left is out
 * of range for `family`, or the NLRI runs past `end`.
 */
export function decodeLabeledPrefixAt(
  buf: Buffer,
  off: number,
  end: number,
  family: Family,
  vpn: boolean,
  where = 'NLRI',
): { entry: LabeledPrefix; next: number } {
  if (off >= end) throw BgpError.invalidNetworkField(`${where}: missing NLRI length octet`);
  const bits = buf[off] as number;
  const next = off + 1 + ((bits + 7) >>> 3);
  if (next > end) throw BgpError.invalidNetworkField(`${where}: NLRI of ${bits} bits overruns the field`);
  let o = off + 1;
  const labels: number[] = [];
  for (;;) {
    if (o + 3 > next) throw BgpError.invalidNetworkField(`${where}: truncated label stack`);
    const v = ((buf[o] as number) << 16) | ((buf[o + 1] as number) << 8) | (buf[o + 2] as number);
    labels.push(v >>> 4);
    o += 3;
    if (v & 1 || v === 0x800000) break;
  }
  let routeDistinguisher: string | undefined;
  if (vpn) {
    if (o + 8 > next) throw BgpError.invalidNetworkField(`${where}: truncated Route Distinguisher`);
    routeDistinguisher = formatRouteDistinguisher(buf, o);
    o += 8;
  }
  const prefixBits = bits - (o - off - 1) * 8;
  const max = family === 'ipv6-unicast' ? 128 : 32;
  if (prefixBits < 0 || prefixBits > max) throw BgpError.invalidNetworkField(`${where}: NLRI length ${bits} leaves a prefix of ${prefixBits} bits`);
  const prefix = formatPrefixBits(buf, o, next, prefixBits, family, where);
  return { entry: routeDistinguisher !== undefined ? { labels, routeDistinguisher, prefix } : { labels, prefix }, next };
}

/**
 * Text of the 8-octet Route Distinguisher at `buf[off]` (RFC 4364 §4.2): type 0 "asn:nn" (2-octet AS, 4-octet
 * number), type 1 "a.b.c.d:nn", type 2 "asn:nn" (4-octet AS, 2-octet number); other types as 16 hex digits.
 * The caller guarantees the bounds.
 */
export function formatRouteDistinguisher(buf: Buffer, off: number): string {
  const type = buf.readUInt16BE(off);
  if (type === 0) return `${buf.readUInt16BE(off + 2)}:${buf.readUInt32BE(off + 4)}`;
  if (type === 1) return `${formatIPv4(buf, off + 2)}:${buf.readUInt16BE(off + 6)}`;
  if (type === 2) return `${buf.readUInt32BE(off + 2)}:${buf.readUInt16BE(off + 6)}`;
  return buf.subarray(off, off + 8).toString('hex');
}

function nextHopBytes(attr: MpReach): Buffer[] {
  return attr.nextHops.map((h) => parseAddress(h));
}

/** The decoded family of an MP attribute without `raw`. Throws Error for other AFI/SAFI pairs (they need `raw`). */
function encodableFamily(attr: MpReach | MpUnreach): Family {
  const family = familyOf(attr.afi, attr.safi);
  if (!family) throw new Error(`${attr.type} ${attr.afi}/${attr.safi} needs a raw value to encode`);
  return family;
}

/** Octets of the MP_REACH_NLRI value. Throws Error on malformed address or prefix text, or a non-unicast family without `raw`. */
export function mpReachValueLength(attr: MpReach, ctx: CodecContext): number {
  if (attr.raw) return attr.raw.length;
  let nh = 0;
  for (const h of attr.nextHops) nh += h.includes(':') ? 16 : 4;
  if (attr.mrtAbbreviated) return 1 + nh;
  const family = encodableFamily(attr);
  return 5 + nh + nlriFieldLength(attr.nlri, addPathFor(ctx, family));
}

/** Writes the MP_REACH_NLRI value (RFC 4760 §3; RFC 6396 §4.3.4 form when `mrtAbbreviated`). Throws Error on bad text. */
export function writeMpReachValue(w: ByteWriter, attr: MpReach, ctx: CodecContext): void {
  if (attr.raw) {
    w.bytes(attr.raw);
    return;
  }
  const hops = nextHopBytes(attr);
  let nhLen = 0;
  for (const h of hops) nhLen += h.length;
  if (attr.mrtAbbreviated) {
    w.u8(nhLen);
    for (const h of hops) w.bytes(h);
    return;
  }
  const family = encodableFamily(attr);
  w.u16(attr.afi).u8(attr.safi).u8(nhLen);
  for (const h of hops) w.bytes(h);
  w.u8(0); // Reserved (RFC 4760 §3)
  writeNlri(w, attr.nlri, family, addPathFor(ctx, family));
}

/** Octets of the MP_UNREACH_NLRI value. Throws Error on bad prefix text or a non-unicast family without `raw`. */
export function mpUnreachValueLength(attr: MpUnreach, ctx: CodecContext): number {
  if (attr.raw) return attr.raw.length;
  const family = encodableFamily(attr);
  return 3 + nlriFieldLength(attr.withdrawnRoutes, addPathFor(ctx, family));
}

/** Writes the MP_UNREACH_NLRI value (RFC 4760 §4). Throws Error on bad prefix text. */
export function writeMpUnreachValue(w: ByteWriter, attr: MpUnreach, ctx: CodecContext): void {
  if (attr.raw) {
    w.bytes(attr.raw);
    return;
  }
  const family = encodableFamily(attr);
  w.u16(attr.afi).u8(attr.safi);
  writeNlri(w, attr.withdrawnRoutes, family, addPathFor(ctx, family));
}
