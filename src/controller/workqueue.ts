/**
 * Coalescing, level-triggered key queue with rate-limited retry (the client-go workqueue model).
 *
 * - `add(key)`: a key already waiting is not queued twice (dedup); a key being processed is
 *   marked dirty and processed once more after the current run (never concurrently with itself).
 * - The handler gets a key and reads current state itself (level-triggered), so coalescing many
 *   events into one run is correct.
 * - A handler that throws (or rejects) gets the key re-added after an exponential backoff:
 *   `min(baseDelayMs * 2^(failures-1), maxDelayMs)`; a success resets the key's failure count.
 * - `'idle'` is emitted whenever nothing is queued or running (retries may still be pending);
 *   `whenIdle()` resolves only once the 'idle' listeners queued nothing more.
 *
 * Time for retries comes from an injectable `Clock`, so tests run without real waiting.
 */
import { EventEmitter } from 'node:events';
import type { Clock, TimerHandle } from '../../bgp/main-thread.ts';
import { realClock } from '../../bgp/main-thread.ts';

/** Options of `WorkQueue`. */
export interface WorkQueueOptions {
  clock?: Clock;
  /** First retry delay in ms (default 5). */
  baseDelayMs?: number;
  /** Retry delay cap in ms (default 30000). */
  maxDelayMs?: number;
  /** Keys processed at the same time (default 1). Never two runs of the same key. */
  concurrency?: number;
}

/** Handler of one key. Throw or reject to have the key retried with backoff. */
export type KeyHandler = (key: string) => void | Promise<void>;

/**
 * Events: `'idle'` (), `'error'` (key, err, delayMs) for each failed run (listen to it for logs;
 * it is only emitted when a listener exists, so it never throws).
 */
export class WorkQueue extends EventEmitter {
  readonly #handler: KeyHandler;
  readonly #clock: Clock;
  readonly #baseDelayMs: number;
  readonly #maxDelayMs: number;
  readonly #concurrency: number;
  readonly #queue: string[] = [];
  readonly #dirty = new Set<string>();
  readonly #processing = new Set<string>();
  readonly #failures = new Map<string, number>();
  readonly #retryTimers = new Map<string, TimerHandle>();
  #running = 0;
  #shutDown = false;
  #pumpScheduled = false;
  #idleWaiters: Array<() => void> = [];
  /** Total handler runs (for metrics). */
  processed = 0;
  /** Total failed handler runs (for metrics). */
  failed = 0;

  constructor(handler: KeyHandler, opts: WorkQueueOptions = {}) {
    super();
    this.#handler = handler;
    this.#clock = opts.clock ?? realClock;
    this.#baseDelayMs = opts.baseDelayMs ?? 5;
    this.#maxDelayMs = opts.maxDelayMs ?? 30_000;
    this.#concurrency = opts.concurrency ?? 1;
  }

  /** Queue `key` (deduplicated). Ignored after `shutDown()`. */
  add(key: string): void {
    if (this.#shutDown || this.#dirty.has(key)) return;
    this.#dirty.add(key);
    if (!this.#processing.has(key)) {
      this.#queue.push(key);
      this.#schedulePump();
    }
  }

  /** Queue `key` after `delayMs` (a pending delayed add for the same key is replaced by the earlier one). */
  addAfter(key: string, delayMs: number): void {
    if (this.#shutDown) return;
    if (delayMs <= 0) return this.add(key);
    if (this.#retryTimers.has(key)) return;
    const h = this.#clock.setTimer(() => {
      this.#retryTimers.delete(key);
      this.add(key);
    }, delayMs);
    this.#retryTimers.set(key, h);
  }

  /** Number of keys waiting (not counting running ones or pending retries). */
  get length(): number {
    return this.#queue.length;
  }

  /** Number of keys with a pending retry timer. */
  get pendingRetries(): number {
    return this.#retryTimers.size;
  }

  /** Failure count of a key since its last success. */
  failures(key: string): number {
    return this.#failures.get(key) ?? 0;
  }

  /** True when nothing is queued or running. */
  get idle(): boolean {
    return this.#queue.length === 0 && this.#running === 0;
  }

  /** Resolves the next time the queue is idle (at once if idle now). */
  whenIdle(): Promise<void> {
    if (this.idle && !this.#pumpScheduled) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  /** Stop accepting keys, cancel retries, and wait for running handlers to finish. Queued keys are dropped. */
  async shutDown(): Promise<void> {
    this.#shutDown = true;
    for (const h of this.#retryTimers.values()) this.#clock.clearTimer(h);
    this.#retryTimers.clear();
    for (const k of this.#queue) this.#dirty.delete(k);
    this.#queue.length = 0;
    if (this.#running > 0) await this.whenIdle();
  }

  #schedulePump(): void {
    if (this.#pumpScheduled) return;
    this.#pumpScheduled = true;
    setImmediate(() => {
      this.#pumpScheduled = false;
      this.#pump();
    });
  }

  #pump(): void {
    while (this.#running < this.#concurrency && this.#queue.length > 0) {
      const key = this.#queue.shift() as string;
      this.#dirty.delete(key);
      this.#processing.add(key);
      this.#running++;
      void this.#run(key);
    }
    this.#checkIdle();
  }

  async #run(key: string): Promise<void> {
    let error: unknown;
    let ok = true;
    try {
      await this.#handler(key);
    } catch (e) {
      ok = false;
      error = e;
    }
    this.processed++;
    this.#processing.delete(key);
    this.#running--;
    if (ok) {
      this.#failures.delete(key);
    } else {
      this.failed++;
      const n = (this.#failures.get(key) ?? 0) + 1;
      this.#failures.set(key, n);
      const delayMs = Math.min(this.#baseDelayMs * 2 ** (n - 1), this.#maxDelayMs);
      if (this.listenerCount('error') > 0) this.emit('error', key, error, delayMs);
      // A newer add() during the run wins: it is processed at once, no need to wait.
      if (!this.#dirty.has(key)) this.addAfter(key, delayMs);
    }
    if (this.#dirty.has(key) && !this.#shutDown) this.#queue.push(key);
    this.#pump();
  }

  #checkIdle(): void {
    if (!this.idle || this.#pumpScheduled) return;
    this.emit('idle');
    // An 'idle' listener may have queued more work: waiters then wait for the next idle.
    if (!this.idle || this.#pumpScheduled) return;
    const waiters = this.#idleWaiters;
    this.#idleWaiters = [];
    for (const w of waiters) w();
  }
}
