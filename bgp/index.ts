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
 * - SpeakerProxy (speaker-thread/) runs a Speaker in its own worker thread and offers the same API on the calling
 *   thread over a typed message channel, so that no work of the caller can delay a KEEPALIVE or a hold timer. Routes
 *   cross in a columnar form (speaker-thread/route-batch.ts); peers() and draining are served from views the thread
 *   pushes.
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

// --- The codec: constants, errors, message shapes, decode/encode, NLRI text, builders, JSON forms ---
// (its own public entry, bgp/codec/index.ts, for programs that need only the codec)
export * from './codec/index.ts';

// --- Memory, worker entry (also in main-thread.ts) ---
export { collectGarbage, MemoryReducer, THREAD_ENTRY_URL } from './main-thread.ts';
export type { MemoryReducerOptions } from './main-thread.ts';

// --- Wire: framing, reading, writing ---
export { MessageFramer } from './wire/framer.ts';
export { ByteReader } from './wire/reader.ts';
export type { OverrunFactory } from './wire/reader.ts';
export { ByteWriter } from './wire/writer.ts';

// --- Routes we originate ---
export type { Route } from './rib/route.ts';
export { MAX_AS_PATH_PREPEND, MAX_COMMUNITY_OCTETS } from './rib/route.ts';
export type { ExportedRoute } from './rib/export.ts';

// --- Speaker, session, clock ---
export { Speaker } from './speaker.ts';
export type { PeerListener, PeerSession, PeerStatus, SpeakerOptions } from './speaker-types.ts';
export { BFD_OPTIONS, GRACEFUL_RESTART_OPTIONS, PEER_OPTIONS, changeOf, changedFields, inRange, rangeText, resetsSession } from './peer-config.ts';
export type { BfdSessionSettings, PeerBfdConfig, PeerConfig, PeerGracefulRestart, PeerOption, PeerOptionChange, SubOption } from './peer-config.ts';
export { peerEnding } from './stop-modes.ts';
export type { PeerEnding, StopMode, StopOutcome } from './stop-modes.ts';
export { Session, WITHOUT_NOTIFICATION } from './session/session.ts';
export type { CeaseRequest, NotificationRecord, SessionOptions, SessionStats, StopRequest, TxSource } from './session/session.ts';
export { FakeClock, realClock } from './clock.ts';
export type { Clock, TimerHandle } from './clock.ts';
export { SessionState, describeReason } from './fsm/state.ts';
export type { StateReason } from './fsm/state.ts';

// --- BFD (RFC 5880, 5881, 5883; the engine runs in a worker thread) ---
export { BfdHandle } from './bfd/handle.ts';
export type { BfdClient } from './bfd/handle.ts';
export type { BfdPeerConfig, BfdSessionInfo } from './bfd/engine.ts';
export type { BfdStateEvent, PeerBfdStatus } from './bfd/peers.ts';
export { BfdDiag, decodeControlPacket, describeDiag, encodeControlPacket } from './bfd/packet.ts';
export type { BfdState, ControlPacket } from './bfd/packet.ts';

// --- The Speaker in its own thread: the main-thread proxy and the channel's types (bgp/speaker-thread/) ---
export { SPEAKER_THREAD_EXIT, SpeakerProxy } from './speaker-thread/proxy.ts';
export { SpeakerThread } from './speaker-thread/thread.ts';
export type { SpeakerEvents, SpeakerThreadOptions } from './speaker-thread/protocol.ts';
export type { UnsentRoutes } from './rib/adj-rib-out.ts';
