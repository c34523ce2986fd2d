// The fake apiserver itself, exercised through the REAL @kubernetes/client-node typed API
// (it will be reused for leader election and IPAM), plus the Controller end to end over it.
import t from 'tap';
import { ApiException, CoordinationV1Api, CoreV1Api, KubeConfig, PatchStrategy, V1MicroTime, Watch, setHeaderOptions } from '@kubernetes/client-node';
import { FakeApiServer, mergePatch } from '../../helpers/fake-apiserver.ts';
import { waitFor } from '../../helpers/k8s-wait.ts';
import { DOCUMENTATION_PREFIXES, node, service, slice } from '../../helpers/k8s-objects.ts';
import { KubernetesSource } from '../../../src/sources/kubernetes.ts';
import { KubeClient } from '../../../src/k8s/client.ts';
import { Controller } from '../../../src/controller/controller.ts';
import type { CandidateSet } from '../../../src/controller/controller.ts';
import type { ServiceDecision } from '../../../src/controller/desired-routes.ts';
import { gateService } from '../../../src/controller/desired-routes.ts';
import type { DesiredRoute } from '../../../src/controller/route-merge.ts';
import { mergeRoutes } from '../../../src/controller/route-merge.ts';

/** What a candidate set announces with every health gate passing. */
function announced(set: CandidateSet): { routes: DesiredRoute[]; services: ServiceDecision[] } {
  const gated = [...set.services()].map((c) => gateService(c, () => ({ pass: true })));
  return { routes: mergeRoutes(gated.flatMap((g) => g.contributions)), services: gated.map((g) => g.decision) };
}

function kubeConfig(url: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromClusterAndUser({ name: 'fake', server: url, skipTLSVerify: true }, { name: 'u', token: 't' });
  return kc;
}

function reasonOf(e: unknown): [number | undefined, string | undefined] {
  if (!(e instanceof ApiException)) throw e;
  const body = typeof e.body === 'string' ? (JSON.parse(e.body) as { reason?: string }) : undefined;
  return [e.code, body?.reason];
}

