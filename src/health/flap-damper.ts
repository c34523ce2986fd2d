/**
 * Hold-down and route-flap damping for one key (a VIP announced from this node).
 *
 * In the spirit of RFC 2439 ("BGP Route Flap Damping"), §4.2-4.4, applied to our own announcements:
 * - each withdrawal adds `penalty` to a figure of merit that decays exponentially with `halfLifeSec`;
 * - when a withdrawal brings it to `suppressThreshold` or above, the key is **suppressed**: it may not
 *   be announced until the figure decays to `reuseThreshold`;
 * - the figure is capped at `reuseThreshold * 2^(maxSuppressSec / halfLifeSec)` (RFC 2439 §4.3's
 *   ceiling), so a suppression never lasts longer than `maxSuppressSec` after the last withdrawal;
 * - independently, **hold-down**: after any withdrawal the key may not be announced again for
 *   `holdDownSec`.
 * Pure: time is passed in (epoch ms); nothing here schedules timers.
 */

/** Flap-control parameters. Seconds for durations; penalties are unitless. */
export interface FlapControlParams {
  /** Minimum time between a withdrawal and the next announcement, seconds (>= 0; 0 disables). */
  holdDownSec: number;
  /** Penalty added per withdrawal (>= 0; 0 disables damping). */
  penalty: number;
  /** Suppress when the penalty reaches this value after a withdrawal (> reuseThreshold). */
  suppressThreshold: number;
  /** A suppressed key becomes usable again once its penalty has decayed to this value (> 0). */
  reuseThreshold: number;
  /** Penalty half-life, seconds (> 0). */
  halfLifeSec: number;
  /** Longest suppression after the last withdrawal, seconds (> 0). */
  maxSuppressSec: number;
}

/**
 * Defaults: RFC 2439 / common router thresholds (penalty 1000, suppress 2000, reuse 750) with time
 * constants scaled to health-check flaps: half-life 60 s, max suppress 300 s, hold-down 10 s.
 */
export const DEFAULT_FLAP_CONTROL: Readonly<FlapControlParams> = Object.freeze({
  holdDownSec: 10,
  penalty: 1000,
  suppressThreshold: 2000,
  reuseThreshold: 750,
  halfLifeSec: 60,
  maxSuppressSec: 300,
});

/**
 * Check flap-control parameters.
 * @throws RangeError naming the first bad field
 */
export function validateFlapControl(p: FlapControlParams): void {
  const finite = (name: string, v: number, min: number, strict: boolean) => {
    if (typeof v !== 'number' || !Number.isFinite(v) || (strict ? v <= min : v < min)) {
      throw new RangeError(`flapControl.${name} must be a number ${strict ? '>' : '>='} ${min}, got ${String(v)}`);
    }
  };
  finite('holdDown', p.holdDownSec, 0, false);
  finite('penalty', p.penalty, 0, false);
  finite('reuseThreshold', p.reuseThreshold, 0, true);
  finite('suppressThreshold', p.suppressThreshold, 0, true);
  finite('halfLife', p.halfLifeSec, 0, true);
  finite('maxSuppress', p.maxSuppressSec, 0, true);
  if (p.suppressThreshold <= p.reuseThreshold) {
    throw new RangeError(
      `flapControl.suppressThreshold (${p.suppressThreshold}) must be greater than reuseThreshold (${p.reuseThreshold})`,
    );
  }
}

/** What a damper says at one instant. Times are epoch ms. */
export interface DamperStatus {
  /** Decayed penalty now. */
  penalty: number;
  /** Withdrawals recorded since the damper was created. */
  withdrawals: number;
  lastWithdrawAtMs: number | null;
  /** End of hold-down, when it is still running. */
  holdDownUntilMs: number | null;
  suppressed: boolean;
  suppressedSinceMs: number | null;
  /** When the suppression ends (penalty reaches reuseThreshold), when suppressed. */
  suppressedUntilMs: number | null;
  /** Earliest time the key may be announced again, or null when it may be announced now. */
  blockedUntilMs: number | null;
}

