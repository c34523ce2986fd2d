/**
 * The published node set (issue 31 item 4; docs/decisions.md "Node watch"): which Nodes are eligible to announce, as
 * one component computes it from every Node and publishes it, so that no Herald on a node watches every Node (whose
 * kubelet heartbeats would reach every node: ~1 GB/s at 5,000 nodes). The rendezvous choice of `maxNodesPerVip`
 * (src/controller/steering.ts) reads it.
 *
 * Wire format: ConfigMaps `herald-node-set-<xx>` in Herald's namespace, labelled `herald.io/node-set`, one per shard
 * that holds a Node; shard `xx` (two hex digits) is FNV-1a 32 of the Node's name modulo {@link NODE_SET_SHARDS}, so a
 * Node's change rewrites one small object (about 1 KiB at 5,000 nodes) and not the whole set. `data`:
 * - `eligible`: JSON object, Node name → its labels, only those whose keys are in `labelKeys`;
 * - `ineligible`: JSON array of the other Nodes' names (listed, so a node can tell "not eligible" from "not seen");
 * - `labelKeys`: JSON array of the label keys carried: the keys the nodeSelectors of the advertisements that bound
 *   fan-out read (a Node's other labels never change the choice, and leaving them out keeps a shard small);
 * - `total` and `seq` (decimal texts), the stamp of the write: how many Nodes the whole set listed when this shard was
 *   written, and the write's sequence (the publisher's clock in ms, above every seq it has seen). A reader holds the
 *   whole set once it lists at least the `total` of the newest shard: a first publish, written shard by shard, is used
 *   only when complete, and a change of one Node (its one shard rewritten, with the new total) stays complete. An
 *   emptied shard is written empty, not deleted, so that its stamp says the Node is gone.
 * A Node's heartbeat changes none of it, so the objects are written only when a Node's eligibility or a carried label
 * changes (the stamp alone never makes a write: {@link sameShard}). The writer is the status leader (src/status/node-set-publisher.ts); readers are the nodes
 * (src/sources/kubernetes.ts). Both use this module alone for the format.
 */
import type { KubeObject } from './types.ts';

/** The label on every shard object (the nodes' watch selects on it). */
export const NODE_SET_LABEL = 'herald.io/node-set';
/** Shard objects are named this plus two hex digits. */
export const NODE_SET_PREFIX = 'herald-node-set-';
/** Number of shards: at 5,000 Nodes about 20 per shard. Fixed: changing it would move every Node. */
export const NODE_SET_SHARDS = 256;
/** Change key of the node set (src/k8s/keys.ts). */
export const NODE_SET_KEY = 'nodeset:';

/** Labels of one Node as published (only the carried keys). */
export type NodeLabels = Readonly<Record<string, string>>;

/** One Node as the publisher sees it. */
export interface NodeSetEntry {
  readonly name: string;
  readonly eligible: boolean;
  /** Every label of the Node (the renderer keeps the carried keys). */
  readonly labels: NodeLabels;
}

/** What a shard object says, parsed. */
export interface NodeSetShard {
  readonly eligible: ReadonlyMap<string, NodeLabels>;
  readonly ineligible: readonly string[];
  readonly labelKeys: readonly string[];
  /** The stamp of its write (absent in a shard written without one: it then says nothing of completeness). */
  readonly stamp?: { readonly total: number; readonly seq: number };
}

/** The union of every shard a node has read. */
export interface PublishedNodeSet {
  /** Eligible Nodes by name, with their carried labels. */
  readonly eligible: ReadonlyMap<string, NodeLabels>;
  /** Every Node listed (eligible or not). */
  readonly listed: ReadonlySet<string>;
  /** Label keys every shard carries (the intersection: a key missing from one shard is not known for all Nodes). */
  readonly labelKeys: ReadonlySet<string>;
  /** Shards that could not be read, "name: why" (their Nodes count as not listed). */
  readonly problems: readonly string[];
  /** The newest shard's `total`: the set is complete once `listed` holds as many (undefined: no stamp read). */
  readonly expected?: number;
}

/** Nothing published (yet). */
export const EMPTY_NODE_SET: PublishedNodeSet = Object.freeze({ eligible: new Map<string, NodeLabels>(), listed: new Set<string>(), labelKeys: new Set<string>(), problems: [] });

/** The shard of a Node: FNV-1a 32 over its name's UTF-16 code units, modulo {@link NODE_SET_SHARDS}. */
export function nodeSetShard(name: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 0x01000193) >>> 0;
  return h % NODE_SET_SHARDS;
}

/** The object name of shard `i` (0 ≤ i < {@link NODE_SET_SHARDS}). */
export function nodeSetObjectName(i: number): string {
  return NODE_SET_PREFIX + i.toString(16).padStart(2, '0');
}

/**
 * The `data` of every non-empty shard, by object name. Deterministic: Nodes and keys sorted, so an unchanged set
 * renders to the same text and is not written again.
 */
