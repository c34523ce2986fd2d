/**
 * One BFD session in Asynchronous mode (RFC 5880 §6.1): the state variables of §6.8.1, the state machine
 * (bgp/bfd/fsm.ts), periodic jittered transmission (§6.8.7), the Detection Time (§6.8.4), timer changes with the
 * Poll Sequence (§6.5, §6.8.3) and administrative control (§6.8.16). Time comes from an injectable Clock
 * (bgp/clock.ts), randomness from an injectable `random`, and packets leave through `send`; the session knows
 * no sockets, so tests drive two sessions against each other on a FakeClock.
 *
 * Timer changes (§6.8.3). Whenever the advertised bfd.DesiredMinTxInterval or bfd.RequiredMinRxInterval changes —
 * by configuration, or because leaving/entering Up moves DesiredMinTx between the configured value and the 1 s
 * floor — a Poll Sequence starts: every packet carries P until a packet with F arrives. While a poll started from
 * Up is running, an increased DesiredMinTx does not slow the actual transmission yet, and a reduced RequiredMinRx
 * does not shorten our Detection Time yet. A change made during a poll restarts the poll once the F arrives, since
 * that F may answer a packet with the older values. The hold also covers Up → AdminDown, so a peer still Up keeps
 * getting packets at the rate it expects until it has confirmed our AdminDown (docs/sessions.md, BFD). Leaving Up
 * because the remote said Down, or because the Detection Time expired, holds nothing (the remote runs no Detection
 * Time on us then), and an expired Detection Time abandons any poll, since nobody is left to answer it.
 *
 * Not implemented: Demand mode (§6.6) and the Echo function (§6.4); authentication (§6.7). See bgp/bfd/packet.ts.
 */
import type { Clock, TimerHandle } from '../clock.ts';
import { transition } from './fsm.ts';
import type { BfdFsmEvent } from './fsm.ts';
import { BfdDiag, encodeControlPacket } from './packet.ts';
import type { BfdState, ControlPacket } from './packet.ts';
import { advertisedTxIntervalUs, detectionTimeUs, jitteredIntervalUs, transmitIntervalUs } from './timers.ts';

/** The configurable parameters of a session. Intervals in microseconds (the RFC's unit). */
export interface BfdSessionParameters {
  /** bfd.DesiredMinTxInterval once Up (µs, ≥ 1). */
  readonly desiredMinTxUs: number;
  /** bfd.RequiredMinRxInterval (µs, ≥ 0; 0 asks the remote to send nothing periodically). */
  readonly requiredMinRxUs: number;
  /** bfd.DetectMult, 1..255. */
  readonly detectMult: number;
  /** Passive role (RFC 5880 §6.1): send nothing until the remote's discriminator is known. */
  readonly passive: boolean;
}

/** Construction options of a session. */
export interface BfdSessionOptions extends BfdSessionParameters {
  /** bfd.LocalDiscr: unique among this system's sessions, nonzero. */
  readonly localDiscriminator: number;
  readonly clock: Clock;
  /** [0, 1) like Math.random (jitter). */
  readonly random?: () => number;
  /** Hands one encoded Control packet to the transport. Must not throw. */
  readonly send: (packet: Buffer) => void;
  /** Called after every state change and every change of the negotiated timers (after the packet went out). */
  readonly onChange?: (change: BfdSessionChange) => void;
}

/** What changed: the session state (with the RFC 5880 diagnostic), or only the negotiated timers. */
export type BfdSessionChange =
  | { readonly kind: 'state'; readonly from: BfdState; readonly to: BfdState; readonly diag: number; readonly remoteState: BfdState; readonly remoteDiag: number }
  | { readonly kind: 'timers' };

