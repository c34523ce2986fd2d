import t from 'tap';
import type { Service } from '../../../src/k8s/types.ts';
import { planAllocations, requestedIps, sharingConflict } from '../../../src/ipam/allocator.ts';
import { parsePool, PoolError, type PoolConfig } from '../../../src/ipam/pool.ts';

let seq = 0;
function svc(name: string, opts: { ns?: string; annotations?: Record<string, string>; labels?: Record<string, string>; ips?: string[]; type?: string; cls?: string; ports?: number[]; etp?: string; selector?: Record<string, string>; families?: string[]; policy?: string; lbIP?: string } = {}): Service {
  seq++;
  return {
    metadata: { name, namespace: opts.ns ?? 'default', annotations: opts.annotations, labels: opts.labels, creationTimestamp: `2026-01-01T00:00:${String(seq).padStart(2, '0')}Z` } as Service['metadata'],
    spec: {
      type: opts.type ?? 'LoadBalancer',
      loadBalancerClass: opts.cls,
      ports: (opts.ports ?? [80]).map((port) => ({ port, protocol: 'TCP' })),
      externalTrafficPolicy: opts.etp,
      selector: opts.selector ?? { app: name },
      ipFamilies: opts.families,
      ipFamilyPolicy: opts.policy,
      loadBalancerIP: opts.lbIP,
    },
    status: opts.ips ? { loadBalancer: { ingress: opts.ips.map((ip) => ({ ip, ipMode: 'VIP' })) } } : {},
  };
}
const pools = (...cfgs: PoolConfig[]) => cfgs.map((c, i) => parsePool(c, i));
const reasons = (plan: ReturnType<typeof planAllocations>) => plan.events.map((e) => `${e.service} ${e.reason}`);

t.test('pool parsing: CIDR, ranges, IPv6, and errors naming the field', async (t) => {
  const [p] = pools({ name: 'a', addresses: ['10.0.0.0/30', '10.0.1.5-10.0.1.6', '2001:db8::/127'] });
  t.equal(p?.ranges.length, 3);
  t.throws(() => parsePool({ name: 'b', addresses: ['10.0.0.1/24'] }, 2), { name: 'PoolError', message: /pools\[2\]\.addresses\[0\].*host bits/ });
  t.throws(() => parsePool({ name: 'b', addresses: ['10.0.0.9-10.0.0.1'] }), PoolError);
  t.throws(() => parsePool({ name: 'b', addresses: ['10.0.0.1-2001:db8::1'] }), /mixes IPv4 and IPv6/);
  t.throws(() => parsePool({ name: 'b', addresses: ['nonsense'] }), /neither a CIDR/);
  t.throws(() => parsePool({ name: 'b', addresses: [] }), /at least one/);
});

t.test('allocates in order, keeps existing, fixed point on re-run', async (t) => {
  const p = pools({ name: 'default', addresses: ['192.0.2.0/30'] });
  const s = [svc('a'), svc('b', { ips: ['192.0.2.0'] }), svc('c')];
  const plan = planAllocations(s, p);
  t.same(Object.fromEntries(plan.assignments), { 'default/a': ['192.0.2.1'], 'default/b': ['192.0.2.0'], 'default/c': ['192.0.2.2'] });
  t.same(plan.patches, [{ service: 'default/a', ips: ['192.0.2.1'] }, { service: 'default/c', ips: ['192.0.2.2'] }]);
  const applied = s.map((x) => { const ips = plan.assignments.get(`default/${x.metadata?.name}`); return { ...x, status: { loadBalancer: { ingress: (ips ?? []).map((ip) => ({ ip })) } } }; });
  const again = planAllocations(applied, p);
  t.same(again.patches, [], 'second pass writes nothing');
  t.same(again.events, []);
});

t.test('no pools configured: writes nothing', async (t) => {
  const plan = planAllocations([svc('a')], []);
  t.same(plan.patches, []);
  t.same(plan.events, []);
});

