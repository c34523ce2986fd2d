/**
 * LoadBalancer IP allocation as a pure function of the Services and the pools (level-triggered, restart-safe).
 *
 * `planAllocations(services, pools, options)` rebuilds the whole assignment from the Services' current
 * `status.loadBalancer.ingress` first (never moving an IP in use), then gives addresses to the Services that lack
 * them, and returns the status patches to write and the Events to emit. Run it again with the patched Services and
 * it returns no patches: the output is a fixed point.
 *
 * Annotations (docs/ipam.md): `herald.io/loadBalancerIPs` (comma-separated requested IPs; an error together with
 * the deprecated `spec.loadBalancerIP`), `herald.io/address-pool` (pool name), `herald.io/allow-shared-ip`
 * (sharing key); with `compatibility.metallbAnnotations` MetalLB's names of the same three too (`metallb.io/`, else
 * the deprecated `metallb.universe.tf/`; `allocatorAnnotation`). Semantics follow MetalLB's documented rules (docs/ipam.md, docs/decisions.md "Pools").
 *
 * Tenants write those annotations and `spec.loadBalancerIP` (docs/security.md): a requested IP and a named pool are
 * given only from a pool that serves the Service (its `namespaces` and `serviceSelectors`, as MetalLB's allocator
 * checks them; `autoAssign: false` pools serve explicit requests only), a sharing key joins Services of one namespace
 * only, and the unspecified and broadcast addresses are never given. A refused request gets an AllocationFailed Event
 * naming why, and counts in the plan's `failed` (the metric `herald_ipam_allocations_failed`).
 */
import { matchesSelectors } from '../k8s/selector.ts';
import { METALLB_SERVICE_ANNOTATIONS } from '../k8s/shapes.ts';
import type { Service } from '../k8s/types.ts';
import { addressValue, canonicalIP } from '../net/address.ts';
import type { IpFamily } from '../net/address.ts';
import { poolAddresses, poolContains, type Pool } from './pool.ts';

export const ANNOTATION_REQUESTED_IPS = 'herald.io/loadBalancerIPs';
export const ANNOTATION_POOL = 'herald.io/address-pool';
export const ANNOTATION_SHARING_KEY = 'herald.io/allow-shared-ip';

/** A Kubernetes Event to emit on a Service. */
export interface AllocationEvent {
  /** "namespace/name" of the Service. */
  readonly service: string;
  readonly type: 'Normal' | 'Warning';
  /** IPAllocated | AllocationFailed | IPReleased | DuplicateIP | IPOutsidePools */
  readonly reason: string;
  readonly message: string;
}

/** A status write: the full new `status.loadBalancer.ingress` IP list (empty = clear). */
export interface StatusPatch {
  readonly service: string;
  readonly ips: readonly string[];
}

export interface AllocationPlan {
  /** Service key → its addresses after this pass (kept or newly allocated). */
  readonly assignments: ReadonlyMap<string, readonly string[]>;
  readonly patches: readonly StatusPatch[];
  readonly events: readonly AllocationEvent[];
  /** Services left without the addresses they need after this pass, by why (every reason listed, 0 when none). */
  readonly failed: ReadonlyMap<AllocationFailure, number>;
}

/**
 * Why a Service gets no address: its request is not allowed by the pool that holds it (`PoolNotAllowed`: namespaces,
 * serviceSelectors), names an address no pool holds (`OutsidePools`), one in use by a Service it may not share with
 * (`InUse`), one never given (`Unassignable`: 0.0.0.0, 255.255.255.255, ::), is malformed (`InvalidRequest`); a named
 * pool that does not exist (`NoSuchPool`); no pool serves it (`NoPool`), or they are full (`PoolExhausted`).
 */
export type AllocationFailure = 'PoolNotAllowed' | 'OutsidePools' | 'InUse' | 'Unassignable' | 'InvalidRequest' | 'NoSuchPool' | 'NoPool' | 'PoolExhausted';

/** Every {@link AllocationFailure}, in the order the metric lists them. */
export const ALLOCATION_FAILURES: readonly AllocationFailure[] = ['PoolNotAllowed', 'OutsidePools', 'InUse', 'Unassignable', 'InvalidRequest', 'NoSuchPool', 'NoPool', 'PoolExhausted'];

