/**
 * PURE: the `status` of Herald's configuration objects (BGPPeer, BGPAdvertisement, IPAddressPool,
 * BGPNodeConfigOverride), as the elected status writer puts it (object-status-writer.ts; docs/decisions.md "Status").
 *
 * Two conditions each (metav1.Condition, Kubernetes API conventions: a CamelCase `reason`, a human `message`,
 * `observedGeneration`, and a `lastTransitionTime` that moves only when `status` changes):
 * - `Valid`: the verdict of the merge every node makes (src/crd/merge.ts), so the message is the one a node
 *   logs: each problem as "spec.field: what is wrong". False means every node ignores the object.
 * - `InUse`, counted from the nodes' BGPNodeStatus objects (node-digest.ts), the Nodes and Herald's pods:
 *   - BGPPeer: on how many of the nodes it selects its session is Established. A node counts when it runs Herald
 *     (it has a BGPNodeStatus), still exists as a Node, and its labels match the peer's `nodeSelectors`; it counts
 *     as Established only while its Herald pod is Ready (a status is written only when it changes, so its age says
 *     nothing: the pod's Ready condition says whether the node's Herald runs).
 *   - BGPAdvertisement: from how many nodes VIPs are announced through it, and the most one node announces.
 *   - IPAddressPool: how many of its addresses are assigned to Services (src/ipam/usage.ts, the allocator's rule).
 *   - BGPNodeConfigOverride: whether the node it is named after runs with it.
 *
 * An object the merge has not judged yet (just created) gets no status until it has.
 */
import { isDeepStrictEqual } from 'node:util';
import type { ConfigObjects, MergedConfig, ObjectVerdict } from '../crd/merge.ts';
import type { Condition, ConfigKind, HeraldObject } from '../k8s/herald-kinds.ts';
import { CONFIG_KINDS } from '../k8s/herald-kinds.ts';
import { matchesSelectors } from '../k8s/selector.ts';
import type { Node } from '../k8s/types.ts';
import type { IpFamily } from '../net/address.ts';
import type { NodeDigest } from './node-digest.ts';

/**
 * One pool's usage for one family it has addresses of, as the allocator counts it (src/ipam/usage.ts `poolUsage`):
 * counts of addresses (IPv6 pools may exceed 2^53: rounded).
 */
export interface PoolUsage {
  readonly pool: string;
  readonly family: IpFamily;
  readonly allocated: number;
  readonly available: number;
}

/** The status the writer puts on one object: its conditions and its kind's counts (src/crd/status.ts). */
export interface ObjectStatus {
  conditions: Condition[];
  nodes?: number;
  establishedNodes?: number;
  announcedVIPs?: number;
  assignedIPv4?: number;
  assignedIPv6?: number;
}

/** The status of one object, by kind and name. */
export interface ObjectStatusUpdate {
  readonly kind: ConfigKind;
  readonly name: string;
  readonly status: ObjectStatus;
}

/** What {@link objectStatuses} reads. */
export interface ConditionInputs {
  /** The objects as read now (their `status` gives the conditions' previous transition times). */
  readonly objects: ConfigObjects;
  /** The writer's own merge of the same objects: verdicts, and the accepted peers' `nodeSelectors`. */
  readonly merged: MergedConfig;
  /** Every Node (their labels select peers; a deleted Node's BGPNodeStatus is not counted). */
  readonly nodes: Iterable<Node>;
  /** Every node's BGPNodeStatus digest, by node name. */
  readonly statuses: ReadonlyMap<string, NodeDigest>;
  /** Pool usage (src/ipam/usage.ts `poolUsage`) of the pools in force. */
  readonly poolUsage: readonly PoolUsage[];
  /** The nodes whose Herald pod is Ready (its status is current). */
  readonly readyNodes: ReadonlySet<string>;
  /** Now, ms since the epoch. */
  readonly nowMs: number;
}

/** Most nodes one message names (the rest counted). */
const NAMED_NODES = 5;

/** metav1.Time text (RFC 3339, seconds). */
function timeText(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');
}

/** `1 thing` / `n things`. */
function count(n: number, thing: string, things = `${thing}s`): string {
  return `${n} ${n === 1 ? thing : things}`;
}

/** "a, b, c and 2 more". */
function nameList(names: readonly string[]): string {
  const shown = names.slice(0, NAMED_NODES).join(', ');
  return names.length > NAMED_NODES ? `${shown} and ${names.length - NAMED_NODES} more` : shown;
}

type Judged = Omit<Condition, 'lastTransitionTime' | 'observedGeneration'>;

/**
 * The condition `c` with `observedGeneration` and a `lastTransitionTime` kept from the object's previous condition
 * of that type when its status is the same, else `nowMs`.
 */
