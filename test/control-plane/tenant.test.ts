// The control-plane tier, tenants (issue 30; docs/security.md): a namespace user with the `edit` role in namespace
// `shop` only, against a real kube-apiserver (RBAC, admission) and one real BIRD, replays each attack of the issue:
// externalIPs of other people's addresses, an aggregation that would widen them (to a default route), well-known
// communities and a steering MED and prepend in annotations, a union of communities on a shared address, a health
// check aimed at an address of the node network at 5 probes a second, and addresses of a pool reserved for another
// namespace (requested, through spec.loadBalancerIP, by pool name, through another namespace's sharing key). None
// reaches BIRD, a probe, an allocation; each refusal is a reason in Herald's API, a Warning Event the tenant reads,
// and a metric. The positive paths run in the same cluster: an externalIP and an aggregate inside allowedPrefixes,
// allocator-assigned VIPs, an opted-in community, the reserved pool's own namespace. The tenant's writes the cluster
// refuses (EndpointSlices, Service status) are refused by the real apiserver.
import t from 'tap';
import { execFile } from 'node:child_process';
import net from 'node:net';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parse } from 'yaml';
import { freePort } from '../helpers/bird.ts';
import type { BirdRoute } from '../helpers/bird.ts';
import { KubeRest } from '../helpers/control-plane.ts';
import { HERALD_API_VERSION } from '../../src/k8s/herald-kinds.ts';
import { ROOT, adminJson, loopbackBlock, protoName, startBird, waitHeraldUp, withLogs } from '../e2e/harness.ts';
import { BIRD_AS, HERALD_AS, controlPlaneTier, createNode, createPod, nodeKubeconfig, setPodReady, startCluster, startHerald, until } from './harness.ts';

const SHOP = 'shop';
const PAYMENTS = 'payments';
const OTHER = 'other';

/** The Kubernetes objects of docs/security.md's ```yaml blocks (the policy the cluster should add), by kind. */
function securityDocObjects(): { kind: string; metadata: { name: string } }[] {
  const text = readFileSync(join(ROOT, 'docs/security.md'), 'utf8');
  // A block may be indented under a list item: the fence's indentation is taken off every line.
  return [...text.matchAll(/^( *)```yaml\n([\s\S]*?)^ *```/gm)].flatMap((m) => {
    const body = (m[2] ?? '').replaceAll(new RegExp(`^${m[1] ?? ''}`, 'gm'), '');
    return body.split(/^---$/m).map((d) => parse(d));
  });
}

/** `herald ARGS` (bin/herald.js under this Node): its stdout. */
async function herald(...args: string[]): Promise<string> {
  const { stdout } = await promisify(execFile)(process.execPath, [join(ROOT, 'bin/herald.js'), ...args], { timeout: 30_000 });
  return stdout;
}