export interface AllocatorOptions {
  /** Herald's loadBalancerClass; unset = handle only Services without a class (core/v1 `spec.loadBalancerClass`). */
  readonly loadBalancerClass?: string;
  /**
   * `compatibility.metallbAnnotations`: MetalLB's metallb.io/loadBalancerIPs, address-pool and allow-shared-ip count
   * as Herald's own (under the same restrictions); a Service whose herald.io/ and metallb.io/ values differ is refused.
   */
  readonly metallbAnnotations?: boolean;
  /**
   * The labels of a namespace (undefined: not known), for pools with `namespaceSelectors`. Absent: no namespace is
   * known, and such a pool serves only the namespaces it lists (fail closed).
   */
  readonly namespaceLabels?: (namespace: string) => Readonly<Record<string, string>> | undefined;
}

/** The allocator's three annotations, by what they say: Herald's name and MetalLB's (current, then deprecated). */
const ANNOTATIONS = {
  requestedIps: { herald: ANNOTATION_REQUESTED_IPS, metallb: METALLB_SERVICE_ANNOTATIONS.requestedIps },
  pool: { herald: ANNOTATION_POOL, metallb: METALLB_SERVICE_ANNOTATIONS.pool },
  sharingKey: { herald: ANNOTATION_SHARING_KEY, metallb: METALLB_SERVICE_ANNOTATIONS.sharingKey },
} as const;

/** One annotation's value and the key it came from (an empty value counts as unset). */
interface AnnotationValue {
  readonly key: string;
  readonly value: string;
}

/**
 * The herald.io/ value of one of the allocator's annotations, and (with `metallbAnnotations`) MetalLB's: metallb.io/'s
 * when that key is present, else metallb.universe.tf/'s, as MetalLB's controller reads them.
 */
function annotationValues(svc: Service, which: keyof typeof ANNOTATIONS, o: AllocatorOptions): { herald?: AnnotationValue; metallb?: AnnotationValue } {
  const a: Readonly<Record<string, unknown>> = svc.metadata?.annotations ?? {};
  const names = ANNOTATIONS[which];
  // Values are strings from the apiserver (the allocator needs it); anything else counts as unset.
  const text = (k: string | undefined): AnnotationValue | undefined => {
    const v = k === undefined ? undefined : a[k];
    return k !== undefined && typeof v === 'string' && v !== '' ? { key: k, value: v } : undefined;
  };
  const herald = text(names.herald);
  const metallb = text(o.metallbAnnotations ? names.metallb.find((k) => a[k] !== undefined) : undefined);
  return { ...(herald ? { herald } : {}), ...(metallb ? { metallb } : {}) };
}

/**
 * The value of one of the allocator's annotations and the key it came from: herald.io/'s, else, with
 * `metallbAnnotations`, MetalLB's. Both set with different values: `conflict` names them (the Service is refused).
 */
export function allocatorAnnotation(svc: Service, which: 'pool' | 'sharingKey', o: AllocatorOptions = {}): { value?: string; key?: string; conflict?: string } {
  const { herald, metallb } = annotationValues(svc, which, o);
  if (herald !== undefined && metallb !== undefined && herald.value.trim() !== metallb.value.trim()) {
    return { conflict: `${herald.key} "${herald.value}" and ${metallb.key} "${metallb.value}" differ; set one of them` };
  }
  const v = herald ?? metallb;
  return v !== undefined ? { value: v.value, key: v.key } : {};
}

function keyOf(svc: Service): string {
  return `${svc.metadata?.namespace ?? 'default'}/${svc.metadata?.name ?? ''}`;
}

/** True when this Service's class is ours (no class configured: only class-less Services). */
export function isOurClass(svc: Service, loadBalancerClass: string | undefined): boolean {
  const cls = svc.spec?.loadBalancerClass;
  return loadBalancerClass === undefined ? cls === undefined || cls === null : cls === loadBalancerClass;
}

function familyOfAddress(ip: string): IpFamily | undefined {
  return addressValue(ip)?.family;
}

