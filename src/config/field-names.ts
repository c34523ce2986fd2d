/**
 * Field names of the configuration schema, for the message of an unknown field: "unknown field (did you mean
 * holdTime?)" when a known field of the same mapping is one typo away (docs/configuration.md: unknown fields are errors).
 */
import { z } from 'zod';

/** A schema or a part of one, as zod's containers hand their parts out. */
type Schema = z.core.$ZodType;

/**
 * The field names of the mapping that `path` (zod's issue path: keys and list indexes) leads to in `schema`, through
 * lists, records, optional, nullable, default and pipe wrappers, and unions (the names of every mapping option).
 * Empty when the path leads to no mapping. Never throws.
 */
export function fieldNamesAt(schema: Schema, path: readonly PropertyKey[]): string[] {
  let at: Schema[] = [schema];
  for (const step of path) {
    const next: Schema[] = [];
    for (const s of at.flatMap(unwrap)) {
      if (s instanceof z.ZodObject && typeof step === 'string') {
        const field: unknown = s.shape[step];
        if (field instanceof z.core.$ZodType) next.push(field);
      } else if (s instanceof z.ZodArray && typeof step === 'number') next.push(s.element);
      else if (s instanceof z.ZodRecord) next.push(s.valueType);
    }
    at = next;
  }
  const names = new Set<string>();
  for (const s of at.flatMap(unwrap)) if (s instanceof z.ZodObject) for (const k of Object.keys(s.shape)) names.add(k);
  return [...names];
}

/** The schemas a value is checked against once the wrappers around `s` are taken off (a union: each option's). */
function unwrap(s: Schema): Schema[] {
  if (s instanceof z.ZodOptional || s instanceof z.ZodNullable || s instanceof z.ZodDefault || s instanceof z.ZodPrefault || s instanceof z.ZodReadonly) {
    return unwrap(s.unwrap());
  }
  if (s instanceof z.ZodPipe) return unwrap(s.in);
  if (s instanceof z.ZodUnion) return s.options.flatMap(unwrap);
  return [s];
}

/**
 * The known name `unknown` most likely stands for: the same name in other letter case, else the closest by edit
 * distance (insertions, deletions, substitutions, adjacent swaps) within 1 for names up to 4 letters, 2 beyond.
 * Undefined when none is that close.
 */
export function closestName(unknown: string, known: readonly string[]): string | undefined {
  const lower = unknown.toLowerCase();
  const sameCase = known.find((k) => k.toLowerCase() === lower);
  if (sameCase !== undefined) return sameCase;
  const limit = unknown.length <= 4 ? 1 : 2;
  let best: string | undefined;
  let bestDistance = limit + 1;
  for (const k of known) {
    const d = editDistance(lower, k.toLowerCase());
    if (d < bestDistance) {
      best = k;
      bestDistance = d;
    }
  }
  return best;
}

/** Optimal string alignment distance between `a` and `b` (Levenshtein with adjacent transpositions). */
function editDistance(a: string, b: string): number {
  let before: number[] = [];
  let above = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min((above[j] ?? 0) + 1, (row[j - 1] ?? 0) + 1, (above[j - 1] ?? 0) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, (before[j - 2] ?? 0) + 1);
      row.push(d);
    }
    before = above;
    above = row;
  }
  return above[b.length] ?? 0;
}

/** "unknown field", with "(did you mean X?)" when a known field of the same mapping is that close to `name`. */
export function unknownFieldMessage(schema: Schema, path: readonly PropertyKey[], name: string): string {
  const guess = closestName(name, fieldNamesAt(schema, path));
  return guess === undefined ? 'unknown field' : `unknown field (did you mean ${guess}?)`;
}
