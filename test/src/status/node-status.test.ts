// This node's BGPNodeStatus (src/status/node-status.ts): a summary under 4 KiB whatever the cluster's size, written
// only when it changes and at a bounded rate (however often the daemon changes), never as a heartbeat, failed writes
// retried; the apiserver sink creates the object when it does not exist, patches only the status subresource, and
// names every field so that nothing stale (an earlier Herald's per-VIP list) stays.
import t from 'tap';
import type { Test } from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PeerView, ServiceView } from '../../../src/admin/view.ts';
import type { NodeStatus } from '../../../src/crd/status.ts';
import { MAX_NODE_STATUS_BYTES, nodeStatusSchema } from '../../../src/crd/status.ts';
import { loadKubeConfig } from '../../../src/k8s/client.ts';
import { HERALD_GROUP, HERALD_PLURALS, HERALD_VERSION } from '../../../src/k8s/herald-kinds.ts';
import { NodeStatusWriter, apiNodeStatusSink, nodeStatusOf, statusBytes } from '../../../src/status/node-status.ts';
import { countsInNodeStatus } from '../../../src/controller/reasons.ts';
import { FakeApiServer } from '../../helpers/fake-apiserver.ts';
import { writeKubeconfig } from '../../e2e/harness.ts';

const peer = (name: string, state: string, extra: Partial<PeerView> = {}): PeerView => ({
  name,
  address: '192.0.2.1',
  port: 179,
  localAs: 64601,
  peerAs: 65001,
  state,
  since: '2026-12-01T10:00:00.000Z',
  messages: { sent: {}, received: {} },
  prefixes: { sent: 2, received: 0 },
  flaps: 0,
  ...extra,
});
const services: ServiceView[] = [
  {
    service: 'shop/cart',
    reasons: [],
    vips: [{ address: '198.51.100.2', kind: 'loadBalancer', announced: false, reasons: [{ code: 'NoLocalReadyEndpoint', message: 'no local endpoint' }] }],
  },
  {
    service: 'default/web',
    reasons: [],
    vips: [{ address: '198.51.100.1', kind: 'loadBalancer', announced: true, reasons: [{ code: 'Advertised', message: 'advertisement a announces it', advertisement: 'a' }] }],
  },
];

const input = (over: Partial<Parameters<typeof nodeStatusOf>[0]> = {}): Parameters<typeof nodeStatusOf>[0] => ({
  peers: [peer('tor-b', 'Active', { lastError: { kind: 'notificationReceived', description: 'Cease / Administrative Shutdown', message: 'maintenance' } }), peer('tor-a', 'Established')],
  services,
  origins: new Map([['tor-a', 'BGPPeer']]),
  myASN: 64601,
  routerID: '10.0.0.1',
  override: 'node-a',
  problems: ['md5: Secret herald-system/pw: not found'],
  heraldVersion: '0.1.0',
  handles: countsInNodeStatus,
  ...over,
});

t.test('nodeStatusOf: sessions by name with their source; VIPs counted announced and not, by reason code and per advertisement', async (t) => {
  const s = nodeStatusOf(input());
  t.same(s.sessions?.map((x) => [x.peer, x.source, x.state, x.lastError]), [['tor-a', 'BGPPeer', 'Established', undefined], ['tor-b', 'file', 'Active', 'Cease / Administrative Shutdown: maintenance']]);
  t.match(s, { sessionsConfigured: 2, sessionsEstablished: 1, vipsAnnounced: 1, vipsNotAnnounced: 1, override: 'node-a', problems: ['md5: Secret herald-system/pw: not found'] });
  t.same(s.notAnnounced, [{ reason: 'NoLocalReadyEndpoint', vips: 1 }]);
  t.same(s.advertisements, [{ name: 'a', vipsAnnounced: 1 }]);
  t.notOk('vips' in s, 'no per-VIP list: it stays on the node');
  t.equal(s.lastChange, undefined, 'the writer stamps lastChange');
});

