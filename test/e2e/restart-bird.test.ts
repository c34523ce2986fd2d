// Herald's own restarts never move traffic (issue 11; docs/upgrades.md): three `herald run` nodes with graceful
// restart, the fake apiserver, per-node fake kube-proxies (kube-proxy's node check and each Local Service's check
// configured) and ONE BIRD 2 helping graceful restart, with its route trace on (`debug { routes }`: every route it
// adds or removes is logged, so a removal cannot slip between two polls).
// - a rolling restart by SIGTERM of each node in turn: each stop is logged as a restart, BIRD keeps the node's paths
//   stale, the returning Herald re-announces and ends BIRD's graceful restart;
// - consecutive restarts of one node, alternating kill -9 and SIGTERM (20, the figure; HERALD_E2E_RESTARTS
//   sets another count): every End-of-RIB follows the first complete desired set, never precedes it;
// and BIRD's trace shows no removal of any VIP path at any point.
import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { birdAvailable, freePort } from '../helpers/bird.ts';
import type { Bird } from '../helpers/bird.ts';
import { FakeApiServer } from '../helpers/fake-apiserver.ts';
import { node, service, slice } from '../helpers/k8s-objects.ts';
import { adminJson, loopbackBlock, pathsFor, protoName, startBird, startHerald, startKubeProxies, waitHeraldUp, withLogs, writeKubeconfig } from './harness.ts';
import type { NodeSpec, RestartableHerald } from './harness.ts';
import { missingPrerequisite } from '../helpers/prereq.ts';

const LOCAL_VIP = '198.51.100.20/32';
const CLUSTER_VIP = '198.51.100.21/32';
const HERALD_AS = 65000;
const BIRD_AS = 65100;
// Checks that take seconds to pass (rise 2 at 1 s): a restarted Herald whose End-of-RIB does not wait for them
// would end BIRD's graceful restart with no routes, and the trace would show the removal.
const SLOW_CHECKS = { interval: 1, timeout: 0.8, rise: 2, fall: 1 };
const RESTARTS = Math.max(2, Number(process.env['HERALD_E2E_RESTARTS'] ?? 20));

