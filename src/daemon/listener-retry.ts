/**
 * The BGP listener's bind, retried: the daemon asks for the first bind once its first route set is in the speaker
 * (daemon.ts `start`); a first bind that fails (port in use, no permission) does not stop the daemon; binding is
 * retried with capped exponential backoff, each failure logged once (message and code, no stack) and shown in
 * readiness until it binds.
 */
import type { Logger } from 'pino';
import type { Clock, TimerHandle } from '../../bgp/main-thread.ts';
import type { SpeakerLike } from './speaker-like.ts';

/** Backoff of bind retries, ms: first delay, doubled per attempt up to `maxMs`. */
export interface ListenBackoff {
  firstMs: number;
  maxMs: number;
}

/** Default backoff: 1 s doubling to 30 s. */
export const DEFAULT_LISTEN_BACKOFF: ListenBackoff = { firstMs: 1000, maxMs: 30_000 };

/** See the module comment. */
export class ListenerRetry {
  readonly #speaker: Pick<SpeakerLike, 'listen'>;
  readonly #log: Logger;
  readonly #backoff: ListenBackoff;
  readonly #clock: Clock;
  #attempts = 0;
  #bound = false;
  #error: string | undefined;
  #timer: TimerHandle | undefined;
  #stopped = false;

  constructor(opts: { speaker: Pick<SpeakerLike, 'listen'>; log: Logger; backoff?: ListenBackoff; clock: Clock }) {
    this.#speaker = opts.speaker;
    this.#log = opts.log;
    this.#backoff = opts.backoff ?? DEFAULT_LISTEN_BACKOFF;
    this.#clock = opts.clock;
  }

  /** The first bind; resolves once it bound or failed (a failure schedules the retries). Never rejects. */
  start(): Promise<void> {
    return this.#watch(this.#speaker.listen());
  }

  /** No more retries. */
  stop(): void {
    this.#stopped = true;
    this.#clock.clearTimer(this.#timer);
    this.#timer = undefined;
  }

  /** Why the listener is not ready ("BGP listener: <error>"), or undefined once bound. */
  problem(): string | undefined {
    if (this.#error !== undefined) return `BGP listener: ${this.#error}`;
    return this.#bound ? undefined : 'BGP listener not bound yet';
  }

  #watch(attempt: Promise<void>): Promise<void> {
    const n = ++this.#attempts;
    return attempt.then(
      () => {
        this.#bound = true;
        if (this.#error !== undefined) this.#log.info({ attempt: n }, 'BGP listener bound');
        this.#error = undefined;
      },
      (err: unknown) => {
        const e = err instanceof Error ? (err as NodeJS.ErrnoException) : undefined;
        const message = e?.message ?? String(err);
        const retry = !this.#stopped;
        const delayMs = Math.min(this.#backoff.maxMs, this.#backoff.firstMs * 2 ** Math.min(n - 1, 30));
        this.#error = `${message}${retry ? ` (attempt ${n}; retrying in ${delayMs / 1000} s)` : ''}`;
        this.#log.error({ error: message, code: e?.code, attempt: n, ...(retry ? { retryInSec: delayMs / 1000 } : {}) }, 'BGP listener cannot bind');
        if (!retry) return;
        this.#timer = this.#clock.setTimer(() => {
          this.#timer = undefined;
          if (!this.#stopped) void this.#watch(this.#speaker.listen());
        }, delayMs);
      },
    );
  }
}
