/**
 * UPDATE message body (RFC 4271 §4.3), after the 19-octet header:
 *
 *   Withdrawn Routes Length (2) | Withdrawn Routes | Total Path Attribute Length (2) | Path Attributes | NLRI
 *
 * Two readers share one attribute walker (attributes.ts):
 * - `decodeUpdate` applies RFC 7606 (revised error handling): framing problems and malformed MP_REACH_NLRI /
 *   MP_UNREACH_NLRI throw a BgpError (session reset); everything else is reported in the result as
 *   treat-as-withdraw or attribute-discard.
 * - `validateUpdateStrict` applies the classic RFC 4271 §6.3 rules and returns the BgpError (NOTIFICATION) the
 *   first problem calls for, for tests and for operators who want strict behaviour.
 */
import type { Family } from '../constants.ts';
import { AttrTypeCode } from '../constants.ts';
import { BgpError } from '../errors.ts';
import { ByteWriter } from '../wire/writer.ts';
import { ATTRIBUTE_INFO, attributeTypeCode, issueToError, walkAttributes, wasSeen, writeAttribute } from './attributes.ts';
import type { WalkResult } from './attributes.ts';
import { decodeNlriInto, nlriFieldLength, writeNlri } from './nlri.ts';
import type { CodecContext, NlriEntry, PathAttribute, UpdateDecodeResult, UpdateMessage } from './types.ts';
import { familyOf } from './types.ts';

interface Framing {
  readonly withdrawnEnd: number;
  readonly attrStart: number;
  readonly attrEnd: number;
}

/**
 * RFC 4271 §6.3 first check: the two length fields must fit the body `buf[start..]`. Offsets returned are into `buf`.
 * Throws BgpError 3/1.
 */
function frame(buf: Buffer, start: number): Framing {
  const len = buf.length - start;
  if (len < 4) throw BgpError.malformedAttributeList(`UPDATE body of ${len} octets is shorter than 4`);
  const wl = ((buf[start] as number) << 8) | (buf[start + 1] as number);
  if (2 + wl + 2 > len) throw BgpError.malformedAttributeList(`Withdrawn Routes Length ${wl} exceeds the message (${len - 4} octets available)`);
  const al = ((buf[start + 2 + wl] as number) << 8) | (buf[start + 3 + wl] as number);
  if (4 + wl + al > len) {
    throw BgpError.malformedAttributeList(`Total Path Attribute Length ${al} exceeds the message (${len - 4 - wl} octets available)`);
  }
  return { withdrawnEnd: start + 2 + wl, attrStart: start + 4 + wl, attrEnd: start + 4 + wl + al };
}

/** The empty lists of a clean UPDATE, shared (UpdateDecodeResult's lists are read-only). */
const NONE: readonly never[] = Object.freeze([]);

/** Which mandatory well-known attribute is missing, if any (RFC 4271 §5, RFC 4760 §3 for NEXT_HOP), in type-code order. */
function missingWellKnown(walk: WalkResult, hasBodyNlri: boolean): number | undefined {
  const hasMpReach = wasSeen(walk.seen, AttrTypeCode.MP_REACH_NLRI);
  if (!hasBodyNlri && !hasMpReach) return undefined;
  if (!wasSeen(walk.seen, AttrTypeCode.ORIGIN)) return AttrTypeCode.ORIGIN;
  if (!wasSeen(walk.seen, AttrTypeCode.AS_PATH)) return AttrTypeCode.AS_PATH;
  if (hasBodyNlri && !wasSeen(walk.seen, AttrTypeCode.NEXT_HOP)) return AttrTypeCode.NEXT_HOP;
  return undefined;
}

/**
 * Decodes an UPDATE body (the bytes after the 19-octet header: `body[start..]`, by default all of `body`) with
 * RFC 7606 error handling.
 *
 * IPv4 withdrawn routes and NLRI use ADD-PATH when `ctx.addPath.ipv4`; MP_REACH/MP_UNREACH NLRI per their family.
 * AS_PATH and AGGREGATOR use 4-octet ASes when `ctx.fourOctetAs`.
 *
 * @returns the message plus RFC 7606 outcomes: `treatAsWithdraw` (malformed ORIGIN, AS_PATH, NEXT_HOP, MED,
 *   LOCAL_PREF, COMMUNITIES, ORIGINATOR_ID, CLUSTER_LIST, EXTENDED_COMMUNITIES, the IPv6 Address Specific Extended
 *   Community, LARGE_COMMUNITY, an invalid NEXT_HOP address, an unrecognised well-known attribute, or a missing mandatory attribute when NLRI are present, §3 d;
 *   a bad NEXT_HOP is only reported, not withdrawn, when the UPDATE has no IPv4 NLRI, RFC 4760 §3);
 *   `discardedAttributes` (type codes: malformed ATOMIC_AGGREGATE, AGGREGATOR, AS4_PATH, AS4_AGGREGATOR, repeated
 *   attributes, §3 g, and AS4_PATH / AS4_AGGREGATOR received on a 4-octet AS session, RFC 6793 §3); `problems`
 *   (one human-readable line each, also for a Partial bit RFC 4271 objects to but RFC 7606 ignores). Malformed
 *   attributes whose action is treat-as-withdraw are kept as UNKNOWN.
 * @throws BgpError (session-fatal only): 3/1 when the length fields are inconsistent, an attribute overruns the
 *   list, or MP_REACH_NLRI/MP_UNREACH_NLRI is repeated; 3/10 for a bad prefix in withdrawn routes, NLRI or an MP
 *   attribute; 3/9 for a malformed MP attribute; 3/4 for MP attribute flags (RFC 7606 §3 j, §5.3; RFC 4760 §7).
 */
