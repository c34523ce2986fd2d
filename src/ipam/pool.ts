/**
 * LoadBalancer address pools: parsing the configured addresses (CIDRs and "A-B" ranges, IPv4 and IPv6) into ranges
 * of integers, membership tests and ordered iteration of free addresses.
 *
 * Config shape (docs/configuration.md, `pools[]`): `{name, addresses: string[], autoAssign?: boolean (default true),
 * avoidBuggyIPs?: boolean, namespaces?: string[], serviceSelector?: LabelSelector, serviceSelectors?: LabelSelector[], priority?: number}`.
 * Decisions (docs/decisions.md): a CIDR's network and broadcast addresses are usable except with
 * `avoidBuggyIPs`, which skips IPv4 addresses ending in .0 and .255.
 */
import type { LabelSelector } from '../k8s/selector.ts';
import type { IpFamily } from '../net/address.ts';
import { addressValue, formatAddressValue } from '../net/address.ts';
import type { AddressRange } from '../net/address-space.ts';
import { parseAddressRange } from '../net/address-space.ts';

export type { AddressRange } from '../net/address-space.ts';

/** A pool as configured. */
export interface PoolConfig {
  readonly name: string;
  readonly addresses: readonly string[];
  readonly autoAssign?: boolean;
  readonly avoidBuggyIPs?: boolean;
  readonly namespaces?: readonly string[];
  /** Namespaces whose labels match any of these (MetalLB's serviceAllocation.namespaceSelectors; with namespaces: either). */
  readonly namespaceSelectors?: readonly LabelSelector[];
  readonly serviceSelector?: LabelSelector;
  /** Services matching any of these (absent or empty: all). */
  readonly serviceSelectors?: readonly LabelSelector[];
  /** Lower numbers are preferred; pools without a priority come after those with one. */
  readonly priority?: number;
}

/** A parsed pool. */
export interface Pool {
  readonly config: PoolConfig;
  readonly ranges: readonly AddressRange[];
}

/** Thrown for an unparsable pool address; `path` names the config field. */
export class PoolError extends Error {
  readonly path: string;
  constructor(path: string, message: string) {
    super(`${path}: ${message}`);
    this.name = 'PoolError';
    this.path = path;
  }
}

function parseOne(text: string, path: string): AddressRange {
  try {
    return parseAddressRange(text);
  } catch (err) {
    throw new PoolError(path, (err as Error).message);
  }
}

/**
 * Parses a pool's addresses.
 * @throws PoolError naming `pools[i].addresses[j]` for any bad entry.
 */
export function parsePool(config: PoolConfig, index = 0): Pool {
  if (!config.name) throw new PoolError(`pools[${index}].name`, 'is required');
  if (config.addresses.length === 0) throw new PoolError(`pools[${index}].addresses`, 'must list at least one CIDR or range');
  const ranges = config.addresses.map((a, j) => parseOne(a, `pools[${index}].addresses[${j}]`));
  return { config, ranges };
}

/** True when the pool's ranges contain `address`. */
export function poolContains(pool: Pool, address: string): boolean {
  const parsed = addressValue(address);
  if (!parsed) return false;
  return pool.ranges.some((r) => r.family === parsed.family && parsed.value >= r.first && parsed.value <= r.last);
}

/** True when `avoidBuggyIPs` excludes this address (IPv4 ending in .0 or .255). */
export function isBuggyIp(family: IpFamily, value: bigint): boolean {
  if (family !== 'IPv4') return false;
  const last = value & 0xffn;
  return last === 0n || last === 0xffn;
}

/**
 * The pool's addresses of `family` in configured order, skipping, with avoidBuggyIPs, IPv4 .0/.255. Lazy: callers
 * keep one iterator per (pool, family) for a whole allocation pass, so N allocations cost O(N + addresses skipped).
 */
export function* poolAddresses(pool: Pool, family: IpFamily): Generator<string> {
  for (const r of pool.ranges) {
    if (r.family !== family) continue;
    for (let v = r.first; v <= r.last; v++) {
      if (pool.config.avoidBuggyIPs && isBuggyIp(family, v)) continue;
      yield formatAddressValue(family, v);
    }
  }
}