t.test('merge-patch of Service status, 415 for other patch types, 409 on stale RV', async (tt) => {
  const api = new FakeApiServer();
  await api.start();
  tt.teardown(() => api.stop());
  api.upsert('services', service('web', { type: 'LoadBalancer' }));
  const core = kubeConfig(api.url).makeApiClient(CoreV1Api);
  const patched = await core.patchNamespacedServiceStatus(
    { name: 'web', namespace: 'default', body: { status: { loadBalancer: { ingress: [{ ip: '192.0.2.5', ipMode: 'VIP' }] } } } },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
  tt.equal(patched.status?.loadBalancer?.ingress?.[0]?.ip, '192.0.2.5');
  tt.equal(api.get('services', 'default', 'web')?.spec?.type, 'LoadBalancer', 'spec untouched by /status');
  // a /status patch cannot change spec
  await core.patchNamespacedServiceStatus({ name: 'web', namespace: 'default', body: { spec: { type: 'ClusterIP' } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
  tt.equal(api.get('services', 'default', 'web')?.spec?.type, 'LoadBalancer');
  // clearing with null
  await core.patchNamespacedServiceStatus({ name: 'web', namespace: 'default', body: { status: { loadBalancer: { ingress: null } } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
  tt.equal(api.get('services', 'default', 'web')?.status?.loadBalancer?.ingress, undefined);
  // default content type is json-patch: refused
  const e415 = await core.patchNamespacedServiceStatus({ name: 'web', namespace: 'default', body: { status: {} } }).catch((e: unknown) => e);
  tt.strictSame(reasonOf(e415), [415, 'UnsupportedMediaType']);
  // optimistic concurrency
  const e409 = await core
    .patchNamespacedServiceStatus({ name: 'web', namespace: 'default', body: { metadata: { resourceVersion: '1' }, status: {} } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch))
    .catch((e: unknown) => e);
  tt.strictSame(reasonOf(e409), [409, 'Conflict']);
  const e404 = await core.readNamespacedService({ name: 'nope', namespace: 'default' }).catch((e: unknown) => e);
  tt.strictSame(reasonOf(e404), [404, 'NotFound']);
  tt.ok(api.requests.some((r) => r.method === 'PATCH' && r.path === '/api/v1/namespaces/default/services/web/status'));
});

t.test('Lease create/read/replace with RV preconditions; Events create', async (tt) => {
  const api = new FakeApiServer();
  await api.start();
  tt.teardown(() => api.stop());
  const kc = kubeConfig(api.url);
  const coord = kc.makeApiClient(CoordinationV1Api);
  const now = new V1MicroTime();
  const created = await coord.createNamespacedLease({ namespace: 'herald', body: { metadata: { name: 'herald-allocator' }, spec: { holderIdentity: 'n1', leaseDurationSeconds: 15, renewTime: now } } });
  tt.equal(created.spec?.holderIdentity, 'n1');
  const dup = await coord.createNamespacedLease({ namespace: 'herald', body: { metadata: { name: 'herald-allocator' } } }).catch((e: unknown) => e);
  tt.strictSame(reasonOf(dup), [409, 'AlreadyExists']);
  const read = await coord.readNamespacedLease({ name: 'herald-allocator', namespace: 'herald' });
  read.spec!.holderIdentity = 'n2';
  const replaced = await coord.replaceNamespacedLease({ name: 'herald-allocator', namespace: 'herald', body: read });
  tt.equal(replaced.spec?.holderIdentity, 'n2');
  tt.not(replaced.metadata?.resourceVersion, read.metadata?.resourceVersion);
  const stale = await coord.replaceNamespacedLease({ name: 'herald-allocator', namespace: 'herald', body: read }).catch((e: unknown) => e);
  tt.strictSame(reasonOf(stale), [409, 'Conflict'], 'stale RV on PUT');
  const core = kc.makeApiClient(CoreV1Api);
  await core.createNamespacedEvent({ namespace: 'default', body: { metadata: { name: 'web.1' }, involvedObject: { kind: 'Service', namespace: 'default', name: 'web' }, reason: 'IPAllocated', message: 'x', type: 'Normal' } });
  tt.equal(api.list('events').length, 1);
});

t.test('watch with a label selector: objects entering/leaving the selection arrive as ADDED/DELETED', async (tt) => {
  const api = new FakeApiServer();
  await api.start();
  tt.teardown(() => api.stop());
  const events: string[] = [];
  const ctl = await new Watch(kubeConfig(api.url)).watch(
    '/api/v1/services',
    { labelSelector: 'tier=web', resourceVersion: api.resourceVersion },
    (type, obj: { metadata?: { name?: string } }) => events.push(`${type} ${obj.metadata?.name}`),
    () => {},
  );
  tt.teardown(() => ctl.abort());
  api.upsert('services', service('a', { labels: { tier: 'db' } }));
  api.upsert('services', service('a', { labels: { tier: 'web' } }));
  api.upsert('services', service('a', { labels: { tier: 'web', x: '1' } }));
  api.upsert('services', service('a', { labels: { tier: 'db' } }));
  api.upsert('services', service('b', { labels: { tier: 'web' } }));
  api.remove('services', 'default', 'b');
  await waitFor(() => events.length >= 5, 'events');
  tt.strictSame(events, ['ADDED a', 'MODIFIED a', 'DELETED a', 'ADDED b', 'DELETED b']);
});

t.test('mergePatch follows RFC 7386', async (tt) => {
  tt.strictSame(mergePatch({ a: 1, b: { c: 2, d: 3 }, l: [1] }, { b: { c: null, e: 4 }, l: [2], f: null }), { a: 1, b: { d: 3, e: 4 }, l: [2] });
  tt.strictSame(mergePatch({ a: 1 }, [1]), [1]);
});

t.test('Controller over the fake apiserver: nothing before every informer synced, then routes follow the API', async (tt) => {
  const api = new FakeApiServer();
  await api.start();
  api.upsert('nodes', node('n1'));
  api.upsert('services', service('web', { lbIPs: ['192.0.2.1'], etp: 'Local' }));
  api.upsert('endpointslices', slice('web-1', 'web', [['10.0.0.1', 'n1']]), 'discovery.k8s.io');
  api.failResource('endpointslices', 403); // RBAC not yet granted
  const src = new KubernetesSource({ kc: new KubeClient({ server: api.url }), initialBackoffMs: 20, maxBackoffMs: 100 });
  src.on('error', () => {});
  const results: ReturnType<typeof announced>[] = [];
  const c = new Controller({ source: src, context: { nodeName: 'n1', allowedPrefixes: DOCUMENTATION_PREFIXES }, sink: { onCandidates: (set) => void results.push(announced(set)) }, resyncIntervalMs: 0 });
  tt.teardown(async () => {
    await c.stop();
    await api.stop();
  });
  await c.start();
  await waitFor(() => src.status().resources.find((r) => r.kind === 'EndpointSlice')!.errors >= 2, 'endpointslices list retried');
  tt.equal(src.status().resources.find((r) => r.kind === 'Service')?.synced, true, 'services synced');
  tt.equal(src.synced(), false);
  tt.equal(results.length, 0, 'nothing announced or withdrawn before every informer synced');
  api.failResource('endpointslices', undefined);
  await waitFor(() => results.length > 0, 'first result');
  tt.strictSame(results.at(-1)?.routes.map((r) => r.prefix), ['192.0.2.1/32']);
  api.upsert('endpointslices', slice('web-1', 'web', [['10.0.0.1', 'n2']]), 'discovery.k8s.io');
  await waitFor(() => results.at(-1)?.routes.length === 0, 'withdrawn after the endpoint moved');
  tt.equal(results.at(-1)?.services[0]?.vips[0]?.reasons[0]?.code, 'NoLocalReadyEndpoint');
  // outage: last known state stays, no new result
  const n = results.length;
  await api.goDown('refuse');
  await new Promise((r) => setTimeout(r, 200));
  tt.equal(results.length, n, 'an outage produces no result');
  api.upsert('endpointslices', slice('web-1', 'web', [['10.0.0.1', 'n1']]), 'discovery.k8s.io');
  await api.comeBack();
  await waitFor(() => results.at(-1)?.routes.length === 1, 'reconciled after the apiserver came back');
});
