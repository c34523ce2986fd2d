/**
 * The 19-octet common message header (RFC 4271 §4.1): Marker (16 octets of 0xff), Length (2), Type (1),
 * and the Message Header Error checks of RFC 4271 §6.1.
 *
 * Checks, in order (the first failing one is thrown):
 * 1. Marker not all ones → 1/1 Connection Not Synchronized (data empty).
 * 2. Length < 19 or > the maximum (4096, or 65535 after RFC 8654 extended message) → 1/2, data = the Length field.
 * 3. Type not 1..5 → 1/3 Bad Message Type, data = the Type octet.
 * 4. Type-specific minimums (RFC 4271 §6.1, RFC 8654 §4): OPEN 29..4096 (OPEN never uses extended length),
 *    UPDATE ≥ 23, KEEPALIVE == 19, NOTIFICATION ≥ 21 → 1/2 with the Length field.
 *    ROUTE-REFRESH is not checked here: its bad length is 7/1 with the whole message as data (RFC 7313 §5),
 *    which needs the body, so `decodeMessage` checks it.
 */
import { HEADER_LENGTH, MAX_MESSAGE_LENGTH, MARKER, MessageType } from '../constants.ts';
import { BgpError } from '../errors.ts';

/**
 * Minimum whole-message length in octets per message type code (RFC 4271 §4.2–§4.5, RFC 2918 §3): OPEN 29, UPDATE 23,
 * NOTIFICATION 21, KEEPALIVE 19 (also its only length), ROUTE-REFRESH 23 (checked by its decoder: a short one is
 * 7/1, RFC 7313 §5).
 */
export const MIN_LENGTH = {
  [MessageType.Open]: 29,
  [MessageType.Update]: 23,
  [MessageType.Notification]: 21,
  [MessageType.Keepalive]: HEADER_LENGTH,
  [MessageType.RouteRefresh]: 23,
} as const satisfies Record<MessageType, number>;

/** The decoded header fields. `length` is the whole message in octets (header included); `type` the wire code. */
export interface MessageHeader {
  readonly length: number;
  readonly type: MessageType;
}

/**
 * Validates the header starting at `buf[offset]` (19 octets must be present) and returns its Length field.
 * `maxLength` is 4096, or 65535 once the extended message capability is negotiated (RFC 8654).
 * Throws BgpError 1/1, 1/2 or 1/3 as described in the module comment; never anything else.
 */
export function checkHeader(buf: Buffer, offset: number, maxLength: number): number {
  if (buf.length - offset < HEADER_LENGTH) throw BgpError.badMessageLength(buf.length - offset, 'header truncated');
  // The Marker: 16 octets of all ones (RFC 4271 §4.1), read as octets (the length was checked above).
  let marker = 0xff;
  for (let i = offset; i < offset + 16; i++) marker &= buf[i] as number;
  if (marker !== 0xff) throw BgpError.connectionNotSynchronized();
  const length = ((buf[offset + 16] as number) << 8) | (buf[offset + 17] as number);
  if (length < HEADER_LENGTH || length > maxLength) {
    throw BgpError.badMessageLength(length, `length ${length} outside ${HEADER_LENGTH}..${maxLength}`);
  }
  const type = buf[offset + 18] as number;
  switch (type) {
    case MessageType.Open:
      if (length < MIN_LENGTH[type] || length > MAX_MESSAGE_LENGTH) throw BgpError.badMessageLength(length, `OPEN length ${length}`);
      break;
    case MessageType.Update:
    case MessageType.Notification:
      if (length < MIN_LENGTH[type]) throw BgpError.badMessageLength(length, `message type ${type} length ${length} < ${MIN_LENGTH[type]}`);
      break;
    case MessageType.Keepalive:
      if (length !== MIN_LENGTH[type]) throw BgpError.badMessageLength(length, `KEEPALIVE length ${length} != 19`);
      break;
    case MessageType.RouteRefresh:
      break;
    default:
      throw BgpError.badMessageType(type);
  }
  return length;
}

/**
 * Decodes and validates the header at the start of `buf` (see `checkHeader`).
 * Throws BgpError 1/1, 1/2, 1/3.
 */
export function decodeHeader(buf: Buffer, maxLength: number): MessageHeader {
  const length = checkHeader(buf, 0, maxLength);
  return { length, type: buf[18] as MessageType };
}

/** Writes a header (marker, `length`, `type`) at `buf[offset]`. No checks: used by encoders after sizing. */
export function writeHeader(buf: Buffer, offset: number, length: number, type: MessageType): void {
  MARKER.copy(buf, offset);
  buf[offset + 16] = length >>> 8;
  buf[offset + 17] = length & 0xff;
  buf[offset + 18] = type;
}
