/**
 * Object keys and change keys.
 *
 * Object keys follow the informer cache convention: "namespace/name" for namespaced objects and
 * "name" for cluster-scoped ones (Node, ServiceCIDR).
 *
 * Change keys are what sources emit and the work queue coalesces:
 *   - `service:<ns>/<name>`  a Service or one of its EndpointSlices changed;
 *   - `node:<name>`          a Node changed;
 *   - `servicecidr:<name>`   a ServiceCIDR changed;
 *   - `herald:<Kind>/<key>`  one of Herald's configuration objects changed (BGPPeer, ...);
 *   - `all`                  everything must be recomputed (config change, resync).
 */
import type { EndpointSlice, KubeObject } from './types.ts';
import { SERVICE_NAME_LABEL } from './types.ts';

/**
 * "ns/name" for namespaced objects, "name" for cluster-scoped ones. The "ns/name" text is built by `join`, which gives
 * V8 a flat string (about 40 bytes): a template literal gives a rope that becomes a rope and a flat copy (about 70
 * bytes) once a Map hashes it, and several Maps key every Service (docs/benchmarks.md "Where the memory goes").
 */
export function objectKey(obj: KubeObject): string {
  const ns = obj.metadata?.namespace;
  const name = obj.metadata?.name ?? '';
  return ns ? [ns, name].join('/') : name;
}

/** Service key ("ns/name") an EndpointSlice belongs to, or undefined when the slice has no service-name label. */
export function serviceKeyOfSlice(slice: EndpointSlice): string | undefined {
  const svc = slice.metadata?.labels?.[SERVICE_NAME_LABEL];
  if (!svc) return undefined;
  return [slice.metadata?.namespace ?? '', svc].join('/'); // flat, as objectKey's
}

/** Change key of a Service ("ns/name"). */
export function serviceChangeKey(serviceKey: string): string {
  return `service:${serviceKey}`;
}

/** Change key of a Node. */
export function nodeChangeKey(name: string): string {
  return `node:${name}`;
}

/** Change key of a ServiceCIDR. */
export function serviceCIDRChangeKey(name: string): string {
  return `servicecidr:${name}`;
}

/** Prefix of the change keys of Herald's configuration objects. */
export const HERALD_KEY_PREFIX = 'herald:';

/** Change key of one of Herald's configuration objects ("ns/name"). */
export function heraldChangeKey(kind: string, key: string): string {
  return `${HERALD_KEY_PREFIX}${kind}/${key}`;
}

/** Change key meaning "recompute everything". */
export const ALL_KEY = 'all';
