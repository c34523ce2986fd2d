/**
 * The writer of the published node set (src/k8s/node-set.ts; docs/decisions.md "Node watch"): run by the status
 * leader (object-status-writer.ts), which reads every Node anyway, so that no node's Herald has to. While some
 * advertisement bounds fan-out (`maxNodesPerVip`), each pass renders the shards from the leader's Nodes and writes the
 * ones whose Nodes differ from what the apiserver holds: a new shard is created, a changed one replaced (PUT with
 * its resourceVersion: a conflict is retried at the next pass), an emptied one written empty; each write stamped with
 * the whole set's count of Nodes and a sequence (src/k8s/node-set.ts: readers use the set once it is whole). With no
 * advertisement bounding fan-out it deletes the shards (nobody reads them, and stale ones must not be read when one
 * bounds it again).
 *
 * Bounded writes: each shard at most once per `minIntervalMs` (default 5 s); a Node's heartbeat renders the same
 * text, so nothing is written while Nodes only report. Failures never touch sessions or routes: a 403 is recorded
 * (`forbidden`, herald status) and counted, other errors logged once per distinct message and retried.
 */
import type { Logger } from 'pino';
import type { KubeClient } from '../k8s/client.ts';
import type { ForbiddenCalls } from '../k8s/forbidden.ts';
import { apiErrorCode, apiErrorText } from '../k8s/forbidden.ts';
import { SupervisedInformer } from '../k8s/informer.ts';
import type { InformerCache } from '../k8s/object-store.ts';
import type { NodeSetEntry } from '../k8s/node-set.ts';
import { emptyShard, NODE_SET_LABEL, renderNodeSet, sameShard, shardSeq, stampShard } from '../k8s/node-set.ts';
import type { KubeObject, Node } from '../k8s/types.ts';

/** How one write of a shard ended (the metric's `result` label). */
export type NodeSetWriteResult = 'ok' | 'forbidden' | 'error';

/** What the node set carries, from the configuration in force; undefined: no advertisement bounds fan-out. */
export interface NodeSetSpec {
  /** Label keys the bounded advertisements' nodeSelectors read (steering.ts `selectorKeys`). */
  readonly labelKeys: readonly string[];
  /**
   * A Node's entry: its name, whether it is eligible as a node's own Herald judges itself (src/controller/
   * node-eligibility.ts, given by the daemon: status never reads the controller), its labels; undefined: skipped.
   */
  readonly entry: (node: Node) => NodeSetEntry | undefined;
}

/** Options of {@link NodeSetPublisher}. */
export interface NodeSetPublisherOptions {
  readonly kc: KubeClient;
  /** Herald's namespace: where the shards live. */
  readonly namespace: string;
  readonly forbidden: ForbiddenCalls;
  readonly log: Logger;
  /** Called after each write (metrics). */
  readonly onWrite?: (result: NodeSetWriteResult) => void;
  /** Shortest time between two writes of one shard, ms (default 5000). */
  readonly minIntervalMs?: number;
  /** Its informer tries streaming lists first (default true). */
  readonly streamingList?: boolean;
}

/** The shards in the apiserver, as the informer's cache: their `data` and resourceVersion. */
class Shards implements InformerCache {
  readonly byName = new Map<string, { namespace: string | undefined; version: string | undefined; data: Record<string, string> }>();

  versionOf(obj: KubeObject): string | undefined {
    return this.byName.get(obj.metadata?.name ?? '')?.version;
  }

  *objects(): Iterable<KubeObject> {
    for (const [name, e] of this.byName) yield { metadata: { name, ...(e.namespace !== undefined ? { namespace: e.namespace } : {}), ...(e.version !== undefined ? { resourceVersion: e.version } : {}) } };
  }

  put(obj: KubeObject & { data?: Record<string, string> }): void {
    this.byName.set(obj.metadata?.name ?? '', { namespace: obj.metadata?.namespace, version: obj.metadata?.resourceVersion, data: obj.data ?? {} });
  }

  remove(obj: KubeObject): void {
    this.byName.delete(obj.metadata?.name ?? '');
  }
}

/** See the module comment. `start()` when leading, `stop()` when not; `publish()` from the leader's passes. */
export class NodeSetPublisher {
  readonly #o: NodeSetPublisherOptions;
  readonly #lastWriteMs = new Map<string, number>();
  #shards = new Shards();
  #informer: SupervisedInformer | undefined;
  #lastProblem = '';

  constructor(o: NodeSetPublisherOptions) {
    this.#o = o;
  }

