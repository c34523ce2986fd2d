// End to end, leaf-spine (RFC 7938): two racks, each with its own top-of-rack BIRD 2 and its own AS number. Two
// `herald run` processes (node-1 in rack a, node-2 in rack b) read their peers from BGPPeer objects on the fake
// apiserver (the real @kubernetes/client-node underneath): each BGPPeer selects its rack's nodes (nodeSelectors) and
// sets the rack's AS number (myASN); each node's BGPNodeConfigOverride gives its source address. Each node peers only
// with its own rack's BIRD, with its rack's AS; moving node-2's label to rack a moves its session (and its route) to
// BIRD a without touching node-1's session; a change of one BGPPeer reaches only its sessions. Each node's
// BGPNodeStatus shows its sessions and VIP counts, and `herald peers/services --all-nodes` asks each node (its pod, through
// the fake apiserver's pod proxy, at its metrics listener) and prints them all.
import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { birdAvailable, freePort, sinceMoved } from '../helpers/bird.ts';
import type { Bird } from '../helpers/bird.ts';
import { FakeApiServer } from '../helpers/fake-apiserver.ts';
import { heraldObject, node, service, slice } from '../helpers/k8s-objects.ts';
import { missingPrerequisite } from '../helpers/prereq.ts';
import { HERALD_GROUP, HERALD_PLURALS, HERALD_VERSION } from '../../src/k8s/herald-kinds.ts';
import type { HeraldKind } from '../../src/k8s/herald-kinds.ts';
import type { NodeStatus } from '../../src/crd/status.ts';
import { main } from '../../src/cli/main.ts';
import { adminJson, loopbackBlock, pathsFor, protoName, startBird, startHerald, waitHeraldUp, withLogs, writeKubeconfig } from './harness.ts';
import type { HeraldNode, NodeSpec } from './harness.ts';

const VIP = '198.51.100.20';
const PREFIX = `${VIP}/32`;
const RACK_AS = { a: 64601, b: 64602 } as const;
const BIRD_AS = { a: 65101, b: 65102 } as const;
const NS = 'herald-system';

