// What a node's Herald reads (src/sources/kubernetes.ts, issue 31 item 4): its own Node by name and never every Node;
// the published node set only while an advertisement sets maxNodesPerVip (the file's or a BGPAdvertisement's); and
// EndpointSlices as kube-proxy selects them (no headless or service-proxy-name slices), against the fake apiserver.
import t from 'tap';
import type { Test } from 'tap';
import { KubeClient } from '../../../src/k8s/client.ts';
import { HERALD_GROUP, HERALD_PLURALS, HERALD_VERSION } from '../../../src/k8s/herald-kinds.ts';
import type { HeraldKind } from '../../../src/k8s/herald-kinds.ts';
import { ENDPOINTSLICE_SELECTOR, KubernetesSource } from '../../../src/sources/kubernetes.ts';
import type { KubernetesSourceOptions } from '../../../src/sources/kubernetes.ts';
import { NODE_SET_KEY, NODE_SET_LABEL, renderNodeSet } from '../../../src/k8s/node-set.ts';
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
  tt.equal(src.readsNodeSet(), false);
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

const setWatches = (api: FakeApiServer) => api.requests.filter((r) => r.path === `/api/v1/namespaces/${NS}/configmaps`).map((r) => r.query.labelSelector ?? '');
/** The shards the status leader would write for these Nodes (src/k8s/node-set.ts). */
const publish = (api: FakeApiServer, entries: { name: string; eligible: boolean; labels?: Record<string, string> }[], keys: string[] = []) => {
  for (const [name, data] of renderNodeSet(entries.map((e) => ({ labels: {}, ...e })), keys)) {
    api.upsert('configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: NS, labels: { [NODE_SET_LABEL]: '' } }, data });
  }
};

t.test('the node set while the file bounds fan-out: part of the first sync, never every Node', async (tt) => {
  const { api, src } = await setup(tt, { followNodeSet: true }, (api) => publish(api, [{ name: 'n1', eligible: true }, { name: 'n2', eligible: true, labels: { rack: 'r2' } }, { name: 'n3', eligible: false }], ['rack']));
  await src.start();
  await waitFor(() => src.synced(), 'synced');
  tt.strictSame(nodeNames(src), ['n1'], 'only this Node is read');
  tt.strictSame(nodeWatches(api), ['metadata.name=n1'], 'one read of Nodes, by name');
  tt.ok(setWatches(api).length > 0 && setWatches(api).every((s) => s === NODE_SET_LABEL), `the node set is read by label ${NODE_SET_LABEL}`);
  tt.equal(src.readsNodeSet(), true);
  const set = src.snapshot().nodeSet();
  tt.strictSame([...(set?.eligible.keys() ?? [])].sort(), ['n1', 'n2'], 'eligible Nodes at the first sync');
  tt.strictSame(set?.eligible.get('n2'), { rack: 'r2' }, 'with the carried labels');
  tt.strictSame([...(set?.listed ?? [])].sort(), ['n1', 'n2', 'n3'], 'every Node listed');
  const changes: string[][] = [];
  src.on('change', (keys: string[]) => changes.push(keys));
  // A Node's heartbeat reaches nobody but its own Herald: other Nodes are not watched.
  api.upsert('nodes', node('n2', { labels: { rack: 'r9' } }));
  publish(api, [{ name: 'n3', eligible: true }]);
  await waitFor(() => src.snapshot().nodeSet()?.eligible.has('n3') === true, 'n3 eligible');
  tt.ok(changes.flat().includes(NODE_SET_KEY), 'a shard change is a node-set change');
  tt.notOk(changes.flat().includes('node:n2'), "another Node's update is never seen");
  // Off again: the node set is no longer read.
  src.followNodeSet(false);
  tt.equal(src.snapshot().nodeSet(), undefined, 'no node set');
  tt.equal(src.readsNodeSet(), false);
});

t.test('a shard that cannot be read is named, and its Nodes are not listed', async (tt) => {
  const { src } = await setup(tt, { followNodeSet: true }, (api) => {
    publish(api, [{ name: 'n2', eligible: true }]);
    api.upsert('configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'herald-node-set-zz', namespace: NS, labels: { [NODE_SET_LABEL]: '' } }, data: { eligible: '{', ineligible: '[]', labelKeys: '[]' } });
  });
  await src.start();
  await waitFor(() => src.synced(), 'synced');
  const set = src.snapshot().nodeSet();
  tt.equal(set?.problems.length, 1);
  tt.match(set?.problems[0], /^herald-node-set-zz: data\.eligible is not JSON/, 'the object and the field named');
  tt.ok(set?.listed.has('n2'), 'the readable shard still counts');
});

t.test('a BGPAdvertisement with maxNodesPerVip: the node set, in the first sync when it is there at start', async (tt) => {
  const { api, src } = await setup(tt, {}, (api) => {
    api.upsert(HERALD_PLURALS.BGPAdvertisement, advertisement('spread', { maxNodesPerVip: 2 }), HERALD_GROUP);
    publish(api, [{ name: 'n1', eligible: true }, { name: 'n2', eligible: true }, { name: 'n3', eligible: true }]);
  });
  let syncedWith: string[] = [];
  src.on('synced', () => (syncedWith = [...(src.snapshot().nodeSet()?.eligible.keys() ?? [])].sort()));
  await src.start();
  await waitFor(() => src.synced(), 'synced');
  tt.strictSame(syncedWith, ['n1', 'n2', 'n3'], 'synced with the node set: a restart never announces from all nodes first');
  // The object drops maxNodesPerVip: no node set.
  api.upsert(HERALD_PLURALS.BGPAdvertisement, advertisement('spread', {}), HERALD_GROUP);
  await waitFor(() => src.snapshot().nodeSet() === undefined, 'no node set');
  // Set later: the shards join, the source stays synced.
  api.upsert(HERALD_PLURALS.BGPAdvertisement, advertisement('spread', { maxNodesPerVip: 1 }), HERALD_GROUP);
  tt.equal(src.synced(), true);
  await waitFor(() => src.snapshot().nodeSet()?.eligible.size === 3, 'the node set again');
  tt.equal(src.synced(), true, 'still synced');
  tt.strictSame(nodeNames(src), ['n1'], 'and still only this Node');
});
