/**
 * Reconnect delays: exponential backoff with jitter, capped (the RFC 4271 §8 ConnectRetryTimer and IdleHoldTimer
 * made adaptive, as RFC 4271 §8.1.1 DampPeerOscillations suggests).
 *
 * Delay n (n = 0, 1, 2, ...) is `min(baseMs * 2^n, capMs)` scaled by a uniform factor in [1 - jitter, 1 + jitter],
 * then clamped to [minMs, capMs * (1 + jitter)]. `reset()` after a session has been Established.
 */

export interface BackoffOptions {
  /** First delay in ms (default 1000). */
  readonly baseMs?: number;
  /** Largest un-jittered delay in ms (e.g. connectRetryTimeSec * 1000). */
  readonly capMs: number;
  /** Relative jitter, 0..1 (default 0.25 = ±25 %). */
  readonly jitter?: number;
  /** Random source in [0, 1) (default Math.random); injectable for tests. */
  readonly random?: () => number;
}

export class Backoff {
  readonly baseMs: number;
  readonly capMs: number;
  readonly jitter: number;
  private readonly random: () => number;
  private attempt = 0;

  /** Throws RangeError when capMs < 1, baseMs < 1 or jitter outside 0..1. */
  constructor(options: BackoffOptions) {
    this.baseMs = options.baseMs ?? 1000;
    this.capMs = options.capMs;
    this.jitter = options.jitter ?? 0.25;
    this.random = options.random ?? Math.random;
    if (!(this.capMs >= 1)) throw new RangeError(`backoff cap must be >= 1 ms, got ${this.capMs}`);
    if (!(this.baseMs >= 1)) throw new RangeError(`backoff base must be >= 1 ms, got ${this.baseMs}`);
    if (!(this.jitter >= 0 && this.jitter <= 1)) throw new RangeError(`backoff jitter must be in 0..1, got ${this.jitter}`);
  }

  /** Number of delays handed out since the last reset. */
  get attempts(): number {
    return this.attempt;
  }

  /** The un-jittered delay the next call to `next()` is centred on, in ms. */
  peekMs(): number {
    return Math.min(this.capMs, this.baseMs * 2 ** Math.min(this.attempt, 40));
  }

  /** The next delay in ms (jittered), and advances the attempt counter. */
  next(): number {
    const centre = this.peekMs();
    this.attempt++;
    const factor = 1 - this.jitter + 2 * this.jitter * this.random();
    return Math.max(1, Math.round(centre * factor));
  }

  /** Back to the base delay (after a successful session). */
  reset(): void {
    this.attempt = 0;
  }
}
