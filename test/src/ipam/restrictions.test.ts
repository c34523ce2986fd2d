// The allocator honours every pool restriction for what a tenant asks (docs/decisions.md "Pools", docs/security.md):
// a requested IP (herald.io/loadBalancerIPs, spec.loadBalancerIP) and a named pool (herald.io/address-pool) are given
// only from a pool that serves the Service (namespaces, serviceSelectors), as MetalLB's allocator checks them; a
// sharing key joins Services of one namespace only; 0.0.0.0 and 255.255.255.255 are never given. Each test fails when
// the guard it names is reverted.
import t from 'tap';
import type { Service } from '../../../src/k8s/types.ts';
import { ALLOCATION_FAILURES, planAllocations, sharingConflict } from '../../../src/ipam/allocator.ts';
import { parsePool, type PoolConfig } from '../../../src/ipam/pool.ts';

let seq = 0;
function svc(name: string, o: { ns?: string; annotations?: Record<string, string>; labels?: Record<string, string>; ips?: string[]; lbIP?: string; ports?: number[] } = {}): Service {
  seq++;
  return {
    metadata: { name, namespace: o.ns ?? 'shop', ...(o.annotations ? { annotations: o.annotations } : {}), labels: o.labels ?? {}, creationTimestamp: `2026-01-01T00:00:${String(seq).padStart(2, '0')}Z` },
    spec: { type: 'LoadBalancer', ports: (o.ports ?? [80]).map((port) => ({ port, protocol: 'TCP' })), selector: { app: name }, ...(o.lbIP ? { loadBalancerIP: o.lbIP } : {}) },
    status: o.ips ? { loadBalancer: { ingress: o.ips.map((ip) => ({ ip })) } } : {},
  };
}
const pools = (...cfgs: PoolConfig[]) => cfgs.map((c, i) => parsePool(c, i));
const PAYMENTS: PoolConfig = { name: 'payments', addresses: ['198.51.100.0/28'], namespaces: ['payments'], autoAssign: false };
const PUBLIC: PoolConfig = { name: 'public', addresses: ['203.0.113.0/28'] };
const LABELLED: PoolConfig = { name: 'edge', addresses: ['192.0.2.0/28'], serviceSelectors: [{ matchLabels: { tier: 'edge' } }] };
const failures = (plan: ReturnType<typeof planAllocations>) => Object.fromEntries([...plan.failed].filter(([, n]) => n > 0));
const message = (plan: ReturnType<typeof planAllocations>, service: string) => plan.events.find((e) => e.service === service && e.reason === 'AllocationFailed')?.message;

t.test("guard: a requested IP from a pool reserved for another namespace is refused, with the reason and an Event", async (t) => {
  const p = pools(PAYMENTS, PUBLIC);
  for (const s of [svc('thief', { annotations: { 'herald.io/loadBalancerIPs': '198.51.100.5' } }), svc('thief', { lbIP: '198.51.100.5' })]) {
    const plan = planAllocations([s], p);
    t.equal(plan.assignments.get('shop/thief'), undefined, 'no address from payments');
    t.same(plan.patches, []);
    t.equal(message(plan, 'shop/thief'), 'requested IP 198.51.100.5: pool "payments" serves the namespace payments only (this Service is in shop)');
    t.same(failures(plan), { PoolNotAllowed: 1 });
  }
  const own = planAllocations([svc('pay', { ns: 'payments', annotations: { 'herald.io/loadBalancerIPs': '198.51.100.5' } })], p);
  t.same(own.assignments.get('payments/pay'), ['198.51.100.5'], 'the namespace the pool serves gets it (autoAssign: false serves explicit requests)');
});

t.test('guard: a named pool that does not serve the Service is refused', async (t) => {
  const p = pools(PAYMENTS, PUBLIC, LABELLED);
  let plan = planAllocations([svc('thief', { annotations: { 'herald.io/address-pool': 'payments' } })], p);
  t.equal(plan.assignments.get('shop/thief'), undefined);
  t.match(message(plan, 'shop/thief'), /^pool "payments" serves the namespace payments only \(this Service is in shop\): annotation herald\.io\/address-pool names it in vain/);
  plan = planAllocations([svc('plain', { annotations: { 'herald.io/address-pool': 'edge' } })], p);
  t.equal(plan.assignments.get('shop/plain'), undefined, 'serviceSelectors apply to a named pool too');
  t.match(message(plan, 'shop/plain'), 'pool "edge" serves only Services its serviceSelectors match');
  plan = planAllocations([svc('edgy', { labels: { tier: 'edge' }, annotations: { 'herald.io/address-pool': 'edge' } })], p);
  t.same(plan.assignments.get('shop/edgy'), ['192.0.2.0'], 'a matching Service gets it');
  plan = planAllocations([svc('pay', { ns: 'payments', annotations: { 'herald.io/address-pool': 'payments' } })], p);
  t.same(plan.assignments.get('payments/pay'), ['198.51.100.0'], 'the namespace the pool serves, by name');
});

