// The control-plane tier, outages for real: two `herald run` nodes announce a Local Service's VIP (real EndpointSlices)
// to one real BIRD; kube-apiserver is stopped for 30 s while etcd's history is moved on and compacted, then started
// again. Nothing may be withdrawn meanwhile nor when the watches come back and find their resourceVersion compacted
// (410 Gone → relist), and changes made after the restart must reach BIRD.
import t from 'tap';
import { loopbackBlock, protoName, sleep, waitHeraldUp, withLogs } from '../e2e/harness.ts';
import type { NodeSpec } from '../e2e/harness.ts';
import { controlPlaneTier, createNode, createPod, createService, setIngress, setPodReady, sliceEndpoints, startCluster, startNodes, until } from './harness.ts';

const VIP = '198.51.100.30';
const PREFIX = `${VIP}/32`;
const OUTAGE_MS = 30_000;

controlPlaneTier(t, 'apiserver stopped 30 s and etcd compacted: nothing withdrawn, later changes reach BIRD', 420_000, async (t) => {
  const block = loopbackBlock();
  const cp = await startCluster(t, { host: `${block}200` });
  const api = cp.admin;
  const nodes: NodeSpec[] = ['a', 'b'].map((x, i) => ({ name: `node-${x}`, ip: `${block}${i + 1}` }));
  const [A, B] = nodes.map((n) => protoName(n.name)) as [string, string];
  const names = nodes.map((n) => n.name);
  for (const n of nodes) await createNode(api, n.name, n.ip);
  await createService(api, { name: 'web', selector: { app: 'web' }, etp: 'Local' });
  await setIngress(api, 'web', [VIP]);
  for (const [i, n] of nodes.entries()) {
    await createPod(api, { name: `web-${n.name}`, nodeName: n.name, labels: { app: 'web' } });
    await setPodReady(api, { name: `web-${n.name}`, podIP: `10.244.${i + 1}.10`, hostIP: n.ip, ready: true });
  }
  const { heralds, paths, waitPaths } = await startNodes(t, cp, block, nodes, PREFIX);
  for (const h of heralds) await waitHeraldUp(h);
  await waitPaths([A, B], 'before the outage: both nodes');

  // The outage. etcd's revision moves on (a key outside the apiserver's prefix) and its history is compacted, so
  // every resourceVersion Herald holds is gone when the apiserver is back.
  await cp.stopApiserver();
  const downAt = Date.now();
  await cp.etcdPut('/herald-test/outage', String(downAt));
  const compacted = await cp.compactEtcd();
  t.comment(`apiserver stopped; etcd compacted at revision ${compacted}`);
  const during: string[][] = [];
  while (Date.now() - downAt < OUTAGE_MS) {
    await sleep(5000);
    during.push(await paths());
  }
  t.ok(during.length >= 5, `BIRD read ${during.length} times during the outage`);
  t.same(
    during.filter((p) => p.join() !== [A, B].join()),
    [],
    'nothing withdrawn while the apiserver was down',
  );
  heralds.forEach((h, i) => t.ok(h.proc.alive, `${names[i]}: herald running through the outage`));

  const upAt = new Date();
  await cp.startApiserver();
  t.comment(`apiserver back after ${Math.round((Date.now() - downAt) / 1000)} s`);

  // Herald reconnects from its old resourceVersions, the watch ends at once with 410 Gone (an ERROR event in a 200
  // stream) and Herald reads the collection again: the audit log shows, per node and resource, a watch from a
  // compacted resourceVersion followed by a streaming list (a watch with sendInitialEvents, from the watch cache) or,
  // where the apiserver has none, a LIST.
  const herald = 'system:serviceaccount:herald-system:herald';
  const after = () => cp.audit().filter((e) => e.user.username === herald && Date.parse(e.stageTimestamp) >= upAt.getTime());
  const rvOf = (uri: string) => Number(new URL(uri, 'https://x').searchParams.get('resourceVersion') ?? NaN);
  const relisted = (resource: string) => {
    const events = after().filter((e) => e.objectRef?.resource === resource);
    const streaming = (e: { requestURI: string }) => e.requestURI.includes('sendInitialEvents=true');
    const staleWatch = events.findIndex((e) => e.verb === 'watch' && e.stage === 'ResponseComplete' && !streaming(e) && rvOf(e.requestURI) < compacted);
    const reads = (e: { verb: string; stage: string; requestURI: string }) => e.verb === 'list' || (e.verb === 'watch' && e.stage === 'ResponseStarted' && streaming(e));
    return staleWatch >= 0 && events.slice(staleWatch).filter(reads).length >= nodes.length;
  };
  const resources = ['services', 'endpointslices', 'nodes'];
  await withLogs(() => until(`Herald relisted ${resources.join(', ')} after a watch from a compacted resourceVersion`, () => resources.every(relisted), 120_000), heralds, names);
  for (const r of resources) t.ok(relisted(r), `${r}: watch from a compacted resourceVersion, then a read of the collection (410 Gone handled)`);
  t.same(await paths(), [A, B], 'nothing withdrawn by the relist');

  // Changes after the restart reach BIRD.
  await setPodReady(api, { name: 'web-node-b', podIP: '10.244.2.10', hostIP: nodes[1]!.ip, ready: false });
  // kube-controller-manager's own informers come back on client-go's backoff (up to 30 s per try, and they too see
  // the restarted apiserver's first 403s): give it time.
  await until("the slice shows node-b's pod unready", async () => (await sliceEndpoints(api, 'web')).find((e) => e.nodeName === 'node-b')?.conditions?.ready === false, 180_000);
  await waitPaths([A], 'node-b unready after the restart: withdrawn');
  await setPodReady(api, { name: 'web-node-b', podIP: '10.244.2.10', hostIP: nodes[1]!.ip, ready: true });
  await waitPaths([A, B], 'node-b ready again');
});
