/**
 * Herald BGP: the public surface of the `bgp/` library.
 *
 * `bgp/` is a BGP-4 speaker written for one job: announcing a changing set of routes (Service VIPs) to a few
 * peers, and reading whatever they send back with care. It imports only `node:*` and its own modules, never
 * `src/` or npm packages, so it can be used on its own. Import from this file; the paths behind it may move.
 *
 * Architecture. Bytes flow through five stages, each a module with one job:
 *
 *   socket bytes ─▶ MessageFramer ─▶ decode ─▶ Session + FSM ─▶ Adj-RIB-Out ─▶ packer ─▶ encode ─▶ socket
 *
 * - The framer (wire/framer.ts) cuts the TCP stream into whole messages. It checks each 19-octet header (RFC 4271
 *   §4.1, §6.1) as soon as the header arrives, before buffering the body, and hands out views without copying
 *   where it can.
 * - The codec (codec/) turns one message into a plain readonly object and back. Decoders take a CodecContext (the
 *   options both OPENs agreed: 4-octet AS, extended messages, ADD-PATH per family and direction). On bad input
 *   they throw only a BgpError, which carries the NOTIFICATION (code, subcode and the Data the RFC asks for).
 *   UPDATE errors follow RFC 7606: most of them are outcomes returned with the message (treat-as-withdraw,
 *   attribute-discard), not exceptions. Encoders throw plain Errors, because a message we cannot encode is a bug
 *   on our side, not the peer's.
 * - The session (session/session.ts) runs the RFC 4271 §8 state machine (fsm/, a pure transition function with an
 *   injectable Clock): it feeds the FSM events and performs the actions it returns, through small modules beside
 *   it (connection, collision, timers, restart, tx-pump, prefix-limit, inbound, open-exchange). Its connection
 *   (session/connection.ts) owns the socket and is the only place where a BgpError becomes a NOTIFICATION on the
 *   wire. It negotiates capabilities from the two OPENs (`negotiate`, `codecContextFor`).
 * - Adj-RIB-Out (rib/adj-rib-out.ts) keeps, per peer, what the peer has been sent and what it should have. The
 *   export rules (rib/export.ts) shape the attributes per peer: eBGP or iBGP, NEXT_HOP, AS_TRANS with AS4_PATH.
 * - The packer (rib/packer.ts) is pulled by the session while its socket is writable. It builds one UPDATE at a
 *   time: withdrawals first, then routes grouped by byte-identical attributes, filled up to 4096 octets (65535
 *   with RFC 8654). Flapping routes collapse to their latest state, and KEEPALIVEs are never starved.
 *   The Speaker (speaker.ts) joins it all up: peers, fan-out of the desired route set, graceful restart,
 *   graceful shutdown and the stop modes (stop-modes.ts: restart keeps the routers' forwarding state, departure
 *   moves traffic away first).
 *
 * Errors. One bad peer never disturbs another. A BgpError ends only its own session, with the NOTIFICATION it
 * describes. RFC 7606 outcomes keep the session up. Local misuse (bad configuration or address text) throws
 * Error or RangeError.
 *
 * Supported standards:
 * - RFC 4271  BGP-4 (messages, error handling, FSM, timers)
 * - RFC 1997  BGP Communities attribute; RFC 8092 Large Communities; RFC 4360 Extended Communities
 * - RFC 5668  4-octet AS specific extended communities; RFC 5701 IPv6 address specific extended communities
 * - RFC 10005 Link Bandwidth extended community (draft-ietf-idr-link-bandwidth), both transitivities
 * - RFC 2385  TCP MD5 signature option; RFC 5082 GTSM (TTL security)
 * - RFC 2545  IPv6 next hops (global + link-local); RFC 8950 IPv4 NLRI with an IPv6 next hop (decoded)
 * - RFC 2918  Route Refresh; RFC 7313 Enhanced Route Refresh (BoRR/EoRR); RFC 5291 ORF entries kept raw
 * - RFC 4456  ORIGINATOR_ID and CLUSTER_LIST attributes (decoded; we are not a route reflector)
 * - RFC 4486  Cease subcodes; RFC 9003 Shutdown Communication
 * - RFC 8538  Notification support for graceful restart: the N bit, Cease / Hard Reset (sent by the §5 rule)
 * - RFC 4724  Graceful Restart (as the restarting speaker), End-of-RIB markers
 * - RFC 4760  Multiprotocol Extensions (IPv4 and IPv6 unicast decoded; other families kept raw)
 * - RFC 5065  AS confederation segments (decoded, kept through the AS4_PATH merge)
 * - RFC 5492  Capabilities advertisement; RFC 9072 extended optional parameters length
 * - RFC 6286  AS-wide unique BGP Identifier
 * - RFC 6608  FSM error subcodes
 * - RFC 6793  4-octet AS numbers (AS_TRANS, AS4_PATH / AS4_AGGREGATOR)
 * - RFC 7606  Revised error handling for UPDATE messages
 * - RFC 7607  AS 0 is invalid in OPEN and in AS_PATH / AGGREGATOR / AS4_PATH / AS4_AGGREGATOR
 * - RFC 7911  ADD-PATH (capability, per-direction negotiation, path identifiers)
 * - RFC 8326  Graceful BGP session shutdown (GRACEFUL_SHUTDOWN community)
 * - RFC 8654  Extended messages (up to 65535 octets, never for OPEN or KEEPALIVE)
 * - RFC 5880  BFD, Asynchronous mode (bfd/: no Demand mode, no Echo, no authentication); RFC 5881 single-hop and
 *             RFC 5883 multihop BFD over UDP; RFC 5882 BGP as a BFD client; RFC 9384 Cease / BFD Down
 * - draft-walton-bgp-hostname-capability  FQDN capability (code 73)
 *
 * The codec is documented in docs/codec.md (API, the JSON form, the error table, the RFC 7606 outcomes).
 */