t.test('nodeStatusOf: a VIP no advertisement selects is not counted; one refused as tenant input is, under its reason', async (t) => {
  const refused: ServiceView[] = [
    ...services,
    { service: 'shop/ext', reasons: [], vips: [{ address: '8.8.8.8', kind: 'externalIP', announced: false, reasons: [{ code: 'PrefixNotAllowed', message: '8.8.8.8 is outside every pool and allowedPrefixes' }] }] },
    { service: 'shop/cip', reasons: [], vips: [{ address: '10.96.0.9', kind: 'clusterIP', announced: false, reasons: [{ code: 'NoAdvertisement', message: '' }] }] },
  ];
  const s = nodeStatusOf(input({ services: refused }));
  t.equal(s.vipsNotAnnounced, 2, 'the refused externalIP and the VIP without a local endpoint; not the ClusterIP nothing announces');
  t.same(s.notAnnounced, [{ reason: 'NoLocalReadyEndpoint', vips: 1 }, { reason: 'PrefixNotAllowed', vips: 1 }]);
});

t.test('nodeStatusOf: under 4 KiB whatever the cluster: 10,000 Services, 40 peers with long names and errors, 30 advertisements', async (t) => {
  const many: ServiceView[] = Array.from({ length: 10_000 }, (_, i) => ({
    service: `tenant-${i % 97}/service-with-a-rather-long-name-${i}`,
    reasons: [],
    vips: [
      { address: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`, kind: 'loadBalancer', announced: i % 3 === 0, reasons: i % 3 === 0 ? [{ code: 'Advertised', message: '', advertisement: `advertisement-number-${i % 30}-${'x'.repeat(200)}` }] : [{ code: i % 2 === 0 ? 'NoLocalReadyEndpoint' : 'HealthCheckFailing', message: '' }, { code: 'NodeNotReady', message: '' }] },
      { address: `fd00::${i.toString(16)}`, kind: 'clusterIP', announced: false, reasons: [{ code: 'NoAdvertisement', message: '' }] },
    ],
  }));
  const peers = Array.from({ length: 40 }, (_, k) => peer(`${'p'.repeat(200)}-${k}`, k % 2 ? 'Active' : 'Established', { lastError: { kind: 'notificationReceived', description: 'Cease', message: 'm'.repeat(2000) } }));
  const problems = Array.from({ length: 20 }, (_, k) => `peer-${k}: ${'why '.repeat(200)}`);
  const s = nodeStatusOf(input({ peers, services: many, problems }));
  const bytes = statusBytes({ ...s, lastChange: new Date().toISOString() });
  t.ok(bytes <= MAX_NODE_STATUS_BYTES, `${bytes} bytes`);
  t.equal(s.vipsAnnounced, 3334);
  t.equal(s.vipsNotAnnounced, 6666, 'ClusterIPs no advertisement selects are not counted');
  t.equal(s.sessionsConfigured, 40, 'every session counted');
  t.ok((s.sessionsOmitted ?? 0) >= 32, 'the sessions not listed are counted');
  t.same(s.notAnnounced?.map((r) => r.reason), ['NodeNotReady', 'HealthCheckFailing', 'NoLocalReadyEndpoint'].slice(0, s.notAnnounced?.length), 'reason codes, most first');
  t.ok(nodeStatusSchema.safeParse(s).success, 'valid against the CRD schema');
});

t.test('NodeStatusWriter: written only when it changed, at most once per interval plus jitter; never a heartbeat; failures retried', async (t) => {
  const written: NodeStatus[] = [];
  let current: NodeStatus = { myASN: 1 };
  const w = new NodeStatusWriter({
    build: () => current,
    sink: async (s) => {
      written.push(s);
    },
    minIntervalMs: 200,
    jitterMs: 100,
    random: () => 0.5,
  });
  t.teardown(() => w.stop());
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  for (let i = 0; i < 50; i++) w.changed();
  await sleep(120);
  t.equal(written.length, 1, 'fifty changes, one write (after the jitter)');
  t.match(written[0], { myASN: 1, lastChange: /^\d{4}-\d\d-\d\dT/ });
  current = { myASN: 2 };
  w.changed();
  await sleep(60);
  t.equal(written.length, 1, 'the next write waits for the interval');
  await sleep(400);
  t.equal(written.length, 2, 'then it is written');
  t.equal(written[1]?.myASN, 2);
  for (let i = 0; i < 5; i++) {
    w.changed();
    await sleep(300);
  }
  t.equal(written.length, 2, 'an unchanged status is never written again, however often asked');
  const errors: string[] = [];
  let fail = true;
  const w2 = new NodeStatusWriter({ build: () => ({ myASN: 3 }), sink: async (s) => (fail ? Promise.reject(new Error('down')) : void written.push(s)), minIntervalMs: 100, jitterMs: 0, onError: (e) => errors.push((e as Error).message) });
  t.teardown(() => w2.stop());
  w2.changed();
  await sleep(50);
  fail = false;
  await sleep(250);
  t.ok(errors.length >= 1, 'the failure is reported');
  t.equal(written.at(-1)?.myASN, 3, 'and the write retried');
});

/** A fake apiserver serving BGPNodeStatus, and a client of it; both end with `t`. */
async function statusApi(t: Test) {
  const api = new FakeApiServer();
  api.registerResource({ group: HERALD_GROUP, version: HERALD_VERSION, plural: HERALD_PLURALS.BGPNodeStatus, kind: 'BGPNodeStatus', namespaced: true });
  await api.start();
  t.teardown(() => api.stop());
  const dir = mkdtempSync(join(tmpdir(), 'herald-node-status-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const { kc } = loadKubeConfig(writeKubeconfig(join(dir, 'kubeconfig'), api.url), {});
  return { api, kc };
}

t.test('apiNodeStatusSink: creates the object named after the node, then patches its status; later writes only patch', async (t) => {
  const { api, kc } = await statusApi(t);
  const sink = apiNodeStatusSink(kc, 'herald-system', 'node-a', () => '6b1f2c3d-0000-4000-8000-00000000000a');
  await sink({ myASN: 64601, sessions: [] });
  const obj = api.get('bgpnodestatuses', 'herald-system', 'node-a', HERALD_GROUP);
  t.match(obj, { metadata: { name: 'node-a' }, spec: { nodeName: 'node-a' }, status: { myASN: 64601 } });
  t.same(obj?.metadata?.ownerReferences, [{ apiVersion: 'v1', kind: 'Node', name: 'node-a', uid: '6b1f2c3d-0000-4000-8000-00000000000a' }], 'owned by its Node: deleted with it');
  // An earlier Herald's per-VIP list and a field gone from this status go with the next write.
  api.upsert('bgpnodestatuses', { ...api.get('bgpnodestatuses', 'herald-system', 'node-a', HERALD_GROUP), status: { myASN: 64601, override: 'old', vips: [{ service: 'a/b', address: '192.0.2.1' }], lastUpdate: 'x' } }, HERALD_GROUP);
  await sink({ myASN: 64602 });
  t.same(api.get('bgpnodestatuses', 'herald-system', 'node-a', HERALD_GROUP)?.status, { myASN: 64602 }, 'only what this status says');
  t.equal(api.count((r) => r.method === 'POST'), 1, 'created once');
  t.equal(api.count((r) => r.method === 'PATCH' && r.path.endsWith('/node-a/status')), 3, 'the status subresource only (the first patch found nothing)');
});

t.test('apiNodeStatusSink: no object without its owner: while the Node is unknown nothing is created; an existing one is patched', async (t) => {
  const { api, kc } = await statusApi(t);
  let uid: string | undefined;
  const sink = apiNodeStatusSink(kc, 'herald-system', 'node-b', () => uid);
  await t.rejects(sink({ myASN: 64601 }), /BGPNodeStatus node-b is created only once Node node-b is known/);
  t.equal(api.get('bgpnodestatuses', 'herald-system', 'node-b', HERALD_GROUP), undefined, 'nothing created');
  t.equal(api.count((r) => r.method === 'POST'), 0);
  uid = 'uid-b';
  await sink({ myASN: 64601 });
  t.equal(api.get('bgpnodestatuses', 'herald-system', 'node-b', HERALD_GROUP)?.metadata?.ownerReferences?.[0]?.uid, 'uid-b', 'created once the Node is known');
  uid = undefined; // the Node deleted: the object, while the garbage collector has not deleted it yet, is patched
  await sink({ myASN: 64602 });
  t.equal(api.get('bgpnodestatuses', 'herald-system', 'node-b', HERALD_GROUP)?.status?.myASN, 64602);
});
