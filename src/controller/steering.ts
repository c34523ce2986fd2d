/**
 * Traffic steering of one VIP on this node (issue 18; users: docs/traffic-steering.md): what `decideService`
 * (desired-routes.ts) adds to a VIP's route pieces once every blocking rule has passed.
 *
 * - Bounded fan-out (`maxNodesPerVip`): the rendezvous choice (rendezvous.ts) among the VIP's eligible nodes, decided
 *   from the snapshot alone, so every node makes the same choice: the Nodes that pass node-eligibility.ts and the
 *   advertisement's nodeSelector and, under the Local policy, hold a usable endpoint of the VIP's family
 *   (endpoints.ts `nodesWithUsableEndpoints`). With `locality.preferLocal` the nodes holding a usable endpoint rank
 *   before the others. A node cannot see another node's health checks or sessions: a chosen node whose check fails
 *   withdraws, and the VIP is announced by fewer nodes until the snapshot changes.
 * - Weighting (`weighting: endpoints`, Local policy only): the link bandwidth community, this node's usable local
 *   endpoints × `bandwidthPerEndpoint` (link-bandwidth.ts). Under Cluster every node spreads over every endpoint, so
 *   no weight is sent.
 * - Locality (`locality`, Cluster policy only): a node without a usable local endpoint adds `med` to the MED and
 *   `prependOthers` copies of the local AS toward eBGP peers; a node with one sends the MED alone (0 when none), so
 *   routers prefer it and keep the others as fallback.
 * - Per-Service annotations (service-attributes.ts), as far as the advertisement admits them (admission.ts): kept
 *   apart from the advertisement's attributes on the route piece (`fromService`); when every piece of the prefix
 *   carries the same, communities and large communities join the advertisement's, MED and AS path prepend replace
 *   the advertisement's (route-merge.ts). A bad annotation never blocks a VIP (it
 *   says nothing about whether this node can serve it): the attribute keeps the last good value this controller saw
 *   for that Service; with none (a Service first seen with it, or after a restart) it is as if the annotation were
 *   absent, the advertisement's value. Either way an InvalidAnnotation reason names the annotation and the fix
 *   (docs/decisions.md "Path-attribute annotations").
 */
import type { Node } from '../k8s/types.ts';
import type { AnnotationError } from '../k8s/annotations.ts';
import { formatAnnotationErrors } from '../k8s/annotations.ts';
import type { LabelSelector } from '../k8s/selector.ts';
import { matchesSelectors } from '../k8s/selector.ts';
import type { PublishedNodeSet } from '../k8s/node-set.ts';
import type { Snapshot } from '../k8s/object-store.ts';
import { NODE_SET_LABEL, NODE_SET_PREFIX } from '../k8s/node-set.ts';
import type { IpFamily } from '../net/address.ts';
import type { Advertisement } from './desired-routes.ts';
import type { EndpointCounts } from './endpoints.ts';
import { endpointBandwidth } from './link-bandwidth.ts';
import type { EvaluateNodeOptions, NodeState } from './node-eligibility.ts';
import { evaluateNode } from './node-eligibility.ts';
import type { Reason } from './reasons.ts';
import { ReasonCode } from './reasons.ts';
import { chooseNodes } from './rendezvous.ts';
import type { RouteContribution } from './route-merge.ts';
import type { ServiceAttributeName, ServiceAttributes } from './service-attributes.ts';
import { attributeOfAnnotation, parseServiceAttributes } from './service-attributes.ts';

/** The default bandwidth of one endpoint under `weighting: endpoints`: 1 Gbit/s, in bytes per second. */
export const DEFAULT_BANDWIDTH_PER_ENDPOINT = 125_000_000;

const MAX_MED = 4294967295;

// ---------------------------------------------------------------------------------------------
// The cluster's nodes, as every node sees them
// ---------------------------------------------------------------------------------------------

