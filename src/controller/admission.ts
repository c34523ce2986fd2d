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
 *
 * Path attributes (docs/decisions.md "Path attributes from Services"). A Service's herald.io/ attribute annotations
 * (service-attributes.ts) apply only through an advertisement whose `serviceAttributes` lists what it accepts; each
 * annotation is taken whole or refused whole (`AttributeNotAllowed`), and a refused one leaves the VIP announced with
 * the advertisement's attributes. A well-known community (65535:x) never comes from an annotation, whatever the list.
 * What is admitted still applies to a prefix only when every piece behind it carries the same (route-merge.ts).
 */
import { parseCommunity, parseLargeCommunity } from '../../bgp/main-thread.ts';
import { AddressSpace } from '../net/address-space.ts';
import type { CommunityRange, LargeCommunityRange } from '../net/community-ranges.ts';
import { inCommunityRanges, inLargeCommunityRanges, isWellKnownCommunity, parseCommunityRange, parseLargeCommunityRange } from '../net/community-ranges.ts';
import type { Reason } from './reasons.ts';
import { ReasonCode, sharedReason } from './reasons.ts';
import type { ServiceAttributeName, ServiceAttributes } from './service-attributes.ts';
import { ServiceAttributeAnnotation } from './service-attributes.ts';

/** The operator's policy in the controller's context (desired-routes.ts `DesiredRoutesContext`), as configured. */
export interface AdmissionInputs {
  /** Top-level `allowedPrefixes`: CIDRs where LoadBalancer and external addresses may be announced. */
  readonly allowedPrefixes?: readonly string[] | undefined;
  /** Every pool's `addresses` (CIDRs and "A-B" ranges): the pools' space is allowed too. */
  readonly poolAddresses?: readonly string[] | undefined;
  /** Configured `serviceCIDRs`: where an aggregated ClusterIP prefix may reach. */
  readonly serviceCIDRs?: readonly string[] | undefined;
}

/**
 * What an advertisement lets Services set with the path-attribute annotations (config `serviceAttributes`): nothing
 * that is not listed. Entries of the community lists are values or ranges (src/net/community-ranges.ts).
 */
export interface ServiceAttributesPolicy {
  readonly communities?: readonly string[] | undefined;
  readonly largeCommunities?: readonly string[] | undefined;
  /** true: herald.io/med may replace the advertisement's MED. */
  readonly med?: boolean | undefined;
  /** The most extra copies of the local AS herald.io/as-path-prepend may ask for (absent: 0). */
  readonly maxPrepend?: number | undefined;
}

