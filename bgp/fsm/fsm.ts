/**
 * The RFC 4271 §8.2.2 finite state machine as a pure function: `transition(fsm, event, config)` returns the next
 * FSM state, the actions the session shell must perform (in order), and the reason for a state change.
 *
 * Differences from the RFC text, all deliberate and documented in docs/sessions.md:
 * - Optional session attributes not implemented: DelayOpen, DampPeerOscillations, CollisionDetectEstablishedState,
 *   SendNOTIFICATIONwithoutOPEN (we always may send a NOTIFICATION once TCP is up).
 * - Automatic restart from Idle (the RFC's IdleHoldTimer) is the shell's job: it feeds `Start` again after an
 *   exponential backoff with jitter (bgp/session/backoff.ts). The ConnectRetryTimer duration is also chosen by the
 *   shell from that backoff, so `startTimer connectRetry` carries no `ms`.
 * - Stray timer events in states where that timer is never running are ignored (the shell stops timers on every
 *   transition, so they can only be stale callbacks) instead of the RFC's FSM Error.
 * - A passive peer (RFC "PassiveTcpEstablishment") never initiates a connection: it waits in Active.
 * - One FSM per peer, not per connection: the shell holds a second connection from the peer aside (the §6.8
 *   collision candidate) until its OPEN arrives and decides the collision (bgp/session/). When the
 *   candidate wins, `CollisionSwitch` drops the current connection with Cease 7 and continues on the candidate in
 *   OpenSent; when a graceful-restart peer's new connection replaces an Established one, `PeerRestarted` does the
 *   same without a NOTIFICATION (RFC 4724 §4). `OpenCollisionDump` (Event 23) ends the FSM's own connection.
 */
import { BgpError } from '../errors.ts';
import { CeaseSubcode, MessageType } from '../constants.ts';
import { shutdownCommunicationOf } from '../codec/notification.ts';
import type { FsmAction, FsmEvent } from './events.ts';
import { SessionState } from './state.ts';
import type { StateReason } from './state.ts';

/** Hold timer used in OpenSent, before the peer's Hold Time is known: 4 minutes (RFC 4271 §8.2.2). */
export const OPEN_SENT_HOLD_TIME_SEC = 240;

/** Static configuration of one peer's FSM (seconds). */
export interface FsmConfig {
  /** Our Hold Time: 0 (no keepalives, no hold timer) or >= 3 seconds (RFC 4271 §4.2). */
  readonly holdTimeSec: number;
  /** Our KEEPALIVE interval; default one third of the negotiated Hold Time, never more than that (RFC 4271 §10). */
  readonly keepaliveTimeSec?: number;
  /** Never initiate a TCP connection; wait for the peer (RFC 4271 §8.1.1 PassiveTcpEstablishment). */
  readonly passive: boolean;
}

/** The FSM's variable data: state plus RFC 4271 §8 session attributes. Immutable. */
export interface FsmData {
  readonly state: SessionState;
  /** ConnectRetryCounter (RFC 4271 §8): failures since the last ManualStart/ManualStop. */
  readonly connectRetryCounter: number;
  /** Negotiated Hold Time in seconds (0 = none); meaningful from OpenConfirm on. */
  readonly holdTimeSec: number;
  /** KEEPALIVE interval in seconds derived from the negotiated Hold Time (0 = none). */
  readonly keepaliveTimeSec: number;
}

/** The result of one event. `reason` is set when the state changes. Treat all fields as read-only. */
export interface Transition {
  readonly next: FsmData;
  readonly actions: readonly FsmAction[];
  readonly reason?: StateReason;
}

/** The FSM of a peer that has not been started. */
export const INITIAL_FSM: FsmData = Object.freeze({
  state: SessionState.Idle,
  connectRetryCounter: 0,
  holdTimeSec: 0,
  keepaliveTimeSec: 0,
});

/**
 * Negotiated Hold Time (RFC 4271 §4.2: the smaller of ours and the peer's) and the KEEPALIVE interval
 * (configured, capped at one third of the Hold Time; 0 when the Hold Time is 0). Seconds.
 * Callers must have rejected a peer Hold Time of 1 or 2 (2/6) before.
 */
