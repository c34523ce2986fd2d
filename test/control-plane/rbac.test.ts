// The control-plane tier, RBAC of both components (docs/security.md "Components and rights"), against a real
// kube-apiserver with --authorization-mode=RBAC:
// - the DaemonSet's account (deploy/kubernetes/rbac.yaml): `herald run --separate-controller` watches Services,
//   EndpointSlices, its Node, ServiceCIDRs, Herald's kinds and the node set, reads a BGPPeer's password Secret, writes its
//   BGPNodeStatus and its Node's drain annotation — and the VIP reaches BIRD;
// - the controller's account (the RBAC of deploy/kubernetes/controller.yaml): `herald controller` watches Services,
//   Herald's kinds, every BGPNodeStatus, Node and Herald pod while it writes the conditions and the node set, holds the Leases,
//   writes Service
//   status and Events;
// and the apiserver's audit log shows every one of those calls allowed and no 403 for either.
//
// Every Herald here reads its collections by LIST (HERALD_TEST_STREAMING_LIST=off, the path it takes with an
// apiserver that refuses streaming lists), so that each `list` it is granted is made and its 403 seen; a streaming list
// needs `watch` only (test/control-plane/conditions.test.ts sees one). A repeated Event is patched at once
// (HERALD_TEST_EVENT_REPEAT_SEC=0).
//
// Then, for every verb of every rule of either file, a copy without that verb (in a namespace of its own, with its
// own ServiceAccount, roles and Herald) must make that Herald show the 403: in its log, and in its status
// (`forbidden`, and `notReady` when a watched resource cannot be listed). A rule added to either file is picked up
// here automatically: its scenario fails until Herald makes that call and surfaces its 403.
import t from 'tap';
import type { Test } from 'tap';
import { join } from 'node:path';
import { freePort } from '../helpers/bird.ts';
import { readManifests } from '../helpers/control-plane.ts';
import type { AuditEvent, ControlPlane } from '../helpers/control-plane.ts';
import { heraldLogs, loopbackBlock, pathsFor, protoName, startBird, waitHeraldUp, withLogs } from '../e2e/harness.ts';
import type { HeraldNode, NodeSpec } from '../e2e/harness.ts';
import { BIRD_AS, HERALD_AS, controlPlaneTier, controllerStatus, createNode, createPod, createService, drainAndUndrain, heraldLog, heraldStatus, setIngress, setPodReady, startCluster, startController, startHerald, until } from './harness.ts';
import type { HeraldController } from './harness.ts';
import { nodeSetShard } from '../../src/k8s/node-set.ts';

/** The informer kinds Herald watches, by resource (src/sources/kubernetes.ts; status names them so). */
const WATCHED: Record<string, string> = { services: 'Service', nodes: 'Node', endpointslices: 'EndpointSlice', servicecidrs: 'ServiceCIDR', bgppeers: 'BGPPeer', bgpadvertisements: 'BGPAdvertisement', ipaddresspools: 'IPAddressPool', bgpnodeconfigoverrides: 'BGPNodeConfigOverride' };
/** Watched resources Herald runs without (not served or not granted: synced with no objects), so a 403 leaves it ready. */
const OPTIONAL = new Set(['servicecidrs', 'bgppeers', 'bgpadvertisements', 'ipaddresspools', 'bgpnodeconfigoverrides']);
const KINDS = ['bgppeers', 'bgpadvertisements', 'ipaddresspools', 'bgpnodeconfigoverrides'];

/** One API call as the audit log names it: [verb, apiGroup, resource (with /subresource)]; `pending`: not made in this scenario, with why. */
interface Call {
  verb: string;
  group: string;
  resource: string;
  pending?: string;
}

/** A Herald process of either component, as the checks read it (adminPort: the controller's probes port). */
interface Running extends HeraldNode {
  status(): Promise<{ ready: boolean; notReady: string[]; forbidden?: string[] } | undefined>;
  /** Makes the calls only a change makes (the node's drain, the controller's repeated Event and node-set writes); `resource`: only those on it. */
  poke(resource?: string): Promise<void>;
}

