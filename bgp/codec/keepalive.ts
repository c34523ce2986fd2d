/**
 * KEEPALIVE message (RFC 4271 §4.4): the 19-octet header alone, Type 4.
 */
import { MessageType } from '../constants.ts';
import { BgpError } from '../errors.ts';
import { writeHeader } from './header.ts';
import type { KeepaliveMessage } from './types.ts';

/** The KEEPALIVE message object. */
export const KEEPALIVE: KeepaliveMessage = Object.freeze({ type: 'KEEPALIVE' });

const KEEPALIVE_BYTES = Buffer.alloc(19);
writeHeader(KEEPALIVE_BYTES, 0, 19, MessageType.Keepalive);

/**
 * The 19 wire octets of a KEEPALIVE. Returns one shared Buffer (no allocation per call): pass it to
 * `socket.write`, never modify it.
 */
export function keepaliveMessage(): Buffer {
  return KEEPALIVE_BYTES;
}

/** Decodes a KEEPALIVE body: it must be empty. Throws BgpError 1/2 (data = Length field) otherwise (RFC 4271 §6.1). */
export function decodeKeepalive(body: Buffer): KeepaliveMessage {
  if (body.length !== 0) throw BgpError.badMessageLength(body.length + 19, 'KEEPALIVE with a body');
  return KEEPALIVE;
}
