/**
 * UPDATE packer: turns pending Adj-RIB-Out changes into whole UPDATE messages (header included), one at a time.
 *
 * Layouts (RFC 4271 §4.3, RFC 4760 §3-§4):
 * - IPv4 withdraw:  header | Withdrawn Routes Length | withdrawn NLRI | Total Path Attribute Length = 0
 * - IPv6 withdraw:  header | 0 | attrs len | MP_UNREACH_NLRI (AFI 2, SAFI 1, NLRI)
 * - IPv4 announce:  header | 0 | attrs len | path attributes (group) | NLRI
 * - IPv6 announce:  header | 0 | attrs len | path attributes (group) | MP_REACH_NLRI (AFI 2, SAFI 1, next hop, NLRI)
 * - End-of-RIB (RFC 4724 §2): an empty IPv4 UPDATE, or an UPDATE holding only an empty MP_UNREACH_NLRI.
 *
 * The attribute block of a group is encoded once (`encodeAttributes`) and copied into each UPDATE of that group;
 * NLRI are written straight from the route table's columns (route-table.ts), so packing 100,000 routes allocates one
 * Buffer per UPDATE.
 * MP_REACH_NLRI / MP_UNREACH_NLRI always use the Extended Length flag (RFC 4271 §4.3 allows it for any length).
 */
import { AttrFlag, AttrTypeCode, HEADER_LENGTH, MARKER, MessageType } from '../constants.ts';
import type { Family } from '../constants.ts';
import type { CodecContext, PathAttribute } from '../codec/types.ts';
import type { ExportedAttributes } from './export.ts';
import { encodePathAttributes } from '../codec/attributes.ts';
import { parseIPv6 } from './route.ts';
import type { RouteTable } from './route-table.ts';

/** What one packed UPDATE holds, for counters and events (AdjRibOut's `lastSent`). */
export interface SentInfo {
  readonly kind: 'withdraw' | 'announce' | 'endOfRib';
  readonly family: Family;
  /** Number of NLRI in the message. */
  readonly prefixes: number;
  readonly bytes: number;
}

/** Octets before the first withdrawn route or attribute: header + Withdrawn Routes Length. */
const BODY_START = HEADER_LENGTH + 2;
/** Fixed octets of an UPDATE with no withdrawn routes: header, the two 2-octet length fields. */
export const UPDATE_FIXED = HEADER_LENGTH + 4;
/** MP_UNREACH_NLRI fixed part: flags, type, 2-octet length, AFI, SAFI. */
const MP_UNREACH_FIXED = 4 + 3;
/** MP_REACH_NLRI fixed part before the next hop: flags, type, 2-octet length, AFI, SAFI, next-hop length. */
const MP_REACH_FIXED = 4 + 4;

function writeHeader(buf: Buffer, type: number): void {
  MARKER.copy(buf, 0);
  buf.writeUInt16BE(buf.length, 16);
  buf[18] = type;
}

/** Codec contexts for encoding attribute blocks: only the AS width matters here (no ADD-PATH, no NLRI inside). */
const CTX_AS4: CodecContext = { fourOctetAs: true, extendedMessage: false, addPath: {} };
const CTX_AS2: CodecContext = { fourOctetAs: false, extendedMessage: false, addPath: {} };

/**
 * Encodes the path attributes Herald originates, in the given order, with the codec's attribute encoder
 * (`encodePathAttributes`). AS_PATH uses 4-octet ASes when `fourOctetAs` (RFC 6793 §4.1), else 2-octet ones.
 * Throws RangeError for a value out of range, e.g. an AS above 65535 in a 2-octet AS_PATH (a local bug).
 */
export function encodeAttributes(attrs: readonly PathAttribute[], fourOctetAs: boolean): Buffer {
  return encodePathAttributes(attrs, fourOctetAs ? CTX_AS4 : CTX_AS2);
}

/** The MP_REACH_NLRI next-hop octets for an IPv6 next hop (16 octets, RFC 2545 §3). */
export function ipv6NextHopBytes(nextHop: string): Buffer {
  return parseIPv6(nextHop);
}

/** Octets available for withdrawn NLRI in one UPDATE of `family` at `maxLength`. */
export function withdrawCapacity(family: Family, maxLength: number): number {
  return family === 'ipv4-unicast' ? maxLength - UPDATE_FIXED : maxLength - UPDATE_FIXED - MP_UNREACH_FIXED;
}

/** Octets available for NLRI in one announcing UPDATE of `family` with `attrs` (and IPv6 `mpNextHop`). */
export function announceCapacity(family: Family, attrs: Buffer, mpNextHop: Buffer | undefined, maxLength: number): number {
  const base = maxLength - UPDATE_FIXED - attrs.length;
  return family === 'ipv4-unicast' ? base : base - MP_REACH_FIXED - (mpNextHop?.length ?? 0) - 1;
}

/**
 * Builds one withdrawing UPDATE for the routes of `table` in `slots` (all of `family`, total NLRI size within
 * `withdrawCapacity`). No slots give the End-of-RIB marker of the family (RFC 4724 §2).
 */
