/**
 * NOTIFICATION message (RFC 4271 §4.5): Error Code(1) Error Subcode(1) Data(variable), with the RFC 9003 shutdown
 * communication of Cease / Administrative Shutdown (6/2) and Cease / Administrative Reset (6/4), also inside a
 * Cease / Hard Reset (6/9, RFC 8538 §3.1: Data = the inner Error Code, Error Subcode and Data).
 */
import { isUtf8 } from 'node:buffer';
import { CeaseSubcode, ErrorCode } from '../constants.ts';
import { BgpError, encodeShutdownCommunication } from '../errors.ts';
import type { ByteWriter } from '../wire/writer.ts';
import type { NotificationMessage } from './types.ts';

/**
 * Parses an RFC 9003 §2 shutdown communication from NOTIFICATION data: Length(1) then that many octets of UTF-8.
 * Returns the text, or undefined when the data is empty, the length exceeds the data, or the text is not UTF-8.
 * Octets after the communication are allowed and ignored here (they stay in `data`).
 */
export function parseShutdownCommunication(data: Buffer): string | undefined {
  if (data.length < 1) return undefined;
  const len = data[0] as number;
  if (1 + len > data.length) return undefined;
  const text = data.subarray(1, 1 + len);
  if (!isUtf8(text)) return undefined;
  return text.toString('utf8');
}

function carriesText(errorCode: number, errorSubcode: number): boolean {
  return errorCode === ErrorCode.Cease && (errorSubcode === CeaseSubcode.AdministrativeShutdown || errorSubcode === CeaseSubcode.AdministrativeReset);
}

/**
 * The RFC 9003 shutdown communication of a NOTIFICATION, or undefined: for Cease 6/2 and 6/4 the text at the start
 * of `data`; for Cease 6/9 Hard Reset the text of the inner 6/2 or 6/4 it wraps (RFC 8538 §3.1).
 */
export function shutdownCommunicationOf(errorCode: number, errorSubcode: number, data: Buffer): string | undefined {
  if (carriesText(errorCode, errorSubcode)) return parseShutdownCommunication(data);
  if (errorCode === ErrorCode.Cease && errorSubcode === CeaseSubcode.HardReset && data.length >= 2 && carriesText(data[0] as number, data[1] as number)) {
    return parseShutdownCommunication(data.subarray(2));
  }
  return undefined;
}

/**
 * Decodes a NOTIFICATION body (after the header). `data` is a copy (safe to keep). `shutdownCommunication` is set
 * for Cease 2 and 4 (and a Hard Reset wrapping one) only when the data parses as one (`shutdownCommunicationOf`).
 * Throws BgpError 1/2 (data = Length field) if the body is shorter than 2 octets.
 */
export function decodeNotification(body: Buffer): NotificationMessage {
  if (body.length < 2) throw BgpError.badMessageLength(body.length + 19, 'NOTIFICATION body < 2');
  const errorCode = body[0] as number;
  const errorSubcode = body[1] as number;
  const data = Buffer.from(body.subarray(2));
  const text = shutdownCommunicationOf(errorCode, errorSubcode, data);
  return text !== undefined ? { type: 'NOTIFICATION', errorCode, errorSubcode, data, shutdownCommunication: text } : { type: 'NOTIFICATION', errorCode, errorSubcode, data };
}

/**
 * Encodes a NOTIFICATION body into `w`. `data` is authoritative: `shutdownCommunication` is not re-encoded (build
 * messages with `notificationMessage` / `notificationFromError` to keep both consistent).
 * Throws RangeError (local bug) if a code is outside 0..255.
 */
export function encodeNotificationBody(msg: NotificationMessage, w: ByteWriter): void {
  w.u8(msg.errorCode).u8(msg.errorSubcode).bytes(msg.data);
}

/**
 * Builds a consistent NOTIFICATION object. For Cease 2/4 with `shutdownCommunication`, the data is the RFC 9003
 * encoding of the text (truncated to 255 octets at a character boundary); otherwise `data` (default empty). The
 * object carries the text as it will decode (`shutdownCommunicationOf`).
 */
export function notificationMessage(
  errorCode: number,
  errorSubcode: number,
  options: { data?: Buffer; shutdownCommunication?: string } = {},
): NotificationMessage {
  const data =
    carriesText(errorCode, errorSubcode) && options.shutdownCommunication !== undefined
      ? encodeShutdownCommunication(options.shutdownCommunication)
      : Buffer.from(options.data ?? Buffer.alloc(0));
  const text = shutdownCommunicationOf(errorCode, errorSubcode, data);
  return text === undefined
    ? { type: 'NOTIFICATION', errorCode, errorSubcode, data }
    : { type: 'NOTIFICATION', errorCode, errorSubcode, data, shutdownCommunication: text };
}

/** The NOTIFICATION to send for a BgpError (RFC 4271 §6): its code, subcode and data. */
export function notificationFromError(err: BgpError): NotificationMessage {
  return notificationMessage(err.code, err.subcode, { data: err.data });
}
