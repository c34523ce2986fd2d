/**
 * What Herald keeps of each Kubernetes object: the fields its code reads, nothing else (the client-go informer
 * "transform" idea). `ObjectStore.apply` (object-store.ts) trims every object of both sources before it stores it,
 * so the snapshot holds one small copy per object: no managedFields, no last-applied annotation, no Pod references,
 * no Node images. On a served Service that is about a tenth of the object (docs/benchmarks.md "Memory").
 *
 * The keep-list is written from what the code reads: the controller (Service VIPs, traffic policies, class, labels
 * for advertisement selectors; EndpointSlice endpoints; Node eligibility and labels for node selectors), the health
 * checks (`herald.io/health-check-*` annotations, `healthCheckNodePort`), per-Service attributes (`herald.io/`
 * annotations), IPAM (families, ports, selector, requested IPs, creation order, resourceVersion for conditional
 * writes) and ServiceCIDRs. Of annotations only Herald's own (`herald.io/`) are kept. The types in types.ts describe
 * exactly the kept fields; test/src/k8s/trim.test.ts fails when code reads a field this list drops.
 *
 * A value whose shape is not the expected one (a string where an object belongs: manifest files may hold anything)
 * is kept as it is, so consumers see the same input with or without trimming.
 */
import type { KubeObject, ResourceKind } from './types.ts';
import { SERVICE_NAME_LABEL } from './types.ts';

/** How a field is kept: as it is (`true`), by a keep-list (an object), item by item (`[keep-list]`), or by a function. */
export type KeepRule = true | KeepList | readonly [KeepList] | ((value: unknown) => unknown);

/** Field name → how it is kept. Fields not listed are dropped. */
export interface KeepList {
  readonly [field: string]: KeepRule;
}

/** Prefix of the annotations Herald reads (health checks, route attributes, IPAM). */
export const HERALD_ANNOTATION_PREFIX = 'herald.io/';

const isPlain = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Only the entries whose key `keep` accepts (a map of strings: labels, annotations). */
function entries(keep: (key: string) => boolean): (value: unknown) => unknown {
  return (value) => {
    if (!isPlain(value)) return value;
    let out: Record<string, unknown> | undefined;
    for (const k of Object.keys(value)) {
      if (!keep(k)) continue;
      out ??= {};
      out[k] = value[k];
    }
    return out;
  };
}

const heraldAnnotations = entries((k) => k.startsWith(HERALD_ANNOTATION_PREFIX));

/** The keep-list of each kind. */
export const KEEP: Readonly<Record<ResourceKind, KeepList>> = {
  Service: {
    metadata: { name: true, namespace: true, resourceVersion: true, creationTimestamp: true, deletionTimestamp: true, labels: true, annotations: heraldAnnotations },
    spec: {
      type: true,
      clusterIP: true,
      clusterIPs: true,
      externalIPs: true,
      externalTrafficPolicy: true,
      internalTrafficPolicy: true,
      healthCheckNodePort: true,
      loadBalancerClass: true,
      loadBalancerIP: true,
      ipFamilies: true,
      ipFamilyPolicy: true,
      ports: [{ port: true, protocol: true }],
      selector: true,
    },
    status: { loadBalancer: { ingress: [{ ip: true, ipMode: true }] } },
  },
  EndpointSlice: {
    metadata: { name: true, namespace: true, resourceVersion: true, deletionTimestamp: true, labels: entries((k) => k === SERVICE_NAME_LABEL) },
    addressType: true,
    endpoints: [{ addresses: true, conditions: { ready: true, serving: true, terminating: true }, nodeName: true }],
  },
  Node: {
    metadata: { name: true, resourceVersion: true, deletionTimestamp: true, labels: true, annotations: heraldAnnotations },
    spec: { taints: [{ key: true }] },
    status: { conditions: [{ type: true, status: true }] },
  },
  ServiceCIDR: {
    metadata: { name: true, resourceVersion: true, deletionTimestamp: true },
    spec: { cidrs: true },
  },
};

function keepValue(value: unknown, rule: KeepRule): unknown {
  if (rule === true) return value;
  if (typeof rule === 'function') return rule(value);
  if (Array.isArray(rule)) {
    if (!Array.isArray(value)) return value;
    const item = rule[0] as KeepList;
    return value.map((v) => keepValue(v, item));
  }
  return isPlain(value) ? keepFields(value, rule as KeepList) : value;
}

function keepFields(obj: Record<string, unknown>, keep: KeepList): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const field of Object.keys(keep)) {
    const v = obj[field];
    if (v === undefined) continue;
    const kept = keepValue(v, keep[field] as KeepRule);
    if (kept !== undefined) out[field] = kept;
  }
  return out;
}

/**
 * The fields of `obj` that Herald reads (a new object; kept values are shared with `obj`, not copied).
 * @param kind what `obj` is (its own `kind` field is not read: watch and list items may lack it)
 */
export function trimObject(kind: ResourceKind, obj: KubeObject): KubeObject {
  return isPlain(obj) ? keepFields(obj, KEEP[kind]) : obj;
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
