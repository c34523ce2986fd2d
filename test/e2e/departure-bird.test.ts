// A node that is really leaving drains first; a drain is cluster state (issue 11; docs/operations.md, docs/upgrades.md).
// Two `herald run` nodes (graceful restart, RFC 8326 graceful shutdown with a 2 s wait), the fake apiserver, and ONE
// BIRD 2 with its route trace on:
// - each departure signal on node-a's Node object (the autoscaler's taint, a deletion timestamp, Ready False, the
//   out-of-service taint): BIRD sees node-a's path with 65535:0, then removed; node-b's path is never touched; the
//   signal cleared, node-a announces again;
// - the drain annotation, as `kubectl annotate` writes it: the same drain, shown by status, /readyz and the metric; a
//   SIGTERM while drained is a departure; the restarted Herald starts drained (warning naming the annotation) and
//   announces nothing; `herald undrain` / `herald drain --reason` write the annotation through the apiserver;
// - a drain.json left in stateDir does not block a Kubernetes-mode node;
// - SIGTERM after a departure signal: a departure, no second wait, the session ends with Cease and our text.
import t from 'tap';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { birdAvailable, freePort } from '../helpers/bird.ts';
import { FakeApiServer } from '../helpers/fake-apiserver.ts';
import { node, service, slice } from '../helpers/k8s-objects.ts';
import type { NodeOpts } from '../helpers/k8s-objects.ts';
import type { Node } from '../../src/k8s/types.ts';
import { ROOT, adminJson, loopbackBlock, protoName, sleep, startBird, startHerald, startKubeProxies, waitHeraldUp, withLogs, writeKubeconfig } from './harness.ts';
import type { NodeSpec, RestartableHerald } from './harness.ts';
import { missingPrerequisite } from '../helpers/prereq.ts';

const VIP = '198.51.100.30/32';
const HERALD_AS = 65000;
const BIRD_AS = 65100;
const TOKEN = 'departure-test-token';
const DRAIN = 'herald.io/drain';