export function negotiateHoldTime(
  localHoldTimeSec: number,
  peerHoldTimeSec: number,
  keepaliveTimeSec?: number,
): { holdTimeSec: number; keepaliveTimeSec: number } {
  const holdTimeSec = Math.min(localHoldTimeSec, peerHoldTimeSec);
  if (holdTimeSec === 0) return { holdTimeSec: 0, keepaliveTimeSec: 0 };
  const third = Math.floor(holdTimeSec / 3);
  const keepalive = keepaliveTimeSec !== undefined && keepaliveTimeSec > 0 ? Math.min(keepaliveTimeSec, third) : third;
  return { holdTimeSec, keepaliveTimeSec: Math.max(1, keepalive) };
}

const DROP: FsmAction = Object.freeze({ type: 'dropConnection' });
const STOP_CONNECT_RETRY: FsmAction = Object.freeze({ type: 'stopTimer', timer: 'connectRetry' });
const STOP_HOLD: FsmAction = Object.freeze({ type: 'stopTimer', timer: 'hold' });
const STOP_KEEPALIVE: FsmAction = Object.freeze({ type: 'stopTimer', timer: 'keepalive' });
const START_CONNECT_RETRY: FsmAction = Object.freeze({ type: 'startTimer', timer: 'connectRetry' });
const INITIATE: FsmAction = Object.freeze({ type: 'initiateConnection' });
const SEND_OPEN: FsmAction = Object.freeze({ type: 'sendOpen' });
const SEND_KEEPALIVE: FsmAction = Object.freeze({ type: 'sendKeepalive' });
const ESTABLISHED: FsmAction = Object.freeze({ type: 'established' });
const SWITCH: FsmAction = Object.freeze({ type: 'switchConnection' });
const STOP_ALL: readonly FsmAction[] = [STOP_CONNECT_RETRY, STOP_HOLD, STOP_KEEPALIVE];
const NOTHING: readonly FsmAction[] = Object.freeze([]);

function startTimerMs(timer: 'hold' | 'keepalive', sec: number): FsmAction {
  return { type: 'startTimer', timer, ms: sec * 1000 };
}
/** The Hold Timer of OpenSent, before the peer's Hold Time is known. */
const HOLD_OPEN_SENT: FsmAction = Object.freeze(startTimerMs('hold', OPEN_SENT_HOLD_TIME_SEC));

function stay(fsm: FsmData, actions: readonly FsmAction[] = NOTHING): Transition {
  return { next: fsm, actions };
}

function move(fsm: FsmData, state: SessionState, actions: readonly FsmAction[], reason: StateReason, patch?: Partial<FsmData>): Transition {
  return { next: { ...fsm, ...patch, state }, actions, reason };
}

/** To Idle: optional NOTIFICATION first, then stop every timer and drop the connection. */
function toIdle(fsm: FsmData, reason: StateReason, opts: { notify?: BgpError | undefined; countFailure: boolean; resetCounter?: boolean }): Transition {
  const actions: FsmAction[] = [];
  if (opts.notify) actions.push({ type: 'sendNotification', error: opts.notify });
  actions.push(...STOP_ALL, DROP);
  const connectRetryCounter = opts.resetCounter ? 0 : fsm.connectRetryCounter + (opts.countFailure ? 1 : 0);
  return move(fsm, SessionState.Idle, actions, reason, { connectRetryCounter, holdTimeSec: 0, keepaliveTimeSec: 0 });
}

function sentReason(error: BgpError, cause?: string): StateReason {
  const text = shutdownCommunicationOf(error.code, error.subcode, error.data);
  return {
    kind: 'notificationSent',
    code: error.code,
    subcode: error.subcode,
    ...(text !== undefined ? { text } : {}),
    ...(cause !== undefined ? { cause } : {}),
  };
}

function receivedReason(event: { code: number; subcode: number; text?: string }): StateReason {
  return event.text !== undefined
    ? { kind: 'notificationReceived', code: event.code, subcode: event.subcode, text: event.text }
    : { kind: 'notificationReceived', code: event.code, subcode: event.subcode };
}

function tcpFailReason(event: { message: string; closedByPeer?: boolean }): StateReason {
  return event.closedByPeer ? { kind: 'connectionClosed' } : { kind: 'transportError', message: event.message };
}

/** Why a ManualStop without a NOTIFICATION ended the session (the shell does that only under graceful restart). */
export const CLOSED_WITHOUT_NOTIFICATION = 'closed without NOTIFICATION: graceful restart (RFC 4724 §4)';

function isDeconfigured(error: BgpError): boolean {
  if (error.code !== 6) return false;
  if (error.subcode === CeaseSubcode.PeerDeconfigured) return true;
  return error.subcode === CeaseSubcode.HardReset && error.data[0] === 6 && error.data[1] === CeaseSubcode.PeerDeconfigured;
}

