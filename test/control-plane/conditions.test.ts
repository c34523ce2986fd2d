// The control-plane tier, the conditions of Herald's objects (src/status/, docs/decisions.md "Status"): two
// `herald run` nodes against a real kube-apiserver, their peers, advertisement and pool from objects only. BIRD knows
// node-a only, so the BGPPeer `tor` is Established on 1 of its 2 selected nodes; `tor-dup` repeats tor's address, which
// the apiserver accepts and every node rejects. The elected status writer (Lease herald-status) fills in each
// object's Valid and InUse conditions and the printer columns, as `kubectl get` shows them (server-side Table
// printing); an unrelated change rewrites nothing; a label move changes the peer's counts without a new transition.
// The BGPAdvertisement sets maxNodesPerVip 1 (the nodes then read the node set the elected writer publishes): one
// node announces the VIP.
import t from 'tap';
import { loopbackBlock, startBird, waitHeraldUp, withLogs } from '../e2e/harness.ts';
import type { HeraldNode, NodeSpec } from '../e2e/harness.ts';
import { freePort } from '../helpers/bird.ts';
import type { ControlPlane } from '../helpers/control-plane.ts';
import type { Condition, HeraldKind } from '../../src/k8s/herald-kinds.ts';
import { HERALD_API_VERSION, HERALD_PLURALS } from '../../src/k8s/herald-kinds.ts';
import { BIRD_AS, HERALD_AS, controlPlaneTier, createHeraldPods, createNode, createPod, createService, heraldLog, nodeKubeconfig, setPodReady, startCluster, startHerald, until } from './harness.ts';

const NS = 'herald-system';
const POOL = '198.51.100.48/29';
const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io';

interface Obj {
  metadata: { name: string; generation?: number };
  status?: { conditions?: Condition[]; [k: string]: unknown };
}

const path = (kind: HeraldKind, name?: string) => `/apis/${HERALD_API_VERSION}/namespaces/${NS}/${HERALD_PLURALS[kind]}${name !== undefined ? `/${name}` : ''}`;
const cond = (o: Obj | undefined, type: string) => o?.status?.conditions?.find((c) => c.type === type);

/** `kubectl get <plural>`: the server-side Table (column names, and each row's cells by column name). */
async function kubectlGet(cp: ControlPlane, kind: HeraldKind): Promise<Map<string, Record<string, unknown>>> {
  const a = await cp.admin.request('GET', path(kind), undefined, undefined, 15_000, TABLE);
  if (a.status !== 200) throw new Error(`GET ${kind} as Table: ${a.status}`);
  const body = a.body as { columnDefinitions: { name: string }[]; rows: { cells: unknown[] }[] };
  const names = body.columnDefinitions.map((c) => c.name);
  return new Map(body.rows.map((r) => [String(r.cells[0]), Object.fromEntries(names.map((n, i) => [n, r.cells[i]]))]));
}

