// A SIGTERM restart does not wait for the apiserver (issue 32): `herald run` (bin/herald.js, as the README and the
// image start it) with the shipped ConfigMap's peer (TCP MD5 from a password file, graceful restart, graceful
// shutdown) and the Kubernetes source, against BIRD with the same password. The apiserver stops answering (it accepts
// connections and never replies: an overloaded or partitioned control plane) while Herald holds the status writer's
// Lease, then SIGTERM: the sessions end at once as a restart (BIRD keeps the route, no removal in its trace), the
// Lease release is given up after src/daemon/run.ts LEASE_RELEASE_MS, and the process exits 0 well inside the
// DaemonSet's terminationGracePeriodSeconds. Before the fix the stop first waited for the Lease release (the request
// in flight has a 60 s timeout), so the kubelet's SIGKILL came first and the stop's log lines were lost.
import t from 'tap';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { bgpProtocol, Bird, birdAvailable, freePort } from '../helpers/bird.ts';
import { FakeApiServer } from '../helpers/fake-apiserver.ts';
import { node, service, slice } from '../helpers/k8s-objects.ts';
import { missingPrerequisite } from '../helpers/prereq.ts';
import { ROOT, loopbackBlock, pathsFor, protoName, startHerald, startKubeProxies, waitHeraldUp, withLogs, writeKubeconfig } from './harness.ts';

const VIP = '203.0.113.41'; // inside the ConfigMap's allowedPrefixes (203.0.113.0/24)
const PASSWORD = 'stop-test-md5';

/** The first peer of deploy/kubernetes/configmap.yaml's herald.yaml, its bgp.localAs and allowedPrefixes. */
function shippedPeer(): { peer: Record<string, unknown>; localAs: number; allowedPrefixes: string[] } {
  const cm = parse(readFileSync(join(ROOT, 'deploy/kubernetes/configmap.yaml'), 'utf8')) as { data: Record<string, string> };
  const config = parse(cm.data['herald.yaml'] ?? '') as { bgp: { localAs: number }; peers: Record<string, unknown>[]; allowedPrefixes?: string[] };
  return { peer: config.peers[0]!, localAs: config.bgp.localAs, allowedPrefixes: config.allowedPrefixes ?? [] };
}

if (!missingPrerequisite({ bird2: birdAvailable() })) {
  t.test('SIGTERM with an apiserver that does not answer: a prompt restart, the route kept in BIRD', { timeout: 240_000 }, async (t) => {
    const { peer, localAs, allowedPrefixes } = shippedPeer();
    t.ok(allowedPrefixes.some((p) => p.startsWith('203.0.113.')), `the ConfigMap allows ${VIP} (allowedPrefixes ${allowedPrefixes.join(', ')})`);
    t.ok(typeof peer['password'] === 'object' && (peer['gracefulRestart'] as { enabled?: boolean })?.enabled && (peer['gracefulShutdown'] as { enabled?: boolean })?.enabled, "the ConfigMap's peer has TCP MD5, graceful restart and graceful shutdown");
    const block = loopbackBlock();
    const nodeIp = `${block}1`;
    const birdIp = `${block}100`;
    const birdPort = await freePort(birdIp);
    const dir = mkdtempSync(join(tmpdir(), 'herald-e2e-stop-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(join(dir, 'password'), PASSWORD);

    const api = new FakeApiServer();
    await api.start();
    t.teardown(() => api.stop());
    api.upsert('nodes', node('node-a', { addresses: [{ type: 'InternalIP', address: nodeIp }] }));
    api.upsert('services', service('web', { etp: 'Cluster', lbIPs: [VIP] }));
    api.upsert('endpointslices', slice('web-1', 'web', [['10.1.0.2', 'node-a', { ready: true }]]), 'discovery.k8s.io');
    const kp = await startKubeProxies([nodeIp]);
    t.teardown(() => kp.close());
    const kubeconfig = writeKubeconfig(join(dir, 'kubeconfig.yaml'), api.url);

    const proto = protoName('node-a');
    const bird = await Bird.start(
      bgpProtocol({ name: proto, local: birdIp, localPort: birdPort, localAs: Number(peer['peerAs']), neighbor: nodeIp, neighborPort: 179, neighborAs: localAs, passive: true, holdTimeSec: 30, families: ['ipv4'], trace: true, extra: `  password "${PASSWORD}";\n  graceful restart on;\n  graceful restart time 120;` }),
      { routerId: '10.255.255.2' },
    );
    t.teardown(() => bird.stop());

    const { name: _name, address: _address, port: _port, ...settings } = peer;
    const h = await startHerald({
      node: { name: 'node-a', ip: nodeIp }, heraldAs: localAs, bird: { ip: birdIp, port: birdPort, as: Number(peer['peerAs']) }, source: { kubernetes: { kubeconfig } }, kubeProxyPort: kp.port,
      peer: { ...settings, password: { file: join(dir, 'password') } }, config: { allowedPrefixes }, env: { POD_NAMESPACE: 'herald-system' },
    });
    t.teardown(() => h.proc.stop(5000));
    await waitHeraldUp(h);
    await withLogs(() => h.proc.waitFor(async () => (await pathsFor(bird, `${VIP}/32`)).includes(proto), `BIRD has ${VIP}/32 over TCP MD5`, 90_000, 250), [h], ['node-a']);
    await h.proc.waitFor(() => /became the status writer/.test(h.proc.stdout), 'Herald holds the status Lease', 60_000, 100);

    // The apiserver accepts and never answers; the elector's next renewal (every 2 s) is then in flight at the stop.
    await api.goDown('hang');
    await new Promise((r) => setTimeout(r, 2500));
    const logBefore = h.proc.stdout.length;
    const started = Date.now();
    await h.proc.kill('SIGTERM', 60_000);
    const tookMs = Date.now() - started;
    const stopLog = h.proc.stdout.slice(logBefore);
    t.equal(h.proc.child?.exitCode, 0, `herald run exited 0 (signal ${String(h.proc.child?.signalCode)})`);
    t.ok(tookMs < 20_000, `it exited ${(tookMs / 1000).toFixed(1)} s after the SIGTERM: inside the DaemonSet's 45 s grace period (the Lease release waits at most 3 s)`);
    t.match(stopLog, /stopping \(SIGTERM\): restart: not drained and the node is not departing/, 'the stop is a restart, logged with why');
    t.match(stopLog, /BGP sessions ended \(restart\): bird closedWithoutNotification/, 'the session ended as a restart (graceful restart, no NOTIFICATION)');
    t.match(stopLog, /Leases not released: the apiserver did not answer in time/, 'the Lease release was given up, and said so');
    t.match(stopLog, /"msg":"stopped"/, 'the last log line is there');
    t.ok(/Neighbor graceful restart detected/.test(bird.log()), 'BIRD saw a graceful restart');
    t.ok((await pathsFor(bird, `${VIP}/32`)).includes(proto), 'BIRD keeps the route (stale) while Herald is down');
    const events = bird.routeTrace().filter((e) => e.prefix === `${VIP}/32`);
    t.ok(events.some((e) => e.action === 'added'), 'the route trace is on (fixture check)');
    t.same(events.filter((e) => e.action === 'removed').map((e) => e.line), [], "BIRD's route trace shows no removal of the VIP");
  });
}