t.test('avoidBuggyIPs skips .0 and .255; exhaustion is reported', async (t) => {
  const p = pools({ name: 'x', addresses: ['198.51.100.255-198.51.101.1'], avoidBuggyIPs: true });
  const plan = planAllocations([svc('a'), svc('b')], p);
  t.same(plan.assignments.get('default/a'), ['198.51.101.1']);
  t.match(plan.events.find((e) => e.service === 'default/b'), { reason: 'AllocationFailed', message: /pool exhausted for IPv4/ });
});

t.test('requested IPs: annotation, legacy field, both = error, outside pools, in use', async (t) => {
  const p = pools({ name: 'x', addresses: ['192.0.2.0/28'] });
  const plan = planAllocations([
    svc('used', { ips: ['192.0.2.5'] }),
    svc('ann', { annotations: { 'herald.io/loadBalancerIPs': '192.0.2.9' } }),
    svc('legacy', { lbIP: '192.0.2.10' }),
    svc('both', { annotations: { 'herald.io/loadBalancerIPs': '192.0.2.11' }, lbIP: '192.0.2.11' }),
    svc('outside', { annotations: { 'herald.io/loadBalancerIPs': '203.0.113.1' } }),
    svc('taken', { annotations: { 'herald.io/loadBalancerIPs': '192.0.2.5' } }),
    svc('bad', { annotations: { 'herald.io/loadBalancerIPs': 'not-an-ip' } }),
  ], p);
  t.same(plan.assignments.get('default/ann'), ['192.0.2.9']);
  t.same(plan.assignments.get('default/legacy'), ['192.0.2.10']);
  const byService = Object.fromEntries(plan.events.filter((e) => e.reason === 'AllocationFailed').map((e) => [e.service, e.message]));
  t.match(byService['default/both'], /both herald.io\/loadBalancerIPs and the deprecated spec.loadBalancerIP/);
  t.match(byService['default/outside'], /outside every pool/);
  t.match(byService['default/taken'], /in use: default\/used uses it without a sharing key/);
  t.match(byService['default/bad'], /not an IP address/);
  t.notOk(plan.assignments.has('default/taken'), 'no other IP is given instead');
});

t.test('pools by namespace, selector, priority, autoAssign and explicit pool', async (t) => {
  const p = pools(
    { name: 'manual', addresses: ['10.9.0.0/30'], autoAssign: false },
    { name: 'team', addresses: ['10.1.0.0/30'], namespaces: ['team'], priority: 1 },
    { name: 'gold', addresses: ['10.2.0.0/30'], serviceSelector: { matchLabels: { tier: 'gold' } }, priority: 2 },
    { name: 'rest', addresses: ['10.3.0.0/30'] },
  );
  const plan = planAllocations([
    svc('a', { ns: 'team' }),
    svc('b', { labels: { tier: 'gold' } }),
    svc('c'),
    svc('d', { annotations: { 'herald.io/address-pool': 'manual' } }),
    svc('e', { annotations: { 'herald.io/address-pool': 'missing' } }),
  ], p);
  t.same(plan.assignments.get('team/a'), ['10.1.0.0']);
  t.same(plan.assignments.get('default/b'), ['10.2.0.0']);
  t.same(plan.assignments.get('default/c'), ['10.3.0.0']);
  t.same(plan.assignments.get('default/d'), ['10.9.0.0']);
  t.match(plan.events.find((e) => e.service === 'default/e'), { reason: 'AllocationFailed', message: /pool "missing"/ });
});

t.test('sharing: same key and disjoint ports share; overlap, other key, Local with other pods do not', async (t) => {
  const p = pools({ name: 'x', addresses: ['192.0.2.0/29'] });
  const key = { 'herald.io/allow-shared-ip': 'k1' };
  const plan = planAllocations([
    svc('web', { annotations: key, ports: [80] }),
    svc('tls', { annotations: key, ports: [443] }),
    svc('clash', { annotations: key, ports: [80] }),
    svc('other', { annotations: { 'herald.io/allow-shared-ip': 'k2' }, ports: [8080] }),
  ], p);
  t.same(plan.assignments.get('default/web'), ['192.0.2.0']);
  t.same(plan.assignments.get('default/tls'), ['192.0.2.0'], 'shares the address');
  t.same(plan.assignments.get('default/clash'), ['192.0.2.1'], 'port overlap: own address');
  t.same(plan.assignments.get('default/other'), ['192.0.2.2']);
  const a = svc('l1', { annotations: key, ports: [1], etp: 'Local', selector: { app: 'x' } });
  const b = svc('l2', { annotations: key, ports: [2], selector: { app: 'y' } });
  t.match(sharingConflict(a, b), /selects other pods/);
  t.equal(sharingConflict(a, svc('l3', { annotations: key, ports: [3], selector: { app: 'x' } })), undefined);
});

