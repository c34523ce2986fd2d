/**
 * Herald BGP on the main thread: what a program that runs the Speaker in its own thread (SpeakerProxy) needs beside
 * it, and nothing more. `src/` reaches bgp/ through this entry only (a lint rule, eslint.config.js), so the daemon's
 * main thread loads the proxy, the clock and the codec's vocabulary (route families, community and prefix text,
 * NOTIFICATION names), never the speaker, sessions, RIB or BFD: those run in the speaker thread
 * (bgp/speaker-thread/worker.ts), which loads them itself. Every name here is also exported by bgp/index.ts, the
 * library's whole surface.
 */

// --- Memory: a full collection after a big change (the speaker thread's and the daemon's) ---
export { collectGarbage, MemoryReducer } from './memory.ts';
export type { MemoryReducerOptions } from './memory.ts';
/**
 * The entry of Herald's threads and parse workers (Node's compile cache on, then the module given as the last
 * `argv`): bgp/thread-entry.js.
 */
export const THREAD_ENTRY_URL: URL = new URL('./thread-entry.js', import.meta.url);

// --- Time: the one Clock of both layers ---
export { FakeClock, realClock } from './clock.ts';
export type { Clock, TimerHandle } from './clock.ts';

// --- The Speaker in its own thread (bgp/speaker-thread/) ---
export { SPEAKER_THREAD_EXIT, SpeakerProxy } from './speaker-thread/proxy.ts';
export { SpeakerThread } from './speaker-thread/thread.ts';
export type { SpeakerEvents, SpeakerThreadOptions } from './speaker-thread/protocol.ts';

// --- The Speaker's vocabulary: peers, routes, states, stop modes (types, and the limits of a route) ---
export type { PeerStatus, SpeakerOptions } from './speaker-types.ts';
// a peer's configuration: its type, defaults, ranges, and what a change of each option does
export { BFD_OPTIONS, GRACEFUL_RESTART_OPTIONS, PEER_OPTIONS, changeOf, changedFields, inRange, rangeText, resetsSession } from './peer-config.ts';
export type { BfdSessionSettings, PeerBfdConfig, PeerConfig, PeerGracefulRestart, PeerOption, PeerOptionChange, SubOption } from './peer-config.ts';
export type { Route } from './rib/route.ts';
export { MAX_AS_PATH_PREPEND, MAX_COMMUNITY_OCTETS } from './rib/route.ts';
export type { ExportedRoute } from './rib/export.ts';
export type { UnsentRoutes } from './rib/adj-rib-out.ts';
export type { PeerEnding, StopMode, StopOutcome } from './stop-modes.ts';
export { describeReason } from './fsm/state.ts';
export type { StateReason } from './fsm/state.ts';
export type { BfdStateEvent, PeerBfdStatus } from './bfd/peers.ts';

// --- The codec's vocabulary: families, NOTIFICATION names, address, prefix and community text ---
export type { Family } from './constants.ts';
export { describeNotification } from './errors.ts';
export type { ExtendedCommunity, Ipv6ExtendedCommunity, LargeCommunity } from './codec/types.ts';
export { canonicalPrefix, formatAddress, isCanonicalIPv4Prefix } from './codec/nlri.ts';
export { formatCommunity, formatLargeCommunity, parseCommunity, parseLargeCommunity } from './codec/communities.ts';
// extended communities (RFC 4360, RFC 5668, RFC 5701, RFC 10005 link bandwidth), whole
export * from './codec/ext-communities.ts';