function stopReason(event: { error?: BgpError | undefined }, kind: 'admin' | 'auto'): StateReason {
  if (event.error === undefined) return { kind: 'admin', message: CLOSED_WITHOUT_NOTIFICATION };
  if (isDeconfigured(event.error)) return { kind: 'deconfigured' };
  const r = sentReason(event.error);
  return kind === 'admin' && r.kind === 'notificationSent' && r.code === 6 && (r.subcode === 2 || r.subcode === 4)
    ? { kind: 'admin', message: r.text ?? event.error.message }
    : r;
}

const MESSAGE_TYPE_OF = { KeepAliveMsg: MessageType.Keepalive, UpdateMsg: MessageType.Update, RouteRefreshMsg: MessageType.RouteRefresh, BgpOpen: MessageType.Open } as const;
type MessageEventType = keyof typeof MESSAGE_TYPE_OF;

/** Why an Established session went down when the peer came back on a new connection (RFC 4724 §4). */
const PEER_RESTARTED = 'peer restarted: new connection with a valid OPEN (RFC 4724 §4)';

/** A message not allowed in this state: the RFC 6608 FSM error (5/1, 5/2 or 5/3 by state; 5/0 without a connection), sent, then Idle. */
function unexpectedMessage(fsm: FsmData, type: MessageEventType): Transition {
  const error = BgpError.fsmError(fsm.state, MESSAGE_TYPE_OF[type]);
  return toIdle(fsm, sentReason(error), { notify: error, countFailure: true });
}

/** KeepaliveTimer expiry once the hold time is negotiated: send a KEEPALIVE and restart the timer (none when 0). */
function keepaliveTick(fsm: FsmData): Transition {
  return stay(fsm, fsm.keepaliveTimeSec > 0 ? [SEND_KEEPALIVE, startTimerMs('keepalive', fsm.keepaliveTimeSec)] : NOTHING);
}

// The Hold Timer restart of every message received in Established, cached per hold time so a received KEEPALIVE
// allocates nothing.
const holdRestartCache = new Map<number, readonly FsmAction[]>();
function holdRestart(holdTimeSec: number): readonly FsmAction[] {
  let actions = holdRestartCache.get(holdTimeSec);
  if (!actions) {
    actions = Object.freeze(holdTimeSec > 0 ? [startTimerMs('hold', holdTimeSec)] : []);
    if (holdRestartCache.size < 64) holdRestartCache.set(holdTimeSec, actions);
  }
  return actions;
}

/**
 * Leaves the current connection for the one held aside (CollisionSwitch, PeerRestarted): `error` first if given, every
 * timer stopped, the current connection dropped, the new one adopted with the OpenSent Hold Timer. The negotiated
 * Hold Time is forgotten: the new connection's OPEN follows.
 */
function switchConnection(fsm: FsmData, reason: StateReason | undefined, opts: { notify?: BgpError; countFailure: boolean }): Transition {
  const actions: FsmAction[] = [];
  if (opts.notify) actions.push({ type: 'sendNotification', error: opts.notify });
  actions.push(...STOP_ALL, DROP, SWITCH, HOLD_OPEN_SENT);
  const patch = { holdTimeSec: 0, keepaliveTimeSec: 0, connectRetryCounter: fsm.connectRetryCounter + (opts.countFailure ? 1 : 0) };
  if (reason === undefined) return { next: { ...fsm, ...patch }, actions };
  return move(fsm, SessionState.OpenSent, actions, reason, patch);
}

/** The events that end a connection the same way in OpenSent, OpenConfirm and Established. */
type ConnectionEndingEvent = Extract<FsmEvent, { type: 'ManualStop' | 'AutomaticStop' | 'HoldTimerExpires' | 'MessageError' | 'OpenCollisionDump' | 'NotifMsg' }>;

const CONNECTION_ENDING: ReadonlySet<FsmEvent['type']> = new Set(['ManualStop', 'AutomaticStop', 'HoldTimerExpires', 'MessageError', 'OpenCollisionDump', 'NotifMsg']);
function endsConnection(event: FsmEvent): event is ConnectionEndingEvent {
  return CONNECTION_ENDING.has(event.type);
}

