// The control-plane tier, least privilege by component (docs/security.md "Components and rights"): against a real
// kube-apiserver with RBAC and the shipped ValidatingAdmissionPolicies (deploy/kubernetes/admission-policy.yaml),
// - the DaemonSet's account, with the token its pod on node-a gets (bound to that pod: the node's name is in it),
//   may set and remove its own Node's herald.io/drain annotation and create and patch its own BGPNodeStatus; every
//   other write is refused by the apiserver: another Node's annotation, its own Node's labels, taints, cordon or
//   other annotations, another node's BGPNodeStatus, a status claiming another node, Service status, Events, Leases;
//   a token bound to no pod (no node name) writes nothing;
// - each refusal is the guard's: with the policy's binding removed (or the RBAC rule added) the same write goes
//   through, and the test of that write would fail;
// - `herald run --separate-controller` with that token runs, writes its status and drains, and makes no refused call;
//   `herald controller` with its own account assigns a LoadBalancer address and writes the objects' conditions.
import t from 'tap';
import type { Test } from 'tap';
import { join } from 'node:path';
import type { ControlPlane, KubeRest } from '../helpers/control-plane.ts';
import { KubeRest as Rest, readManifests } from '../helpers/control-plane.ts';
import { loopbackBlock, waitHeraldUp } from '../e2e/harness.ts';
import { ADMIN_TOKEN, HERALD_AS, controlPlaneTier, controllerStatus, createNode, createService, heraldLog, heraldStatus, startCluster, startController, startHerald, until } from './harness.ts';

const NS = 'herald-system';
const NODE_USER = 'system:serviceaccount:herald-system:herald';
const CONTROLLER_USER = 'system:serviceaccount:herald-system:herald-controller';
const STATUSES = `/apis/herald.io/v1alpha1/namespaces/${NS}/bgpnodestatuses`;
const MERGE = 'application/merge-patch+json';

/** A client of the apiserver with `token`. */
const client = (cp: ControlPlane, token: string): KubeRest => new Rest(cp.server, cp.ca, { token });

/** A BGPNodeStatus object of `node` (as src/status/node-status.ts creates it). */
const statusObject = (name: string, nodeName = name) => ({ apiVersion: 'herald.io/v1alpha1', kind: 'BGPNodeStatus', metadata: { name }, spec: { nodeName } });

/** Sets (or with null removes) an annotation of Node `node` as `api`. */
const annotate = (api: KubeRest, node: string, key: string, value: string | null) => api.request('PATCH', `/api/v1/nodes/${node}`, { metadata: { annotations: { [key]: value } } }, MERGE);

/** Asserts `status` is a refusal by the apiserver (403), naming what refused it. */
function refused(t: Test, a: { status: number; body: unknown }, what: string, by: RegExp): void {
  t.equal(a.status, 403, `${what}: refused (403)`);
  t.match(JSON.stringify(a.body), by, `${what}: ${by}`);
}

/**
 * Removes the policy binding `name` (its guard), waits until `write` goes through, restores the binding and waits
 * until `write` is refused again: the refusal was the policy's, and the test of that write fails without it.
 */
async function withoutBinding(t: Test, cp: ControlPlane, name: string, write: () => Promise<{ status: number }>, undo: () => Promise<unknown>): Promise<void> {
  const doc = readManifests('deploy/kubernetes/admission-policy.yaml').find((d) => d.kind === 'ValidatingAdmissionPolicyBinding' && d.metadata.name === name);
  const path = `/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings/${name}`;
  await cp.admin.must('DELETE', path);
  const through = await until(`the write without ${name}`, async () => ((await write()).status < 300 ? true : undefined), 30_000).catch(() => false);
  t.ok(through, `without the binding ${name} the same write goes through: the policy is its guard`);
  await undo();
  await cp.apply([doc]);
  const back = await until(`${name} in force again`, async () => ((await write()).status === 403 ? true : undefined), 30_000).catch(() => false);
  await undo();
  t.ok(back, `with ${name} again it is refused`);
}

