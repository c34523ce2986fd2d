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
import { addressBits, addressValue, formatAddressValue } from '../net/address.ts';

/** An inclusive range of addresses of one family, as integers. */
export interface AddressRange {
  readonly family: IpFamily;
  readonly first: bigint;
  readonly last: bigint;
}


/** A pool as configured. */
export interface PoolConfig {
  readonly name: string;
  readonly addresses: readonly string[];
  readonly autoAssign?: boolean;
  readonly avoidBuggyIPs?: boolean;
  readonly namespaces?: readonly string[];
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
  const s = text.trim();
  const dash = s.indexOf('-');
  if (dash > 0) {
    const a = addressValue(s.slice(0, dash).trim());
    const b = addressValue(s.slice(dash + 1).trim());
    if (!a || !b) throw new PoolError(path, `"${text}" is not a range of two addresses (A-B)`);
    if (a.family !== b.family) throw new PoolError(path, `"${text}" mixes IPv4 and IPv6`);
    if (a.value > b.value) throw new PoolError(path, `"${text}": the first address is after the last`);
    return { family: a.family, first: a.value, last: b.value };
  }
  const slash = s.indexOf('/');
  if (slash > 0) {
    const base = addressValue(s.slice(0, slash));
    const lenText = s.slice(slash + 1);
    const len = /^\d+$/.test(lenText) ? Number(lenText) : NaN;
    if (!base) throw new PoolError(path, `"${text}" is not a CIDR`);
    const bits = addressBits(base.family);
    if (!(len >= 0 && len <= bits)) throw new PoolError(path, `"${text}": prefix length must be 0..${bits}`);
    const size = 1n << BigInt(bits - len);
    const first = base.value - (base.value % size);
    if (first !== base.value) throw new PoolError(path, `"${text}" has host bits set (did you mean ${formatAddressValue(base.family, first)}/${len}?)`);
    return { family: base.family, first, last: first + size - 1n };
  }
  const single = addressValue(s);
  if (!single) throw new PoolError(path, `"${text}" is neither a CIDR, a range A-B nor an address`);
  return { family: single.family, first: single.value, last: single.value };
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