/** The test hooks every Herald here runs with (see the top of this file; docs/development.md). */
const HOOKS = { HERALD_TEST_STREAMING_LIST: 'off', HERALD_TEST_EVENT_REPEAT_SEC: '0' };

/** What differs between the two components. */
interface Component {
  /** The manifest file with its ServiceAccount's roles and bindings. */
  file: string;
  serviceAccount: string;
  /** The calls production makes (the node's drain annotation included: every instance drains and undrains once). */
  calls: Call[];
  /** Starts this component for scenario `i` in `namespace` with the account there; `node` for the node's. */
  start(t: Test, cp: ControlPlane, i: number, namespace: string, node: NodeSpec): Promise<Running>;
  /** What the shipped instance must have done besides its calls (the VIP at BIRD, an address assigned). */
  shipped(t: Test, cp: ControlPlane, r: Running): Promise<void>;
}

const resourceOf = (e: AuditEvent) => `${e.objectRef?.resource ?? ''}${e.objectRef?.subresource ? `/${e.objectRef.subresource}` : ''}`;

/** `file`'s documents for namespace `ns`: the names made unique, `drop` removed from its rule. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
function rbacCopy(file: string, sa: string, ns: string, drop: { rule: number; doc: number; verb: string }): any[] {
  return rbacDocs(file, sa).map(({ d, i }) => {
    const o = structuredClone(d);
    if (o.metadata.namespace === 'herald-system') o.metadata.namespace = ns;
    if (o.kind === 'ClusterRole' || o.kind === 'ClusterRoleBinding') o.metadata.name = `${o.metadata.name}-${ns}`;
    if (o.kind === 'ClusterRoleBinding') o.roleRef.name = `${o.roleRef.name}-${ns}`;
    for (const s of o.subjects ?? []) if (s.namespace === 'herald-system') s.namespace = ns;
    if (i === drop.doc) {
      const rule = o.rules[drop.rule];
      rule.verbs = rule.verbs.filter((v: string) => v !== drop.verb);
      if (rule.verbs.length === 0) o.rules.splice(drop.rule, 1);
    }
    return o;
  });
}

/** The ServiceAccount, Roles, ClusterRoles and bindings of `file` that belong to ServiceAccount `sa`, with their index. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
function rbacDocs(file: string, sa: string): { d: any; i: number }[] {
  const docs = readManifests(file).map((d, i) => ({ d, i }));
  const bindings = docs.filter(({ d }) => (d.kind === 'RoleBinding' || d.kind === 'ClusterRoleBinding') && (d.subjects ?? []).some((s: { name: string }) => s.name === sa));
  const roles = new Set(bindings.map(({ d }) => `${d.roleRef.kind}/${d.roleRef.name}`));
  return docs.filter(({ d }) => (d.kind === 'ServiceAccount' && d.metadata.name === sa) || bindings.some((b) => b.d === d) || roles.has(`${d.kind}/${d.metadata.name}`));
}

/** Every (doc, rule, verb) of the Roles and ClusterRoles of `sa` in `file`. */
function rbacVerbs(file: string, sa: string): { doc: number; rule: number; verb: string; group: string; resource: string }[] {
  const out: { doc: number; rule: number; verb: string; group: string; resource: string }[] = [];
  for (const { d, i: doc } of rbacDocs(file, sa)) {
    if (d.kind !== 'ClusterRole' && d.kind !== 'Role') continue;
    (d.rules as { apiGroups: string[]; resources: string[]; verbs: string[] }[]).forEach((r, rule) => {
      for (const group of r.apiGroups) for (const resource of r.resources) for (const verb of r.verbs) out.push({ doc, rule, verb, group, resource });
    });
  }
  return out;
}

/**
 * A bounded advertisement selecting no Service here, with a label its node selector reads: the nodes' file carries it
 * (they read the node set); the controller's poke creates it as an object and deletes it (it publishes the set, then
 * deletes it).
 */
