/**
 * How full each LoadBalancer pool is, per address family, from the Services' current status: an address is allocated
 * when a LoadBalancer Service of Herald's class shows it in `status.loadBalancer.ingress` (the allocator's own rule,
 * allocator.ts), available when the pool holds it and no such Service does. Addresses `avoidBuggyIPs` skips are in
 * neither count. Pure; every node with pools computes the same figures from its own view (docs/metrics.md,
 * `herald_ipam_pool_addresses`).
 */
import type { Service } from '../k8s/types.ts';
import type { IpFamily } from '../net/address.ts';
import { addressValue } from '../net/address.ts';
import { currentIps, isOurClass } from './allocator.ts';
import type { AllocatorOptions } from './allocator.ts';
import { AddressSpace } from '../net/address-space.ts';
import type { Pool } from './pool.ts';
import { isBuggyIp, poolContains } from './pool.ts';
import type { PoolUsage } from '../status/object-conditions.ts';

/** Values v in [first, last] with v mod 256 = rest (0 <= rest < 256). */
function congruent(first: bigint, last: bigint, rest: bigint): bigint {
  const upTo = (x: bigint) => (x >= rest ? (x - rest) / 256n + 1n : 0n);
  return upTo(last) - (first > 0n ? upTo(first - 1n) : 0n);
}

/** Addresses of `family` the pool hands out (`avoidBuggyIPs`: IPv4 .0 and .255 excluded). */
function poolSize(pool: Pool, family: IpFamily): bigint {
  let n = 0n;
  for (const r of new AddressSpace(pool.ranges).ranges()) {
    if (r.family !== family) continue;
    n += r.last - r.first + 1n;
    if (pool.config.avoidBuggyIPs && family === 'IPv4') n -= congruent(r.first, r.last, 0n) + congruent(r.first, r.last, 255n);
  }
  return n;
}

/** Usage of every pool, per family it has addresses of, in pool order then IPv4 before IPv6. */
export function poolUsage(services: Iterable<Service>, pools: readonly Pool[], options: AllocatorOptions = {}): PoolUsage[] {
  const inUse = new Set<string>();
  for (const svc of services) {
    if (svc.spec?.type !== 'LoadBalancer' || !isOurClass(svc, options.loadBalancerClass)) continue;
    for (const ip of currentIps(svc)) inUse.add(ip);
  }
  const out: PoolUsage[] = [];
  for (const pool of pools) {
    for (const family of ['IPv4', 'IPv6'] as const) {
      if (!pool.ranges.some((r) => r.family === family)) continue;
      let allocated = 0n;
      for (const ip of inUse) {
        const v = addressValue(ip);
        if (v?.family !== family || !poolContains(pool, ip)) continue;
        if (pool.config.avoidBuggyIPs && isBuggyIp(family, v.value)) continue;
        allocated++;
      }
      out.push({ pool: pool.config.name, family, allocated: Number(allocated), available: Number(poolSize(pool, family) - allocated) });
    }
  }
  return out;
}