t.test('dual-stack: PreferDualStack takes what exists, RequireDualStack fails without both', async (t) => {
  const both = pools({ name: 'x', addresses: ['192.0.2.0/30', '2001:db8::/126'] });
  const plan = planAllocations([svc('ds', { families: ['IPv6', 'IPv4'], policy: 'RequireDualStack' }), svc('v6', { families: ['IPv6'] })], both);
  t.same(plan.assignments.get('default/ds'), ['2001:db8::', '192.0.2.0']);
  t.same(plan.assignments.get('default/v6'), ['2001:db8::1']);
  const v4only = pools({ name: 'x', addresses: ['192.0.2.0/30'] });
  const p2 = planAllocations([svc('pref', { families: ['IPv4', 'IPv6'], policy: 'PreferDualStack' }), svc('req', { families: ['IPv4', 'IPv6'], policy: 'RequireDualStack' })], v4only);
  t.same(p2.assignments.get('default/pref'), ['192.0.2.0']);
  t.match(p2.events.find((e) => e.service === 'default/req'), { reason: 'AllocationFailed', message: /exhausted for IPv6/ });
});

t.test('class filtering, release on type change, duplicates and pool edits are reported, not moved', async (t) => {
  const p = pools({ name: 'x', addresses: ['192.0.2.0/30'] });
  const plan = planAllocations([
    svc('foreign', { cls: 'other.io/lb' }),
    svc('was-lb', { type: 'ClusterIP', ips: ['192.0.2.3'] }),
    svc('d1', { ips: ['192.0.2.1'] }),
    svc('d2', { ips: ['192.0.2.1'] }),
    svc('moved-pool', { ips: ['203.0.113.7'] }),
  ], p);
  t.notOk(plan.assignments.has('default/foreign'));
  t.notOk(plan.patches.some((x) => x.service === 'default/foreign'), 'never touches a foreign class');
  t.same(plan.patches.find((x) => x.service === 'default/was-lb'), { service: 'default/was-lb', ips: [] });
  t.same(reasons(plan).filter((r) => r.endsWith('DuplicateIP')).sort(), ['default/d1 DuplicateIP', 'default/d2 DuplicateIP']);
  t.same(plan.assignments.get('default/d1'), ['192.0.2.1']);
  t.same(plan.assignments.get('default/d2'), ['192.0.2.1'], 'duplicate kept, not moved');
  t.same(plan.assignments.get('default/moved-pool'), ['203.0.113.7']);
  t.ok(reasons(plan).includes('default/moved-pool IPOutsidePools'));
  const ours = planAllocations([svc('mine', { cls: 'herald.io/bgp' }), svc('plain')], p, { loadBalancerClass: 'herald.io/bgp' });
  t.ok(ours.assignments.has('default/mine'));
  t.notOk(ours.assignments.has('default/plain'));
});

t.test('requestedIps canonicalises and rejects two of one family', async (t) => {
  t.same(requestedIps(svc('a', { annotations: { 'herald.io/loadBalancerIPs': ' 2001:DB8:0::1 , 192.0.2.1' } })), { ok: true, ips: ['192.0.2.1', '2001:db8::1'] });
  t.match(requestedIps(svc('b', { annotations: { 'herald.io/loadBalancerIPs': '192.0.2.1,192.0.2.2' } })), { ok: false, error: /more than one IPv4/ });
});

t.test('10,000 services allocate from one large pool without repeats', async (t) => {
  const p = pools({ name: 'big', addresses: ['10.128.0.0/16'] });
  const many = Array.from({ length: 10000 }, (_, i) => svc(`s${i}`));
  const plan = planAllocations(many, p);
  const all = [...plan.assignments.values()].flat();
  t.equal(all.length, 10000);
  t.equal(new Set(all).size, 10000, 'no address given twice');
});
