// What the allocator honours for a move from MetalLB (docs/metallb-migration.md, issue 32 item 4): a pool's
// serviceAllocation.namespaceSelectors (the namespace's labels; unknown labels serve nothing: fail closed) and, with
// compatibility.metallbAnnotations, MetalLB's three Service annotations under both prefixes, bounded by the same pool
// restrictions as Herald's; a Service whose herald.io/ and metallb.io/ values disagree is refused. Each guard's test
// fails when the guard is reverted.
import t from 'tap';
import type { Service } from '../../../src/k8s/types.ts';
import { allocatorAnnotation, planAllocations, requestedIps } from '../../../src/ipam/allocator.ts';
import { parsePool, type PoolConfig } from '../../../src/ipam/pool.ts';

let seq = 0;
function svc(name: string, o: { ns?: string; annotations?: Record<string, string>; ports?: number[] } = {}): Service {
  seq++;
  return {
    metadata: { name, namespace: o.ns ?? 'shop', ...(o.annotations ? { annotations: o.annotations } : {}), labels: {}, creationTimestamp: `2026-01-01T00:00:${String(seq).padStart(2, '0')}Z` },
    spec: { type: 'LoadBalancer', ports: (o.ports ?? [80]).map((port) => ({ port, protocol: 'TCP' })), selector: { app: name } },
    status: {},
  };
}
const pools = (...cfgs: PoolConfig[]) => cfgs.map((c, i) => parsePool(c, i));
const message = (plan: ReturnType<typeof planAllocations>, service: string) => plan.events.find((e) => e.service === service && e.reason === 'AllocationFailed')?.message;

const TEAM: PoolConfig = { name: 'team', addresses: ['198.51.100.0/28'], namespaceSelectors: [{ matchLabels: { team: 'a' } }], priority: 1 };
const PUBLIC: PoolConfig = { name: 'public', addresses: ['203.0.113.0/28'], priority: 5 };
const LABELS: Record<string, Record<string, string>> = { shop: { team: 'a' }, blog: { team: 'b' } };
const namespaceLabels = (ns: string) => LABELS[ns];

t.test('namespaceSelectors: a namespace whose labels match gets the pool first; another does not', async (t) => {
  const p = pools(TEAM, PUBLIC);
  const plan = planAllocations([svc('web', { ns: 'shop' }), svc('post', { ns: 'blog' })], p, { namespaceLabels });
  t.same(plan.assignments.get('shop/web'), ['198.51.100.0'], 'team a: the selected pool (priority 1)');
  t.same(plan.assignments.get('blog/post'), ['203.0.113.0'], 'team b: skips it');
});

t.test('guard: with the namespace labels unknown, a pool with namespaceSelectors serves nothing it does not list (fail closed)', async (t) => {
  const p = pools(TEAM);
  let plan = planAllocations([svc('web', { ns: 'shop', annotations: { 'herald.io/address-pool': 'team' } })], p);
  t.equal(plan.assignments.get('shop/web'), undefined);
  t.equal(message(plan, 'shop/web'), 'pool "team" serves the namespaces its namespaceSelectors match only (this Service is in shop; the labels of namespace shop are not known (yet)): annotation herald.io/address-pool names it in vain');
  plan = planAllocations([svc('web', { ns: 'blog', annotations: { 'herald.io/loadBalancerIPs': '198.51.100.7' } })], p, { namespaceLabels });
  t.equal(plan.assignments.get('blog/web'), undefined, 'a requested IP of a pool its namespace is not selected for');
  t.match(message(plan, 'blog/web'), /^requested IP 198\.51\.100\.7: pool "team" serves the namespaces its namespaceSelectors match only \(this Service is in blog\)$/);
});

t.test('namespaces and namespaceSelectors: a namespace either one admits is served', async (t) => {
  const p = pools({ ...TEAM, namespaces: ['blog'] });
  const plan = planAllocations([svc('web', { ns: 'shop' }), svc('post', { ns: 'blog' }), svc('x', { ns: 'other' })], p, { namespaceLabels });
  t.same(plan.assignments.get('shop/web'), ['198.51.100.0'], 'selected by labels');
  t.same(plan.assignments.get('blog/post'), ['198.51.100.1'], 'listed');
  t.equal(plan.assignments.get('other/x'), undefined, 'neither');
  t.match(message(plan, 'other/x'), /no pool|pool/);
});

