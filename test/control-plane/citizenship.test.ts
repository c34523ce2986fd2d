// The control-plane tier, cluster citizenship (issue 31; docs/scale.md): what one node's Herald asks of a real
// kube-apiserver, read from its audit log — the same request profile bench/scale.ts counts at its counting proxy in
// front of the fake apiserver, so the projections of docs/scale.md stand on what a real apiserver sees:
// - every request names Herald, its version and its role (User-Agent `herald/<version> (speaker)`);
// - each collection is read once, by a streaming list served from the watch cache (a watch with sendInitialEvents):
//   no LIST, so nothing read from etcd; every watch asks for bookmarks and a timeout of 5 to 10 minutes;
// - its own Node by name (fieldSelector), EndpointSlices with kube-proxy's label selector;
// - quiet, it writes nothing: no BGPNodeStatus write without a change (no heartbeat), no Event; an endpoint change is
//   one BGPNodeStatus write at most, a small one;
// - API Priority and Fairness puts every one of its requests in FlowSchema herald-node at priority level herald, and
//   every request of `herald controller` in herald-controller at herald (deploy/kubernetes/flowcontrol.yaml, applied
//   by startCluster): the apiserver's own dispatch counters moved by at least the requests its audit log holds.
// And the operator's side: docs/cli.md's Role for `--all-nodes` (list pods, get pods/proxy) is what the CLI needs: with
// it the apiserver authorizes both (the proxied answer itself cannot come here: a real apiserver proxies only to a
// global-unicast pod IP, and this tier's nodes are on loopback); without it, the CLI says which right is missing.
import t from 'tap';
import type { Test } from 'tap';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parse } from 'yaml';
import { ROOT, loopbackBlock, protoName, waitHeraldUp } from '../e2e/harness.ts';
import type { NodeSpec } from '../e2e/harness.ts';
import type { AuditEvent } from '../helpers/control-plane.ts';
import { version } from '../../src/version.ts';
import { ENDPOINTSLICE_SELECTOR } from '../../src/sources/kubernetes.ts';
import { controlPlaneTier, controllerStatus, createHeraldPods, createNode, createPod, createService, setIngress, setPodReady, startCluster, startController, startNodes, until } from './harness.ts';

const VIP = '198.51.100.30';
const NODE_USER = 'system:serviceaccount:herald-system:herald';
const CONTROLLER_USER = 'system:serviceaccount:herald-system:herald-controller';

/** How much each `FLOW_SCHEMA/PRIORITY_LEVEL` counter moved from `before` to `after` (only those that moved). */
function moved(before: Map<string, number>, after: Map<string, number>): Map<string, number> {
  return new Map([...after].map(([k, v]) => [k, v - (before.get(k) ?? 0)] as const).filter(([, d]) => d > 0));
}

/** `herald ARGS` (bin/herald.js under this Node): exit code, stdout and stderr. */
async function herald(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [join(ROOT, 'bin/herald.js'), ...args], { timeout: 60_000 });
    return { code: 0, out: stdout, err: stderr };
  } catch (e) {
    const x = e as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof x.code === 'number' ? x.code : -1, out: x.stdout ?? '', err: x.stderr ?? '' };
  }
}