/** A snapshot of the session (admin API, metrics). Intervals in milliseconds. */
export interface BfdSessionStatus {
  readonly state: BfdState;
  readonly remoteState: BfdState;
  /** bfd.LocalDiag: why our state last changed (RFC 5880 §4.1 codes). */
  readonly localDiag: number;
  /** The Diag of the last packet received. */
  readonly remoteDiag: number;
  readonly localDiscriminator: number;
  /** 0 until the remote's discriminator is known (and again after a Detection Time without packets). */
  readonly remoteDiscriminator: number;
  /** bfd.DesiredMinTxInterval as advertised now (≥ 1000 ms while not Up). */
  readonly desiredMinTxMs: number;
  readonly requiredMinRxMs: number;
  readonly detectMult: number;
  /** The remote's Required Min RX Interval, Desired Min TX Interval and Detect Mult, as last received. */
  readonly remoteMinRxMs: number;
  readonly remoteDesiredMinTxMs: number;
  readonly remoteDetectMult: number;
  /** The negotiated interval between our packets before jitter (0 while we send nothing periodically). */
  readonly transmitIntervalMs: number;
  /** How long without a packet before we declare the session Down (0 while Down or AdminDown). */
  readonly detectionTimeMs: number;
  /** A Poll Sequence of ours is waiting for its Final. */
  readonly pollActive: boolean;
  readonly packetsSent: number;
  readonly packetsReceived: number;
}

interface Poll {
  /** The smallest DesiredMinTx the remote may still assume (actual TX no slower than this until F); or none. */
  heldTxUs: number | undefined;
  /** The largest RequiredMinRx the remote may still be pacing itself by (our Detection Time uses it until F). */
  heldRxUs: number | undefined;
  /** Parameters changed again after the poll started: the F may answer an older packet, poll once more. */
  dirty: boolean;
}

/** Checks session parameters; throws RangeError naming the bad field. */
export function checkSessionParameters(p: BfdSessionParameters): void {
  if (!Number.isInteger(p.desiredMinTxUs) || p.desiredMinTxUs < 1 || p.desiredMinTxUs > 0xffffffff) throw new RangeError(`BFD desired min TX interval must be 1..4294967295 µs, got ${p.desiredMinTxUs}`);
  if (!Number.isInteger(p.requiredMinRxUs) || p.requiredMinRxUs < 0 || p.requiredMinRxUs > 0xffffffff) throw new RangeError(`BFD required min RX interval must be 0..4294967295 µs, got ${p.requiredMinRxUs}`);
  if (!Number.isInteger(p.detectMult) || p.detectMult < 1 || p.detectMult > 255) throw new RangeError(`BFD detect multiplier must be 1..255, got ${p.detectMult}`);
}

/** One BFD session. Create it, call start(), feed it received packets with receive(), stop() it when done. */
export class BfdSession {
  readonly localDiscriminator: number;
  private params: BfdSessionParameters;
  private readonly clock: Clock;
  private readonly random: () => number;
  private readonly sendPacket: (packet: Buffer) => void;
  private readonly onChange: (change: BfdSessionChange) => void;

  // RFC 5880 §6.8.1 state variables
  private state: BfdState = 'Down';
  private remoteState: BfdState = 'Down';
  private remoteDiscr = 0;
  private localDiag: number = BfdDiag.NoDiagnostic;
  private remoteDiag = 0;
  private remoteMinRxUs = 1;
  private remoteDesiredMinTxUs = 0;
  private remoteDetectMult = 0;

  private poll: Poll | undefined;
  private lastAdvertised: { txUs: number; rxUs: number };
  private lastTimers = '';
  private txTimer: TimerHandle | undefined;
  /** The interval the periodic timer was armed with (0: not armed). */
  private scheduledIntervalUs = 0;
  private detectTimer: TimerHandle | undefined;
  private lastTxAt: number | undefined;
  private running = false;
  private sent = 0;
  private received = 0;

  /** Throws RangeError for bad parameters or a zero discriminator. */
  constructor(o: BfdSessionOptions) {
    checkSessionParameters(o);
    if (!Number.isInteger(o.localDiscriminator) || o.localDiscriminator < 1 || o.localDiscriminator > 0xffffffff) throw new RangeError(`BFD local discriminator must be 1..4294967295, got ${o.localDiscriminator}`);
    this.localDiscriminator = o.localDiscriminator;
    this.params = { desiredMinTxUs: o.desiredMinTxUs, requiredMinRxUs: o.requiredMinRxUs, detectMult: o.detectMult, passive: o.passive };
    this.clock = o.clock;
    this.random = o.random ?? Math.random;
    this.sendPacket = o.send;
    this.onChange = o.onChange ?? (() => undefined);
    this.lastAdvertised = { txUs: this.advertisedTxUs(), rxUs: this.params.requiredMinRxUs };
  }

