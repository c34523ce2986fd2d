// The control-plane tier, EndpointSlices: three `herald run` nodes reach a real kube-apiserver with the shipped
// ServiceAccount token and peer with one real BIRD. The test acts as the kubelet (Nodes, Pods bound with nodeName,
// pod Ready through the status subresource, graceful deletion); the real EndpointSlice controller of
// kube-controller-manager writes the slices. BIRD must hold the VIP from exactly the nodes with a ready local pod
// (externalTrafficPolicy Local); a terminating pod withdraws its node; a switch to Cluster announces from every node,
// and back to Local follows again.
import t from 'tap';
import { adminJson, loopbackBlock, protoName, waitHeraldUp } from '../e2e/harness.ts';
import type { NodeSpec } from '../e2e/harness.ts';
import { controlPlaneTier, createNode, createPod, createService, deletePodGracefully, finishPodDeletion, setIngress, setPodReady, sliceEndpoints, startCluster, startNodes, until } from './harness.ts';

const VIP = '198.51.100.20';
const PREFIX = `${VIP}/32`;

controlPlaneTier(t, 'real EndpointSlices: VIP from the nodes with ready local pods; terminating withdraws; Local ⇄ Cluster', 300_000, async (t) => {
  const block = loopbackBlock();
  const cp = await startCluster(t, { host: `${block}200` });
  const api = cp.admin;
  const nodes: NodeSpec[] = ['a', 'b', 'c'].map((x, i) => ({ name: `node-${x}`, ip: `${block}${i + 1}` }));
  const [A, B, C] = nodes.map((n) => protoName(n.name)) as [string, string, string];
  const names = nodes.map((n) => n.name);
  for (const n of nodes) await createNode(api, n.name, n.ip);

  // The workload: one pod per node; node-c's is not ready yet.
  await createService(api, { name: 'web', selector: { app: 'web' }, etp: 'Local' });
  await setIngress(api, 'web', [VIP]);
  const podIP = (i: number) => `10.244.${i + 1}.10`;
  for (const [i, n] of nodes.entries()) {
    await createPod(api, { name: `web-${n.name}`, nodeName: n.name, labels: { app: 'web' } });
    await setPodReady(api, { name: `web-${n.name}`, podIP: podIP(i), hostIP: n.ip, ready: n.name !== 'node-c' });
  }
  const endpoint = async (nodeName: string) => (await sliceEndpoints(api, 'web')).find((e) => e.nodeName === nodeName);
  await until('the EndpointSlice controller lists the three pods', async () => (await sliceEndpoints(api, 'web')).length === 3);
  t.match(await endpoint('node-a'), { addresses: [podIP(0)], nodeName: 'node-a', conditions: { ready: true, serving: true, terminating: false } }, 'the real slice: node-a ready');
  t.match(await endpoint('node-c'), { addresses: [podIP(2)], nodeName: 'node-c', conditions: { ready: false } }, 'the real slice: node-c not ready');

  const { heralds, waitPaths } = await startNodes(t, cp, block, nodes, PREFIX);

  // 1. Ready pods on node-a and node-b: the VIP from exactly those two.
  for (const h of heralds) await waitHeraldUp(h);
  await waitPaths([A, B], 'Local: ready local pods on node-a and node-b');
  t.match(JSON.stringify(await adminJson(heralds[2]!.adminPort, '/api/v1/services')), /NoLocalReadyEndpoint/, 'node-c explains why it does not announce');

  // 2. node-c's pod becomes ready (the controller updates the slice): node-c joins.
  await setPodReady(api, { name: 'web-node-c', podIP: podIP(2), hostIP: nodes[2]!.ip, ready: true });
  await waitPaths([A, B, C], "node-c's pod ready");

  // 3. node-b's pod is deleted with a grace period: the controller marks it terminating (serving, not ready); node-b
  //    withdraws while the pod still exists.
  await deletePodGracefully(api, 'web-node-b');
  await until('the slice marks node-b terminating', async () => (await endpoint('node-b'))?.conditions?.terminating === true);
  t.match(await endpoint('node-b'), { conditions: { ready: false, serving: true, terminating: true } }, 'the real slice: terminating and serving');
  await waitPaths([A, C], 'a terminating pod withdraws its node');
  await finishPodDeletion(api, 'web-node-b');
  await until('the slice drops node-b', async () => (await endpoint('node-b')) === undefined);
  await waitPaths([A, C], 'node-b still withdrawn once its pod is gone');

  // 4. Local → Cluster: every node announces (ready endpoints exist), node-b too.
  await api.must('PATCH', '/api/v1/namespaces/default/services/web', { spec: { externalTrafficPolicy: 'Cluster' } }, 'application/merge-patch+json');
  await waitPaths([A, B, C], 'Cluster: every node');

  // 5. Back to Local: node-b has no pod and withdraws again.
  await api.must('PATCH', '/api/v1/namespaces/default/services/web', { spec: { externalTrafficPolicy: 'Local' } }, 'application/merge-patch+json');
  await waitPaths([A, C], 'Local again: only nodes with ready local pods');
  heralds.forEach((h, i) => t.ok(h.proc.alive, `${names[i]}: herald still running`));
});
