/**
 * What the status leader keeps of each BGPNodeStatus (src/status/node-status.ts writes them, one per node): the few
 * fields the conditions of Herald's objects are counted from (object-conditions.ts): per session the peer, where it is
 * configured and its state; the peers the node cannot run; its override; VIPs announced per advertisement.
 *
 * The reader is lenient: a field of another shape (a newer Herald, a hand-written object) is skipped, never thrown
 * on, so one odd object never stops the conditions of the others.
 */
import type { HeraldObject } from '../k8s/herald-kinds.ts';

/** One session of a node, as its BGPNodeStatus lists it. */
export interface DigestSession {
  readonly peer: string;
  /** `file`, `BGPPeer` or `BGPNodeConfigOverride` (src/crd/status.ts sessionStatusSchema). */
  readonly source: string;
  /** RFC 4271 state name (Established, Active, ...). */
  readonly state: string;
}

/** The digest of one node's BGPNodeStatus. */
export interface NodeDigest {
  /** The node (the object's name). */
  readonly node: string;
  readonly sessions: readonly DigestSession[];
  /** `status.problems`: "peer: why" for peers the node cannot run. */
  readonly problems: readonly string[];
  /** `status.override`: the BGPNodeConfigOverride in force on the node. */
  readonly override?: string;
  /** `status.advertisements`: VIPs announced through each advertisement, by name. */
  readonly announcedBy: ReadonlyMap<string, number>;
  /** `status.advertisementsOmitted > 0`: the node announces through advertisements it does not list. */
  readonly advertisementsOmitted: boolean;
}

const isRecord = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
const text = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const records = (v: unknown): Record<string, unknown>[] => (Array.isArray(v) ? v.filter(isRecord) : []);
const texts = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);

/**
 * The digest of a BGPNodeStatus object (herald.io/v1alpha1, src/crd/status.ts `nodeStatusSchema`).
 * @returns undefined for an object without a name
 */
export function nodeDigestOf(obj: HeraldObject): NodeDigest | undefined {
  const node = obj.metadata?.name;
  if (node === undefined || node === '') return undefined;
  const s: Record<string, unknown> = isRecord(obj.status) ? obj.status : {};
  const sessions: DigestSession[] = [];
  for (const r of records(s['sessions'])) {
    const peer = text(r['peer']);
    if (peer !== undefined) sessions.push({ peer, source: text(r['source']) ?? 'file', state: text(r['state']) ?? '' });
  }
  const announcedBy = new Map<string, number>();
  for (const r of records(s['advertisements'])) {
    const name = text(r['name']);
    const n = r['vipsAnnounced'];
    if (name !== undefined && typeof n === 'number' && n >= 0) announcedBy.set(name, n);
  }
  const override = text(s['override']);
  const omitted = s['advertisementsOmitted'];
  return { node, sessions, problems: texts(s['problems']), ...(override !== undefined ? { override } : {}), announcedBy, advertisementsOmitted: typeof omitted === 'number' && omitted > 0 };
}
