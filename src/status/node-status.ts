/**
 * This node's BGPNodeStatus (herald.io/v1alpha1, src/crd/status.ts), named after the node and written by its Herald
 * only: a summary an operator reads at a glance (its sessions, counts of VIPs announced and not announced by reason
 * code, VIPs announced per advertisement, the last change), under {@link MAX_NODE_STATUS_BYTES} whatever the cluster's
 * size, so that `kubectl get bgpnodestatuses` shows every node at once and the status writer counts from it. Per-VIP
 * detail stays on the node: its admin API and metrics listener (`herald services`, `--all-nodes` through the
 * apiserver's pod proxy, src/cli/cluster.ts).
 *
 * - {@link nodeStatusOf} (PURE) builds the summary from the daemon's views.
 * - {@link NodeStatusWriter} writes it only when it changed, at most once per `minIntervalMs` (30 s) plus a random
 *   jitter, so that a cluster-wide burst spreads its writes; an unchanged status is never written again (whether the
 *   node runs Herald is its pod's Ready condition, not a heartbeat here). A failed write is retried after the interval.
 * - {@link apiNodeStatusSink} writes through the apiserver: a merge patch of the `status` subresource
 *   (`patch bgpnodestatuses/status`) naming every field (an absent one as null, so nothing stale stays), creating the
 *   object first when it does not exist (`create bgpnodestatuses`), owned by its Node, so that Kubernetes' garbage
 *   collector deletes it with the Node.
 */
import type { PeerView, ServiceView } from '../admin/view.ts';
import type { PeerOrigin } from '../crd/merge.ts';
import type { AdvertisementCount, NodeStatus, ReasonCount, SessionStatus } from '../crd/status.ts';
import { MAX_NODE_STATUS_BYTES, MAX_STATUS_ADVERTISEMENTS, MAX_STATUS_PROBLEMS, MAX_STATUS_SESSIONS, MAX_STATUS_TEXT, nodeStatusSchema } from '../crd/status.ts';
import type { KubeClient } from '../k8s/client.ts';
import { apiErrorCode } from '../k8s/forbidden.ts';
import type { ForbiddenCalls } from '../k8s/forbidden.ts';
import { HERALD_API_VERSION, heraldCollectionPath } from '../k8s/herald-kinds.ts';

/** What {@link nodeStatusOf} reads. */
export interface NodeStatusInput {
  readonly peers: readonly PeerView[];
  readonly services: readonly ServiceView[];
  /** Where each peer is configured (src/crd/merge.ts). */
  readonly origins: ReadonlyMap<string, PeerOrigin>;
  readonly myASN: number;
  readonly routerID: string;
  readonly override?: string;
  /** Peers this node cannot run, "peer: why". */
  readonly problems: readonly string[];
  readonly heraldVersion: string;
  /**
   * True when a VIP not announced counts in the summary: src/controller/reasons.ts `countsInNodeStatus` (this node
   * handles it, or refused it as tenant input). Another (no advertisement selects it, another implementation's) is not.
   */
  readonly handles: (vip: { readonly announced: boolean; readonly reasons: readonly { code: string }[] }) => boolean;
}

/** `text` cut to {@link MAX_STATUS_TEXT} characters, with "…" when cut. */
function cut(text: string): string {
  return text.length > MAX_STATUS_TEXT ? `${text.slice(0, MAX_STATUS_TEXT)}…` : text;
}

/** One line of a session's last error ("Cease / Administrative Shutdown: maintenance"). */
function errorText(p: PeerView): string | undefined {
  const e = p.lastError;
  if (!e) return undefined;
  const what = e.description ?? e.kind;
  return cut(e.message !== undefined ? `${what}: ${e.message}` : what);
}

/** Reason codes that say why a VIP is announced, not why it is not. */
const POSITIVE = new Set(['Advertised', 'LocalReadyEndpoint', 'ReadyEndpoint', 'ServiceAttributes']);