/** What an advertisement adds to the policy: its own `allowedPrefixes`, which only narrow, and `serviceAttributes`. */
export interface AdvertisementAdmission {
  readonly name: string;
  readonly allowedPrefixes?: readonly string[] | undefined;
  readonly serviceAttributes?: ServiceAttributesPolicy | undefined;
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

/** An advertisement's `serviceAttributes` with its community lists parsed. */
interface AttributesPolicy {
  readonly communities: readonly CommunityRange[] | undefined;
  readonly largeCommunities: readonly LargeCommunityRange[] | undefined;
  readonly med: boolean;
  readonly maxPrepend: number;
}

const attributePolicies = new WeakMap<ServiceAttributesPolicy, AttributesPolicy>();
const NO_POLICY: AttributesPolicy = { communities: undefined, largeCommunities: undefined, med: false, maxPrepend: 0 };

/** Entries parsed; one that does not parse (the config refuses those) allows nothing: fail closed. */
function ranges<T>(list: readonly string[] | undefined, parse: (text: string) => T): T[] | undefined {
  if (list === undefined) return undefined;
  const out: T[] = [];
  for (const text of list) {
    try {
      out.push(parse(text));
    } catch {
      // validated by the config schema
    }
  }
  return out;
}

function attributesPolicyOf(ad: AdvertisementAdmission): AttributesPolicy {
  const p = ad.serviceAttributes;
  if (p === undefined) return NO_POLICY;
  let c = attributePolicies.get(p);
  if (c === undefined) {
    c = { communities: ranges(p.communities, parseCommunityRange), largeCommunities: ranges(p.largeCommunities, parseLargeCommunityRange), med: p.med === true, maxPrepend: p.maxPrepend ?? 0 };
    attributePolicies.set(p, c);
  }
  return c;
}

/** What {@link admitAttributes} lets through of a Service's attributes, and why the rest is refused. */
export interface AdmittedAttributes {
  /** The attributes this advertisement sends for the Service (a subset of what it asked for; `{}` for none). */
  readonly attributes: ServiceAttributes;
  /** One AttributeNotAllowed reason per refused annotation, naming the advertisement. */
  readonly refused: readonly Reason[];
}

const NOTHING: ServiceAttributes = Object.freeze({});
const NOTHING_ADMITTED: AdmittedAttributes = Object.freeze({ attributes: NOTHING, refused: [] });

/** The value of a community text (the annotation parser accepted it), or undefined. */
function communityValue(text: string): number | undefined {
  try {
    return parseCommunity(text);
  } catch {
    return undefined;
  }
}

/**
 * The Service's path attributes (its annotations as they apply: steering.ts `ServiceAnnotations.attributes`) that
 * advertisement `ad` accepts. Each attribute is admitted whole or refused whole.
 */
export function admitAttributes(asked: ServiceAttributes, ad: AdvertisementAdmission): AdmittedAttributes {
  if (asked.communities === undefined && asked.largeCommunities === undefined && asked.med === undefined && asked.asPathPrepend === undefined) return NOTHING_ADMITTED;
  const policy = attributesPolicyOf(ad);
  const out: { -readonly [K in keyof ServiceAttributes]: ServiceAttributes[K] } = {};
  const refused: Reason[] = [];
  const refuse = (name: ServiceAttributeName, why: string) =>
    refused.push({ code: ReasonCode.AttributeNotAllowed, message: `${ANNOTATION_OF[name]}: ${why}; advertisement ${ad.name} announces the VIP with its own ${TEXT[name]}`, advertisement: ad.name });
  const notListed = (name: ServiceAttributeName, field: string) => refuse(name, `advertisement ${ad.name} accepts none from Services (it sets no serviceAttributes.${field})`);

  if (asked.communities !== undefined) {
    const values = asked.communities.map((c) => [c, communityValue(c)] as const);
    const wellKnown = values.filter(([, v]) => v !== undefined && isWellKnownCommunity(v)).map(([c]) => c);
    if (wellKnown.length > 0) refuse('communities', `${wellKnown.join(', ')} ${wellKnown.length === 1 ? 'is a well-known community' : 'are well-known communities'} (65535:x), which never come from a Service`);
    else if (policy.communities === undefined) notListed('communities', 'communities');
    else {
      const allowed = policy.communities;
      const outside = values.filter(([, v]) => v === undefined || !inCommunityRanges(v, allowed)).map(([c]) => c);
      if (outside.length > 0) refuse('communities', `${outside.join(', ')} ${outside.length === 1 ? 'is' : 'are'} not in serviceAttributes.communities of advertisement ${ad.name} (${ad.serviceAttributes?.communities?.join(', ') || 'empty'})`);
      else out.communities = asked.communities;
    }
  }
  if (asked.largeCommunities !== undefined) {
    if (policy.largeCommunities === undefined) notListed('largeCommunities', 'largeCommunities');
    else {
      const allowed = policy.largeCommunities;
      const outside = asked.largeCommunities.filter((c) => !inLargeCommunityRanges(parseLargeCommunity(c), allowed));
      if (outside.length > 0) refuse('largeCommunities', `${outside.join(', ')} ${outside.length === 1 ? 'is' : 'are'} not in serviceAttributes.largeCommunities of advertisement ${ad.name} (${ad.serviceAttributes?.largeCommunities?.join(', ') || 'empty'})`);
      else out.largeCommunities = asked.largeCommunities;
    }
  }
  if (asked.med !== undefined) {
    if (policy.med) out.med = asked.med;
    else notListed('med', 'med: true');
  }
  if (asked.asPathPrepend !== undefined) {
    if (asked.asPathPrepend <= policy.maxPrepend) out.asPathPrepend = asked.asPathPrepend;
    else if (policy.maxPrepend === 0) notListed('asPathPrepend', 'maxPrepend');
    else refuse('asPathPrepend', `${asked.asPathPrepend} extra copies of the local AS, more than serviceAttributes.maxPrepend ${policy.maxPrepend} of advertisement ${ad.name}`);
  }
  return { attributes: Object.keys(out).length === 0 ? NOTHING : out, refused };
}

const ANNOTATION_OF: Readonly<Record<ServiceAttributeName, string>> = {
  communities: ServiceAttributeAnnotation.Communities,
  largeCommunities: ServiceAttributeAnnotation.LargeCommunities,
  med: ServiceAttributeAnnotation.Med,
  asPathPrepend: ServiceAttributeAnnotation.AsPathPrepend,
};

const TEXT: Readonly<Record<ServiceAttributeName, string>> = { communities: 'communities', largeCommunities: 'large communities', med: 'MED', asPathPrepend: 'AS path' };
