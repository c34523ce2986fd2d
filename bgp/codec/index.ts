/**
 * The BGP-4 codec of `bgp/`: wire constants, BgpError, message and path-attribute shapes, decode and encode of whole
 * messages, NLRI and address text, builders, and the JSON forms (docs/codec.md). A public entry of its own, beside
 * `bgp/index.ts` (which re-exports all of it): a program that only reads and prints BGP messages (`herald decode`,
 * tools/decode/) imports this file and loads none of the speaker, sessions, RIB or BFD. Imports only `node:*` and
 * modules under bgp/.
 */

// --- Constants and errors (RFC 4271 §4, IANA registries) ---
export * from '../constants.ts';
export { BgpError, MAX_NOTIFICATION_DATA_LENGTH, describeNotification, encodeShutdownCommunication } from '../errors.ts';

// --- Codec: message shapes and whole messages ---
export { DEFAULT_CONTEXT, MESSAGE_TYPE_CODE, familyOf } from './types.ts';
export type {
  AfiSafi,
  AsPathSegment,
  BgpMessage,
  Capability,
  CodecContext,
  ExtendedCommunity,
  Ipv6ExtendedCommunity,
  KeepaliveMessage,
  LargeCommunity,
  NlriEntry,
  NotificationMessage,
  OpenMessage,
  PathAttribute,
  PathAttributeType,
  RouteRefreshMessage,
  UpdateDecodeResult,
  UpdateMessage,
} from './types.ts';
export { decodeMessage, decodeMessageDetailed, encodeMessage, maxMessageLength } from './message.ts';
export type { DecodedMessage } from './message.ts';
export { MIN_LENGTH, checkHeader, decodeHeader, writeHeader } from './header.ts';
export type { MessageHeader } from './header.ts';

// --- OPEN, capabilities, negotiation (RFC 4271 §4.2, RFC 5492, RFC 9072) ---
export {
  buildOpen,
  codecContextFor,
  decodeOpen,
  encodeOpenBody,
  formatIdentifier,
  hasCapabilityCode,
  negotiate,
  openAs,
  parseIdentifier,
  validateOpen,
} from './open.ts';
export type { AddPathFamilies, GracefulRestartMode, Negotiated, OpenExpectations } from './open.ts';
export { CAPABILITY_CODE, CAPABILITY_NAMES, capabilityCode, decodeCapabilities, decodeCapability, encodeCapability } from './capabilities.ts';

// --- UPDATE and path attributes (RFC 4271 §4.3, §5, RFC 4760, RFC 7606) ---
export { decodeUpdate, encodeUpdate, endOfRibFamily, validateUpdateStrict } from './update.ts';
export {
  ATTRIBUTE_INFO,
  attributeTypeCode,
  attributeValueLength,
  decodePathAttributes,
  defaultFlags,
  encodePathAttributes,
  invalidNextHopReason,
  writeAttribute,
} from './attributes.ts';
export type { AttributeInfo, ErrorAction } from './attributes.ts';
export {
  AS_PATH_SEGMENT_NAMES,
  asPathLength,
  decodeAsPathSegments,
  effectiveAggregator,
  effectiveAsPath,
  formatAsPath,
  mergeAs4Path,
  writeAsPathSegments,
} from './as-path.ts';
export { addPathFor, decodeLabeledPrefixAt, familyAfiSafi, formatRouteDistinguisher } from './mp-nlri.ts';
export type { LabeledPrefix } from './mp-nlri.ts';
export {
  canonicalAddress,
  canonicalPrefix,
  isCanonicalIPv4Prefix,
  decodeNlri,
  decodePrefixAt,
  encodeNlri,
  familyOfPrefix,
  formatAddress,
  formatIPv4,
  formatIPv6,
  formatPrefixBits,
  maxPrefixBits,
  nlriFieldLength,
  nlriLength,
  parseAddress,
  parsePrefix,
} from './nlri.ts';
/** Builders of path attributes and UPDATEs with the RFC default flags: `build.origin('IGP')`, `build.update({...})`. */
export * as build from './build.ts';
export { formatCommunity, formatLargeCommunity, parseCommunity, parseLargeCommunity } from './communities.ts';

// --- Extended communities (RFC 4360, RFC 5668, RFC 5701, RFC 10005 link bandwidth) ---
export {
  ExtCommunityBit,
  ExtCommunitySubtype,
  ExtCommunityType,
  extendedCommunityFromBytes,
  extendedCommunityKind,
  extendedCommunityView,
  fourOctetAsSpecific,
  ipv4AddressSpecific,
  ipv6AddressSpecific,
  ipv6ExtendedCommunityFromBytes,
  ipv6ExtendedCommunityKind,
  ipv6ExtendedCommunityView,
  linkBandwidth,
  linkBandwidthOf,
  opaque,
  twoOctetAsSpecific,
} from './ext-communities.ts';
export type { ExtCommunityKind, ExtendedCommunityView, Ipv6ExtendedCommunityView, LinkBandwidth } from './ext-communities.ts';

// --- NOTIFICATION, KEEPALIVE, ROUTE-REFRESH (RFC 4271 §4.4, §4.5, RFC 9003, RFC 2918, RFC 7313) ---
export {
  decodeNotification,
  encodeNotificationBody,
  notificationFromError,
  notificationMessage,
  parseShutdownCommunication,
  shutdownCommunicationOf,
} from './notification.ts';
export { KEEPALIVE, decodeKeepalive, keepaliveMessage } from './keepalive.ts';
export { ROUTE_REFRESH_SUBTYPE_NAMES, decodeRouteRefresh, encodeRouteRefreshBody } from './route-refresh.ts';

// --- JSON forms (docs/codec.md) ---
export { capabilityToJson, messageJsonText, messageToJson } from './json.ts';
export {
  attributesJsonText,
  attributesToJson,
  extendedCommunityToJson,
  ipv6ExtendedCommunityToJson,
  updateJsonText,
  updateToJson,
} from './attributes-json.ts';
