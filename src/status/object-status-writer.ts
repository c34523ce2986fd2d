/**
 * The one writer of `status` on Herald's configuration objects (docs/decisions.md "Status"), and of the published
 * node set (node-set-publisher.ts, from the Nodes it reads anyway): every Herald with the
 * Kubernetes source runs for the Lease `herald-status` in Herald's namespace (src/leader/election.ts; its own Lease,
 * not the allocator's); the leader alone reads every BGPNodeStatus, every Node and Herald's pods in its namespace
 * (informers it runs only while it leads: the other Heralds read their own Node only, docs/decisions.md "Node watch")
 * and writes each object's conditions and counts (object-conditions.ts). A node's Herald counts as running while its
 * DaemonSet pod is Ready: node statuses are written only when they change, so their age says nothing.
 *
 * Bounded writes: a pass runs at most once a second after a change (objects, Nodes, node statuses) and every
 * `resyncMs`; it writes only an object whose status differs from what the object carries, and each object at most
 * once per `minIntervalMs`. A write is a JSON merge patch (RFC 7386) of the object's `status` subresource
 * (`patch <plural>/status`): the conditions list is replaced whole, as the writer owns it.
 *
 * Failures never touch sessions or routes: a 403 is recorded in `forbidden` (herald status, a warning logged once)
 * and counted (`onWrite` with result `forbidden`); any other error is logged once per distinct message and retried at
 * the next pass; a 404 (the object was deleted meanwhile) is nothing.
 */
import type { Logger } from 'pino';
import type { ConfigObjects, MergedConfig } from '../crd/merge.ts';
import type { KubeClient } from '../k8s/client.ts';
import type { ForbiddenCalls } from '../k8s/forbidden.ts';
import { apiErrorCode, apiErrorText } from '../k8s/forbidden.ts';
import type { ConfigKind, HeraldObject } from '../k8s/herald-kinds.ts';
import { HERALD_PLURALS, heraldCollectionPath } from '../k8s/herald-kinds.ts';
import { SupervisedInformer } from '../k8s/informer.ts';
import type { InformerCache } from '../k8s/object-store.ts';
import { HERALD_KEY_PREFIX } from '../k8s/keys.ts';
import { ObjectStore } from '../k8s/object-store.ts';
import type { KubeObject } from '../k8s/types.ts';
import { LeaderElector } from '../leader/election.ts';
import type { LeaseStore } from '../leader/election.ts';
import { KubernetesLeaseStore } from '../leader/lease-store.ts';
import type { Source } from '../sources/source.ts';
import type { NodeDigest } from './node-digest.ts';
import { nodeDigestOf } from './node-digest.ts';
import { hasStatus, objectStatuses } from './object-conditions.ts';
import type { NodeSetSpec, NodeSetWriteResult } from './node-set-publisher.ts';
import { NodeSetPublisher } from './node-set-publisher.ts';
import type { ObjectStatus, PoolUsage } from './object-conditions.ts';

/** The status writer's Lease, in Herald's namespace (docs/decisions.md "Status"). */
export const STATUS_LEASE = 'herald-status';

/** How one status write ended (the metric's `result` label). */
export type StatusWriteResult = 'ok' | 'forbidden' | 'error';

