/**
 * The one place where `herald decode` reaches into Herald's BGP library (`bgp/`): message and path-attribute
 * decoding and their JSON forms. Everything else under src/decode/ is the container side (captures, TCP, MRT).
 */
export { decodeMessage, decodePathAttributes, messageToJson, attributesToJson } from '../../bgp/index.ts';
export { BgpError } from '../../bgp/errors.ts';
export type { BgpMessage, CodecContext, PathAttribute } from '../../bgp/codec/types.ts';
