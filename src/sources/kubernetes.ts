/**
 * Source reading Services, EndpointSlices (discovery.k8s.io/v1), Nodes and, where served,
 * networking.k8s.io/v1 ServiceCIDRs from the Kubernetes API through supervised informers; and, where the CRDs are
 * installed, Herald's configuration objects (herald.io) in Herald's namespace, through the same object store.
 *
 * An apiserver outage never clears the cache: the last known state stays in force and is
 * reconciled after the informers reconnect (a relist emits deletions for objects that vanished).
 * Paths, list calls and RBAC: docs/kubernetes.md "What is read".
 */
import { EventEmitter } from 'node:events';
import type { KubeClient } from '../k8s/client.ts';
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
  /** Only watch this Node (fieldSelector metadata.name=…); default: all Nodes. */
  nodeName?: string;
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
  listTimeoutMs?: number;
  /** Objects per list page (default 500). */
  pageSize?: number;
  clock?: Clock;
}

/** See module doc. Emits 'change' (keys), 'synced', 'error' (kind, err), 'restart' (kind, delayMs). */
export class KubernetesSource extends EventEmitter implements Source {
  readonly #store = new ObjectStore();
  readonly #informers = new Map<ResourceKind, SupervisedInformer>();
  #syncedEmitted = false;

  constructor(opts: KubernetesSourceOptions) {
    super();
    const common = {
      client: opts.kc,
      ...(opts.initialBackoffMs !== undefined ? { initialBackoffMs: opts.initialBackoffMs } : {}),
      ...(opts.maxBackoffMs !== undefined ? { maxBackoffMs: opts.maxBackoffMs } : {}),
      ...(opts.watchTimeoutMs !== undefined ? { watchTimeoutMs: opts.watchTimeoutMs } : {}),
      ...(opts.minWatchTimeoutSec !== undefined ? { minWatchTimeoutSec: opts.minWatchTimeoutSec } : {}),
      ...(opts.listTimeoutMs !== undefined ? { listTimeoutMs: opts.listTimeoutMs } : {}),
      ...(opts.pageSize !== undefined ? { pageSize: opts.pageSize } : {}),
      ...(opts.clock !== undefined ? { clock: opts.clock } : {}),
    };
    const informer = (kind: ResourceKind, o: { name: string; path: string; fieldSelector?: string; optional?: boolean }) =>
      this.#add(kind, new SupervisedInformer({ ...common, ...o, cache: this.#store.cacheOf(kind) }));
    informer('Service', { name: 'services', path: '/api/v1/services' });
    informer('EndpointSlice', { name: 'endpointslices', path: '/apis/discovery.k8s.io/v1/endpointslices' });
    informer('Node', { name: 'nodes', path: '/api/v1/nodes', ...(opts.nodeName ? { fieldSelector: `metadata.name=${opts.nodeName}` } : {}) });
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
    inf.on('add', (o: KubeObject) => change(this.#store.apply(kind, o)));
    inf.on('update', (o: KubeObject) => change(this.#store.apply(kind, o)));
    inf.on('delete', (o: KubeObject) => change(this.#store.remove(kind, o)));
    inf.on('synced', () => {
      if (!this.#syncedEmitted && this.synced()) {
        this.#syncedEmitted = true;
        this.emit('synced');
      }
    });
    inf.on('error', (e: unknown) => {
      if (this.listenerCount('error') > 0) this.emit('error', kind, e);
    });
    inf.on('restart', (d: number) => this.emit('restart', kind, d));
  }

  async start(): Promise<void> {
    await Promise.all([...this.#informers.values()].map((i) => i.start()));
  }

  async stop(): Promise<void> {
    await Promise.all([...this.#informers.values()].map((i) => i.stop()));
  }

  synced(): boolean {
    return [...this.#informers.values()].every((i) => i.synced());
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
