// Pool usage (herald_ipam_pool_addresses): allocated and available addresses per pool and family, by the allocator's rule.
import t from 'tap';
import type { Service } from '../../../src/k8s/types.ts';
import { parsePool } from '../../../src/ipam/pool.ts';
import { poolUsage } from '../../../src/ipam/usage.ts';
import { planAllocations } from '../../../src/ipam/allocator.ts';

function lb(name: string, ips: string[], o: { cls?: string; type?: string } = {}): Service {
  return {
    metadata: { name, namespace: 'ns' },
    spec: { type: o.type ?? 'LoadBalancer', ports: [{ port: 80 }], ...(o.cls ? { loadBalancerClass: o.cls } : {}) },
    status: { loadBalancer: { ingress: ips.map((ip) => ({ ip })) } },
  };
}

t.test('allocated: distinct addresses of LoadBalancer Services of our class inside the pool; available: the rest', async (t) => {
  const pools = [parsePool({ name: 'a', addresses: ['192.0.2.0/29', '2001:db8::/126'] }), parsePool({ name: 'b', addresses: ['198.51.100.10-198.51.100.19'] })];
  const services = [
    lb('x', ['192.0.2.1', '2001:db8::2']),
    lb('shared', ['192.0.2.1']), // a shared address counts once
    lb('y', ['198.51.100.12']),
    lb('outside', ['203.0.113.5']),
    lb('foreign', ['192.0.2.2'], { cls: 'example.com/other' }),
    lb('former', ['192.0.2.3'], { type: 'ClusterIP' }),
  ];
  t.same(poolUsage(services, pools), [
    { pool: 'a', family: 'IPv4', allocated: 1, available: 7 },
    { pool: 'a', family: 'IPv6', allocated: 1, available: 3 },
    { pool: 'b', family: 'IPv4', allocated: 1, available: 9 },
  ]);
  t.same(poolUsage(services, pools, { loadBalancerClass: 'example.com/other' }).map((u) => u.allocated), [1, 0, 0], 'with a class, only its Services count');
});

t.test('avoidBuggyIPs: .0 and .255 are in neither count; overlapping ranges count once; huge IPv6 pools round', async (t) => {
  const pool = parsePool({ name: 'p', addresses: ['10.0.0.0/23', '10.0.1.0/24', '10.0.2.255'], avoidBuggyIPs: true });
  // 10.0.0.0-10.0.2.255 minus .0/.255 of 10.0.0, 10.0.1 and the lone 10.0.2.255: 512 + 1 - 5 = 508.
  t.same(poolUsage([lb('x', ['10.0.0.5', '10.0.1.0'])], [pool]), [{ pool: 'p', family: 'IPv4', allocated: 1, available: 507 }]);
  const v6 = poolUsage([], [parsePool({ name: 'v6', addresses: ['2001:db8::/64'] })]);
  t.equal(v6[0]?.available, 2 ** 64);
});

t.test('the figures agree with the allocator: after a pass, every allocated address is counted', async (t) => {
  const pools = [parsePool({ name: 'p', addresses: ['192.0.2.0/30'] })];
  const services = [lb('a', []), lb('b', []), lb('c', []), lb('d', []), lb('e', [])];
  const plan = planAllocations(services, pools);
  const after = services.map((s) => lb(s.metadata?.name ?? '', [...(plan.assignments.get(`ns/${s.metadata?.name}`) ?? [])]));
  t.equal(plan.patches.length, 4, 'four addresses, four Services served');
  t.same(poolUsage(after, pools), [{ pool: 'p', family: 'IPv4', allocated: 4, available: 0 }], 'exhausted');
});