// --- Constants and errors (RFC 4271 §4, IANA registries) ---
export * from './constants.ts';
export { BgpError, MAX_NOTIFICATION_DATA_LENGTH, describeNotification, encodeShutdownCommunication } from './errors.ts';

// --- Wire: framing, reading, writing ---
export { MessageFramer } from './wire/framer.ts';
export { ByteReader } from './wire/reader.ts';
export type { OverrunFactory } from './wire/reader.ts';
export { ByteWriter } from './wire/writer.ts';

// --- Codec: message shapes and whole messages ---
export { DEFAULT_CONTEXT, MESSAGE_TYPE_CODE, familyOf } from './codec/types.ts';
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
} from './codec/types.ts';
export { decodeMessage, decodeMessageDetailed, encodeMessage, maxMessageLength } from './codec/message.ts';
export type { DecodedMessage } from './codec/message.ts';
export { MIN_LENGTH, checkHeader, decodeHeader, writeHeader } from './codec/header.ts';
export type { MessageHeader } from './codec/header.ts';

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
} from './codec/open.ts';
export type { AddPathFamilies, GracefulRestartMode, Negotiated, OpenExpectations } from './codec/open.ts';
export { CAPABILITY_CODE, CAPABILITY_NAMES, capabilityCode, decodeCapabilities, decodeCapability, encodeCapability } from './codec/capabilities.ts';

// --- UPDATE and path attributes (RFC 4271 §4.3, §5, RFC 4760, RFC 7606) ---
export { decodeUpdate, encodeUpdate, endOfRibFamily, validateUpdateStrict } from './codec/update.ts';
export {
  ATTRIBUTE_INFO,
  attributeTypeCode,
  attributeValueLength,
  decodePathAttributes,
  defaultFlags,
  encodePathAttributes,
  invalidNextHopReason,
  writeAttribute,
} from './codec/attributes.ts';
export type { AttributeInfo, ErrorAction } from './codec/attributes.ts';
export {
  AS_PATH_SEGMENT_NAMES,
  asPathLength,
  decodeAsPathSegments,
  effectiveAggregator,
  effectiveAsPath,
  formatAsPath,
  mergeAs4Path,
  writeAsPathSegments,
} from './codec/as-path.ts';
export { addPathFor, decodeLabeledPrefixAt, familyAfiSafi, formatRouteDistinguisher } from './codec/mp-nlri.ts';
export type { LabeledPrefix } from './codec/mp-nlri.ts';
export {
  canonicalAddress,
  canonicalPrefix,
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
} from './codec/nlri.ts';
/** Builders of path attributes and UPDATEs with the RFC default flags: `build.origin('IGP')`, `build.update({...})`. */
export * as build from './codec/build.ts';
export { formatCommunity, formatLargeCommunity, parseCommunity, parseLargeCommunity } from './codec/build.ts';

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
} from './codec/ext-communities.ts';
export type { ExtCommunityKind, ExtendedCommunityView, Ipv6ExtendedCommunityView, LinkBandwidth } from './codec/ext-communities.ts';

// --- NOTIFICATION, KEEPALIVE, ROUTE-REFRESH (RFC 4271 §4.4, §4.5, RFC 9003, RFC 2918, RFC 7313) ---
export {
  decodeNotification,
  encodeNotificationBody,
  notificationFromError,
  notificationMessage,
  parseShutdownCommunication,
  shutdownCommunicationOf,
} from './codec/notification.ts';
export { KEEPALIVE, decodeKeepalive, keepaliveMessage } from './codec/keepalive.ts';
export { ROUTE_REFRESH_SUBTYPE_NAMES, decodeRouteRefresh, encodeRouteRefreshBody } from './codec/route-refresh.ts';

// --- JSON forms (docs/codec.md) ---
export { capabilityToJson, messageToJson } from './codec/json.ts';
export { attributesToJson, extendedCommunityToJson, ipv6ExtendedCommunityToJson, updateToJson } from './codec/attributes-json.ts';

// --- Routes we originate ---
export type { Route } from './rib/route.ts';
export type { ExportedRoute } from './rib/adj-rib-out.ts';

// --- Speaker, session, clock ---
export { Speaker } from './speaker.ts';
export type { PeerConfig, PeerListener, PeerSession, PeerStatus, SpeakerOptions } from './speaker-types.ts';
export { peerEnding } from './stop-modes.ts';
export type { PeerEnding, StopMode, StopOutcome } from './stop-modes.ts';
export { Session, WITHOUT_NOTIFICATION } from './session/session.ts';
export type { CeaseRequest, NotificationRecord, SessionOptions, SessionStats, StopRequest, TxSource } from './session/session.ts';
export { FakeClock, realClock } from './fsm/clock.ts';
export type { Clock, TimerHandle } from './fsm/clock.ts';
export { SessionState, describeReason } from './fsm/state.ts';
export type { StateReason } from './fsm/state.ts';

// --- BFD (RFC 5880, 5881, 5883; the engine runs in a worker thread) ---
export { BfdHandle } from './bfd/handle.ts';
export type { BfdClient } from './bfd/handle.ts';
export type { BfdPeerConfig, BfdSessionInfo } from './bfd/engine.ts';
export { DEFAULT_BFD_DETECT_MULTIPLIER, DEFAULT_BFD_INTERVAL_MS } from './bfd/peers.ts';
export type { BfdStateEvent, PeerBfdConfig, PeerBfdStatus } from './bfd/peers.ts';
export { BfdDiag, decodeControlPacket, describeDiag, encodeControlPacket } from './bfd/packet.ts';
export type { BfdState, ControlPacket } from './bfd/packet.ts';