/** The canonical addresses in a Service's `status.loadBalancer.ingress` (malformed ones skipped). */
export function currentIps(svc: Service): string[] {
  const out: string[] = [];
  for (const ing of svc.status?.loadBalancer?.ingress ?? []) {
    const c = ing.ip ? canonicalIP(ing.ip) : undefined;
    if (c) out.push(c);
  }
  return out;
}

/** The families a Service wants addresses for, honouring ipFamilies/ipFamilyPolicy (default: IPv4 single stack). */
function wantedFamilies(svc: Service): { families: IpFamily[]; require: boolean } {
  const fams = (svc.spec?.ipFamilies ?? []).filter((f): f is IpFamily => f === 'IPv4' || f === 'IPv6');
  const primary = fams[0] ?? 'IPv4';
  const policy = svc.spec?.ipFamilyPolicy ?? 'SingleStack';
  if (policy === 'SingleStack') return { families: [primary], require: true };
  const both: IpFamily[] = primary === 'IPv4' ? ['IPv4', 'IPv6'] : ['IPv6', 'IPv4'];
  return { families: both, require: policy === 'RequireDualStack' };
}

interface PortUse {
  readonly port: number;
  readonly protocol: string;
}

function portsOf(svc: Service): PortUse[] {
  return (svc.spec?.ports ?? []).map((p) => ({ port: p.port ?? 0, protocol: p.protocol ?? 'TCP' }));
}

function selectorText(svc: Service): string {
  const sel = svc.spec?.selector ?? {};
  return JSON.stringify(Object.keys(sel).sort().map((k) => [k, sel[k]]));
}

/**
 * Whether `a` may share an address with `b` (MetalLB's rules): both carry the same non-empty sharing key, their
 * (port, protocol) pairs do not overlap, and when either has externalTrafficPolicy Local both select the same pods.
 * Returns undefined when they may, else the reason.
 */
export function sharingConflict(a: Service, b: Service, o: AllocatorOptions = {}): string | undefined {
  const ka = allocatorAnnotation(a, 'sharingKey', o).value;
  const kb = allocatorAnnotation(b, 'sharingKey', o).value;
  if (!ka || !kb) return `${keyOf(b)} uses it without a sharing key`;
  if (ka !== kb) return `${keyOf(b)} uses it with a different sharing key`;
  // A key is a tenant's word: it joins Services of its own namespace only (docs/security.md).
  if ((a.metadata?.namespace ?? 'default') !== (b.metadata?.namespace ?? 'default')) return `${keyOf(b)} is in another namespace (a sharing key joins Services of one namespace only)`;
  const pb = portsOf(b);
  for (const p of portsOf(a)) {
    if (pb.some((q) => q.port === p.port && q.protocol === p.protocol)) {
      return `port ${p.port}/${p.protocol} is already used by ${keyOf(b)} on that address`;
    }
  }
  const local = a.spec?.externalTrafficPolicy === 'Local' || b.spec?.externalTrafficPolicy === 'Local';
  if (local && selectorText(a) !== selectorText(b)) return `${keyOf(b)} selects other pods (externalTrafficPolicy Local)`;
  return undefined;
}

function creationOrder(a: Service, b: Service): number {
  const ta = String(a.metadata?.creationTimestamp ?? '');
  const tb = String(b.metadata?.creationTimestamp ?? '');
  if (ta !== tb) return ta < tb ? -1 : 1;
  const ka = keyOf(a);
  const kb = keyOf(b);
  return ka < kb ? -1 : ka > kb ? 1 : 0;
}

/**
 * Why pool `pool` does not serve Service `svc` (its `namespaces`, its `serviceSelector(s)`), or undefined when it
 * does: MetalLB's `serviceAllocation`, checked for automatic allocation, named pools and requested IPs alike.
 */
