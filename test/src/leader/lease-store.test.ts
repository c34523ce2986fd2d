// KubernetesLeaseStore against the fake apiserver with the real client-node: create, read, replace guarded by
// resourceVersion (a stale one is a LeaseConflictError), and MicroTime text written exactly as recorded (another
// holder's microseconds are not rounded to milliseconds).
import t from 'tap';
import { KubeClient } from '../../../src/k8s/client.ts';
import { FakeApiServer } from '../../helpers/fake-apiserver.ts';
import { KubernetesLeaseStore } from '../../../src/leader/lease-store.ts';
import { LeaseConflictError } from '../../../src/leader/election.ts';

t.test('create, get, update, conflicts; MicroTime text kept verbatim', async (t) => {
  const api = new FakeApiServer();
  await api.start();
  t.teardown(() => api.stop());
  const kc = new KubeClient({ server: api.url, token: 't' });
  const store = new KubernetesLeaseStore(kc, 'herald-system');
  t.equal(await store.get(), undefined, 'no Lease yet');
  const record = { holderIdentity: 'node-a', leaseDurationSeconds: 15, acquireTime: '2026-01-02T03:04:05.123456Z', renewTime: '2026-01-02T03:04:06.654321Z', leaseTransitions: 0 };
  const created = await store.create(record);
  t.same(created.record, record);
  const stored = api.get('leases', 'herald-system', 'herald-allocator', 'coordination.k8s.io') as { spec?: Record<string, unknown> } | undefined;
  t.equal(stored?.spec?.['acquireTime'], '2026-01-02T03:04:05.123456Z', 'microseconds written as recorded');
  t.equal(stored?.spec?.['renewTime'], '2026-01-02T03:04:06.654321Z');
  await t.rejects(store.create(record), LeaseConflictError, 'a second create conflicts');
  const renewed = await store.update({ ...record, renewTime: '2026-01-02T03:04:08.000000Z' }, created.resourceVersion);
  t.equal(renewed.record.renewTime, '2026-01-02T03:04:08.000000Z');
  t.not(renewed.resourceVersion, created.resourceVersion);
  await t.rejects(store.update(record, created.resourceVersion), LeaseConflictError, 'a stale resourceVersion conflicts');
  t.same((await store.get())?.record, { ...record, renewTime: '2026-01-02T03:04:08.000000Z' });
});
