/**
 * ROUTE-REFRESH message (RFC 2918 §3, RFC 7313 §3.2): AFI(2) Message Subtype(1, formerly Reserved) SAFI(1), and for
 * subtype 0 optionally ORF entries (RFC 5291) kept raw in `extra`.
 *
 * Length rule (RFC 7313 §5): a body shorter than 4 octets, or a BoRR/EoRR (subtype 1/2) body other than exactly 4
 * octets → BgpError 7/1 ROUTE-REFRESH Message Error / Invalid Message Length, data = the complete message.
 * Subtypes 3..255 decode as numbers; RFC 7313 §5 says to ignore such a message (the session's decision).
 */
import { RouteRefreshSubtype } from '../constants.ts';
import { BgpError } from '../errors.ts';
import type { ByteWriter } from '../wire/writer.ts';
import type { RouteRefreshMessage } from './types.ts';

/** Human names of ROUTE-REFRESH subtypes (RFC 7313 §3.2). */
export const ROUTE_REFRESH_SUBTYPE_NAMES: Readonly<Record<number, string>> = {
  0: 'Normal route refresh request',
  1: 'Beginning of Route Refresh',
  2: 'End of Route Refresh',
};

/**
 * Decodes a ROUTE-REFRESH from the whole message `msg` (header included, needed for the 7/1 data).
 * `extra` (a copy) is set only when the body is longer than 4 octets. Throws BgpError 7/1 (see module comment).
 */
export function decodeRouteRefresh(msg: Buffer): RouteRefreshMessage {
  const bodyLen = msg.length - 19;
  if (bodyLen < 4) throw BgpError.routeRefreshInvalidLength(msg);
  const afi = msg.readUInt16BE(19);
  const subtype = msg[21] as number;
  const safi = msg[22] as number;
  if (bodyLen === 4) return { type: 'ROUTE-REFRESH', afi, subtype, safi };
  if (subtype === RouteRefreshSubtype.BeginningOfRouteRefresh || subtype === RouteRefreshSubtype.EndOfRouteRefresh) {
    throw BgpError.routeRefreshInvalidLength(msg);
  }
  return { type: 'ROUTE-REFRESH', afi, subtype, safi, extra: Buffer.from(msg.subarray(23)) };
}

/** Encodes a ROUTE-REFRESH body into `w`. Throws RangeError (local bug) on out-of-range fields. */
export function encodeRouteRefreshBody(msg: RouteRefreshMessage, w: ByteWriter): void {
  w.u16(msg.afi).u8(msg.subtype).u8(msg.safi);
  if (msg.extra) w.bytes(msg.extra);
}
