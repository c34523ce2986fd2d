// `herald run` with pools against the fake apiserver: the allocator's metrics on the metrics listener (leader, pool
// usage after an allocation) and the informers' watch times.
import t from 'tap';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { runDaemon } from '../../../src/daemon/run.ts';
import { freePort } from '../../helpers/bird.ts';
import { FakeApiServer } from '../../helpers/fake-apiserver.ts';
import { node, service } from '../../helpers/k8s-objects.ts';
import { writeKubeconfig } from '../../e2e/harness.ts';

const dir = mkdtempSync(join(tmpdir(), 'herald-allocator-metrics-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

t.test('herald_ipam_leader and herald_ipam_pool_addresses follow the allocator; watch times per resource', async (t) => {
  const api = new FakeApiServer();
  await api.start();
  t.teardown(() => api.stop());
  api.upsert('nodes', node('node-a'));
  api.upsert('services', service('web', { etp: 'Cluster' }));
  const port = await freePort('127.0.0.1');
  const configPath = join(dir, 'herald.yaml');
  writeFileSync(
    configPath,
    stringify({
      bgp: { localAs: 65000, routerId: '10.0.0.1' },
      node: { name: 'node-a', ip: '127.0.0.2' },
      source: { kubernetes: { kubeconfig: writeKubeconfig(join(dir, 'kubeconfig.yaml'), api.url) } },
      kubeProxy: { enabled: false },
      pools: [{ name: 'default', addresses: ['198.51.100.0/30'] }],
      admin: { address: '127.0.0.1', port },
      metrics: { port },
      stateDir: join(dir, 'state'),
      logLevel: 'fatal',
    }),
  );
  let stop!: () => void;
  const stopSignal = new Promise<void>((resolve) => (stop = resolve));
  const running = runDaemon({ configPath, env: { POD_NAMESPACE: 'herald-system' }, stopSignal, watchIntervalMs: 0 });
  t.teardown(async () => {
    stop();
    await running;
  });
  const scrape = async () => (await fetch(`http://127.0.0.2:${port}/metrics`).then((r) => r.text()).catch(() => '')) ?? '';
  const waitMetrics = async (re: RegExp, what: string): Promise<string> => {
    const deadline = Date.now() + 30_000;
    let text = '';
    while (Date.now() < deadline) {
      text = await scrape();
      if (re.test(text)) return text;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`${what}: not in ${text.split('\n').filter((l) => l.startsWith('herald_ipam') || l.startsWith('herald_vip')).join('; ')}`);
  };
  await waitMetrics(/^herald_ipam_leader\{lease="herald-system\/herald-allocator"\} 1$/m, 'this node leads');
  const text = await waitMetrics(/^herald_ipam_pool_addresses\{pool="default",family="IPv4",state="allocated"\} 1$/m, 'one address allocated');
  t.match(text, /^herald_ipam_pool_addresses\{pool="default",family="IPv4",state="available"\} 3$/m, 'three left of four');
  t.match(api.get('services', 'default', 'web'), { status: { loadBalancer: { ingress: [{ ip: '198.51.100.0' }] } } }, 'the Service got the address');
  for (const resource of ['Service', 'EndpointSlice', 'Node']) t.match(text, new RegExp(`^herald_kubernetes_watch_last_connect_timestamp_seconds\\{resource="${resource}"\\} \\d`, 'm'), `${resource} watch opened`);
  // The allocation reaches the pool gauges at once; the VIP gauge only after the Service's new status comes back
  // through the watch and a route pass (CI once scraped between the two), so it is waited for, not read from `text`.
  const vip = await waitMetrics(/^herald_vip_announced\{service="default\/web",address="198\.51\.100\.0"\} \d$/m, 'the VIP gauge');
  t.match(vip, /^herald_vip_announced\{service="default\/web",address="198\.51\.100\.0"\} 0$/m, 'its VIP is handled and not announced here (no endpoint)');
});
