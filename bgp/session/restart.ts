/**
 * Restart: when a session tries again. The automatic restart from Idle (the RFC 4271 §8 IdleHoldTimer, which the FSM
 * leaves to the shell: see bgp/fsm/fsm.ts) and the ConnectRetryTimer durations come from one exponential Backoff
 * (bgp/session/backoff.ts); it resets once a session stayed Established for STABLE_MS, so a flapping session keeps
 * backing off.
 */
import type { Clock, TimerHandle } from '../clock.ts';
import { SessionState } from '../fsm/state.ts';
import { Backoff } from './backoff.ts';

/** A session that stayed Established this long resets the reconnect backoff (ms). */
export const STABLE_MS = 30_000;

export interface RestartOptions {
  /** Cap of the backoff and bound of one connect attempt, seconds. */
  readonly connectRetryTimeSec: number;
  /** First delay, ms. */
  readonly baseMs: number;
  /** Random source for the jitter (tests). */
  readonly random?: () => number;
}

export class Restart {
  private readonly clock: Clock;
  private readonly backoff: Backoff;
  private readonly connectTimeoutMs: number;
  private startTimer: TimerHandle | undefined;
  private stableTimer: TimerHandle | undefined;

  /** Throws RangeError for a bad base or cap (see Backoff). */
  constructor(clock: Clock, o: RestartOptions) {
    this.clock = clock;
    const capMs = Math.max(1, o.connectRetryTimeSec * 1000);
    this.backoff = new Backoff(o.random ? { baseMs: o.baseMs, capMs, random: o.random } : { baseMs: o.baseMs, capMs });
    this.connectTimeoutMs = Math.max(1000, o.connectRetryTimeSec * 1000);
  }

  /** The un-jittered delay the backoff hands out next (ms). */
  get nextDelayMs(): number {
    return this.backoff.peekMs();
  }

  /** ConnectRetryTimer duration (ms): in Connect it bounds a connect attempt, in Active it is the next backoff delay. */
  connectRetryMs(state: SessionState): number {
    return state === SessionState.Connect ? this.connectTimeoutMs : this.backoff.next();
  }

  /** Calls `start` after the next backoff delay, replacing a restart already scheduled. */
  scheduleStart(start: () => void): void {
    this.cancelStart();
    this.startTimer = this.clock.setTimer(() => {
      this.startTimer = undefined;
      start();
    }, this.backoff.next());
  }

  cancelStart(): void {
    this.clock.clearTimer(this.startTimer);
    this.startTimer = undefined;
  }

  /** The session reached Established: reset the backoff if it stays up for STABLE_MS. */
  established(): void {
    this.clock.clearTimer(this.stableTimer);
    this.stableTimer = this.clock.setTimer(() => this.backoff.reset(), STABLE_MS);
  }

  /** The session left Established. */
  down(): void {
    this.clock.clearTimer(this.stableTimer);
    this.stableTimer = undefined;
  }

  /** Back to the base delay (start, reset). */
  reset(): void {
    this.backoff.reset();
  }

  /** No timer left (stop). */
  cancel(): void {
    this.cancelStart();
    this.down();
  }
}