/** The eligible Nodes of the snapshot (node-eligibility.ts), for the rendezvous choice. */
export interface ClusterNodes {
  /** Labels of every eligible Node, by name. */
  readonly eligible: ReadonlyMap<string, Readonly<Record<string, string>>>;
  /**
   * Set when the Nodes come from the published node set (src/k8s/node-set.ts) instead of the Node objects: the label
   * keys it carries (others are not known), and why it cannot be used yet, if so.
   */
  readonly published?: { readonly labelKeys: ReadonlySet<string>; readonly unknown?: string };
}

/**
 * The Nodes of the published node set, as node `me` uses them: usable once it lists `me` (eligible or not) and is
 * whole (as many Nodes as the newest shard's stamp says: src/k8s/node-set.ts), so no node makes the choice from a set
 * the publisher has not finished writing (a first publish, shard by shard) or has not seen it in.
 */
export function publishedClusterNodes(set: PublishedNodeSet, me: string): ClusterNodes {
  const why = set.problems.length > 0 ? `; not readable: ${set.problems.join('; ')}` : '';
  const where = `the node set the status leader publishes (ConfigMaps ${NODE_SET_PREFIX}*, label ${NODE_SET_LABEL})`;
  const unknown = !set.listed.has(me)
    ? `${where} does not list Node ${me} yet${why}`
    : set.expected !== undefined && set.listed.size < set.expected
      ? `${where} is being written: ${set.listed.size} of ${set.expected} Nodes read${why}`
      : undefined;
  return { eligible: set.eligible, published: { labelKeys: set.labelKeys, ...(unknown !== undefined ? { unknown } : {}) } };
}

/**
 * The Nodes the rendezvous choice of node `me` reads: the published node set while the source reads it (a node's
 * Herald in a cluster), else `nodes` (the snapshot's Nodes: manifests, or a source reading every Node).
 */
export function clusterNodesOf(snapshot: Pick<Snapshot, 'nodeSet'>, me: string, nodes: Iterable<Node>, opts: Pick<EvaluateNodeOptions, 'ignoreExcludeLabel'> = {}): ClusterNodes {
  const set = snapshot.nodeSet();
  return set !== undefined ? publishedClusterNodes(set, me) : clusterNodes(nodes, opts);
}

/** The label keys `ad`'s node selectors read (matchLabels and matchExpressions). */
export function selectorKeys(ad: { readonly nodeSelector?: LabelSelector | undefined; readonly nodeSelectors?: readonly LabelSelector[] | undefined }): string[] {
  const keys = new Set<string>();
  for (const sel of [...(ad.nodeSelector ? [ad.nodeSelector] : []), ...(ad.nodeSelectors ?? [])]) {
    for (const k of Object.keys(sel.matchLabels ?? {})) keys.add(k);
    for (const e of sel.matchExpressions ?? []) keys.add(e.key);
  }
  return [...keys];
}

/** No Node known (no advertisement bounds its fan-out, so nothing reads the cluster's Nodes). */
export const NO_CLUSTER_NODES: ClusterNodes = Object.freeze({ eligible: new Map<string, Readonly<Record<string, string>>>() });

/** True when some advertisement sets `maxNodesPerVip`: the controller then follows every Node. */
export function boundsFanOut(advertisements: readonly { readonly maxNodesPerVip?: number | undefined }[] | undefined): boolean {
  return advertisements?.some((a) => a.maxNodesPerVip !== undefined) ?? false;
}

/** The eligible Nodes among `nodes`. Never throws. */
export function clusterNodes(nodes: Iterable<Node>, opts: Pick<EvaluateNodeOptions, 'ignoreExcludeLabel'> = {}): ClusterNodes {
  const eligible = new Map<string, Readonly<Record<string, string>>>();
  for (const n of nodes) {
    const name = n.metadata?.name;
    if (name === undefined) continue;
    const st = evaluateNode(n, name, opts);
    if (st.eligible) eligible.set(name, st.labels);
  }
  return { eligible };
}

/**
 * `cluster` with Node `name` re-evaluated (`node` undefined: gone).
 * @returns the new set, or undefined when the Node's eligibility and labels did not change (heartbeats)
 */
