// End to end, the main job: three `herald run` processes (node-a, node-b, node-c, each on its own 127.x node IP)
// watch the fake apiserver through a kubeconfig (the real @kubernetes/client-node underneath) and peer over eBGP
// with ONE real BIRD 2. A LoadBalancer Service with externalTrafficPolicy Local must be announced exactly from the
// nodes with a ready local endpoint whose kube-proxy health check passes; apiserver outages (refused, 500, hanging)
// and silent watches remove nothing; changes made meanwhile are applied once the apiserver is back (after a relist
// when the history was compacted); Cluster policy announces from every node.
import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { birdAvailable, freePort } from '../helpers/bird.ts';
import { FakeApiServer } from '../helpers/fake-apiserver.ts';
import { node, service, slice } from '../helpers/k8s-objects.ts';
import type { EpSpec } from '../helpers/k8s-objects.ts';
import { adminJson, loopbackBlock, pathsFor, protoName, sleep, waitHeraldUp, withLogs, startBird, startHerald, startKubeProxies, writeKubeconfig } from './harness.ts';
import type { HeraldNode, NodeSpec } from './harness.ts';
import { missingPrerequisite } from '../helpers/prereq.ts';

const VIP = '198.51.100.10';
const PREFIX = `${VIP}/32`;
const HERALD_AS = 65000;
const BIRD_AS = 65100;