export function renderNodeSet(nodes: Iterable<NodeSetEntry>, labelKeys: Iterable<string>): Map<string, Record<string, string>> {
  const keys = [...new Set(labelKeys)].sort();
  const shards = new Map<number, NodeSetEntry[]>();
  for (const n of nodes) {
    const i = nodeSetShard(n.name);
    const list = shards.get(i);
    if (list === undefined) shards.set(i, [n]);
    else list.push(n);
  }
  const out = new Map<string, Record<string, string>>();
  for (const i of [...shards.keys()].sort((a, b) => a - b)) {
    const list = (shards.get(i) ?? []).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const eligible: Record<string, Record<string, string>> = {};
    const ineligible: string[] = [];
    for (const n of list) {
      if (!n.eligible) {
        ineligible.push(n.name);
        continue;
      }
      const labels: Record<string, string> = {};
      for (const k of keys) if (Object.hasOwn(n.labels, k)) labels[k] = n.labels[k] as string;
      eligible[n.name] = labels;
    }
    out.set(nodeSetObjectName(i), { eligible: JSON.stringify(eligible), ineligible: JSON.stringify(ineligible), labelKeys: JSON.stringify(keys) });
  }
  return out;
}

/** The `data` of a shard that lists no Node (one emptied while the set is published). */
export function emptyShard(labelKeys: Iterable<string>): Record<string, string> {
  return { eligible: '{}', ineligible: '[]', labelKeys: JSON.stringify([...new Set(labelKeys)].sort()) };
}

/** `data` with the stamp of its write (see the module comment). */
export function stampShard(data: Record<string, string>, total: number, seq: number): Record<string, string> {
  return { ...data, total: String(total), seq: String(seq) };
}

/** True when two shards' `data` list the same (their stamps aside): an unchanged shard is not written again. */
export function sameShard(a: Record<string, string>, b: Record<string, string>): boolean {
  return a['eligible'] === b['eligible'] && a['ineligible'] === b['ineligible'] && a['labelKeys'] === b['labelKeys'];
}

/** The `seq` of a shard's `data` (0 without one). */
export function shardSeq(data: Record<string, string>): number {
  const n = Number(data['seq']);
  return Number.isSafeInteger(n) && n > 0 ? n : 0;
}

const isStringRecord = (v: unknown): v is Record<string, string> => v !== null && typeof v === 'object' && !Array.isArray(v) && Object.values(v).every((x) => typeof x === 'string');
const isStringArray = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === 'string');

function parseJson(text: unknown, what: string): unknown {
  if (typeof text !== 'string') throw new Error(`data.${what} is missing`);
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new Error(`data.${what} is not JSON (${(err as Error).message})`, { cause: err });
  }
}

/**
 * A shard object's content.
 * @throws Error naming the field when `data` is not as {@link renderNodeSet} writes it
 */
export function parseNodeSetShard(obj: KubeObject & { data?: Record<string, unknown> }): NodeSetShard {
  const data = obj.data ?? {};
  const eligible = parseJson(data['eligible'], 'eligible');
  const ineligible = parseJson(data['ineligible'], 'ineligible');
  const labelKeys = parseJson(data['labelKeys'], 'labelKeys');
  if (eligible === null || typeof eligible !== 'object' || Array.isArray(eligible) || !Object.values(eligible).every(isStringRecord)) throw new Error('data.eligible is not an object of Node name → labels');
  if (!isStringArray(ineligible)) throw new Error('data.ineligible is not a list of Node names');
  if (!isStringArray(labelKeys)) throw new Error('data.labelKeys is not a list of label keys');
  const total = data['total'];
  const seq = data['seq'];
  let stamp: NodeSetShard['stamp'];
  if (total !== undefined || seq !== undefined) {
    const t = Number(total);
    const q = Number(seq);
    if (typeof total !== 'string' || !Number.isSafeInteger(t) || t < 0) throw new Error('data.total is not a count of Nodes');
    if (typeof seq !== 'string' || !Number.isSafeInteger(q) || q < 0) throw new Error('data.seq is not a sequence number');
    stamp = { total: t, seq: q };
  }
  return { eligible: new Map(Object.entries(eligible as Record<string, Record<string, string>>)), ineligible, labelKeys, ...(stamp ? { stamp } : {}) };
}

/** The union of the shards read, by object name (a `problem`: the object could not be parsed, and why). */
export function mergeNodeSet(shards: ReadonlyMap<string, NodeSetShard | { readonly problem: string }>): PublishedNodeSet {
  const eligible = new Map<string, NodeLabels>();
  const listed = new Set<string>();
  const problems: string[] = [];
  let labelKeys: Set<string> | undefined;
  let newest: { total: number; seq: number } | undefined;
  for (const [name, s] of [...shards].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if ('problem' in s) {
      problems.push(`${name}: ${s.problem}`);
      continue;
    }
    for (const [node, labels] of s.eligible) {
      eligible.set(node, labels);
      listed.add(node);
    }
    for (const node of s.ineligible) listed.add(node);
    if (s.stamp !== undefined && (newest === undefined || s.stamp.seq > newest.seq)) newest = s.stamp;
    labelKeys = labelKeys === undefined ? new Set(s.labelKeys) : new Set(s.labelKeys.filter((k) => labelKeys?.has(k)));
  }
  return { eligible, listed, labelKeys: labelKeys ?? new Set(), problems, ...(newest !== undefined ? { expected: newest.total } : {}) };
}