const BOUNDED_SPEC = { addressKinds: ['loadBalancer'], serviceSelector: { matchLabels: { 'herald.test/bounded': 'yes' } }, nodeSelectors: [{ matchExpressions: [{ key: 'herald.test/rack', operator: 'NotIn', values: ['none'] }] }], maxNodesPerVip: 1 };
/** The nodes' advertisements: every LoadBalancer VIP, and the bounded one. */
const ADVERTISEMENTS = [{ name: 'lb', addressKinds: ['loadBalancer'] }, { name: 'bounded', ...BOUNDED_SPEC }];

/** Nodes of the test: half for each component's scenarios (one per verb, and the shipped one). */
const NODE_COUNT = 80;

/** Node names already used, by node-set shard (src/k8s/node-set.ts): the test's Nodes. */
const usedShards = new Set(['backend', ...Array.from({ length: NODE_COUNT }, (_, i) => `node-${i}`)].map(nodeSetShard));

/** A Node name `prefix-k` whose node-set shard no other Node of this test has (and reserves it). */
function loneNode(prefix: string): string {
  for (let k = 0; ; k++) {
    const name = `${prefix}-${k}`;
    if (usedShards.has(nodeSetShard(name))) continue;
    usedShards.add(nodeSetShard(name));
    return name;
  }
}

