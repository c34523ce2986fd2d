// NamespaceLabels (src/ipam/namespaces.ts) against the fake apiserver: no read of Namespaces until a pool needs
// them; once needed, not ready until the first full read (the allocator waits rather than refuse on unknown labels);
// label changes reach the allocator (onChange); stopped when no pool needs them.
import t from 'tap';
import { KubeClient } from '../../../src/k8s/client.ts';
import { NamespaceLabels } from '../../../src/ipam/namespaces.ts';
import { DEFAULT_RESOURCES, FakeApiServer } from '../../helpers/fake-apiserver.ts';
import { waitFor } from '../../helpers/k8s-wait.ts';

t.test('read only while needed; ready after the first read; follows label changes', async (t) => {
  const api = new FakeApiServer([...DEFAULT_RESOURCES, { group: '', version: 'v1', plural: 'namespaces', kind: 'Namespace', namespaced: false }]);
  await api.start();
  api.upsert('namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop', labels: { team: 'a' } } });
  let changes = 0;
  const ns = new NamespaceLabels({ kc: new KubeClient({ server: api.url, token: 't' }), onChange: () => changes++ });
  t.teardown(async () => {
    await ns.stop();
    await api.stop();
  });
  ns.need(false);
  t.equal(ns.ready(), true, 'not needed: ready');
  t.equal(ns.labels('shop'), undefined, 'not needed: unknown');
  t.equal(api.count((r) => r.path === '/api/v1/namespaces'), 0, 'no request while no pool needs them');
  ns.need(true);
  t.equal(ns.ready(), false, 'needed: not ready before the first read');
  await waitFor(() => ns.ready(), 'first read');
  t.same(ns.labels('shop'), { team: 'a' });
  t.equal(ns.labels('nope'), undefined);
  const before = changes;
  api.upsert('namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop', labels: { team: 'b' } } });
  await waitFor(() => ns.labels('shop')?.['team'] === 'b', 'the change');
  t.ok(changes > before, 'onChange called');
  ns.need(false);
  t.equal(ns.labels('shop'), undefined, 'no longer needed: forgotten');
  t.equal(ns.ready(), true);
});
