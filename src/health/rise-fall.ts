/**
 * Rise/fall hysteresis for one health check (HAProxy `rise`/`fall` semantics).
 *
 * State machine (pure, time passed in):
 * - starts `unknown`;
 * - `unknown` → `up` after `rise` consecutive successes, `unknown` → `down` after `fall` consecutive failures;
 * - `up` → `down` after `fall` consecutive failures; `down` → `up` after `rise` consecutive successes.
 * A success resets the failure run and vice versa. `sinceMs` is when the current state was entered.
 */
import type { HealthState, ProbeResult } from './types.ts';

/** Snapshot of a {@link RiseFall}; all times epoch ms. */
export interface RiseFallSnapshot {
  state: HealthState;
  consecutiveOk: number;
  consecutiveFail: number;
  /** Total failed probes since the check was created. */
  failures: number;
  /** Total probes since the check was created. */
  probes: number;
  lastResult: ProbeResult | null;
  /** Last failed probe (kept after recovery, for "why did it go down"). */
  lastFailure: ProbeResult | null;
  /** When the current state was entered (epoch ms). */
  sinceMs: number;
  /** When the last result was recorded (epoch ms), or null. */
  lastProbeAtMs: number | null;
}

export class RiseFall {
  private s: RiseFallSnapshot;
  /** Consecutive successes needed to go up. */
  rise: number;
  /** Consecutive failures needed to go down. */
  fall: number;

  /**
   * @param rise consecutive successes needed to go up (integer >= 1)
   * @param fall consecutive failures needed to go down (integer >= 1)
   * @param nowMs creation time (epoch ms), the `since` of the initial `unknown` state
   * @throws RangeError when rise or fall is not an integer >= 1
   */
  constructor(rise: number, fall: number, nowMs: number) {
    RiseFall.validate(rise, fall);
    this.rise = rise;
    this.fall = fall;
    this.s = {
      state: 'unknown',
      consecutiveOk: 0,
      consecutiveFail: 0,
      failures: 0,
      probes: 0,
      lastResult: null,
      lastFailure: null,
      sinceMs: nowMs,
      lastProbeAtMs: null,
    };
  }

  private static validate(rise: number, fall: number): void {
    if (!Number.isInteger(rise) || rise < 1) throw new RangeError(`rise must be an integer >= 1, got ${rise}`);
    if (!Number.isInteger(fall) || fall < 1) throw new RangeError(`fall must be an integer >= 1, got ${fall}`);
  }

  /** Change thresholds in place, keeping counts and state (a state change waits for the next result). */
  setThresholds(rise: number, fall: number): void {
    RiseFall.validate(rise, fall);
    this.rise = rise;
    this.fall = fall;
  }

  get state(): HealthState {
    return this.s.state;
  }

  /** A copy of the current state. */
  snapshot(): RiseFallSnapshot {
    return { ...this.s };
  }

  /**
   * Record one probe result at `nowMs`.
   * @returns true when the state changed (unknown/up/down)
   */
  record(result: ProbeResult, nowMs: number): boolean {
    const s = this.s;
    s.probes++;
    s.lastResult = result;
    s.lastProbeAtMs = nowMs;
    let next: HealthState = s.state;
    if (result.ok) {
      s.consecutiveOk++;
      s.consecutiveFail = 0;
      if (s.state !== 'up' && s.consecutiveOk >= this.rise) next = 'up';
    } else {
      s.failures++;
      s.lastFailure = result;
      s.consecutiveFail++;
      s.consecutiveOk = 0;
      if (s.state !== 'down' && s.consecutiveFail >= this.fall) next = 'down';
    }
    if (next === s.state) return false;
    s.state = next;
    s.sinceMs = nowMs;
    return true;
  }
}
