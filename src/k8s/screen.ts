/**
 * Screening of the Kubernetes objects Herald reads: does an object have the shape of src/k8s/types.ts in every
 * field Herald reads? Objects arrive as untyped JSON (watch events, manifest files), and one that does not (an
 * EndpointSlice with `endpoints: [null]`, a Service whose `spec.ports` is a string) is quarantined by the object
 * store (src/k8s/object-store.ts): treated as absent, and reported with its name and the reason this module gives.
 *
 * Only the fields Herald reads are checked, each for its JSON type (Kubernetes itself validates the values); every
 * other field may hold anything. `null` is accepted where the API server writes it for an empty list or an unset
 * condition (Go nil slices and pointers). Source: kubernetes/api core/v1/types.go, discovery/v1/types.go,
 * networking/v1 ServiceCIDR.
 */
import { z } from 'zod';
import type { ResourceKind } from './types.ts';

const text = z.string();
const list = <T extends z.ZodType>(item: T) => z.array(item).nullish();
const stringMap = z.record(z.string(), z.string()).nullish();

const metadata = z.looseObject({
  name: z.string().min(1, 'metadata.name is empty'),
  namespace: text.optional(),
  labels: stringMap,
  annotations: stringMap,
});
const namespaced = z.looseObject({ name: z.string().min(1), namespace: z.string().min(1, 'metadata.namespace is empty'), labels: stringMap, annotations: stringMap });

const service = z.looseObject({
  metadata: namespaced,
  spec: z
    .looseObject({
      type: text.optional(),
      clusterIP: text.optional(),
      clusterIPs: list(text),
      ipFamilies: list(text),
      ipFamilyPolicy: text.optional(),
      externalIPs: list(text),
      externalTrafficPolicy: text.optional(),
      internalTrafficPolicy: text.optional(),
      loadBalancerClass: text.nullish(),
      loadBalancerIP: text.optional(),
      healthCheckNodePort: z.number().optional(),
      publishNotReadyAddresses: z.boolean().optional(),
      ports: list(z.looseObject({ name: text.optional(), port: z.number().optional(), protocol: text.optional(), nodePort: z.number().optional() })),
      selector: stringMap,
    })
    .optional(),
  status: z
    .looseObject({
      loadBalancer: z.looseObject({ ingress: list(z.looseObject({ ip: text.optional(), hostname: text.optional(), ipMode: text.optional() })) }).nullish(),
    })
    .nullish(),
});

const condition = z.boolean().nullish();
const endpointSlice = z.looseObject({
  metadata: namespaced,
  addressType: text.optional(),
  endpoints: list(
    z.looseObject({
      addresses: list(text),
      conditions: z.looseObject({ ready: condition, serving: condition, terminating: condition }).nullish(),
      nodeName: text.nullish(),
      zone: text.nullish(),
      hostname: text.nullish(),
    }),
  ),
  ports: list(z.looseObject({ name: text.nullish(), port: z.number().nullish(), protocol: text.nullish() })),
});

const node = z.looseObject({
  metadata,
  spec: z.looseObject({ unschedulable: z.boolean().nullish(), taints: list(z.looseObject({ key: text.optional(), value: text.optional(), effect: text.optional() })) }).nullish(),
  status: z
    .looseObject({
      conditions: list(z.looseObject({ type: text.optional(), status: text.optional(), reason: text.optional(), message: text.optional() })),
      addresses: list(z.looseObject({ type: text.optional(), address: text.optional() })),
    })
    .nullish(),
});

const serviceCIDR = z.looseObject({ metadata, spec: z.looseObject({ cidrs: list(text) }).nullish() });

const SCHEMAS: Record<ResourceKind, z.ZodType> = { Service: service, EndpointSlice: endpointSlice, Node: node, ServiceCIDR: serviceCIDR };

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
