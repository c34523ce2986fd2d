/**
 * Stop modes of the Speaker (docs/decisions.md "Stop modes"): how each peer's session ends when Herald stops.
 *
 * - `restart`: the node keeps forwarding and Herald comes back; the routers must keep its routes. Per peer, by what
 *   the session agreed: N bit negotiated (RFC 8538 §2) → Cease / Administrative Reset (6/4), which keeps graceful
 *   restart at the peer (never a Hard Reset); graceful restart without N → the TCP connection closed without a
 *   NOTIFICATION (RFC 4724 §4: the helper keeps our routes as stale until we return with End-of-RIB); no graceful
 *   restart → Cease / Administrative Shutdown (6/2) with the RFC 9003 text.
 * - `departure`: the node is leaving service; traffic must move first. The Speaker's drain (RFC 8326 65535:0 and
 *   LOCAL_PREF 0 toward iBGP, the wait, the withdrawal) runs first, then per peer: N negotiated → Cease / Hard Reset
 *   wrapping the 6/2 with its text (RFC 8538 §3.1, §5); otherwise Cease 6/2 with the text.
 */
import { CeaseSubcode } from './constants.ts';
import type { GracefulRestartMode } from './codec/open.ts';
import { WITHOUT_NOTIFICATION } from './session/cease.ts';
import type { StopRequest } from './session/cease.ts';

/** A restart keeps the routers' forwarding state; a departure moves traffic away first. */
export type StopMode = 'restart' | 'departure';

/** How one peer's session ended at Speaker.stop(). */
export type PeerEnding =
  /** restart, N bit negotiated: Cease 6/4; the peer keeps our routes under graceful restart (RFC 8538). */
  | 'ceaseKeepingRoutes'
  /** restart, graceful restart without N: TCP closed without a NOTIFICATION; the peer keeps them stale (RFC 4724). */
  | 'closedWithoutNotification'
  /** Cease 6/2 with the RFC 9003 text: a restart toward a peer without graceful restart, or a departure without N. */
  | 'cease'
  /** departure, N negotiated: Cease / Hard Reset wrapping the 6/2 (RFC 8538 §3.1); the peer flushes at once. */
  | 'hardReset'
  /** The session was not Established: a restart closes it without a NOTIFICATION, a departure with the Cease. */
  | 'notEstablished';

/** What Speaker.stop() did: the mode, and per peer how its session ended. */
export interface StopOutcome {
  readonly mode: StopMode;
  readonly peers: readonly { readonly peer: string; readonly ending: PeerEnding }[];
}

/**
 * How one peer's session ends in `mode`: the ending (for logs and tests) and the request for Session.stop().
 * `established`: the session is Established; `gracefulRestart`: what its OPENs agreed (Negotiated.gracefulRestartMode);
 * `message`: the RFC 9003 text of any Cease. Pure.
 */
export function peerEnding(mode: StopMode, established: boolean, gracefulRestart: GracefulRestartMode, message?: string): { ending: PeerEnding; request: StopRequest } {
  const text = message !== undefined ? { shutdownCommunication: message } : {};
  const shutdown = { subcode: CeaseSubcode.AdministrativeShutdown, ...text };
  // Not Established: the peer may still hold stale routes of an earlier connection; a restart leaves them alone,
  // a departure ends with the Cease (inside a Hard Reset if this connection already agreed N).
  if (!established) return { ending: 'notEstablished', request: mode === 'restart' ? WITHOUT_NOTIFICATION : { ...shutdown, hardReset: true } };
  if (mode === 'restart') {
    if (gracefulRestart === 'notification') return { ending: 'ceaseKeepingRoutes', request: { subcode: CeaseSubcode.AdministrativeReset, ...text, hardReset: false } };
    if (gracefulRestart === 'restart') return { ending: 'closedWithoutNotification', request: WITHOUT_NOTIFICATION };
    return { ending: 'cease', request: shutdown };
  }
  if (gracefulRestart === 'notification') return { ending: 'hardReset', request: { ...shutdown, hardReset: true } };
  return { ending: 'cease', request: shutdown };
}
