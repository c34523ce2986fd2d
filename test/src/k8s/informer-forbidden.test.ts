// KubernetesSource against the fake apiserver refusing calls with 403: the
// resource's status names the refused verb and resource until the call works again — also when nothing changes
// afterwards (a real kube-apiserver answers 403 for a moment right after it starts, seen in
// test/control-plane/outages.test.ts: the watches came back, quiet, and the 403 must not stay in the status).
import t from 'tap';
import type { Test } from 'tap';
import { KubeClient } from '../../../src/k8s/client.ts';
import { FakeApiServer } from '../../helpers/fake-apiserver.ts';
import { waitFor } from '../../helpers/k8s-wait.ts';
import { node, service, slice } from '../../helpers/k8s-objects.ts';
import { KubernetesSource } from '../../../src/sources/kubernetes.ts';

async function setup(tt: Test) {
  const api = new FakeApiServer();
  await api.start();
  api.upsert('services', service('web', { lbIPs: ['192.0.2.1'] }));
  api.upsert('endpointslices', slice('web-abc', 'web', [['10.0.0.1', 'n1']]), 'discovery.k8s.io');
  api.upsert('nodes', node('n1'));
  const kc = new KubeClient({ server: api.url, token: 't' });
  const src = new KubernetesSource({ kc, serviceCIDRs: false, initialBackoffMs: 20, maxBackoffMs: 200, watchTimeoutMs: 5000 });
  src.on('error', () => {});
  tt.teardown(async () => {
    await src.stop();
    await api.stop();
  });
  return { api, src };
}

const forbiddenOf = (src: KubernetesSource, kind: string) => src.status().resources.find((r) => r.kind === kind)?.forbidden;

t.test('a refused initial read names verb, resource and the apiserver message; cleared by the next read', async (tt) => {
  const { api, src } = await setup(tt);
  api.failResource('endpointslices', 403);
  await src.start();
  await waitFor(() => forbiddenOf(src, 'EndpointSlice') !== undefined, 'EndpointSlice forbidden');
  tt.equal(
    forbiddenOf(src, 'EndpointSlice'),
    'watch endpointslices: HTTP 403: endpointslices.discovery.k8s.io is forbidden: User "system:anonymous" cannot watch resource "endpointslices" in API group "discovery.k8s.io" at the cluster scope',
    'the initial read is a streaming list: a watch',
  );
  tt.equal(src.synced(), false);
  api.failResource('endpointslices', undefined);
  await waitFor(() => src.synced(), 'synced once allowed');
  tt.equal(forbiddenOf(src, 'EndpointSlice'), undefined, 'cleared');
});

t.test('403s while an apiserver comes back: shown, then cleared by the quiet watches that follow; nothing deleted', async (tt) => {
  const { api, src } = await setup(tt);
  await src.start();
  await waitFor(() => src.synced() && api.watchCount() === 3, 'synced and watching');
  await api.goDown('refuse');
  await new Promise((r) => setTimeout(r, 300));
  await api.comeBack({ forbiddenForMs: 800 });
  await waitFor(() => forbiddenOf(src, 'Service') !== undefined, 'the 403 after the restart is shown', 5000);
  tt.equal(
    forbiddenOf(src, 'Service'),
    'watch services: HTTP 403: services is forbidden: User "system:anonymous" cannot watch resource "services" in API group "" at the cluster scope',
    "a refused watch, with the apiserver's Status message",
  );
  // No change happens: only the reopened watch can clear it (no list: the resourceVersion is still valid).
  await waitFor(() => src.status().resources.every((r) => r.forbidden === undefined), 'cleared once the watches open again', 10_000);
  tt.equal(api.watchCount(), 3, 'watching again');
  const snap = src.snapshot();
  tt.equal([...snap.services()].length, 1, 'the Service kept');
  tt.equal(snap.endpointSlicesFor('default/web').length, 1, 'the EndpointSlice kept');
  tt.ok(snap.node('n1'), 'the Node kept');
});

t.test("the fake's 403 reads like kube-apiserver's (seen in test/control-plane/rbac.test.ts)", async (tt) => {
  const api = new FakeApiServer();
  await api.start();
  tt.teardown(() => api.stop());
  api.failResource('nodes', 403);
  api.failResource('leases', 403);
  const get = async (path: string) => (await fetch(`${api.url}${path}`)).json() as Promise<{ code: number; reason: string; message: string; details: unknown }>;
  tt.match(await get('/api/v1/nodes?fieldSelector=metadata.name%3Dn1'), {
    code: 403,
    reason: 'Forbidden',
    message: 'nodes "n1" is forbidden: User "system:anonymous" cannot list resource "nodes" in API group "" at the cluster scope',
    details: { name: 'n1', group: '', kind: 'nodes' },
  });
  tt.match(await get('/apis/coordination.k8s.io/v1/namespaces/herald-system/leases/herald-allocator'), {
    message: 'leases.coordination.k8s.io "herald-allocator" is forbidden: User "system:anonymous" cannot get resource "leases" in API group "coordination.k8s.io" in the namespace "herald-system"',
  });
});