function stamped(c: Judged, previous: readonly Condition[] | undefined, generation: number | undefined, nowMs: number): Condition {
  const before = previous?.find((p) => p.type === c.type);
  const since = before !== undefined && before.status === c.status && typeof before.lastTransitionTime === 'string' ? before.lastTransitionTime : timeText(nowMs);
  return { type: c.type, status: c.status, ...(generation !== undefined ? { observedGeneration: generation } : {}), lastTransitionTime: since, reason: c.reason, message: c.message };
}

function validity(v: ObjectVerdict): Judged {
  if (v.issues.length === 0) return { type: 'Valid', status: 'True', reason: 'Valid', message: "Passed Herald's checks; every node merges it into its configuration." };
  const problems = v.issues.map((i) => `${i.path}: ${i.message}`).join('; ');
  return { type: 'Valid', status: 'False', reason: 'Invalid', message: `${problems}. Every node ignores this ${v.kind} until it is fixed (kubectl edit, or apply it again).` };
}

const INVALID_IN_USE: Judged = { type: 'InUse', status: 'False', reason: 'Invalid', message: 'Not in use: the object is invalid (see the Valid condition).' };

/** The nodes that run Herald and still exist (those with a BGPNodeStatus and a Node), by name in name order. */
function heraldNodes(i: ConditionInputs): Map<string, { labels: Record<string, string>; digest: NodeDigest }> {
  const found: [string, { labels: Record<string, string>; digest: NodeDigest }][] = [];
  for (const n of i.nodes) {
    const name = n.metadata?.name;
    const digest = name !== undefined ? i.statuses.get(name) : undefined;
    if (name !== undefined && digest !== undefined) found.push([name, { labels: n.metadata?.labels ?? {}, digest }]);
  }
  return new Map(found.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

function peerStatus(name: string, i: ConditionInputs, nodes: ReturnType<typeof heraldNodes>, fresh: (d: NodeDigest) => boolean): { inUse: Judged; nodes: number; establishedNodes: number } {
  const peer = i.merged.origins.get(name) === 'BGPPeer' ? i.merged.config.peers.find((p) => p.name === name) : undefined;
  const selected: string[] = [];
  const established: string[] = [];
  const others: string[] = [];
  for (const [node, { labels, digest }] of nodes) {
    let selects: boolean;
    try {
      selects = peer !== undefined && matchesSelectors(undefined, peer.nodeSelectors, labels);
    } catch {
      selects = false; // a selector the schema let through but the matcher cannot read: no node runs the peer
    }
    if (!selects) continue;
    selected.push(node);
    const session = digest.sessions.find((s) => s.peer === name && s.source === 'BGPPeer');
    const problem = digest.problems.find((p) => p.startsWith(`${name}: `));
    if (!fresh(digest)) others.push(`${node} (its Herald pod is not Ready)`);
    else if (session?.state === 'Established') established.push(node);
    else if (problem !== undefined) others.push(`${node} (${problem.slice(name.length + 2)})`);
    else others.push(session !== undefined ? node : `${node} (no session yet)`); // a session's state changes by the second: not named
  }
  const counts = { nodes: selected.length, establishedNodes: established.length };
  if (selected.length === 0) {
    const why = nodes.size === 0 ? 'no node has written a BGPNodeStatus yet' : peer?.nodeSelectors?.length ? 'no node running Herald matches spec.nodeSelectors' : 'no node runs it';
    return { inUse: { type: 'InUse', status: 'False', reason: 'NoSelectedNodes', message: `Selects no node: ${why}.` }, ...counts };
  }
  const tail = others.length > 0 ? `; not Established: ${nameList(others)}` : '';
  const text = `Established on ${established.length} of ${count(selected.length, 'selected node')}${tail}.`;
  return { inUse: established.length > 0 ? { type: 'InUse', status: 'True', reason: 'Established', message: text } : { type: 'InUse', status: 'False', reason: 'NotEstablished', message: text }, ...counts };
}

function advertisementStatus(name: string, digests: readonly NodeDigest[]): { inUse: Judged; nodes: number; announcedVIPs: number } {
  let from = 0;
  let most = 0;
  let unlisted = false;
  for (const d of digests) {
    const n = d.announcedBy.get(name) ?? 0;
    unlisted ||= d.advertisementsOmitted;
    if (n === 0) continue;
    from++;
    most = Math.max(most, n);
  }
  const counts = { nodes: from, announcedVIPs: most };
  if (from > 0) {
    return { inUse: { type: 'InUse', status: 'True', reason: 'Announced', message: `VIPs announced through it from ${count(from, 'node')} (at most ${most} by one node).` }, ...counts };
  }
  const maybe = unlisted ? ' (a node that announces through more advertisements than its status lists may)' : '';
  return { inUse: { type: 'InUse', status: 'False', reason: 'NotAnnounced', message: `No node announces a VIP through it${maybe}: \`herald services --all-nodes\` gives each node's reason (check spec.addressKinds and spec.serviceSelectors against the Services).` }, ...counts };
}

function poolStatus(name: string, usage: readonly PoolUsage[]): { inUse: Judged; assignedIPv4: number; assignedIPv6: number } {
  const of = usage.filter((u) => u.pool === name);
  const v4 = of.find((u) => u.family === 'IPv4');
  const v6 = of.find((u) => u.family === 'IPv6');
  const counts = { assignedIPv4: v4?.allocated ?? 0, assignedIPv6: v6?.allocated ?? 0 };
  const families = of.map((u) => `${u.family} ${u.allocated} assigned, ${u.available} available`).join('; ');
  const total = counts.assignedIPv4 + counts.assignedIPv6;
  if (total > 0) return { inUse: { type: 'InUse', status: 'True', reason: 'Allocated', message: `${count(total, 'address', 'addresses')} assigned to Services (${families}).` }, ...counts };
  return { inUse: { type: 'InUse', status: 'False', reason: 'NoneAllocated', message: `No address assigned to a Service yet${families !== '' ? ` (${families})` : ''}.` }, ...counts };
}

function overrideStatus(name: string, nodes: ReturnType<typeof heraldNodes>, fresh: (d: NodeDigest) => boolean): Judged {
  const n = nodes.get(name);
  if (n === undefined) return { type: 'InUse', status: 'False', reason: 'NoSuchNode', message: `No node named ${name} runs Herald: a BGPNodeConfigOverride applies to the node it is named after.` };
  if (!fresh(n.digest)) return { type: 'InUse', status: 'Unknown', reason: 'NodeNotReady', message: `The Herald pod of node ${name} is not Ready: whether it runs with the override is not known.` };
  if (n.digest.override === name) return { type: 'InUse', status: 'True', reason: 'InForce', message: `In force on node ${name}.` };
  return { type: 'InUse', status: 'False', reason: 'NotApplied', message: `Node ${name} does not run with it yet.` };
}

/**
 * The status of every object that has a verdict in `i.merged` (see the module comment), in kind then name order.
 * Counts are 0 for an invalid object.
 */
export function objectStatuses(i: ConditionInputs): ObjectStatusUpdate[] {
  const fresh = (d: NodeDigest) => i.readyNodes.has(d.node);
  const nodes = heraldNodes(i);
  const digests = [...nodes.values()].map((n) => n.digest).filter(fresh);
  const verdicts = new Map(i.merged.verdicts.map((v) => [`${v.kind}/${v.name}`, v]));
  const out: ObjectStatusUpdate[] = [];
  for (const kind of CONFIG_KINDS) {
    for (const obj of [...i.objects[kind]].sort((a, b) => ((a.metadata?.name ?? '') < (b.metadata?.name ?? '') ? -1 : 1))) {
      const name = obj.metadata?.name ?? '';
      const v = verdicts.get(`${kind}/${name}`);
      if (v === undefined) continue;
      const valid = v.issues.length === 0;
      let inUse: Judged = INVALID_IN_USE;
      let counts: Omit<ObjectStatus, 'conditions'> = {};
      if (kind === 'BGPPeer') {
        const p = valid ? peerStatus(name, i, nodes, fresh) : undefined;
        counts = { nodes: p?.nodes ?? 0, establishedNodes: p?.establishedNodes ?? 0 };
        if (p) inUse = p.inUse;
      } else if (kind === 'BGPAdvertisement') {
        const a = valid ? advertisementStatus(name, digests) : undefined;
        counts = { nodes: a?.nodes ?? 0, announcedVIPs: a?.announcedVIPs ?? 0 };
        if (a) inUse = a.inUse;
      } else if (kind === 'IPAddressPool') {
        const p = valid ? poolStatus(name, i.poolUsage) : undefined;
        counts = { assignedIPv4: p?.assignedIPv4 ?? 0, assignedIPv6: p?.assignedIPv6 ?? 0 };
        if (p) inUse = p.inUse;
      } else if (valid) {
        inUse = overrideStatus(name, nodes, fresh);
      }
      const previous = obj.status?.conditions;
      const conditions = [validity(v), inUse].map((c) => stamped(c, previous, v.generation, i.nowMs));
      out.push({ kind, name, status: { conditions, ...counts } });
    }
  }
  return out;
}

/** The fields of `status` the writer owns, as they stand on `obj` (to compare before writing). */
function ownedFields(obj: HeraldObject | undefined, like: ObjectStatus): Record<string, unknown> {
  const s: Record<string, unknown> = obj?.status ?? {};
  return Object.fromEntries(Object.keys(like).flatMap((k) => (s[k] !== undefined ? [[k, s[k]]] : [])));
}

/** True when `obj` already carries `status` (its conditions and counts; key order aside). */
export function hasStatus(obj: HeraldObject | undefined, status: ObjectStatus): boolean {
  return isDeepStrictEqual(ownedFields(obj, status), JSON.parse(JSON.stringify(status)));
}
