/**
 * FSM events (the RFC 4271 §8.1 subset Herald implements) and the actions the pure transition function asks the
 * session shell to perform.
 *
 * Event numbers in comments are RFC 4271 §8.1's. Message parsing happens in the shell: a received OPEN is validated
 * there (codec validateOpen/negotiate) and arrives here as `BgpOpen` with the peer's Hold Time, or as `MessageError`
 * carrying the BgpError to send. Received messages carry their payload in the event, and the FSM hands it on in the
 * action that delivers it: nothing travels beside the event.
 */
import type { BgpError } from '../errors.ts';

/** Timers driven by the FSM (RFC 4271 §8: ConnectRetryTimer, HoldTimer, KeepaliveTimer). */
export type TimerName = 'connectRetry' | 'hold' | 'keepalive';

/** A ROUTE-REFRESH request as received (RFC 2918 §3; `subtype` per RFC 7313 §3: 0 request, 1 BoRR, 2 EoRR). */
export interface RouteRefreshRequest {
  readonly afi: number;
  readonly safi: number;
  readonly subtype: number;
}

export type FsmEvent =
  /**
   * Event 1 / 3 (ManualStart, AutomaticStart); Event 4 / 5 (..._with_PassiveTcpEstablishment) when the peer is
   * configured passive or `passive` is set (the shell sets it to accept the peer's connection while it waits in Idle).
   */
  | { readonly type: 'Start'; readonly passive?: boolean }
  /**
   * Event 2 ManualStop: `error` is the Cease to send when a connection exists; without one the connection is closed
   * without a NOTIFICATION (a restart under RFC 4724 graceful restart: the peer keeps our routes as stale).
   */
  | { readonly type: 'ManualStop'; readonly error?: BgpError }
  /** Event 8 AutomaticStop (e.g. maximum prefixes reached): `error` is the Cease to send. */
  | { readonly type: 'AutomaticStop'; readonly error: BgpError }
  /** Event 9. */
  | { readonly type: 'ConnectRetryTimerExpires' }
  /** Event 10. */
  | { readonly type: 'HoldTimerExpires' }
  /** Event 11. */
  | { readonly type: 'KeepaliveTimerExpires' }
  /** Event 16 Tcp_CR_Acked (our connect succeeded) / Event 17 TcpConnectionConfirmed (accepted from the listener). */
  | { readonly type: 'TcpConnected'; readonly direction: 'outgoing' | 'incoming' }
  /** Event 18 TcpConnectionFails (connect refused/timed out, reset, or closed by the peer). */
  | { readonly type: 'TcpConnectionFails'; readonly message: string; readonly closedByPeer?: boolean }
  /** Event 19 BGPOpen: a valid OPEN; `holdTimeSec` is the peer's Hold Time (already checked not to be 1 or 2). */
  | { readonly type: 'BgpOpen'; readonly holdTimeSec: number }
  /**
   * Events 21, 22, 28 (BGPHeaderErr, BGPOpenMsgErr, UpdateMsgErr) and any other session-fatal error to send;
   * `cause`: the local failure behind a Cease / Out of Resources (an exception in our own code), for the reason.
   */
  | { readonly type: 'MessageError'; readonly error: BgpError; readonly cause?: string }
  /** Event 23 OpenCollisionDump: this connection lost §6.8 collision resolution. */
  | { readonly type: 'OpenCollisionDump'; readonly error: BgpError }
  /**
   * RFC 4271 §6.8 resolved for the new connection: the peer's OPEN arrived on the connection the shell holds aside
   * (the candidate) and the candidate wins. `error` (Cease 7) goes to the current connection, which is dropped; the
   * session continues on the candidate in OpenSent, and the candidate's OPEN follows as `BgpOpen`. Acts in OpenSent
   * and OpenConfirm only (a collision with an Established connection closes the new one, or is a `PeerRestarted`).
   */
  | { readonly type: 'CollisionSwitch'; readonly error: BgpError }
  /**
   * RFC 4724 §4: Established with graceful restart negotiated, and the peer's valid OPEN arrived on a new connection:
   * the peer restarted. The established connection is dropped without a NOTIFICATION (its TCP state is stale); the
   * session continues on the new connection in OpenSent, and its OPEN follows as `BgpOpen`. Acts in Established only.
   */
  | { readonly type: 'PeerRestarted' }
  /** Events 24/25 NotifMsgVerErr / NotifMsg. `text` is the RFC 9003 shutdown communication when present. */
  | { readonly type: 'NotifMsg'; readonly code: number; readonly subcode: number; readonly text?: string }
  /** Event 26. */
  | { readonly type: 'KeepAliveMsg' }
  /**
   * Event 27: an UPDATE arrived; `body` is the message after its 19-octet header. The shell decodes it only when the
   * FSM delivers it (Established): an UPDATE in another state costs no decoding and gets the RFC 6608 FSM error.
   */
  | { readonly type: 'UpdateMsg'; readonly body: Buffer }
  /** A ROUTE-REFRESH message (RFC 2918), decoded: valid in Established only. */
  | { readonly type: 'RouteRefreshMsg'; readonly request: RouteRefreshRequest };

export type FsmEventType = FsmEvent['type'];

export type FsmAction =
  /** Open a TCP connection to the peer (Connect state). */
  | { readonly type: 'initiateConnection' }
  /** Close the current TCP connection (after any NOTIFICATION queued before it has been flushed). */
  | { readonly type: 'dropConnection' }
  /**
   * Continue on the connection held aside (the `CollisionSwitch` winner, the restarted peer's new connection): it
   * becomes the current connection. Our OPEN was sent on it when it arrived.
   */
  | { readonly type: 'switchConnection' }
  | { readonly type: 'sendOpen' }
  | { readonly type: 'sendKeepalive' }
  | { readonly type: 'sendNotification'; readonly error: BgpError }
  /** Start (or restart) a timer. `ms` is absent for connectRetry: the shell picks the backoff delay. */
  | { readonly type: 'startTimer'; readonly timer: TimerName; readonly ms?: number }
  | { readonly type: 'stopTimer'; readonly timer: TimerName }
  /** The session reached Established with the negotiated hold/keepalive times. */
  | { readonly type: 'established' }
  /** Hand the received UPDATE (its body, decoded by the shell now) to the user. */
  | { readonly type: 'deliverUpdate'; readonly body: Buffer }
  /** Hand the received ROUTE-REFRESH request to the user. */
  | { readonly type: 'deliverRouteRefresh'; readonly request: RouteRefreshRequest };

export type FsmActionType = FsmAction['type'];
