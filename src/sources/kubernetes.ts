/**
 * Source reading Services, EndpointSlices (discovery.k8s.io/v1), Nodes and, where served,
 * networking.k8s.io/v1 ServiceCIDRs from the Kubernetes API through supervised informers; and, where the CRDs are
 * installed, Herald's configuration objects (herald.io) in Herald's namespace, through the same object store.
 *
 * It reads only what this node needs (docs/decisions.md "Node watch"):
 * - with `nodeName`, its own Node by name (fieldSelector `metadata.name`), never every Node. While some
 *   advertisement sets `maxNodesPerVip` (the file's, `followNodeSet`, or a BGPAdvertisement object's), the node set
 *   the status leader publishes (src/k8s/node-set.ts: small ConfigMaps in Herald's namespace that change only when a
 *   Node's eligibility or a label a nodeSelector reads does) through a second informer, started and stopped as that
 *   changes. Asked for before the first sync, it is part of it (a restart never announces from every node first);
 *   asked for later, the shards join as they arrive. Until the set lists this node the rendezvous choice fails closed
 *   (src/controller/steering.ts).
 * - EndpointSlices as kube-proxy selects them: not those of headless Services (`service.kubernetes.io/headless`) nor
 *   of Services another proxy serves (`service.kubernetes.io/service-proxy-name`), by label selector on the watch;
 *   with `skipServiceProxyName`, such Services too (not while an allocator in this process must see every
 *   LoadBalancer Service).
 *
 * An apiserver outage never clears the cache: the last known state stays in force and is
 * reconciled after the informers reconnect (a relist emits deletions for objects that vanished).
 * Paths, list calls and RBAC: docs/kubernetes.md "What is read".
 */
import { EventEmitter } from 'node:events';
import type { KubeClient } from '../k8s/client.ts';
import type { InformerCache } from '../k8s/object-store.ts';
import { ObjectStore } from '../k8s/object-store.ts';
import type { Snapshot } from '../k8s/object-store.ts';
import type { Clock } from '../../bgp/main-thread.ts';
import { SupervisedInformer } from '../k8s/informer.ts';
import { CONFIG_KINDS, HERALD_PLURALS, heraldCollectionPath } from '../k8s/herald-kinds.ts';
import type { KubeObject, ResourceKind } from '../k8s/types.ts';
import type { NodeSetShard, PublishedNodeSet } from '../k8s/node-set.ts';
import { EMPTY_NODE_SET, mergeNodeSet, NODE_SET_LABEL, parseNodeSetShard } from '../k8s/node-set.ts';
import type { Source, SourceStatus } from './source.ts';

/** Options of `KubernetesSource`. */
export interface KubernetesSourceOptions {
  kc: KubeClient;
  /**
   * Read ServiceCIDR objects (default true). A 404 (not served, clusters < 1.33) or 403 (RBAC not
   * granted) counts as synced with no objects. Set false unless an advertisement selects `serviceCIDR`.
   */
  serviceCIDRs?: boolean;
  /** This node: its Node is read by name (fieldSelector metadata.name=…); default: every Node. */
  nodeName?: string;
  /** Read Nodes (default true); `herald controller` reads none through the source (src/daemon/controller-components.ts). */
  nodes?: boolean;
  /** Read EndpointSlices (default true); `herald controller` reads none. */
  endpointSlices?: boolean;
  /** With `nodeName`: read the published node set, as the file's advertisements bound fan-out (`maxNodesPerVip`); see `followNodeSet`. */
  followNodeSet?: boolean;
  /** Skip Services labelled `service.kubernetes.io/service-proxy-name` at the watch (kube-proxy does). Default false. */
  skipServiceProxyName?: boolean;
  /**
   * Read Herald's configuration objects (herald.io: BGPPeer, BGPAdvertisement, IPAddressPool,
   * BGPNodeConfigOverride) in this namespace, Herald's own. Each is optional: CRDs not installed (404) or not granted
   * (403) count as synced with no objects. Default: not read.
   */
  heraldNamespace?: string;
  initialBackoffMs?: number;
  maxBackoffMs?: number;
  /** Abort a silent watch after this long, ms (default: its server-side timeout plus 30 s; src/k8s/informer.ts). */
  watchTimeoutMs?: number;
  /** Each watch asks for a server-side timeout in [this, 2 × this) s (default 300, client-go's). */
  minWatchTimeoutSec?: number;
  /** Try streaming lists first (default true; src/k8s/informer.ts); false: LIST, as with an apiserver without them. */
  streamingList?: boolean;
  listTimeoutMs?: number;
  /** Objects per list page (default 500). */
  pageSize?: number;
  clock?: Clock;
}

