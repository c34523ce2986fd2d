// The control-plane tier, RBAC: Herald runs as the ServiceAccount bound by deploy/kubernetes/rbac.yaml against a
// real kube-apiserver with --authorization-mode=RBAC and does what it does in production — watches Services,
// EndpointSlices, Nodes, ServiceCIDRs and its own kinds (herald.io), reads a BGPPeer's password Secret, writes its
// BGPNodeStatus, holds the allocator Lease, writes Service status, records Events, and, as the elected status writer
// (Lease herald-status), reads every BGPNodeStatus, the Nodes and Herald's pods, and writes the conditions of each
// configuration kind — and the
// apiserver's audit log shows every one of those calls allowed and no 403 for Herald at all.
//
// Every Herald here reads its collections by LIST (HERALD_TEST_STREAMING_LIST=off, the path it takes with an
// apiserver that refuses streaming lists), so that each `list` it is granted is made and its 403 seen; a streaming list
// needs `watch` only (test/control-plane/conditions.test.ts sees one).
//
// Then, for every verb of every rule of rbac.yaml, a copy of the file without that verb (in a namespace of its own,
// with its own ServiceAccount, ClusterRole and Herald) must make Herald show the 403: in its log, and in
// `/api/v1/status` (`forbidden`, and `notReady` when a watched resource cannot be listed). A rule added to rbac.yaml
// is picked up here automatically: its scenario fails until Herald makes that call and surfaces its 403.
import t from 'tap';
import type { Test } from 'tap';
import { join } from 'node:path';
import { freePort } from '../helpers/bird.ts';
import { readManifests } from '../helpers/control-plane.ts';
import type { AuditEvent, ControlPlane } from '../helpers/control-plane.ts';
import { heraldLogs, loopbackBlock, pathsFor, protoName, startBird, waitHeraldUp, withLogs } from '../e2e/harness.ts';
import type { HeraldNode, NodeSpec } from '../e2e/harness.ts';
import { BIRD_AS, HERALD_AS, controlPlaneTier, createNode, createPod, createService, drainAndUndrain, heraldLog, heraldStatus, setPodReady, startCluster, startHerald, until } from './harness.ts';

/** The informer kinds Herald watches, by resource (src/sources/kubernetes.ts; status names them so). */
const WATCHED: Record<string, string> = { services: 'Service', nodes: 'Node', endpointslices: 'EndpointSlice', servicecidrs: 'ServiceCIDR', bgppeers: 'BGPPeer', bgpadvertisements: 'BGPAdvertisement', ipaddresspools: 'IPAddressPool', bgpnodeconfigoverrides: 'BGPNodeConfigOverride' };
/** Watched resources Herald runs without (not served or not granted: synced with no objects), so a 403 leaves it ready. */
const OPTIONAL = new Set(['servicecidrs', 'bgppeers', 'bgpadvertisements', 'ipaddresspools', 'bgpnodeconfigoverrides']);

/**
 * The calls production makes, as the audit log names them: [verb, apiGroup, resource (with /subresource)]. The Node
 * patch is the drain annotation herald.io/drain: every instance drains and undrains once (drainAndUndrain), so the
 * shipped one makes the call and the one without `patch nodes` shows its 403.
 */
const PRODUCTION_CALLS: { verb: string; group: string; resource: string; pending?: string }[] = [
  { verb: 'list', group: '', resource: 'services' },
  { verb: 'watch', group: '', resource: 'services' },
  { verb: 'list', group: 'discovery.k8s.io', resource: 'endpointslices' },
  { verb: 'watch', group: 'discovery.k8s.io', resource: 'endpointslices' },
  { verb: 'list', group: '', resource: 'nodes' },
  { verb: 'watch', group: '', resource: 'nodes' },
  { verb: 'list', group: 'networking.k8s.io', resource: 'servicecidrs' },
  { verb: 'watch', group: 'networking.k8s.io', resource: 'servicecidrs' },
  { verb: 'get', group: 'coordination.k8s.io', resource: 'leases' },
  { verb: 'create', group: 'coordination.k8s.io', resource: 'leases' },
  { verb: 'update', group: 'coordination.k8s.io', resource: 'leases' },
  { verb: 'patch', group: '', resource: 'services/status' },
  { verb: 'create', group: '', resource: 'events' },
  // A repeated Event raises the count of the one written before (src/events/correlator.ts): the backend's readiness
  // flaps once, so the VIP's second Announced is a patch (HERALD_TEST_EVENT_REPEAT_SEC=0 writes it at once).
  { verb: 'patch', group: '', resource: 'events' },
  ...['bgppeers', 'bgpadvertisements', 'ipaddresspools', 'bgpnodeconfigoverrides'].flatMap((resource) => ['list', 'watch'].map((verb) => ({ verb, group: 'herald.io', resource }))),
  { verb: 'create', group: 'herald.io', resource: 'bgpnodestatuses' },
  { verb: 'patch', group: 'herald.io', resource: 'bgpnodestatuses/status' },
  // The status writer: every node's BGPNodeStatus read, each configuration kind's conditions written.
  { verb: 'list', group: 'herald.io', resource: 'bgpnodestatuses' },
  { verb: 'watch', group: 'herald.io', resource: 'bgpnodestatuses' },
  // ... and Herald's pods: a node's Herald counts while its pod is Ready.
  { verb: 'list', group: '', resource: 'pods' },
  { verb: 'watch', group: '', resource: 'pods' },
  ...['bgppeers', 'bgpadvertisements', 'ipaddresspools', 'bgpnodeconfigoverrides'].map((kind) => ({ verb: 'patch', group: 'herald.io', resource: `${kind}/status` })),
  { verb: 'get', group: '', resource: 'secrets' },
  { verb: 'patch', group: '', resource: 'nodes' },
];