controlPlaneTier(t, 'RBAC against a real kube-apiserver: the shipped rules of both components suffice; each missing verb shows its 403', 1_500_000, async (t) => {
  const block = loopbackBlock();
  const cp = await startCluster(t, { host: `${block}200` });
  const api = cp.admin;
  // One backend pod, ready on a node of its own: every scenario's Service has a ready endpoint (Cluster policy).
  await createNode(api, 'backend', `${block}250`);
  await createPod(api, { name: 'backend', nodeName: 'backend', labels: { app: 'backend' } });
  await setPodReady(api, { name: 'backend', podIP: '10.244.0.10', hostIP: `${block}250`, ready: true });
  const birdIp = `${block}100`;
  const birdPort = await freePort(birdIp);
  const nodes: NodeSpec[] = Array.from({ length: NODE_COUNT }, (_, i) => ({ name: `node-${i}`, ip: `${block}${i + 1}` }));
  const bird = await startBird({ ip: birdIp, port: birdPort, birdAs: BIRD_AS, heraldAs: HERALD_AS, nodes });
  t.teardown(() => bird.stop());

  /** A BGPPeer whose password is in a Secret (the node reads it with `get secrets`); nothing answers at its address. */
  const passwordPeer = async (namespace: string) => {
    await api.must('POST', `/api/v1/namespaces/${namespace}/secrets`, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'tor-pw' }, stringData: { password: 'rbac-test' } });
    await api.must('POST', `/apis/herald.io/v1alpha1/namespaces/${namespace}/bgppeers`, { apiVersion: 'herald.io/v1alpha1', kind: 'BGPPeer', metadata: { name: 'md5' }, spec: { peerAddress: `${block}99`, peerASN: 65099, passwordSecret: { name: 'tor-pw' }, connectTime: 5 } });
  };

  /** The node: its VIP set by "another controller" (setIngress) inside allowedPrefixes, announced to BIRD. */
  const node: Component = {
    file: 'deploy/kubernetes/rbac.yaml',
    serviceAccount: 'herald',
    calls: [
      ...['services', 'nodes'].flatMap((resource) => ['list', 'watch'].map((verb) => ({ verb, group: '', resource }))),
      ...['list', 'watch'].map((verb) => ({ verb, group: 'discovery.k8s.io', resource: 'endpointslices' })),
      ...['list', 'watch'].map((verb) => ({ verb, group: 'networking.k8s.io', resource: 'servicecidrs' })),
      ...KINDS.flatMap((resource) => ['list', 'watch'].map((verb) => ({ verb, group: 'herald.io', resource }))),
      { verb: 'create', group: 'herald.io', resource: 'bgpnodestatuses' },
      { verb: 'patch', group: 'herald.io', resource: 'bgpnodestatuses/status' },
      { verb: 'get', group: '', resource: 'secrets' },
      { verb: 'patch', group: '', resource: 'nodes' },
      // The node set, read while an advertisement sets maxNodesPerVip (the file's `bounded` below).
      ...['list', 'watch'].map((verb) => ({ verb, group: '', resource: 'configmaps' })),
    ],
    async start(t, cp, i, namespace, n) {
      const token = await cp.podToken(namespace, 'herald', `herald-${n.name}`, n.name);
      const kubeconfig = cp.writeTokenKubeconfig(join(cp.dir, `herald-${namespace}-${n.name}.kubeconfig`), token);
      await createService(api, { name: `node-svc-${i}`, selector: { app: 'backend' }, etp: 'Cluster', loadBalancerClass: `herald.test/n${i}` });
      await setIngress(api, `node-svc-${i}`, [`198.51.100.${100 + i}`]);
      const h = await startHerald(t, { node: n, kubeconfig, bird: { ip: birdIp, port: birdPort }, namespace, args: ['--separate-controller'], env: HOOKS, extra: { allowedPrefixes: [`198.51.100.${100 + i}/32`], loadBalancerClass: `herald.test/n${i}`, advertisements: ADVERTISEMENTS } });
      await waitHeraldUp(h);
      // The operator's drain and undrain: the Node annotation patched in and out.
      return { ...h, status: () => heraldStatus(h), poke: async () => void (await drainAndUndrain(h).catch(() => undefined)) };
    },
    async shipped(t, _cp, r) {
      const vip = '198.51.100.100/32';
      await withLogs(() => bird.waitFor(async () => (await pathsFor(bird, vip)).join() === protoName('node-0') || undefined, 'the VIP from node-0', 90_000), [r], ['node-0']);
      t.pass('the VIP reaches BIRD');
    },
  };

  /** The controller: a pool for its allocator and one object of each kind whose conditions it writes. */
  const controller: Component = {
    file: 'deploy/kubernetes/controller.yaml',
    serviceAccount: 'herald-controller',
    calls: [
      ...['list', 'watch'].map((verb) => ({ verb, group: '', resource: 'services' })),
      { verb: 'patch', group: '', resource: 'services/status' },
      { verb: 'create', group: '', resource: 'events' },
      // A repeated Event raises the count of the one written before (src/events/correlator.ts): a Service asking for a
      // pool that does not exist fails at every allocator pass (AllocationFailed), and poke changes it twice.
      { verb: 'patch', group: '', resource: 'events' },
      ...['list', 'watch'].map((verb) => ({ verb, group: '', resource: 'nodes' })),
      // The allocator reads the Namespaces' labels while a pool sets namespaceSelectors (src/ipam/namespaces.ts): the
      // controller's pool 'team' below.
      ...['list', 'watch'].map((verb) => ({ verb, group: '', resource: 'namespaces' })),
      ...KINDS.flatMap((resource) => ['list', 'watch'].map((verb) => ({ verb, group: 'herald.io', resource }))),
      ...KINDS.map((kind) => ({ verb: 'patch', group: 'herald.io', resource: `${kind}/status` })),
      ...['list', 'watch'].map((verb) => ({ verb, group: 'herald.io', resource: 'bgpnodestatuses' })),
      // ... and Herald's pods: a node's Herald counts while its pod is Ready.
      ...['list', 'watch'].map((verb) => ({ verb, group: '', resource: 'pods' })),
      ...['get', 'create', 'update'].map((verb) => ({ verb, group: 'coordination.k8s.io', resource: 'leases' })),
      // The node set it publishes (src/status/node-set-publisher.ts) while a bounded advertisement exists: poke creates
      // one (shards created), relabels a Node (its shard replaced) and deletes it (the shards deleted).
      ...['list', 'watch', 'create', 'update', 'delete'].map((verb) => ({ verb, group: '', resource: 'configmaps' })),
    ],
    async start(t, cp, i, namespace) {
      const kubeconfig = cp.writeTokenKubeconfig(join(cp.dir, `controller-${namespace}.kubeconfig`), await cp.serviceAccountToken(namespace, 'herald-controller'));
      const herald = (plural: string, kind: string, name: string, spec: unknown) => api.must('POST', `/apis/herald.io/v1alpha1/namespaces/${namespace}/${plural}`, { apiVersion: 'herald.io/v1alpha1', kind, metadata: { name }, spec });
      await herald('bgppeers', 'BGPPeer', 'tor', { peerAddress: `${block}99`, peerASN: 65099 });
      await herald('bgpadvertisements', 'BGPAdvertisement', 'lb', { addressKinds: ['loadBalancer'] });
      await herald('ipaddresspools', 'IPAddressPool', 'spare', { addresses: [`203.0.113.${i}/32`], autoAssign: false });
      await herald('bgpnodeconfigoverrides', 'BGPNodeConfigOverride', `node-${i}`, { myASN: HERALD_AS });
      await api.must('POST', `/apis/herald.io/v1alpha1/namespaces/${namespace}/bgpnodestatuses`, { apiVersion: 'herald.io/v1alpha1', kind: 'BGPNodeStatus', metadata: { name: 'backend' }, spec: { nodeName: 'backend' } });
      await createService(api, { name: `ctl-svc-${i}`, selector: { app: 'backend' }, etp: 'Cluster', loadBalancerClass: `herald.test/c${i}` });
      const failing = `ctl-nopool-${i}`;
      await createService(api, { name: failing, selector: { app: 'backend' }, etp: 'Cluster', loadBalancerClass: `herald.test/c${i}`, annotations: { 'herald.io/address-pool': 'nowhere' } });
      const c: HeraldController = await startController(t, { kubeconfig, identity: `controller-${i}`, namespace, env: HOOKS, extra: { pools: [{ name: 'test', addresses: [`198.51.100.${16 + i}/32`] }, { name: 'team', addresses: [`198.51.100.${48 + i}/32`], namespaceSelectors: [{ matchLabels: { team: 'rbac' } }] }], loadBalancerClass: `herald.test/c${i}` } });
      await until('the controller answers', async () => ((await controllerStatus(c)) !== undefined ? true : undefined), 60_000);
      const poke = async (resource?: string) => {
        if (resource !== undefined && resource !== 'configmaps') return pokeEvents();
        if (resource === undefined) await pokeEvents();
        // A bounded BGPAdvertisement makes the controller publish the node set (create), a Node alone in its shard
        // changes a carried label (update), and without the advertisement the shards go (delete); each shard is
        // written at most every 5 s.
        const lone = loneNode(`poke-${i}`);
        await createNode(api, lone, `${block}254`);
        const bounded = `bounded-${lone}`;
        await herald('bgpadvertisements', 'BGPAdvertisement', bounded, BOUNDED_SPEC);
        await new Promise((r) => setTimeout(r, 6500));
        await api.must('PATCH', `/api/v1/nodes/${lone}`, { metadata: { labels: { 'herald.test/rack': 'b' } } }, 'application/merge-patch+json');
        await new Promise((r) => setTimeout(r, 6500));
        await api.must('DELETE', `/apis/herald.io/v1alpha1/namespaces/${namespace}/bgpadvertisements/${bounded}`);
        await new Promise((r) => setTimeout(r, 6500));
        await api.must('DELETE', `/api/v1/nodes/${lone}`);
      };
      const pokeEvents = async () => {
        for (const n of [1, 2]) {
          await new Promise((r) => setTimeout(r, 3000));
          await api.must('PATCH', `/api/v1/namespaces/default/services/${failing}`, { metadata: { annotations: { 'herald.test/poke': String(n) } } }, 'application/merge-patch+json');
        }
      };
      return { proc: c.proc, adminPort: c.port, status: () => controllerStatus(c), poke };
    },
    async shipped(t) {
      const ingress = await until('the controller assigned the address', async () => (await api.must('GET', '/api/v1/namespaces/default/services/ctl-svc-0')).body.status?.loadBalancer?.ingress, 90_000);
      t.same(ingress, [{ ip: '198.51.100.16', ipMode: 'VIP' }], 'the Service got its address');
    },
  };

  for (const [ci, c] of [node, controller].entries()) {
    const verbs = rbacVerbs(c.file, c.serviceAccount);
    const label = `${c.file.split('/').pop()} (${c.serviceAccount})`;
    t.ok(verbs.length >= 12, `${label} has its rules (${verbs.length} verbs)`);
    const nodeOf = (i: number): NodeSpec => nodes[ci * (NODE_COUNT / 2) + i]!;
    await createNode(api, nodeOf(0).name, nodeOf(0).ip);
    if (c === node) await passwordPeer('herald-system');
    const shipped = await c.start(t, cp, 0, 'herald-system', nodeOf(0));
    await t.test(`${label} as shipped: every production call is allowed, no 403`, async (t) => {
      await c.shipped(t, cp, shipped);
      await shipped.poke();
      const user = `system:serviceaccount:herald-system:${c.serviceAccount}`;
      const made = (e: AuditEvent, x: Call) => e.verb === x.verb && (e.objectRef?.apiGroup ?? '') === x.group && resourceOf(e) === x.resource && (e.responseStatus?.code ?? 0) < 300;
      // A Lease renewal (update) follows the acquisition within retryPeriod (2 s); Events are asynchronous.
      const seen = await until(
        'every production call in the audit log',
        () => {
          const mine = cp.audit().filter((e) => e.user.username === user && e.userAgent?.startsWith('herald/'));
          return c.calls.every((x) => x.pending !== undefined || mine.some((e) => made(e, x))) ? mine : undefined;
        },
        60_000,
      ).catch((err: unknown) => {
        const mine = cp.audit().filter((e) => e.user.username === user);
        throw new Error(`${(err as Error).message}; calls seen: ${[...new Set(mine.map((e) => `${e.verb} ${resourceOf(e)} ${e.responseStatus?.code}`))].join(', ')}\n${heraldLogs([shipped], [c.serviceAccount])}`, { cause: err });
      });
      for (const x of c.calls) {
        const name = `${x.verb} ${x.resource}${x.group ? `.${x.group}` : ''} allowed`;
        // A pending call is a visible skipped subtest (a skipped assertion would print as "not ok ... # SKIP").
        if (x.pending !== undefined) await t.test(name, { skip: x.pending }, async () => {});
        else t.ok(seen.some((e) => made(e, x)), name);
      }
      // Least privilege: the file grants this account nothing its component does not call.
      const listed = (v: { verb: string; group: string; resource: string }) => c.calls.some((x) => x.verb === v.verb && x.group === v.group && x.resource === v.resource);
      t.same(verbs.filter((v) => !listed(v)).map((v) => `${v.verb} ${v.resource}`), [], `every verb ${label} grants is a call its component makes`);
      t.same(seen.filter((e) => e.responseStatus?.code === 403).map((e) => `${e.verb} ${resourceOf(e)}`), [], 'no 403 in the audit log');
      const st = await shipped.status();
      t.equal(st?.ready, true, 'ready');
      t.equal(st?.forbidden, undefined, 'status lists no forbidden call');
      // The texts only (a bare /403/ also matches a timestamp, a pid or a port of an unrelated line).
      t.same(heraldLog(shipped).filter((l) => /HTTP 403|forbidden/i.test(JSON.stringify({ ...l, time: undefined, pid: undefined }))), [], 'no 403 in the log');
    });
    await shipped.proc.stop(5000);

    // The scenarios, a few Heralds at a time (each start loads the whole program: 2 shared cores).
    // A verb Herald does not call here (pending) has nothing to refuse: a visible skip naming why.
    const pendingOf = (v: { verb: string; group: string; resource: string }) => c.calls.find((x) => x.verb === v.verb && x.group === v.group && x.resource === v.resource)?.pending;
    const all = verbs.map((v, i) => ({ ...v, i: i + 1, namespace: `herald-rbac-${ci}-${i}`, name: `without ${v.verb} ${v.group ? `${v.resource}.${v.group}` : v.resource}` }));
    for (const s of all.filter((v) => pendingOf(v) !== undefined)) await t.test(`${label} ${s.name}`, { skip: pendingOf(s) }, async () => {});
    const scenarios = all.filter((v) => pendingOf(v) === undefined);
    const BATCH = 4;
    for (let first = 0; first < scenarios.length; first += BATCH) {
      const batch = scenarios.slice(first, first + BATCH);
      const running: Running[] = [];
      for (const s of batch) {
        await cp.apply([{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: s.namespace } }, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: c.serviceAccount, namespace: s.namespace } }, ...rbacCopy(c.file, c.serviceAccount, s.namespace, s)]);
        if (c === node) await passwordPeer(s.namespace);
        await createNode(api, nodeOf(s.i).name, nodeOf(s.i).ip).catch(() => undefined);
        running.push(await c.start(t, cp, s.i, s.namespace, nodeOf(s.i)));
      }
      for (const [j, s] of batch.entries()) await t.test(`${label} ${s.name}: the 403 is in Herald's log and status`, async (t) => checkScenario(t, cp, c, s, running[j]!));
      for (const r of running) await r.proc.stop(5000);
    }
  }
});

