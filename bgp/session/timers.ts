/**
 * FsmTimers: the three timers the FSM starts and stops through its actions (RFC 4271 §8: ConnectRetryTimer,
 * HoldTimer, KeepaliveTimer), on an injectable Clock. Each timer remembers the connection it was started for, so an
 * expiry reaches the session with that owner and a stale one can be ignored.
 *
 * The Hold Timer is restarted by every message received in Established. A restart that does not bring the expiry
 * forward only moves a deadline; when the armed timer fires before the deadline, it re-arms itself for the rest. So a
 * busy session creates no timer per received message.
 */
import type { Clock, TimerHandle } from '../clock.ts';
import type { TimerName } from '../fsm/events.ts';

export class FsmTimers<Owner> {
  private readonly clock: Clock;
  private readonly expired: (timer: TimerName, owner: Owner) => void;
  private readonly handles: Record<TimerName, TimerHandle | undefined> = { connectRetry: undefined, hold: undefined, keepalive: undefined };
  private readonly owners = new Map<TimerName, Owner>();
  /** Hold Timer: clock time (ms) it must not expire before, and when the armed clock timer fires. */
  private holdDeadline = 0;
  private holdFireAt = 0;

  /** `expired(timer, owner)` is called when a timer runs out (never for one stopped or restarted before). */
  constructor(clock: Clock, expired: (timer: TimerName, owner: Owner) => void) {
    this.clock = clock;
    this.expired = expired;
  }

  /** Starts (or restarts) `timer` for `owner` to expire in `ms` milliseconds. */
  start(timer: TimerName, ms: number, owner: Owner): void {
    if (timer === 'hold' && this.handles.hold !== undefined && this.owners.get('hold') === owner) {
      const deadline = this.clock.now() + ms;
      if (deadline >= this.holdFireAt) {
        this.holdDeadline = deadline;
        return;
      }
    }
    this.stop(timer);
    this.owners.set(timer, owner);
    if (timer === 'hold') {
      this.holdDeadline = this.clock.now() + ms;
      this.armHold(ms, owner);
      return;
    }
    this.handles[timer] = this.clock.setTimer(() => {
      this.handles[timer] = undefined;
      this.owners.delete(timer);
      this.expired(timer, owner);
    }, ms);
  }

  stop(timer: TimerName): void {
    this.clock.clearTimer(this.handles[timer]);
    this.handles[timer] = undefined;
    this.owners.delete(timer);
  }

  stopAll(): void {
    for (const timer of ['connectRetry', 'hold', 'keepalive'] as const) this.stop(timer);
  }

  /** Arms the Hold Timer for `ms`; on expiry it fires only if the deadline has really passed, else re-arms. */
  private armHold(ms: number, owner: Owner): void {
    this.holdFireAt = this.clock.now() + ms;
    this.handles.hold = this.clock.setTimer(() => {
      this.handles.hold = undefined;
      const left = this.holdDeadline - this.clock.now();
      if (left > 0) {
        this.armHold(left, owner);
        return;
      }
      this.owners.delete('hold');
      this.expired('hold', owner);
    }, ms);
  }
}
