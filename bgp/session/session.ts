/**
 * Session: one BGP peer. The imperative shell around the pure RFC 4271 §8 FSM (bgp/fsm/fsm.ts): a TCP socket, the
 * message framer, timers on an injectable Clock, reconnect backoff, §6.8 connection collision detection, capability
 * negotiation through the codec, and the UPDATE transmit pump (pull model, see TxSource).
 *
 * The ONE place where a BgpError becomes a NOTIFICATION is `sendNotification()` here: the message is written, the
 * socket is ended after it flushes (`socket.end()`), and destroyed after a short timeout if the peer does not close.
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
import { AS_TRANS, Afi, CeaseSubcode, HEADER_LENGTH, MAX_EXTENDED_MESSAGE_LENGTH, MAX_MESSAGE_LENGTH, MessageType, Safi } from '../constants.ts';
import type { Family } from '../constants.ts';
import { BgpError, describeNotification } from '../errors.ts';
import { encodeMessage } from '../codec/message.ts';
import { keepaliveMessage } from '../codec/keepalive.ts';
import { decodeNotification, notificationFromError } from '../codec/notification.ts';
import { buildOpen, codecContextFor, decodeOpen, negotiate, parseIdentifier, validateOpen } from '../codec/open.ts';
import type { Negotiated } from '../codec/open.ts';
import { decodeRouteRefresh } from '../codec/route-refresh.ts';
import { decodeUpdate, endOfRibFamily } from '../codec/update.ts';
import { DEFAULT_CONTEXT } from '../codec/types.ts';
import type { Capability, CodecContext, OpenMessage, UpdateDecodeResult } from '../codec/types.ts';
import { MessageFramer } from '../wire/framer.ts';
import { realClock } from '../fsm/clock.ts';
import type { Clock, TimerHandle } from '../fsm/clock.ts';
import type { FsmAction, FsmEvent, TimerName } from '../fsm/events.ts';
import { INITIAL_FSM, OPEN_SENT_HOLD_TIME_SEC, negotiateHoldTime, transition } from '../fsm/fsm.ts';
import type { FsmConfig, FsmData } from '../fsm/fsm.ts';
import { SessionState } from '../fsm/state.ts';
import type { StateReason } from '../fsm/state.ts';
import { Backoff } from './backoff.ts';
import { applySocketOptions, dial, TransportError, ttlOptions } from './transport.ts';

/** Configuration of one peer session. Durations in seconds. */
export interface SessionOptions {
  /** Peer name for logs and events. */
  name: string;
  localAs: number;
  peerAs: number;
  /** Our BGP Identifier, dotted quad. */
  bgpIdentifier: string;
  remoteAddress: string;
  /** Default 179. */
  remotePort?: number;
  localAddress?: string;
  localPort?: number;
  /** Default 90; 0 = no keepalives and no hold timer; 1 and 2 are invalid (RFC 4271 §4.2). */
  holdTimeSec?: number;
  /** Default one third of the negotiated hold time (capped at it). */
  keepaliveTimeSec?: number;
  /** Cap of the reconnect backoff (default 120); also the connect timeout. */
  connectRetryTimeSec?: number;
  /** First reconnect delay in ms (default 1000). */
  connectRetryBaseMs?: number;
  /** Never dial; wait for the peer to connect through the listener. */
  passive?: boolean;
  /** RFC 2385 TCP MD5 key. */
  md5Password?: string;
  /** TTL of our packets for multihop eBGP. */
  ebgpMultihop?: number;
  /** RFC 5082 GTSM (TTL 255, minimum 256 - hops). */
  ttlSecurity?: boolean;
  /** Families offered in Multiprotocol capabilities (default both unicast families). */
  families?: Family[];
  /** RFC 4724 graceful restart capability: restart time, R bit, per-family F bit. Read at each OPEN. */
  gracefulRestart?: { restartTimeSec: number; restarting: boolean; forwardingPreserved: boolean };
  /** Offer RFC 8654 extended messages (default true). */
  extendedMessage?: boolean;
  /** Maximum prefixes received (announced NLRI counted per UPDATE, cumulative); exceeded → Cease 1 (RFC 4486). */
  maxPrefixes?: number;
  /** Time source (default realClock). */
  clock?: Clock;
  /** Random source for backoff jitter (tests). */
  random?: () => number;
}

/** The transmit side's source of UPDATEs (implemented by the Adj-RIB-Out). */
export interface TxSource {
  /**
   * Next UPDATE to send as a whole encoded message (header included), or undefined when nothing is pending.
   * Called only in Established and only while the socket is writable; the returned message is written at once.
   */
  nextMessage(ctx: CodecContext, maxLength: number): Buffer | undefined;
}

/** A NOTIFICATION sent or received, for status pages. */
export interface NotificationRecord {
  code: number;
  subcode: number;
  data: Buffer;
  text?: string;
  description: string;
  at: number;
}

/** Counters of one session (cumulative over connections). */
export interface SessionStats {
  messagesSent: Record<string, number>;
  messagesReceived: Record<string, number>;
  updatesReceived: number;
  /** Prefixes received in the current session: currently announced ones with maxPrefixes set, else cumulative announced NLRI. */
  prefixesReceived: number;
  /** UPDATEs received that RFC 7606 repaired (treat-as-withdraw or attribute discard). */
  malformedUpdatesReceived: number;
  /** Clock time (ms) of the last transition to Established. */
  establishedAt?: number;
  /** Number of times the session left Established. */
  flaps: number;
  lastNotificationSent?: NotificationRecord;
  lastNotificationReceived?: NotificationRecord;
}

