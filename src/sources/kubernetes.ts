/**
 * Source reading Services, EndpointSlices (discovery.k8s.io/v1), Nodes and, where served,
 * networking.k8s.io/v1 ServiceCIDRs from the Kubernetes API through supervised informers; and, where the CRDs are
 * installed, Herald's configuration objects (herald.io) in Herald's namespace, through the same object store.
 *
 * It reads only what this node needs (docs/decisions.md "Node watch"):
 * - with `nodeName`, its own Node by name (fieldSelector `metadata.name`), and every Node only while some
 *   advertisement sets `maxNodesPerVip` (the file's, `allNodes`, or a BGPAdvertisement object's): a second informer,
 *   started and stopped as that changes, that never touches this node's own Node object. Asked for before the first
 *   sync, it is part of it (a restart never announces from every node first); asked for later, the Nodes join as they
 *   arrive (the rendezvous choice narrows as they do).
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
  /** With `nodeName`: read every Node too, as the file's advertisements bound fan-out (`maxNodesPerVip`); see `setAllNodes`. */
  allNodes?: boolean;
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

/** True when a BGPAdvertisement object sets `maxNodesPerVip` (whether or not it is valid: reading Nodes is harmless). */
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
  /** The informer of every Node while fan-out is bounded (with `nodeName`). */
  #allNodes: SupervisedInformer | undefined;
  #fileAllNodes: boolean;
  #running = false;
  readonly #common: Omit<ConstructorParameters<typeof SupervisedInformer>[0], 'name' | 'path' | 'cache'>;

  constructor(opts: KubernetesSourceOptions) {
    super();
    this.#nodeName = opts.nodeName;
    this.#fileAllNodes = opts.allNodes === true;
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
      // Its cache is this node's Node alone: a relist by name must not delete the others the all-Nodes informer holds.
      const nodes = this.#store.cacheOf('Node');
      const mine: InformerCache = { versionOf: (obj) => (obj.metadata?.name === me ? nodes.versionOf(obj) : undefined), objects: () => [...nodes.objects()].filter((n) => n.metadata?.name === me) };
      informer('Node', { name: 'nodes', path: '/api/v1/nodes', fieldSelector: `metadata.name=${me}`, cache: mine });
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
   * Whether every Node is read besides this node's: the file's advertisements bound fan-out (`maxNodesPerVip`); a
   * BGPAdvertisement object that sets it turns it on as well. Without `nodeName` every Node is read anyway.
   */
  setAllNodes(file: boolean): void {
    this.#fileAllNodes = file;
    this.#updateNodeScope();
  }

  /** True while every Node is read (the all-Nodes informer runs, or no `nodeName` was given). */
  readsAllNodes(): boolean {
    return this.#nodeName === undefined || this.#allNodes !== undefined;
  }

  #updateNodeScope(): void {
    const me = this.#nodeName;
    if (me === undefined || !this.#running) return;
    const want = this.#fileAllNodes || [...this.#store.heraldObjects('BGPAdvertisement')].some(boundsFanOutObject);
    if (want && this.#allNodes === undefined) {
      // The cache it sees holds the other Nodes only: its relists never delete this node's own, which the informer by
      // name keeps (two informers delivering one object would race its versions).
      const nodes = this.#store.cacheOf('Node');
      const others: InformerCache = {
        versionOf: (obj) => (obj.metadata?.name === me ? undefined : nodes.versionOf(obj)),
        objects: () => [...nodes.objects()].filter((n) => n.metadata?.name !== me),
      };
      const inf = new SupervisedInformer({ ...this.#common, name: 'nodes (all)', path: '/api/v1/nodes', cache: others });
      const change = (keys: string[]): void => {
        if (keys.length > 0) this.emit('change', keys);
      };
      const other = (o: KubeObject) => o.metadata?.name !== me;
      inf.on('add', (o: KubeObject) => other(o) && change(this.#store.apply('Node', o)));
      inf.on('update', (o: KubeObject) => other(o) && change(this.#store.apply('Node', o)));
      inf.on('delete', (o: KubeObject) => other(o) && change(this.#store.remove('Node', o)));
      inf.on('synced', () => this.#maybeSynced());
      inf.on('error', (e: unknown) => {
        if (this.listenerCount('error') > 0) this.emit('error', 'Node', e);
      });
      inf.on('restart', (d: number) => this.emit('restart', 'Node', d));
      this.#allNodes = inf;
      void inf.start();
    } else if (!want && this.#allNodes !== undefined) {
      const inf = this.#allNodes;
      this.#allNodes = undefined;
      void inf.stop();
      const keys: string[] = [];
      for (const n of [...this.#store.nodes()]) if (n.metadata?.name !== me) keys.push(...this.#store.remove('Node', n));
      if (keys.length > 0) this.emit('change', keys);
    }
  }

  async start(): Promise<void> {
    this.#running = true;
    this.#updateNodeScope();
    await Promise.all([...this.#informers.values(), ...(this.#allNodes ? [this.#allNodes] : [])].map((i) => i.start()));
  }

  async stop(): Promise<void> {
    this.#running = false;
    await Promise.all([...this.#informers.values(), ...(this.#allNodes ? [this.#allNodes] : [])].map((i) => i.stop()));
    this.#allNodes = undefined;
  }

  /**
   * Every informer has read its collection once. The all-Nodes informer counts until the source first synced (asked
   * for later, its Nodes join as they come).
   */
  synced(): boolean {
    if (this.#syncedEmitted) return true;
    return [...this.#informers.values()].every((i) => i.synced()) && (this.#allNodes === undefined || this.#allNodes.synced());
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
      resources: [...this.#informers].map(([kind, i]) => ({
        kind,
        synced: i.stats.synced,
        notServed: i.stats.notServed,
        objects: this.#store.counts()[kind],
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
