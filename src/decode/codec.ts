/**
 * The one place where `herald decode` reaches into Herald's BGP library (`bgp/`): message and path-attribute
 * decoding and their JSON forms. Everything else under src/decode/ is the container side (captures, TCP, MRT).
 */
export { decodeMessage, decodeMessageDetailed } from '../../bgp/codec/message.ts';
export { decodePathAttributes } from '../../bgp/codec/attributes.ts';
export { messageToJson } from '../../bgp/codec/json.ts';
export { attributesToJson } from '../../bgp/codec/attributes-json.ts';
export { BgpError } from '../../bgp/errors.ts';
export type { BgpMessage, CodecContext, PathAttribute, UpdateDecodeResult } from '../../bgp/codec/types.ts';
