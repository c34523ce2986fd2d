/**
 * Session: one BGP peer. The imperative shell around the pure RFC 4271 §8 FSM (bgp/fsm/fsm.ts): it turns socket
 * events, received messages and timer expiries into FSM events, and performs the actions each transition returns.
 * Every state change, every FSM timer start and stop and every `stateChange` goes through those actions. The parts,
 * each in its own module beside this one:
 * - connection.ts     one TCP connection: socket, framer, and the NOTIFICATION path (written, then the socket is
 *                     ended after it flushes and destroyed after a short timeout if the peer does not close)
 * - collision.ts      the second connection held aside during a §6.8 collision, and the rule that decides it
 * - timers.ts         ConnectRetry, Hold and Keepalive timers on the injectable Clock
 * - restart.ts        the automatic restart from Idle and the reconnect backoff (backoff.ts)
 * - tx-pump.ts        the corked UPDATE pump (pull model, see TxSource)
 * - prefix-limit.ts   the received-prefix count and maxPrefixes (RFC 4486)
 * - open-exchange.ts  our OPEN and the configuration checks of the peer's; capability negotiation is the codec's
 *
 * Events:
 * - 'stateChange' ({ from, to, reason: StateReason })
 * - 'established' (negotiated: Negotiated)  — after this the session pulls UPDATEs from the TxSource
 * - 'down' (reason: StateReason)            — left Established; the peer forgot everything we sent
 * - 'routeRefresh' ({ afi, safi, subtype }) — RFC 2918 / RFC 7313 request from the peer
 * - 'endOfRib' (family)                     — the peer's End-of-RIB (RFC 4724 §2)
 * - 'update' (result: UpdateDecodeResult)   — counted only; Herald never installs received routes
 * - 'error' is never emitted (transport problems are StateReasons), so no listener is required.
 */
import { EventEmitter } from 'node:events';
import type { Socket } from 'node:net';
import { CeaseSubcode } from '../constants.ts';
import type { Family } from '../constants.ts';
import { BgpError } from '../errors.ts';
import { encodeMessage } from '../codec/message.ts';
import { keepaliveMessage } from '../codec/keepalive.ts';
import type { Negotiated } from '../codec/open.ts';
import { decodeUpdate, endOfRibFamily } from '../codec/update.ts';
import { DEFAULT_CONTEXT } from '../codec/types.ts';
import type { OpenMessage, UpdateDecodeResult } from '../codec/types.ts';
import { realClock } from '../clock.ts';
import type { Clock } from '../clock.ts';
import type { FsmAction, FsmEvent, TimerName } from '../fsm/events.ts';
import { INITIAL_FSM, OPEN_SENT_HOLD_TIME_SEC, transition } from '../fsm/fsm.ts';
import type { FsmConfig, FsmData, Transition } from '../fsm/fsm.ts';
import { SessionState } from '../fsm/state.ts';
import type { StateReason } from '../fsm/state.ts';
import type { PeerSession } from '../speaker-types.ts';
import { ceaseOf, WITHOUT_NOTIFICATION, withHardReset } from './cease.ts';
import type { CeaseRequest, StopRequest } from './cease.ts';
import { CandidateSlot, resolveCollision } from './collision.ts';
import { Connection } from './connection.ts';
import type { ConnectionEvents } from './connection.ts';
import { readCandidateMessage, readMessage } from './inbound.ts';
import { FAMILY_AFI_SAFI, NO_AGREEMENT, agree, localOpen } from './open-exchange.ts';
import type { Agreement } from './open-exchange.ts';
import { fsmConfigOf } from './options.ts';
import type { SessionOptions } from './options.ts';
import { PrefixLimit } from './prefix-limit.ts';
import { Restart } from './restart.ts';
import { newStats, notificationRecord } from './stats.ts';
import type { SessionStats } from './stats.ts';
import { FsmTimers } from './timers.ts';
import { TxPump } from './tx-pump.ts';
import type { TxSource } from './tx-pump.ts';
import { applySocketOptions, dial, TransportError, ttlOptions } from './transport.ts';
import { PEER_OPTIONS } from '../peer-config.ts';
import type { DialOptions } from './transport.ts';

export type { CeaseRequest, StopRequest } from './cease.ts';
export { WITHOUT_NOTIFICATION } from './cease.ts';
export type { SessionOptions } from './options.ts';
export type { NotificationRecord, SessionStats } from './stats.ts';
export type { TxSource } from './tx-pump.ts';