export function withNode(cluster: ClusterNodes, name: string, node: Node | undefined, opts: Pick<EvaluateNodeOptions, 'ignoreExcludeLabel'> = {}): ClusterNodes | undefined {
  const st = node === undefined ? undefined : evaluateNode(node, name, opts);
  const before = cluster.eligible.get(name);
  if (st === undefined || !st.eligible) {
    if (before === undefined) return undefined;
    const eligible = new Map(cluster.eligible);
    eligible.delete(name);
    return { eligible };
  }
  if (before !== undefined && sameLabels(before, st.labels)) return undefined;
  const eligible = new Map(cluster.eligible);
  eligible.set(name, st.labels);
  return { eligible };
}

function sameLabels(a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>): boolean {
  const ka = Object.keys(a);
  return ka.length === Object.keys(b).length && ka.every((k) => Object.hasOwn(b, k) && a[k] === b[k]);
}

// ---------------------------------------------------------------------------------------------
// Per-Service annotations, with the last good values
// ---------------------------------------------------------------------------------------------

/** A Service's path-attribute annotations as they apply (see the module comment). */
export interface ServiceAnnotations {
  /** The attributes in force: the valid annotations', and the last good value of a bad one. */
  readonly attributes: ServiceAttributes;
  /** Attributes whose annotation is bad and that have no last good value: sent as without the annotation. */
  readonly unknown: readonly ServiceAttributeName[];
  /** One error per bad annotation (service-attributes.ts). */
  readonly errors: readonly AnnotationError[];
  /** One InvalidAnnotation reason per error, saying what is sent instead. Never blocking. */
  readonly notes: readonly Reason[];
}

/** A Service without path-attribute annotations (most of them): one shared object. */
export const NO_ANNOTATIONS: ServiceAnnotations = Object.freeze({ attributes: Object.freeze({}), unknown: [], errors: [], notes: [] });

const ATTRIBUTE_NAMES: readonly ServiceAttributeName[] = ['communities', 'largeCommunities', 'med', 'asPathPrepend'];

const ATTRIBUTE_TEXT: Readonly<Record<ServiceAttributeName, string>> = { communities: 'communities', largeCommunities: 'large communities', med: 'MED', asPathPrepend: 'AS path' };

function describeValue(name: ServiceAttributeName, a: ServiceAttributes): string {
  const v = a[name];
  if (v === undefined) return 'none';
  return Array.isArray(v) ? v.join(' ') : String(v);
}

/** "communities 65000:1 no-export; MED 50; AS path prepend 2 toward eBGP peers", '' when nothing is set. */
export function describeAttributes(a: ServiceAttributes): string {
  const out: string[] = [];
  if (a.communities !== undefined) out.push(`communities ${a.communities.join(' ')}`);
  if (a.largeCommunities !== undefined) out.push(`large communities ${a.largeCommunities.join(' ')}`);
  if (a.med !== undefined) out.push(`MED ${a.med}`);
  if (a.asPathPrepend !== undefined) out.push(`AS path prepend ${a.asPathPrepend} toward eBGP peers`);
  return out.join('; ');
}

/**
 * The path-attribute annotations of a Service as they apply now.
 * @param annotations the Service's `metadata.annotations`
 * @param previous what applied at the Service's previous computation by this controller (undefined: never computed)
 * @returns the attributes in force and the reasons; never throws
 */