/** Options of {@link ObjectStatusWriter}. */
export interface ObjectStatusWriterOptions {
  readonly kc: KubeClient;
  /** Herald's namespace (src/k8s/client.ts `heraldNamespace`): the objects', the Lease's, the node statuses'. */
  readonly namespace: string;
  /** This instance's holder identity: the node name. */
  readonly identity: string;
  /** The Kubernetes source: Herald's objects and the Services (the Nodes are read by the writer while it leads). */
  readonly source: Source;
  /** This node's merge of the objects (src/daemon/daemon.ts `objects().merged`). */
  readonly merged: () => MergedConfig;
  /** Usage of the pools in force (src/ipam/usage.ts). */
  readonly poolUsage: () => readonly PoolUsage[];
  readonly forbidden: ForbiddenCalls;
  readonly log: Logger;
  /** Called after each status write (metrics). */
  readonly onWrite?: (kind: ConfigKind, result: StatusWriteResult) => void;
  /** Shortest time between two writes of one object, ms (default 5000). */
  readonly minIntervalMs?: number;
  /** A pass runs at least this often, ms (default 30000: a node status turning stale is seen). */
  readonly resyncMs?: number;
  /** Injected Lease store (tests); default the Lease {@link STATUS_LEASE} through `kc`. */
  readonly leases?: LeaseStore;
  readonly now?: () => number;
  /** Its informers try streaming lists first (default true; src/k8s/informer.ts). */
  readonly streamingList?: boolean;
  /** What the published node set carries (node-set-publisher.ts); undefined or returning undefined: none is published. */
  readonly nodeSet?: () => NodeSetSpec | undefined;
  /** Called after each write of a node-set shard (metrics). */
  readonly onNodeSetWrite?: (result: NodeSetWriteResult) => void;
}

/**
 * The node statuses the leader reads: a digest per node, as the informer's cache (informer.ts InformerCache; a relist
 * deletes what `objects()` yields and the list lacks, by namespace and name).
 */
class NodeDigests implements InformerCache {
  readonly #byName = new Map<string, { namespace: string | undefined; version: string | undefined; digest: NodeDigest }>();

  versionOf(obj: KubeObject): string | undefined {
    return this.#byName.get(obj.metadata?.name ?? '')?.version;
  }

  *objects(): Iterable<KubeObject> {
    for (const [name, e] of this.#byName) {
      yield { metadata: { name, ...(e.namespace !== undefined ? { namespace: e.namespace } : {}), ...(e.version !== undefined ? { resourceVersion: e.version } : {}) } };
    }
  }

  put(obj: HeraldObject): void {
    const digest = nodeDigestOf(obj);
    if (digest !== undefined) this.#byName.set(digest.node, { namespace: obj.metadata?.namespace, version: obj.metadata?.resourceVersion, digest });
  }

  remove(obj: KubeObject): void {
    this.#byName.delete(obj.metadata?.name ?? '');
  }

