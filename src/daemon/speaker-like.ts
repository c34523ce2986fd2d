/**
 * The seam between the daemon and the BGP speaker. bgp/'s `SpeakerProxy` (bgp/main-thread.ts) satisfies it
 * (src/daemon/run.ts checks that with `satisfies`), as its in-process `Speaker` does; unit tests use fakes; a proxy to a speaker in a worker thread can implement it without a
 * change to the daemon:
 * - every command is fire-and-forget (`void`) or returns a Promise, and its arguments are plain data (structured
 *   clone safe: Maps, arrays and plain objects);
 * - state comes back as events (below) and as views a proxy may serve from a cache refreshed by those events
 *   (`peers()`, `draining`); `adjRibOut` may answer with a Promise.
 *
 * Events: `peerState` ({@link PeerStateEvent}), `updateSent` ({@link UpdateSentEvent}), `bfdState`
 * ({@link BfdStateEvent}, bgp/main-thread.ts), `unsentRoutes` ({@link UnsentRoutesEvent}), `drained` (), `error` (err; a
 * listener that cannot bind has `syscall: 'listen'`), and from a speaker in its own thread `threadExit`
 * ({@link ThreadExitEvent}) when that thread died.
 *
 * `herald run` uses bgp/main-thread.ts's `SpeakerProxy` (the Speaker in a worker thread, docs/architecture.md "Threads");
 * unit tests use the in-process `Speaker` or fakes.
 */
import type { EventEmitter } from 'node:events';
import type { BfdStateEvent, ExportedRoute, PeerConfig, PeerStatus, Route, SpeakerOptions, StateReason, StopMode, StopOutcome } from '../../bgp/main-thread.ts';

export type { BfdStateEvent };

/** Payload of `peerState`: one session state change (RFC 4271 §8 state names). */
export interface PeerStateEvent {
  peer: string;
  from: string;
  to: string;
  reason?: StateReason;
}

/** Payload of `updateSent` (fields the daemon reads): packing time of one UPDATE, ms. */
export interface UpdateSentEvent {
  peer: string;
  packMs?: number;
}

/** Payload of `unsentRoutes`: routes toward a peer cannot be encoded (bgp UnsentRoutes), once per session and reason. */
export interface UnsentRoutesEvent {
  peer: string;
  reason: string;
  /** One prefix held back. */
  example: string;
}

/** Payload of `threadExit`: the speaker thread died, its sessions with it. */
export interface ThreadExitEvent {
  message: string;
}

/** What the daemon needs from the BGP speaker. Routes are keyed by canonical prefix. */
export interface SpeakerLike extends EventEmitter {
  readonly localAs: number;
  /**
   * Bind the listener: the first bind (the daemon makes its speaker with `deferListen`), or again after a failure;
   * rejects with the OS error.
   */
  listen(): Promise<void>;
  addPeer(cfg: PeerConfig): void;
  /** Apply a changed peer config; the speaker restarts the session only for session-relevant fields. */
  updatePeer(cfg: PeerConfig): void;
  /** Cease / Peer De-configured (RFC 4486 subcode 3), then forget the peer. */
  removePeer(name: string): Promise<void>;
  /** Replace the whole desired set (a later duplicate of a prefix wins). */
  setRoutes(routes: readonly Route[]): void;
  /** Change the desired set: `changed` routes are added or replaced, `removed` prefixes withdrawn. */
  updateRoutes(changed: readonly Route[], removed: readonly string[]): void;
  /** The first complete desired set is in place: End-of-RIB may follow (RFC 4724 §4.1). */
  markInitialSyncDone(): void;
  /** RFC 8326 graceful shutdown of every session, then withdraw everything after `waitTimeSec`. */
  drain(opts: { waitTimeSec: number }): Promise<void>;
  undrain(): void;
  readonly draining: boolean;
  /**
   * Stop in a mode (bgp/stop-modes.ts): `restart` keeps the routers' forwarding state (graceful restart),
   * `departure` drains first (`waitTimeSec` with 65535:0, then the withdrawal) and ends with Cease / Hard Reset.
   * Resolves with how each peer's session ended.
   */
  stop(opts: { mode: StopMode; message?: string; waitTimeSec?: number }): Promise<StopOutcome>;
  resetPeer(name: string, opts: { soft: boolean }): void;
  /** Status of every configured peer (a proxy serves it from a cache). */
  peers(): readonly PeerStatus[];
  /** The routes as exported to one peer (for the admin API). */
  adjRibOut(peerName: string): readonly ExportedRoute[] | Promise<readonly ExportedRoute[]>;
}

/** Makes the speaker from the daemon's options (injected: the real Speaker, a fake, a worker proxy). */
export type SpeakerFactory = (opts: SpeakerOptions) => SpeakerLike;