const TYPE_NAMES: Record<number, string> = { 1: 'OPEN', 2: 'UPDATE', 3: 'NOTIFICATION', 4: 'KEEPALIVE', 5: 'ROUTE-REFRESH' };
/** How long to wait for the peer to close after our NOTIFICATION was flushed before destroying the socket (ms). */
const NOTIFICATION_CLOSE_TIMEOUT_MS = 1000;
/** Octets the UPDATE pump may leave queued in the socket before it waits for 'drain' (bounds memory per peer). */
const TX_QUEUE_BYTES = 1024 * 1024;
/** The corked pump hands its UPDATEs to the kernel every this many octets (one writev each), so the peer starts
 *  reading while the rest is packed. */
const TX_FLUSH_BYTES = 64 * 1024;
/** A session that stayed Established this long resets the reconnect backoff (ms). */
const STABLE_MS = 30_000;
const KEEPALIVE_BYTES = keepaliveMessage();
// Constant events for the per-message hot path (no allocation per received message).
const EV_KEEPALIVE: FsmEvent = Object.freeze({ type: 'KeepAliveMsg' });
const EV_HOLD_TIMER: FsmEvent = Object.freeze({ type: 'HoldTimerExpires' });
const EV_KEEPALIVE_TIMER: FsmEvent = Object.freeze({ type: 'KeepaliveTimerExpires' });
const EV_CONNECT_RETRY_TIMER: FsmEvent = Object.freeze({ type: 'ConnectRetryTimerExpires' });
const FAMILY_AFI_SAFI: Record<Family, { afi: number; safi: number }> = {
  'ipv4-unicast': { afi: Afi.IPv4, safi: Safi.Unicast },
  'ipv6-unicast': { afi: Afi.IPv6, safi: Safi.Unicast },
};

function emptyCounts(): Record<string, number> {
  return { OPEN: 0, UPDATE: 0, NOTIFICATION: 0, KEEPALIVE: 0, 'ROUTE-REFRESH': 0 };
}

/** One TCP connection of a session (the FSM's, or a collision candidate). */
class Connection {
  readonly socket: Socket;
  readonly direction: 'outgoing' | 'incoming';
  readonly framer = new MessageFramer();
  connected: boolean;
  closed = false;
  /** A NOTIFICATION was written: close after flush. */
  closing = false;
  remoteOpen: OpenMessage | undefined;
  /** Collision candidates run their own OPEN wait timer. */
  openTimer: TimerHandle | undefined;

  constructor(socket: Socket, direction: 'outgoing' | 'incoming', connected: boolean) {
    this.socket = socket;
    this.direction = direction;
    this.connected = connected;
  }
}

export class Session extends EventEmitter {
  readonly name: string;
  readonly options: SessionOptions;
  readonly stats: SessionStats = {
    messagesSent: emptyCounts(),
    messagesReceived: emptyCounts(),
    updatesReceived: 0,
    prefixesReceived: 0,
    malformedUpdatesReceived: 0,
    flaps: 0,
  };

  private readonly clock: Clock;
  private readonly fsmConfig: FsmConfig;
  private readonly backoff: Backoff;
  private fsm: FsmData = INITIAL_FSM;
  private conn: Connection | undefined;
  private candidate: Connection | undefined;
  private readonly timers: Record<TimerName | 'idle' | 'stable', TimerHandle | undefined> = {
    connectRetry: undefined,
    hold: undefined,
    keepalive: undefined,
    idle: undefined,
    stable: undefined,
  };
  private running = false;
  /** Hold Timer deadline (clock ms) and the connection it belongs to. */
  private holdDeadline = 0;
  private holdOwner: Connection | undefined;
  private holdFireAt = 0;
  /** Prefixes the peer currently announces ("AFI prefix"), kept only when maxPrefixes is set. */
  private readonly receivedPrefixes: Set<string> | undefined;
  private readonly closingSockets = new Set<Socket>();
  private stopWaiters: (() => void)[] = [];
  private localOpen: OpenMessage | undefined;
  private negotiatedParams: Negotiated | undefined;
  private sendCtx: CodecContext = DEFAULT_CONTEXT;
  private recvCtx: CodecContext = DEFAULT_CONTEXT;
  private maxSendLength = MAX_MESSAGE_LENGTH;
  private reason: StateReason | undefined;
  private txSource: TxSource | undefined;
  private writable = true;
  private pumping = false;
  private dispatching = false;
  private readonly queue: { conn: Connection | undefined; event: FsmEvent }[] = [];
  private readonly onDrain = (): void => {
    this.writable = true;
    this.pump();
  };

