/**
 * `LeaseStore` over the Kubernetes API: coordination.k8s.io/v1 Lease read, create and replace (src/k8s/client.ts;
 * failures are ApiError with `.code`).
 * Source: coordination.k8s.io/v1 Lease (MicroTime fields carry 6 fractional digits; a replace is guarded by
 * metadata.resourceVersion, and a 409 means someone else wrote first).
 */
import type { KubeClient } from '../k8s/client.ts';
import { apiErrorCode } from '../k8s/forbidden.ts';
import { LeaseConflictError, type LeaseRecord, type LeaseStore, type StoredLease } from './election.ts';

/** The Lease fields the election reads and writes (times are MicroTime text, kept verbatim). */
interface LeaseObject {
  metadata?: { resourceVersion?: string };
  spec?: { holderIdentity?: string; leaseDurationSeconds?: number; acquireTime?: string; renewTime?: string; leaseTransitions?: number };
}

function toStored(answer: unknown): StoredLease {
  const lease = (answer ?? {}) as LeaseObject;
  const spec = lease.spec ?? {};
  const record: LeaseRecord = {
    holderIdentity: spec.holderIdentity ?? undefined,
    leaseDurationSeconds: spec.leaseDurationSeconds ?? undefined,
    acquireTime: spec.acquireTime ?? undefined,
    renewTime: spec.renewTime ?? undefined,
    leaseTransitions: spec.leaseTransitions ?? undefined,
  };
  return { record, resourceVersion: lease.metadata?.resourceVersion ?? '' };
}

function toBody(name: string, namespace: string, record: LeaseRecord, resourceVersion?: string): object {
  const spec = {
    ...(record.holderIdentity !== undefined ? { holderIdentity: record.holderIdentity } : {}),
    ...(record.leaseDurationSeconds !== undefined ? { leaseDurationSeconds: record.leaseDurationSeconds } : {}),
    ...(record.acquireTime !== undefined ? { acquireTime: record.acquireTime } : {}),
    ...(record.renewTime !== undefined ? { renewTime: record.renewTime } : {}),
    ...(record.leaseTransitions !== undefined ? { leaseTransitions: record.leaseTransitions } : {}),
  };
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name, namespace, ...(resourceVersion ? { resourceVersion } : {}) },
    spec,
  };
}

/** One named Lease in one namespace (default name `herald-allocator`, docs/decisions.md "Pools"). */
export class KubernetesLeaseStore implements LeaseStore {
  private readonly api: KubeClient;
  private readonly name: string;
  private readonly namespace: string;

  constructor(kc: KubeClient, namespace: string, name = 'herald-allocator') {
    this.api = kc;
    this.name = name;
    this.namespace = namespace;
  }

  #collection(): string {
    return `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(this.namespace)}/leases`;
  }

  async get(): Promise<StoredLease | undefined> {
    try {
      return toStored(await this.api.request('GET', `${this.#collection()}/${encodeURIComponent(this.name)}`));
    } catch (err) {
      if (apiErrorCode(err) === 404) return undefined;
      throw err;
    }
  }

  async create(record: LeaseRecord): Promise<StoredLease> {
    try {
      return toStored(await this.api.request('POST', this.#collection(), { body: toBody(this.name, this.namespace, record) }));
    } catch (err) {
      if (apiErrorCode(err) === 409) throw new LeaseConflictError('lease already exists');
      throw err;
    }
  }

  async update(record: LeaseRecord, resourceVersion: string): Promise<StoredLease> {
    try {
      return toStored(await this.api.request('PUT', `${this.#collection()}/${encodeURIComponent(this.name)}`, { body: toBody(this.name, this.namespace, record, resourceVersion) }));
    } catch (err) {
      if (apiErrorCode(err) === 409) throw new LeaseConflictError();
      throw err;
    }
  }
}