export function serviceAnnotations(annotations: Readonly<Record<string, string>> | undefined, previous: ServiceAnnotations | undefined): ServiceAnnotations {
  const parsed = parseServiceAttributes(annotations);
  if (parsed.errors.length === 0 && Object.keys(parsed.attributes).length === 0) return NO_ANNOTATIONS;
  const attributes: { -readonly [K in keyof ServiceAttributes]: ServiceAttributes[K] } = { ...parsed.attributes };
  const unknown: ServiceAttributeName[] = [];
  for (const name of parsed.invalid) {
    // A bad value: keep the last good one, when this controller knows one ("none" is a good value too).
    if (previous === undefined || previous.unknown.includes(name)) {
      unknown.push(name);
      continue;
    }
    const last = previous.attributes[name];
    if (last !== undefined) Object.assign(attributes, { [name]: last });
  }
  const notes: Reason[] = [];
  for (const e of parsed.errors) {
    const name = attributeOfAnnotation(e.annotation);
    const text = formatAnnotationErrors([e]);
    if (name !== undefined && unknown.includes(name)) {
      notes.push({ code: ReasonCode.InvalidAnnotation, message: `${text}; no good value of it was seen for this Service since Herald started, so it is announced without it (the advertisement's ${ATTRIBUTE_TEXT[name]})` });
    } else if (name !== undefined && parsed.invalid.includes(name)) {
      notes.push({ code: ReasonCode.InvalidAnnotation, message: `${text}; still announced with the last good value (${describeValue(name, attributes)})` });
    } else {
      notes.push({ code: ReasonCode.InvalidAnnotation, message: text });
    }
  }
  return {
    attributes,
    unknown: ATTRIBUTE_NAMES.filter((n) => unknown.includes(n)),
    errors: parsed.errors,
    notes,
  };
}

// ---------------------------------------------------------------------------------------------
// One (VIP, advertisement)
// ---------------------------------------------------------------------------------------------

/** What one advertisement sends for a VIP from this node, when steering applies (the admin API's `attributes`). */
export interface VipRouteAttributes {
  advertisement: string;
  prefix: string;
  /** False when the rendezvous choice picked other nodes. */
  announced: boolean;
  med?: number;
  /** Extra copies of the local AS toward eBGP peers. */
  asPathPrepend?: number;
  /** Link bandwidth, bytes per second (weighting: endpoints). */
  linkBandwidth?: number;
  /** Usable endpoints of the VIP's family: on this node and in the cluster. */
  endpoints?: { local: number; total: number };
  locality?: 'preferred' | 'fallback';
  /** The rendezvous choice (maxNodesPerVip): the bound, how many nodes were eligible, the chosen ones by rank. */
  choice?: { maxNodes: number; eligible: number; nodes: string[] };
  communities?: string[];
  largeCommunities?: string[];
}

/** Everything `steer` reads about the VIP, computed once per VIP by `decideService`. */
export interface SteeringContext {
  /** "ns/name". */
  readonly service: string;
  /** The VIP's canonical address text (what the rendezvous hash reads). */
  readonly address: string;
  readonly family: IpFamily;
  /** The traffic policy governing the VIP is Local. */
  readonly local: boolean;
  readonly counts: EndpointCounts;
  readonly node: NodeState;
  readonly cluster: ClusterNodes;
  /** Nodes holding a usable endpoint of the VIP's family (computed on first use). */
  readonly endpointNodes: () => ReadonlySet<string>;
  readonly annotations: ServiceAnnotations;
  /** This speaker's AS (the link bandwidth community's Global Administrator). */
  readonly localAs: number;
  /** This node's previous computation announced the VIP's prefix through this advertisement (kept while the node set is unknown). */
  readonly announcedBefore?: (prefix: string, advertisement: string) => boolean;
}

/** The outcome of {@link steer}. */
export interface Steered {
  /** False: the rendezvous choice picked other nodes (the contribution must not be announced). */
  readonly chosen: boolean;
  /** Reasons to add to the VIP's chain (positive ones when chosen, NotChosen otherwise). */
  readonly reasons: readonly Reason[];
  /** The view entry, undefined when no steering applies to this (VIP, advertisement). */
  readonly attributes: VipRouteAttributes | undefined;
}

const NOT_STEERED: Steered = Object.freeze({ chosen: true, reasons: [], attributes: undefined });


