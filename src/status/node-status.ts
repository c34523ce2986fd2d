/**
 * This node's BGPNodeStatus (herald.io/v1alpha1, src/crd/status.ts), named after the node and written by its
 * Herald only: its sessions as the speaker sees them and its Service VIPs with their reason codes, so that
 * `kubectl get bgpnodestatuses` and `herald peers --all-nodes` show every node at once.
 *
 * - {@link nodeStatusOf} (PURE) builds the status from the daemon's views.
 * - {@link NodeStatusWriter} writes it at a bounded rate: at most once per `minIntervalMs` however often the daemon
 *   changes, a change waits at most that long, an unchanged status is written again only every `refreshMs` (its
 *   `lastUpdate` says the node is alive). A failed write is retried at the next period; nothing else waits on it.
 * - {@link apiNodeStatusSink} writes through the apiserver: a merge patch of the `status` subresource
 *   (`patch bgpnodestatuses/status`), creating the object first when it does not exist (`create bgpnodestatuses`),
 *   owned by its Node, so that Kubernetes' garbage collector deletes it with the Node.
 */
import type { PeerView, ServiceView } from '../admin/view.ts';
import type { PeerOrigin } from '../crd/merge.ts';
import type { NodeStatus, SessionStatus, VipStatus } from '../crd/status.ts';
import { MAX_STATUS_VIPS } from '../crd/status.ts';
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
}

/** One line of a session's last error ("Cease / Administrative Shutdown: maintenance"). */
function errorText(p: PeerView): string | undefined {
  const e = p.lastError;
  if (!e) return undefined;
  const what = e.description ?? e.kind;
  return e.message !== undefined ? `${what}: ${e.message}` : what;
}

/**
 * This node's status (without `lastUpdate`): sessions by peer name; VIPs announced first, then by Service and
 * address, at most {@link MAX_STATUS_VIPS} (the rest counted in `vipsOmitted`).
 */
export function nodeStatusOf(i: NodeStatusInput): NodeStatus {
  const sessions: SessionStatus[] = [...i.peers]
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map((p) => {
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
  const vips: VipStatus[] = [];
  for (const s of i.services) {
    for (const v of s.vips) {
      const ads = [...new Set(v.reasons.flatMap((r) => (r.advertisement !== undefined ? [r.advertisement] : [])))];
      vips.push({ service: s.service, address: v.address, kind: v.kind, announced: v.announced, reasons: v.reasons.map((r) => r.code), ...(ads.length > 0 ? { advertisements: ads } : {}) });
    }
  }
  const key = (v: VipStatus) => `${v.announced ? 0 : 1} ${v.service} ${v.address}`;
  vips.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
  const announced = vips.filter((v) => v.announced).length;
  return {
    myASN: i.myASN,
    routerID: i.routerID,
    ...(i.override !== undefined ? { override: i.override } : {}),
    sessions,
    sessionsConfigured: sessions.length,
    sessionsEstablished: sessions.filter((s) => s.state === 'Established').length,
    ...(i.problems.length > 0 ? { problems: [...i.problems] } : {}),
    vips: vips.slice(0, MAX_STATUS_VIPS),
    vipsAnnounced: announced,
    ...(vips.length > MAX_STATUS_VIPS ? { vipsOmitted: vips.length - MAX_STATUS_VIPS } : {}),
    heraldVersion: i.heraldVersion,
  };
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
  // A list in the status replaces the stored one wholesale (merge patch, RFC 7386).
  const patch = (status: NodeStatus) =>
    track('patch bgpnodestatuses/status', () => kc.request('PATCH', `${heraldCollectionPath('BGPNodeStatus', namespace)}/${encodeURIComponent(nodeName)}/status`, { body: { status }, contentType: 'application/merge-patch+json' }));
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

/** Options of {@link NodeStatusWriter}. */
export interface NodeStatusWriterOptions {
  readonly build: () => NodeStatus;
  readonly sink: NodeStatusSink;
  /** Shortest time between two writes, ms (default 5000). */
  readonly minIntervalMs?: number;
  /** An unchanged status is written again after this long, ms (default 60000). */
  readonly refreshMs?: number;
  readonly now?: () => number;
  readonly onError?: (err: unknown) => void;
}

/** See the module comment. `changed()` after anything the status shows may have changed; `stop()` ends it. */
export class NodeStatusWriter {
  readonly #o: NodeStatusWriterOptions;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #lastText = '';
  #lastAtMs = Number.NEGATIVE_INFINITY;
  #writing = false;
  #dirty = true;
  #stopped = false;
  readonly #refresh: ReturnType<typeof setInterval>;
  /** Writes done (tests, metrics). */
  writes = 0;

  constructor(o: NodeStatusWriterOptions) {
    this.#o = o;
    this.#refresh = setInterval(() => this.changed(), o.refreshMs ?? 60_000);
    this.#refresh.unref();
  }

  changed(): void {
    this.#dirty = true;
    if (this.#timer !== undefined || this.#writing || this.#stopped) return;
    const wait = Math.max(0, this.#lastAtMs + (this.#o.minIntervalMs ?? 5000) - this.#now());
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      void this.#write();
    }, wait);
    this.#timer.unref();
  }

  stop(): void {
    this.#stopped = true;
    clearInterval(this.#refresh);
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
    const now = this.#now();
    if (text === this.#lastText && now - this.#lastAtMs < (this.#o.refreshMs ?? 60_000)) return;
    this.#writing = true;
    this.#lastAtMs = now;
    try {
      await this.#o.sink({ ...status, lastUpdate: new Date(now).toISOString() });
      this.#lastText = text;
      this.writes++;
    } catch (err) {
      this.#dirty = true; // retried at the next period
      this.#o.onError?.(err);
    } finally {
      this.#writing = false;
    }
    if (this.#dirty) this.changed();
  }
}
