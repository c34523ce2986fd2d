/**
 * What the status leader keeps of each BGPNodeStatus (src/status/node-status.ts writes them, one per node): the few
 * fields the conditions of Herald's objects are counted from (object-conditions.ts), not the whole object. A node's
 * status can list 2000 VIPs; the digest keeps, per VIP, its address, whether it is announced and the advertisements
 * it goes through, and per session the peer, where it is configured and its state.
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

/** One VIP of a node, as its BGPNodeStatus lists it. */
export interface DigestVip {
  readonly address: string;
  readonly announced: boolean;
  readonly advertisements: readonly string[];
}

/** The digest of one node's BGPNodeStatus. */
export interface NodeDigest {
  /** The node (the object's name). */
  readonly node: string;
  /** `status.lastUpdate` in ms since the epoch; undefined when absent or not a time. */
  readonly lastUpdateMs: number | undefined;
  readonly sessions: readonly DigestSession[];
  /** `status.problems`: "peer: why" for peers the node cannot run. */
  readonly problems: readonly string[];
  /** `status.override`: the BGPNodeConfigOverride in force on the node. */
  readonly override?: string;
  readonly vips: readonly DigestVip[];
  /** `status.vipsOmitted`: VIPs the node did not list (beyond 2000). */
  readonly vipsOmitted: number;
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
  const updated = text(s['lastUpdate']);
  const ms = updated !== undefined ? Date.parse(updated) : Number.NaN;
  const sessions: DigestSession[] = [];
  for (const r of records(s['sessions'])) {
    const peer = text(r['peer']);
    if (peer !== undefined) sessions.push({ peer, source: text(r['source']) ?? 'file', state: text(r['state']) ?? '' });
  }
  const vips: DigestVip[] = [];
  for (const r of records(s['vips'])) {
    const address = text(r['address']);
    if (address !== undefined) vips.push({ address, announced: r['announced'] === true, advertisements: texts(r['advertisements']) });
  }
  const override = text(s['override']);
  const omitted = s['vipsOmitted'];
  return {
    node,
    lastUpdateMs: Number.isNaN(ms) ? undefined : ms,
    sessions,
    problems: texts(s['problems']),
    ...(override !== undefined ? { override } : {}),
    vips,
    vipsOmitted: typeof omitted === 'number' && omitted > 0 ? omitted : 0,
  };
}