if (!missingPrerequisite({ bird2: birdAvailable() })) {
  t.setTimeout(600_000);
  t.test('rolling SIGTERM restarts and consecutive kill -9 / SIGTERM restarts: BIRD never removes a VIP path', { timeout: 580_000 }, async (t) => {
    const block = loopbackBlock();
    const nodes: NodeSpec[] = ['node-a', 'node-b', 'node-c'].map((name, i) => ({ name, ip: `${block}${i + 1}` }));
    const protos = nodes.map((n) => protoName(n.name));
    const names = nodes.map((n) => n.name);
    const birdIp = `${block}100`;
    const birdPort = await freePort(birdIp);
    const dir = mkdtempSync(join(tmpdir(), 'herald-e2e-restart-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));

    const api = new FakeApiServer();
    await api.start();
    t.teardown(() => api.stop());
    for (const n of nodes) api.upsert('nodes', node(n.name, { addresses: [{ type: 'InternalIP', address: n.ip }] }));
    const kp = await startKubeProxies(nodes.map((n) => n.ip));
    t.teardown(() => kp.close());
    const local = service('web', { etp: 'Local', lbIPs: [LOCAL_VIP.split('/')[0]!] });
    local.spec!.healthCheckNodePort = kp.port;
    api.upsert('services', local);
    api.upsert('services', service('api', { etp: 'Cluster', lbIPs: [CLUSTER_VIP.split('/')[0]!] }));
    // The Local Service's endpoints are on node-b and node-c: on node-a (the one restarted again and again) its VIP is
    // no candidate, so kube-proxy's node check is all that gates node-a's Cluster VIP after a restart.
    api.upsert('endpointslices', slice('web-1', 'web', [['10.1.0.2', 'node-b', { ready: true }], ['10.1.0.3', 'node-c', { ready: true }]]), 'discovery.k8s.io');
    api.upsert('endpointslices', slice('api-1', 'api', [['10.2.0.1', 'node-a', { ready: true }]]), 'discovery.k8s.io');
    const kubeconfig = writeKubeconfig(join(dir, 'kubeconfig.yaml'), api.url);

    const bird = await startBird({ ip: birdIp, port: birdPort, birdAs: BIRD_AS, heraldAs: HERALD_AS, nodes, gracefulRestart: true, trace: true });
    t.teardown(() => bird.stop());
    const heralds: RestartableHerald[] = [];
    for (const n of nodes) {
      const h = await startHerald({
        node: n, heraldAs: HERALD_AS, bird: { ip: birdIp, port: birdPort, as: BIRD_AS }, source: { kubernetes: { kubeconfig } }, kubeProxyPort: kp.port, gracefulRestart: true, config: { healthChecks: SLOW_CHECKS, allowedPrefixes: [LOCAL_VIP, CLUSTER_VIP] },
        // node-c without --node-ip: its kube-proxy checks probe the Node's InternalIP
        ...(n.name === 'node-c' ? { nodeIpFlag: false } : {}),
      });
      t.teardown(() => h.proc.stop(5000));
      heralds.push(h);
    }
    const want = [[protos[1]!, protos[2]!].join(), [...protos].join()];
    const allPaths = async (b: Bird) => [(await pathsFor(b, LOCAL_VIP)).join(), (await pathsFor(b, CLUSTER_VIP)).join()];
    for (const h of heralds) await waitHeraldUp(h);
    await withLogs(() => bird.waitFor(async () => ((await allPaths(bird)).join(' ') === want.join(' ') ? true : undefined), 'the Local VIP from node-b and node-c, the Cluster VIP from all three', 90_000), heralds, names);
    t.ok(kp.proxies.get(nodes[0]!.ip)!.requests > 0, "node-a probes its kube-proxy (the node check)");
    t.ok(kp.proxies.get(nodes[2]!.ip)!.requests > 0, "node-c, started without --node-ip, probes kube-proxy on its Node's InternalIP");
    const cHealth = ((await adminJson(heralds[2]!.adminPort, '/api/v1/health')) ?? []) as { kind: string; target: string }[];
    t.same(cHealth.filter((c) => c.kind.startsWith('kube-proxy')).map((c) => `${c.kind} ${c.target}`).sort(), [`kube-proxy-node ${nodes[2]!.ip}:${kp.port}/healthz`, `kube-proxy-service ${nodes[2]!.ip}:${kp.port}/health`], "node-c's kube-proxy checks target its Node's InternalIP");

    const grDone = (proto: string) => bird.log().split('\n').filter((l) => l.includes(proto) && /graceful restart done/i.test(l)).length;
    const removals = () => bird.routeTrace().filter((e) => protos.includes(e.protocol) && e.action === 'removed' && (e.prefix === LOCAL_VIP || e.prefix === CLUSTER_VIP));

    /** One restart of node i by `signal`: the process exits, is started again in its stateDir, and ends BIRD's graceful restart. */
    const restart = async (i: number, signal: 'SIGTERM' | 'SIGKILL', what: string) => {
      const h = heralds[i]!;
      const before = grDone(protos[i]!);
      const logBefore = h.proc.stdout.length;
      await h.proc.kill(signal, 30_000);
      if (signal === 'SIGTERM') {
        const stopLog = h.proc.stdout.slice(logBefore);
        t.match(stopLog, /stopping \(SIGTERM\): restart: not drained and the node is not departing/, `${what}: the stop is logged as a restart, with why`);
        t.match(stopLog, /BGP sessions ended \(restart\): bird closedWithoutNotification/, `${what}: BIRD (graceful restart, no N bit) gets no NOTIFICATION`);
      }
      t.same((await allPaths(bird)).map((p) => p.split(',').includes(protos[i]!)), want.map((p) => p.split(',').includes(protos[i]!)), `${what}: BIRD keeps ${names[i]}'s paths while it is away`);
      h.respawn();
      await waitHeraldUp(h);
      await withLogs(() => bird.waitFor(async () => grDone(protos[i]!) > before || undefined, `${what}: BIRD ends the graceful restart of ${protos[i]}`, 90_000), heralds, names);
      t.same(await allPaths(bird), want, `${what}: every path back`);
      t.same(removals(), [], `${what}: no VIP path removed in BIRD's route trace so far`);
    };

    for (let i = 0; i < nodes.length; i++) await restart(i, 'SIGTERM', `rolling restart, ${names[i]} (SIGTERM)`);
    for (let k = 0; k < RESTARTS; k++) {
      const signal = k % 2 === 0 ? 'SIGKILL' : 'SIGTERM';
      await restart(0, signal, `consecutive restart ${k + 1}/${RESTARTS} of node-a (${signal === 'SIGKILL' ? 'kill -9' : 'SIGTERM'})`);
    }
    t.equal(grDone(protos[0]!), RESTARTS + 1, "BIRD saw every one of node-a's graceful restarts end");
    const trace = bird.routeTrace().filter((e) => e.prefix === LOCAL_VIP || e.prefix === CLUSTER_VIP);
    t.ok(trace.length >= 6, 'the route trace holds the VIP paths (fixture check: the trace is on)');
    t.same(removals(), [], "BIRD's route trace: no VIP path removed at any point");
  });
}
