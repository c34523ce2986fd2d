/**
 * What Herald keeps of each Kubernetes object: the fields its code reads (src/k8s/shapes.ts), nothing else (the
 * client-go informer "transform" idea). `ObjectStore.apply` (object-store.ts) trims every object of both sources
 * before it stores it, so the snapshot holds one small copy per object: no managedFields, no last-applied or other
 * foreign annotations (of annotations only Herald's own, `herald.io/`, are kept), no Pod references, no Node images.
 * On a served Service that is a third or less of the object (docs/benchmarks.md "Where the memory goes").
 *
 * A value whose shape is not the expected one (a string where an object belongs: manifest files may hold anything)
 * is kept as it is, so the screening (src/k8s/screen.ts) sees it and quarantines the object.
 */
import type { Shape } from './shapes.ts';
import { SHAPES } from './shapes.ts';
import { sharedValue, term } from './terms.ts';
import type { KubeObject, ResourceKind } from './types.ts';

const isPlain = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** What the cache keeps of `value`, a field of shape `shape` (undefined: nothing). */
function keepValue(value: unknown, shape: Shape): unknown {
  if (typeof shape === 'string') return value;
  if ('term' in shape) return typeof value === 'string' ? term(value) : value;
  if ('list' in shape) return Array.isArray(value) ? shareIf(shape.shared, value.map((v) => keepValue(v, shape.list))) : value;
  if ('map' in shape) {
    const keep = shape.keep;
    if ((keep === undefined && shape.terms !== true) || !isPlain(value)) return value;
    let out: Record<string, unknown> | undefined;
    for (const k of Object.keys(value)) {
      if (keep !== undefined && !keep(k)) continue;
      out ??= {};
      const v = value[k];
      out[k] = shape.terms === true && typeof v === 'string' ? term(v) : v;
    }
    return keep === undefined ? (out ?? {}) : out;
  }
  return isPlain(value) ? shareIf(shape.shared, keepFields(value, shape.fields)) : value;
}

/** `kept` (a new value the trimmer built), or its shared copy when the shape says `shared` (src/k8s/terms.ts). */
function shareIf(shared: boolean | undefined, kept: unknown): unknown {
  return shared === true ? sharedValue(kept) : kept;
}

function keepFields(obj: Record<string, unknown>, fields: Readonly<Record<string, Shape>>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const field of Object.keys(fields)) {
    const v = obj[field];
    if (v === undefined) continue;
    const kept = keepValue(v, fields[field] as Shape);
    if (kept !== undefined) out[field] = kept;
  }
  return out;
}

/**
 * The fields of `obj` that Herald reads (a new object; kept values are shared with `obj`, not copied, except terms and
 * shared values, which are shared with other objects: src/k8s/terms.ts).
 * @param kind what `obj` is (its own `kind` field is not read: watch and list items may lack it)
 */
export function trimObject(kind: ResourceKind, obj: KubeObject): KubeObject {
  return keepValue(obj, SHAPES[kind]) as KubeObject;
}

/**
 * Whether two trimmed objects say the same to Herald: deep equality of JSON values, `metadata.resourceVersion` aside.
 * Used to tell an update Herald would not notice (a heartbeat, a managedFields timestamp, a Pod reference).
 */
export function sameContent(a: KubeObject, b: KubeObject): boolean {
  return jsonEqual(a, b, true);
}

function jsonEqual(a: unknown, b: unknown, top = false): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i], b[i])) return false;
    return true;
  }
  const ra = a as Record<string, unknown>;
  const rb = b as Record<string, unknown>;
  const ka = Object.keys(ra);
  if (ka.length !== Object.keys(rb).length) return false;
  for (const k of ka) {
    if (!Object.hasOwn(rb, k)) return false;
    if (top && k === 'metadata') {
      if (!metadataEqual(ra[k], rb[k])) return false;
    } else if (!jsonEqual(ra[k], rb[k])) return false;
  }
  return true;
}

function metadataEqual(a: unknown, b: unknown): boolean {
  if (!isPlain(a) || !isPlain(b)) return jsonEqual(a, b);
  const ka = Object.keys(a).filter((k) => k !== 'resourceVersion');
  const kb = Object.keys(b).filter((k) => k !== 'resourceVersion');
  if (ka.length !== kb.length) return false;
  for (const k of ka) if (!Object.hasOwn(b, k) || !jsonEqual(a[k], b[k])) return false;
  return true;
}