const byName = <T>(key: (x: T) => string) => (a: T, b: T) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0);

/** Serialized size of a status, bytes. */
export function statusBytes(s: NodeStatus): number {
  return Buffer.byteLength(JSON.stringify(s));
}

/**
 * This node's summary (without `lastChange`): sessions by peer name (at most {@link MAX_STATUS_SESSIONS}); VIPs this
 * node handles, announced and not, the latter counted by reason code (most first); VIPs announced per advertisement.
 * Always under {@link MAX_NODE_STATUS_BYTES} (bytes of its JSON): past it, the longest lists give way, each counted.
 */
export function nodeStatusOf(i: NodeStatusInput): NodeStatus {
  const all: SessionStatus[] = [...i.peers].sort(byName((p) => p.name)).map((p) => {
    const err = errorText(p);
    return {
      peer: p.name,
      source: i.origins.get(p.name) ?? 'file',
      peerAddress: p.address,
      peerPort: p.port,
      peerASN: p.peerAs,
      myASN: p.localAs,
      state: p.state,
      ...(p.since !== undefined ? { since: p.since } : {}),
      ...(err !== undefined ? { lastError: err } : {}),
      prefixesSent: p.prefixes.sent,
      prefixesReceived: p.prefixes.received,
      ...(p.bfd ? { bfd: p.bfd.state } : {}),
    };
  });
  let announced = 0;
  let notAnnounced = 0;
  const reasons = new Map<string, number>();
  const ads = new Map<string, number>();
  for (const s of i.services) {
    for (const v of s.vips) {
      if (v.announced) {
        announced++;
        for (const a of new Set(v.reasons.flatMap((r) => (r.advertisement !== undefined ? [r.advertisement] : [])))) ads.set(a, (ads.get(a) ?? 0) + 1);
      } else if (i.handles(v)) {
        notAnnounced++;
        for (const code of new Set(v.reasons.map((r) => r.code))) if (!POSITIVE.has(code)) reasons.set(code, (reasons.get(code) ?? 0) + 1);
      }
    }
  }
  const notAnnouncedBy: ReasonCount[] = [...reasons].map(([reason, vips]) => ({ reason, vips })).sort((a, b) => b.vips - a.vips || (a.reason < b.reason ? -1 : 1));
  const perAd: AdvertisementCount[] = [...ads].map(([name, vipsAnnounced]) => ({ name, vipsAnnounced })).sort(byName((a) => a.name));
  const problems = i.problems.map(cut);
  const s: NodeStatus = {
    myASN: i.myASN,
    routerID: i.routerID,
    ...(i.override !== undefined ? { override: i.override } : {}),
    sessions: all.slice(0, MAX_STATUS_SESSIONS),
    sessionsConfigured: all.length,
    sessionsEstablished: all.filter((x) => x.state === 'Established').length,
    ...(all.length > MAX_STATUS_SESSIONS ? { sessionsOmitted: all.length - MAX_STATUS_SESSIONS } : {}),
    ...(problems.length > 0 ? { problems: problems.slice(0, MAX_STATUS_PROBLEMS) } : {}),
    vipsAnnounced: announced,
    vipsNotAnnounced: notAnnounced,
    ...(notAnnouncedBy.length > 0 ? { notAnnounced: notAnnouncedBy } : {}),
    ...(perAd.length > 0 ? { advertisements: perAd.slice(0, MAX_STATUS_ADVERTISEMENTS) } : {}),
    ...(perAd.length > MAX_STATUS_ADVERTISEMENTS ? { advertisementsOmitted: perAd.length - MAX_STATUS_ADVERTISEMENTS } : {}),
    heraldVersion: i.heraldVersion,
  };
  return fit(s);
}

/** Room kept for `lastChange` (`"lastChange":"2026-12-05T13:00:00.000Z",`). */
const LAST_CHANGE_BYTES = 48;