export function decodeUpdate(body: Buffer, ctx: CodecContext, start = 0): UpdateDecodeResult {
  const f = frame(body, start);
  const addPath4 = ctx.addPath.ipv4 === true;
  const withdrawnRoutes: NlriEntry[] = [];
  decodeNlriInto(body, start + 2, f.withdrawnEnd, 'ipv4-unicast', addPath4, withdrawnRoutes, 'Withdrawn Routes');
  const walk = walkAttributes(body, f.attrStart, f.attrEnd, ctx);
  const nlri: NlriEntry[] = [];
  decodeNlriInto(body, f.attrEnd, body.length, 'ipv4-unicast', addPath4, nlri, 'NLRI');

  let treatAsWithdraw = false;
  let discarded: number[] | undefined;
  let problems: string[] | undefined;
  for (const issue of walk.issues) {
    if (issue.action === 'session-reset') throw issueToError(issue);
    let action = issue.action;
    // RFC 4760 §3: without IPv4 NLRI the NEXT_HOP attribute SHOULD be ignored, so a bad one must not withdraw the
    // MP_REACH_NLRI routes of the same UPDATE (test/bgp/codec/regressions.test.ts).
    if (issue.typeCode === AttrTypeCode.NEXT_HOP && action === 'treat-as-withdraw' && nlri.length === 0) action = 'ignored';
    (problems ??= []).push(`${issue.detail} (RFC 7606: ${action})`);
    if (action === 'treat-as-withdraw') treatAsWithdraw = true;
    else if (action !== 'ignored') (discarded ??= []).push(issue.typeCode);
  }
  let pathAttributes = walk.attrs;
  if (ctx.fourOctetAs && (wasSeen(walk.seen, AttrTypeCode.AS4_PATH) || wasSeen(walk.seen, AttrTypeCode.AS4_AGGREGATOR))) {
    // RFC 6793 §3: AS4_PATH and AS4_AGGREGATOR are not carried between NEW speakers; one received from a NEW
    // speaker MUST be discarded, never merged into a 4-octet path (test/bgp/codec/regressions.test.ts).
    pathAttributes = pathAttributes.filter((a) => {
      if (a.type !== 'AS4_PATH' && a.type !== 'AS4_AGGREGATOR') return true;
      (discarded ??= []).push(attributeTypeCode(a));
      (problems ??= []).push(`${a.type} received on a 4-octet AS session (RFC 6793 §3: attribute-discard)`);
      return false;
    });
  }
  const missing = missingWellKnown(walk, nlri.length > 0);
  if (missing !== undefined) {
    treatAsWithdraw = true;
    (problems ??= []).push(`missing well-known attribute ${ATTRIBUTE_INFO[missing]?.name} (${missing}) (RFC 7606 §3 d: treat-as-withdraw)`);
  }
  return {
    message: { type: 'UPDATE', withdrawnRoutes, pathAttributes, nlri },
    treatAsWithdraw,
    discardedAttributes: discarded ?? NONE,
    problems: problems ?? NONE,
  };
}

/**
 * Checks an UPDATE body with the classic RFC 4271 §6.3 rules and returns the NOTIFICATION the first problem calls
 * for, or undefined when the message is valid. Pure: never throws (a BgpError is returned, not thrown).
 *
 * Order: length fields (3/1); withdrawn routes (3/10); attributes in received order: framing (3/1), repeats (3/1),
 * unrecognised well-known (3/2, data = attribute), flags (3/4, data = attribute; Optional/Transitive bits wrong, or
 * Partial set on a well-known or optional non-transitive attribute), length (3/5, data = attribute),
 * ORIGIN value (3/6, data = attribute), AS_PATH syntax (3/11), NEXT_HOP address (3/8, data = attribute), optional
 * attribute value incl. MP_REACH/MP_UNREACH and AS4_PATH (3/9, data = attribute), MP prefixes (3/10); then missing
 * mandatory well-known attributes (3/3, data = type code); then NLRI (3/10).
 */
