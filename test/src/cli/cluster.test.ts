// `herald peers --all-nodes` / `herald services --all-nodes` (src/cli/cluster.ts) against the fake apiserver: each
// node's Herald asked through the pod proxy (its metrics listener's read-only views, src/metrics/server.ts), the table
// with a NODE column, nodes whose pod is not Ready or does not answer named, --json, usage errors, a refused list, and
// the fan-out bounded. With real Heralds and BIRDs: test/e2e/racks-bird.test.ts.
import t from 'tap';
import type { Test } from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import type { PeerView, ServiceView } from '../../../src/admin/view.ts';
import { FAN_OUT } from '../../../src/cli/cluster.ts';
import { main } from '../../../src/cli/main.ts';
import { buildMetricsServer } from '../../../src/metrics/server.ts';
import { FakeApiServer } from '../../helpers/fake-apiserver.ts';
import { writeKubeconfig } from '../../e2e/harness.ts';

async function cli(args: string[]) {
  let out = '';
  let err = '';
  const code = await main(args, { out: { write: (x: string) => (out += x) }, err: { write: (x: string) => (err += x) }, env: {} });
  return { code, out, err };
}

const peer = (name: string, state: string): PeerView => ({ name, address: '192.0.2.1', port: 179, localAs: 64601, peerAs: 65001, state, messages: { sent: {}, received: {} }, prefixes: { sent: 1, received: 0 }, flaps: 0, ...(state === 'Established' ? { uptimeSec: 3600 } : { lastError: { kind: 'notificationReceived', description: 'Cease / Administrative Shutdown' } }) });
const web = (announced: boolean): ServiceView => ({ service: 'default/web', reasons: [], vips: [{ address: '198.51.100.1', kind: 'loadBalancer', announced, reasons: [{ code: announced ? 'Advertised' : 'NoLocalReadyEndpoint', message: '' }] }] });

/** One node's metrics listener with its views; counts the requests it answers at once. */
async function nodeListener(t: Test, peers: PeerView[], services: ServiceView[], gauge?: { now: number; max: number }) {
  const app = await buildMetricsServer({ text: async () => ({ contentType: 'text/plain', body: '' }), views: { peers: () => peers, services: () => services }, ratePerSec: 1000, burst: 1000 });
  if (gauge) {
    app.addHook('onRequest', async () => {
      gauge.max = Math.max(gauge.max, ++gauge.now);
      await new Promise((r) => setTimeout(r, 30));
    });
    app.addHook('onResponse', async () => void gauge.now--);
  }
  await app.listen({ host: '127.0.0.1', port: 0 });
  t.teardown(() => app.close());
  return (app.server.address() as AddressInfo).port;
}

const pod = (name: string, node: string, port: number | undefined, ready = true) => ({
  metadata: { name, namespace: 'herald-system', labels: { 'app.kubernetes.io/name': 'herald' }, ownerReferences: [{ kind: 'DaemonSet', name: 'herald' }] },
  spec: { nodeName: node, containers: [{ name: 'herald', ports: port !== undefined ? [{ name: 'metrics', containerPort: port }] : [] }] },
  status: { podIP: '127.0.0.1', conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] },
});

