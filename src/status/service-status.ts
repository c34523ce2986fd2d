/**
 * The one writer of a Service's `status.loadBalancer.ingress` (the LoadBalancer allocator's output, src/ipam/): the
 * seam the allocator writes through, and its implementation over the Kubernetes API (`patch services/status`).
 */
import type { KubeClient } from '../k8s/client.ts';

/** Writes `status.loadBalancer.ingress` of one Service. */
export interface ServiceStatusWriter {
  /**
   * Sets the ingress IPs (`[]` clears them) if the Service still has `resourceVersion`.
   * @throws Error with `code` 409 on a stale resourceVersion, other API errors as thrown by the client.
   */
  patchIngress(service: string, ips: readonly string[], resourceVersion: string | undefined): Promise<void>;
}

/** {@link ServiceStatusWriter} over the Kubernetes API: a JSON merge patch of the status subresource, RV-conditioned. */
export class KubernetesServiceStatusWriter implements ServiceStatusWriter {
  private readonly api: KubeClient;

  constructor(kc: KubeClient) {
    this.api = kc;
  }

  async patchIngress(service: string, ips: readonly string[], resourceVersion: string | undefined): Promise<void> {
    const [namespace = 'default', name = ''] = service.split('/');
    // Merge patch: the ingress array is replaced wholesale; null clears it (RFC 7386 JSON merge patch).
    const body = {
      ...(resourceVersion ? { metadata: { resourceVersion } } : {}),
      status: { loadBalancer: { ingress: ips.length > 0 ? ips.map((ip) => ({ ip, ipMode: 'VIP' })) : null } },
    };
    await this.api.request('PATCH', `/api/v1/namespaces/${encodeURIComponent(namespace)}/services/${encodeURIComponent(name)}/status`, { body, contentType: 'application/merge-patch+json' });
  }
}