const KEEPALIVE_BYTES = keepaliveMessage();
// Constant events for the hot paths (no allocation per received KEEPALIVE or timer expiry).
const EV_START: FsmEvent = Object.freeze({ type: 'Start' });
const EV_START_PASSIVE: FsmEvent = Object.freeze({ type: 'Start', passive: true });
const EV_PEER_RESTARTED: FsmEvent = Object.freeze({ type: 'PeerRestarted' });
const EV_MANUAL_STOP_SILENT: FsmEvent = Object.freeze({ type: 'ManualStop' });
const EV_TIMER: Record<TimerName, FsmEvent> = {
  connectRetry: Object.freeze({ type: 'ConnectRetryTimerExpires' }),
  hold: Object.freeze({ type: 'HoldTimerExpires' }),
  keepalive: Object.freeze({ type: 'KeepaliveTimerExpires' }),
};
const collisionCease = (): BgpError => BgpError.cease(CeaseSubcode.ConnectionCollisionResolution);

export class Session extends EventEmitter implements PeerSession {
  readonly name: string;
  readonly options: SessionOptions;
  readonly stats: SessionStats = newStats();

  private readonly clock: Clock;
  private readonly fsmConfig: FsmConfig;
  private readonly restart: Restart;
  private readonly timers: FsmTimers<Connection | undefined>;
  private readonly candidate: CandidateSlot<Connection>;
  private readonly tx: TxPump;
  private readonly prefixes: PrefixLimit;
  private readonly connectionEvents: ConnectionEvents;
  private fsm: FsmData = INITIAL_FSM;
  /** The FSM's connection (none in Idle and Active; in Connect, the attempt under way). */
  private conn: Connection | undefined;
  /** Every connection whose socket has not closed yet: stop() resolves once there is none. */
  private readonly sockets = new Set<Connection>();
  private running = false;
  private stopWaiters: (() => void)[] = [];
  /** What the OPENs of the current connection agreed. */
  private agreement: Agreement = NO_AGREEMENT;
  private reason: StateReason | undefined;
  private dispatching = false;
  private readonly queue: { conn: Connection | undefined; event: FsmEvent }[] = [];

  /** Throws RangeError for a hold time of 1 or 2 seconds or a bad BGP Identifier (configuration errors). */
  constructor(options: SessionOptions) {
    super();
    this.fsmConfig = fsmConfigOf(options);
    this.name = options.name;
    this.options = options;
    this.clock = options.clock ?? realClock;
    this.restart = new Restart(this.clock, {
      connectRetryTimeSec: options.connectRetryTimeSec ?? PEER_OPTIONS.connectRetryTimeSec.default,
      baseMs: options.connectRetryBaseMs ?? 1000,
      ...(options.random ? { random: options.random } : {}),
    });
    this.timers = new FsmTimers(this.clock, (timer, owner) => this.feed(timer === 'connectRetry' ? undefined : owner, EV_TIMER[timer]));
    this.candidate = new CandidateSlot(this.clock, (conn) => this.closeAside(conn, BgpError.holdTimerExpired()));
    this.tx = new TxPump(this.stats.messagesSent);
    this.prefixes = new PrefixLimit(options.maxPrefixes);
    this.connectionEvents = {
      connected: (conn) => this.feed(conn, { type: 'TcpConnected', direction: 'outgoing' }),
      data: (conn, chunk) => this.onData(conn, chunk),
      drain: (conn) => {
        if (conn !== this.conn) return;
        this.tx.resume();
        this.pump();
      },
      failed: (conn, message, byPeer) => this.onFailed(conn, message, byPeer),
      closed: (conn) => {
        this.sockets.delete(conn);
        this.resolveStopWaiters();
      },
    };
  }

  /** Current FSM state. */
  get state(): SessionState {
    return this.fsm.state;
  }

  /** Negotiated parameters of the current connection (from OpenConfirm on), else undefined. */
  get negotiated(): Negotiated | undefined {
    return this.agreement.negotiated;
  }

  /** Reason of the last state change. */
  get lastReason(): StateReason | undefined {
    return this.reason;
  }

  /** ConnectRetryCounter (RFC 4271 §8). */
  get connectRetryCounter(): number {
    return this.fsm.connectRetryCounter;
  }