controlPlaneTier(t, "one node's requests to a real apiserver: streaming lists, long watches, its own Node, no writes while quiet", 300_000, async (t) => {
  const block = loopbackBlock();
  const cp = await startCluster(t, { host: `${block}200` });
  const api = cp.admin;
  const nodes: NodeSpec[] = [{ name: 'node-a', ip: `${block}1` }];
  await createNode(api, 'node-a', nodes[0]!.ip);
  await createNode(api, 'node-other', `${block}9`);
  await createService(api, { name: 'web', selector: { app: 'web' }, etp: 'Local' });
  await setIngress(api, 'web', [VIP]);
  await createPod(api, { name: 'web-1', nodeName: 'node-a', labels: { app: 'web' } });
  await setPodReady(api, { name: 'web-1', podIP: '10.244.1.10', hostIP: nodes[0]!.ip, ready: true });

  // Nothing has used either account yet: what their FlowSchemas dispatch from here on is Herald's.
  const dispatchedBefore = await cp.dispatchedRequests();
  const { heralds, waitPaths } = await startNodes(t, cp, block, nodes, `${VIP}/32`);
  await waitHeraldUp(heralds[0]!);
  await waitPaths([protoName('node-a')], 'the VIP from node-a');
  const mine = (): AuditEvent[] => cp.audit().filter((e) => e.user.username === NODE_USER);
  /** The requests `user` made so far, from the audit log (one auditID per request, whatever its stages). */
  const requestsOf = (user: string) => new Set(cp.audit().filter((e) => e.user.username === user).map((e) => e.auditID)).size;
  /**
   * Asserts that API Priority and Fairness dispatched the requests `user` made in `flow` (FLOW_SCHEMA/PRIORITY_LEVEL),
   * from the apiserver's own counters since `before`: each request in the audit log was dispatched before it was
   * logged (the audit filter wraps APF), so the counter moved by at least the requests logged; and every request the
   * counter holds is logged in time (it counts nobody else's). Had the schema been missing or its subject another,
   * they would have gone to service-accounts/workload-low. Resolves with every counter that moved.
   */
  const dispatchedIn = async (t: Test, who: string, user: string, flow: string, before: Map<string, number>) => {
    const logged = requestsOf(user);
    const counters = moved(before, await cp.dispatchedRequests());
    const n = counters.get(flow) ?? 0;
    t.comment(`${who}: ${logged} requests in the audit log; dispatched since it started: ${JSON.stringify(Object.fromEntries(counters))}`);
    t.ok(logged >= 5, `${who} made its requests (${logged})`);
    t.ok(n >= logged, `API Priority and Fairness dispatched them in ${flow} (${n} >= ${logged})`);
    const caught = await until(`the audit log holds ${n} requests of ${user}`, () => requestsOf(user) >= n, 15_000).catch(() => false);
    t.ok(caught, `and no request but its own: the audit log catches up with the ${n} dispatched`);
    return counters;
  };
  const params = (e: AuditEvent) => new URL(e.requestURI, 'https://x').searchParams;

  // The start: one streaming list per collection, from the watch cache; nothing read from etcd.
  const start = mine();
  const watches = start.filter((e) => e.verb === 'watch' && e.stage === 'ResponseStarted');
  t.same(start.filter((e) => e.verb === 'list').map((e) => e.requestURI), [], 'no LIST: every collection read by a streaming list');
  // (The elected status writer, this one node, also reads every Node while it leads: not the source's read.)
  for (const resource of ['services', 'endpointslices', 'nodes']) {
    const w = watches.filter((e) => e.objectRef?.resource === resource && (resource !== 'nodes' || params(e).get('fieldSelector') !== null));
    t.equal(w.length, 1, `${resource}: one request reads it and goes on as the watch`);
    const q = w[0] !== undefined ? params(w[0]) : new URLSearchParams();
    t.equal(q.get('sendInitialEvents'), 'true', `${resource}: a streaming list`);
    t.equal(q.get('allowWatchBookmarks'), 'true', `${resource}: bookmarks`);
    const sec = Number(q.get('timeoutSeconds'));
    t.ok(sec >= 300 && sec < 600, `${resource}: timeoutSeconds ${sec} in [300, 600)`);
  }
  const nodeWatch = watches.find((e) => e.objectRef?.resource === 'nodes' && params(e).get('fieldSelector') !== null);
  t.equal(nodeWatch !== undefined ? params(nodeWatch).get('fieldSelector') : undefined, 'metadata.name=node-a', 'its own Node by name (no maxNodesPerVip)');
  const sliceWatch = watches.find((e) => e.objectRef?.resource === 'endpointslices');
  t.equal(sliceWatch !== undefined ? params(sliceWatch).get('labelSelector') : undefined, ENDPOINTSLICE_SELECTOR, "EndpointSlices with kube-proxy's label selector");
  const agents = [...new Set(start.map((e) => e.userAgent))];
  t.same(agents, [`herald/${await version()} (speaker)`], 'every request names Herald, its version and its role');

  // Quiet: once its first status is written (on change only, at most every 30-36 s), nothing more is written.
  const statusWrites = () => mine().filter((e) => e.objectRef?.resource === 'bgpnodestatuses' && e.verb === 'patch' && e.stage === 'ResponseComplete').length;
  await until('its BGPNodeStatus written', async () => statusWrites() >= 1, 60_000);
  await new Promise((r) => setTimeout(r, 40_000)); // a write in flight settles (the interval is 30-36 s)
  const quietFrom = mine().length;
  const quietMs = 75_000;
  await new Promise((r) => setTimeout(r, quietMs));
  const quiet = mine().slice(quietFrom).filter((e) => e.stage !== 'ResponseStarted');
  const byCall = new Map<string, number>();
  for (const e of quiet) {
    const call = `${e.verb} ${e.objectRef?.resource ?? e.requestURI}${e.objectRef?.subresource ? `/${e.objectRef.subresource}` : ''}`;
    byCall.set(call, (byCall.get(call) ?? 0) + 1);
  }
  t.comment(`quiet ${quietMs / 1000} s, requests: ${JSON.stringify(Object.fromEntries(byCall))}`);
  const writes = quiet.filter((e) => ['create', 'update', 'patch'].includes(e.verb) && e.objectRef?.resource !== 'leases');
  t.same(writes.map((e) => `${e.verb} ${e.requestURI}`), [], 'quiet: no write but the Leases (no status heartbeat, no Event)');
  t.same(quiet.filter((e) => e.verb === 'list' || (e.verb === 'watch' && e.objectRef?.resource !== 'bgpnodestatuses' && e.objectRef?.resource !== 'pods')).map((e) => e.requestURI), [], 'quiet: no re-list and no re-watch within the watch timeout');

  // Its flow: FlowSchema herald-node at priority level herald. Only the node and this test (the admin: exempt) have
  // called the apiserver since, so nothing else moved: none of the node's requests went elsewhere (herald-node has no
  // nonResourceRules: a request for /version or discovery would have gone to service-accounts).
  const nodeCounters = await dispatchedIn(t, 'the node', NODE_USER, 'herald-node/herald', dispatchedBefore);
  t.same([...nodeCounters.keys()].filter((k) => k !== 'exempt/exempt'), ['herald-node/herald'], "no other flow moved: each of the node's requests is in herald-node");

  // One endpoint change: at most one small status write.
  const before = statusWrites();
  await setPodReady(api, { name: 'web-1', podIP: '10.244.1.10', hostIP: nodes[0]!.ip, ready: false });
  await waitPaths([], 'withdrawn');
  await until('the change written', async () => statusWrites() > before, 60_000);
  await new Promise((r) => setTimeout(r, 5_000));
  t.equal(statusWrites() - before, 1, 'one status write for the change');
  const stored = (await api.must('GET', '/apis/herald.io/v1alpha1/namespaces/herald-system/bgpnodestatuses/node-a')).body as { status?: unknown };
  t.ok(JSON.stringify(stored.status).length < 4096, `a small summary (${JSON.stringify(stored.status).length} bytes)`);

  // herald controller with its own account (it starts while the CLI runs below; its flow is checked at the end).
  const controllerKubeconfig = cp.writeTokenKubeconfig(join(cp.dir, 'controller.kubeconfig'), await cp.serviceAccountToken('herald-system', 'herald-controller'));
  const controllerBefore = await cp.dispatchedRequests();
  const controller = await startController(t, { kubeconfig: controllerKubeconfig, identity: 'herald-controller-0' });

  // The operator's Role for --all-nodes, from docs/cli.md, bound to a ServiceAccount that stands for the operator.
  const role = [...readFileSync(join(ROOT, 'docs/cli.md'), 'utf8').matchAll(/^```yaml\n([\s\S]*?)^```/gm)].map((m) => parse(m[1] ?? '') as { kind?: string; metadata?: { name?: string } }).find((o) => o.kind === 'Role');
  t.equal(role?.metadata?.name, 'herald-all-nodes', "docs/cli.md shows the operator's Role (fixture check)");
  await createHeraldPods(api, { namespace: 'herald-system', nodes });
  for (const name of ['operator', 'stranger']) await api.must('POST', '/api/v1/namespaces/herald-system/serviceaccounts', { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name } });
  await api.must('POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/herald-system/roles', role);
  await api.must('POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/herald-system/rolebindings', { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'herald-all-nodes' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'herald-all-nodes' }, subjects: [{ kind: 'ServiceAccount', name: 'operator', namespace: 'herald-system' }] });
  const as = async (who: string) => cp.writeTokenKubeconfig(join(cp.dir, `${who}.kubeconfig`), await cp.serviceAccountToken('herald-system', who));
  const withRole = await herald('services', '--all-nodes', '--kubeconfig', await as('operator'), '-n', 'herald-system');
  const operatorCalls = cp.audit().filter((e) => e.user.username === 'system:serviceaccount:herald-system:operator' && e.stage === 'ResponseComplete');
  const listPods = operatorCalls.find((e) => e.verb === 'list' && e.objectRef?.resource === 'pods');
  const proxy = operatorCalls.find((e) => e.objectRef?.resource === 'pods' && e.objectRef.subresource === 'proxy');
  t.equal(listPods?.responseStatus?.code, 200, `with the Role: list pods allowed (${withRole.out}${withRole.err})`);
  t.equal(proxy?.verb, 'get', 'the CLI asks the pod through the pod proxy');
  t.not(proxy?.responseStatus?.code, 403, `with the Role: get pods/proxy allowed (answered ${proxy?.responseStatus?.code}: the pod is on loopback)`);
  const without = await herald('services', '--all-nodes', '--kubeconfig', await as('stranger'), '-n', 'herald-system');
  t.not(without.code, 0, 'without the Role the CLI fails');
  t.match(without.err, /cannot list Herald's pods in namespace herald-system: .*403|forbidden/i, `and names the missing right (${without.err.trim()})`);

  // The controller's flow: FlowSchema herald-controller at priority level herald, once it is ready and holds the
  // Lease herald-status (its watches and its Lease reads and writes made; no pool here, so no allocator's Lease).
  await until('herald controller ready', async () => (await controllerStatus(controller))?.ready === true, 90_000);
  const lease = '/apis/coordination.k8s.io/v1/namespaces/herald-system/leases/herald-status';
  await until('the controller holds the Lease herald-status', async () => (await api.request('GET', lease)).body?.spec?.holderIdentity === 'herald-controller-0', 60_000);
  await dispatchedIn(t, 'the controller', CONTROLLER_USER, 'herald-controller/herald', controllerBefore);
});