async function checkScenario(t: Test, cp: ControlPlane, c: Component, s: { verb: string; resource: string; namespace: string }, r: Running): Promise<void> {
  await r.poke(s.resource); // makes the Node patch, the Event's repeat, the node-set writes: refused in the scenario without it
  const want = `${s.verb} ${s.resource}: HTTP 403`;
  const user = `system:serviceaccount:${s.namespace}:${c.serviceAccount}`;
  const st = await withLogs(() => until(`status.forbidden starting "${want}"`, async () => {
    const x = await r.status();
    return x && (x.forbidden ?? []).some((f) => f.startsWith(want)) ? x : undefined;
  }, 90_000), [r], [s.namespace]);
  const entry = (st.forbidden ?? []).find((f) => f.startsWith(want))!;
  // A refused list and a refused watch both carry the apiserver's Status message (src/k8s/client.ts reads the body).
  t.match(entry, new RegExp(`User "${user}" cannot ${s.verb} resource "${s.resource}"`), `status names the user, verb and resource: ${entry}`);
  t.ok(cp.audit().some((e) => e.user.username === user && e.verb === s.verb && resourceOf(e) === s.resource && e.responseStatus?.code === 403), 'the apiserver refused that call (audit log)');
  const names = [s.resource, WATCHED[s.resource] ?? s.resource];
  // The line reaches us through the child's stdout pipe, possibly after the status already shows the 403: waited for.
  const warned = () => heraldLog(r).some((l) => (l['level'] as number) >= 40 && JSON.stringify(l).includes('403') && names.some((n) => JSON.stringify(l).includes(`"${n}`)));
  t.ok(await until("Herald's log line with the 403", () => warned(), 15_000).catch(() => false), "Herald's log warns with the 403");
  if (WATCHED[s.resource] !== undefined && s.verb === 'list' && !OPTIONAL.has(s.resource) && !(c.serviceAccount === 'herald-controller' && s.resource === 'nodes')) {
    t.equal(st.ready, false, 'a watched resource that cannot be listed: not ready');
    t.match(st.notReady.join('; '), new RegExp(`kubernetes source not synced \\(.*${WATCHED[s.resource]}: list ${s.resource}: HTTP 403: `), 'notReady names the 403');
  }
}