const resourceOf = (e: AuditEvent) => `${e.objectRef?.resource ?? ''}${e.objectRef?.subresource ? `/${e.objectRef.subresource}` : ''}`;

/** The evidence one removed verb must leave in Herald's status: the `forbidden` entry's prefix. */
function expectedForbidden(verb: string, resource: string): string {
  return `${verb} ${resource}: HTTP 403`;
}

/** Herald's config for one instance: a pool for the allocator, the Services of `loadBalancerClass` only. */
function allocatorConfig(pool: string, loadBalancerClass: string): Record<string, unknown> {
  return { pools: [{ name: 'test', addresses: [pool] }], loadBalancerClass };
}

interface Scenario {
  name: string;
  verb: string;
  group: string;
  resource: string;
  namespace: string;
  node: NodeSpec;
  herald?: HeraldNode;
}

/** rbac.yaml's documents for namespace `ns`: the names made unique, `drop` removed from its rule. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
function rbacCopy(ns: string, drop: { rule: number; doc: number; verb: string }): any[] {
  const docs = readManifests('deploy/kubernetes/rbac.yaml');
  return docs.map((d, i) => {
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

/** Every (doc, rule, verb) of rbac.yaml's Roles and ClusterRoles. */
function rbacVerbs(): { doc: number; rule: number; verb: string; group: string; resource: string }[] {
  const out: { doc: number; rule: number; verb: string; group: string; resource: string }[] = [];
  readManifests('deploy/kubernetes/rbac.yaml').forEach((d, doc) => {
    if (d.kind !== 'ClusterRole' && d.kind !== 'Role') return;
    (d.rules as { apiGroups: string[]; resources: string[]; verbs: string[] }[]).forEach((r, rule) => {
      for (const group of r.apiGroups) for (const resource of r.resources) for (const verb of r.verbs) out.push({ doc, rule, verb, group, resource });
    });
  });
  return out;
}

