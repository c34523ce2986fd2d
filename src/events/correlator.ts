/**
 * What becomes of each Event Herald records, decided as client-go's EventCorrelator decides it
 * (k8s.io/client-go/tools/record/events_cache.go), so that a burst of changes costs the apiserver and etcd a few writes
 * per object, not one per change:
 *
 * 1. **Aggregation** per object, type and reason: past `aggregateAfter` distinct messages within `windowMs`, the
 *    next ones become one Event "(combined from similar events): <latest message>" (client-go: 10 in 10 minutes).
 * 2. **De-duplication**: an Event whose object, type, reason and message were recorded before is the same Event with
 *    its `count` raised: a patch of the existing object (`count`, `lastTimestamp`), never a new one. A repeat within
 *    `repeatAfterMs` of the last write is only counted; the count reaches the apiserver with the next write.
 * 3. **Spam filter** per object: a token bucket of `objectBurst` writes refilled at `objectPerMinute` (client-go: 25,
 *    then one per 5 minutes). A write it refuses is dropped (and counted by the recorder).
 *
 * Pure bookkeeping over an injected clock; the caller writes (recorder.ts). Memory is bounded: at most `maxKeys`
 * de-duplication and aggregation entries (oldest dropped first, client-go's LRU of 4096).
 */

/** The object an Event is about ("namespace/name" of a Service, or of another kind). */
export interface EventKey {
  /** "namespace/name" of the object. */
  readonly object: string;
  readonly type: 'Normal' | 'Warning';
  readonly reason: string;
  readonly message: string;
}

/** What to do with one recorded Event. */
export type Correlation =
  /** Write a new Event object named `name`. */
  | { readonly action: 'create'; readonly name: string; readonly message: string; readonly count: number; readonly firstMs: number; readonly lastMs: number }
  /** Raise the count of the Event object `name` (created before) to `count`. */
  | { readonly action: 'patch'; readonly name: string; readonly message: string; readonly count: number; readonly firstMs: number; readonly lastMs: number }
  /**
   * Nothing to write: a repeat within `repeatAfterMs` (`counted`), refused by the spam filter (`spam`) or by the
   * caller's own limit (`limited`, see `correlate`).
   */
  | { readonly action: 'skip'; readonly why: 'counted' | 'spam' | 'limited' };

/** Options of {@link EventCorrelator}; every field has client-go's default unless noted. */
export interface CorrelatorOptions {
  /** Distinct messages per object, type and reason within `windowMs` before they are combined (default 10). */
  readonly aggregateAfter?: number;
  /** The aggregation window, ms (default 600,000). */
  readonly windowMs?: number;
  /** A repeat of a written Event within this long is counted, not written, ms (Herald's; default 60,000). */
  readonly repeatAfterMs?: number;
  /** Writes per object at once (default 5; client-go 25). */
  readonly objectBurst?: number;
  /** Writes per object a minute once the burst is spent (default 2; client-go 0.2). */
  readonly objectPerMinute?: number;
  /** Entries kept for de-duplication and aggregation (default 4096). */
  readonly maxKeys?: number;
  /** Names new Event objects (default: the object's name, a hex time and a counter, as kubectl's recorder). */
  readonly nameOf?: (object: string, nowMs: number) => string;
}

interface Written {
  name: string;
  message: string;
  count: number;
  firstMs: number;
  lastMs: number;
  /** Time of the last write (create or patch), ms. */
  writtenMs: number;
}

interface Similar {
  messages: Set<string>;
  sinceMs: number;
}

interface Bucket {
  tokens: number;
  atMs: number;
}

const COMBINED = '(combined from similar events): ';

/** See the module comment. */
export class EventCorrelator {
  readonly #aggregateAfter: number;
  readonly #windowMs: number;
  readonly #repeatAfterMs: number;
  readonly #burst: number;
  readonly #perMs: number;
  readonly #maxKeys: number;
  readonly #nameOf: (object: string, nowMs: number) => string;
  /** De-duplication: object, type, reason, message → the Event written. */
  readonly #written = new Map<string, Written>();
  /** Aggregation: object, type, reason → the distinct messages seen in the window. */
  readonly #similar = new Map<string, Similar>();
  /** Spam filter: object → its bucket. */
  readonly #buckets = new Map<string, Bucket>();
  #serial = 0;