/**
 * `s` under {@link MAX_NODE_STATUS_BYTES} with room for `lastChange`: while over, the problems go, then sessions'
 * last errors, then sessions from the last (counted in `sessionsOmitted`), then advertisements (counted), then the
 * rarest reason codes. Long names of every kind bring it there; the counts stay.
 */
function fit(s: NodeStatus): NodeStatus {
  const budget = MAX_NODE_STATUS_BYTES - LAST_CHANGE_BYTES;
  const out: NodeStatus = { ...s, ...(s.sessions ? { sessions: [...s.sessions] } : {}), ...(s.advertisements ? { advertisements: [...s.advertisements] } : {}), ...(s.notAnnounced ? { notAnnounced: [...s.notAnnounced] } : {}) };
  const steps: Array<() => boolean> = [
    () => (out.problems !== undefined ? (delete out.problems, true) : false),
    () => {
      const k = (out.sessions ?? []).findLastIndex((x) => x.lastError !== undefined);
      if (k < 0) return false;
      const { lastError: _dropped, ...rest } = out.sessions![k]!;
      out.sessions![k] = rest;
      return true;
    },
    () => {
      if ((out.sessions ?? []).length === 0) return false;
      out.sessions!.pop();
      out.sessionsOmitted = (out.sessionsOmitted ?? 0) + 1;
      return true;
    },
    () => {
      if ((out.advertisements ?? []).length === 0) return false;
      out.advertisements!.pop();
      out.advertisementsOmitted = (out.advertisementsOmitted ?? 0) + 1;
      return true;
    },
    () => ((out.notAnnounced ?? []).length > 0 ? (out.notAnnounced!.pop(), true) : false),
  ];
  for (const step of steps) {
    while (statusBytes(out) > budget) if (!step()) break;
  }
  return out;
}

/** Writes one node's status (the whole `status`). */
export type NodeStatusSink = (status: NodeStatus) => Promise<void>;

/**
 * A {@link NodeStatusSink} over the apiserver for node `nodeName` in Herald's `namespace`: a merge patch (RFC 7386) of
 * `PATCH .../bgpnodestatuses/{node}/status`; on 404, `POST .../bgpnodestatuses` then the patch again.
 * The object is created owned by the Node (`ownerReferences`, with the uid `nodeUid()` gives), so that deleting the
 * Node deletes its status (Kubernetes "Owners and Dependents": a namespaced dependent may have a cluster-scoped owner).
 * It is not created while the Node is unknown, so a Herald that outlives its deleted Node leaves nothing behind. A
 * status left from a deleted Node of the same name goes with the old Node; the next write creates it for the new one.
 * @param nodeUid the Node's `metadata.uid` as the source last saw it (undefined: not read, or gone)
 * @throws ApiError (src/k8s/client.ts) when the write fails (403: not granted, tracked by `forbidden`); Error when the
 *   object does not exist and the Node is unknown (retried by the writer)
 */
export function apiNodeStatusSink(kc: KubeClient, namespace: string, nodeName: string, nodeUid: () => string | undefined, forbidden?: ForbiddenCalls): NodeStatusSink {
  const track = <T>(call: string, f: () => Promise<T>) => (forbidden ? forbidden.track(call, f) : f());
  // A list in the status replaces the stored one wholesale (merge patch, RFC 7386); every field is named, an absent
  // one as null, so that nothing of an earlier status stays (nor the per-VIP list of Heralds before 0.2).
  const patch = (status: NodeStatus) =>
    track('patch bgpnodestatuses/status', () => kc.request('PATCH', `${heraldCollectionPath('BGPNodeStatus', namespace)}/${encodeURIComponent(nodeName)}/status`, { body: { status: withNulls(status) }, contentType: 'application/merge-patch+json' }));
  return async (status) => {
    try {
      await patch(status);
    } catch (err) {
      if (apiErrorCode(err) !== 404) throw err;
      const uid = nodeUid();
      if (uid === undefined) throw new Error(`BGPNodeStatus ${nodeName} is created only once Node ${nodeName} is known (it is owned by the Node, and deleted with it); the Node is not in the cache`, { cause: err });
      const ownerReferences = [{ apiVersion: 'v1', kind: 'Node', name: nodeName, uid }];
      const body = { apiVersion: HERALD_API_VERSION, kind: 'BGPNodeStatus', metadata: { name: nodeName, namespace, labels: { 'app.kubernetes.io/name': 'herald' }, ownerReferences }, spec: { nodeName } };
      try {
        await track('create bgpnodestatuses', () => kc.request('POST', heraldCollectionPath('BGPNodeStatus', namespace), { body }));
      } catch (e) {
        if (apiErrorCode(e) !== 409) throw e; // created meanwhile (a restart racing its predecessor): patch it
      }
      await patch(status);
    }
  };
}

