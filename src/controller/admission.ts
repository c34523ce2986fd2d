/**
 * Admission: what the operator allows of what tenants ask, between the desired routes and the health gate
 * (docs/architecture.md; docs/decisions.md "Who owns which input"; docs/security.md). Pure: it reads the Service's
 * VIP, the advertisement and the operator's policy from the controller's context, nothing else.
 *
 * Addresses (docs/decisions.md "Allowed address space"). Tenants choose LoadBalancer ingress addresses (through
 * `spec.loadBalancerIP`, annotations, or another controller) and `spec.externalIPs`; the operator's allowed space is
 * its pools' addresses and its `allowedPrefixes`. So:
 * - a LoadBalancer ingress address or an externalIP is announced only inside that space; with neither pools nor
 *   `allowedPrefixes`, none is (fail closed);
 * - the prefix actually announced (after `aggregationLength`) must lie wholly inside it too, so no aggregation widens
 *   a VIP past what the operator allowed (a /32 with aggregationLength 0 would be a default route);
 * - ClusterIPs come from the apiserver's own service ranges: their host routes need no list; an aggregated ClusterIP
 *   prefix must lie inside the allowed space or the configured `serviceCIDRs`;
 * - an advertisement's own `allowedPrefixes` only narrows: what it announces (every kind) must also lie inside them.
 *
 * Anything refused is never announced and gets the reason `PrefixNotAllowed` (API, CLI, BGPNodeStatus), a Warning
 * Event on the Service (service-events.ts) and the metric `herald_tenant_inputs_refused`.
 */
import { AddressSpace } from '../net/address-space.ts';
import type { Reason } from './reasons.ts';
import { ReasonCode, sharedReason } from './reasons.ts';

/** The operator's policy in the controller's context (desired-routes.ts `DesiredRoutesContext`), as configured. */
export interface AdmissionInputs {
  /** Top-level `allowedPrefixes`: CIDRs where LoadBalancer and external addresses may be announced. */
  readonly allowedPrefixes?: readonly string[] | undefined;
  /** Every pool's `addresses` (CIDRs and "A-B" ranges): the pools' space is allowed too. */
  readonly poolAddresses?: readonly string[] | undefined;
  /** Configured `serviceCIDRs`: where an aggregated ClusterIP prefix may reach. */
  readonly serviceCIDRs?: readonly string[] | undefined;
}

/** What an advertisement adds to the policy: its own `allowedPrefixes`, which only narrow. */
export interface AdvertisementAdmission {
  readonly name: string;
  readonly allowedPrefixes?: readonly string[] | undefined;
}

/** The kinds of address admission tells apart. */
export type AdmittedKind = 'loadBalancer' | 'externalIP' | 'clusterIP' | 'serviceCIDR';

/** The operator's policy compiled to address spaces. */
interface Policy {
  /** Pools ∪ allowedPrefixes: where LoadBalancer and external addresses may be announced. */
  readonly space: AddressSpace;
  /** `space` ∪ serviceCIDRs: where an aggregated ClusterIP prefix may reach. */
  readonly clusterSpace: AddressSpace;
}

const policies = new WeakMap<AdmissionInputs, Policy>();
const adSpaces = new WeakMap<readonly string[], AddressSpace>();

/** A space from configured texts; a text that is not one (the config refuses those) adds nothing: fail closed. */
function spaceOf(texts: readonly string[] | undefined): AddressSpace {
  if (texts === undefined || texts.length === 0) return AddressSpace.EMPTY;
  const parts: AddressSpace[] = [];
  for (const t of texts) {
    try {
      parts.push(AddressSpace.of([t]));
    } catch {
      // validated by the config schema; skipped here rather than thrown from a pure step
    }
  }
  return parts.reduce((a, b) => a.union(b), AddressSpace.EMPTY);
}