export function poolRefuses(pool: Pool, svc: Service, o: AllocatorOptions = {}): string | undefined {
  const ns = svc.metadata?.namespace ?? 'default';
  const namespaces = pool.config.namespaces ?? [];
  const selectors = pool.config.namespaceSelectors ?? [];
  if (namespaces.length > 0 || selectors.length > 0) {
    // MetalLB's serviceAllocation: listed, or its labels match a selector (the labels unknown: not served).
    const nsLabels = selectors.length > 0 ? o.namespaceLabels?.(ns) : undefined;
    const listed = namespaces.includes(ns);
    const selected = nsLabels !== undefined && matchesSelectors(undefined, selectors, nsLabels);
    if (!listed && !selected) {
      const what = [...(namespaces.length > 0 ? [`the namespace${namespaces.length > 1 ? 's' : ''} ${namespaces.join(', ')}`] : []), ...(selectors.length > 0 ? ['the namespaces its namespaceSelectors match'] : [])].join(' and ');
      const unknown = selectors.length > 0 && nsLabels === undefined ? `; the labels of namespace ${ns} are not known (yet)` : '';
      return `pool "${pool.config.name}" serves ${what} only (this Service is in ${ns}${unknown})`;
    }
  }
  if (!matchesSelectors(pool.config.serviceSelector, pool.config.serviceSelectors, svc.metadata?.labels)) return `pool "${pool.config.name}" serves only Services its serviceSelectors match`;
  return undefined;
}

function eligiblePools(svc: Service, pools: readonly Pool[], o: AllocatorOptions): Pool[] {
  return pools
    .filter((p) => p.config.autoAssign !== false && poolRefuses(p, svc, o) === undefined)
    .sort((a, b) => (a.config.priority ?? Number.MAX_SAFE_INTEGER) - (b.config.priority ?? Number.MAX_SAFE_INTEGER));
}

/** Addresses never given to a Service, whatever a pool holds: the unspecified addresses and the limited broadcast. */
export function unassignable(ip: string): boolean {
  const v = addressValue(ip);
  return v === undefined || v.value === 0n || (v.family === 'IPv4' && v.value === 0xffffffffn);
}

/**
 * Plans the LoadBalancer addresses of all Services. Pure: same input, same output; never throws for bad Service
 * content (a bad annotation becomes an AllocationFailed event). With no pools configured it writes nothing.
 */