/** Fields earlier Heralds wrote and this one does not: removed by the next write. */
const LEGACY_FIELDS = ['vips', 'vipsOmitted', 'lastUpdate'];

/** `status` with every field of the schema (and every legacy one) it lacks set to null: a merge patch that replaces. */
function withNulls(status: NodeStatus): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of [...Object.keys(nodeStatusSchema.shape), ...LEGACY_FIELDS]) out[k] = (status as Record<string, unknown>)[k] ?? null;
  return out;
}

/** Options of {@link NodeStatusWriter}. */
export interface NodeStatusWriterOptions {
  /** The summary now (without `lastChange`). */
  readonly build: () => NodeStatus;
  readonly sink: NodeStatusSink;
  /** Shortest time between two writes, ms (default 30,000). */
  readonly minIntervalMs?: number;
  /** Up to this much is added at random to each wait, ms (default a fifth of `minIntervalMs`). */
  readonly jitterMs?: number;
  readonly now?: () => number;
  readonly random?: () => number;
  readonly onError?: (err: unknown) => void;
}

/** See the module comment. `changed()` after anything the status shows may have changed; `stop()` ends it. */
export class NodeStatusWriter {
  readonly #o: NodeStatusWriterOptions;
  #timer: ReturnType<typeof setTimeout> | undefined;
  /** The summary last written, as JSON ('' before the first write). */
  #lastText = '';
  #lastAtMs = Number.NEGATIVE_INFINITY;
  #writing = false;
  #dirty = false;
  #stopped = false;
  /** Writes done (tests, metrics). */
  writes = 0;

  constructor(o: NodeStatusWriterOptions) {
    this.#o = o;
  }

  changed(): void {
    this.#dirty = true;
    if (this.#timer !== undefined || this.#writing || this.#stopped) return;
    const min = this.#o.minIntervalMs ?? 30_000;
    const jitter = (this.#o.jitterMs ?? min / 5) * (this.#o.random ?? Math.random)();
    const wait = Math.max(0, this.#lastAtMs + min - this.#now()) + jitter;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      void this.#write();
    }, wait);
    this.#timer.unref();
  }

  stop(): void {
    this.#stopped = true;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #now(): number {
    return (this.#o.now ?? Date.now)();
  }

  async #write(): Promise<void> {
    if (this.#stopped || !this.#dirty) return;
    this.#dirty = false;
    const status = this.#o.build();
    const text = JSON.stringify(status);
    if (text === this.#lastText) return; // nothing the status shows changed: nothing is written
    const now = this.#now();
    this.#writing = true;
    this.#lastAtMs = now;
    try {
      await this.#o.sink({ ...status, lastChange: new Date(now).toISOString() });
      this.#lastText = text;
      this.writes++;
    } catch (err) {
      this.#dirty = true; // retried after the interval
      this.#o.onError?.(err);
    } finally {
      this.#writing = false;
    }
    if (this.#dirty) this.changed();
  }
}
