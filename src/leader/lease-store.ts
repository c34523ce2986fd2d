/**
 * `LeaseStore` over the Kubernetes API: coordination.k8s.io/v1 Lease read, create and replace with
 * @kubernetes/client-node 2.x (object-parameter calls; failures are ApiException with `.code`).
 * Source: coordination.k8s.io/v1 Lease (MicroTime fields carry 6 fractional digits; a replace is guarded by
 * metadata.resourceVersion, and a 409 means someone else wrote first).
 */
import { CoordinationV1Api, V1MicroTime, type KubeConfig, type V1Lease, type V1LeaseSpec } from '@kubernetes/client-node';
import { LeaseConflictError, type LeaseRecord, type LeaseStore, type StoredLease } from './election.ts';

function statusCode(err: unknown): number | undefined {
  const code = (err as { code?: unknown } | undefined)?.code;
  return typeof code === 'number' ? code : undefined;
}

function toStored(lease: V1Lease): StoredLease {
  const spec = lease.spec ?? {};
  // MicroTime fields come back from the typed API as raw strings or Dates; keep them as text.
  const text = (v: unknown) => (v === undefined || v === null ? undefined : v instanceof Date ? v.toISOString() : String(v));
  const record: LeaseRecord = {
    holderIdentity: spec.holderIdentity ?? undefined,
    leaseDurationSeconds: spec.leaseDurationSeconds ?? undefined,
    acquireTime: text(spec.acquireTime),
    renewTime: text(spec.renewTime),
    leaseTransitions: spec.leaseTransitions ?? undefined,
  };
  return { record, resourceVersion: lease.metadata?.resourceVersion ?? '' };
}

/**
 * A MicroTime that serializes as the exact text it was made from: the record's times are already MicroTime text
 * ("…123000Z", or another holder's "…123456Z"), and a Date would round them to milliseconds.
 */
class MicroTimeText extends V1MicroTime {
  readonly #text: string;
  constructor(text: string) {
    super(Date.parse(text));
    this.#text = text;
  }
  override toISOString(): string {
    return this.#text;
  }
}

function toBody(name: string, namespace: string, record: LeaseRecord, resourceVersion?: string): V1Lease {
  const spec: V1LeaseSpec = {
    ...(record.holderIdentity !== undefined ? { holderIdentity: record.holderIdentity } : {}),
    ...(record.leaseDurationSeconds !== undefined ? { leaseDurationSeconds: record.leaseDurationSeconds } : {}),
    ...(record.acquireTime !== undefined ? { acquireTime: new MicroTimeText(record.acquireTime) } : {}),
    ...(record.renewTime !== undefined ? { renewTime: new MicroTimeText(record.renewTime) } : {}),
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
  private readonly api: CoordinationV1Api;
  private readonly name: string;
  private readonly namespace: string;

  constructor(kc: KubeConfig, namespace: string, name = 'herald-allocator') {
    this.api = kc.makeApiClient(CoordinationV1Api);
    this.name = name;
    this.namespace = namespace;
  }

  async get(): Promise<StoredLease | undefined> {
    try {
      return toStored(await this.api.readNamespacedLease({ name: this.name, namespace: this.namespace }));
    } catch (err) {
      if (statusCode(err) === 404) return undefined;
      throw err;
    }
  }

  async create(record: LeaseRecord): Promise<StoredLease> {
    try {
      return toStored(await this.api.createNamespacedLease({ namespace: this.namespace, body: toBody(this.name, this.namespace, record) }));
    } catch (err) {
      if (statusCode(err) === 409) throw new LeaseConflictError('lease already exists');
      throw err;
    }
  }

  async update(record: LeaseRecord, resourceVersion: string): Promise<StoredLease> {
    try {
      return toStored(
        await this.api.replaceNamespacedLease({ name: this.name, namespace: this.namespace, body: toBody(this.name, this.namespace, record, resourceVersion) }),
      );
    } catch (err) {
      if (statusCode(err) === 409) throw new LeaseConflictError();
      throw err;
    }
  }
}