/** The policy of `inputs`, compiled once per context object. */
function policyOf(inputs: AdmissionInputs): Policy {
  let p = policies.get(inputs);
  if (p === undefined) {
    const space = spaceOf(inputs.allowedPrefixes).union(spaceOf(inputs.poolAddresses));
    p = { space, clusterSpace: space.union(spaceOf(inputs.serviceCIDRs)) };
    policies.set(inputs, p);
  }
  return p;
}

/** The space an advertisement narrows to, or undefined when it sets no `allowedPrefixes`. */
function advertisementSpace(ad: AdvertisementAdmission): AddressSpace | undefined {
  const list = ad.allowedPrefixes;
  if (list === undefined) return undefined;
  let s = adSpaces.get(list);
  if (s === undefined) adSpaces.set(list, (s = spaceOf(list)));
  return s;
}

/** True when neither pools nor `allowedPrefixes` allow any address: no LoadBalancer or external address can be announced. */
export function allowsNoAddress(inputs: AdmissionInputs): boolean {
  return policyOf(inputs).space.empty;
}

/** What the operator can do about a refused address, said once for every message. */
const HOW = 'list it in allowedPrefixes (or a pool) to allow it';

/**
 * Whether the VIP's own address may be announced at all (before any advertisement).
 * @returns undefined when it may; else the PrefixNotAllowed reason
 */
export function admitAddress(kind: AdmittedKind, address: string, inputs: AdmissionInputs): Reason | undefined {
  if (kind === 'clusterIP' || kind === 'serviceCIDR') return undefined;
  const { space } = policyOf(inputs);
  if (space.contains(address)) return undefined;
  if (space.empty) {
    return sharedReason(
      ReasonCode.PrefixNotAllowed,
      `no pools and no allowedPrefixes are configured, so Herald announces no LoadBalancer or external address; list the addresses it may announce in allowedPrefixes (or pools)`,
    );
  }
  return { code: ReasonCode.PrefixNotAllowed, message: `${address} (${kind}) is outside every pool and allowedPrefixes (${space}): never announced; ${HOW}` };
}

/**
 * Whether advertisement `ad` may announce `prefix`, the prefix it makes of the VIP `address` (its aggregation
 * length applied). Call only for an address {@link admitAddress} admitted.
 * @returns undefined when it may; else the PrefixNotAllowed reason naming the advertisement
 */
export function admitPrefix(kind: AdmittedKind, address: string, prefix: string, ad: AdvertisementAdmission, inputs: AdmissionInputs): Reason | undefined {
  const narrowed = advertisementSpace(ad);
  if (narrowed !== undefined && !narrowed.coversPrefix(address)) {
    return { code: ReasonCode.PrefixNotAllowed, message: `advertisement ${ad.name}: ${address} is outside its allowedPrefixes (${narrowed})`, advertisement: ad.name };
  }
  const host = Number(prefix.slice(prefix.lastIndexOf('/') + 1)) === (address.includes(':') ? 128 : 32);
  const { space, clusterSpace } = policyOf(inputs);
  const base = kind === 'serviceCIDR' || (kind === 'clusterIP' && host) ? undefined : kind === 'clusterIP' ? clusterSpace : space;
  const within = (s: AddressSpace | undefined) => s === undefined || s.coversPrefix(prefix);
  if (within(base) && within(narrowed)) return undefined;
  const allowed = base !== undefined && narrowed !== undefined ? base.intersect(narrowed) : (base ?? (narrowed as AddressSpace));
  const where = kind === 'clusterIP' ? 'the allowed space and serviceCIDRs' : narrowed !== undefined ? 'the allowed space and its allowedPrefixes' : 'the allowed space';
  return {
    code: ReasonCode.PrefixNotAllowed,
    message: `advertisement ${ad.name} would announce ${prefix}, which reaches beyond ${where} (${allowed}): never announced; shorten its aggregationLength or allow all of ${prefix}`,
    advertisement: ad.name,
  };
}
