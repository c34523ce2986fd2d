/**
 * The typed message channel between the main-thread SpeakerProxy (bgp/speaker-thread/proxy.ts) and the Speaker it
 * owns in the speaker thread (bgp/speaker-thread/host.ts, started by worker.ts). Every message is plain structured
 * clone data; routes cross in the compact RouteBatch form (route-batch.ts).
 *
 * Main thread → speaker thread: `call` messages, one per Speaker method call, numbered by `seq`.
 * Speaker thread → main thread, in arrays (one postMessage per event-loop turn of the speaker thread):
 * - `reply`  the outcome of the call with that `seq` (a value for queries, an error for a call that threw);
 * - `event`  a Speaker event (names and payloads: SpeakerEvents);
 * - `view`   the Speaker's state as the admin API reads it (peers(), draining), after every call and state change
 *            and at least once a second, carrying the `seq` of the last call applied.
 *
 * Calls and replies are bgp/worker-rpc.ts's, as for the BFD thread. Adding a Speaker method: one line in
 * SpeakerCalls, one handler in host.ts, one method in proxy.ts.
 */
import type { Family } from '../constants.ts';
import type { BfdStateEvent } from '../bfd/peers.ts';
import type { StateReason } from '../fsm/state.ts';
import type { SentInfo } from '../rib/packer.ts';
import type { PeerConfig, PeerStatus, SpeakerOptions } from '../speaker.ts';
import type { StopMode, StopOutcome } from '../stop-modes.ts';
import type { CallHandlers as Handlers, CallMessage as Call, ErrorData, ReplyMessage } from '../worker-rpc.ts';
import type { RouteBatch, WireExportedRoute } from './route-batch.ts';

export type { ChannelEnd, ErrorData } from '../worker-rpc.ts';

/** The Speaker options that cross to the thread; the test injection points (clock, sessions) stay in-process. */
export type SpeakerThreadOptions = Pick<SpeakerOptions, 'localAs' | 'bgpIdentifier' | 'listen' | 'deferListen' | 'gracefulRestart'>;

/** Speaker.stop() options (bgp/stop-modes.ts). */
export interface StopOptions {
  readonly mode: StopMode;
  readonly message?: string;
  readonly waitTimeSec?: number;
}

/** The Speaker methods the proxy calls, each with its arguments in channel form. */
export interface SpeakerCalls {
  ready: [];
  listen: [];
  addPeer: [cfg: PeerConfig];
  updatePeer: [cfg: PeerConfig];
  removePeer: [name: string];
  setRoutes: [routes: RouteBatch];
  /** `removed`: prefixes in encodePrefixes form. */
  updateRoutes: [changed: RouteBatch, removed: string];
  markInitialSyncDone: [];
  drain: [opts: { readonly waitTimeSec: number }];
  undrain: [];
  stop: [opts: StopOptions];
  resetPeer: [name: string, opts: { readonly soft: boolean }];
  bfdAdminDown: [opts: { readonly peers?: readonly string[]; readonly timeoutMs?: number }];
  bfdAdminUp: [peers: readonly string[] | undefined];
  adjRibOut: [peer: string];
  routes: [];
}

/** The value of a query's reply (most calls answer nothing). */
export type CallResult =
  | { readonly kind: 'exported'; readonly routes: readonly WireExportedRoute[] }
  | { readonly kind: 'routes'; readonly routes: RouteBatch }
  | { readonly kind: 'stopped'; readonly outcome: StopOutcome };

/** The speaker thread's handler of each call. */
export type CallHandlers = Handlers<SpeakerCalls, CallResult>;

/** One call, main thread → speaker thread. */
export type CallMessage<K extends keyof SpeakerCalls = keyof SpeakerCalls> = Call<SpeakerCalls, K>;

/** The Speaker's events with their payloads (bgp/speaker.ts module comment); `error` crosses as ErrorData. */
export interface SpeakerEvents {
  peerState: { readonly peer: string; readonly from: string; readonly to: string; readonly reason: StateReason };
  updateSent: { readonly peer: string; readonly kind: SentInfo['kind']; readonly family: Family; readonly bytes: number; readonly prefixes: number; readonly packMs: number };
  endOfRib: { readonly peer: string; readonly family: Family };
  routeRefresh: { readonly peer: string; readonly family: Family };
  drained: Readonly<Record<string, never>>;
  bfdState: BfdStateEvent;
  unsentRoutes: { readonly peer: string; readonly reason: string; readonly example: string };
  error: ErrorData;
}

/** What the admin API reads synchronously, as the speaker thread last saw it. */
export interface SpeakerView {
  /** The last call applied when the view was taken. */
  readonly seq: number;
  readonly peers: readonly PeerStatus[];
  readonly draining: boolean;
}

/** One event, speaker thread → main thread. */
export type EventMessage<K extends keyof SpeakerEvents = keyof SpeakerEvents> = {
  [P in K]: { readonly type: 'event'; readonly event: P; readonly payload: SpeakerEvents[P] };
}[K];

/** Speaker thread → main thread. */
export type ThreadMessage = ReplyMessage<CallResult> | EventMessage | { readonly type: 'view'; readonly view: SpeakerView };