export function planAllocations(services: readonly Service[], pools: readonly Pool[], options: AllocatorOptions = {}): AllocationPlan {
  const assignments = new Map<string, string[]>();
  const patches: StatusPatch[] = [];
  const events: AllocationEvent[] = [];
  const failed = new Map<AllocationFailure, number>(ALLOCATION_FAILURES.map((f) => [f, 0]));
  if (pools.length === 0) return { assignments, patches, events, failed };

  const sorted = [...services].sort(creationOrder);
  const byKey = new Map(sorted.map((s) => [keyOf(s), s]));
  /** ip → service keys using it. */
  const users = new Map<string, string[]>();
  const use = (ip: string, key: string) => {
    const list = users.get(ip);
    if (list) list.push(key);
    else users.set(ip, [key]);
  };
  const inAnyPool = (ip: string) => pools.some((p) => poolContains(p, ip));

  // Pass 1: rebuild state from existing status; handled services keep their IPs; clear services that stopped being ours.
  const needs: Service[] = [];
  for (const svc of sorted) {
    const key = keyOf(svc);
    const ips = currentIps(svc);
    const handled = svc.spec?.type === 'LoadBalancer' && isOurClass(svc, options.loadBalancerClass);
    if (!handled) {
      // A former LoadBalancer Service (type changed; the class is wiped with it) still showing one of our addresses.
      if (svc.spec?.type !== 'LoadBalancer' && isOurClass(svc, options.loadBalancerClass) && ips.some(inAnyPool)) {
        patches.push({ service: key, ips: [] });
        events.push({ service: key, type: 'Normal', reason: 'IPReleased', message: `released ${ips.join(', ')}: no longer type LoadBalancer` });
      }
      continue;
    }
    const requested = requestedIps(svc, options);
    const wantsOther = requested.ok && requested.ips.length > 0 && requested.ips.join(',') !== [...ips].sort().join(',');
    if (ips.length > 0 && !wantsOther) {
      assignments.set(key, ips);
      for (const ip of ips) use(ip, key);
      const outside = ips.filter((ip) => !inAnyPool(ip));
      if (outside.length > 0) {
        events.push({ service: key, type: 'Warning', reason: 'IPOutsidePools', message: `${outside.join(', ')} is outside every pool; kept (no surprise moves)` });
      }
      continue;
    }
    needs.push(svc);
  }
  // Duplicates among existing assignments: reported on each service, never "fixed" by moving traffic.
  for (const [ip, keys] of users) {
    for (let i = 1; i < keys.length; i++) {
      const a = byKey.get(keys[i] as string) as Service;
      for (let j = 0; j < i; j++) {
        const b = byKey.get(keys[j] as string) as Service;
        const conflict = sharingConflict(a, b, options);
        if (conflict) {
          for (const k of [keys[i] as string, keys[j] as string]) {
            events.push({ service: k, type: 'Warning', reason: 'DuplicateIP', message: `${ip} is assigned to both ${keys[j]} and ${keys[i]}: ${conflict}` });
          }
        }
      }
    }
  }

  // Pass 2: allocate for services without addresses, oldest first.
  const cursors = new Map<string, Generator<string>>();
  const nextFree = (pool: Pool, family: IpFamily): string | undefined => {
    const id = `${pool.config.name}\u0000${family}`;
    let it = cursors.get(id);
    if (!it) {
      it = poolAddresses(pool, family);
      cursors.set(id, it);
    }
    for (let r = it.next(); !r.done; r = it.next()) if (!users.has(r.value) && !unassignable(r.value)) return r.value;
    return undefined;
  };

  for (const svc of needs) {
    const key = keyOf(svc);
    const fail = (why: AllocationFailure, message: string) => {
      events.push({ service: key, type: 'Warning', reason: 'AllocationFailed', message });
      failed.set(why, (failed.get(why) ?? 0) + 1);
    };
    const requested = requestedIps(svc, options);
    if (!requested.ok) {
      fail('InvalidRequest', requested.error);
      continue;
    }
    const named = allocatorAnnotation(svc, 'pool', options);
    const sharing = allocatorAnnotation(svc, 'sharingKey', options);
    const conflicting = named.conflict ?? sharing.conflict;
    if (conflicting !== undefined) {
      fail('InvalidRequest', conflicting);
      continue;
    }
    const poolName = named.value;
    const poolKey = named.key ?? ANNOTATION_POOL;
    let candidates: Pool[];
    if (poolName) {
      const pool = pools.find((p) => p.config.name === poolName);
      if (!pool) {
        fail('NoSuchPool', `pool "${poolName}" (annotation ${poolKey}) does not exist`);
        continue;
      }
      // A named pool is given only when it serves the Service (MetalLB: "not compatible for ip assignment").
      const refused = poolRefuses(pool, svc, options);
      if (refused !== undefined) {
        fail('PoolNotAllowed', `${refused}: annotation ${poolKey} names it in vain`);
        continue;
      }
      candidates = [pool];
    } else {
      candidates = requested.ips.length > 0 ? pools.slice() : eligiblePools(svc, pools, options);
    }

    let chosen: string[] | undefined;
    let failure: [AllocationFailure, string] | undefined;
    if (requested.ips.length > 0) {
      for (const ip of requested.ips) {
        if (unassignable(ip)) {
          failure = ['Unassignable', `requested IP ${ip} is never given to a Service (the unspecified or broadcast address)`];
          break;
        }
        const holding = candidates.filter((p) => poolContains(p, ip));
        if (holding.length === 0) {
          failure = ['OutsidePools', `requested IP ${ip} is outside ${poolName ? `pool "${poolName}"` : 'every pool'}`];
          break;
        }
        // The pool holding a requested address must serve the Service (namespaces, serviceSelectors).
        if (!holding.some((p) => poolRefuses(p, svc, options) === undefined)) {
          failure = ['PoolNotAllowed', `requested IP ${ip}: ${poolRefuses(holding[0] as Pool, svc, options) as string}`];
          break;
        }
        const conflict = (users.get(ip) ?? []).map((k) => sharingConflict(svc, byKey.get(k) as Service, options)).find((c) => c);
        if (conflict) {
          failure = ['InUse', `requested IP ${ip} is in use: ${conflict}`];
          break;
        }
      }
      if (!failure) chosen = requested.ips;
    } else {
      const { families, require } = wantedFamilies(svc);
      const got: string[] = [];
      const missing: IpFamily[] = [];
      for (const family of families) {
        const ip = shareableIp(svc, family, candidates, users, byKey, options) ?? firstFreeIn(candidates, family, nextFree);
        if (ip) got.push(ip);
        else missing.push(family);
      }
      if (got.length === 0 || (require && missing.length > 0)) {
        failure = candidates.length === 0 ? ['NoPool', 'no pool matches this service (namespaces, serviceSelector, autoAssign)'] : ['PoolExhausted', `pool exhausted for ${missing.join(' and ')}`];
      } else chosen = got;
    }
    if (!chosen) {
      fail(...(failure ?? ['PoolExhausted', 'no address available']));
      continue;
    }
    assignments.set(key, chosen);
    for (const ip of chosen) use(ip, key);
    patches.push({ service: key, ips: chosen });
    events.push({ service: key, type: 'Normal', reason: 'IPAllocated', message: `assigned ${chosen.join(', ')}` });
  }
  return { assignments, patches, events, failed };
}