/** The label kube-proxy and the EndpointSlice controller put on a headless Service's slices. */
export const HEADLESS_LABEL = 'service.kubernetes.io/headless';
/** The label of a Service another proxy serves (kube-proxy skips it; src/controller/desired-routes.ts). */
export const SERVICE_PROXY_NAME_LABEL = 'service.kubernetes.io/service-proxy-name';

/** kube-proxy's label selector (cmd/kube-proxy: `!service-proxy-name`, `!headless`) for EndpointSlices. */
export const ENDPOINTSLICE_SELECTOR = `!${SERVICE_PROXY_NAME_LABEL},!${HEADLESS_LABEL}`;

/** True when a BGPAdvertisement object sets `maxNodesPerVip` (whether or not it is valid: reading the node set is harmless). */
function boundsFanOutObject(o: KubeObject): boolean {
  const spec = (o as { spec?: { maxNodesPerVip?: unknown } }).spec;
  return spec?.maxNodesPerVip !== undefined && spec.maxNodesPerVip !== null;
}

/** See module doc. Emits 'change' (keys), 'synced', 'error' (kind, err), 'restart' (kind, delayMs). */
export class KubernetesSource extends EventEmitter implements Source {
  readonly #store = new ObjectStore();
  readonly #informers = new Map<ResourceKind, SupervisedInformer>();
  #syncedEmitted = false;
  readonly #nodeName: string | undefined;
  /** The informer of the published node set while fan-out is bounded (with `nodeName`). */
  #nodeSet: SupervisedInformer | undefined;
  #nodeSetShards: NodeSetShards | undefined;
  #fileNodeSet: boolean;
  readonly #heraldNamespace: string | undefined;
  #running = false;
  readonly #common: Omit<ConstructorParameters<typeof SupervisedInformer>[0], 'name' | 'path' | 'cache'>;

  constructor(opts: KubernetesSourceOptions) {
    super();
    this.#nodeName = opts.nodeName;
    this.#fileNodeSet = opts.followNodeSet === true;
    this.#heraldNamespace = opts.heraldNamespace;
    const common = {
      client: opts.kc,
      ...(opts.initialBackoffMs !== undefined ? { initialBackoffMs: opts.initialBackoffMs } : {}),
      ...(opts.maxBackoffMs !== undefined ? { maxBackoffMs: opts.maxBackoffMs } : {}),
      ...(opts.watchTimeoutMs !== undefined ? { watchTimeoutMs: opts.watchTimeoutMs } : {}),
      ...(opts.minWatchTimeoutSec !== undefined ? { minWatchTimeoutSec: opts.minWatchTimeoutSec } : {}),
      ...(opts.streamingList !== undefined ? { streamingList: opts.streamingList } : {}),
      ...(opts.listTimeoutMs !== undefined ? { listTimeoutMs: opts.listTimeoutMs } : {}),
      ...(opts.pageSize !== undefined ? { pageSize: opts.pageSize } : {}),
      ...(opts.clock !== undefined ? { clock: opts.clock } : {}),
    };
    this.#common = common;
    const informer = (kind: ResourceKind, o: { name: string; path: string; fieldSelector?: string; labelSelector?: string; optional?: boolean; cache?: InformerCache }) =>
      this.#add(kind, new SupervisedInformer({ ...common, ...o, cache: o.cache ?? this.#store.cacheOf(kind) }));
    informer('Service', { name: 'services', path: '/api/v1/services', ...(opts.skipServiceProxyName ? { labelSelector: `!${SERVICE_PROXY_NAME_LABEL}` } : {}) });
    if (opts.endpointSlices !== false) informer('EndpointSlice', { name: 'endpointslices', path: '/apis/discovery.k8s.io/v1/endpointslices', labelSelector: ENDPOINTSLICE_SELECTOR });
    const me = opts.nodeName;
    if (opts.nodes !== false && me === undefined) informer('Node', { name: 'nodes', path: '/api/v1/nodes' });
    else if (opts.nodes !== false && me !== undefined) {
      informer('Node', { name: 'nodes', path: '/api/v1/nodes', fieldSelector: `metadata.name=${me}` });
    }
    if (opts.heraldNamespace !== undefined) {
      for (const kind of CONFIG_KINDS) informer(kind, { name: HERALD_PLURALS[kind], path: heraldCollectionPath(kind, opts.heraldNamespace), optional: true });
    }
    if (opts.serviceCIDRs !== false) informer('ServiceCIDR', { name: 'servicecidrs', path: '/apis/networking.k8s.io/v1/servicecidrs', optional: true });
  }