  /** Current bfd.SessionState. */
  get sessionState(): BfdState {
    return this.state;
  }

  /**
   * bfd.RemoteDiscr: the remote's My Discriminator, 0 until known and again after a Detection Time without a packet
   * (RFC 5880 §6.8.1). The engine discards a packet whose My Discriminator differs while it is known (§6.8.6).
   */
  get remoteDiscriminator(): number {
    return this.remoteDiscr;
  }

  /** Starts transmitting (Down state; the passive role waits for the remote). Idempotent. */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.lastTimers = this.timersKey();
    this.transmitNow();
  }

  /** Stops every timer; nothing is sent any more. Idempotent. */
  stop(): void {
    this.running = false;
    this.scheduledIntervalUs = 0;
    this.clock.clearTimer(this.txTimer);
    this.clock.clearTimer(this.detectTimer);
    this.txTimer = undefined;
    this.detectTimer = undefined;
  }

  /**
   * Changes the parameters (RFC 5880 §6.8.3): a changed advertised interval starts a Poll Sequence, with the holds
   * described in the module comment. Throws RangeError for bad parameters (nothing changes then).
   */
  setParameters(p: BfdSessionParameters): void {
    checkSessionParameters(p);
    this.params = { desiredMinTxUs: p.desiredMinTxUs, requiredMinRxUs: p.requiredMinRxUs, detectMult: p.detectMult, passive: p.passive };
    if (this.advertisedMayHaveChanged(this.state === 'Up')) this.transmitNow();
    this.afterTimingChange();
  }

  /** Holds the session down (RFC 5880 §6.8.16): State AdminDown, Diag 7, sent at once. */
  adminDown(): void {
    this.apply({ type: 'AdminDown' });
  }

  /** Leaves AdminDown for Down (RFC 5880 §6.8.16); no-op in other states. */
  adminUp(): void {
    this.apply({ type: 'AdminUp' });
  }

  /**
   * Processes a Control packet already accepted by the codec and demultiplexed to this session (RFC 5880 §6.8.6
   * from "Set bfd.RemoteDiscr" on).
   */
  receive(p: ControlPacket): void {
    if (!this.running) return;
    this.received++;
    this.remoteDiscr = p.myDiscriminator;
    this.remoteState = p.state;
    this.remoteDiag = p.diag;
    this.remoteMinRxUs = p.requiredMinRxIntervalUs;
    this.remoteDesiredMinTxUs = p.desiredMinTxIntervalUs;
    this.remoteDetectMult = p.detectMult;
    if (this.poll && p.final) this.finishPoll();
    const from = this.state;
    const t = transition(from, { type: 'ControlPacket', remoteState: p.state });
    const changed = this.enter(t.state, t.diag);
    // Leaving Up here means the remote said Down: it runs no Detection Time on us, so no hold (§6.8.3).
    const pollStarted = changed && this.advertisedMayHaveChanged(false);
    // In every state: in Init and Up its expiry takes the session Down; in Down and AdminDown it only forgets
    // bfd.RemoteDiscr (§6.8.1), so a remote that restarted with a new discriminator is heard again.
    this.armDetection();
    // An answer to a Poll goes out at once and carries the new state; otherwise a changed packet does (§6.8.7).
    if (p.poll) this.transmit(true);
    else if (changed || pollStarted) this.transmitNow();
    this.afterTimingChange();
    if (changed) this.notifyState(from);
  }

  /** A snapshot of the session (intervals in ms). */
  status(): BfdSessionStatus {
    return {
      state: this.state,
      remoteState: this.remoteState,
      localDiag: this.localDiag,
      remoteDiag: this.remoteDiag,
      localDiscriminator: this.localDiscriminator,
      remoteDiscriminator: this.remoteDiscr,
      desiredMinTxMs: this.advertisedTxUs() / 1000,
      requiredMinRxMs: this.params.requiredMinRxUs / 1000,
      detectMult: this.params.detectMult,
      remoteMinRxMs: this.remoteMinRxUs / 1000,
      remoteDesiredMinTxMs: this.remoteDesiredMinTxUs / 1000,
      remoteDetectMult: this.remoteDetectMult,
      transmitIntervalMs: this.mayTransmitPeriodically() ? this.currentTxIntervalUs() / 1000 : 0,
      detectionTimeMs: this.state === 'Init' || this.state === 'Up' ? this.currentDetectionTimeUs() / 1000 : 0,
      pollActive: this.poll !== undefined,
      packetsSent: this.sent,
      packetsReceived: this.received,
    };
  }

  // --- state ---

  private apply(event: BfdFsmEvent): void {
    const from = this.state;
    const t = transition(from, event);
    if (t.resetRemoteDiscriminator) {
      this.remoteDiscr = 0;
      this.remoteState = 'Down';
    }
    const changed = this.enter(t.state, t.diag);
    if (!changed) {
      if (t.resetRemoteDiscriminator) this.afterTimingChange(); // a passive session stops sending (§6.8.7)
      return;
    }
    // Up → AdminDown: the remote is still Up and expects our packets at the negotiated rate until it has seen ours.
    this.advertisedMayHaveChanged(from === 'Up' && event.type === 'AdminDown');
    this.transmitNow();
    this.afterTimingChange();
    this.notifyState(from);
  }

  /** Sets state and diag; returns whether the state changed. */
  private enter(state: BfdState, diag: number | undefined): boolean {
    if (diag !== undefined) this.localDiag = diag;
    if (state === this.state) return false;
    this.state = state;
    return true;
  }

  private notifyState(from: BfdState): void {
    this.onChange({ kind: 'state', from, to: this.state, diag: this.localDiag, remoteState: this.remoteState, remoteDiag: this.remoteDiag });
  }

  // --- Poll Sequence (RFC 5880 §6.5, §6.8.3) ---

  private advertisedTxUs(): number {
    return advertisedTxIntervalUs(this.params.desiredMinTxUs, this.state);
  }

  /**
   * Reacts to a possibly changed advertised interval (RFC 5880 §6.8.3). In Up, and on the way to AdminDown from Up,
   * a change starts (or marks dirty) a Poll Sequence; `hold` applies the §6.8.3 holds (the remote is Up and paces
   * itself by our previous values). Elsewhere the new values simply go out in the next packets and any poll is
   * dropped: a remote that is not Up runs no Detection Time on us, and the handshake carries the values (as BIRD
   * and FRR do on the way down). Returns whether a new poll started (the caller sends a packet).
   */
  private advertisedMayHaveChanged(hold: boolean): boolean {
    const old = this.lastAdvertised;
    const txUs = this.advertisedTxUs();
    const rxUs = this.params.requiredMinRxUs;
    if (txUs === old.txUs && rxUs === old.rxUs) return false;
    this.lastAdvertised = { txUs, rxUs };
    if (this.state !== 'Up' && !hold) {
      this.poll = undefined;
      return false;
    }
    const poll = this.poll ?? { heldTxUs: undefined, heldRxUs: undefined, dirty: false };
    if (this.poll) poll.dirty = true;
    if (hold) {
      if (txUs > old.txUs) poll.heldTxUs = Math.min(poll.heldTxUs ?? old.txUs, old.txUs);
      if (rxUs < old.rxUs) poll.heldRxUs = Math.max(poll.heldRxUs ?? old.rxUs, old.rxUs);
    }
    const starting = this.poll === undefined;
    this.poll = poll;
    return starting;
  }

  private finishPoll(): void {
    const poll = this.poll;
    if (!poll) return;
    if (poll.dirty) {
      poll.dirty = false; // poll once more with the current values; keep the holds until that F
      return;
    }
    this.poll = undefined;
  }

  // --- timers ---

  private currentTxIntervalUs(): number {
    const adv = this.advertisedTxUs();
    const held = this.poll?.heldTxUs;
    return transmitIntervalUs(held !== undefined ? Math.min(held, adv) : adv, this.remoteMinRxUs);
  }

  private currentDetectionTimeUs(): number {
    const rx = Math.max(this.params.requiredMinRxUs, this.poll?.heldRxUs ?? 0);
    return detectionTimeUs(this.remoteDetectMult, rx, this.remoteDesiredMinTxUs);
  }

  private mayTransmitPeriodically(): boolean {
    return this.running && !(this.params.passive && this.remoteDiscr === 0) && this.remoteMinRxUs !== 0;
  }

  /** The negotiated values a 'timers' change reports, as one comparable string (cheap: runs per packet). */
  private timersKey(): string {
    const tx = this.mayTransmitPeriodically() ? this.currentTxIntervalUs() : 0;
    const detect = this.state === 'Init' || this.state === 'Up' ? this.currentDetectionTimeUs() : 0;
    return `${tx}/${detect}/${this.advertisedTxUs()}/${this.params.requiredMinRxUs}/${this.remoteMinRxUs}/${this.poll !== undefined}`;
  }

  /** Reschedules transmission for a changed interval and reports changed timers. */
  private afterTimingChange(): void {
    if (!this.running) return;
    const intervalUs = this.mayTransmitPeriodically() ? this.currentTxIntervalUs() : 0;
    if (intervalUs !== this.scheduledIntervalUs) this.schedule();
    const key = this.timersKey();
    if (key === this.lastTimers) return;
    this.lastTimers = key;
    this.onChange({ kind: 'timers' });
  }

  private armDetection(): void {
    this.clock.clearTimer(this.detectTimer);
    const ms = this.currentDetectionTimeUs() / 1000;
    this.detectTimer = this.clock.setTimer(() => {
      this.detectTimer = undefined;
      if (this.running) this.apply({ type: 'DetectionTimeExpired' });
    }, ms);
  }

  /** (Re)arms the periodic transmission timer from the last transmission. */
  private schedule(): void {
    this.clock.clearTimer(this.txTimer);
    this.txTimer = undefined;
    this.scheduledIntervalUs = 0;
    if (!this.mayTransmitPeriodically()) return;
    this.scheduledIntervalUs = this.currentTxIntervalUs();
    const gapMs = jitteredIntervalUs(this.scheduledIntervalUs, this.params.detectMult, this.random) / 1000;
    const sinceMs = this.lastTxAt === undefined ? gapMs : this.clock.now() - this.lastTxAt;
    this.txTimer = this.clock.setTimer(() => {
      this.txTimer = undefined;
      this.transmit(false);
      this.schedule();
    }, Math.max(0, gapMs - sinceMs));
  }

  /** Sends a packet now because its contents changed (§6.8.7 allows it), then restarts the periodic timer. */
  private transmitNow(): void {
    if (!this.mayTransmitPeriodically()) return;
    this.transmit(false);
    this.schedule();
  }

  /** Builds and sends one packet; `final` answers a Poll (P clear, F set, §6.8.6/§6.8.7). */
  private transmit(final: boolean): void {
    if (!this.running) return;
    if (this.params.passive && this.remoteDiscr === 0) return; // §6.8.7
    const packet: ControlPacket = {
      diag: this.localDiag,
      state: this.state,
      poll: !final && this.poll !== undefined,
      final,
      controlPlaneIndependent: false,
      demand: false,
      detectMult: this.params.detectMult,
      myDiscriminator: this.localDiscriminator,
      yourDiscriminator: this.remoteDiscr,
      desiredMinTxIntervalUs: this.advertisedTxUs(),
      requiredMinRxIntervalUs: this.params.requiredMinRxUs,
      requiredMinEchoRxIntervalUs: 0,
    };
    this.sent++;
    if (!final) this.lastTxAt = this.clock.now();
    this.sendPacket(encodeControlPacket(packet));
  }
}
