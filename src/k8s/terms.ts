/**
 * Terms: the strings many Kubernetes objects repeat (namespaces, node names, label values, enumerated values such as
 * `LoadBalancer`, `Local`, `IPv4`, `TCP`), kept once for all objects. JSON.parse gives every object its own copy of
 * each value; at 10,000 Services those copies are several MiB of the heap (docs/benchmarks.md "Where the memory
 * goes"). The trimmer (src/k8s/trim.ts) passes the fields src/k8s/shapes.ts marks as terms through `term`.
 *
 * The table is bounded: when it holds `MAX_TERMS` strings it starts again empty, so values of deleted objects do not
 * pile up (objects stored before keep their copies, which stay correct: only sharing is lost). Strings longer than
 * `MAX_TERM_LENGTH` are not terms (a long value is rarely repeated) and are returned as they are.
 */

/**
 * A bounded table of shared copies by text key (the terms and shared values here, src/controller/reasons.ts
 * `sharedReasons`, src/controller/endpoints.ts): when it holds `max` copies it starts again empty, so the copies of
 * deleted objects do not pile up; copies handed out before stay valid (only sharing is lost).
 */
export class SharedTable<V> {
  readonly #max: number;
  readonly #copies = new Map<string, V>();

  /** @param max most copies held */
  constructor(max: number) {
    this.#max = max;
  }

  /** The copy held for `key`, if any. */
  get(key: string): V | undefined {
    return this.#copies.get(key);
  }

  /** Hold `copy` for `key` from now on; returns it. */
  hold(key: string, copy: V): V {
    if (this.#copies.size >= this.#max) this.#copies.clear();
    this.#copies.set(key, copy);
    return copy;
  }

  /** Number of copies held. */
  get size(): number {
    return this.#copies.size;
  }
}

/** Most distinct terms held (then the table starts again). */
export const MAX_TERMS = 8192;
/** Longest string kept as a term (UTF-16 code units; Kubernetes label values are at most 63 characters). */
export const MAX_TERM_LENGTH = 63;

const table = new SharedTable<string>(MAX_TERMS);

/** The one copy of `text` (the first one seen, or `text` itself from now on). */
export function term(text: string): string {
  if (text.length > MAX_TERM_LENGTH) return text;
  return table.get(text) ?? table.hold(text, text);
}

/** Number of terms held (tests). */
export function termCount(): number {
  return table.size;
}

/** Most distinct shared values held (then the table starts again, as the terms table). */
export const MAX_SHARED_VALUES = 4096;
/** Longest JSON text of a value kept as a shared value (a few ports or conditions; longer ones are rarely repeated). */
export const MAX_SHARED_JSON = 256;

const values = new SharedTable<unknown>(MAX_SHARED_VALUES);

/**
 * The one deep-frozen copy of the JSON value `value` for every object that holds it word for word: an endpoint's
 * `conditions` (`{ ready: true, serving: true, terminating: false }` on nearly every endpoint), a Service's `ports`
 * or `ipFamilies`. JSON.parse gives each object its own copy, some 50 bytes an object and array (docs/benchmarks.md
 * "Where the memory goes"). A value whose JSON text is longer than `MAX_SHARED_JSON` is returned as it is. The shared
 * copy is frozen: a cached object is read, never changed (src/k8s/object-store.ts), and a change would throw.
 * @param value a JSON value (plain objects, arrays, strings, numbers, booleans, null)
 */
export function sharedValue(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  const text = JSON.stringify(value);
  if (text.length > MAX_SHARED_JSON) return value;
  return values.get(text) ?? values.hold(text, deepFreeze(value));
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

/** Number of shared values held (tests). */
export function sharedValueCount(): number {
  return values.size;
}