if (!missingPrerequisite({ bird2: birdAvailable() })) {
  // Longer than the suite's default file timeout: three Heralds start on a possibly loaded 2-CPU machine. The root
  // test tells the tap runner (spawn.js honours the child's setTimeout message).
  t.setTimeout(330000);
  t.test('three herald nodes, fake apiserver, one BIRD: Local/Cluster, readiness, health, outages', { timeout: 300_000 }, async (t) => {
    const block = loopbackBlock();
    const nodes: NodeSpec[] = [
      { name: 'node-a', ip: `${block}1` },
      { name: 'node-b', ip: `${block}2` },
      { name: 'node-c', ip: `${block}3` },
    ];
    const [A, B, C] = nodes.map((n) => protoName(n.name)) as [string, string, string];
    const names = nodes.map((n) => n.name);
    const birdIp = `${block}100`;
    const birdPort = await freePort(birdIp);
    const dir = mkdtempSync(join(tmpdir(), 'herald-e2e-k8s-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));

    // The cluster: three Ready nodes, per-node kube-proxy health servers (Service health and /healthz on one port).
    const api = new FakeApiServer();
    await api.start();
    t.teardown(() => api.stop());
    for (const n of nodes) api.upsert('nodes', node(n.name));
    const kp = await startKubeProxies(nodes.map((n) => n.ip));
    t.teardown(() => kp.close());
    kp.proxies.get(nodes[2]!.ip)!.setMode('none'); // node-c has no ready local endpoint: kube-proxy says 503 there

    const svc = (etp: 'Local' | 'Cluster') => {
      const s = service('web', { etp, lbIPs: [VIP] });
      if (etp === 'Local') s.spec!.healthCheckNodePort = kp.port;
      return s;
    };
    const eps = (bReady: boolean): EpSpec[] => [
      ['10.1.0.1', 'node-a', { ready: true }],
      ['10.1.0.2', 'node-b', { ready: bReady }],
      ['10.1.0.3', 'node-c', { ready: false }],
    ];
    api.upsert('services', svc('Local'));
    api.upsert('endpointslices', slice('web-1', 'web', eps(true)), 'discovery.k8s.io');
    const kubeconfig = writeKubeconfig(join(dir, 'kubeconfig.yaml'), api.url);

    const bird = await startBird({ ip: birdIp, port: birdPort, birdAs: BIRD_AS, heraldAs: HERALD_AS, nodes });
    t.teardown(() => bird.stop());
    const heralds: HeraldNode[] = [];
    for (const n of nodes) {
      const h = await startHerald({ node: n, heraldAs: HERALD_AS, bird: { ip: birdIp, port: birdPort, as: BIRD_AS }, source: { kubernetes: { kubeconfig } }, kubeProxyPort: kp.port, config: { allowedPrefixes: [PREFIX] }, env: { HERALD_TEST_MIN_WATCH_TIMEOUT_SEC: '15' } });
      t.teardown(() => h.proc.stop(5000));
      heralds.push(h);
    }
    const paths = () => pathsFor(bird, PREFIX);
    const waitPaths = async (want: string[], what: string, timeoutMs = 30_000) => {
      await withLogs(() => bird.waitFor(async () => (await paths()).join() === want.join() || undefined, `${what}: paths ${want.join(',') || '(none)'}`, timeoutMs), heralds, names);
      t.same(await paths(), want, what);
    };
    const stays = async (want: string[], what: string) => {
      // Not a timing assertion: the routes must still be there at two later moments.
      for (const ms of [1500, 2500]) {
        await sleep(ms);
        t.same(await paths(), want, `${what} (after another ${ms} ms)`);
      }
      heralds.forEach((h, i) => t.ok(h.proc.alive, `${nodes[i]!.name}: herald still running`));
    };

    // 1. Sessions up; the VIP from node-a and node-b, not node-c.
    for (const h of heralds) await waitHeraldUp(h);
    for (const p of [A, B, C]) await withLogs(() => bird.waitFor(async () => (await bird.protocol(p))?.bgpState === 'Established' || undefined, `${p} Established`, 40_000), heralds, names);
    await waitPaths([A, B], 'Local: ready endpoints on node-a and node-b');
    const routes = await bird.routes(`for ${PREFIX} table master4`);
    t.same(routes.find((r) => r.protocol === A)?.bgpPath, [HERALD_AS], 'AS_PATH is the Herald AS');
    t.same(routes.find((r) => r.protocol === A)?.bgpNextHop, [nodes[0]!.ip], 'NEXT_HOP is node-a');
    const cView = (await adminJson(heralds[2]!.adminPort, '/api/v1/services')) as unknown;
    t.match(JSON.stringify(cView), /NoLocalReadyEndpoint/, 'node-c explains why it does not announce');
    t.ok(kp.proxies.get(nodes[0]!.ip)!.requests > 0, 'node-a probed its kube-proxy');

    // 2. node-b's endpoint goes unready → node-b's path is withdrawn.
    api.upsert('endpointslices', slice('web-1', 'web', eps(false)), 'discovery.k8s.io');
    await waitPaths([A], 'endpoint on node-b unready');

    // 3. Refused connections: nothing removed; a change made meanwhile (node-b ready again) plus a compaction force a
    //    relist (410 Expired) once the apiserver is back, and the change is applied.
    await api.goDown('refuse');
    api.upsert('endpointslices', slice('web-1', 'web', eps(true)), 'discovery.k8s.io');
    api.compact();
    await stays([A], 'apiserver refusing');
    // An initial read is a LIST or a streaming list (a watch with sendInitialEvents).
    const reads = () => api.count((r) => r.method === 'GET' && r.path.endsWith('/endpointslices') && (r.query['watch'] === undefined || r.query['sendInitialEvents'] === 'true'));
    const listsBefore = reads();
    await api.comeBack();
    await waitPaths([A, B], 'change applied after the relist', 60_000);
    t.ok(reads() > listsBefore, 'EndpointSlices were relisted');

    // 4. HTTP 500 on every request: nothing removed, even though node-b went unready meanwhile; applied once back.
    await api.goDown('500');
    api.upsert('endpointslices', slice('web-1', 'web', eps(false)), 'discovery.k8s.io');
    await stays([A, B], 'apiserver answering 500');
    await api.comeBack();
    await waitPaths([A], 'change made during the 500s applied', 60_000);

    // 5. Hanging apiserver (watches cut, every request hangs): nothing removed; applied once back.
    await api.goDown('hang');
    api.upsert('endpointslices', slice('web-1', 'web', eps(true)), 'discovery.k8s.io');
    await stays([A], 'apiserver hanging');
    await api.comeBack();
    await waitPaths([A, B], 'change made during the hang applied', 60_000);

    // 5b. Silent watches (open, no data): nothing removed; once the watch's server-side timeout has passed (15-30 s
    //     here, HERALD_TEST_MIN_WATCH_TIMEOUT_SEC; 5-10 minutes by default) the informer re-watches from the last
    //     resourceVersion and the missed change (node-b unready) arrives.
    api.hangWatches();
    api.upsert('endpointslices', slice('web-1', 'web', eps(false)), 'discovery.k8s.io');
    await stays([A, B], 'watches silent');
    await waitPaths([A], 'change missed by the silent watch applied after reconnect', 90_000);
    api.upsert('endpointslices', slice('web-1', 'web', eps(true)), 'discovery.k8s.io');
    await waitPaths([A, B], 'node-b ready again after the silent watch');

    // 6. The health check gates the VIP: node-b's kube-proxy says no local endpoints → withdrawn; ok again → back.
    kp.proxies.get(nodes[1]!.ip)!.setMode('none');
    await waitPaths([A], 'node-b kube-proxy health check failing');
    kp.proxies.get(nodes[1]!.ip)!.setMode('ok');
    await waitPaths([A, B], 'node-b kube-proxy health check passing again');

    // 7. Cluster policy: every node announces (a ready endpoint exists somewhere).
    api.upsert('services', svc('Cluster'));
    await waitPaths([A, B, C], 'Cluster policy: all three nodes');

    // 8. The Service deleted: withdrawn everywhere.
    api.remove('services', 'default', 'web');
    await waitPaths([], 'Service deleted');
  });
}