controlPlaneTier(t, 'RBAC against a real kube-apiserver: the shipped rules suffice; each missing verb shows its 403', 780_000, async (t) => {
  const block = loopbackBlock();
  const cp = await startCluster(t, { host: `${block}200` });
  const api = cp.admin;
  const verbs = rbacVerbs();
  t.ok(verbs.length >= 23, `rbac.yaml has its rules (${verbs.length} verbs)`);

  // One backend pod, ready on a node of its own: every scenario's Service has a ready endpoint (Cluster policy).
  await createNode(api, 'backend', `${block}250`);
  await createPod(api, { name: 'backend', nodeName: 'backend', labels: { app: 'backend' } });
  await setPodReady(api, { name: 'backend', podIP: '10.244.0.10', hostIP: `${block}250`, ready: true });

  const shipped: Scenario = { name: 'shipped', verb: '', group: '', resource: '', namespace: 'herald-system', node: { name: 'node-shipped', ip: `${block}1` } };
  const scenarios: Scenario[] = verbs.map((v, i) => ({
    name: `without ${v.verb} ${v.group ? `${v.resource}.${v.group}` : v.resource}`,
    ...v,
    namespace: `herald-rbac-${i}`,
    node: { name: `node-rbac-${i}`, ip: `${block}${i + 2}` },
  }));
  const all = [shipped, ...scenarios];
  const birdIp = `${block}100`;
  const birdPort = await freePort(birdIp);
  const bird = await startBird({ ip: birdIp, port: birdPort, birdAs: BIRD_AS, heraldAs: HERALD_AS, nodes: all.map((s) => s.node) });
  t.teardown(() => bird.stop());

  // Each instance: its Node, a Service of its own class needing an address from its own pool, its RBAC, a token.
  for (const [i, s] of all.entries()) {
    if (s !== shipped) {
      const v = verbs[i - 1]!;
      await cp.apply([{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: s.namespace } }, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'herald', namespace: s.namespace } }, ...rbacCopy(s.namespace, v)]);
    }
    // A BGPPeer whose password is in a Secret (read with `get secrets`); nothing answers at its address.
    await api.must('POST', `/api/v1/namespaces/${s.namespace}/secrets`, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'tor-pw' }, stringData: { password: 'rbac-test' } });
    await api.must('POST', `/apis/herald.io/v1alpha1/namespaces/${s.namespace}/bgppeers`, { apiVersion: 'herald.io/v1alpha1', kind: 'BGPPeer', metadata: { name: 'md5' }, spec: { peerAddress: `${block}99`, peerASN: 65099, passwordSecret: { name: 'tor-pw' }, connectTime: 5 } });
    // One object of every other configuration kind, that changes nothing announced: the status writer writes each one's
    // conditions (patch <plural>/status). The advertisement covers the LoadBalancer VIP (to every peer, as without one).
    const herald = (plural: string, kind: string, name: string, spec: unknown) => api.must('POST', `/apis/herald.io/v1alpha1/namespaces/${s.namespace}/${plural}`, { apiVersion: 'herald.io/v1alpha1', kind, metadata: { name }, spec });
    await herald('bgpadvertisements', 'BGPAdvertisement', 'lb', { addressKinds: ['loadBalancer'] });
    await herald('ipaddresspools', 'IPAddressPool', 'spare', { addresses: [`203.0.113.${i}/32`], autoAssign: false });
    await herald('bgpnodeconfigoverrides', 'BGPNodeConfigOverride', s.node.name, { myASN: HERALD_AS });
    await createNode(api, s.node.name, s.node.ip);
    await createService(api, { name: `svc-${i}`, selector: { app: 'backend' }, etp: 'Cluster', loadBalancerClass: `herald.test/c${i}` });
  }
  const start = async (i: number) => {
    const s = all[i]!;
    const kubeconfig = cp.writeTokenKubeconfig(join(cp.dir, `herald-${i}.kubeconfig`), await cp.serviceAccountToken(s.namespace, 'herald'));
    s.herald = await startHerald(t, { node: s.node, kubeconfig, bird: { ip: birdIp, port: birdPort }, namespace: s.namespace, extra: allocatorConfig(`198.51.100.${16 + i}/32`, `herald.test/c${i}`), env: { HERALD_TEST_STREAMING_LIST: 'off', HERALD_TEST_EVENT_REPEAT_SEC: '0' } });
  };
  // The backend goes unready and ready again: each Herald withdraws its VIP (Withdrawn) and announces it again (an
  // Announced Event it wrote before: a patch of its count).
  const flap = async () => {
    await setPodReady(api, { name: 'backend', podIP: '10.244.0.10', hostIP: `${block}250`, ready: false });
    await new Promise((r) => setTimeout(r, 5000));
    await setPodReady(api, { name: 'backend', podIP: '10.244.0.10', hostIP: `${block}250`, ready: true });
  };

  await start(0);
  await t.test('as shipped: every production call is allowed, no 403, the VIP reaches BIRD', async (t) => {
    const h = shipped.herald!;
    await waitHeraldUp(h);
    const vip = '198.51.100.16/32';
    await withLogs(() => bird.waitFor(async () => (await pathsFor(bird, vip)).join() === protoName(shipped.node.name) || undefined, 'the allocated VIP from node-shipped', 90_000), [h], ['shipped']);
    t.same(await drainAndUndrain(h), [200, 200], 'herald drain and undrain patch the Node annotation');
    await flap();
    const user = 'system:serviceaccount:herald-system:herald';
    // A Lease renewal (update) follows the acquisition within retryPeriod (2 s); Events are asynchronous.
    const seen = await until(
      'every production call in the audit log',
      () => {
        const mine = cp.audit().filter((e) => e.user.username === user);
        const missing = PRODUCTION_CALLS.filter((c) => c.pending === undefined && !mine.some((e) => e.verb === c.verb && (e.objectRef?.apiGroup ?? '') === c.group && resourceOf(e) === c.resource && (e.responseStatus?.code ?? 0) < 300));
        return missing.length === 0 ? mine : undefined;
      },
      60_000,
    ).catch((err: unknown) => {
      const mine = cp.audit().filter((e) => e.user.username === user);
      throw new Error(`${(err as Error).message}; calls seen: ${[...new Set(mine.map((e) => `${e.verb} ${resourceOf(e)} ${e.responseStatus?.code}`))].join(', ')}\n${heraldLogs([h], ['shipped'])}`, { cause: err });
    });
    for (const c of PRODUCTION_CALLS) {
      const name = `${c.verb} ${c.resource}${c.group ? `.${c.group}` : ''} allowed`;
      // A pending call is a visible skipped subtest (a skipped assertion would print as "not ok ... # SKIP").
      if (c.pending !== undefined) await t.test(name, { skip: c.pending }, async () => {});
      else t.ok(seen.some((e) => e.verb === c.verb && (e.objectRef?.apiGroup ?? '') === c.group && resourceOf(e) === c.resource && (e.responseStatus?.code ?? 0) < 300), name);
    }
    // Least privilege: rbac.yaml grants nothing production does not call.
    const called = (v: { verb: string; group: string; resource: string }) => PRODUCTION_CALLS.some((c) => c.pending === undefined && c.verb === v.verb && c.group === v.group && c.resource === v.resource);
    t.same(
      verbs.filter((v) => !called(v)).map((v) => `${v.verb} ${v.resource}`),
      [],
      'every verb rbac.yaml grants is a call Herald makes',
    );
    const forbidden = seen.filter((e) => e.responseStatus?.code === 403);
    t.same(
      forbidden.map((e) => `${e.verb} ${resourceOf(e)}`),
      [],
      'no 403 for Herald in the audit log',
    );
    const st = await heraldStatus(h);
    t.equal(st?.ready, true, 'ready');
    t.equal(st?.forbidden, undefined, 'status lists no forbidden call');
    // The texts only (a bare /403/ also matches a timestamp, a pid or a port of an unrelated line); the lines found
    // are shown when it fails.
    t.same(
      heraldLog(h).filter((l) => /HTTP 403|forbidden/i.test(JSON.stringify({ ...l, time: undefined, pid: undefined }))),
      [],
      'no 403 in the log',
    );
  });

  // The scenarios, a few Heralds at a time (each start loads the whole program: 2 shared cores).
  const BATCH = 4;
  for (let first = 0; first < scenarios.length; first += BATCH) {
    const batch = scenarios.slice(first, first + BATCH);
    for (let j = 0; j < batch.length; j++) await start(first + j + 1);
    if (batch.some((s) => s.resource === 'events' && s.verb === 'patch')) {
      for (const s of batch) await waitHeraldUp(s.herald!);
      await new Promise((r) => setTimeout(r, 10_000)); // each has announced its VIP (its first Announced Event)
      await flap();
    }
    for (const s of batch) await t.test(`rbac.yaml ${s.name}: the 403 is in Herald's log and status`, async (t) => checkScenario(t, cp, s));
    for (const s of batch) await s.herald?.proc.stop(5000);
  }
});