if (!missingPrerequisite({ bird2: birdAvailable() })) {
  t.setTimeout(330000);
  t.test('two racks, two BIRDs: per-rack peers and AS numbers from BGPPeer objects; a label move moves the session', { timeout: 300_000 }, async (t) => {
    const block = loopbackBlock();
    const nodes: NodeSpec[] = [
      { name: 'node-1', ip: `${block}1` },
      { name: 'node-2', ip: `${block}2` },
    ];
    const [N1, N2] = nodes.map((n) => protoName(n.name)) as [string, string];
    const names = nodes.map((n) => n.name);
    const dir = mkdtempSync(join(tmpdir(), 'herald-e2e-racks-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));

    const api = new FakeApiServer();
    for (const kind of Object.keys(HERALD_PLURALS) as HeraldKind[]) api.registerResource({ group: HERALD_GROUP, version: HERALD_VERSION, plural: HERALD_PLURALS[kind], kind, namespaced: true });
    await api.start();
    t.teardown(() => api.stop());
    const put = (kind: HeraldKind, name: string, spec: unknown) => api.upsert(HERALD_PLURALS[kind], heraldObject(kind, name, spec, { ns: NS }), HERALD_GROUP);
    const label = (n: NodeSpec, rack: 'a' | 'b') => api.upsert('nodes', node(n.name, { labels: { 'topology.example/rack': rack } }));
    label(nodes[0]!, 'a');
    label(nodes[1]!, 'b');
    // Cluster policy without kube-proxy probes: this test is about peering (the health tests are elsewhere), and the
    // CLI runs in this process, whose event loop would also serve fake kube-proxies.
    api.upsert('services', service('web', { etp: 'Cluster', lbIPs: [VIP], externalIPs: ['8.8.8.8'] })); // 8.8.8.8: outside allowedPrefixes
    api.upsert('endpointslices', slice('web-1', 'web', [['10.1.0.1', 'node-1'], ['10.1.0.2', 'node-2']]), 'discovery.k8s.io');

    // One BIRD per rack, each with a passive protocol for both nodes that expects the rack's AS number.
    const birds: Record<'a' | 'b', { bird: Bird; ip: string; port: number }> = {} as Record<'a' | 'b', { bird: Bird; ip: string; port: number }>;
    for (const [rack, host] of [['a', 100], ['b', 101]] as const) {
      const ip = `${block}${host}`;
      const port = await freePort(ip);
      const bird = await startBird({ ip, port, birdAs: BIRD_AS[rack], heraldAs: RACK_AS[rack], nodes });
      t.teardown(() => bird.stop());
      birds[rack] = { bird, ip, port };
    }
    const torPeer = (rack: 'a' | 'b', extra: object = {}) => ({
      peerAddress: birds[rack].ip,
      peerPort: birds[rack].port,
      peerASN: BIRD_AS[rack],
      myASN: RACK_AS[rack],
      nodeSelectors: [{ matchLabels: { 'topology.example/rack': rack } }],
      ebgpMultihop: 2,
      holdTime: 30,
      connectTime: 1,
      families: ['ipv4-unicast'],
      ...extra,
    });
    put('BGPPeer', 'tor-a', torPeer('a'));
    put('BGPPeer', 'tor-b', torPeer('b'));
    for (const n of nodes) put('BGPNodeConfigOverride', n.name, { sourceAddresses: [n.ip] });

    const kubeconfig = writeKubeconfig(join(dir, 'kubeconfig.yaml'), api.url);
    const heralds: HeraldNode[] = [];
    for (const n of nodes) {
      const metricsPort = await freePort('127.0.0.1');
      const h = await startHerald({ node: n, heraldAs: 65000, peers: [], source: { kubernetes: { kubeconfig } }, env: { POD_NAMESPACE: NS }, config: { kubeProxy: { enabled: false }, allowedPrefixes: [PREFIX], metrics: { address: '127.0.0.1', port: metricsPort } } });
      t.teardown(() => h.proc.stop(5000));
      heralds.push(h);
      // Its pod, as the DaemonSet's: the CLI asks it through the pod proxy, at its metrics port.
      api.upsert('pods', { metadata: { name: `herald-${n.name}`, namespace: NS, labels: { 'app.kubernetes.io/name': 'herald' }, ownerReferences: [{ kind: 'DaemonSet', name: 'herald' }] }, spec: { nodeName: n.name, containers: [{ name: 'herald', ports: [{ name: 'metrics', containerPort: metricsPort }] }] }, status: { podIP: '127.0.0.1', conditions: [{ type: 'Ready', status: 'True' }] } });
    }
    const state = async (rack: 'a' | 'b', proto: string) => (await birds[rack].bird.protocol(proto))?.bgpState;
    const waitState = (rack: 'a' | 'b', proto: string, want: (s: string | undefined) => boolean, what: string) =>
      withLogs(() => birds[rack].bird.waitFor(async () => want(await state(rack, proto)) || undefined, what, 60_000), heralds, names);
    const waitPaths = async (rack: 'a' | 'b', want: string[], what: string) => {
      await withLogs(() => birds[rack].bird.waitFor(async () => (await pathsFor(birds[rack].bird, PREFIX)).join() === want.join() || undefined, `${what}: paths ${want.join(',') || '(none)'}`, 60_000), heralds, names);
      t.same(await pathsFor(birds[rack].bird, PREFIX), want, what);
    };

    // 1. Each node with its own rack's BIRD, with the rack's AS number; never with the other rack's.
    for (const h of heralds) await waitHeraldUp(h);
    await waitState('a', N1, (s) => s === 'Established', 'node-1 Established with BIRD a');
    await waitState('b', N2, (s) => s === 'Established', 'node-2 Established with BIRD b');
    await waitPaths('a', [N1], 'rack a: the VIP from node-1 only');
    await waitPaths('b', [N2], 'rack b: the VIP from node-2 only');
    const routeA = (await birds.a.bird.routes(`for ${PREFIX} table master4`)).find((r) => r.protocol === N1);
    t.same(routeA?.bgpPath, [RACK_AS.a], 'AS_PATH is rack a\'s AS');
    t.same(routeA?.bgpNextHop, [nodes[0]!.ip], 'NEXT_HOP is node-1 (its override\'s source address)');
    t.same((await birds.b.bird.routes(`for ${PREFIX} table master4`)).find((r) => r.protocol === N2)?.bgpPath, [RACK_AS.b], 'AS_PATH is rack b\'s AS');
    t.not(await state('a', N2), 'Established', 'node-2 has no session with BIRD a');
    t.not(await state('b', N1), 'Established', 'node-1 has no session with BIRD b');
    const peers2 = (await adminJson(heralds[1]!.adminPort, '/api/v1/peers')) as unknown;
    t.match(JSON.stringify(peers2), /tor-b/, 'node-2 runs tor-b');
    t.notMatch(JSON.stringify(peers2), /tor-a/, 'node-2 does not run tor-a');

    // 1b. Each node's BGPNodeStatus shows what BIRD sees; `herald peers --all-nodes` prints them with a NODE column.
    const nodeStatus = (n: string) => api.get(HERALD_PLURALS.BGPNodeStatus, NS, n, HERALD_GROUP)?.status as NodeStatus | undefined;
    const sessionOf = (n: string, peer: string) => nodeStatus(n)?.sessions?.find((x) => x.peer === peer);
    // A BGPNodeStatus is written at most every 30 s plus up to 6 s of jitter (src/status/node-status.ts): wait longer.
    const waitStatus = (what: string, check: () => boolean) => withLogs(() => heralds[0]!.proc.waitFor(() => check() || undefined, what, 60_000), heralds, names);
    await waitStatus('node-1 status: tor-a Established', () => sessionOf('node-1', 'tor-a')?.state === 'Established');
    await waitStatus('node-2 status: tor-b Established', () => sessionOf('node-2', 'tor-b')?.state === 'Established');
    t.match(sessionOf('node-1', 'tor-a'), { source: 'BGPPeer', peerAddress: birds.a.ip, peerASN: BIRD_AS.a, myASN: RACK_AS.a, prefixesSent: 1 }, 'node-1\'s status: its session as BIRD a sees it');
    t.same(nodeStatus('node-1')?.sessions?.map((x) => x.peer), ['tor-a'], 'node-1 lists only its rack\'s peer');
    await waitStatus('node-1 status: the VIP announced', () => (nodeStatus('node-1')?.vipsAnnounced ?? 0) >= 1);
    t.match(nodeStatus('node-1'), { sessionsEstablished: 1, sessionsConfigured: 1, vipsAnnounced: 1, override: 'node-1', lastChange: /^\d{4}-/ });
    t.ok(JSON.stringify(nodeStatus('node-1')).length < 4096, 'a small summary');
    const cli = async (args: string[]) => {
      let out = '';
      let err = '';
      const code = await main(args, { out: { write: (x: string) => (out += x) }, err: { write: (x: string) => (err += x) }, env: {} });
      return { code, out, err };
    };
    const table = await cli(['peers', '--all-nodes', '--kubeconfig', kubeconfig, '-n', NS]);
    t.equal(table.code, 0, table.err);
    t.match(table.out, /^NODE\s+PEER\s+ADDRESS/, 'a NODE column');
    t.match(table.out, new RegExp(`node-1\\s+tor-a\\s+${birds.a.ip.replaceAll('.', '\\.')}:${birds.a.port}\\s+${BIRD_AS.a}\\s+${RACK_AS.a}\\s+Established`), 'node-1 with tor-a');
    t.match(table.out, new RegExp(`node-2\\s+tor-b\\s+\\S+\\s+${BIRD_AS.b}\\s+${RACK_AS.b}\\s+Established`), 'node-2 with tor-b');
    const asJson = await cli(['peers', '--all-nodes', '--json', '--kubeconfig', kubeconfig, '-n', NS]);
    t.same((JSON.parse(asJson.out) as Array<{ node: string; name: string }>).map((x) => `${x.node}/${x.name}`), ['node-1/tor-a', 'node-2/tor-b'], '--json: one object per session with its node');
    const svc = await cli(['services', 'default/web', '--all-nodes', '--kubeconfig', kubeconfig, '-n', NS]);
    t.match(svc.out, new RegExp(`node-1\\s+default/web\\s+${VIP.replaceAll('.', '\\.')}\\s+loadBalancer\\s+yes`), 'herald services --all-nodes: node-1 announces');
    t.match(svc.out, /node-2\s+default\/web\s+\S+\s+loadBalancer\s+yes/, 'and node-2');
    t.match(svc.out, /node-1\s+default\/web\s+8\.8\.8\.8\s+externalIP\s+no\s+PrefixNotAllowed/, "a tenant's externalIP outside allowedPrefixes: PrefixNotAllowed through --all-nodes (issue 30)");

    // 2. node-2 moves to rack a: its session moves to BIRD a, with rack a's AS; node-1's session is not touched.
    const sinceN1 = (await birds.a.bird.protocol(N1))?.since;
    label(nodes[1]!, 'a');
    await waitState('a', N2, (s) => s === 'Established', 'node-2 Established with BIRD a after the move');
    await waitState('b', N2, (s) => s !== 'Established', 'node-2 no longer Established with BIRD b');
    await waitPaths('a', [N1, N2], 'rack a: the VIP from both nodes');
    await waitPaths('b', [], 'rack b: no path left');
    t.same((await birds.a.bird.routes(`for ${PREFIX} table master4`)).find((r) => r.protocol === N2)?.bgpPath, [RACK_AS.a], 'node-2 now speaks rack a\'s AS');
    t.notOk(sinceMoved(sinceN1, (await birds.a.bird.protocol(N1))?.since), 'node-1\'s session with BIRD a was not reset');
    t.equal(await state('a', N1), 'Established');
    await waitStatus('node-2 status: tor-a Established with rack a\'s AS', () => sessionOf('node-2', 'tor-a')?.state === 'Established' && sessionOf('node-2', 'tor-a')?.myASN === RACK_AS.a);
    t.same(nodeStatus('node-2')?.sessions?.map((x) => x.peer), ['tor-a'], 'node-2\'s status no longer lists tor-b');

    // 3. A change of one BGPPeer reaches only its sessions: tor-b (no node uses it now) changes nothing on BIRD a;
    //    tor-a's new hold time resets exactly the two tor-a sessions (hold time is in OPEN).
    const applied = () => heralds[1]!.proc.stdout.split('configuration objects applied').length;
    const appliedBefore = applied();
    put('BGPPeer', 'tor-b', torPeer('b', { holdTime: 45 }));
    await withLogs(() => heralds[1]!.proc.waitFor(() => applied() > appliedBefore, 'node-2 applied the changed object', 30_000), heralds, names);
    t.notOk(sinceMoved(sinceN1, (await birds.a.bird.protocol(N1))?.since), 'a change of an unused peer touches no session');
    // Read before the change: the sessions reset and come back within milliseconds of it (a read after it could
    // already see the new session, and then wait for a restart that is over).
    const sinceN2 = (await birds.a.bird.protocol(N2))?.since;
    put('BGPPeer', 'tor-a', torPeer('a', { holdTime: 60 }));
    await withLogs(() => birds.a.bird.waitFor(async () => sinceMoved(sinceN1, (await birds.a.bird.protocol(N1))?.since) || undefined, 'node-1 session with BIRD a restarted', 60_000), heralds, names);
    await withLogs(() => birds.a.bird.waitFor(async () => sinceMoved(sinceN2, (await birds.a.bird.protocol(N2))?.since) || undefined, 'node-2 session with BIRD a restarted', 60_000), heralds, names);
    await waitState('a', N1, (s) => s === 'Established', 'node-1 Established again');
    await waitState('a', N2, (s) => s === 'Established', 'node-2 Established again');
    await waitPaths('a', [N1, N2], 'rack a: the VIP from both nodes after the hold time change');
  });
}