t.test('guard: a requested IP in a pool whose serviceSelectors do not match is refused; automatic allocation skips it', async (t) => {
  const p = pools(LABELLED, PUBLIC);
  let plan = planAllocations([svc('plain', { annotations: { 'herald.io/loadBalancerIPs': '192.0.2.3' } })], p);
  t.equal(plan.assignments.get('shop/plain'), undefined);
  t.match(message(plan, 'shop/plain'), 'requested IP 192.0.2.3: pool "edge" serves only Services its serviceSelectors match');
  plan = planAllocations([svc('plain')], p);
  t.same(plan.assignments.get('shop/plain'), ['203.0.113.0'], 'automatic: the pool that serves it');
  // Overlapping pools: the address is allowed when any pool holding it serves the Service.
  plan = planAllocations([svc('plain', { annotations: { 'herald.io/loadBalancerIPs': '192.0.2.3' } })], pools(LABELLED, { name: 'wide', addresses: ['192.0.2.0/24'] }));
  t.same(plan.assignments.get('shop/plain'), ['192.0.2.3']);
});

t.test('guard: a sharing key joins Services of one namespace only', async (t) => {
  const key = { 'herald.io/allow-shared-ip': 'k' };
  const p = pools(PUBLIC);
  const victim = svc('victim', { ns: 'payments', annotations: key, ips: ['203.0.113.7'], ports: [443] });
  const thief = svc('thief', { annotations: { ...key, 'herald.io/loadBalancerIPs': '203.0.113.7' }, ports: [80] });
  t.match(sharingConflict(thief, victim), 'payments/victim is in another namespace (a sharing key joins Services of one namespace only)');
  const plan = planAllocations([victim, thief], p);
  t.equal(plan.assignments.get('shop/thief'), undefined, "no address of another namespace's Service");
  t.match(message(plan, 'shop/thief'), /requested IP 203\.0\.113\.7 is in use: payments\/victim is in another namespace/);
  t.same(failures(plan), { InUse: 1 });
  // Without a requested IP the key finds no address to join across namespaces: a new one.
  const auto = planAllocations([victim, svc('other', { annotations: key, ports: [80] })], p);
  t.not(auto.assignments.get('shop/other')?.[0], '203.0.113.7');
  // In one namespace the key still joins.
  const same = planAllocations([victim, svc('neighbour', { ns: 'payments', annotations: key, ports: [80] })], p);
  t.same(same.assignments.get('payments/neighbour'), ['203.0.113.7']);
});

t.test('guard (issue 35): 0.0.0.0 and 255.255.255.255 are never given, requested or not', async (t) => {
  const p = pools({ name: 'all', addresses: ['0.0.0.0-0.0.0.1', '255.255.255.254-255.255.255.255'] });
  for (const ip of ['0.0.0.0', '255.255.255.255']) {
    const plan = planAllocations([svc('x', { annotations: { 'herald.io/loadBalancerIPs': ip } })], p);
    t.equal(plan.assignments.get('shop/x'), undefined, ip);
    t.match(message(plan, 'shop/x'), `requested IP ${ip} is never given to a Service`);
    t.same(failures(plan), { Unassignable: 1 });
  }
  const auto = planAllocations([svc('a'), svc('b'), svc('c')], p);
  t.same([auto.assignments.get('shop/a'), auto.assignments.get('shop/b'), auto.assignments.get('shop/c')], [['0.0.0.1'], ['255.255.255.254'], undefined], 'automatic allocation skips them too');
  const v6 = planAllocations([svc('v', { annotations: { 'herald.io/loadBalancerIPs': '::' } })], pools({ name: 'six', addresses: ['::/127'] }));
  t.equal(v6.assignments.get('shop/v'), undefined, 'nor :: ');
});

t.test('the plan counts every failure reason, 0 when none', async (t) => {
  const plan = planAllocations([svc('a')], pools(PUBLIC));
  t.same([...plan.failed.keys()], ALLOCATION_FAILURES);
  t.ok([...plan.failed.values()].every((n) => n === 0));
});