async function checkScenario(t: Test, cp: ControlPlane, s: Scenario): Promise<void> {
  const h = s.herald!;
  await waitHeraldUp(h);
  await drainAndUndrain(h).catch(() => undefined); // makes the Node patch: refused in the scenario without it
  const want = expectedForbidden(s.verb, s.resource);
  const user = `system:serviceaccount:${s.namespace}:herald`;
  const st = await withLogs(() => until(`status.forbidden starting "${want}"`, async () => {
    const x = await heraldStatus(h);
    return x && (x.forbidden ?? []).some((f) => f.startsWith(want)) ? x : undefined;
  }, 90_000), [h], [s.node.name]);
  const entry = (st.forbidden ?? []).find((f) => f.startsWith(want))!;
  // A refused list and a refused watch both carry the apiserver's Status message (src/k8s/client.ts reads the body).
  t.match(entry, new RegExp(`User "${user}" cannot ${s.verb} resource "${s.resource}"`), `status names the user, verb and resource: ${entry}`);
  t.ok(
    cp.audit().some((e) => e.user.username === user && e.verb === s.verb && resourceOf(e) === s.resource && e.responseStatus?.code === 403),
    'the apiserver refused that call (audit log)',
  );
  const names = [s.resource, WATCHED[s.resource] ?? s.resource];
  // The line reaches us through the child's stdout pipe, possibly after the status already shows the 403: waited for.
  const warned = () => heraldLog(h).some((l) => (l['level'] as number) >= 40 && JSON.stringify(l).includes('403') && names.some((n) => JSON.stringify(l).includes(`"${n}`)));
  const logged = await until("Herald's log line with the 403", () => warned(), 15_000).catch(() => false);
  t.ok(logged, "Herald's log warns with the 403");
  if (WATCHED[s.resource] !== undefined && s.verb === 'list' && !OPTIONAL.has(s.resource)) {
    t.equal(st.ready, false, 'a watched resource that cannot be listed: not ready');
    t.match(st.notReady.join('; '), new RegExp(`kubernetes source not synced \\(.*${WATCHED[s.resource]}: list ${s.resource}: HTTP 403: `), 'notReady names the 403');
  }
}
