/**
 * Errors of the `herald.io/` annotations on Kubernetes objects (health checks: src/health/annotations.ts; path
 * attributes: src/controller/service-attributes.ts): one error per bad annotation, naming it, its value and the fix.
 */
import { HERALD_ANNOTATION_PREFIX } from './shapes.ts';

/** One bad annotation. */
export interface AnnotationError {
  annotation: string;
  value: string | undefined;
  message: string;
}

/** One line per error: `herald.io/health-check-port="x": must be an integer 1-65535, got "x"`. */
export function formatAnnotationErrors(errors: readonly AnnotationError[]): string {
  return errors.map((e) => `${e.annotation}${e.value !== undefined ? `=${JSON.stringify(e.value)}` : ''}: ${e.message}`).join('; ');
}

/** `value` in words for an error: `number 100`, `boolean true`, `a list`, `a mapping`, `null`. */
function describeNonText(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  return `${typeof value} ${String(value)}`;
}

/**
 * One error per annotation of `names` whose value is not a string. Kubernetes' API refuses such a value, but a
 * manifest file may hold one: YAML reads an unquoted `herald.io/med: 100` as a number (issue 35 N9). It is a bad
 * annotation like any other — refused with this error, its attribute's last good value kept — never a reason to
 * quarantine the object (src/k8s/shapes.ts reads annotation values as they are).
 */
export function nonTextAnnotations(annotations: Readonly<Record<string, unknown>> | undefined, names: readonly string[]): AnnotationError[] {
  const out: AnnotationError[] = [];
  for (const name of names) {
    const v = annotations?.[name];
    if (v === undefined || typeof v === 'string') continue;
    const text = typeof v === 'object' && v !== null ? undefined : String(v);
    out.push({ annotation: name, value: undefined, message: `must be a string, got ${describeNonText(v)}${text !== undefined ? ` (quote it in YAML: "${text}")` : ''}` });
  }
  return out;
}

/**
 * Herald's annotations (`herald.io/`, the only ones the cache keeps: src/k8s/shapes.ts) whose values are strings; the
 * others are reported by {@link nonTextAnnotations}.
 */
export function textAnnotations(annotations: Readonly<Record<string, unknown>> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of Object.keys(annotations ?? {})) {
    if (!k.startsWith(HERALD_ANNOTATION_PREFIX)) continue;
    const v = annotations?.[k];
    if (typeof v === 'string') out[k] = v;
  }
  return out;
}
