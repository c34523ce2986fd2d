/**
 * Writes to this node's Node object: one annotation, by JSON merge patch (RFC 7386: null removes the key) of
 * `metadata.annotations` (core/v1 Node; RBAC: `patch` on `nodes`). Used for the drain annotation `herald.io/drain`
 * (docs/decisions.md "Drain").
 */
import type { KubeClient } from './client.ts';

/**
 * Sets annotation `key` of Node `nodeName` to `value`, or removes it (null).
 * @throws ApiError (src/k8s/client.ts; HTTP status in `code`) when the apiserver refuses, e.g. 403 without RBAC
 */
export async function patchNodeAnnotation(kc: KubeClient, nodeName: string, key: string, value: string | null): Promise<void> {
  await kc.request('PATCH', `/api/v1/nodes/${encodeURIComponent(nodeName)}`, { body: { metadata: { annotations: { [key]: value } } }, contentType: 'application/merge-patch+json' });
}
