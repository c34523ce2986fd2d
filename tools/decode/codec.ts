/**
 * The one place where `herald decode` reaches into Herald's BGP library, through its façade `bgp/index.ts`:
 * message and path-attribute decoding, NLRI and address text, and their JSON forms. Everything else under
 * tools/decode/ is the container side (captures, TCP, MRT).
 */
export {
  BgpError,
  attributesToJson,
  decodeLabeledPrefixAt,
  decodeMessageDetailed,
  decodePathAttributes,
  decodePrefixAt,
  formatAddress,
  formatIPv4,
  formatIPv6,
  formatPrefixBits,
  messageToJson,
} from '../../bgp/index.ts';
export type { BgpMessage, CodecContext, PathAttribute, UpdateDecodeResult } from '../../bgp/index.ts';