  #add(kind: ResourceKind, inf: SupervisedInformer): void {
    this.#informers.set(kind, inf);
    const change = (keys: string[]): void => {
      if (keys.length > 0) this.emit('change', keys);
    };
    const scope = kind === 'BGPAdvertisement' ? () => this.#updateNodeScope() : () => undefined;
    inf.on('add', (o: KubeObject) => {
      change(this.#store.apply(kind, o));
      scope();
    });
    inf.on('update', (o: KubeObject) => {
      change(this.#store.apply(kind, o));
      scope();
    });
    inf.on('delete', (o: KubeObject) => {
      change(this.#store.remove(kind, o));
      scope();
    });
    inf.on('synced', () => this.#maybeSynced());
    inf.on('error', (e: unknown) => {
      if (this.listenerCount('error') > 0) this.emit('error', kind, e);
    });
    inf.on('restart', (d: number) => this.emit('restart', kind, d));
  }

  #maybeSynced(): void {
    if (!this.#syncedEmitted && this.synced()) {
      this.#syncedEmitted = true;
      this.emit('synced');
    }
  }

  /**
   * Whether the published node set is read: the file's advertisements bound fan-out (`maxNodesPerVip`); a
   * BGPAdvertisement object that sets it turns it on as well. Without `nodeName` every Node is read anyway.
   */
  followNodeSet(file: boolean): void {
    this.#fileNodeSet = file;
    this.#updateNodeScope();
  }

  /** True while the published node set is read. */
  readsNodeSet(): boolean {
    return this.#nodeSet !== undefined;
  }

  #updateNodeScope(): void {
    if (this.#nodeName === undefined || !this.#running) return;
    const want = this.#fileNodeSet || [...this.#store.heraldObjects('BGPAdvertisement')].some(boundsFanOutObject);
    const change = (keys: string[]): void => {
      if (keys.length > 0) this.emit('change', keys);
    };
    if (want && this.#nodeSet === undefined) {
      const ns = this.#heraldNamespace;
      if (ns === undefined) {
        change(this.#store.setNodeSet({ ...EMPTY_NODE_SET, problems: ["Herald's namespace is not known, so the node set is not read"] }));
        return;
      }
      const shards = new NodeSetShards();
      // Optional: refused (403), it counts as synced with no shards, so the bounded advertisements fail closed
      // (NodeSetUnknown) while every other VIP is announced; `herald status` lists the 403.
      const inf = new SupervisedInformer({ ...this.#common, name: 'node set', path: `/api/v1/namespaces/${encodeURIComponent(ns)}/configmaps`, labelSelector: NODE_SET_LABEL, cache: shards, optional: true });
      this.#nodeSetShards = shards;
      const put = (o: KubeObject) => change(this.#store.setNodeSet(shards.put(o)));
      inf.on('add', put);
      inf.on('update', put);
      inf.on('delete', (o: KubeObject) => change(this.#store.setNodeSet(shards.remove(o))));
      inf.on('synced', () => {
        // Refused: the reason every bounded VIP gives names the 403.
        if (inf.stats.forbidden !== '') change(this.#store.setNodeSet({ ...EMPTY_NODE_SET, problems: [inf.stats.forbidden] }));
        this.#maybeSynced();
      });
      inf.on('error', (e: unknown) => {
        if (this.listenerCount('error') > 0) this.emit('error', 'ConfigMap', e);
      });
      inf.on('restart', (d: number) => this.emit('restart', 'ConfigMap', d));
      this.#nodeSet = inf;
      change(this.#store.setNodeSet(EMPTY_NODE_SET));
      void inf.start();
    } else if (!want) {
      const inf = this.#nodeSet;
      this.#nodeSet = undefined;
      this.#nodeSetShards = undefined;
      void inf?.stop();
      if (this.#store.nodeSet() !== undefined) change(this.#store.setNodeSet(undefined));
    }
  }

  async start(): Promise<void> {
    this.#running = true;
    this.#updateNodeScope();
    await Promise.all([...this.#informers.values(), ...(this.#nodeSet ? [this.#nodeSet] : [])].map((i) => i.start()));
  }

  async stop(): Promise<void> {
    this.#running = false;
    await Promise.all([...this.#informers.values(), ...(this.#nodeSet ? [this.#nodeSet] : [])].map((i) => i.stop()));
    this.#nodeSet = undefined;
  }

  /**
   * Every informer has read its collection once. The node set's informer counts until the source first synced (asked
   * for later, its shards join as they come).
   */
  synced(): boolean {
    if (this.#syncedEmitted) return true;
    return [...this.#informers.values()].every((i) => i.synced()) && (this.#nodeSet === undefined || this.#nodeSet.synced());
  }

  /** True when every informer has synced once (alias of `synced()`). */
  allSynced(): boolean {
    return this.synced();
  }

  snapshot(): Snapshot {
    return this.#store;
  }

  status(): SourceStatus {
    return {
      type: 'kubernetes',
      synced: this.synced(),
      resources: [...this.#informers, ...(this.#nodeSet ? [['ConfigMap', this.#nodeSet] as const] : [])].map(([kind, i]) => ({
        kind,
        synced: i.stats.synced,
        notServed: i.stats.notServed,
        objects: kind === 'ConfigMap' ? (this.#nodeSetShards?.size ?? 0) : this.#store.counts()[kind],
        restarts: i.stats.restarts,
        errors: i.stats.errors,
        lists: i.stats.lists,
        watchConnects: i.stats.connects,
        lastWatchConnectAtMs: i.stats.lastConnectAtMs,
        lastEventAtMs: i.stats.lastEventAtMs,
        lastError: i.stats.lastError,
        ...(i.stats.forbidden !== '' ? { forbidden: i.stats.forbidden } : {}),
      })),
    };
  }
}

/** The node set's shards as the informer's cache: each parsed once, the union recomputed on a change (they are rare). */
class NodeSetShards implements InformerCache {
  readonly #byName = new Map<string, { namespace: string | undefined; version: string | undefined; shard: NodeSetShard | { problem: string } }>();

  versionOf(obj: KubeObject): string | undefined {
    return this.#byName.get(obj.metadata?.name ?? '')?.version;
  }

  *objects(): Iterable<KubeObject> {
    for (const [name, e] of this.#byName) yield { metadata: { name, ...(e.namespace !== undefined ? { namespace: e.namespace } : {}), ...(e.version !== undefined ? { resourceVersion: e.version } : {}) } };
  }

  get size(): number {
    return this.#byName.size;
  }

  /** Stores a shard (one that cannot be parsed with why) and returns the new union. */
  put(obj: KubeObject): PublishedNodeSet {
    let shard: NodeSetShard | { problem: string };
    try {
      shard = parseNodeSetShard(obj);
    } catch (err) {
      shard = { problem: err instanceof Error ? err.message : String(err) };
    }
    this.#byName.set(obj.metadata?.name ?? '', { namespace: obj.metadata?.namespace, version: obj.metadata?.resourceVersion, shard });
    return this.#union();
  }

  remove(obj: KubeObject): PublishedNodeSet {
    this.#byName.delete(obj.metadata?.name ?? '');
    return this.#union();
  }

  #union(): PublishedNodeSet {
    return mergeNodeSet(new Map([...this.#byName].map(([name, e]) => [name, e.shard])));
  }
}
