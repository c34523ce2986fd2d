/**
 * The client-side request limit of Herald's Kubernetes client (client.ts): a token bucket of `qps` tokens a second
 * holding at most `burst`, one token per request, as client-go's `flowcontrol.NewTokenBucketRateLimiter` (k8s.io/client-go
 * rest config `QPS` and `Burst`). Requests wait their turn in order (a reservation, as golang.org/x/time/rate's
 * `Reserve`): the bucket may go below zero, and a request waits until its token would have been refilled.
 *
 * Defaults by role ({@link DEFAULT_LIMITS}) follow the components Herald sits beside: the speaker as kube-proxy and
 * client-go (5 a second, bursts of 10), the controller as kube-controller-manager (20, 30), the CLI as kubectl (50,
 * 300). `source.kubernetes.qps` / `burst` (docs/configuration.md) change them.
 */

/** Which Herald component talks to the apiserver: named in the User-Agent, so in audit logs and in APF's view. */
export type ClientRole = 'speaker' | 'controller' | 'cli';

/** A request rate: `qps` tokens a second, at most `burst` at once. */
export interface RateLimit {
  readonly qps: number;
  readonly burst: number;
}

/** The default limit of each role (see the module comment). */
export const DEFAULT_LIMITS: Readonly<Record<ClientRole, RateLimit>> = Object.freeze({
  speaker: { qps: 5, burst: 10 },
  controller: { qps: 20, burst: 30 },
  cli: { qps: 50, burst: 300 },
});

/** A token bucket over a millisecond clock. Not thread-safe; one per client. */
export class TokenBucket {
  readonly #qps: number;
  readonly #burst: number;
  #tokens: number;
  #atMs: number;

  /**
   * @param limit the rate; `qps` ≤ 0 or not finite: no limit
   * @param nowMs the time it starts full
   */
  constructor(limit: RateLimit, nowMs: number) {
    this.#qps = limit.qps;
    this.#burst = Math.max(1, limit.burst);
    this.#tokens = this.#burst;
    this.#atMs = nowMs;
  }

  /**
   * Takes one token (possibly one not yet refilled).
   * @returns how long the request must wait before it goes, ms (0: at once)
   */
  reserve(nowMs: number): number {
    if (!(this.#qps > 0) || !Number.isFinite(this.#qps)) return 0;
    this.#tokens = Math.min(this.#burst, this.#tokens + (Math.max(0, nowMs - this.#atMs) * this.#qps) / 1000);
    this.#atMs = Math.max(this.#atMs, nowMs);
    this.#tokens -= 1;
    return this.#tokens >= 0 ? 0 : Math.ceil((-this.#tokens * 1000) / this.#qps);
  }

  /** Gives back a token reserved by a request that did not go (its wait was aborted). */
  cancel(): void {
    if (this.#qps > 0 && Number.isFinite(this.#qps)) this.#tokens = Math.min(this.#burst, this.#tokens + 1);
  }
}