t.test('guard: MetalLB annotations count only with compatibility.metallbAnnotations', async (t) => {
  const p = pools(PUBLIC, { name: 'reserved', addresses: ['192.0.2.0/28'], autoAssign: false });
  const s = [svc('a', { annotations: { 'metallb.io/address-pool': 'reserved' } }), svc('b', { annotations: { 'metallb.io/loadBalancerIPs': '192.0.2.9' } }), svc('c', { annotations: { 'metallb.universe.tf/address-pool': 'reserved' } })];
  let plan = planAllocations(s, p);
  t.same(plan.assignments.get('shop/a'), ['203.0.113.0'], 'off: ignored');
  plan = planAllocations(s, p, { metallbAnnotations: true });
  t.same(plan.assignments.get('shop/a'), ['192.0.2.0'], 'metallb.io/address-pool');
  t.same(plan.assignments.get('shop/b'), ['192.0.2.9'], 'metallb.io/loadBalancerIPs');
  t.same(plan.assignments.get('shop/c'), ['192.0.2.1'], 'the deprecated metallb.universe.tf/address-pool');
});

t.test('guard: MetalLB annotations are bounded by the pool restrictions as Herald\'s are', async (t) => {
  const p = pools(TEAM, PUBLIC);
  const plan = planAllocations([svc('thief', { ns: 'blog', annotations: { 'metallb.io/loadBalancerIPs': '198.51.100.3' } }), svc('named', { ns: 'blog', annotations: { 'metallb.io/address-pool': 'team' } })], p, { metallbAnnotations: true, namespaceLabels });
  t.equal(plan.assignments.get('blog/thief'), undefined);
  t.match(message(plan, 'blog/thief'), /^requested IP 198\.51\.100\.3: pool "team" serves/);
  t.equal(plan.assignments.get('blog/named'), undefined);
  t.match(message(plan, 'blog/named'), /annotation metallb\.io\/address-pool names it in vain$/);
});

t.test('guard: a Service whose herald.io/ and MetalLB values disagree is refused, with both named', async (t) => {
  const p = pools(PUBLIC, { name: 'reserved', addresses: ['192.0.2.0/28'] });
  const o = { metallbAnnotations: true };
  let plan = planAllocations([svc('x', { annotations: { 'herald.io/address-pool': 'public', 'metallb.io/address-pool': 'reserved' } })], p, o);
  t.equal(plan.assignments.get('shop/x'), undefined);
  t.equal(message(plan, 'shop/x'), 'herald.io/address-pool "public" and metallb.io/address-pool "reserved" differ; set one of them');
  plan = planAllocations([svc('y', { annotations: { 'herald.io/loadBalancerIPs': '192.0.2.1', 'metallb.io/loadBalancerIPs': '192.0.2.2' } })], p, o);
  t.equal(plan.assignments.get('shop/y'), undefined);
  t.equal(message(plan, 'shop/y'), 'herald.io/loadBalancerIPs "192.0.2.1" and metallb.io/loadBalancerIPs "192.0.2.2" ask for different addresses; set one of them');
  plan = planAllocations([svc('z', { annotations: { 'herald.io/loadBalancerIPs': '192.0.2.1', 'metallb.io/loadBalancerIPs': ' 192.0.2.1' } })], p, o);
  t.same(plan.assignments.get('shop/z'), ['192.0.2.1'], 'the same addresses: given');
  t.same(allocatorAnnotation(svc('k', { annotations: { 'herald.io/allow-shared-ip': 'k1', 'metallb.io/allow-shared-ip': 'k2' } }), 'sharingKey', o), { conflict: 'herald.io/allow-shared-ip "k1" and metallb.io/allow-shared-ip "k2" differ; set one of them' });
});

t.test('metallb.io/ wins over metallb.universe.tf/ when both are present, as MetalLB reads them', async (t) => {
  const s = svc('w', { annotations: { 'metallb.io/loadBalancerIPs': '192.0.2.4', 'metallb.universe.tf/loadBalancerIPs': '192.0.2.5' } });
  t.same(requestedIps(s, { metallbAnnotations: true }), { ok: true, ips: ['192.0.2.4'] });
  t.same(requestedIps(s), { ok: true, ips: [] }, 'off: none');
});

t.test('a MetalLB sharing key shares an address as Herald\'s does', async (t) => {
  const p = pools(PUBLIC);
  const plan = planAllocations([svc('dns-tcp', { annotations: { 'metallb.io/allow-shared-ip': 'dns' }, ports: [53] }), svc('dns-udp', { annotations: { 'metallb.universe.tf/allow-shared-ip': 'dns' }, ports: [54] })], p, { metallbAnnotations: true });
  t.same(plan.assignments.get('shop/dns-tcp'), ['203.0.113.0']);
  t.same(plan.assignments.get('shop/dns-udp'), ['203.0.113.0'], 'the same address');
});
