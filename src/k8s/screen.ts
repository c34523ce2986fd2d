/**
 * Screening of the Kubernetes objects Herald reads: does an object have the shape of src/k8s/shapes.ts in every
 * field Herald reads? Objects arrive as untyped JSON (watch events, manifest files), and one that does not (an
 * EndpointSlice with `endpoints: [null]`, a Service whose `spec.ports` is a string) is quarantined by the controller
 * (src/controller/quarantine.ts): treated as absent, and reported with its name and the reason this module gives.
 *
 * Only the fields Herald reads (and keeps: src/k8s/trim.ts) are checked, each for its JSON type (Kubernetes itself
 * validates the values); every other field may hold anything. The schemas are built from the one table of those
 * fields, `SHAPES`.
 */
import { z } from 'zod';
import type { Shape } from './shapes.ts';
import { SHAPES } from './shapes.ts';
import type { ResourceKind } from './types.ts';

/** Whether a field of this shape must be present (a required name inside makes its object required). */
function required(shape: Shape): boolean {
  if (shape === 'name') return true;
  if (typeof shape === 'object' && 'term' in shape) return shape.term === 'name';
  return typeof shape === 'object' && 'fields' in shape && Object.values(shape.fields).some(required);
}

/** The zod schema of a field of shape `shape`. */
function schemaOf(shape: Shape): z.ZodType {
  switch (shape) {
    case 'text':
      return z.string().optional();
    case 'text?':
      return z.string().nullish();
    case 'number':
      return z.number().optional();
    case 'number?':
      return z.number().nullish();
    case 'flag?':
      return z.boolean().nullish();
    case 'name':
      return z.string().min(1, 'is empty');
    case 'opaque':
      return z.unknown().optional();
  }
  if ('term' in shape) return schemaOf(shape.term);
  if ('list' in shape) return z.array(schemaOf(shape.list)).nullish();
  if ('map' in shape) {
    const keep = shape.keep;
    // Annotations: any value; one that is not a string is a bad annotation where it is read (src/k8s/annotations.ts).
    if (shape.map === 'any') return z.record(z.string(), z.unknown()).nullish();
    if (keep === undefined) return z.record(z.string(), z.string()).nullish();
    // Only the kept keys are read: the others may hold anything.
    return z
      .record(z.string(), z.unknown())
      .nullish()
      .superRefine((m, ctx) => {
        for (const [k, v] of Object.entries(m ?? {})) {
          if (keep(k) && typeof v !== 'string') ctx.addIssue({ code: 'invalid_type', expected: 'string', input: v, path: [k] });
        }
      });
  }
  const obj = z.looseObject(Object.fromEntries(Object.entries(shape.fields).map(([k, v]) => [k, schemaOf(v)])));
  if (required(shape)) return obj;
  return shape.nullable === true ? obj.nullish() : obj.optional();
}

const SCHEMAS = Object.fromEntries(Object.entries(SHAPES).map(([kind, shape]) => [kind, schemaOf(shape)])) as Record<ResourceKind, z.ZodType>;

/**
 * Why `obj` cannot be used as a `kind`, or undefined when it can: the first few problems, each with its field path
 * (`endpoints[0]: expected object, received null`).
 */
export function screenObject(kind: ResourceKind, obj: unknown): string | undefined {
  const r = SCHEMAS[kind].safeParse(obj, { reportInput: true });
  if (r.success) return undefined;
  const problems = r.error.issues.slice(0, 3).map((i) => `${fieldPath(i.path)}: ${issueText(i)}`);
  const more = r.error.issues.length > 3 ? ` (and ${r.error.issues.length - 3} more)` : '';
  return problems.join('; ') + more;
}

function fieldPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const p of path) out += typeof p === 'number' ? `[${p}]` : `${out === '' ? '' : '.'}${String(p)}`;
  return out === '' ? '(object)' : out;
}

function issueText(i: z.core.$ZodIssue): string {
  if (i.code === 'invalid_type') return `expected ${i.expected}, got ${describe(i.input)}`;
  return i.message;
}

function describe(v: unknown): string {
  if (v === undefined) return 'nothing';
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'an object';
  if (typeof v === 'string') return `a string ${JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v)}`;
  return `${typeof v} ${String(v)}`;
}
