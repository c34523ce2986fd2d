// `herald peers --all-nodes` / `herald services --all-nodes` (src/cli/cluster.ts) against the fake apiserver: the
// table with a NODE column, nodes without a status and stale ones named, --json, usage errors, a refused list.
// With real Heralds and BIRDs: test/e2e/racks-bird.test.ts.
import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from '../../../src/cli/main.ts';
import { HERALD_GROUP, HERALD_PLURALS, HERALD_VERSION } from '../../../src/k8s/herald-kinds.ts';
import { FakeApiServer } from '../../helpers/fake-apiserver.ts';
import { writeKubeconfig } from '../../e2e/harness.ts';

async function cli(args: string[]) {
  let out = '';
  let err = '';
  const code = await main(args, { out: { write: (x: string) => (out += x) }, err: { write: (x: string) => (err += x) }, env: {} });
  return { code, out, err };
}

const session = (peer: string, state: string) => ({ peer, source: 'BGPPeer', peerAddress: '192.0.2.1', peerPort: 179, peerASN: 65001, myASN: 64601, state, prefixesSent: 1, prefixesReceived: 0 });

t.test('peers and services across nodes', async (t) => {
  const api = new FakeApiServer();
  api.registerResource({ group: HERALD_GROUP, version: HERALD_VERSION, plural: HERALD_PLURALS.BGPNodeStatus, kind: 'BGPNodeStatus', namespaced: true });
  await api.start();
  t.teardown(() => api.stop());
  const dir = mkdtempSync(join(tmpdir(), 'herald-cli-cluster-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const kubeconfig = writeKubeconfig(join(dir, 'kubeconfig'), api.url);
  const k = ['--kubeconfig', kubeconfig];

  t.match((await cli(['peers', '--all-nodes', ...k])).out, /No BGPNodeStatus found/);
  const put = (name: string, status?: unknown) =>
    api.upsert('bgpnodestatuses', { apiVersion: 'herald.io/v1alpha1', kind: 'BGPNodeStatus', metadata: { name, namespace: 'herald-system' }, spec: { nodeName: name }, ...(status !== undefined ? { status } : {}) }, HERALD_GROUP);
  put('node-b', { sessions: [session('tor-b', 'Active')], vips: [{ service: 'default/web', address: '198.51.100.1', kind: 'loadBalancer', announced: false, reasons: ['NoLocalReadyEndpoint'] }], lastUpdate: new Date(Date.now() - 3600_000).toISOString() });
  put('node-a', { sessions: [session('tor-a', 'Established')], vips: [{ service: 'default/web', address: '198.51.100.1', kind: 'loadBalancer', announced: true, reasons: ['Advertised'] }], problems: ['md5: Secret herald-system/pw: not found'], lastUpdate: new Date().toISOString() });
  put('node-c');

  const peers = await cli(['peers', '--all-nodes', ...k]);
  t.equal(peers.code, 0, peers.err);
  const lines = peers.out.split('\n');
  t.match(lines[0], /^NODE\s+PEER\s+SOURCE\s+ADDRESS\s+PEER ASN\s+MY ASN\s+STATE/);
  t.match(lines[1], /^node-a\s+tor-a\s+BGPPeer\s+192\.0\.2\.1:179\s+65001\s+64601\s+Established/, 'sorted by node');
  t.match(lines[2], /^node-b\s+tor-b\s+.*Active/);
  t.match(peers.out, /node-a: not run: md5: Secret herald-system\/pw: not found/, 'a peer a node cannot run is named');
  t.match(peers.out, /node-b: status last written 1h00m0\ds ago/, 'a stale status is named');
  t.match(peers.out, /node-c: no status written yet/);
  const j = await cli(['peers', '--all-nodes', '--json', ...k]);
  t.same((JSON.parse(j.out) as Array<{ node: string; state: string }>).map((x) => [x.node, x.state]), [['node-a', 'Established'], ['node-b', 'Active']]);
  const svc = await cli(['services', 'default/web', '--all-nodes', ...k]);
  t.match(svc.out, /node-a\s+default\/web\s+198\.51\.100\.1\s+loadBalancer\s+yes\s+Advertised/);
  t.match(svc.out, /node-b\s+default\/web\s+198\.51\.100\.1\s+loadBalancer\s+no\s+NoLocalReadyEndpoint/);
  t.match((await cli(['services', 'shop/none', '--all-nodes', ...k])).out, /No node lists a VIP of shop\/none/);
  t.equal((await cli(['peers', '--all-nodes', '-n', 'elsewhere', ...k])).out.startsWith('No BGPNodeStatus found'), true, '--namespace is honoured');

  // Usage errors: exit 2 with the reason.
  for (const args of [['peers', 'tor-a', '--all-nodes', ...k], ['peers', ...k], ['peers', '--all-nodes', '--api', 'http://x', ...k], ['services', 'web', '--all-nodes', ...k]]) {
    const r = await cli(args);
    t.equal(r.code, 2, `${args.join(' ')}: usage error (${r.err.trim().split('\n')[0]})`);
  }
  // A refused list names the resource and the apiserver's answer.
  api.failResource('bgpnodestatuses', 403);
  const refused = await cli(['peers', '--all-nodes', ...k]);
  t.equal(refused.code, 1);
  t.match(refused.err, /cannot list bgpnodestatuses\.herald\.io in namespace herald-system: .*403/);
});