/** The nodes that may announce the VIP through `ad`, ranked: the rendezvous choice of at most `ad.maxNodesPerVip`. */
function choose(ad: Advertisement, s: SteeringContext, preferLocal: boolean): { eligible: number; nodes: string[] } {
  const max = ad.maxNodesPerVip as number;
  const holders = s.local || preferLocal ? s.endpointNodes() : undefined;
  const first: string[] = [];
  const rest: string[] = [];
  const consider = (name: string, labels: Readonly<Record<string, string>>): void => {
    if (!matchesSelectors(ad.nodeSelector, ad.nodeSelectors, labels)) return;
    if (holders === undefined || holders.has(name)) first.push(name);
    else if (!s.local) rest.push(name);
  };
  for (const [name, labels] of s.cluster.eligible) consider(name, labels);
  // This node passed every rule; it is in the set whatever the cluster view says (it is when both read one snapshot).
  if (!s.cluster.eligible.has(s.node.name)) consider(s.node.name, s.node.labels);
  const nodes = chooseNodes(s.address, first, max);
  if (nodes.length < max && rest.length > 0) nodes.push(...chooseNodes(s.address, rest, max - nodes.length));
  return { eligible: first.length + rest.length, nodes };
}

/**
 * Applies the steering of `ad` to the route piece `c` of one VIP (mutates `c`, a fresh object of this VIP).
 * @param admitted the Service's annotation attributes `ad` accepts (admission.ts `admitAttributes`): kept apart from
 *   the advertisement's in `c.fromService` (route-merge.ts sends them only when every piece of the prefix agrees)
 * @returns whether this node announces it, the reasons, and the view entry. Never throws for valid advertisements.
 */
