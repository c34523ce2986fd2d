/**
 * The one place where `herald decode` reaches into Herald's BGP library, through its codec façade
 * `bgp/codec/index.ts` (a public entry of bgp/, re-exported by `bgp/index.ts`; importing it loads none of the
 * speaker, sessions, RIB or BFD): message and path-attribute decoding, NLRI and address text, and their JSON forms.
 * Everything else under tools/decode/ is the container side (captures, TCP, MRT).
 */
export {
  BgpError,
  attributesJsonText,
  decodeLabeledPrefixAt,
  decodeMessageDetailed,
  decodePathAttributes,
  decodePrefixAt,
  formatAddress,
  formatIPv4,
  formatIPv6,
  formatPrefixBits,
  messageJsonText,
} from '../../bgp/codec/index.ts';
export type { BgpMessage, CodecContext, PathAttribute, UpdateDecodeResult } from '../../bgp/codec/index.ts';