  /** Throws RangeError for a hold time of 1 or 2 seconds or a bad BGP Identifier (configuration errors). */
  constructor(options: SessionOptions) {
    super();
    const holdTimeSec = options.holdTimeSec ?? 90;
    if (holdTimeSec === 1 || holdTimeSec === 2 || holdTimeSec < 0 || holdTimeSec > 65535) {
      throw new RangeError(`holdTimeSec must be 0 or 3..65535 (RFC 4271 §4.2), got ${holdTimeSec}`);
    }
    parseIdentifier(options.bgpIdentifier);
    this.name = options.name;
    this.options = options;
    this.clock = options.clock ?? realClock;
    const cfg: { holdTimeSec: number; passive: boolean; keepaliveTimeSec?: number } = { holdTimeSec, passive: options.passive ?? false };
    if (options.keepaliveTimeSec !== undefined) cfg.keepaliveTimeSec = options.keepaliveTimeSec;
    this.fsmConfig = cfg;
    const backoffOpts: { baseMs: number; capMs: number; random?: () => number } = {
      baseMs: options.connectRetryBaseMs ?? 1000,
      capMs: Math.max(1, (options.connectRetryTimeSec ?? 120) * 1000),
    };
    if (options.random) backoffOpts.random = options.random;
    this.backoff = new Backoff(backoffOpts);
    this.receivedPrefixes = options.maxPrefixes !== undefined ? new Set() : undefined;
  }

  /** Current FSM state. */
  get state(): SessionState {
    return this.fsm.state;
  }

  /** Negotiated parameters of the current connection (from OpenConfirm on), else undefined. */
  get negotiated(): Negotiated | undefined {
    return this.negotiatedParams;
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
    return this.backoff.peekMs();
  }