export function steer(c: RouteContribution, ad: Advertisement, s: SteeringContext, admitted: ServiceAttributes = NO_ANNOTATIONS.attributes): Steered {
  const annotated = admitted.communities !== undefined || admitted.largeCommunities !== undefined || admitted.med !== undefined || admitted.asPathPrepend !== undefined;
  const locality = !s.local && ad.locality?.preferLocal === true ? ad.locality : undefined;
  // locality under the Local policy changes nothing: every node announcing the VIP has a local endpoint.
  if (ad.maxNodesPerVip === undefined && ad.weighting === undefined && locality === undefined && !annotated) return NOT_STEERED;
  const reasons: Reason[] = [];
  const view: VipRouteAttributes = { advertisement: ad.name, prefix: c.prefix, announced: true };
  if (ad.maxNodesPerVip !== undefined) {
    // Fail closed: a choice from an unfinished set or without a label the selector reads could differ from the other
    // nodes' (two nodes both announcing, or none).
    const published = s.cluster.published;
    const missing = published === undefined ? [] : selectorKeys(ad).filter((k) => !published.labelKeys.has(k));
    const unknown = published?.unknown ?? (missing.length > 0 ? `the published node set does not carry label(s) ${missing.join(', ')} that advertisement ${ad.name}'s nodeSelector reads (the status leader publishes them once it runs this configuration)` : undefined);
    if (unknown !== undefined) {
      const why = `maxNodesPerVip ${ad.maxNodesPerVip} of advertisement ${ad.name} cannot be decided: ${unknown}`;
      // Fail closed without moving traffic: never newly announced, and what this node announced stays (a bound set
      // on a live advertisement, a controller restarting) until the set can be read.
      if (s.announcedBefore?.(c.prefix, ad.name) === true) return { chosen: true, reasons: [{ code: ReasonCode.NodeSetUnknown, message: `${why}; kept, as this node announced it already` }], attributes: view };
      view.announced = false;
      return { chosen: false, reasons: [{ code: ReasonCode.NodeSetUnknown, message: `${why}; not announced` }], attributes: view };
    }
    const choice = choose(ad, s, locality !== undefined);
    view.choice = { maxNodes: ad.maxNodesPerVip, eligible: choice.eligible, nodes: choice.nodes };
    const of = `maxNodesPerVip ${ad.maxNodesPerVip} of ${choice.eligible} eligible node(s), advertisement ${ad.name}`;
    if (!choice.nodes.includes(s.node.name)) {
      view.announced = false;
      return {
        chosen: false,
        reasons: [{ code: ReasonCode.NotChosen, message: `not among the ${choice.nodes.length} node(s) chosen for this VIP (${of}: ${choice.nodes.join(', ')})` }],
        attributes: view,
      };
    }
    reasons.push({ code: ReasonCode.Chosen, message: `among the ${choice.nodes.length} node(s) chosen for this VIP (${of}: ${choice.nodes.join(', ')})` });
  }
  // The Service's attributes as they go out with this piece: MED and prepend replace the advertisement's.
  const own: { -readonly [K in keyof ServiceAttributes]: ServiceAttributes[K] } | undefined = annotated ? { ...admitted } : undefined;
  if (ad.weighting === 'endpoints') {
    if (s.local) {
      const per = ad.bandwidthPerEndpoint ?? DEFAULT_BANDWIDTH_PER_ENDPOINT;
      const bw = endpointBandwidth(s.counts.local, per);
      c.linkBandwidth = { asn: s.localAs, bytesPerSecond: bw.bytesPerSecond, vip: `${s.service} ${s.address}` };
      view.linkBandwidth = bw.bytesPerSecond;
      view.endpoints = { local: s.counts.local, total: s.counts.total };
      reasons.push({
        code: ReasonCode.Weighted,
        message: `weight ${s.counts.local} of ${s.counts.total} endpoints: link bandwidth ${bw.bytesPerSecond} bytes/s (${s.counts.local} × ${per}${bw.clamped ? ', clamped to the largest float32' : ''}), advertisement ${ad.name}`,
      });
    } else {
      reasons.push({ code: ReasonCode.Unweighted, message: `no link bandwidth (advertisement ${ad.name} weighs by endpoints): the traffic policy is Cluster, so every node spreads its traffic over all ${s.counts.total} endpoints` });
    }
  }
  if (locality !== undefined) {
    view.endpoints = { local: s.counts.local, total: s.counts.total };
    if (s.counts.local > 0) {
      view.locality = 'preferred';
      if (locality.med !== undefined) c.med = c.med ?? 0;
      const med = own?.med ?? c.med;
      reasons.push({ code: ReasonCode.LocalityPreferred, message: `preferred: ${s.counts.local} ready local endpoint(s)${med !== undefined ? ` (MED ${med})` : ''}, advertisement ${ad.name}` });
    } else {
      view.locality = 'fallback';
      if (locality.med !== undefined) {
        c.med = Math.min(MAX_MED, (c.med ?? 0) + locality.med);
        if (own?.med !== undefined) own.med = Math.min(MAX_MED, own.med + locality.med);
      }
      if (locality.prependOthers !== undefined) {
        c.asPathPrepend = (c.asPathPrepend ?? 0) + locality.prependOthers;
        if (own?.asPathPrepend !== undefined) own.asPathPrepend += locality.prependOthers;
      }
      const med = own?.med ?? c.med;
      const how = [med !== undefined ? `MED ${med}` : '', locality.prependOthers !== undefined ? `AS path prepended ${own?.asPathPrepend ?? c.asPathPrepend} time(s) toward eBGP peers` : ''].filter((x) => x !== '').join(', ');
      reasons.push({ code: ReasonCode.LocalityFallback, message: `fallback: no ready local endpoint on node ${s.node.name} (${how}), so routers prefer the nodes with one; advertisement ${ad.name}` });
    }
  }
  if (own !== undefined) c.fromService = own;
  const med = own?.med ?? c.med;
  const prepend = own?.asPathPrepend ?? c.asPathPrepend;
  const communities = [...c.communities, ...(own?.communities ?? [])];
  const large = [...c.largeCommunities, ...(own?.largeCommunities ?? [])];
  if (med !== undefined) view.med = med;
  if (prepend !== undefined && prepend > 0) view.asPathPrepend = prepend;
  if (communities.length > 0) view.communities = communities;
  if (large.length > 0) view.largeCommunities = large;
  return { chosen: true, reasons, attributes: view };
}
