// End to end, LoadBalancer IPAM: two `herald run` nodes with `pools`, watching the fake apiserver (the real
// @kubernetes/client-node underneath), peering with one real BIRD. A new LoadBalancer Service without an address gets one
// from the pool (written by exactly one elected allocator through the status subresource, with an IPAllocated Event), and
// the node with the Service's ready endpoint announces that address to BIRD; the other node does not.
import t from 'tap';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { birdAvailable, freePort } from '../helpers/bird.ts';
import { DaemonProcess } from '../helpers/daemon-process.ts';
import { FakeApiServer } from '../helpers/fake-apiserver.ts';
import { node, service, slice } from '../helpers/k8s-objects.ts';
import { ROOT, loopbackBlock, pathsFor, protoName, startBird, waitHeraldUp, withLogs, writeKubeconfig } from './harness.ts';
import type { HeraldNode, NodeSpec } from './harness.ts';
import { missingPrerequisite } from '../helpers/prereq.ts';

const HERALD_AS = 65000;
const BIRD_AS = 65100;

async function startAllocatingHerald(o: { node: NodeSpec; kubeconfig: string; bird: { ip: string; port: number } }): Promise<HeraldNode> {
  const proc = new DaemonProcess(`ipam-${o.node.name}`);
  const adminPort = await freePort('127.0.0.1');
  const config = {
    bgp: { localAs: HERALD_AS },
    peers: [{ name: 'bird', address: o.bird.ip, port: o.bird.port, peerAs: BIRD_AS, localAddress: o.node.ip, holdTime: 30, connectRetryTime: 1, ebgpMultihop: 2, families: ['ipv4-unicast'] }],
    source: { kubernetes: { kubeconfig: o.kubeconfig } },
    kubeProxy: { enabled: false },
    pools: [{ name: 'public', addresses: ['198.51.100.64/30'] }],
    admin: { address: '127.0.0.1', port: adminPort },
    stateDir: join(proc.dir, 'state'),
  };
  const configPath = join(proc.dir, 'herald.yaml');
  writeFileSync(configPath, stringify(config));
  proc.spawn(process.execPath, [join(ROOT, 'bin', 'herald.js'), 'run', '--config', configPath, '--node-name', o.node.name, '--node-ip', o.node.ip], { env: { ...process.env, POD_NAMESPACE: 'herald-system' } });
  return { proc, adminPort };
}

if (!missingPrerequisite({ bird2: birdAvailable() })) {
  t.setTimeout(240000);
  t.test('a new LoadBalancer Service gets a pool address and the node with its endpoint announces it', { timeout: 200_000 }, async (t) => {
    const block = loopbackBlock();
    const nodes: NodeSpec[] = [
      { name: 'node-a', ip: `${block}1` },
      { name: 'node-b', ip: `${block}2` },
    ];
    const [A] = nodes.map((n) => protoName(n.name)) as [string, string];
    const birdIp = `${block}100`;
    const birdPort = await freePort(birdIp);
    const dir = mkdtempSync(join(tmpdir(), 'herald-e2e-ipam-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const api = new FakeApiServer();
    await api.start();
    t.teardown(() => api.stop());
    for (const n of nodes) api.upsert('nodes', node(n.name));
    api.upsert('services', service('web', { etp: 'Cluster' })); // no status: needs an address
    api.upsert('endpointslices', slice('web-1', 'web', [['10.1.0.1', 'node-a', { ready: true }]]), 'discovery.k8s.io');
    const kubeconfig = writeKubeconfig(join(dir, 'kubeconfig.yaml'), api.url);
    const bird = await startBird({ ip: birdIp, port: birdPort, birdAs: BIRD_AS, heraldAs: HERALD_AS, nodes });
    t.teardown(() => bird.stop());
    const heralds: HeraldNode[] = [];
    for (const n of nodes) {
      const h = await startAllocatingHerald({ node: n, kubeconfig, bird: { ip: birdIp, port: birdPort } });
      t.teardown(() => h.proc.stop(5000));
      heralds.push(h);
    }
    const names = nodes.map((n) => n.name);
    for (const h of heralds) await waitHeraldUp(h);

    const ingressIp = async (): Promise<string | undefined> => {
      const svc = api.get('services', 'default', 'web') as { status?: { loadBalancer?: { ingress?: { ip?: string }[] } } } | undefined;
      return svc?.status?.loadBalancer?.ingress?.[0]?.ip;
    };
    const ip = await withLogs(() => bird.waitFor(ingressIp, 'the Service gets an address in its status', 60_000), heralds, names);
    t.equal(ip, '198.51.100.64', 'the first address of the pool');
    const lease = api.get('leases', 'herald-system', 'herald-allocator', 'coordination.k8s.io') as { spec?: { holderIdentity?: string } } | undefined;
    t.ok(lease?.spec?.holderIdentity === 'node-a' || lease?.spec?.holderIdentity === 'node-b', `one allocator holds the Lease (${lease?.spec?.holderIdentity})`);
    const patches = api.requests.filter((r) => r.method === 'PATCH' && r.path.endsWith('/services/web/status'));
    t.equal(patches.length, 1, 'exactly one status write for the Service');
    // The Event is posted after the status write, asynchronously (src/events/recorder.ts): wait for it, then count.
    const allocated = () => api.list('events').filter((e) => (e as { reason?: string }).reason === 'IPAllocated');
    await bird.waitFor(async () => (allocated().length > 0 ? true : undefined), 'the IPAllocated Event', 30_000);
    t.equal(allocated().length, 1, 'one IPAllocated Event');
    // Cluster policy: both nodes announce (the Service has a ready endpoint somewhere).
    await withLogs(() => bird.waitFor(async () => ((await pathsFor(bird, `${ip}/32`)).length === 2 ? true : undefined), 'both nodes announce the allocated address', 60_000), heralds, names);
    // Local policy: only node-a (the ready endpoint) announces.
    const local = service('web', { etp: 'Local', lbIPs: [ip as string] });
    api.upsert('services', local);
    await withLogs(() => bird.waitFor(async () => ((await pathsFor(bird, `${ip}/32`)).join() === A ? true : undefined), 'only node-a announces with Local policy', 60_000), heralds, names);
    t.same(await pathsFor(bird, `${ip}/32`), [A]);
    // node-b's announcement changed: it posts a Withdrawn Event on the Service with the reason.
    const withdrawn = await bird.waitFor(async () => api.list('events').find((e) => (e as { reason?: string; message?: string }).reason === 'Withdrawn' && /node node-b withdrew/.test((e as { message?: string }).message ?? '')), 'a Withdrawn Event from node-b', 30_000);
    t.match((withdrawn as { message: string }).message, /NoLocalReadyEndpoint/, 'the Event carries the reason');
    t.equal(await ingressIp(), ip, 'the address never moved');
  });
}
