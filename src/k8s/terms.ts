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
