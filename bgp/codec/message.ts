/**
 * Whole-message decode and encode (RFC 4271 §4): header checks, then dispatch on Type to the per-message codecs.
 *
 * Decoding arbitrary bytes throws only BgpError (property-tested). Encoding our own messages throws only plain
 * Errors (RangeError/Error): an unencodable or oversized message is a local bug, never a NOTIFICATION.
 */
import { HEADER_LENGTH, MAX_EXTENDED_MESSAGE_LENGTH, MAX_MESSAGE_LENGTH, MessageType } from '../constants.ts';
import { BgpError } from '../errors.ts';
import { ByteWriter } from '../wire/writer.ts';
import { checkHeader, writeHeader } from './header.ts';
import { decodeKeepalive, keepaliveMessage } from './keepalive.ts';
import { decodeNotification, encodeNotificationBody } from './notification.ts';
import { decodeOpen, encodeOpenBody } from './open.ts';
import { decodeRouteRefresh, encodeRouteRefreshBody } from './route-refresh.ts';
import { MESSAGE_TYPE_CODE } from './types.ts';
import type { BgpMessage, CodecContext, UpdateDecodeResult } from './types.ts';
import { decodeUpdate, encodeUpdate } from './update.ts';

/** Largest message length allowed in a context: 65535 with extended message (RFC 8654), else 4096. */
export function maxMessageLength(ctx: CodecContext): number {
  return ctx.extendedMessage ? MAX_EXTENDED_MESSAGE_LENGTH : MAX_MESSAGE_LENGTH;
}

/** A decoded message; for UPDATE also the RFC 7606 outcome (treat-as-withdraw, discarded attributes). */
export type DecodedMessage =
  | { readonly message: Exclude<BgpMessage, { type: 'UPDATE' }>; readonly update?: undefined }
  | { readonly message: Extract<BgpMessage, { type: 'UPDATE' }>; readonly update: UpdateDecodeResult };

/**
 * Decodes one whole message (header included, exactly its Length octets, e.g. as `MessageFramer.push` returns them)
 * and also returns the RFC 7606 result for UPDATEs. Values kept in the result are copies, safe after `msg` is reused.
 * Throws BgpError only: header errors 1/1, 1/2 (also when `msg.length` differs from the Length field), 1/3; OPEN
 * errors 2/x (see `decodeOpen`); UPDATE errors 3/x from `decodeUpdate`; ROUTE-REFRESH 7/1.
 */
export function decodeMessageDetailed(msg: Buffer, ctx: CodecContext): DecodedMessage {
  const length = checkHeader(msg, 0, maxMessageLength(ctx));
  if (msg.length !== length) throw BgpError.badMessageLength(length, `Length field ${length} but ${msg.length} octets given`);
  const type = msg[18] as number;
  try {
    switch (type) {
      case MessageType.Open:
        return { message: decodeOpen(msg.subarray(HEADER_LENGTH)) };
      case MessageType.Update: {
        const update = decodeUpdate(msg, ctx, HEADER_LENGTH);
        return { message: update.message, update };
      }
      case MessageType.Notification:
        return { message: decodeNotification(msg.subarray(HEADER_LENGTH)) };
      case MessageType.Keepalive:
        return { message: decodeKeepalive(msg.subarray(HEADER_LENGTH)) };
      case MessageType.RouteRefresh:
        return { message: decodeRouteRefresh(msg) };
      default:
        throw BgpError.badMessageType(type);
    }
  } catch (e) {
    if (e instanceof BgpError) throw e;
    // Defence in depth: a decoder bug must still become a NOTIFICATION, never an arbitrary exception.
    throw unexpected(type, length, e);
  }
}

function unexpected(type: number, length: number, e: unknown): BgpError {
  const why = `internal decoder error: ${e instanceof Error ? e.message : String(e)}`;
  if (type === MessageType.Open) return BgpError.openUnspecific(why);
  if (type === MessageType.Update) return BgpError.malformedAttributeList(why);
  return BgpError.badMessageLength(length, why);
}

/**
 * Decodes one whole message (header included). See `decodeMessageDetailed` for the errors (BgpError only).
 * UPDATEs are returned with RFC 7606 non-fatal repairs applied (use `decodeMessageDetailed` to see them).
 */
export function decodeMessage(msg: Buffer, ctx: CodecContext): BgpMessage {
  return decodeMessageDetailed(msg, ctx).message;
}

/**
 * Encodes a whole message (header included) into a fresh Buffer. Never throws BgpError: throws a plain Error if the
 * message would exceed the context's maximum length (4096, 65535 with extended message; OPEN and KEEPALIVE always
 * 4096, RFC 8654 §4), and RangeError for out-of-range fields.
 */
export function encodeMessage(msg: BgpMessage, ctx: CodecContext): Buffer {
  let max = maxMessageLength(ctx);
  if (msg.type === 'KEEPALIVE') return Buffer.from(keepaliveMessage());
  const w = new ByteWriter(msg.type === 'UPDATE' ? 1024 : 128);
  w.reserve(HEADER_LENGTH);
  switch (msg.type) {
    case 'OPEN':
      max = MAX_MESSAGE_LENGTH;
      encodeOpenBody(msg, w);
      break;
    case 'UPDATE':
      w.bytes(encodeUpdate(msg, ctx));
      break;
    case 'NOTIFICATION':
      encodeNotificationBody(msg, w);
      break;
    case 'ROUTE-REFRESH':
      encodeRouteRefreshBody(msg, w);
      break;
    default:
      return assertNever(msg);
  }
  const length = w.length;
  if (length > max) throw new Error(`${msg.type} of ${length} octets exceeds the maximum message length ${max}`);
  // The writer is local and dropped here, so its view is handed out without another copy.
  const out = w.view();
  writeHeader(out, 0, length, MESSAGE_TYPE_CODE[msg.type]);
  return out;
}

function assertNever(x: never): never {
  throw new Error(`unexpected message ${JSON.stringify(x)}`);
}