  constructor(o: CorrelatorOptions = {}) {
    this.#aggregateAfter = o.aggregateAfter ?? 10;
    this.#windowMs = o.windowMs ?? 600_000;
    this.#repeatAfterMs = o.repeatAfterMs ?? 60_000;
    this.#burst = o.objectBurst ?? 5;
    this.#perMs = (o.objectPerMinute ?? 2) / 60_000;
    this.#maxKeys = o.maxKeys ?? 4096;
    this.#nameOf = o.nameOf ?? ((object, nowMs) => `${object.split('/').pop() ?? 'herald'}.${nowMs.toString(16)}${(this.#serial++ & 0xfff).toString(16)}`);
  }

  /**
   * Decides what to write for `e` at `nowMs`, and records it as written (see `forget` when the write fails).
   * @param admit the caller's own limit (the recorder's for every object), asked only for a write the spam filter
   *   allows: false skips it as `limited`, and the object's token is kept
   */
  correlate(e: EventKey, nowMs: number, admit: () => boolean = () => true): Correlation {
    // 1. Aggregation: past the threshold, similar Events share one message (and so one Event object).
    const similarKey = [e.object, e.type, e.reason].join('\u0000');
    let similar = this.#similar.get(similarKey);
    if (similar === undefined || nowMs - similar.sinceMs > this.#windowMs) {
      similar = { messages: new Set(), sinceMs: nowMs };
      this.#remember(this.#similar, similarKey, similar);
    }
    similar.messages.add(e.message);
    const combined = similar.messages.size > this.#aggregateAfter;
    const message = combined ? `${COMBINED}${e.message}` : e.message;
    // 2. De-duplication: the same Event again is a count on the existing object.
    const key = combined ? `${similarKey}\u0000${COMBINED}` : `${similarKey}\u0000${e.message}`;
    const before = this.#written.get(key);
    if (before !== undefined && nowMs - before.writtenMs < this.#repeatAfterMs) {
      before.count++;
      before.lastMs = nowMs;
      before.message = message;
      return { action: 'skip', why: 'counted' };
    }
    // 3. Spam filter per object, then the caller's limit: only writes spend tokens.
    const bucket = this.#bucket(e.object, nowMs);
    const why = bucket.tokens < 1 ? 'spam' : admit() ? undefined : 'limited';
    if (why !== undefined) {
      if (before !== undefined) {
        before.count++;
        before.lastMs = nowMs;
      }
      return { action: 'skip', why };
    }
    bucket.tokens -= 1;
    if (before !== undefined) {
      before.count++;
      before.lastMs = nowMs;
      before.message = message;
      before.writtenMs = nowMs;
      this.#remember(this.#written, key, before);
      return { action: 'patch', name: before.name, message, count: before.count, firstMs: before.firstMs, lastMs: nowMs };
    }
    const w: Written = { name: this.#nameOf(e.object, nowMs), message, count: 1, firstMs: nowMs, lastMs: nowMs, writtenMs: nowMs };
    this.#remember(this.#written, key, w);
    return { action: 'create', name: w.name, message, count: 1, firstMs: nowMs, lastMs: nowMs };
  }

  /** The Event object `name` is gone (deleted, expired: its create or patch failed): the next repeat creates a new one. */
  forget(name: string): void {
    for (const [k, w] of this.#written) if (w.name === name) this.#written.delete(k);
  }

  /** Entries held (tests: bounded). */
  get size(): number {
    return this.#written.size + this.#similar.size + this.#buckets.size;
  }

  /** The object's bucket, refilled to `nowMs`. */
  #bucket(object: string, nowMs: number): Bucket {
    let b = this.#buckets.get(object);
    if (b === undefined) {
      b = { tokens: this.#burst, atMs: nowMs };
      this.#remember(this.#buckets, object, b);
    }
    b.tokens = Math.min(this.#burst, b.tokens + Math.max(0, nowMs - b.atMs) * this.#perMs);
    b.atMs = Math.max(b.atMs, nowMs);
    return b;
  }

  /** Sets `key` as the newest entry of `map`, dropping the oldest past `maxKeys`. */
  #remember<V>(map: Map<string, V>, key: string, value: V): void {
    map.delete(key);
    map.set(key, value);
    if (map.size > this.#maxKeys) map.delete(map.keys().next().value as string);
  }
}