  digests(): Map<string, NodeDigest> {
    return new Map([...this.#byName].map(([name, e]) => [name, e.digest]));
  }
}

/** The label of Herald's pods (deploy/kubernetes/daemonset.yaml). */
export const HERALD_POD_SELECTOR = 'app.kubernetes.io/name=herald';

/**
 * Herald's DaemonSet pods the leader reads: per pod its node and whether it is Ready (pod condition `Ready`), as the
 * informer's cache. A pod not owned by a DaemonSet (another Herald component) says nothing of a node.
 */
class HeraldPods implements InformerCache {
  readonly #byName = new Map<string, { version: string | undefined; node: string | undefined; ready: boolean }>();
  readonly #namespace: string;

  constructor(namespace: string) {
    this.#namespace = namespace;
  }

  versionOf(obj: KubeObject): string | undefined {
    return this.#byName.get(obj.metadata?.name ?? '')?.version;
  }

  *objects(): Iterable<KubeObject> {
    for (const [name, e] of this.#byName) yield { metadata: { name, namespace: this.#namespace, ...(e.version !== undefined ? { resourceVersion: e.version } : {}) } };
  }

  /** @returns whether what the conditions read (its node, Ready) changed */
  put(obj: KubeObject): boolean {
    const pod = obj as KubeObject & { metadata?: { ownerReferences?: { kind?: string }[] }; spec?: { nodeName?: string }; status?: { conditions?: { type?: string; status?: string }[] } };
    const name = pod.metadata?.name ?? '';
    const daemon = pod.metadata?.ownerReferences?.some((o) => o.kind === 'DaemonSet') ?? false;
    const next = { version: pod.metadata?.resourceVersion, node: daemon ? pod.spec?.nodeName : undefined, ready: pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false };
    const before = this.#byName.get(name);
    this.#byName.set(name, next);
    return before?.node !== next.node || before?.ready !== next.ready;
  }

  remove(obj: KubeObject): void {
    this.#byName.delete(obj.metadata?.name ?? '');
  }

  /** The nodes whose Herald pod is Ready. */
  readyNodes(): Set<string> {
    const out = new Set<string>();
    for (const e of this.#byName.values()) if (e.ready && e.node !== undefined) out.add(e.node);
    return out;
  }
}

/** See the module comment. `start()` once; `stop()` releases the Lease. */
export class ObjectStatusWriter {
  readonly #o: ObjectStatusWriterOptions;
  readonly #elector: LeaderElector;
  readonly #lastWriteMs = new Map<string, number>();
  #informer: SupervisedInformer | undefined;
  #digests = new NodeDigests();
  /** Every Node while leading (trimmed: object-store.ts), and its informer. */
  #nodes = new ObjectStore();
  #nodeInformer: SupervisedInformer | undefined;
  /** Herald's pods while leading, and their informer. */
  #pods: HeraldPods;
  #podInformer: SupervisedInformer | undefined;
  /** The node set it publishes while leading, from the Nodes it reads. */
  readonly #publisher: NodeSetPublisher;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #resync: ReturnType<typeof setInterval> | undefined;
  #passing = false;
  #again = false;
  #stopped = false;
  #lastProblem = '';
  readonly #onChange = (keys: readonly string[]) => {
    if (keys.some((k) => k.startsWith(HERALD_KEY_PREFIX) || k.startsWith('service:'))) this.#schedule(1000);
  };
  /** @throws Error from LeaderElector when its timings break client-go's rule (they are the defaults: never). */
  constructor(o: ObjectStatusWriterOptions) {
    this.#o = o;
    this.#pods = new HeraldPods(o.namespace);
    this.#publisher = new NodeSetPublisher({ kc: o.kc, namespace: o.namespace, forbidden: o.forbidden, log: o.log, ...(o.onNodeSetWrite ? { onWrite: o.onNodeSetWrite } : {}), ...(o.minIntervalMs !== undefined ? { minIntervalMs: o.minIntervalMs } : {}), ...(o.streamingList === false ? { streamingList: false } : {}) });
    const leases = o.leases ?? new KubernetesLeaseStore(o.kc, o.namespace, STATUS_LEASE);
    const store: LeaseStore = {
      get: () => o.forbidden.track('get leases', () => leases.get()),
      create: (r) => o.forbidden.track('create leases', () => leases.create(r)),
      update: (r, rv) => o.forbidden.track('update leases', () => leases.update(r, rv)),
    };
    this.#elector = new LeaderElector({ identity: o.identity, store });
    this.#elector.on('started', () => this.#lead());
    this.#elector.on('stopped', () => this.#follow());
    this.#elector.on('error', (err: unknown) => this.#warn('status writer leader election', err));
  }

  /** The Lease elected on, "namespace/name". */
  get lease(): string {
    return `${this.#o.namespace}/${STATUS_LEASE}`;
  }

  /** True while this instance leads (and so writes). */
  isLeader(): boolean {
    return this.#elector.isLeader();
  }

  /** The leader's informers' 403s, "list bgpnodestatuses: HTTP 403: ..." (for herald status), if any. */
  forbidden(): string[] {
    return [...[this.#informer, this.#nodeInformer, this.#podInformer].map((i) => i?.stats.forbidden ?? ''), this.#publisher.forbidden()].filter((f) => f !== '');
  }

  start(): void {
    this.#o.source.on('change', this.#onChange);
    this.#resync = setInterval(() => this.#schedule(0), this.#o.resyncMs ?? 30_000);
    this.#resync.unref();
    this.#elector.start();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#o.source.off('change', this.#onChange);
    if (this.#resync !== undefined) clearInterval(this.#resync);
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    await this.#elector.stop();
    await this.#informer?.stop();
    await this.#nodeInformer?.stop();
    await this.#podInformer?.stop();
    await this.#publisher.stop();
  }

  #now(): number {
    return (this.#o.now ?? Date.now)();
  }

  /** Logs `err` at warn level once per distinct message (a 403 is logged by `forbidden` already, but kept here too). */
  #warn(what: string, err: unknown): void {
    if (this.#stopped) return; // a stop closes the client under its last requests: nothing is retried
    const problem = `${what}: ${apiErrorText(err)}`;
    if (problem !== this.#lastProblem) this.#o.log.warn({ err: apiErrorText(err) }, `${what} failed (retried; warned once)`);
    this.#lastProblem = problem;
  }

  #lead(): void {
    this.#o.log.info({ lease: this.lease }, 'became the status writer of the configuration objects');
    const digests = new NodeDigests();
    this.#digests = digests;
    const inf = new SupervisedInformer({ client: this.#o.kc, name: HERALD_PLURALS.BGPNodeStatus, path: heraldCollectionPath('BGPNodeStatus', this.#o.namespace), cache: digests, ...(this.#o.streamingList === false ? { streamingList: false } : {}) });
    const changed = (o: HeraldObject, gone = false) => {
      if (gone) digests.remove(o);
      else digests.put(o);
      this.#schedule(1000);
    };
    inf.on('add', (o: HeraldObject) => changed(o));
    inf.on('update', (o: HeraldObject) => changed(o));
    inf.on('delete', (o: HeraldObject) => changed(o, true));
    inf.on('synced', () => this.#schedule(0));
    inf.on('error', (err: unknown) => this.#warn('reading the BGPNodeStatus objects', err));
    this.#informer = inf;
    void inf.start();
    const nodes = new ObjectStore();
    this.#nodes = nodes;
    const nodeInf = new SupervisedInformer({ client: this.#o.kc, name: 'nodes', path: '/api/v1/nodes', cache: nodes.cacheOf('Node'), ...(this.#o.streamingList === false ? { streamingList: false } : {}) });
    // A Node's heartbeat changes nothing the store keeps: no change key, no pass.
    const nodeChanged = (keys: string[]) => keys.length > 0 && this.#schedule(1000);
    nodeInf.on('add', (o: KubeObject) => nodeChanged(nodes.apply('Node', o)));
    nodeInf.on('update', (o: KubeObject) => nodeChanged(nodes.apply('Node', o)));
    nodeInf.on('delete', (o: KubeObject) => nodeChanged(nodes.remove('Node', o)));
    nodeInf.on('synced', () => this.#schedule(0));
    nodeInf.on('error', (err: unknown) => this.#warn('reading the Nodes', err));
    this.#nodeInformer = nodeInf;
    void nodeInf.start();
    const pods = new HeraldPods(this.#o.namespace);
    this.#pods = pods;
    const podInf = new SupervisedInformer({ client: this.#o.kc, name: 'pods', path: `/api/v1/namespaces/${encodeURIComponent(this.#o.namespace)}/pods`, labelSelector: HERALD_POD_SELECTOR, cache: pods, ...(this.#o.streamingList === false ? { streamingList: false } : {}) });
    podInf.on('add', (o: KubeObject) => pods.put(o) && this.#schedule(1000));
    podInf.on('update', (o: KubeObject) => pods.put(o) && this.#schedule(1000));
    podInf.on('delete', (o: KubeObject) => {
      pods.remove(o);
      this.#schedule(1000);
    });
    podInf.on('synced', () => this.#schedule(0));
    podInf.on('error', (err: unknown) => this.#warn("reading Herald's pods", err));
    this.#podInformer = podInf;
    void podInf.start();
    this.#publisher.start(() => this.#schedule(1000));
  }

  #follow(): void {
    if (!this.#stopped) this.#o.log.warn({ lease: this.lease }, 'stopped writing the status of the configuration objects (lost the Lease)');
    void this.#informer?.stop();
    this.#informer = undefined;
    this.#digests = new NodeDigests();
    void this.#nodeInformer?.stop();
    this.#nodeInformer = undefined;
    this.#nodes = new ObjectStore();
    void this.#podInformer?.stop();
    this.#podInformer = undefined;
    this.#pods = new HeraldPods(this.#o.namespace);
    void this.#publisher.stop();
  }

  #schedule(ms: number): void {
    if (this.#stopped) return;
    if (this.#passing) {
      this.#again = true;
      return;
    }
    if (this.#timer !== undefined) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      void this.#pass();
    }, ms);
    this.#timer.unref();
  }

  /** One pass: every object's status and the node set, each written where it differs and is due. Never throws. */
  async #pass(): Promise<void> {
    if (this.#stopped || !this.#elector.isLeader() || !this.#o.source.synced() || !this.#nodeInformer?.synced()) return;
    this.#passing = true;
    let deferred = Number.POSITIVE_INFINITY;
    try {
      const now = this.#now();
      // The objects' conditions need the node statuses and the pods; the node set only the Nodes (and works without the CRDs).
      if (this.#informer?.synced() === true && this.#podInformer?.synced() === true) deferred = await this.#writeConditions(now);
      if (this.#publisher.synced()) deferred = Math.min(deferred, await this.#publisher.publish(this.#o.nodeSet?.(), this.#nodes.nodes(), now, () => this.#elector.isLeader()));
    } catch (err) {
      this.#o.log.error({ err }, 'status pass of the configuration objects failed; retried');
    } finally {
      this.#passing = false;
    }
    if (this.#again) {
      this.#again = false;
      this.#schedule(1000);
    } else if (deferred !== Number.POSITIVE_INFINITY) this.#schedule(deferred);
  }

  /**
   * Computes every object's status and writes those that differ and are due.
   * @returns ms until a write held back by `minIntervalMs` is due (Infinity: none)
   */
  async #writeConditions(now: number): Promise<number> {
    let deferred = Number.POSITIVE_INFINITY;
    const snap = this.#o.source.snapshot();
    const objects: ConfigObjects = { BGPPeer: [...snap.heraldObjects('BGPPeer')], BGPAdvertisement: [...snap.heraldObjects('BGPAdvertisement')], IPAddressPool: [...snap.heraldObjects('IPAddressPool')], BGPNodeConfigOverride: [...snap.heraldObjects('BGPNodeConfigOverride')] };
    const updates = objectStatuses({ objects, merged: this.#o.merged(), nodes: this.#nodes.nodes(), readyNodes: this.#pods.readyNodes(), statuses: this.#digests.digests(), poolUsage: this.#o.poolUsage(), nowMs: now });
    const minMs = this.#o.minIntervalMs ?? 5000;
    for (const u of updates) {
      const key = `${u.kind}/${u.name}`;
      const current = objects[u.kind].find((x) => x.metadata?.name === u.name);
      if (hasStatus(current, u.status)) continue;
      const wait = (this.#lastWriteMs.get(key) ?? Number.NEGATIVE_INFINITY) + minMs - now;
      if (wait > 0) {
        deferred = Math.min(deferred, wait);
        continue;
      }
      if (!this.#elector.isLeader()) break;
      this.#lastWriteMs.set(key, now);
      await this.#write(u.kind, u.name, u.status);
    }
    const live = new Set(updates.map((u) => `${u.kind}/${u.name}`));
    for (const k of [...this.#lastWriteMs.keys()]) if (!live.has(k)) this.#lastWriteMs.delete(k);
    return deferred;
  }

  async #write(kind: ConfigKind, name: string, status: ObjectStatus): Promise<void> {
    const plural = HERALD_PLURALS[kind];
    const kc = this.#o.kc;
    try {
      await this.#o.forbidden.track(`patch ${plural}/status`, () => kc.request('PATCH', `${heraldCollectionPath(kind, this.#o.namespace)}/${encodeURIComponent(name)}/status`, { body: { status }, contentType: 'application/merge-patch+json' }));
      this.#o.onWrite?.(kind, 'ok');
    } catch (err) {
      const code = apiErrorCode(err);
      if (code === 404) return;
      this.#o.onWrite?.(kind, code === 403 ? 'forbidden' : 'error');
      this.#warn(`writing the status of ${kind} ${name}`, err);
    }
  }
}