if (!missingPrerequisite({ bird2: birdAvailable() })) {
  t.setTimeout(400_000);
  t.test('departure signals and the drain annotation: 65535:0, then withdrawn; stops by the node state', { timeout: 380_000 }, async (t) => {
    const block = loopbackBlock();
    const nodes: NodeSpec[] = ['node-a', 'node-b'].map((name, i) => ({ name, ip: `${block}${i + 1}` }));
    const [A, B] = nodes.map((n) => protoName(n.name)) as [string, string];
    const names = nodes.map((n) => n.name);
    const birdIp = `${block}100`;
    const birdPort = await freePort(birdIp);
    const dir = mkdtempSync(join(tmpdir(), 'herald-e2e-departure-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const tokenFile = join(dir, 'token');
    writeFileSync(tokenFile, TOKEN);

    const api = new FakeApiServer();
    await api.start();
    t.teardown(() => api.stop());
    for (const n of nodes) api.upsert('nodes', node(n.name));
    const kp = await startKubeProxies(nodes.map((n) => n.ip));
    t.teardown(() => kp.close());
    api.upsert('services', service('web', { etp: 'Cluster', lbIPs: [VIP.split('/')[0]!] }));
    api.upsert('endpointslices', slice('web-1', 'web', [['10.1.0.1', 'node-a', { ready: true }], ['10.1.0.2', 'node-b', { ready: true }]]), 'discovery.k8s.io');
    const kubeconfig = writeKubeconfig(join(dir, 'kubeconfig.yaml'), api.url);

    const bird = await startBird({ ip: birdIp, port: birdPort, birdAs: BIRD_AS, heraldAs: HERALD_AS, nodes, gracefulRestart: true, trace: true });
    t.teardown(() => bird.stop());
    const heralds: RestartableHerald[] = [];
    for (const n of nodes) {
      const h = await startHerald({
        node: n, heraldAs: HERALD_AS, bird: { ip: birdIp, port: birdPort, as: BIRD_AS }, source: { kubernetes: { kubeconfig } }, kubeProxyPort: kp.port,
        gracefulRestart: true, gracefulShutdownWaitSec: 2, adminToken: TOKEN,
        // kube-proxy checks that tolerate a slow probe on a loaded machine (fall 3): a check flap would move a path
        config: { healthChecks: { interval: 1, timeout: 1, rise: 1, fall: 3 }, allowedPrefixes: [VIP] },
      });
      t.teardown(() => h.proc.stop(5000));
      heralds.push(h);
    }
    const [ha, hb] = heralds as [RestartableHerald, RestartableHerald];
    const vipRoutes = async () => (await bird.routes('table master4')).filter((r) => r.prefix === VIP);
    const paths = async () => (await vipRoutes()).map((r) => r.protocol).sort().join();
    const waitPaths = (want: string[], what: string, timeoutMs = 60_000) =>
      withLogs(() => bird.waitFor(async () => ((await paths()) === want.join() ? true : undefined), `${what}: paths ${want.join() || '(none)'}`, timeoutMs), heralds, names);
    const removed = (proto: string) => bird.routeTrace().filter((e) => e.protocol === proto && e.action === 'removed' && e.prefix === VIP).length;
    const nodeA = (o: NodeOpts = {}): Node => node('node-a', o);
    /** A departure of node-a: 65535:0 on its path while node-b's stays plain, then its path removed. */
    const drainsAway = async (what: string) => {
      const before = removed(A);
      const gs = await withLogs(
        () => bird.waitFor(async () => (await vipRoutes()).find((r) => r.protocol === A && r.communities.includes('65535:0')), `${what}: node-a's path with GRACEFUL_SHUTDOWN`, 60_000),
        heralds,
        names,
      );
      t.ok(gs, `${what}: BIRD sees node-a's path with 65535:0 first`);
      t.notOk((await vipRoutes()).find((r) => r.protocol === B)?.communities.includes('65535:0'), `${what}: node-b's path has no 65535:0`);
      await waitPaths([B], `${what}: node-a's path withdrawn after the wait`);
      t.equal(removed(A), before + 1, `${what}: BIRD's trace shows node-a's path removed once`);
    };
    const cli = async (...args: string[]) => (await promisify(execFile)(process.execPath, [join(ROOT, 'bin', 'herald.js'), ...args, '--api', `http://127.0.0.1:${ha.adminPort}`, '--token-file', tokenFile], { timeout: 30_000 })).stdout;

    for (const h of heralds) await waitHeraldUp(h);
    await waitPaths([A, B], 'both nodes announce', 90_000);

    // 1. Each departure signal drains node-a; node-b is never touched; cleared, node-a is back.
    const signals: [string, NodeOpts][] = [
      ['autoscaler taint ToBeDeletedByClusterAutoscaler', { taints: [{ key: 'ToBeDeletedByClusterAutoscaler', value: '1700000000', effect: 'NoSchedule' }] }],
      ['deletion timestamp', { deleting: true }],
      ['Ready False', { ready: 'False' }],
      ['taint node.kubernetes.io/out-of-service', { taints: [{ key: 'node.kubernetes.io/out-of-service', value: 'nodeshutdown', effect: 'NoExecute' }] }],
    ];
    for (const [what, opts] of signals) {
      api.upsert('nodes', nodeA(opts));
      await drainsAway(what);
      const st = (await adminJson(ha.adminPort, '/api/v1/status')) as { drain: string[] };
      t.match(st.drain.join(), /node leaving service: Node node-a /, `${what}: herald status names the departure`);
      t.match(await (await fetch(`http://127.0.0.1:${ha.adminPort}/metrics`)).text(), /herald_node_departing 1/, `${what}: herald_node_departing 1`);
      api.upsert('nodes', nodeA());
      await waitPaths([A, B], `${what} cleared: node-a announces again`);
      t.notOk((await vipRoutes()).find((r) => r.protocol === A)?.communities.includes('65535:0'), `${what} cleared: no 65535:0`);
    }
    t.equal(removed(B), 0, "node-b's path was never removed");

    // 2. The drain annotation, as `kubectl annotate node node-a herald.io/drain=maintenance` writes it.
    api.upsert('nodes', nodeA({ annotations: { [DRAIN]: 'maintenance' } }));
    await drainsAway('annotation herald.io/drain=maintenance');
    const status = (await adminJson(ha.adminPort, '/api/v1/status')) as { drain: string[]; ready: boolean };
    t.same(status.drain, ['annotation herald.io/drain="maintenance" on Node node-a'], 'herald status names the annotation');
    const readyz = await fetch(`http://127.0.0.1:${ha.adminPort}/readyz`);
    t.equal(readyz.status, 200, 'a drained node stays ready (a rollout must not stall on it)');
    t.match(((await readyz.json()) as { reasons: string[] }).reasons.join(), /drained: annotation herald\.io\/drain="maintenance"/, '/readyz says why');
    t.match(await (await fetch(`http://127.0.0.1:${ha.adminPort}/metrics`)).text(), /herald_drained 1/, 'herald_drained 1');
    t.match(await cli('status'), /Drained:\s+yes \(annotation herald\.io\/drain="maintenance" on Node node-a\)/, '`herald status` shows the drain and its source');

    // A SIGTERM while drained is a departure (already withdrawn: no second wait); the next Herald starts drained.
    const addedA = () => bird.routeTrace().filter((e) => e.protocol === A && e.action === 'added' && e.prefix === VIP).length;
    const addedBefore = addedA();
    let mark = ha.proc.stdout.length;
    await ha.proc.kill('SIGTERM', 30_000);
    t.match(ha.proc.stdout.slice(mark), /stopping \(SIGTERM\): departure: the node is drained \(annotation herald\.io\/drain=\\"maintenance\\" on Node node-a\)/, 'SIGTERM while drained: a departure, and the log says why');
    t.match(ha.proc.stdout.slice(mark), /"drainedAlready":true/, 'no second wait');
    ha.respawn();
    await waitHeraldUp(ha);
    await withLogs(() => ha.proc.waitFor(() => /starting drained: annotation herald\.io\/drain=\\"maintenance\\" on Node node-a/.test(ha.proc.stdout) || undefined, 'the starting-drained warning', 60_000), heralds, names);
    t.match(ha.proc.stdout, /"level":40[^\n]*starting drained: annotation herald\.io\/drain/, 'starting drained is a warning naming the source');
    await withLogs(() => bird.waitFor(async () => (await bird.protocol(A))?.bgpState === 'Established' || undefined, 'node-a Established again', 60_000), heralds, names);
    await sleep(3000);
    t.equal(await paths(), B, 'the restarted drained node announces nothing');
    t.equal(addedA(), addedBefore, "BIRD's trace: no announcement from the restarted drained node-a");

    // `herald undrain` removes the annotation through the apiserver; `herald drain --reason` sets it.
    t.match(await cli('undrain'), /undrained/, 'herald undrain');
    t.equal((api.get('nodes', undefined, 'node-a') as Node | undefined)?.metadata?.annotations?.[DRAIN], undefined, 'the annotation is gone from the Node');
    await waitPaths([A, B], 'undrained: node-a announces again');
    t.match(await cli('drain', '--reason', 'kernel upgrade'), /annotation herald\.io\/drain="kernel upgrade" set on Node node-a/, 'herald drain --reason');
    t.equal((api.get('nodes', undefined, 'node-a') as Node | undefined)?.metadata?.annotations?.[DRAIN], 'kernel upgrade', 'the Node carries the annotation (kubectl get node shows it)');
    await drainsAway('herald drain --reason "kernel upgrade"');
    await cli('undrain');
    await waitPaths([A, B], 'undrained again');

    // 3. A drain.json in stateDir (a standalone record, or one left from an older version) never blocks this node.
    await hb.proc.kill('SIGKILL');
    writeFileSync(join(hb.proc.dir, 'state', 'drain.json'), JSON.stringify({ drained: true, atMs: Date.now() }) + '\n');
    hb.respawn();
    await waitHeraldUp(hb);
    await withLogs(() => hb.proc.waitFor(() => /ignoring [^\n]*drain\.json: with the Kubernetes source a drain is the Node annotation herald\.io\/drain/.test(hb.proc.stdout) || undefined, 'the stale drain.json warning', 60_000), heralds, names);
    await withLogs(() => bird.waitFor(async () => /graceful restart done/i.test(bird.log().split('\n').filter((l) => l.includes(B)).join('\n')) || undefined, 'node-b back', 60_000), heralds, names);
    const bLines = () => `\n${hb.proc.stdout.split('\n').filter((l) => /initial sync|drain|End-of-RIB/.test(l)).join('\n')}\n${bird.routeTrace().filter((e) => e.protocol === B).map((e) => e.line).join('\n')}`;
    t.equal(await paths(), [A, B].join(), `node-b announces although drain.json is in its stateDir${(await paths()) === [A, B].join() ? '' : bLines()}`);
    t.equal(removed(B), 0, `node-b's path was never removed (kill -9 and restart kept it)${removed(B) === 0 ? '' : bLines()}`);

    // 4. SIGTERM after a departure signal: a departure (already withdrawn), Cease with our text.
    api.upsert('nodes', nodeA({ taints: [{ key: 'ToBeDeletedByClusterAutoscaler', value: '1700000001', effect: 'NoSchedule' }] }));
    await drainsAway('autoscaler taint, before the SIGTERM');
    mark = ha.proc.stdout.length;
    await ha.proc.kill('SIGTERM', 30_000);
    t.equal(ha.proc.child?.signalCode, null, 'exited by itself, not killed');
    const stopLog = ha.proc.stdout.slice(mark);
    t.match(stopLog, /stopping \(SIGTERM\): departure: the node is leaving service \(Node node-a has taint ToBeDeletedByClusterAutoscaler\)/, 'SIGTERM on a departing node: a departure, with why');
    t.match(stopLog, /"drainedAlready":true/, 'no second wait');
    t.match(stopLog, /BGP sessions ended \(departure\): bird cease/, 'BIRD (no N bit) gets a Cease');
    const p = await bird.waitFor(async () => {
      const pr = await bird.protocol(A);
      return pr?.message !== undefined ? pr : undefined;
    }, "BIRD shows node-a's shutdown message");
    t.match(p.message ?? '', /herald leaving: the node is leaving service/, "BIRD shows node-a's RFC 9003 text");
    t.notMatch(p.raw, /graceful restart active/, 'no graceful restart after a departure');
    t.equal(removed(B), 0, "node-b's path was never removed");
  });
}