controlPlaneTier(t, 'least privilege: the DaemonSet writes its own node\'s two objects only; herald controller writes the rest', 420_000, async (t) => {
  const block = loopbackBlock();
  const cp = await startCluster(t, { host: `${block}200` });
  const api = cp.admin;
  for (const [i, n] of ['node-a', 'node-b'].entries()) await createNode(api, n, `${block}${i + 1}`);
  await api.must('PATCH', '/api/v1/nodes/node-a', { metadata: { annotations: { 'example.com/owner': 'ops' } } }, MERGE);
  await createService(api, { name: 'web', selector: { app: 'web' }, etp: 'Cluster' });
  await api.must('POST', STATUSES, statusObject('node-b'));
  // The token the DaemonSet's pod on node-a is given (bound to that pod).
  const tokenA = await cp.podToken(NS, 'herald', 'herald-node-a', 'node-a');
  const kubeconfigA = cp.writeTokenKubeconfig(join(cp.dir, 'herald-node-a.kubeconfig'), tokenA);
  const a = client(cp, tokenA);

  await t.test('the token carries the node name the policies read', async (t) => {
    const review = await a.must('POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' });
    const info = review.body.status.userInfo;
    t.equal(info.username, NODE_USER);
    t.same(info.extra?.['authentication.kubernetes.io/node-name'], ['node-a']);
  });

  await t.test('allowed: its own Node\'s drain annotation, its own BGPNodeStatus', async (t) => {
    t.equal((await annotate(a, 'node-a', 'herald.io/drain', 'maintenance')).status, 200, 'drain annotation set on its own Node');
    t.equal((await api.must('GET', '/api/v1/nodes/node-a')).body.metadata.annotations['herald.io/drain'], 'maintenance');
    t.equal((await annotate(a, 'node-a', 'herald.io/drain', null)).status, 200, 'and removed');
    t.equal((await a.request('POST', STATUSES, statusObject('node-a'))).status, 201, 'its BGPNodeStatus created');
    t.equal((await a.request('PATCH', `${STATUSES}/node-a/status`, { status: { myASN: HERALD_AS } }, MERGE)).status, 200, 'its status patched');
  });

  await t.test('refused by the admission policy: another node, anything but the drain annotation, a status of another node', async (t) => {
    refused(t, await annotate(a, 'node-b', 'herald.io/drain', 'x'), "another Node's drain annotation", /may change only its own Node, not node-b/);
    refused(t, await a.request('PATCH', '/api/v1/nodes/node-a', { metadata: { labels: { 'node.kubernetes.io/exclude-from-external-load-balancers': '' } } }, MERGE), 'a label on its own Node', /only the herald\.io\/drain annotation/);
    refused(t, await a.request('PATCH', '/api/v1/nodes/node-a', { spec: { taints: [{ key: 'x', effect: 'NoSchedule' }] } }, MERGE), 'a taint on its own Node', /only the herald\.io\/drain annotation/);
    refused(t, await a.request('PATCH', '/api/v1/nodes/node-a', { spec: { unschedulable: true } }, MERGE), 'a cordon of its own Node', /only the herald\.io\/drain annotation/);
    refused(t, await annotate(a, 'node-a', 'example.com/owner', 'me'), 'another annotation of its own Node', /only the herald\.io\/drain annotation/);
    refused(t, await annotate(a, 'node-a', 'example.com/owner', null), 'removing another annotation', /only the herald\.io\/drain annotation/);
    refused(t, await a.request('PATCH', `${STATUSES}/node-b/status`, { status: { myASN: 1 } }, MERGE), "another node's BGPNodeStatus", /may write only its own BGPNodeStatus, not node-b/);
    refused(t, await a.request('POST', STATUSES, statusObject('node-c')), 'a BGPNodeStatus of another node', /may write only its own BGPNodeStatus/);
    t.same((await api.must('GET', '/api/v1/nodes/node-b')).body.metadata.annotations?.['herald.io/drain'], undefined, 'node-b untouched');
  });

  await t.test('refused by RBAC: Service status, Events, Leases, reading every status', async (t) => {
    const rbac = /is forbidden: User .{1,2}system:serviceaccount:herald-system:herald.{1,2} cannot/;
    refused(t, await a.request('PATCH', '/api/v1/namespaces/default/services/web/status', { status: { loadBalancer: { ingress: [{ ip: '192.0.2.66' }] } } }, MERGE), 'services/status', rbac);
    refused(t, await a.request('POST', '/api/v1/namespaces/default/events', { apiVersion: 'v1', kind: 'Event', metadata: { generateName: 'x-' }, involvedObject: { kind: 'Service', namespace: 'default', name: 'web' }, reason: 'X', message: 'x', type: 'Normal' }), 'Events', rbac);
    refused(t, await a.request('GET', `/apis/coordination.k8s.io/v1/namespaces/${NS}/leases/herald-allocator`), 'Leases', rbac);
    refused(t, await a.request('GET', STATUSES), 'every BGPNodeStatus', rbac);
  });

  await t.test('a token bound to no pod (no node name) writes nothing', async (t) => {
    const plain = client(cp, await cp.serviceAccountToken(NS, 'herald'));
    refused(t, await annotate(plain, 'node-a', 'herald.io/drain', 'x'), 'its drain annotation without a node name', /token bound to its pod/);
  });

  await t.test('each refusal is its guard\'s: without the policy binding the same write goes through', async (t) => {
    await withoutBinding(t, cp, 'herald-node-agent-nodes', () => annotate(a, 'node-b', 'herald.io/drain', 'x'), () => api.request('PATCH', '/api/v1/nodes/node-b', { metadata: { annotations: { 'herald.io/drain': null } } }, MERGE));
    await withoutBinding(t, cp, 'herald-node-agent-status', () => a.request('PATCH', `${STATUSES}/node-b/status`, { status: { myASN: 7 } }, MERGE), async () => undefined);
    // RBAC: with the rule added, Service status goes through (the rule's absence is the guard).
    const grant = [
      { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'test-grant' }, rules: [{ apiGroups: [''], resources: ['services/status'], verbs: ['patch'] }] },
      { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'test-grant' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'test-grant' }, subjects: [{ kind: 'ServiceAccount', name: 'herald', namespace: NS }] },
    ];
    await cp.apply(grant);
    const patch = () => a.request('PATCH', '/api/v1/namespaces/default/services/web/status', { status: { loadBalancer: { ingress: null } } }, MERGE);
    t.ok(await until('the granted write', async () => ((await patch()).status === 200 ? true : undefined), 30_000).catch(() => false), 'with services/status granted, the write goes through');
    await api.must('DELETE', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/test-grant');
    await api.must('DELETE', '/apis/rbac.authorization.k8s.io/v1/clusterroles/test-grant');
    t.ok(await until('refused again', async () => ((await patch()).status === 403 ? true : undefined), 30_000).catch(() => false), 'and refused again without it');
  });

  await t.test("API Priority and Fairness: each identity's requests are its own flow in Herald's priority level", async (t) => {
    const uid = async (path: string) => (await api.must('GET', path)).body.metadata.uid as string;
    const level = await uid('/apis/flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations/herald');
    const controllerToken = await cp.serviceAccountToken(NS, 'herald-controller');
    for (const [who, token, schema] of [['the DaemonSet', tokenA, 'herald-node'], ['the controller', controllerToken, 'herald-controller']] as const) {
      const fs = await api.must('GET', `/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas/${schema}`);
      t.match(fs.body.status?.conditions ?? [], [{ type: 'Dangling', status: 'False' }], `${schema} finds its priority level`);
      const r = await client(cp, token).request('GET', '/api/v1/services?limit=1');
      t.equal(r.status, 200, `${who} lists Services`);
      t.equal(r.headers?.['x-kubernetes-pf-flowschema-uid'], fs.body.metadata.uid, `${who}'s request matched ${schema}`);
      t.equal(r.headers?.['x-kubernetes-pf-prioritylevel-uid'], level, `${who}'s request ran at the priority level herald`);
    }
    // The guard: without the schema, the same request falls to the default service-accounts schema.
    await api.must('DELETE', '/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas/herald-node');
    const fallback = await until('the default schema', async () => {
      const r = await a.request('GET', '/api/v1/services?limit=1');
      return r.headers?.['x-kubernetes-pf-prioritylevel-uid'] !== level ? r : undefined;
    }, 30_000).catch(() => undefined);
    t.ok(fallback, 'without herald-node the DaemonSet\'s requests leave Herald\'s level');
    await cp.apply(readManifests('deploy/kubernetes/flowcontrol.yaml').filter((d) => d.metadata.name === 'herald-node'));
  });

  await t.test('herald run --separate-controller and herald controller, each with its own account, as shipped', async (t) => {
    const pool = '198.51.100.64/30';
    await api.must('POST', `/apis/herald.io/v1alpha1/namespaces/${NS}/ipaddresspools`, { apiVersion: 'herald.io/v1alpha1', kind: 'IPAddressPool', metadata: { name: 'lb' }, spec: { addresses: [pool] } });
    await api.must('DELETE', `${STATUSES}/node-a`); // the test's own, above: Herald creates it again
    const node = await startHerald(t, { node: { name: 'node-a', ip: `${block}1` }, kubeconfig: kubeconfigA, bird: { ip: `${block}100`, port: 1 }, extra: { peers: [] }, args: ['--separate-controller'] });
    await waitHeraldUp(node);
    const controllerKubeconfig = cp.writeTokenKubeconfig(join(cp.dir, 'controller.kubeconfig'), await cp.serviceAccountToken(NS, 'herald-controller'));
    const controller = await startController(t, { kubeconfig: controllerKubeconfig, identity: 'herald-controller-0' });
    const ingress = await until('the controller assigned an address', async () => (await api.must('GET', '/api/v1/namespaces/default/services/web')).body.status?.loadBalancer?.ingress, 90_000);
    t.same(ingress, [{ ip: '198.51.100.64', ipMode: 'VIP' }], 'the Service got the pool\'s first address');
    const pl = await until('the pool\'s conditions', async () => {
      const o = (await api.must('GET', `/apis/herald.io/v1alpha1/namespaces/${NS}/ipaddresspools/lb`)).body;
      return o.status?.conditions?.some((c: { type: string }) => c.type === 'InUse') ? o : undefined;
    }, 90_000);
    t.match(pl.status, { assignedIPv4: 1, conditions: [{ type: 'Valid', status: 'True' }, { type: 'InUse', status: 'True' }] }, 'the controller wrote the pool\'s conditions');
    const leases = await Promise.all(['herald-allocator', 'herald-status'].map(async (l) => (await api.must('GET', `/apis/coordination.k8s.io/v1/namespaces/${NS}/leases/${l}`)).body.spec.holderIdentity));
    t.same(leases, ['herald-controller-0', 'herald-controller-0'], 'the controller holds both Leases');
    const st = await until('node-a\'s BGPNodeStatus', async () => ((await api.request('GET', `${STATUSES}/node-a`)).status === 200 ? true : undefined), 60_000);
    t.ok(st, 'the node wrote its own BGPNodeStatus');
    const post = async (p: string) => (await fetch(`http://127.0.0.1:${node.adminPort}${p}`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).status;
    t.same([await post('/api/v1/drain'), await post('/api/v1/undrain')], [200, 200], 'herald drain and undrain: its own Node\'s annotation');
    t.equal((await heraldStatus(node))?.forbidden, undefined, 'the node lists no refused call');
    t.equal((await controllerStatus(controller))?.forbidden, undefined, 'the controller lists no refused call');
    // Herald's own calls (its User-Agent), not this test's requests with the same token above.
    const audit = cp.audit().filter((e) => e.userAgent?.startsWith('herald/'));
    const mine = (user: string) => audit.filter((e) => e.user.username === user);
    t.ok(mine(NODE_USER).length > 0 && mine(CONTROLLER_USER).length > 0, 'both accounts called the apiserver');
    const denied = (user: string) => mine(user).filter((e) => (e.responseStatus?.code ?? 0) === 403).map((e) => `${e.verb} ${e.objectRef?.resource}/${e.objectRef?.name ?? ''}`);
    t.same(denied(NODE_USER), [], 'no call of the node refused (audit log)');
    t.same(denied(CONTROLLER_USER), [], 'no call of the controller refused (audit log)');
    t.same(heraldLog(node).filter((l) => /HTTP 403/.test(JSON.stringify(l))), [], 'no 403 in the node\'s log');
    const nodeWrites = mine(NODE_USER).filter((e) => !['get', 'list', 'watch'].includes(e.verb));
    t.same([...new Set(nodeWrites.filter((e) => (e.responseStatus?.code ?? 0) < 300).map((e) => `${e.verb} ${e.objectRef?.resource}${e.objectRef?.subresource ? `/${e.objectRef.subresource}` : ''}`))].sort(), ['create bgpnodestatuses', 'patch bgpnodestatuses/status', 'patch nodes'], 'what the node account wrote: its status and its Node, nothing else');
  });
});