export function validateUpdateStrict(body: Buffer, ctx: CodecContext): BgpError | undefined {
  try {
    const f = frame(body, 0);
    const addPath4 = ctx.addPath.ipv4 === true;
    decodeNlriInto(body, 2, f.withdrawnEnd, 'ipv4-unicast', addPath4, [], 'Withdrawn Routes');
    const walk = walkAttributes(body, f.attrStart, f.attrEnd, ctx);
    const first = walk.issues[0];
    if (first) return issueToError(first);
    // Count NLRI before the missing-attribute check, but report bad NLRI only after it (RFC 4271 §6.3 order).
    let nlriError: BgpError | undefined;
    const nlri: NlriEntry[] = [];
    try {
      decodeNlriInto(body, f.attrEnd, body.length, 'ipv4-unicast', addPath4, nlri, 'NLRI');
    } catch (e) {
      if (!(e instanceof BgpError)) throw e;
      nlriError = e;
    }
    const missing = missingWellKnown(walk, nlri.length > 0 || (nlriError !== undefined && f.attrEnd < body.length));
    if (missing !== undefined) return BgpError.missingWellKnownAttribute(missing);
    return nlriError;
  } catch (e) {
    if (e instanceof BgpError) return e;
    throw e;
  }
}

/**
 * Encodes an UPDATE body (no header): withdrawn routes and NLRI as IPv4 (ADD-PATH per `ctx.addPath.ipv4`), then
 * the attributes in the given order (see writeAttribute). The caller (encodeMessage) adds the header and checks
 * the 4096/65535 octet limit. Throws Error/RangeError on values that cannot be encoded (bad prefix text, an IPv6
 * prefix in the IPv4 fields, out-of-range numbers), or if a field exceeds 65535 octets.
 */
export function encodeUpdate(msg: UpdateMessage, ctx: CodecContext): Buffer {
  const addPath4 = ctx.addPath.ipv4 === true;
  const wLen = nlriFieldLength(msg.withdrawnRoutes, addPath4);
  const nLen = nlriFieldLength(msg.nlri, addPath4);
  if (wLen > 0xffff) throw new RangeError(`withdrawn routes of ${wLen} octets exceed 65535`);
  const w = new ByteWriter(4 + wLen + nLen + 64 + msg.pathAttributes.length * 16);
  w.u16(wLen);
  writeNlri(w, msg.withdrawnRoutes, 'ipv4-unicast', addPath4);
  const lenAt = w.reserve(2);
  for (const a of msg.pathAttributes) writeAttribute(w, a, ctx);
  const aLen = w.length - lenAt - 2;
  if (aLen > 0xffff) throw new RangeError(`path attributes of ${aLen} octets exceed 65535`);
  w.setU16(lenAt, aLen);
  writeNlri(w, msg.nlri, 'ipv4-unicast', addPath4);
  return w.toBuffer();
}

/**
 * The End-of-RIB family if the UPDATE is an End-of-RIB marker (RFC 4724 §2): 'ipv4-unicast' for an UPDATE with
 * nothing in it; for an UPDATE whose only attribute is an empty MP_UNREACH_NLRI, its family ('ipv6-unicast', or
 * "afi/safi" such as "1/133" for families Herald does not decode). Otherwise undefined. Never throws.
 *
 * Pass the `UpdateDecodeResult` of a received UPDATE rather than its `message`: an UPDATE whose attributes were all
 * discarded under RFC 7606 (e.g. only a malformed ATOMIC_AGGREGATE) looks empty afterwards but was not an
 * End-of-RIB on the wire, and only the result knows (a message alone is judged as it stands).
 */
export function endOfRibFamily(update: UpdateMessage | UpdateDecodeResult): Family | string | undefined {
  let msg: UpdateMessage;
  if ('message' in update) {
    if (update.discardedAttributes.length > 0) return undefined;
    msg = update.message;
  } else msg = update;
  if (msg.withdrawnRoutes.length > 0 || msg.nlri.length > 0) return undefined;
  if (msg.pathAttributes.length === 0) return 'ipv4-unicast';
  if (msg.pathAttributes.length !== 1) return undefined;
  const a = msg.pathAttributes[0] as PathAttribute;
  if (a.type !== 'MP_UNREACH_NLRI' || a.withdrawnRoutes.length > 0) return undefined;
  if (a.raw && a.raw.length !== 3) return undefined;
  return familyOf(a.afi, a.safi) ?? `${a.afi}/${a.safi}`;
}