controlPlaneTier(t, 'a namespace user with edit rights steers nothing past what the operator allows (issue 30)', 480_000, async (t) => {
  const block = loopbackBlock();
  // clusterrole-aggregation fills the built-in `edit` role from its aggregate-to-edit parts, as in every cluster.
  // standalone: this one `herald run` holds the controller's rights too (its allocator, its Events; docs/security.md).
  const cp = await startCluster(t, { host: `${block}200`, controllers: ['endpointslice', 'serviceaccount', 'clusterrole-aggregation'], standalone: true });
  const api = cp.admin;
  const me = { name: 'node-a', ip: `${block}1` };
  await createNode(api, me.name, me.ip);
  for (const ns of [SHOP, PAYMENTS, OTHER]) await api.must('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });

  // The tenant: a ServiceAccount of shop bound to the built-in `edit` ClusterRole in shop only.
  await api.must('POST', `/api/v1/namespaces/${SHOP}/serviceaccounts`, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'tenant' } });
  await api.must('POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${SHOP}/rolebindings`, {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name: 'tenant-edit' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'edit' },
    subjects: [{ kind: 'ServiceAccount', name: 'tenant', namespace: SHOP }],
  });
  const tenant = new KubeRest(cp.server, cp.ca, { token: await cp.serviceAccountToken(SHOP, 'tenant') });
  await until('the tenant can list Services in shop', async () => (await tenant.request('GET', `/api/v1/namespaces/${SHOP}/services`)).status === 200);
  t.equal((await tenant.request('GET', `/api/v1/namespaces/${PAYMENTS}/services`)).status, 403, 'the tenant has no rights in payments');

  // The operator's policy: allowedPrefixes, a public pool, a pool reserved for payments, an advertisement accepting
  // the communities 64512:100-199 only, and two that aggregate (24, 0) the externalIPs of labelled Services.
  const hcTarget = `${block}77`;
  const probes = { connections: 0 };
  const listener = net.createServer((s) => {
    probes.connections++;
    s.destroy();
  });
  const hcPort = await freePort(hcTarget);
  await new Promise<void>((resolve) => listener.listen(hcPort, hcTarget, resolve));
  t.teardown(() => new Promise<void>((resolve) => listener.close(() => resolve())));
  const birdIp = `${block}100`;
  const birdPort = await freePort(birdIp);
  const bird = await startBird({ ip: birdIp, port: birdPort, birdAs: BIRD_AS, heraldAs: HERALD_AS, nodes: [me], trace: true });
  t.teardown(() => bird.stop());
  // The token its pod on node-a gets (the admission policies read the node's name from it).
  const kubeconfig = await nodeKubeconfig(cp, me.name);
  const h = await startHerald(t, {
    node: me,
    kubeconfig,
    bird: { ip: birdIp, port: birdPort },
    extra: {
      allowedPrefixes: ['198.51.100.0/24'],
      pools: [
        { name: 'public', addresses: ['198.51.100.64/28'] },
        { name: 'payments', addresses: ['198.51.100.128/28'], namespaces: [PAYMENTS], autoAssign: false },
      ],
      advertisements: [
        { name: 'public', addressKinds: ['loadBalancer', 'externalIP'], serviceSelector: { matchExpressions: [{ key: 'agg', operator: 'DoesNotExist' }] }, communities: ['64512:1'], serviceAttributes: { communities: ['64512:100-199'] } },
        { name: 'agg24', addressKinds: ['externalIP'], serviceSelector: { matchLabels: { agg: '24' } }, aggregationLength: 24 },
        { name: 'agg0', addressKinds: ['externalIP'], serviceSelector: { matchLabels: { agg: '0' } }, aggregationLength: 0 },
      ],
      healthChecks: { interval: 1, timeout: 0.5, rise: 1, fall: 1 },
    },
  });
  await waitHeraldUp(h);
  // Refusal Events come from the holder of the herald-status Lease: this node, once elected.
  await until('node-a holds the herald-status Lease', async () => (await api.request('GET', '/apis/coordination.k8s.io/v1/namespaces/herald-system/leases/herald-status')).body?.spec?.holderIdentity === me.name, 60_000);
  const A = protoName(me.name);

  // One ready pod per namespace on node-a: every Service below selects it (the EndpointSlice controller writes the slices).
  for (const [i, ns] of [SHOP, PAYMENTS, OTHER].entries()) {
    await createPod(api, { name: 'web', namespace: ns, nodeName: me.name, labels: { app: 'web' } });
    await setPodReady(api, { name: 'web', namespace: ns, podIP: `10.244.1.${10 + i}`, hostIP: me.ip, ready: true });
  }
  const svc = (name: string, o: { type?: string; externalIPs?: string[]; labels?: Record<string, string>; annotations?: Record<string, string>; loadBalancerIP?: string; port?: number; namespace?: string }) => ({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace: o.namespace ?? SHOP, labels: o.labels ?? {}, annotations: o.annotations ?? {} },
    spec: {
      type: o.type ?? 'LoadBalancer',
      selector: { app: 'web' },
      ports: [{ name: 'http', port: o.port ?? 80, targetPort: 8080, protocol: 'TCP' }],
      ...(o.externalIPs ? { externalIPs: o.externalIPs } : {}),
      ...(o.loadBalancerIP ? { loadBalancerIP: o.loadBalancerIP } : {}),
    },
  });
  const create = (client: KubeRest, s: ReturnType<typeof svc>) => client.must('POST', `/api/v1/namespaces/${s.metadata.namespace}/services`, s);

  // The operator's (and other namespaces') Services: a payments Service by its pool's name; a Service of `other`
  // holding 198.51.100.75 under the sharing key k2.
  await create(api, svc('pay', { namespace: PAYMENTS, annotations: { 'herald.io/address-pool': 'payments' } }));
  await create(api, svc('victim', { namespace: OTHER, annotations: { 'herald.io/loadBalancerIPs': '198.51.100.75', 'herald.io/allow-shared-ip': 'k2' }, port: 443 }));

  // The tenant's Services, every one through the real apiserver with the tenant's token.
  await create(tenant, svc('ext-attack', { type: 'ClusterIP', externalIPs: ['8.8.8.8', '1.1.1.1', '198.51.100.51'] }));
  await create(tenant, svc('agg24-attack', { type: 'ClusterIP', externalIPs: ['8.8.4.4'], labels: { agg: '24' } }));
  await create(tenant, svc('agg0-attack', { type: 'ClusterIP', externalIPs: ['198.51.100.33'], labels: { agg: '0' } }));
  await create(tenant, svc('ext-ok', { type: 'ClusterIP', externalIPs: ['198.51.100.50'] }));
  await create(tenant, svc('agg24-ok', { type: 'ClusterIP', externalIPs: ['198.51.100.40'], labels: { agg: '24' } }));
  await create(tenant, svc('lb-attack', { annotations: { 'herald.io/communities': '65535:666, 65535:0, no-export, no-advertise', 'herald.io/med': '0', 'herald.io/as-path-prepend': '10' } }));
  await create(tenant, svc('lb-opted', { annotations: { 'herald.io/communities': '64512:150' } }));
  await create(tenant, svc('share-a', { annotations: { 'herald.io/loadBalancerIPs': '198.51.100.70', 'herald.io/allow-shared-ip': 'k', 'herald.io/communities': '64512:101' }, port: 80 }));
  await create(tenant, svc('share-b', { annotations: { 'herald.io/loadBalancerIPs': '198.51.100.70', 'herald.io/allow-shared-ip': 'k', 'herald.io/communities': '64512:102' }, port: 81 }));
  await create(tenant, svc('pool-thief', { annotations: { 'herald.io/loadBalancerIPs': '198.51.100.130' } }));
  await create(tenant, svc('spec-thief', { loadBalancerIP: '198.51.100.131' }));
  await create(tenant, svc('named-thief', { annotations: { 'herald.io/address-pool': 'payments' } }));
  await create(tenant, svc('key-thief', { annotations: { 'herald.io/loadBalancerIPs': '198.51.100.75', 'herald.io/allow-shared-ip': 'k2' }, port: 80 }));
  await create(tenant, svc('hc-attack', { annotations: { 'herald.io/health-check-type': 'tcp', 'herald.io/health-check-port': String(hcPort), 'herald.io/health-check-address': hcTarget, 'herald.io/health-check-interval': '0.2' } }));
  const hcCreated = Date.now();

  // What the cluster itself refuses a tenant: writing EndpointSlices and Service status.
  const slice = { apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata: { name: 'fake', labels: { 'kubernetes.io/service-name': 'ext-ok' } }, addressType: 'IPv4', endpoints: [{ addresses: [hcTarget], nodeName: me.name }] };
  t.equal((await tenant.request('POST', `/apis/discovery.k8s.io/v1/namespaces/${SHOP}/endpointslices`, slice)).status, 403, 'the edit role writes no EndpointSlice (CVE-2021-25740)');
  t.equal((await tenant.request('PATCH', `/api/v1/namespaces/${SHOP}/services/ext-ok/status`, { status: { loadBalancer: { ingress: [{ ip: '8.8.8.8' }] } } }, 'application/merge-patch+json')).status, 403, 'nor Service status');

  // Positive paths first: the allocator assigns, Herald announces what is allowed.
  const ingress = async (ns: string, name: string): Promise<string | undefined> => (await api.request('GET', `/api/v1/namespaces/${ns}/services/${name}`)).body?.status?.loadBalancer?.ingress?.[0]?.ip;
  const lbAttack = await until('lb-attack gets an address from the public pool', () => ingress(SHOP, 'lb-attack'));
  const lbOpted = await until('lb-opted gets an address from the public pool', () => ingress(SHOP, 'lb-opted'));
  const pay = await until('payments/pay gets an address of its own pool by name', () => ingress(PAYMENTS, 'pay'));
  await until('share-a and share-b share 198.51.100.70', async () => (await ingress(SHOP, 'share-a')) === '198.51.100.70' && (await ingress(SHOP, 'share-b')) === '198.51.100.70');
  t.match(lbAttack, /^198\.51\.100\.(6[4-9]|7[0-9])$/, 'allocator-assigned VIP from the public pool');
  t.match(pay, /^198\.51\.100\.1(2[89]|3\d|4[0-3])$/, 'the payments pool serves its namespace');
  const table = async (): Promise<BirdRoute[]> => (await bird.routes('table master4')).filter((r) => r.protocol === A);
  const route = async (prefix: string) => (await table()).find((r) => r.prefix === prefix);
  const want = ['198.51.100.50/32', '198.51.100.51/32', '198.51.100.0/24', `${lbAttack}/32`, `${lbOpted}/32`, `${pay}/32`, '198.51.100.70/32', '198.51.100.75/32'];
  await withLogs(() => bird.waitFor(async () => ((await Promise.all(want.map(route))).every((r) => r !== undefined) ? true : undefined), `BIRD holds ${want.join(', ')}`, 120_000), [h], [me.name]);
  t.pass('allowed externalIPs (one beside refused ones of the same Service), aggregate inside allowedPrefixes, allocated VIPs, the reserved pool for its namespace: in BIRD');

  // 1. Other people's addresses, and aggregates past the allowed space: never in BIRD.
  const prefixes = (await table()).map((r) => r.prefix);
  for (const p of ['8.8.8.8/32', '1.1.1.1/32', '8.8.4.0/24', '8.8.4.4/32', '0.0.0.0/0', '198.51.100.33/32', '198.51.100.130/32', '198.51.100.131/32']) t.notOk(prefixes.includes(p), `${p} not in BIRD`);
  t.ok(prefixes.every((p) => p.startsWith('198.51.100.') || p.startsWith('10.96.')), `nothing outside the allowed space and the ClusterIPs: ${prefixes.join(' ')}`);

  // 2. Path attributes: the operator's only; the opted-in community; no union on the shared address.
  const attack = await route(`${lbAttack}/32`);
  t.same(attack?.communities, ['64512:1'], 'no BLACKHOLE, GRACEFUL_SHUTDOWN, NO_EXPORT or NO_ADVERTISE from an annotation');
  t.equal(attack?.med, undefined, 'no MED from an annotation');
  t.same(attack?.bgpPath, [HERALD_AS], 'no prepend from an annotation');
  t.same((await route(`${lbOpted}/32`))?.communities, ['64512:1', '64512:150'], 'the opted-in community reaches BIRD');
  // While share-a alone stood behind the address its community went with it; once share-b joins (the change waits
  // for attributeChangeInterval, 5 s) the route carries neither.
  await bird.waitFor(async () => ((await route('198.51.100.70/32'))?.communities.join() === '64512:1' ? true : undefined), 'the shared address without either community', 30_000);
  t.same((await route('198.51.100.70/32'))?.communities, ['64512:1'], "neither tenant's community on the shared address");
  t.same((await route('198.51.100.50/32'))?.communities, ['64512:1']);

  // 3. IPAM: nothing of the reserved pool, nothing through another namespace's key.
  for (const name of ['pool-thief', 'spec-thief', 'named-thief', 'key-thief']) t.equal(await ingress(SHOP, name), undefined, `${name}: no address`);

  // 4. The health check aimed at the node network: no probe at all, and the VIP fails closed.
  const hc = await until('hc-attack gets an address', () => ingress(SHOP, 'hc-attack'));
  await new Promise((r) => setTimeout(r, Math.max(0, 6000 - (Date.now() - hcCreated))));
  t.equal(probes.connections, 0, `no connection to ${hcTarget}:${hcPort} (it would have been ~30 at interval 0.2)`);
  t.notOk((await table()).some((r) => r.prefix === `${hc}/32`), 'a VIP with a refused check is not announced (fail closed)');

  // Reasons in Herald's API.
  type SvcView = { service: string; vips: { address: string; announced: boolean; reasons: { code: string; message: string; causes?: { code: string }[] }[] }[] };
  const views = (await adminJson(h.adminPort, '/api/v1/services')) as SvcView[];
  const reasons = (service: string, address: string) => views.find((s) => s.service === service)?.vips.find((v) => v.address === address)?.reasons ?? [];
  t.ok(reasons('shop/ext-attack', '8.8.8.8').some((r) => r.code === 'PrefixNotAllowed'), 'PrefixNotAllowed for 8.8.8.8');
  t.match(reasons('shop/agg0-attack', '198.51.100.33').find((r) => r.code === 'PrefixNotAllowed')?.message, /would announce 0\.0\.0\.0\/0/);
  t.ok(reasons(`shop/lb-attack`, lbAttack).some((r) => r.code === 'AttributeNotAllowed' && /well-known/.test(r.message)), 'AttributeNotAllowed for the well-known communities');
  t.match(JSON.stringify(reasons('shop/hc-attack', hc)), /health-check-address.*is not accepted/, 'the refused check says why');
  t.match(reasons('shop/share-a', '198.51.100.70').find((r) => r.code === 'AttributeNotSent')?.message, /herald\.io\/communities not sent on 198\.51\.100\.70\/32: not every Service and advertisement behind it asks for the same/, 'the API says what was withheld on the shared address');

  // Warning Events the tenant reads, and the metrics.
  const events = async () => ((await tenant.must('GET', `/api/v1/namespaces/${SHOP}/events`)).body.items as { involvedObject: { name: string }; reason: string; type: string; message: string }[]) ?? [];
  const warned = await until('the Warning Events reach shop', async () => {
    const list = await events();
    const has = (svcName: string, reason: string) => list.some((e) => e.involvedObject.name === svcName && e.reason === reason && e.type === 'Warning');
    return has('ext-attack', 'PrefixNotAllowed') && has('lb-attack', 'AttributeNotAllowed') && has('pool-thief', 'AllocationFailed') && has('key-thief', 'AllocationFailed') ? list : undefined;
  }, 60_000);
  t.match(warned.find((e) => e.involvedObject.name === 'pool-thief' && e.reason === 'AllocationFailed')?.message, /pool "payments" serves the namespace payments only/);
  t.match(warned.find((e) => e.involvedObject.name === 'key-thief' && e.reason === 'AllocationFailed')?.message, /another namespace/);
  t.notMatch(JSON.stringify(warned), new RegExp(hcTarget.replaceAll('.', '\\.')), 'no Event names the probed address');
  const metrics = await (await fetch(`http://127.0.0.1:${h.adminPort}/metrics`)).text();
  const value = (re: RegExp) => Number(re.exec(metrics)?.[1] ?? NaN);
  t.ok(value(/herald_tenant_inputs_refused\{reason="PrefixNotAllowed"\} (\d+)/) >= 4, 'herald_tenant_inputs_refused counts the addresses');
  t.ok(value(/herald_tenant_inputs_refused\{reason="AttributeNotAllowed"\} (\d+)/) >= 1, '... and the attributes');
  t.ok(value(/herald_ipam_allocations_failed\{reason="PoolNotAllowed"\} (\d+)/) >= 3, 'herald_ipam_allocations_failed counts the pool thieves');

  // A refused change withdraws nothing that was fine: lb-opted asks for a well-known community beside its allowed
  // one (refused whole: the route goes on with the advertisement's community), ext-ok adds 8.8.8.8 beside its
  // allowed address. BIRD's route trace shows no removal of either route.
  const merge = 'application/merge-patch+json';
  await tenant.must('PATCH', `/api/v1/namespaces/${SHOP}/services/lb-opted`, { metadata: { annotations: { 'herald.io/communities': '64512:150, 65535:666' } } }, merge);
  await tenant.must('PATCH', `/api/v1/namespaces/${SHOP}/services/ext-ok`, { spec: { externalIPs: ['198.51.100.50', '8.8.8.8'] } }, merge);
  await bird.waitFor(async () => ((await route(`${lbOpted}/32`))?.communities.join() === '64512:1' ? true : undefined), 'lb-opted with the advertisement\'s community only', 30_000);
  await until('ext-ok refuses 8.8.8.8', async () => ((await adminJson(h.adminPort, '/api/v1/services')) as SvcView[]).find((x) => x.service === 'shop/ext-ok')?.vips.find((v) => v.address === '8.8.8.8')?.reasons.some((r) => r.code === 'PrefixNotAllowed'));
  t.ok(await route('198.51.100.50/32'), 'ext-ok\'s allowed address still announced');
  t.notOk((await table()).some((r) => r.prefix === '8.8.8.8/32'), '8.8.8.8 not in BIRD');
  const removed = bird.routeTrace().filter((e) => e.protocol === A && e.action === 'removed' && (e.prefix === `${lbOpted}/32` || e.prefix === '198.51.100.50/32'));
  t.same(removed.map((e) => e.line), [], 'no removal of a route that was fine');

  // An address another writer of services/status puts there (a second load-balancer controller; here the admin),
  // outside every pool and allowedPrefixes: the allocator keeps it (no surprise moves), Herald never announces it.
  await create(tenant, svc('lb-foreign', { port: 82 }));
  const before = await until('lb-foreign gets an address', () => ingress(SHOP, 'lb-foreign'));
  await api.must('PATCH', `/api/v1/namespaces/${SHOP}/services/lb-foreign/status`, { status: { loadBalancer: { ingress: [{ ip: '192.0.2.99' }] } } }, merge);
  await until('Herald refuses 192.0.2.99 from the status', async () => ((await adminJson(h.adminPort, '/api/v1/services')) as SvcView[]).find((x) => x.service === 'shop/lb-foreign')?.vips.find((v) => v.address === '192.0.2.99')?.reasons.some((r) => r.code === 'PrefixNotAllowed'));
  await bird.waitFor(async () => ((await route(`${before}/32`)) === undefined ? true : undefined), `${before} (no longer in the status) withdrawn`, 30_000);
  t.notOk((await table()).some((r) => r.prefix === '192.0.2.99/32'), 'an ingress address outside the allowed space, written by another controller, not in BIRD');
  t.equal(await ingress(SHOP, 'lb-foreign'), '192.0.2.99', 'the status still holds it (the refusal is Herald\'s, not a rewrite)');

  // The operator cannot open the well-known range to Services either: a BGPAdvertisement accepting 65535:x is refused
  // whole (Valid False, ignored by every node).
  const ads = `/apis/${HERALD_API_VERSION}/namespaces/herald-system/bgpadvertisements`;
  await api.must('POST', ads, { apiVersion: HERALD_API_VERSION, kind: 'BGPAdvertisement', metadata: { name: 'wide' }, spec: { addressKinds: ['loadBalancer'], serviceAttributes: { communities: ['65535:0-65535'] } } });
  const wide = await until('BGPAdvertisement wide refused', async () => ((await api.request('GET', `${ads}/wide`)).body?.status?.conditions as { type: string; status: string; message: string }[] | undefined)?.find((c) => c.type === 'Valid' && c.status === 'False'), 60_000);
  t.match(wide.message, /65535:0-65535 reaches into the well-known communities/, 'a BGPAdvertisement accepting well-known communities from Services is refused');
  t.same((await route(`${lbAttack}/32`))?.communities, ['64512:1'], 'lb-attack still carries none of its annotation');

  // The reason in the CLI (this node's admin API) and in BGPNodeStatus, the node's small summary (VIPs not announced,
  // counted by reason code). `herald services --all-nodes` asks each node through the apiserver's pod proxy, which a
  // real apiserver does not open to a loopback pod IP (pkg/registry/core/pod/strategy.go ResourceLocation: global
  // unicast only): test/e2e/racks-bird.test.ts shows PrefixNotAllowed through it, against the fake apiserver.
  t.match(await herald('services', 'shop/ext-attack', '--api', `http://127.0.0.1:${h.adminPort}`), /8\.8\.8\.8 \(externalIP\): NOT announced\n\s+- PrefixNotAllowed: 8\.8\.8\.8 \(externalIP\) is outside every pool and allowedPrefixes/, 'herald services shows PrefixNotAllowed');
  const refusedCount = await until('BGPNodeStatus of node-a counts the VIPs refused as PrefixNotAllowed', async () => {
    const counts = ((await api.request('GET', `/apis/${HERALD_API_VERSION}/namespaces/herald-system/bgpnodestatuses/${me.name}`)).body?.status?.notAnnounced ?? []) as { reason: string; vips: number }[];
    const n = counts.find((x) => x.reason === 'PrefixNotAllowed')?.vips ?? 0;
    return n >= 1 ? n : undefined;
  }, 90_000);
  t.ok(refusedCount >= 1, `BGPNodeStatus: ${refusedCount} VIP(s) not announced for PrefixNotAllowed`);
  t.ok(h.proc.alive, 'herald still running');

  // What docs/security.md says the cluster should add: its ValidatingAdmissionPolicy refuses the tenant's
  // externalIPs outside the operator's ranges in the apiserver, before Herald sees them.
  const policy = securityDocObjects().filter((o) => o?.kind === 'ValidatingAdmissionPolicy' || o?.kind === 'ValidatingAdmissionPolicyBinding');
  t.equal(policy.length, 2, 'docs/security.md shows the policy and its binding (fixture check)');
  for (const o of policy) await api.must('POST', `/apis/admissionregistration.k8s.io/v1/${o.kind === 'ValidatingAdmissionPolicy' ? 'validatingadmissionpolicies' : 'validatingadmissionpolicybindings'}`, o);
  const refused = await until('the policy refuses 8.8.8.8', async () => {
    const r = await tenant.request('POST', `/api/v1/namespaces/${SHOP}/services`, svc('ext-late', { type: 'ClusterIP', externalIPs: ['8.8.8.8'] }));
    if (r.status === 201) await api.must('DELETE', `/api/v1/namespaces/${SHOP}/services/ext-late`);
    return r.status !== 201 ? r : undefined;
  });
  t.equal(refused.status, 422, 'the apiserver refuses an externalIP outside the ranges');
  t.match(JSON.stringify(refused.body), /spec\.externalIPs may only hold addresses inside 198\.51\.100\.0\/24/, 'with the policy\'s message');
  t.equal((await tenant.request('POST', `/api/v1/namespaces/${SHOP}/services`, svc('ext-late-ok', { type: 'ClusterIP', externalIPs: ['198.51.100.52'] }))).status, 201, 'one inside them is accepted');
  t.equal((await tenant.request('POST', `/api/v1/namespaces/${SHOP}/services`, svc('lb-late', {}))).status, 201, 'and a Service without externalIPs');
});