  /** Starts reading the shards; `changed` is called when they change (the leader schedules a pass). */
  start(changed: () => void): void {
    const shards = new Shards();
    this.#shards = shards;
    const inf = new SupervisedInformer({ client: this.#o.kc, name: 'node set', path: `/api/v1/namespaces/${encodeURIComponent(this.#o.namespace)}/configmaps`, labelSelector: NODE_SET_LABEL, cache: shards, optional: true, ...(this.#o.streamingList === false ? { streamingList: false } : {}) });
    inf.on('add', (o: KubeObject) => (shards.put(o), changed()));
    inf.on('update', (o: KubeObject) => (shards.put(o), changed()));
    inf.on('delete', (o: KubeObject) => (shards.remove(o), changed()));
    inf.on('synced', changed);
    inf.on('error', (err: unknown) => this.#warn('reading the node set', err));
    this.#informer = inf;
    void inf.start();
  }

  async stop(): Promise<void> {
    const inf = this.#informer;
    this.#informer = undefined;
    this.#shards = new Shards();
    await inf?.stop();
  }

  /** The shards have been read once since `start()`. */
  synced(): boolean {
    return this.#informer?.synced() ?? false;
  }

  /** The informer's 403, if any (herald status). */
  forbidden(): string {
    return this.#informer?.stats.forbidden ?? '';
  }

  /**
   * Writes what differs between the set rendered from `nodes` and the shards read. Never throws.
   * @param leading checked before each write (the Lease may be lost meanwhile)
   * @returns ms until a shard held back by `minIntervalMs` is due (Infinity: none)
   */
  async publish(spec: NodeSetSpec | undefined, nodes: Iterable<Node>, nowMs: number, leading: () => boolean): Promise<number> {
    if (this.forbidden() !== '') return Number.POSITIVE_INFINITY; // cannot read them: herald status shows the 403
    const listed = spec === undefined ? [] : [...entries(nodes, spec.entry)];
    const want = spec === undefined ? new Map<string, Record<string, string>>() : renderNodeSet(listed, spec.labelKeys);
    // While the set is published, a shard whose Nodes are all gone is written empty (its stamp says they are gone).
    if (spec !== undefined) for (const name of this.#shards.byName.keys()) if (!want.has(name)) want.set(name, emptyShard(spec.labelKeys));
    const minMs = this.#o.minIntervalMs ?? 5000;
    let deferred = Number.POSITIVE_INFINITY;
    let seq = Math.max(nowMs, ...[...this.#shards.byName.values()].map((e) => shardSeq(e.data) + 1));
    const names = new Set([...want.keys(), ...this.#shards.byName.keys()]);
    for (const name of [...names].sort()) {
      const data = want.get(name);
      const have = this.#shards.byName.get(name);
      if (data !== undefined && have !== undefined && sameShard(data, have.data)) continue;
      if (data === undefined && have === undefined) continue;
      const wait = (this.#lastWriteMs.get(name) ?? Number.NEGATIVE_INFINITY) + minMs - nowMs;
      if (wait > 0) {
        deferred = Math.min(deferred, wait);
        continue;
      }
      if (!leading()) break;
      this.#lastWriteMs.set(name, nowMs);
      const stamped = data === undefined ? undefined : stampShard(data, listed.length, seq++);
      if ((await this.#write(name, stamped, have?.version)) === 'forbidden') break; // shown once; the next pass tries again
    }
    for (const k of [...this.#lastWriteMs.keys()]) if (!names.has(k)) this.#lastWriteMs.delete(k);
    return deferred;
  }

  async #write(name: string, data: Record<string, string> | undefined, version: string | undefined): Promise<NodeSetWriteResult> {
    const kc = this.#o.kc;
    const verb = data === undefined ? 'delete' : version === undefined ? 'create' : 'update';
    const body = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: this.#o.namespace, labels: { [NODE_SET_LABEL]: '', 'app.kubernetes.io/managed-by': 'herald' }, ...(version !== undefined ? { resourceVersion: version } : {}) }, data };
    const ns = encodeURIComponent(this.#o.namespace);
    const replace = () => this.#o.forbidden.track('update configmaps', () => kc.request('PUT', `/api/v1/namespaces/${ns}/configmaps/${encodeURIComponent(name)}`, { body }));
    try {
      try {
        await this.#o.forbidden.track(`${verb} configmaps`, () =>
          verb === 'delete' ? kc.request('DELETE', `/api/v1/namespaces/${ns}/configmaps/${encodeURIComponent(name)}`) : verb === 'create' ? kc.request('POST', `/api/v1/namespaces/${ns}/configmaps`, { body }) : replace(),
        );
      } catch (err) {
        // A ConfigMap of that name without the label (made by hand, or its label removed) is invisible to the watch:
        // replaced unconditionally (no resourceVersion), it carries the label again and the watch sees it.
        if (verb !== 'create' || apiErrorCode(err) !== 409) throw err;
        await replace();
      }
      this.#o.onWrite?.('ok');
      return 'ok';
    } catch (err) {
      const code = apiErrorCode(err);
      if (verb === 'delete' && code === 404) return 'ok';
      const result = code === 403 ? 'forbidden' : 'error';
      this.#o.onWrite?.(result);
      // 409 on update: another writer or a stale cache; the watch brings the object, and the next pass writes again.
      // Warned once per verb and code (the apiserver's message names the shard, which changes from pass to pass).
      this.#warn(`writing the node set (${verb} ${name})`, err, `${verb} ${code ?? 'network'}`);
      return result;
    }
  }

  /** Logs once per distinct `key` (default: the message) until another problem is logged. */
  #warn(what: string, err: unknown, key?: string): void {
    const problem = key ?? `${what}: ${apiErrorText(err)}`;
    if (problem !== this.#lastProblem) this.#o.log.warn({ err: apiErrorText(err) }, `${what} failed (retried; warned once)`);
    this.#lastProblem = problem;
  }
}

function* entries(nodes: Iterable<Node>, entry: NodeSetSpec['entry']): Iterable<NodeSetEntry> {
  for (const n of nodes) {
    const e = entry(n);
    if (e !== undefined) yield e;
  }
}