controlPlaneTier(t, 'conditions of BGPPeer, BGPAdvertisement, IPAddressPool and overrides from one elected writer, as kubectl get shows them', 300_000, async (t) => {
  const block = loopbackBlock();
  // The garbage collector deletes a deleted Node's BGPNodeStatus (step 9).
  // One `herald run` per node doing everything (no herald controller): the one-process install's rights.
  const cp = await startCluster(t, { host: `${block}200`, controllers: ['endpointslice', 'serviceaccount', 'garbagecollector'], standalone: true });
  const api = cp.admin;
  const nodes: NodeSpec[] = ['a', 'b'].map((x, i) => ({ name: `node-${x}`, ip: `${block}${i + 1}` }));
  const names = nodes.map((n) => n.name);
  const label = (n: string, labels: Record<string, string | null>) => api.must('PATCH', `/api/v1/nodes/${n}`, { metadata: { labels } }, 'application/merge-patch+json');
  for (const n of nodes) {
    await createNode(api, n.name, n.ip);
    await label(n.name, { rack: 'a' });
  }
  // BIRD has a protocol for node-a only: node-b's session never comes up.
  const birdIp = `${block}100`;
  const birdPort = await freePort(birdIp);
  const bird = await startBird({ ip: birdIp, port: birdPort, birdAs: BIRD_AS, heraldAs: HERALD_AS, nodes: [nodes[0]!] });
  t.teardown(() => bird.stop());

  const create = (kind: HeraldKind, name: string, spec: unknown) => api.must('POST', path(kind), { apiVersion: HERALD_API_VERSION, kind, metadata: { name }, spec });
  const tor = { peerAddress: birdIp, peerPort: birdPort, peerASN: BIRD_AS, nodeSelectors: [{ matchLabels: { rack: 'a' } }], ebgpMultihop: 2, holdTime: 30, connectTime: 1, families: ['ipv4-unicast'] };
  await create('BGPPeer', 'tor', tor);
  await create('BGPPeer', 'tor-dup', { ...tor, holdTime: 60 }); // accepted by the apiserver; its address is tor's
  for (const n of nodes) await create('BGPNodeConfigOverride', n.name, { sourceAddresses: [n.ip] });
  await create('BGPAdvertisement', 'lb', { addressKinds: ['loadBalancer'], maxNodesPerVip: 1 });
  await create('IPAddressPool', 'lb-pool', { addresses: [POOL] });
  await createPod(api, { name: 'web-1', nodeName: 'node-a', labels: { app: 'web' } });
  await setPodReady(api, { name: 'web-1', podIP: '10.244.1.10', hostIP: nodes[0]!.ip, ready: true });
  await createService(api, { name: 'web', selector: { app: 'web' }, etp: 'Cluster' });

  // Herald's DaemonSet pods, Ready: the status writer counts a node while its Herald pod is Ready.
  await createHeraldPods(api, { namespace: NS, nodes });
  const heralds: HeraldNode[] = [];
  // No peer in the file: every session comes from the BGPPeer objects.
  for (const n of nodes) heralds.push(await startHerald(t, { node: n, kubeconfig: await nodeKubeconfig(cp, n.name), bird: { ip: birdIp, port: birdPort }, extra: { peers: [] } }));
  for (const h of heralds) await waitHeraldUp(h);
  const get = async (kind: HeraldKind, name: string): Promise<Obj> => (await api.must('GET', path(kind, name))).body as Obj;
  const waitFor = <T>(what: string, check: () => Promise<T | undefined | false>) => withLogs(() => until(what, check, 120_000, 500), heralds, names);

  // 1. The peer: Established on 1 of 2 selected nodes, counts for the printer columns, observedGeneration.
  const peer = await waitFor('tor: InUse Established on 1 of 2', async () => {
    const o = await get('BGPPeer', 'tor');
    return /^Established on 1 of 2 selected nodes/.test(cond(o, 'InUse')?.message ?? '') && o.status?.['establishedNodes'] === 1 ? o : undefined;
  });
  t.match(cond(peer, 'InUse'), { status: 'True', reason: 'Established', message: 'Established on 1 of 2 selected nodes; not Established: node-b.', observedGeneration: peer.metadata.generation });
  t.match(cond(peer, 'Valid'), { status: 'True', reason: 'Valid', observedGeneration: peer.metadata.generation });
  t.same([peer.status?.['nodes'], peer.status?.['establishedNodes']], [2, 1]);

  // 2. The invalid one: Valid False naming the field and the fix; not in use.
  const dup = await waitFor('tor-dup: Valid False', async () => {
    const o = await get('BGPPeer', 'tor-dup');
    return cond(o, 'Valid')?.status === 'False' ? o : undefined;
  });
  t.match(cond(dup, 'Valid'), { reason: 'Invalid', message: /^spec\.peerAddress: peer "tor" \(a BGPPeer\) already uses 127\.[\d.]+ port \d+\. Every node ignores this BGPPeer until it is fixed/ });
  t.match(cond(dup, 'InUse'), { status: 'False', reason: 'Invalid' });

  // 3. `kubectl get bgppeers`: the printer columns filled in.
  const peers = await kubectlGet(cp, 'BGPPeer');
  t.match(peers.get('tor'), { Valid: 'True', Nodes: 2, Established: 1 }, 'kubectl get bgppeers: tor');
  t.match(peers.get('tor-dup'), { Valid: 'False', Nodes: 0, Established: 0 }, 'kubectl get bgppeers: tor-dup');

  // 4. The pool: the allocator (elected on its own Lease) assigns the Service an address; the pool counts it.
  const pool = await waitFor('lb-pool: one IPv4 address assigned', async () => {
    const o = await get('IPAddressPool', 'lb-pool');
    return o.status?.['assignedIPv4'] === 1 ? o : undefined;
  });
  t.match(cond(pool, 'InUse'), { status: 'True', reason: 'Allocated', message: /^1 address assigned to Services \(IPv4 1 assigned, 7 available\)\.$/ });
  t.match((await kubectlGet(cp, 'IPAddressPool')).get('lb-pool'), { Valid: 'True', IPv4: 1, IPv6: 0 }, 'kubectl get ipaddresspools');

  // 5. The advertisement: maxNodesPerVip 1 from the CRD, so one node announces the VIP; the status counts it.
  const ad = await waitFor('lb: one VIP announced from one node', async () => {
    const o = await get('BGPAdvertisement', 'lb');
    return o.status?.['announcedVIPs'] === 1 ? o : undefined;
  });
  t.match(cond(ad, 'InUse'), { status: 'True', reason: 'Announced', message: 'VIPs announced through it from 1 node (at most 1 by one node).' });
  t.equal(ad.status?.['nodes'], 1, 'from one node: maxNodesPerVip 1 from the BGPAdvertisement');
  // Each node writes its own BGPNodeStatus (a summary, on change): wait until both count the VIP.
  type Summary = { node: string; announced: number; notChosen: number; bytes: number };
  const summaries = await waitFor('both nodes count the VIP', async () => {
    const items = (await api.must('GET', `/apis/${HERALD_API_VERSION}/namespaces/${NS}/bgpnodestatuses`)).body.items as { metadata: { name: string }; status?: { vipsAnnounced?: number; notAnnounced?: { reason: string; vips: number }[] } }[];
    const all: Summary[] = items.map((s) => ({ node: s.metadata.name, announced: s.status?.vipsAnnounced ?? 0, notChosen: s.status?.notAnnounced?.find((r) => r.reason === 'NotChosen')?.vips ?? 0, bytes: JSON.stringify(s.status ?? {}).length }));
    return all.filter((x) => x.announced + x.notChosen === 1).length === 2 ? all : undefined;
  });
  t.equal(summaries.filter((v) => v.announced === 1).length, 1, 'one node announces the VIP');
  t.equal(summaries.filter((v) => v.notChosen === 1).length, 1, `the other counts it NotChosen (${JSON.stringify(summaries)})`);
  t.ok(summaries.every((v) => v.bytes < 4096), 'each status is a small summary');
  // Herald's informers read from the watch cache: streaming lists (a watch with sendInitialEvents), never a LIST.
  const sa = 'system:serviceaccount:herald-system:herald';
  const reads = cp.audit().filter((e) => e.user.username === sa && e.objectRef?.resource === 'services');
  t.ok(reads.some((e) => e.verb === 'watch' && e.requestURI.includes('sendInitialEvents=true')), 'Services read by a streaming list');
  t.same(reads.filter((e) => e.verb === 'list').map((e) => e.requestURI), [], 'no LIST of Services');
  t.match((await kubectlGet(cp, 'BGPAdvertisement')).get('lb'), { Valid: 'True', Nodes: 1, VIPs: 1 }, 'kubectl get bgpadvertisements');

  // 6. Each node's override is in force.
  for (const n of names) {
    const o = await waitFor(`override ${n} InForce`, async () => {
      const x = await get('BGPNodeConfigOverride', n);
      return cond(x, 'InUse')?.reason === 'InForce' ? x : undefined;
    });
    t.match(cond(o, 'InUse'), { status: 'True', message: `In force on node ${n}.` });
  }

  // 7. Only what changed is written: an unrelated Node label triggers a pass and no write.
  const writesOf = (name: string) => cp.audit().filter((e) => e.verb === 'patch' && e.objectRef?.resource === 'bgppeers' && e.objectRef.subresource === 'status' && e.objectRef.name === name && e.stage === 'ResponseComplete').length;
  const before = writesOf('tor');
  t.ok(before >= 1, `tor's status was written (${before} writes)`);
  await label('node-a', { unrelated: 'x' });
  await new Promise((r) => setTimeout(r, 12_000));
  t.equal(writesOf('tor'), before, 'no write while nothing it shows changed');
  const holders = (await api.must('GET', `/apis/coordination.k8s.io/v1/namespaces/${NS}/leases/herald-status`)).body.spec.holderIdentity;
  t.ok(names.includes(holders), `the Lease herald-status is held by one Herald (${holders})`);
  const led = heralds.map((h) => heraldLog(h).filter((l) => l['msg'] === 'became the status writer of the configuration objects').length);
  t.same(led, names.map((n) => (n === holders ? 1 : 0)), 'only the Lease holder became the status writer');

  // 8. node-b leaves rack a: tor selects one node; InUse stays True, so its transition time stays.
  const since = cond(peer, 'InUse')?.lastTransitionTime;
  await label('node-b', { rack: 'b' });
  const moved = await waitFor('tor: Established on 1 of 1', async () => {
    const o = await get('BGPPeer', 'tor');
    return cond(o, 'InUse')?.message === 'Established on 1 of 1 selected node.' ? o : undefined;
  });
  t.same([moved.status?.['nodes'], moved.status?.['establishedNodes']], [1, 1]);
  t.equal(cond(moved, 'InUse')?.lastTransitionTime, since, 'lastTransitionTime unchanged: the status stayed True');

  // 9. Each BGPNodeStatus is owned by its Node: deleting node-b deletes node-b's (Kubernetes' garbage collector), and
  //    node-b's Herald, still running, does not create it again.
  const statusPath = (n: string) => `/apis/${HERALD_API_VERSION}/namespaces/${NS}/bgpnodestatuses/${n}`;
  const uidB = (await api.must('GET', '/api/v1/nodes/node-b')).body.metadata.uid as string;
  t.same((await api.must('GET', statusPath('node-b'))).body.metadata.ownerReferences, [{ apiVersion: 'v1', kind: 'Node', name: 'node-b', uid: uidB }], "node-b's BGPNodeStatus is owned by Node node-b");
  await api.must('DELETE', '/api/v1/nodes/node-b');
  await waitFor("node-b's BGPNodeStatus deleted with its Node", async () => (await api.request('GET', statusPath('node-b'))).status === 404);
  await new Promise((r) => setTimeout(r, 40_000)); // node-b's Herald writes its status on change, every 30-36 s at most
  t.equal((await api.request('GET', statusPath('node-b'))).status, 404, "node-b's Herald did not create it again");
  t.equal((await api.request('GET', statusPath('node-a'))).status, 200, "node-a's stays");
});