export class FlapDamper {
  private readonly p: FlapControlParams;
  private readonly ceiling: number;
  private figure = 0;
  private figureAtMs = 0;
  private withdrawals = 0;
  private lastWithdrawAtMs: number | null = null;
  private holdDownUntilMs: number | null = null;
  private suppressedSinceMs: number | null = null;
  private suppressedUntilMs: number | null = null;

  /** @throws RangeError on invalid parameters (see {@link validateFlapControl}) */
  constructor(params: FlapControlParams) {
    validateFlapControl(params);
    this.p = { ...params };
    this.ceiling = params.reuseThreshold * 2 ** (params.maxSuppressSec / params.halfLifeSec);
  }

  /** Decayed penalty at `nowMs` (RFC 2439 §4.4 exponential decay). */
  penaltyAt(nowMs: number): number {
    if (this.figure === 0) return 0;
    const dtSec = Math.max(0, nowMs - this.figureAtMs) / 1000;
    return this.figure * 2 ** (-dtSec / this.p.halfLifeSec);
  }

  /** Record that the key was withdrawn at `nowMs`: starts hold-down, adds penalty, maybe suppresses. */
  recordWithdraw(nowMs: number): void {
    this.withdrawals++;
    this.lastWithdrawAtMs = nowMs;
    this.holdDownUntilMs = this.p.holdDownSec > 0 ? nowMs + this.p.holdDownSec * 1000 : null;
    if (this.p.penalty <= 0) return;
    const fig = Math.min(this.ceiling, this.penaltyAt(nowMs) + this.p.penalty);
    this.figure = fig;
    this.figureAtMs = nowMs;
    const suppressedNow = this.isSuppressed(nowMs);
    if (suppressedNow || fig >= this.p.suppressThreshold) {
      if (!suppressedNow) this.suppressedSinceMs = nowMs;
      // Time for fig to decay to reuseThreshold: halfLife * log2(fig / reuse).
      const toReuseMs = Math.max(0, this.p.halfLifeSec * Math.log2(fig / this.p.reuseThreshold) * 1000);
      this.suppressedUntilMs = nowMs + Math.ceil(toReuseMs);
    }
  }

  private isSuppressed(nowMs: number): boolean {
    return this.suppressedUntilMs !== null && nowMs < this.suppressedUntilMs;
  }

  /** Earliest epoch ms at which the key may be announced, or null if it may be announced now. */
  blockedUntil(nowMs: number): number | null {
    let until: number | null = null;
    if (this.holdDownUntilMs !== null && nowMs < this.holdDownUntilMs) until = this.holdDownUntilMs;
    if (this.isSuppressed(nowMs) && (until === null || (this.suppressedUntilMs as number) > until)) {
      until = this.suppressedUntilMs;
    }
    return until;
  }

  /** Full status at `nowMs`. */
  status(nowMs: number): DamperStatus {
    const suppressed = this.isSuppressed(nowMs);
    return {
      penalty: this.penaltyAt(nowMs),
      withdrawals: this.withdrawals,
      lastWithdrawAtMs: this.lastWithdrawAtMs,
      holdDownUntilMs: this.holdDownUntilMs !== null && nowMs < this.holdDownUntilMs ? this.holdDownUntilMs : null,
      suppressed,
      suppressedSinceMs: suppressed ? this.suppressedSinceMs : null,
      suppressedUntilMs: suppressed ? this.suppressedUntilMs : null,
      blockedUntilMs: this.blockedUntil(nowMs),
    };
  }

  /** True when the damper holds nothing worth keeping (no block, penalty below 1): it may be dropped. */
  idle(nowMs: number): boolean {
    return this.blockedUntil(nowMs) === null && this.penaltyAt(nowMs) < 1;
  }
}