export function buildWithdraw(family: Family, table: RouteTable | undefined, slots: readonly number[]): Buffer {
  let nlriLen = 0;
  for (const s of slots) nlriLen += table!.nlriSize(s);
  const v4 = family === 'ipv4-unicast';
  const len = UPDATE_FIXED + nlriLen + (v4 ? 0 : MP_UNREACH_FIXED);
  const buf = Buffer.allocUnsafe(len);
  writeHeader(buf, MessageType.Update);
  let off = BODY_START;
  if (v4) {
    buf.writeUInt16BE(nlriLen, HEADER_LENGTH);
    for (const s of slots) off = table!.writeNlri(buf, off, s);
    buf.writeUInt16BE(0, off);
    off += 2;
  } else {
    buf.writeUInt16BE(0, HEADER_LENGTH);
    buf.writeUInt16BE(MP_UNREACH_FIXED + nlriLen, off);
    off += 2;
    buf[off++] = AttrFlag.Optional | AttrFlag.ExtendedLength;
    buf[off++] = AttrTypeCode.MP_UNREACH_NLRI;
    buf.writeUInt16BE(3 + nlriLen, off);
    off += 2;
    buf.writeUInt16BE(2, off); // AFI IPv6
    buf[off + 2] = 1; // SAFI unicast
    off += 3;
    for (const s of slots) off = table!.writeNlri(buf, off, s);
  }
  if (off !== len) throw new Error(`packer bug: withdraw length ${off} != ${len}`);
  return buf;
}

/** The End-of-RIB marker of `family` (RFC 4724 §2): an UPDATE with nothing in it, or an empty MP_UNREACH_NLRI. */
export function endOfRibMessage(family: Family): Buffer {
  return buildWithdraw(family, undefined, []);
}

/**
 * Builds one announcing UPDATE: the group's encoded `attrs`, then the NLRI of the routes of `table` in `slots` (IPv4
 * in the body; IPv6 inside an MP_REACH_NLRI with `mpNextHop`, placed after the other attributes). The caller keeps
 * the NLRI within `announceCapacity`.
 */
export function buildAnnounce(family: Family, attrs: Buffer, mpNextHop: Buffer | undefined, table: RouteTable, slots: readonly number[]): Buffer {
  let nlriLen = 0;
  for (const s of slots) nlriLen += table.nlriSize(s);
  const v4 = family === 'ipv4-unicast';
  const nh = mpNextHop ?? Buffer.alloc(0);
  if (!v4 && nh.length === 0) throw new RangeError('IPv6 announce needs a next hop');
  const mpLen = v4 ? 0 : MP_REACH_FIXED + nh.length + 1 + nlriLen;
  const attrTotal = attrs.length + mpLen;
  const len = UPDATE_FIXED + attrTotal + (v4 ? nlriLen : 0);
  const buf = Buffer.allocUnsafe(len);
  writeHeader(buf, MessageType.Update);
  buf.writeUInt16BE(0, HEADER_LENGTH);
  buf.writeUInt16BE(attrTotal, BODY_START);
  let off = UPDATE_FIXED;
  off += attrs.copy(buf, off);
  if (!v4) {
    buf[off++] = AttrFlag.Optional | AttrFlag.ExtendedLength;
    buf[off++] = AttrTypeCode.MP_REACH_NLRI;
    buf.writeUInt16BE(mpLen - 4, off);
    off += 2;
    buf.writeUInt16BE(2, off);
    buf[off + 2] = 1;
    buf[off + 3] = nh.length;
    off += 4;
    off += nh.copy(buf, off);
    buf[off++] = 0; // Reserved
  }
  for (const s of slots) off = table.writeNlri(buf, off, s);
  if (off !== len) throw new Error(`packer bug: announce length ${off} != ${len}`);
  return buf;
}

/**
 * Encodes the attributes of one Adj-RIB-Out group (routes with byte-identical attributes) toward a peer: the path attributes (`encodeAttributes`) and, for IPv6, the
 * MP_REACH_NLRI next hop (RFC 2545 §3). What the encoder refuses (an IPv6 next hop with a zone id, a value out of
 * range, attributes too long for a 4096-octet UPDATE) comes back as `{ unsendable: reason }`, never as a throw:
 * a throw here would end the session with Cease / Out of Resources and send nothing at all.
 */
export function encodeGroup(ex: ExportedAttributes, fourOctetAs: boolean): { attrs: Buffer; mpNextHop: Buffer | undefined } | { unsendable: string } {
  let mpNextHop: Buffer | undefined;
  if (ex.family === 'ipv6-unicast') {
    try {
      mpNextHop = ipv6NextHopBytes(ex.nextHop);
    } catch (err) {
      return { unsendable: `${ex.family} next hop ${JSON.stringify(ex.nextHop)} cannot be encoded: ${errorText(err)}` };
    }
  }
  let attrs: Buffer;
  try {
    attrs = encodeAttributes(ex.attributes, fourOctetAs);
  } catch (err) {
    return { unsendable: `${ex.family} path attributes cannot be encoded: ${errorText(err)}` };
  }
  if (announceCapacity(ex.family, attrs, mpNextHop, MIN_MAX_MESSAGE_LENGTH) < MAX_NLRI_OCTETS) {
    return { unsendable: `${ex.family} path attributes take ${attrs.length} octets: too long for a ${MIN_MAX_MESSAGE_LENGTH}-octet UPDATE` };
  }
  return { attrs, mpNextHop };
}

/** The smallest maximum message length a session can have (RFC 4271 §4.1; RFC 8654 raises it to 65535). */
const MIN_MAX_MESSAGE_LENGTH = 4096;
/** Octets of the longest NLRI entry (an IPv6 /128: length octet + 16). */
export const MAX_NLRI_OCTETS = 17;

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
