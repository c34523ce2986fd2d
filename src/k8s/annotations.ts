/**
 * Errors of the `herald.io/` annotations on Kubernetes objects (health checks: src/health/annotations.ts; path
 * attributes: src/controller/service-attributes.ts): one error per bad annotation, naming it, its value and the fix.
 */

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
