/**
 * Giving memory back after a big change. V8 collects garbage when a thread allocates; a thread that replaced a big
 * route table by a small one and then stays idle keeps the dead table's pages for as long as it stays idle (issue 35
 * N3: 293 MiB of a 320 MiB pod after going from 300,000 static routes back to one, on the main thread and the speaker
 * thread alike; 177 MiB after one full collection in each). A {@link MemoryReducer} counts the items a thread
 * replaced or dropped and, past a threshold, runs one full collection once the thread has been quiet for a moment.
 *
 * V8's `gc()` is not exposed by default; it is taken once per thread from a fresh context after turning on
 * `--expose-gc` (V8 installs the function in contexts made after the flag is set). Where that is not possible the
 * reducer does nothing.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

type GcFunction = (options?: { type?: 'major' | 'minor'; execution?: 'sync' | 'async' }) => void;

let gcFunction: GcFunction | null | undefined;

/** V8's full collection for this thread, or undefined when it cannot be had. */
function gcOf(): GcFunction | undefined {
  if (gcFunction === undefined) {
    const own = (globalThis as { gc?: unknown }).gc;
    if (typeof own === 'function') gcFunction = own as GcFunction;
    else {
      try {
        setFlagsFromString('--expose-gc');
        const fn: unknown = runInNewContext('gc');
        gcFunction = typeof fn === 'function' ? (fn as GcFunction) : null;
      } catch {
        gcFunction = null;
      }
    }
  }
  return gcFunction ?? undefined;
}

/**
 * Runs one full (major) garbage collection of this thread's heap now, synchronously.
 * @returns false when V8's collector cannot be called here
 */
export function collectGarbage(): boolean {
  const gc = gcOf();
  if (gc === undefined) return false;
  gc({ type: 'major', execution: 'sync' });
  return true;
}

/** Options of {@link MemoryReducer}. */
export interface MemoryReducerOptions {
  /** Items changed (routes, objects) after which a collection is due (default 10,000). */
  thresholdItems?: number;
  /** Quiet time before the collection, ms: every new note moves it (default 2000). */
  quietMs?: number;
  /** Called after each collection (logs, tests). */
  onCollect?: (items: number, ms: number) => void;
}

/** See the module comment. */
export class MemoryReducer {
  readonly #threshold: number;
  readonly #quietMs: number;
  readonly #onCollect: MemoryReducerOptions['onCollect'];
  #items = 0;
  #timer: NodeJS.Timeout | undefined;
  /** Collections run (tests). */
  collections = 0;

  constructor(opts: MemoryReducerOptions = {}) {
    this.#threshold = opts.thresholdItems ?? 10_000;
    this.#quietMs = opts.quietMs ?? 2000;
    this.#onCollect = opts.onCollect;
  }

  /** `items` were replaced or dropped (a route set, a parsed file): a collection follows once enough changed. */
  note(items: number): void {
    this.#items += items;
    if (this.#items < this.#threshold) return;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = setTimeout(() => this.#collect(), this.#quietMs);
    this.#timer.unref();
  }

  /** Cancels a pending collection. */
  stop(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #collect(): void {
    this.#timer = undefined;
    const items = this.#items;
    this.#items = 0;
    const t0 = performance.now();
    if (!collectGarbage()) return;
    this.collections++;
    this.#onCollect?.(items, performance.now() - t0);
  }
}