/** OpenSent, OpenConfirm, Established: a NOTIFICATION sent (or received), then Idle. */
function endConnection(fsm: FsmData, event: ConnectionEndingEvent): Transition {
  switch (event.type) {
    case 'ManualStop':
      return toIdle(fsm, stopReason(event, 'admin'), { notify: event.error, countFailure: false, resetCounter: true });
    case 'AutomaticStop':
      return toIdle(fsm, stopReason(event, 'auto'), { notify: event.error, countFailure: true });
    case 'HoldTimerExpires':
      return toIdle(fsm, { kind: 'holdTimerExpired' }, { notify: BgpError.holdTimerExpired(), countFailure: true });
    case 'MessageError':
      return toIdle(fsm, sentReason(event.error, event.cause), { notify: event.error, countFailure: true });
    case 'OpenCollisionDump':
      return toIdle(fsm, { kind: 'collision' }, { notify: event.error, countFailure: true });
    case 'NotifMsg':
      return toIdle(fsm, receivedReason(event), { countFailure: true });
  }
}

/** §8.2.2 Idle: Start leaves it; an incoming connection is refused; everything else is ignored. */
function idle(fsm: FsmData, event: FsmEvent, config: FsmConfig): Transition {
  switch (event.type) {
    case 'Start':
      return config.passive || event.passive
        ? move(fsm, SessionState.Active, NOTHING, { kind: 'started' })
        : move(fsm, SessionState.Connect, [START_CONNECT_RETRY, INITIATE], { kind: 'started' });
    case 'TcpConnected':
      return stay(fsm, [DROP]);
    default:
      return stay(fsm);
  }
}

/** §8.2.2 Connect and Active: waiting for a TCP connection (dialling in Connect, listening in Active). */
function connectOrActive(fsm: FsmData, event: FsmEvent, config: FsmConfig): Transition {
  const s = fsm.state;
  switch (event.type) {
    case 'Start':
    case 'HoldTimerExpires':
    case 'KeepaliveTimerExpires':
    case 'CollisionSwitch':
    case 'PeerRestarted':
      return stay(fsm);
    case 'ManualStop':
      return move(fsm, SessionState.Idle, [...STOP_ALL, DROP], stopReason(event, 'admin'), { connectRetryCounter: 0 });
    case 'AutomaticStop':
      return move(fsm, SessionState.Idle, [...STOP_ALL, DROP], stopReason(event, 'auto'), { connectRetryCounter: fsm.connectRetryCounter + 1 });
    case 'ConnectRetryTimerExpires':
      if (config.passive) return stay(fsm);
      return s === SessionState.Connect
        ? stay(fsm, [DROP, START_CONNECT_RETRY, INITIATE])
        : move(fsm, SessionState.Connect, [START_CONNECT_RETRY, INITIATE], { kind: 'progress', message: 'connect retry timer expired' });
    case 'TcpConnected':
      return move(fsm, SessionState.OpenSent, [STOP_CONNECT_RETRY, SEND_OPEN, HOLD_OPEN_SENT], {
        kind: 'progress',
        message: `TCP connection established (${event.direction})`,
      });
    case 'TcpConnectionFails':
      if (s === SessionState.Connect) {
        // §8.2.2 Connect, Event 18: restart the ConnectRetryTimer and wait in Active.
        return move(fsm, SessionState.Active, config.passive ? [DROP] : [DROP, START_CONNECT_RETRY], tcpFailReason(event), {
          connectRetryCounter: fsm.connectRetryCounter + 1,
        });
      }
      return move(fsm, SessionState.Idle, [...STOP_ALL, DROP], tcpFailReason(event), { connectRetryCounter: fsm.connectRetryCounter + 1 });
    case 'NotifMsg':
      return move(fsm, SessionState.Idle, [...STOP_ALL, DROP], receivedReason(event), { connectRetryCounter: fsm.connectRetryCounter + 1 });
    case 'MessageError':
      return toIdle(fsm, sentReason(event.error, event.cause), { notify: event.error, countFailure: true });
    case 'OpenCollisionDump':
      return toIdle(fsm, sentReason(event.error), { notify: event.error, countFailure: true });
    case 'BgpOpen':
    case 'KeepAliveMsg':
    case 'UpdateMsg':
    case 'RouteRefreshMsg':
      // A message cannot arrive without a connection: FSM Error 5/0.
      return unexpectedMessage(fsm, event.type);
  }
}

