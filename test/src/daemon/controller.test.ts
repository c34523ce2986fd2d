// `herald controller` beside `herald run --separate-controller`, against the fake apiserver (docs/security.md
// "Components and rights"): the controller allocates (Service status, its Lease), serves its probes and metrics; the
// node takes no Lease, writes no Service status and no Event; the controller posts the Warnings of refused input. The real RBAC and admission around the two accounts:
// test/control-plane/rights.test.ts.
import t from 'tap';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { runController } from '../../../src/daemon/controller-components.ts';
import { runDaemon } from '../../../src/daemon/run.ts';
import { freePort } from '../../helpers/bird.ts';
import { FakeApiServer } from '../../helpers/fake-apiserver.ts';
import { node, service } from '../../helpers/k8s-objects.ts';
import { writeKubeconfig } from '../../e2e/harness.ts';

const dir = mkdtempSync(join(tmpdir(), 'herald-controller-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

async function until<T>(what: string, check: () => Promise<T | undefined> | T | undefined, timeoutMs = 120_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const v = await check();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

t.test('the controller allocates and serves its probes; the node beside it takes no Lease and writes no Service status or Event', async (t) => {
  const api = new FakeApiServer();
  await api.start();
  t.teardown(() => api.stop());
  api.upsert('nodes', node('node-a'));
  api.upsert('services', service('web', { etp: 'Cluster' }));
  const adminPort = await freePort('127.0.0.1');
  const probePort = await freePort('127.0.0.1');
  const configPath = join(dir, 'herald.yaml');
  writeFileSync(
    configPath,
    stringify({
      bgp: { localAs: 65000, routerId: '10.0.0.1' },
      node: { name: 'node-a', ip: '127.0.0.2' },
      source: { kubernetes: { kubeconfig: writeKubeconfig(join(dir, 'kubeconfig.yaml'), api.url) } },
      kubeProxy: { enabled: false },
      pools: [{ name: 'default', addresses: ['198.51.100.0/30'] }],
      admin: { address: '127.0.0.1', port: adminPort },
      stateDir: join(dir, 'state'),
      logLevel: 'fatal',
    }),
  );
  const env = { POD_NAMESPACE: 'herald-system' };
  let stopNode!: () => void;
  const nodeRun = runDaemon({ configPath, env, stopSignal: new Promise<void>((r) => (stopNode = r)), watchIntervalMs: 0, separateController: true });
  t.teardown(async () => {
    stopNode();
    await nodeRun;
  });
  const nodeUA = (ua: string) => /\bspeaker\b/.test(ua);
  // The node is up and has read the Service before the controller starts: nothing it does allocates.
  await until('the node ready', async () => ((await fetch(`http://127.0.0.1:${adminPort}/readyz`).catch(() => undefined))?.status === 200 ? true : undefined));
  await new Promise((r) => setTimeout(r, 1500));
  t.same(api.get('services', 'default', 'web')?.['status']?.loadBalancer?.ingress, undefined, 'no allocation without the controller');

  let stopController!: () => void;
  const controllerRun = runController({ configPath, env, listen: { address: '127.0.0.1', port: probePort }, identity: 'controller-0', stopSignal: new Promise<void>((r) => (stopController = r)), watchIntervalMs: 0 });
  const ingress = await until('the controller allocated', () => api.get('services', 'default', 'web')?.['status']?.loadBalancer?.ingress);
  t.same(ingress, [{ ip: '198.51.100.0', ipMode: 'VIP' }], 'the Service got the pool\'s first address');
  t.match(api.get('leases', 'herald-system', 'herald-allocator', 'coordination.k8s.io'), { spec: { holderIdentity: 'controller-0' } }, 'the controller holds the allocator Lease');
  const ready = await until('the controller ready', async () => {
    const r = await fetch(`http://127.0.0.1:${probePort}/readyz`).catch(() => undefined);
    return r?.status === 200 ? r.json() : undefined;
  });
  t.same(ready, { ready: true, notReady: [] });
  t.equal((await fetch(`http://127.0.0.1:${probePort}/healthz`)).status, 200);
  t.match(await (await fetch(`http://127.0.0.1:${probePort}/metrics`)).text(), /^herald_ipam_leader\{lease="herald-system\/herald-allocator"\} 1$/m);
  // Refused tenant input is posted by the controller (src/controller/refusals.ts): an address written by another
  // controller outside the pools (no allowedPrefixes) gets one PrefixNotAllowed Warning, from herald-controller.
  api.upsert('services', service('foreign', { etp: 'Cluster', lbIPs: ['8.8.8.8'] }));
  const warning = await until('the refusal Event', () => api.list('events').find((e) => e['reason'] === 'PrefixNotAllowed'));
  t.match(warning, { type: 'Warning', involvedObject: { kind: 'Service', name: 'foreign' }, source: { component: 'herald-controller' } }, 'the controller posts the refusal');
  stopController();
  t.equal(await controllerRun, 0, 'the controller stops cleanly');

  const byNode = api.requests.filter((r) => nodeUA(r.userAgent));
  t.ok(byNode.length > 0, `the node's requests are told apart by its User-Agent (${byNode.length})`);
  t.same(byNode.filter((r) => r.path.includes('/leases')).map((r) => `${r.method} ${r.path}`), [], 'the node takes no Lease and polls none');
  t.same(byNode.filter((r) => r.path.endsWith('/status') && r.path.includes('/services/')).map((r) => `${r.method} ${r.path}`), [], 'the node writes no Service status');
  t.same(byNode.filter((r) => r.path.includes('/events')).map((r) => `${r.method} ${r.path}`), [], 'the node writes no Event');
});

t.test('herald controller needs the Kubernetes source', async (t) => {
  const path = join(dir, 'manifests.yaml');
  writeFileSync(path, stringify({ bgp: { localAs: 65000, routerId: '10.0.0.1' }, source: { manifests: dir } }));
  const writes: string[] = [];
  const orig = process.stderr.write.bind(process.stderr);
  process.stderr.write = ((s: string) => (writes.push(String(s)), true)) as typeof process.stderr.write;
  try {
    t.equal(await runController({ configPath: path, env: {} }), 1);
  } finally {
    process.stderr.write = orig;
  }
  t.match(writes.join(''), /herald controller: the configuration has no source\.kubernetes/);
});