  /** ManualStart (passive peers: ManualStart_with_PassiveTcpEstablishment). Idempotent. */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.backoff.reset();
    this.feed(undefined, { type: 'Start' });
  }

  /**
   * ManualStop: Cease (default 6/2 Administrative Shutdown, with an optional RFC 9003 text) if connected, close,
   * no reconnect. Resolves when the socket is closed. Pass subcode 3 for Peer De-configured.
   */
  stop(cease: { subcode: number; shutdownCommunication?: string } = { subcode: CeaseSubcode.AdministrativeShutdown }): Promise<void> {
    this.running = false;
    this.clock.clearTimer(this.timers.idle);
    this.timers.idle = undefined;
    this.dropCandidate(BgpError.cease(cease.subcode, this.ceaseOptions(cease)));
    const done = new Promise<void>((resolve) => this.stopWaiters.push(resolve));
    this.feed(undefined, { type: 'ManualStop', error: BgpError.cease(cease.subcode, this.ceaseOptions(cease)) });
    this.resolveStopWaitersIfClosed();
    return done;
  }

  /** Hard reset: Cease (default 6/4 Administrative Reset) then reconnect after the base backoff delay. */
  reset(cease: { subcode: number; shutdownCommunication?: string } = { subcode: CeaseSubcode.AdministrativeReset }): void {
    const error = BgpError.cease(cease.subcode, this.ceaseOptions(cease));
    this.dropCandidate(error);
    this.backoff.reset();
    if (this.fsm.state === SessionState.Idle) return;
    this.feed(undefined, { type: 'AutomaticStop', error });
  }

  /** Sets the UPDATE source (the Adj-RIB-Out); pulled while Established and writable. */
  setTxSource(src: TxSource): void {
    this.txSource = src;
    this.pump();
  }

  /** The TxSource has new pending changes. */
  kickTx(): void {
    this.pump();
  }

  /** Sends a ROUTE-REFRESH for `family` (RFC 2918) when Established and negotiated; returns whether it was sent. */
  sendRouteRefresh(family: Family): boolean {
    if (this.fsm.state !== SessionState.Established || !this.conn || !this.negotiatedParams?.routeRefresh) return false;
    const { afi, safi } = FAMILY_AFI_SAFI[family];
    this.write(this.conn, encodeMessage({ type: 'ROUTE-REFRESH', afi, safi, subtype: 0 }, this.sendCtx), 'ROUTE-REFRESH');
    return true;
  }

  /**
   * An incoming TCP connection from the listener for this peer. Applies TTL/GTSM options, then: not started →
   * refused (closed); Idle/Connect/Active → adopted (a pending outgoing attempt is abandoned); OpenSent/OpenConfirm →
   * held aside as a collision candidate (RFC 4271 §6.8, §8: it runs its own OpenSent: we send our OPEN on it); the
   * existing connection is not touched until the peer's OPEN arrives on the candidate, and only then is the
   * collision resolved by BGP Identifier (the loser gets Cease 7). A candidate that sends nothing within the OpenSent
   * hold time (240 s), sends anything but an OPEN, or closes is dropped alone. Established → refused with Cease 7,
   * unless the peer negotiated graceful restart: then held aside too, and only a valid OPEN on it replaces the
   * established connection (RFC 4724 §4: the peer restarted).
   */
  acceptConnection(socket: Socket): void {
    try {
      const ttl = ttlOptions(this.options);
      applySocketOptions(socket, { ...ttl, remoteAddress: this.options.remoteAddress });
    } catch (e) {
      socket.destroy();
      this.setReasonOnly({ kind: 'transportError', message: `incoming connection: ${(e as Error).message}` });
      return;
    }
    const incoming = new Connection(socket, 'incoming', true);
    if (!this.running) {
      socket.destroy();
      return;
    }
    const s = this.fsm.state;
    if (s === SessionState.Idle || s === SessionState.Connect || s === SessionState.Active) {
      this.clock.clearTimer(this.timers.idle);
      this.timers.idle = undefined;
      if (this.conn) this.closeConnection(this.conn, false);
      this.conn = undefined;
      if (s === SessionState.Idle) this.feed(undefined, { type: 'Start', passive: true });
      this.attach(incoming);
      this.conn = incoming;
      this.feed(incoming, { type: 'TcpConnected', direction: 'incoming' });
      return;
    }
    if (s === SessionState.Established) {
      if (this.negotiatedParams?.gracefulRestart) {
        // RFC 4724 §4: a new connection while Established may mean the peer restarted. Exchange OPENs on it as a
        // candidate; only its OPEN replaces the established connection (see replaceEstablished).
        this.addCandidate(incoming);
        return;
      }
      this.attach(incoming);
      this.sendNotification(incoming, BgpError.cease(CeaseSubcode.ConnectionCollisionResolution));
      return;
    }
    // OpenSent / OpenConfirm: collision candidate (RFC 4271 §6.8). Collision detection happens upon receipt of an
    // OPEN on it (onCandidateMessage), never on a bare connect.
    this.addCandidate(incoming);
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
      this.applyTransition(conn, transition(this.fsm, event, this.fsmConfig));
      for (let item = this.queue.shift(); item; item = this.queue.shift()) {
        if (item.conn !== undefined && item.conn !== this.conn) continue;
        this.applyTransition(item.conn, transition(this.fsm, item.event, this.fsmConfig));
      }
    } finally {
      this.dispatching = false;
    }
  }

  private applyTransition(conn: Connection | undefined, t: ReturnType<typeof transition>): void {
    const from = this.fsm.state;
    this.fsm = t.next;
    for (const action of t.actions) this.perform(action, conn);
    const to = t.next.state;
    if (from === to || !t.reason) return;
    this.reason = t.reason;
    if (to === SessionState.Established) {
      this.stats.establishedAt = this.clock.now();
      this.clock.clearTimer(this.timers.stable);
      this.timers.stable = this.clock.setTimer(() => this.backoff.reset(), STABLE_MS);
    }
    this.emit('stateChange', { from, to, reason: t.reason });
    if (to === SessionState.Established) {
      this.writable = true;
      this.emit('established', this.negotiatedParams);
      this.pump();
    }
    if (from === SessionState.Established) {
      this.stats.flaps++;
      this.clock.clearTimer(this.timers.stable);
      this.timers.stable = undefined;
      this.emit('down', t.reason);
    }
    if (to === SessionState.Idle) this.enteredIdle(t.reason);
  }

  private enteredIdle(reason: StateReason): void {
    this.dropCandidate(BgpError.cease(CeaseSubcode.AdministrativeReset));
    if (!this.running) {
      this.resolveStopWaitersIfClosed();
      return;
    }
    // An OPEN was rejected (2/x, either way: a configuration mismatch does not fix itself) or the peer refused us
    // (Cease 5 Connection Rejected): do not hammer the peer.
    const openRejected = (reason.kind === 'notificationReceived' || reason.kind === 'notificationSent') && reason.code === 2;
    if (openRejected || (reason.kind === 'notificationReceived' && reason.code === 6 && reason.subcode === CeaseSubcode.ConnectionRejected)) {
      this.backoff.toCap();
    }
    const delayMs = this.backoff.next();
    this.clock.clearTimer(this.timers.idle);
    this.timers.idle = this.clock.setTimer(() => {
      this.timers.idle = undefined;
      if (this.running && this.fsm.state === SessionState.Idle) this.feed(undefined, { type: 'Start' });
    }, delayMs);
  }

  private perform(action: FsmAction, conn: Connection | undefined): void {
    const c = conn ?? this.conn;
    switch (action.type) {
      case 'initiateConnection':
        this.initiate();
        return;
      case 'dropConnection':
        if (this.conn) this.closeConnection(this.conn, this.conn.closing);
        this.conn = undefined;
        this.writable = true;
        // what was negotiated on the connection goes with it
        this.negotiatedParams = undefined;
        this.sendCtx = DEFAULT_CONTEXT;
        this.recvCtx = DEFAULT_CONTEXT;
        this.stats.prefixesReceived = 0;
        this.receivedPrefixes?.clear();
        return;
      case 'switchConnection': {
        const cand = this.candidate;
        if (!cand) return;
        this.candidate = undefined;
        this.clock.clearTimer(cand.openTimer);
        this.conn = cand;
        return;
      }
      case 'sendOpen':
        if (c) this.write(c, encodeMessage(this.buildLocalOpen(), DEFAULT_CONTEXT), 'OPEN');
        return;
      case 'sendKeepalive':
        if (c) this.write(c, KEEPALIVE_BYTES, 'KEEPALIVE');
        return;
      case 'sendNotification':
        if (c) this.sendNotification(c, action.error);
        return;
      case 'startTimer': {
        const name = action.timer;
        let ms = action.ms;
        if (name === 'hold' && ms !== undefined && this.timers.hold !== undefined && this.holdOwner === this.conn) {
          // Restart of a running Hold Timer (every received message): when the new deadline is not earlier than
          // the armed expiry, move the deadline only; the timer re-arms itself for the remainder when it fires.
          // No timer churn per received message.
          const deadline = this.clock.now() + ms;
          if (deadline >= this.holdFireAt) {
            this.holdDeadline = deadline;
            return;
          }
        }
        this.clock.clearTimer(this.timers[name]);
        if (ms === undefined) {
          // ConnectRetryTimer: in Connect it bounds a connect attempt; in Active it is the reconnect backoff.
          ms = this.fsm.state === SessionState.Connect ? Math.max(1000, (this.options.connectRetryTimeSec ?? 120) * 1000) : this.backoff.next();
        }
        if (name === 'hold') {
          this.holdDeadline = this.clock.now() + ms;
          this.holdOwner = this.conn;
          this.armHold(ms);
          return;
        }
        const event: FsmEvent = name === 'keepalive' ? EV_KEEPALIVE_TIMER : EV_CONNECT_RETRY_TIMER;
        const owner = this.conn;
        this.timers[name] = this.clock.setTimer(() => {
          this.timers[name] = undefined;
          if (name === 'connectRetry') this.feed(undefined, event);
          else this.feed(owner, event);
        }, ms);
        return;
      }
      case 'stopTimer':
        this.clock.clearTimer(this.timers[action.timer]);
        this.timers[action.timer] = undefined;
        if (action.timer === 'hold') this.holdOwner = undefined;
        return;
      case 'established':
        return;
      case 'deliverUpdate':
        if (c) this.deliverUpdate(c, action.body);
        return;
      case 'deliverRouteRefresh':
        this.emit('routeRefresh', action.request);
        return;
    }
  }

  /** Arms the Hold Timer for `ms`; on expiry, fires HoldTimerExpires only if the deadline has really passed. */
  private armHold(ms: number): void {
    const owner = this.holdOwner;
    this.holdFireAt = this.clock.now() + ms;
    this.timers.hold = this.clock.setTimer(() => {
      this.timers.hold = undefined;
      if (owner !== this.conn || this.holdOwner !== owner) return;
      const left = this.holdDeadline - this.clock.now();
      if (left > 0) {
        this.armHold(left);
        return;
      }
      this.holdOwner = undefined;
      this.feed(owner, EV_HOLD_TIMER);
    }, ms);
  }

  private initiate(): void {
    if (this.conn) this.closeConnection(this.conn, false);
    this.conn = undefined;
    let socket: Socket;
    try {
      const o = this.options;
      const dialOpts: Parameters<typeof dial>[0] = { remoteAddress: o.remoteAddress, remotePort: o.remotePort ?? 179, ...ttlOptions(o) };
      if (o.localAddress !== undefined) dialOpts.localAddress = o.localAddress;
      if (o.localPort !== undefined) dialOpts.localPort = o.localPort;
      if (o.md5Password !== undefined) dialOpts.md5Password = o.md5Password;
      socket = dial(dialOpts);
    } catch (e) {
      const message = e instanceof TransportError ? e.message : `dial failed: ${(e as Error).message}`;
      // Defer: we are inside an FSM step.
      queueMicrotask(() => this.feed(undefined, { type: 'TcpConnectionFails', message }));
      return;
    }
    const conn = new Connection(socket, 'outgoing', false);
    this.conn = conn;
    this.attach(conn);
    socket.once('connect', () => {
      conn.connected = true;
      this.feed(conn, { type: 'TcpConnected', direction: 'outgoing' });
    });
  }

  /** Wires socket events of a connection to the session. */
  private attach(conn: Connection): void {
    const socket = conn.socket;
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.onData(conn, chunk));
    socket.on('drain', () => {
      if (conn === this.conn) this.onDrain();
    });
    socket.on('error', (err: Error) => this.onClosed(conn, err.message, false));
    socket.on('end', () => {
      // Half-close from the peer: finish our side too.
      if (!conn.closing) socket.end();
    });
    socket.on('close', () => {
      conn.closed = true;
      this.onClosed(conn, 'connection closed by peer', true);
    });
  }

  private onClosed(conn: Connection, message: string, byPeer: boolean): void {
    if (conn === this.candidate) {
      this.dropCandidate(undefined);
      return;
    }
    if (conn !== this.conn || conn.closing) return;
    this.feed(conn, { type: 'TcpConnectionFails', message, closedByPeer: byPeer });
  }

  /**
   * Closes a connection: after a NOTIFICATION, `end()` (FIN after the queued bytes are flushed) and destroy after
   * NOTIFICATION_CLOSE_TIMEOUT_MS of real time if the peer does not close; otherwise destroy at once.
   */
  private closeConnection(conn: Connection, afterFlush: boolean): void {
    const socket = conn.socket;
    conn.closing = true;
    if (socket.destroyed) return;
    if (!this.closingSockets.has(socket)) {
      this.closingSockets.add(socket);
      socket.once('close', () => {
        this.closingSockets.delete(socket);
        this.resolveStopWaitersIfClosed();
      });
    }
    if (afterFlush) {
      socket.end();
      const t = setTimeout(() => socket.destroy(), NOTIFICATION_CLOSE_TIMEOUT_MS);
      t.unref();
      socket.once('close', () => clearTimeout(t));
    } else {
      socket.destroy();
    }
  }

  private resolveStopWaitersIfClosed(): void {
    if (this.running || this.stopWaiters.length === 0) return;
    if (this.fsm.state !== SessionState.Idle || this.conn || this.candidate || this.closingSockets.size > 0) return;
    const waiters = this.stopWaiters;
    this.stopWaiters = [];
    for (const w of waiters) w();
  }

  // ------------------------------------------------------------------------------------------------------------
  // Output

  private write(conn: Connection, bytes: Buffer, type: string): boolean {
    if (conn.socket.destroyed || (conn.closing && type !== 'NOTIFICATION')) return false;
    this.stats.messagesSent[type] = (this.stats.messagesSent[type] ?? 0) + 1;
    return conn.socket.write(bytes);
  }

  /** The single BgpError → NOTIFICATION path: write, then end the socket after it flushes (destroy on timeout). */
  private sendNotification(conn: Connection, error: BgpError): void {
    const msg = notificationFromError(error);
    this.write(conn, encodeMessage(msg, DEFAULT_CONTEXT), 'NOTIFICATION');
    const rec: NotificationRecord = {
      code: error.code,
      subcode: error.subcode,
      data: error.data,
      description: describeNotification(error.code, error.subcode),
      at: this.clock.now(),
    };
    if (msg.shutdownCommunication !== undefined) rec.text = msg.shutdownCommunication;
    this.stats.lastNotificationSent = rec;
    conn.closing = true;
    if (conn !== this.conn) this.closeConnection(conn, true);
  }

  /** Builds our OPEN from the options (read each time: the R bit can change between connections). */
  private buildLocalOpen(): OpenMessage {
    const o = this.options;
    const caps: Capability[] = [];
    for (const f of o.families ?? ['ipv4-unicast', 'ipv6-unicast']) caps.push({ type: 'Multiprotocol', ...FAMILY_AFI_SAFI[f] });
    caps.push({ type: 'RouteRefresh' });
    if (o.extendedMessage !== false) caps.push({ type: 'ExtendedMessage' });
    if (o.gracefulRestart) {
      const gr = o.gracefulRestart;
      caps.push({
        type: 'GracefulRestart',
        restarting: gr.restarting,
        notification: false,
        restartTimeSec: Math.min(4095, Math.max(0, Math.round(gr.restartTimeSec))),
        families: (o.families ?? ['ipv4-unicast', 'ipv6-unicast']).map((f) => ({ ...FAMILY_AFI_SAFI[f], forwardingPreserved: gr.forwardingPreserved })),
      });
    }
    caps.push({ type: 'FourOctetAs', asNumber: o.localAs });
    const open = buildOpen({ localAs: o.localAs, holdTimeSec: this.fsmConfig.holdTimeSec, bgpIdentifier: o.bgpIdentifier, capabilities: caps });
    this.localOpen = open;
    return open;
  }

  /**
   * The UPDATE pump: pulls one message at a time while Established and the socket's send queue holds less than
   * TX_QUEUE_BYTES. The socket is corked meanwhile and uncorked every TX_FLUSH_BYTES, so UPDATEs leave in 64 KiB
   * writev(2) calls while the rest is packed (a full table of 100,000 IPv4 /32 is about 500 kB: one pump turn, 8
   * system calls, instead of ~125 writes and ~30 turns at the 16 KiB default high-water mark); 'drain' resumes it.
   */
  private pump(): void {
    if (this.pumping || !this.txSource || this.fsm.state !== SessionState.Established) return;
    const conn = this.conn;
    if (!conn || conn.closing) return;
    this.pumping = true;
    const socket = conn.socket;
    socket.cork();
    let corked = 0;
    try {
      while (this.writable && this.fsm.state === SessionState.Established && this.conn === conn && !conn.closing) {
        const msg = this.txSource.nextMessage(this.sendCtx, this.maxSendLength);
        if (!msg) break;
        this.stats.messagesSent.UPDATE = (this.stats.messagesSent.UPDATE ?? 0) + 1;
        // write() returns false past the 16 KiB high-water mark; 'drain' still follows once the queue empties
        if (!socket.write(msg) && socket.writableLength >= TX_QUEUE_BYTES) this.writable = false;
        corked += msg.length;
        if (corked >= TX_FLUSH_BYTES) {
          socket.uncork();
          socket.cork();
          corked = 0;
        }
      }
    } finally {
      socket.uncork();
      this.pumping = false;
    }
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
      if (conn.closing || (conn !== this.conn && conn !== this.candidate)) return;
      try {
        if (conn === this.candidate) this.onCandidateMessage(conn, msg);
        else this.onMessage(conn, msg);
      } catch (e) {
        this.protocolError(conn, e);
        return;
      }
    }
  }

  private protocolError(conn: Connection, e: unknown): void {
    const error = e instanceof BgpError ? e : BgpError.cease(CeaseSubcode.OutOfResources);
    if (!(e instanceof BgpError)) this.setReasonOnly({ kind: 'transportError', message: `internal error: ${(e as Error).message}` });
    if (conn === this.candidate) {
      this.dropCandidate(error);
      return;
    }
    this.feed(conn, { type: 'MessageError', error });
  }

  private countReceived(type: number): void {
    const name = TYPE_NAMES[type] ?? `type ${type}`;
    this.stats.messagesReceived[name] = (this.stats.messagesReceived[name] ?? 0) + 1;
  }

  private onMessage(conn: Connection, msg: Buffer): void {
    const type = msg[18] as number;
    this.countReceived(type);
    const body = msg.subarray(HEADER_LENGTH);
    switch (type) {
      case MessageType.Open: {
        const open = decodeOpen(body);
        if (this.fsm.state !== SessionState.OpenSent) {
          this.feed(conn, { type: 'BgpOpen', holdTimeSec: open.holdTime });
          return;
        }
        this.checkOpen(open);
        conn.remoteOpen = open;
        // A pending candidate has not sent its OPEN (that would have resolved the collision already): it stays
        // aside, and the collision is resolved if and when its OPEN arrives (RFC 4271 §6.8).
        this.acceptOpen(conn, open);
        return;
      }
      case MessageType.Update:
        this.feed(conn, { type: 'UpdateMsg', body });
        return;
      case MessageType.Notification: {
        const n = decodeNotification(body);
        const rec: NotificationRecord = {
          code: n.errorCode,
          subcode: n.errorSubcode,
          data: Buffer.from(n.data),
          description: describeNotification(n.errorCode, n.errorSubcode),
          at: this.clock.now(),
        };
        if (n.shutdownCommunication !== undefined) rec.text = n.shutdownCommunication;
        this.stats.lastNotificationReceived = rec;
        const ev: { type: 'NotifMsg'; code: number; subcode: number; text?: string } = { type: 'NotifMsg', code: n.errorCode, subcode: n.errorSubcode };
        if (n.shutdownCommunication !== undefined) ev.text = n.shutdownCommunication;
        this.feed(conn, ev);
        return;
      }
      case MessageType.Keepalive:
        this.feed(conn, EV_KEEPALIVE);
        return;
      case MessageType.RouteRefresh: {
        const rr = decodeRouteRefresh(msg);
        this.feed(conn, { type: 'RouteRefreshMsg', request: { afi: rr.afi, safi: rr.safi, subtype: rr.subtype } });
        return;
      }
      default:
        throw BgpError.badMessageType(type);
    }
  }

  /** Configuration checks of the peer's OPEN (2/2 peer AS, 2/3 identifier on iBGP). Throws BgpError. */
  private checkOpen(open: OpenMessage): void {
    const isIbgp = this.options.peerAs === this.options.localAs;
    validateOpen(open, { peerAs: this.options.peerAs, localBgpIdentifier: this.options.bgpIdentifier, isIbgp });
    // RFC 6793 §4.2: a 2-octet speaker in an AS > 65535 must send AS_TRANS... and we cannot verify more.
    if (this.options.peerAs > 0xffff && !open.capabilities.some((c) => c.type === 'FourOctetAs') && open.myAutonomousSystem !== AS_TRANS) {
      throw BgpError.badPeerAs(open.myAutonomousSystem, `peer AS ${this.options.peerAs} needs 4 octets but the peer sent ${open.myAutonomousSystem}`);
    }
  }

  private acceptOpen(conn: Connection, open: OpenMessage): void {
    const local = this.localOpen ?? this.buildLocalOpen();
    const timers = negotiateHoldTime(this.fsmConfig.holdTimeSec, open.holdTime, this.fsmConfig.keepaliveTimeSec);
    // The KEEPALIVE interval actually used (a configured keepaliveTimeSec below a third of the hold time wins).
    const n: Negotiated = { ...negotiate(local, open, this.fsmConfig.holdTimeSec), keepaliveTimeSec: timers.keepaliveTimeSec };
    this.negotiatedParams = n;
    this.sendCtx = codecContextFor(n, 'send');
    this.recvCtx = codecContextFor(n, 'receive');
    this.maxSendLength = n.extendedMessage ? MAX_EXTENDED_MESSAGE_LENGTH : MAX_MESSAGE_LENGTH;
    if (n.extendedMessage) conn.framer.maxLength = MAX_EXTENDED_MESSAGE_LENGTH;
    this.feed(conn, { type: 'BgpOpen', holdTimeSec: open.holdTime });
  }

  /**
   * Counts a received UPDATE and enforces maxPrefixes. With `maxPrefixes` set, the session tracks the set of
   * prefixes the peer currently announces (announce adds, withdraw and treat-as-withdraw remove), so re-announcing
   * the same prefixes never counts twice; without it, `prefixesReceived` is the cumulative number of announced NLRI
   * (no per-prefix memory for full-table peers).
   */
  private deliverUpdate(conn: Connection, body: Buffer): void {
    let result: UpdateDecodeResult;
    try {
      result = decodeUpdate(body, this.recvCtx);
    } catch (e) {
      this.protocolError(conn, e);
      return;
    }
    this.stats.updatesReceived++;
    if (result.treatAsWithdraw || result.discardedAttributes.length > 0) this.stats.malformedUpdatesReceived++;
    const msg = result.message;
    const tracked = this.receivedPrefixes;
    let mpFamily: { afi: number; safi: number } | undefined;
    if (tracked) {
      for (const e of msg.withdrawnRoutes) tracked.delete(`1 ${e.prefix}`);
      for (const e of msg.nlri) {
        if (result.treatAsWithdraw) tracked.delete(`1 ${e.prefix}`);
        else tracked.add(`1 ${e.prefix}`);
      }
    }
    let announced = result.treatAsWithdraw ? 0 : msg.nlri.length;
    for (const a of msg.pathAttributes) {
      if (a.type === 'MP_REACH_NLRI') {
        if (!result.treatAsWithdraw) announced += a.nlri.length;
        mpFamily = { afi: a.afi, safi: a.safi };
        if (tracked) for (const e of a.nlri) {
          if (result.treatAsWithdraw) tracked.delete(`${a.afi} ${e.prefix}`);
          else tracked.add(`${a.afi} ${e.prefix}`);
        }
      } else if (a.type === 'MP_UNREACH_NLRI' && tracked) {
        for (const e of a.withdrawnRoutes) tracked.delete(`${a.afi} ${e.prefix}`);
      }
    }
    this.stats.prefixesReceived = tracked ? tracked.size : this.stats.prefixesReceived + announced;
    this.emit('update', result);
    const eor = endOfRibFamily(result);
    if (eor !== undefined) this.emit('endOfRib', eor);
    const max = this.options.maxPrefixes;
    if (max !== undefined && this.stats.prefixesReceived > max) {
      const fam = mpFamily ?? { afi: Afi.IPv4, safi: Safi.Unicast };
      const data = Buffer.alloc(7);
      data.writeUInt16BE(fam.afi, 0);
      data.writeUInt8(fam.safi, 2);
      data.writeUInt32BE(max >>> 0, 3);
      // RFC 4486 §4: Cease 1 with AFI, SAFI and the limit.
      this.feed(this.conn, { type: 'AutomaticStop', error: BgpError.cease(CeaseSubcode.MaximumNumberOfPrefixesReached, { data }) });
    }
  }

  // ------------------------------------------------------------------------------------------------------------
  // Collision detection (RFC 4271 §6.8)

  private onCandidateMessage(conn: Connection, msg: Buffer): void {
    const type = msg[18] as number;
    this.countReceived(type);
    const body = msg.subarray(HEADER_LENGTH);
    if (type === MessageType.Open) {
      const open = decodeOpen(body);
      this.checkOpen(open);
      conn.remoteOpen = open;
      this.onCandidateOpen(conn);
      return;
    }
    if (type === MessageType.Notification) {
      this.dropCandidate(undefined);
      return;
    }
    throw BgpError.fsmError(SessionState.OpenSent, type);
  }

  /**
   * The peer's valid OPEN arrived on the candidate. OpenSent/OpenConfirm: RFC 4271 §6.8 collision resolution by BGP
   * Identifier, compared as unsigned 32-bit integers: if ours is lower, the current connection is dropped with Cease 7
   * and the session continues on the candidate (which the peer initiated); otherwise the candidate gets Cease 7. This
   * holds whichever side initiated the current connection. Established: a collision closes the new connection, unless
   * the peer negotiated graceful restart: its valid OPEN on a new connection proves it restarted (RFC 4724 §4). Connect
   * or Active (the connection the candidate collided with is gone): the candidate gets Cease 7, the session goes on.
   */
  private onCandidateOpen(cand: Connection): void {
    const open = cand.remoteOpen;
    if (!open) return;
    const collision = BgpError.cease(CeaseSubcode.ConnectionCollisionResolution);
    const s = this.fsm.state;
    let event: FsmEvent | undefined;
    if (s === SessionState.OpenSent || s === SessionState.OpenConfirm) {
      const keepCandidate = parseIdentifier(this.options.bgpIdentifier) >>> 0 < parseIdentifier(open.bgpIdentifier) >>> 0;
      if (keepCandidate) event = { type: 'CollisionSwitch', error: collision };
    } else if (s === SessionState.Established && this.negotiatedParams?.gracefulRestart) {
      event = { type: 'PeerRestarted' };
    }
    if (!event) {
      this.dropCandidate(collision);
      return;
    }
    this.feed(undefined, event);
    if (this.conn === cand) this.acceptOpen(cand, open);
  }

  /** Keeps `incoming` as the collision candidate: sends our OPEN on it and bounds the wait for the peer's OPEN. */
  private addCandidate(incoming: Connection): void {
    if (this.candidate) this.dropCandidate(BgpError.cease(CeaseSubcode.ConnectionCollisionResolution));
    this.attach(incoming);
    this.candidate = incoming;
    this.write(incoming, encodeMessage(this.buildLocalOpen(), DEFAULT_CONTEXT), 'OPEN');
    incoming.openTimer = this.clock.setTimer(() => {
      if (this.candidate === incoming) this.dropCandidate(BgpError.holdTimerExpired());
    }, OPEN_SENT_HOLD_TIME_SEC * 1000);
  }

  private dropCandidate(error: BgpError | undefined): void {
    const cand = this.candidate;
    if (!cand) return;
    this.candidate = undefined;
    this.clock.clearTimer(cand.openTimer);
    if (error && !cand.socket.destroyed) this.sendNotification(cand, error);
    else this.closeConnection(cand, false);
  }

  private setReasonOnly(reason: StateReason): void {
    this.reason = reason;
  }

  private ceaseOptions(c: { shutdownCommunication?: string }): { shutdownCommunication?: string } {
    return c.shutdownCommunication !== undefined ? { shutdownCommunication: c.shutdownCommunication } : {};
  }
}
