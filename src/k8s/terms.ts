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

/** Most distinct terms held (then the table starts again). */
export const MAX_TERMS = 8192;
/** Longest string kept as a term (UTF-16 code units; Kubernetes label values are at most 63 characters). */
export const MAX_TERM_LENGTH = 63;

const table = new Map<string, string>();

/** The one copy of `text` (the first one seen, or `text` itself from now on). */
export function term(text: string): string {
  if (text.length > MAX_TERM_LENGTH) return text;
  const known = table.get(text);
  if (known !== undefined) return known;
  if (table.size >= MAX_TERMS) table.clear();
  table.set(text, text);
  return text;
}

/** Number of terms held (tests). */
export function termCount(): number {
  return table.size;
}

/** Most distinct shared values held (then the table starts again, as the terms table). */
export const MAX_SHARED_VALUES = 4096;
/** Longest JSON text of a value kept as a shared value (a few ports or conditions; longer ones are rarely repeated). */
export const MAX_SHARED_JSON = 256;

const values = new Map<string, unknown>();

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
  const known = values.get(text);
  if (known !== undefined) return known;
  if (values.size >= MAX_SHARED_VALUES) values.clear();
  values.set(text, deepFreeze(value));
  return value;
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
