// What a node's Herald reads (src/sources/kubernetes.ts, issue 31 item 4): its own Node by name, every Node only while
// an advertisement sets maxNodesPerVip (the file's or a BGPAdvertisement's), and EndpointSlices as kube-proxy selects
// them (no headless or service-proxy-name slices), against the fake apiserver.
import t from 'tap';
import type { Test } from 'tap';
import { KubeClient } from '../../../src/k8s/client.ts';
import { HERALD_GROUP, HERALD_PLURALS, HERALD_VERSION } from '../../../src/k8s/herald-kinds.ts';
import type { HeraldKind } from '../../../src/k8s/herald-kinds.ts';
import { ENDPOINTSLICE_SELECTOR, KubernetesSource } from '../../../src/sources/kubernetes.ts';
import type { KubernetesSourceOptions } from '../../../src/sources/kubernetes.ts';
import { FakeApiServer } from '../../helpers/fake-apiserver.ts';
import { heraldObject, node, service, slice } from '../../helpers/k8s-objects.ts';
import { waitFor } from '../../helpers/k8s-wait.ts';

const NS = 'herald-system';
const advertisement = (name: string, spec: Record<string, unknown>) => heraldObject('BGPAdvertisement', name, { addressKinds: ['loadBalancer'], ...spec }, { ns: NS });

async function setup(tt: Test, o: Partial<KubernetesSourceOptions> = {}, before?: (api: FakeApiServer) => void) {
  const api = new FakeApiServer();
  for (const kind of Object.keys(HERALD_PLURALS) as HeraldKind[]) api.registerResource({ group: HERALD_GROUP, version: HERALD_VERSION, plural: HERALD_PLURALS[kind], kind, namespaced: true });
  await api.start();
  for (const n of ['n1', 'n2', 'n3']) api.upsert('nodes', node(n));
  api.upsert('services', service('web', { lbIPs: ['192.0.2.1'] }));
  api.upsert('endpointslices', slice('web-a', 'web', [['10.0.0.1', 'n1']]), 'discovery.k8s.io');
  const headless = slice('db-a', 'db', [['10.0.0.2', 'n1']]);
  headless.metadata!.labels!['service.kubernetes.io/headless'] = '';
  api.upsert('endpointslices', headless, 'discovery.k8s.io');
  const other = slice('mesh-a', 'mesh', [['10.0.0.3', 'n1']]);
  other.metadata!.labels!['service.kubernetes.io/service-proxy-name'] = 'other-proxy';
  api.upsert('endpointslices', other, 'discovery.k8s.io');
  before?.(api);
  const src = new KubernetesSource({ kc: new KubeClient({ server: api.url, token: 't' }), heraldNamespace: NS, serviceCIDRs: false, initialBackoffMs: 20, maxBackoffMs: 200, nodeName: 'n1', ...o });
  src.on('error', () => {});
  tt.teardown(async () => {
    await src.stop();
    await api.stop();
  });
  return { api, src };
}

const nodeNames = (src: KubernetesSource): string[] => [...src.snapshot().nodes()].map((n) => n.metadata?.name ?? '').sort();
const nodeWatches = (api: FakeApiServer) => api.requests.filter((r) => r.path === '/api/v1/nodes').map((r) => r.query.fieldSelector ?? 'all');

t.test('its own Node by name, and EndpointSlices as kube-proxy selects them', async (tt) => {
  const { api, src } = await setup(tt);
  await src.start();
  await waitFor(() => src.synced(), 'synced');
  tt.strictSame(nodeNames(src), ['n1'], 'only this node');
  tt.strictSame(nodeWatches(api), ['metadata.name=n1'], 'one read of Nodes, by name');
  tt.equal(src.readsAllNodes(), false);
  const slices = api.requests.filter((r) => r.path === '/apis/discovery.k8s.io/v1/endpointslices');
  tt.ok(slices.length > 0 && slices.every((r) => r.query.labelSelector === ENDPOINTSLICE_SELECTOR), `every EndpointSlice request selects ${ENDPOINTSLICE_SELECTOR}`);
  tt.equal(src.snapshot().endpointSlicesFor('default/web').length, 1, "a Service's slice is read");
  tt.equal(src.snapshot().endpointSlicesFor('default/db').length, 0, "a headless Service's slice is not");
  tt.equal(src.snapshot().endpointSlicesFor('default/mesh').length, 0, "another proxy's slice is not");
  // A slice that starts carrying the label leaves the cache (the watch says DELETED), as kube-proxy's would.
  const moved = slice('web-a', 'web', [['10.0.0.1', 'n1']]);
  moved.metadata!.labels!['service.kubernetes.io/service-proxy-name'] = 'other-proxy';
  api.upsert('endpointslices', moved, 'discovery.k8s.io');
  await waitFor(() => src.snapshot().endpointSlicesFor('default/web').length === 0, 'relabelled slice gone');
});

t.test('every Node while the file bounds fan-out: part of the first sync, never racing the own Node', async (tt) => {
  const { api, src } = await setup(tt, { allNodes: true });
  await src.start();
  await waitFor(() => src.synced(), 'synced');
  tt.strictSame(nodeNames(src), ['n1', 'n2', 'n3'], 'every Node at the first sync');
  tt.strictSame(nodeWatches(api).sort(), ['all', 'metadata.name=n1']);
  const changes: string[][] = [];
  src.on('change', (keys: string[]) => changes.push(keys));
  api.upsert('nodes', node('n1', { labels: { rack: 'r1' } }));
  api.upsert('nodes', node('n2', { labels: { rack: 'r2' } }));
  await waitFor(() => src.snapshot().node('n2')?.metadata?.labels?.['rack'] === 'r2', 'n2 updated');
  await waitFor(() => src.snapshot().node('n1')?.metadata?.labels?.['rack'] === 'r1', 'n1 updated');
  tt.equal(changes.flat().filter((k) => k === 'node:n1').length, 1, 'its own Node changed once (from the informer by name only)');
  // Off again: the other Nodes leave the store, and their watch ends.
  src.setAllNodes(false);
  tt.strictSame(nodeNames(src), ['n1'], 'only this node again');
  await waitFor(() => api.watchCount('nodes') === 1, 'the all-Nodes watch closed');
  tt.ok(changes.flat().includes('node:n2'), 'the other Nodes leave with change keys');
});

t.test('a BGPAdvertisement with maxNodesPerVip: every Node, in the first sync when it is there at start', async (tt) => {
  const { api, src } = await setup(tt, {}, (api) => api.upsert(HERALD_PLURALS.BGPAdvertisement, advertisement('spread', { maxNodesPerVip: 2 }), HERALD_GROUP));
  let syncedWith: string[] = [];
  src.on('synced', () => (syncedWith = nodeNames(src)));
  await src.start();
  await waitFor(() => src.synced(), 'synced');
  tt.strictSame(syncedWith, ['n1', 'n2', 'n3'], 'synced with every Node: a restart never announces from all nodes first');
  // The object drops maxNodesPerVip: back to this node only.
  api.upsert(HERALD_PLURALS.BGPAdvertisement, advertisement('spread', {}), HERALD_GROUP);
  await waitFor(() => nodeNames(src).length === 1, 'only this node');
  // Set later: the Nodes join, the source stays synced.
  api.upsert(HERALD_PLURALS.BGPAdvertisement, advertisement('spread', { maxNodesPerVip: 1 }), HERALD_GROUP);
  tt.equal(src.synced(), true);
  await waitFor(() => nodeNames(src).length === 3, 'every Node again');
  tt.equal(src.synced(), true, 'still synced');
});
