/**
 * Writes to this node's Node object: one annotation, by JSON merge patch (RFC 7386: null removes the key) of
 * `metadata.annotations` (core/v1 Node; RBAC: `patch` on `nodes`). Used for the drain annotation `herald.io/drain`
 * (docs/decisions.md "Drain").
 */
import { CoreV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import type { KubeConfig } from '@kubernetes/client-node';

/**
 * Sets annotation `key` of Node `nodeName` to `value`, or removes it (null).
 * @throws the client's ApiException (HTTP status in `code`) when the apiserver refuses, e.g. 403 without RBAC
 */
export async function patchNodeAnnotation(kc: KubeConfig, nodeName: string, key: string, value: string | null): Promise<void> {
  const api = kc.makeApiClient(CoreV1Api);
  await api.patchNode({ name: nodeName, body: { metadata: { annotations: { [key]: value } } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
}