function firstFreeIn(pools: readonly Pool[], family: IpFamily, nextFree: (p: Pool, f: IpFamily) => string | undefined): string | undefined {
  for (const p of pools) {
    const ip = nextFree(p, family);
    if (ip) return ip;
  }
  return undefined;
}

/** An address already used by services with the same sharing key that `svc` may join, from an eligible pool. */
function shareableIp(svc: Service, family: IpFamily, pools: readonly Pool[], users: ReadonlyMap<string, string[]>, byKey: ReadonlyMap<string, Service>, o: AllocatorOptions): string | undefined {
  if (allocatorAnnotation(svc, 'sharingKey', o).value === undefined) return undefined;
  for (const [ip, keys] of users) {
    if (familyOfAddress(ip) !== family || !pools.some((p) => poolContains(p, ip)) || unassignable(ip)) continue;
    if (keys.every((k) => sharingConflict(svc, byKey.get(k) as Service, o) === undefined)) return ip;
  }
  return undefined;
}

/**
 * The requested addresses of a Service, canonical and sorted, or the reason they are unusable: herald.io/loadBalancerIPs,
 * else (with `metallbAnnotations`) MetalLB's loadBalancerIPs (both set: they must ask for the same addresses), else
 * the deprecated `spec.loadBalancerIP` alone.
 */
export function requestedIps(svc: Service, o: AllocatorOptions = {}): { ok: true; ips: string[] } | { ok: false; error: string } {
  const { herald, metallb } = annotationValues(svc, 'requestedIps', o);
  const legacy = svc.spec?.loadBalancerIP;
  const first = herald ?? metallb;
  if (first !== undefined && legacy) return { ok: false, error: `both ${first.key} and the deprecated spec.loadBalancerIP are set; use only the annotation` };
  const read = (text: string, where: string): { ok: true; ips: string[] } | { ok: false; error: string } => {
    const ips: string[] = [];
    const fams = new Set<string>();
    for (const r of text.split(',')) {
      const c = canonicalIP(r);
      if (!c) return { ok: false, error: `"${r.trim()}" in ${where} is not an IP address` };
      const f = familyOfAddress(c) as string;
      if (fams.has(f)) return { ok: false, error: `more than one ${f} address requested` };
      fams.add(f);
      ips.push(c);
    }
    return { ok: true, ips: ips.sort() };
  };
  if (herald !== undefined && metallb !== undefined) {
    const h = read(herald.value, herald.key);
    const m = read(metallb.value, metallb.key);
    if (!h.ok) return h;
    if (!m.ok) return m;
    if (h.ips.join(',') !== m.ips.join(',')) return { ok: false, error: `${herald.key} "${herald.value}" and ${metallb.key} "${metallb.value}" ask for different addresses; set one of them` };
    return h;
  }
  if (first !== undefined) return read(first.value, first.key);
  return legacy ? read(legacy, 'spec.loadBalancerIP') : { ok: true, ips: [] };
}