  /** Local address of the current connection, if connected. */
  get localAddress(): string | undefined {
    return this.conn?.connected ? this.conn.socket.localAddress : undefined;
  }

  /** Local port of the current connection, if connected. */
  get localPort(): number | undefined {
    return this.conn?.connected ? this.conn.socket.localPort : undefined;
  }

  /** The delay (ms) the backoff will hand out next, before jitter (for tests and status pages). */
  get nextRetryDelayMs(): number {
    return this.restart.nextDelayMs;
  }

  /** ManualStart (passive peers: ManualStart_with_PassiveTcpEstablishment). Idempotent. */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.restart.reset();
    this.feed(undefined, EV_START);
  }

  /**
   * ManualStop: if connected, a Cease (default 6/2 Administrative Shutdown, with an optional RFC 9003 text; inside a
   * Hard Reset by the RFC 8538 §5 rule where the N bit was negotiated, see cease.ts) or, for `withoutNotification`,
   * no NOTIFICATION at all (the peer's RFC 4724 helper keeps our routes as stale); then close, no reconnect.
   * Resolves when the socket is closed. Pass subcode 3 for Peer De-configured.
   */
  stop(request: StopRequest = { subcode: CeaseSubcode.AdministrativeShutdown }): Promise<void> {
    this.running = false;
    this.restart.cancelStart();
    const cease = request === WITHOUT_NOTIFICATION ? undefined : request;
    this.dropCandidate(cease !== undefined ? ceaseOf(cease) : undefined);
    const done = new Promise<void>((resolve) => this.stopWaiters.push(resolve));
    this.feed(undefined, cease !== undefined ? { type: 'ManualStop', error: this.onWire(ceaseOf(cease), cease.hardReset) } : EV_MANUAL_STOP_SILENT);
    this.resolveStopWaiters();
    return done;
  }

  /**
   * Reset: Cease (default 6/4 Administrative Reset; inside a Hard Reset where the N bit was negotiated and
   * `hardReset` asks for it, see cease.ts) then reconnect after the base backoff delay.
   */
  reset(request: CeaseRequest = { subcode: CeaseSubcode.AdministrativeReset }): void {
    this.dropCandidate(ceaseOf(request));
    this.restart.reset();
    if (this.fsm.state === SessionState.Idle) return;
    this.feed(undefined, { type: 'AutomaticStop', error: this.onWire(ceaseOf(request), request.hardReset) });
  }

  /** A Cease as this connection sends it: the RFC 8538 §5 Hard Reset rule for the graceful restart agreed on it. */
  private onWire(error: BgpError, hardReset?: boolean): BgpError {
    return withHardReset(error, this.agreement.negotiated?.gracefulRestartMode ?? 'none', hardReset);
  }

  /** Sets the UPDATE source (the Adj-RIB-Out); pulled while Established and writable. */
  setTxSource(src: TxSource): void {
    this.tx.source = src;
    this.pump();
  }

  /** The TxSource has new pending changes. */
  kickTx(): void {
    this.pump();
  }

  /** Sends a ROUTE-REFRESH for `family` (RFC 2918) when Established and negotiated; returns whether it was sent. */
  sendRouteRefresh(family: Family): boolean {
    if (this.fsm.state !== SessionState.Established || !this.conn || !this.agreement.negotiated?.routeRefresh) return false;
    const { afi, safi } = FAMILY_AFI_SAFI[family];
    this.conn.write(encodeMessage({ type: 'ROUTE-REFRESH', afi, safi, subtype: 0 }, this.agreement.sendCtx), 'ROUTE-REFRESH');
    return true;
  }

  /**
   * An incoming TCP connection from the listener for this peer. Applies TTL/GTSM options, then: not started →
   * refused (closed); Idle/Connect/Active → adopted (a pending outgoing attempt is abandoned); OpenSent/OpenConfirm →
   * held aside as a collision candidate (RFC 4271 §6.8, §8: it runs its own OpenSent: we send our OPEN on it); the
   * existing connection is not touched until the peer's OPEN arrives on the candidate, and only then is the
   * collision resolved (bgp/session/collision.ts; the loser gets Cease 7). A candidate that sends nothing within the
   * OpenSent hold time (240 s), sends anything but an OPEN, or closes is dropped alone. Established → refused with
   * Cease 7, unless the peer negotiated graceful restart: then held aside too, and only a valid OPEN on it replaces
   * the established connection (RFC 4724 §4: the peer restarted).
   */
  acceptConnection(socket: Socket): void {
    try {
      applySocketOptions(socket, { ...ttlOptions(this.options), remoteAddress: this.options.remoteAddress });
    } catch (e) {
      socket.destroy();
      this.reason = { kind: 'transportError', message: `incoming connection: ${(e as Error).message}` };
      return;
    }
    if (!this.running) {
      socket.destroy();
      return;
    }
    const s = this.fsm.state;
    if (s === SessionState.Idle || s === SessionState.Connect || s === SessionState.Active) {
      this.restart.cancelStart();
      this.conn?.close(false);
      this.conn = undefined;
      if (s === SessionState.Idle) this.feed(undefined, EV_START_PASSIVE);
      const incoming = this.newConnection(socket, 'incoming');
      this.conn = incoming;
      this.feed(incoming, { type: 'TcpConnected', direction: 'incoming' });
      return;
    }
    if (s === SessionState.Established && !this.agreement.negotiated?.gracefulRestart) {
      this.closeAside(this.newConnection(socket, 'incoming'), collisionCease());
      return;
    }
    // A newer connection replaces an older candidate; collision detection waits for the OPEN on it.
    this.dropCandidate(collisionCease());
    const candidate = this.newConnection(socket, 'incoming');
    this.candidate.hold(candidate, OPEN_SENT_HOLD_TIME_SEC * 1000);
    this.sendOpen(candidate);
  }

  // ------------------------------------------------------------------------------------------------------------
  // FSM driving

  /** Feeds an event for connection `conn` (undefined = session-level); stale connections' events are ignored. */
  private feed(conn: Connection | undefined, event: FsmEvent): void {
    if (conn !== undefined && conn !== this.conn) return;
    if (this.dispatching) {
      this.queue.push({ conn, event });
      return;
    }
    this.dispatching = true;
    try {
      this.apply(transition(this.fsm, event, this.fsmConfig));
      for (let item = this.queue.shift(); item; item = this.queue.shift()) {
        if (item.conn !== undefined && item.conn !== this.conn) continue;
        this.apply(transition(this.fsm, item.event, this.fsmConfig));
      }
    } finally {
      this.dispatching = false;
    }
  }

  /** Performs a transition's actions in order, then reports the state change (if any) and what follows from it. */
  private apply(t: Transition): void {
    const from = this.fsm.state;
    this.fsm = t.next;
    for (const action of t.actions) this.perform(action);
    const to = t.next.state;
    if (from === to || !t.reason) return;
    this.reason = t.reason;
    if (to === SessionState.Established) {
      this.stats.establishedAt = this.clock.now();
      this.restart.established();
    }
    this.emit('stateChange', { from, to, reason: t.reason });
    if (to === SessionState.Established) {
      this.tx.resume();
      this.emit('established', this.agreement.negotiated);
      this.pump();
    }
    if (from === SessionState.Established) {
      this.stats.flaps++;
      this.restart.down();
      this.emit('down', t.reason);
    }
    if (to === SessionState.Idle) this.enteredIdle();
  }

  private perform(action: FsmAction): void {
    const conn = this.conn;
    switch (action.type) {
      case 'initiateConnection':
        this.initiate();
        return;
      case 'dropConnection':
        this.dropConnection();
        return;
      case 'switchConnection':
        this.conn = this.candidate.take();
        return;
      case 'sendOpen':
        if (conn) this.sendOpen(conn);
        return;
      case 'sendKeepalive':
        conn?.write(KEEPALIVE_BYTES, 'KEEPALIVE');
        return;
      case 'sendNotification':
        if (conn) this.sendNotification(conn, action.error);
        return;
      case 'startTimer':
        this.timers.start(action.timer, action.ms ?? this.restart.connectRetryMs(this.fsm.state), conn);
        return;
      case 'stopTimer':
        this.timers.stop(action.timer);
        return;
      case 'established':
        return;
      case 'deliverUpdate':
        if (conn) this.deliverUpdate(conn, action.body);
        return;
      case 'deliverRouteRefresh':
        this.emit('routeRefresh', action.request);
        return;
    }
  }

  /**
   * Idle, whatever the reason: unless stopped, start again after the next backoff delay. Every failure counts the
   * same, an OPEN rejected with a NOTIFICATION in either direction included: the delay doubles per failure up to
   * connectRetryTimeSec and the session keeps trying, so a peer whose configuration is corrected is reached within
   * one delay.
   */
  private enteredIdle(): void {
    this.dropCandidate(BgpError.cease(CeaseSubcode.AdministrativeReset));
    if (!this.running) {
      this.resolveStopWaiters();
      return;
    }
    this.restart.scheduleStart(() => {
      if (this.running && this.fsm.state === SessionState.Idle) this.feed(undefined, EV_START);
    });
  }

  // ------------------------------------------------------------------------------------------------------------
  // Connections

  private newConnection(socket: Socket, direction: 'outgoing' | 'incoming'): Connection {
    const conn = new Connection(socket, direction, this.connectionEvents, this.stats.messagesSent);
    this.sockets.add(conn);
    return conn;
  }

  private initiate(): void {
    this.conn?.close(false);
    this.conn = undefined;
    let socket: Socket;
    try {
      socket = dial(dialOptionsOf(this.options));
    } catch (e) {
      const message = e instanceof TransportError ? e.message : `dial failed: ${(e as Error).message}`;
      // Defer: we are inside an FSM step.
      queueMicrotask(() => this.feed(undefined, { type: 'TcpConnectionFails', message }));
      return;
    }
    this.conn = this.newConnection(socket, 'outgoing');
  }

  /** The FSM's connection goes, and what was negotiated on it with it. */
  private dropConnection(): void {
    const conn = this.conn;
    if (conn) conn.close(conn.closing);
    this.conn = undefined;
    this.tx.resume();
    this.agreement = NO_AGREEMENT;
    this.prefixes.clear();
    this.stats.prefixesReceived = 0;
  }

  /** A connection that is not the FSM's (a candidate, a refused one) goes: NOTIFICATION `error` first, if any. */
  private closeAside(conn: Connection, error: BgpError | undefined): void {
    if (error && !conn.socket.destroyed) {
      this.sendNotification(conn, error);
      conn.close(true);
    } else {
      conn.close(false);
    }
  }

  private dropCandidate(error: BgpError | undefined): void {
    const cand = this.candidate.take();
    if (cand) this.closeAside(cand, error);
  }

  private onFailed(conn: Connection, message: string, byPeer: boolean): void {
    if (conn === this.candidate.conn) {
      this.dropCandidate(undefined);
      return;
    }
    if (conn !== this.conn || conn.closing) return;
    this.feed(conn, { type: 'TcpConnectionFails', message, closedByPeer: byPeer });
  }

  private resolveStopWaiters(): void {
    if (this.running || this.stopWaiters.length === 0) return;
    if (this.fsm.state !== SessionState.Idle || this.conn || this.candidate.conn || this.sockets.size > 0) return;
    const waiters = this.stopWaiters;
    this.stopWaiters = [];
    for (const w of waiters) w();
  }

  // ------------------------------------------------------------------------------------------------------------
  // Output

  private sendOpen(conn: Connection): void {
    const open = localOpen(this.options, this.fsmConfig.holdTimeSec);
    conn.localOpen = open;
    conn.write(encodeMessage(open, DEFAULT_CONTEXT), 'OPEN');
  }

  /** Sends the NOTIFICATION for `error` on `conn` and records it; the caller (or dropConnection) closes. */
  private sendNotification(conn: Connection, error: BgpError): void {
    const msg = conn.notify(error);
    this.stats.lastNotificationSent = notificationRecord({ code: error.code, subcode: error.subcode, data: error.data, text: msg.shutdownCommunication }, this.clock.now());
  }

  private pump(): void {
    const conn = this.conn;
    if (this.fsm.state !== SessionState.Established || !conn || conn.closing) return;
    this.tx.run(conn.socket, this.agreement.sendCtx, this.agreement.maxLength, () => this.fsm.state === SessionState.Established && this.conn === conn && !conn.closing);
  }

  // ------------------------------------------------------------------------------------------------------------
  // Input

  private onData(conn: Connection, chunk: Buffer): void {
    if (conn.closing) return;
    let messages: Buffer[];
    try {
      messages = conn.framer.push(chunk);
    } catch (e) {
      this.protocolError(conn, e);
      return;
    }
    for (const msg of messages) {
      const isCandidate = conn === this.candidate.conn;
      if (conn.closing || (!isCandidate && conn !== this.conn)) return;
      try {
        if (isCandidate) this.onCandidateMessage(conn, msg);
        else this.onMessage(conn, msg);
      } catch (e) {
        this.protocolError(conn, e);
        return;
      }
    }
  }

  private protocolError(conn: Connection, e: unknown): void {
    // Not the peer's fault: an exception in our own code ends the session with Cease / Out of Resources, and the
    // reason says what failed (a bug to report; the encoder's refusals never get here, see bgp/rib/adj-rib-out.ts).
    const error = e instanceof BgpError ? e : BgpError.cease(CeaseSubcode.OutOfResources);
    const cause = e instanceof BgpError ? undefined : `internal error: ${e instanceof Error ? e.message : String(e)}`;
    if (conn === this.candidate.conn) {
      if (cause !== undefined) this.reason = { kind: 'transportError', message: cause };
      this.dropCandidate(error);
      return;
    }
    this.feed(conn, cause !== undefined ? { type: 'MessageError', error, cause } : { type: 'MessageError', error });
  }

  /** A message on the FSM's connection. Throws BgpError (see readMessage). */
  private onMessage(conn: Connection, msg: Buffer): void {
    const m = readMessage(msg, this.fsm.state, this.options, this.stats, this.clock.now());
    if (m.event) {
      this.feed(conn, m.event);
      return;
    }
    conn.remoteOpen = m.open;
    // A pending candidate has not sent its OPEN (that would have resolved the collision already): it stays aside,
    // and the collision is resolved if and when its OPEN arrives (RFC 4271 §6.8).
    this.acceptOpen(conn, m.open);
  }

  /** The peer's valid OPEN: what this connection agrees (capabilities, codec contexts), then BgpOpen. */
  private acceptOpen(conn: Connection, open: OpenMessage): void {
    this.agreement = agree(conn.localOpen ?? localOpen(this.options, this.fsmConfig.holdTimeSec), open, this.fsmConfig);
    conn.framer.maxLength = this.agreement.maxLength;
    this.feed(conn, { type: 'BgpOpen', holdTimeSec: open.holdTime });
  }

  /** Counts a received UPDATE (its body decoded now, with the negotiated context) and enforces maxPrefixes. */
  private deliverUpdate(conn: Connection, body: Buffer): void {
    let result: UpdateDecodeResult;
    try {
      result = decodeUpdate(body, this.agreement.recvCtx);
    } catch (e) {
      this.protocolError(conn, e);
      return;
    }
    this.stats.updatesReceived++;
    if (result.treatAsWithdraw || result.discardedAttributes.length > 0) this.stats.malformedUpdatesReceived++;
    const exceeded = this.prefixes.add(result);
    this.stats.prefixesReceived = this.prefixes.count;
    this.emit('update', result);
    const eor = endOfRibFamily(result);
    if (eor !== undefined) this.emit('endOfRib', eor);
    if (exceeded) this.feed(this.conn, { type: 'AutomaticStop', error: this.onWire(exceeded) });
  }

  /** A message on the collision candidate: its OPEN decides the collision (collision.ts); a NOTIFICATION ends it. */
  private onCandidateMessage(conn: Connection, msg: Buffer): void {
    const open = readCandidateMessage(msg, this.options, this.stats);
    if (!open) {
      this.dropCandidate(undefined);
      return;
    }
    conn.remoteOpen = open;
    const outcome = resolveCollision({
      state: this.fsm.state,
      localId: this.options.bgpIdentifier,
      remoteId: open.bgpIdentifier,
      localAs: this.options.localAs,
      peerAs: this.options.peerAs,
      existing: this.conn?.direction,
      gracefulRestart: this.agreement.negotiated?.gracefulRestart !== undefined,
    });
    if (outcome === 'closeCandidate') {
      this.dropCandidate(collisionCease());
      return;
    }
    this.feed(undefined, outcome === 'switch' ? { type: 'CollisionSwitch', error: collisionCease() } : EV_PEER_RESTARTED);
    if (this.conn === conn) this.acceptOpen(conn, open);
  }
}

function dialOptionsOf(o: SessionOptions): DialOptions {
  const d: DialOptions = { remoteAddress: o.remoteAddress, remotePort: o.remotePort ?? 179, ...ttlOptions(o) };
  if (o.localAddress !== undefined) d.localAddress = o.localAddress;
  if (o.localPort !== undefined) d.localPort = o.localPort;
  if (o.md5Password !== undefined) d.md5Password = o.md5Password;
  return d;
}