/** §8.2.2 OpenSent: our OPEN is out, waiting for the peer's. */
function openSent(fsm: FsmData, event: FsmEvent, config: FsmConfig): Transition {
  if (endsConnection(event)) return endConnection(fsm, event);
  switch (event.type) {
    case 'Start':
    case 'TcpConnected':
    case 'ConnectRetryTimerExpires':
    case 'KeepaliveTimerExpires':
    case 'PeerRestarted':
      return stay(fsm);
    case 'CollisionSwitch':
      // Still OpenSent, now on the candidate: no state change, so no reason.
      return switchConnection(fsm, undefined, { notify: event.error, countFailure: false });
    case 'TcpConnectionFails':
      // §8.2.2 OpenSent, Event 18: close, restart the ConnectRetryTimer, go to Active.
      return move(fsm, SessionState.Active, config.passive ? [STOP_HOLD, STOP_KEEPALIVE, DROP] : [STOP_HOLD, STOP_KEEPALIVE, DROP, START_CONNECT_RETRY], tcpFailReason(event), {
        connectRetryCounter: fsm.connectRetryCounter + 1,
      });
    case 'BgpOpen': {
      const n = negotiateHoldTime(config.holdTimeSec, event.holdTimeSec, config.keepaliveTimeSec);
      const actions: FsmAction[] = [STOP_CONNECT_RETRY, SEND_KEEPALIVE];
      if (n.holdTimeSec > 0) actions.push(startTimerMs('keepalive', n.keepaliveTimeSec), startTimerMs('hold', n.holdTimeSec));
      else actions.push(STOP_HOLD, STOP_KEEPALIVE);
      return move(fsm, SessionState.OpenConfirm, actions, { kind: 'progress', message: 'OPEN received' }, n);
    }
    case 'KeepAliveMsg':
    case 'UpdateMsg':
    case 'RouteRefreshMsg':
      // Before the peer's OPEN: RFC 6608 5/1.
      return unexpectedMessage(fsm, event.type);
  }
}

/**
 * §8.2.2 OpenConfirm and Established: OPENs exchanged and the Hold Time negotiated. They differ only in what a
 * KEEPALIVE does (OpenConfirm → Established) and in accepting UPDATE and ROUTE-REFRESH (Established only).
 */
function openConfirmOrEstablished(fsm: FsmData, event: FsmEvent): Transition {
  const established = fsm.state === SessionState.Established;
  if (endsConnection(event)) return endConnection(fsm, event);
  switch (event.type) {
    case 'Start':
    case 'TcpConnected':
    case 'ConnectRetryTimerExpires':
      return stay(fsm);
    case 'TcpConnectionFails':
      return toIdle(fsm, tcpFailReason(event), { countFailure: true });
    case 'KeepaliveTimerExpires':
      return keepaliveTick(fsm);
    case 'KeepAliveMsg':
      if (established) return stay(fsm, holdRestart(fsm.holdTimeSec));
      return move(fsm, SessionState.Established, [...holdRestart(fsm.holdTimeSec), ESTABLISHED], { kind: 'progress', message: 'KEEPALIVE received' }, {
        connectRetryCounter: 0,
      });
    case 'UpdateMsg':
      if (established) return stay(fsm, [...holdRestart(fsm.holdTimeSec), { type: 'deliverUpdate', body: event.body }]);
      return unexpectedMessage(fsm, event.type);
    case 'RouteRefreshMsg':
      if (established) return stay(fsm, [...holdRestart(fsm.holdTimeSec), { type: 'deliverRouteRefresh', request: event.request }]);
      return unexpectedMessage(fsm, event.type);
    case 'BgpOpen':
      // A second OPEN: RFC 6608 5/2 in OpenConfirm, 5/3 in Established.
      return unexpectedMessage(fsm, event.type);
    case 'CollisionSwitch':
      if (established) return stay(fsm);
      return switchConnection(fsm, { kind: 'collision' }, { notify: event.error, countFailure: false });
    case 'PeerRestarted':
      if (!established) return stay(fsm);
      return switchConnection(fsm, { kind: 'transportError', message: PEER_RESTARTED }, { countFailure: true });
  }
}

/**
 * One step of the RFC 4271 §8.2.2 FSM. Pure: no I/O, no clock; same inputs, same output.
 * Throws nothing; events that are impossible in a state are ignored (see the module comment).
 */
export function transition(fsm: FsmData, event: FsmEvent, config: FsmConfig): Transition {
  switch (fsm.state) {
    case SessionState.Idle:
      return idle(fsm, event, config);
    case SessionState.Connect:
    case SessionState.Active:
      return connectOrActive(fsm, event, config);
    case SessionState.OpenSent:
      return openSent(fsm, event, config);
    case SessionState.OpenConfirm:
    case SessionState.Established:
      return openConfirmOrEstablished(fsm, event);
  }
}