t.test('peers and services across nodes, through the pod proxy', async (t) => {
  const api = new FakeApiServer();
  await api.start();
  t.teardown(() => api.stop());
  const dir = mkdtempSync(join(tmpdir(), 'herald-cli-cluster-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const k = ['--kubeconfig', writeKubeconfig(join(dir, 'kubeconfig'), api.url)];

  t.match((await cli(['peers', '--all-nodes', ...k])).out, /No Herald pod found/);
  api.upsert('pods', pod('herald-b', 'node-b', await nodeListener(t, [peer('tor-b', 'Active')], [web(false)])));
  api.upsert('pods', pod('herald-a', 'node-a', await nodeListener(t, [peer('tor-a', 'Established')], [web(true)])));
  api.upsert('pods', pod('herald-c', 'node-c', 1, false));
  api.upsert('pods', pod('herald-d', 'node-d', undefined));
  api.upsert('pods', pod('herald-e', 'node-e', 1)); // nothing listens there
  api.upsert('pods', { ...pod('other', 'node-a', 9), metadata: { name: 'other', namespace: 'herald-system', labels: { 'app.kubernetes.io/name': 'herald' }, ownerReferences: [{ kind: 'ReplicaSet', name: 'x' }] } });

  const peers = await cli(['peers', '--all-nodes', ...k]);
  t.equal(peers.code, 0, peers.err);
  const lines = peers.out.split('\n');
  t.match(lines[0], /^NODE\s+PEER\s+ADDRESS\s+PEER ASN\s+MY ASN\s+STATE\s+UPTIME/);
  t.match(lines[1], /^node-a\s+tor-a\s+192\.0\.2\.1:179\s+65001\s+64601\s+Established\s+1h/, 'sorted by node');
  t.match(lines[2], /^node-b\s+tor-b\s+.*Active.*Cease \/ Administrative Shutdown/);
  t.match(peers.out, /node-c: pod herald-c is not Ready/);
  t.match(peers.out, /node-d: pod herald-d has no container port named metrics/);
  t.match(peers.out, /node-e: no answer from pod herald-e: HTTP 503/);
  t.notMatch(peers.out, /other/, 'a pod not of the DaemonSet is not asked');
  t.ok(api.requests.some((r) => /^\/api\/v1\/namespaces\/herald-system\/pods\/herald-a:\d+\/proxy\/api\/v1\/peers$/.test(r.path)), 'through the pod proxy');
  const j = await cli(['peers', '--all-nodes', '--json', ...k]);
  t.same((JSON.parse(j.out) as Array<{ node: string; state: string }>).map((x) => [x.node, x.state]), [['node-a', 'Established'], ['node-b', 'Active']]);
  const svc = await cli(['services', 'default/web', '--all-nodes', ...k]);
  t.match(svc.out, /node-a\s+default\/web\s+198\.51\.100\.1\s+loadBalancer\s+yes\s+Advertised/);
  t.match(svc.out, /node-b\s+default\/web\s+198\.51\.100\.1\s+loadBalancer\s+no\s+NoLocalReadyEndpoint/);
  t.ok(api.requests.some((r) => r.path.endsWith('/proxy/api/v1/services/default/web')), 'one Service is asked by name');
  t.match((await cli(['services', 'shop/none', '--all-nodes', ...k])).out, /No node lists a VIP of shop\/none/, 'a Service no node knows (404 on each)');
  t.equal((await cli(['peers', '--all-nodes', '-n', 'elsewhere', ...k])).out.startsWith('No Herald pod found'), true, '--namespace is honoured');

  // Usage errors: exit 2 with the reason.
  for (const args of [['peers', 'tor-a', '--all-nodes', ...k], ['peers', ...k], ['peers', '--all-nodes', '--api', 'http://x', ...k], ['services', 'web', '--all-nodes', ...k]]) {
    const r = await cli(args);
    t.equal(r.code, 2, `${args.join(' ')}: usage error (${r.err.trim().split('\n')[0]})`);
  }
  // A refused list names the resource and the apiserver's answer.
  api.failResource('pods', 403);
  const refused = await cli(['peers', '--all-nodes', ...k]);
  t.equal(refused.code, 1);
  t.match(refused.err, /cannot list Herald's pods in namespace herald-system: .*403/);
});

t.test(`the fan-out asks at most ${FAN_OUT} nodes at once`, async (t) => {
  const api = new FakeApiServer();
  await api.start();
  t.teardown(() => api.stop());
  const dir = mkdtempSync(join(tmpdir(), 'herald-cli-fanout-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const gauge = { now: 0, max: 0 };
  for (let n = 0; n < 3 * FAN_OUT; n++) api.upsert('pods', pod(`herald-${n}`, `node-${String(n).padStart(2, '0')}`, await nodeListener(t, [peer('tor', 'Established')], [], gauge)));
  const r = await cli(['peers', '--all-nodes', '--json', '--kubeconfig', writeKubeconfig(join(dir, 'kubeconfig'), api.url)]);
  t.equal((JSON.parse(r.out) as unknown[]).length, 3 * FAN_OUT, 'every node answered');
  t.ok(gauge.max <= FAN_OUT && gauge.max > 1, `at most ${FAN_OUT} at once (${gauge.max})`);
});
