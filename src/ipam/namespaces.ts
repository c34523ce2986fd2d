/**
 * The labels of the cluster's Namespaces, for pools with `namespaceSelectors` (MetalLB's
 * `serviceAllocation.namespaceSelectors`; src/ipam/allocator.ts `poolRefuses`). Read only while some pool in force has
 * such selectors: a list/watch of `/api/v1/namespaces` (RBAC: namespaces list/watch) keeping each namespace's name and
 * labels, nothing else. Until the first full read the labels are unknown and such a pool serves only the namespaces
 * it lists (fail closed); the allocator waits for that read before its passes (`ready`).
 */
import type { KubeClient } from '../k8s/client.ts';
import { SupervisedInformer } from '../k8s/informer.ts';
import type { InformerCache } from '../k8s/object-store.ts';
import type { KubeObject } from '../k8s/types.ts';

/** Namespace name → its resourceVersion and labels. */
class NamespaceLabelCache implements InformerCache {
  readonly #byName = new Map<string, { version: string | undefined; labels: Readonly<Record<string, string>> }>();

  versionOf(obj: KubeObject): string | undefined {
    return this.#byName.get(obj.metadata?.name ?? '')?.version;
  }

  *objects(): Iterable<KubeObject> {
    for (const [name, e] of this.#byName) yield { metadata: { name, ...(e.version !== undefined ? { resourceVersion: e.version } : {}) } };
  }

  put(obj: KubeObject): void {
    const name = obj.metadata?.name;
    if (name === undefined) return;
    const labels: Record<string, string> = {};
    for (const [k, v] of Object.entries(obj.metadata?.labels ?? {})) if (typeof v === 'string') labels[k] = v;
    this.#byName.set(name, { version: obj.metadata?.resourceVersion, labels });
  }

  remove(obj: KubeObject): void {
    this.#byName.delete(obj.metadata?.name ?? '');
  }

  labels(name: string): Readonly<Record<string, string>> | undefined {
    return this.#byName.get(name)?.labels;
  }
}

/** Options of {@link NamespaceLabels}. */
export interface NamespaceLabelsOptions {
  readonly kc: KubeClient;
  /** A namespace was added, changed or removed (a pool may now serve other Services): run a pass. */
  readonly onChange: () => void;
  readonly onError?: (err: unknown) => void;
  /** false: read by LIST, never a streaming list (the test hook HERALD_TEST_STREAMING_LIST, as the source's informers). */
  readonly streamingList?: boolean;
}

/** See the module comment. `need(true)` starts the watch, `need(false)` stops it; `stop()` at the end. */
export class NamespaceLabels {
  readonly #o: NamespaceLabelsOptions;
  #cache = new NamespaceLabelCache();
  #informer: SupervisedInformer | undefined;

  constructor(o: NamespaceLabelsOptions) {
    this.#o = o;
  }

  /** Whether some pool in force has namespaceSelectors: starts or stops the watch. */
  need(wanted: boolean): void {
    if (wanted && this.#informer === undefined) {
      const cache = new NamespaceLabelCache();
      this.#cache = cache;
      const inf = new SupervisedInformer({ client: this.#o.kc, name: 'namespaces', path: '/api/v1/namespaces', cache, ...(this.#o.streamingList === false ? { streamingList: false } : {}) });
      const changed = (obj: KubeObject, gone = false) => {
        if (gone) cache.remove(obj);
        else cache.put(obj);
        this.#o.onChange();
      };
      inf.on('add', (o: KubeObject) => changed(o));
      inf.on('update', (o: KubeObject) => changed(o));
      inf.on('delete', (o: KubeObject) => changed(o, true));
      inf.on('synced', () => this.#o.onChange());
      inf.on('error', (err: unknown) => this.#o.onError?.(err));
      this.#informer = inf;
      void inf.start();
    } else if (!wanted && this.#informer !== undefined) {
      void this.#informer.stop();
      this.#informer = undefined;
      this.#cache = new NamespaceLabelCache();
    }
  }

  /** The watch's refused call ("list namespaces: HTTP 403: ..."), while the apiserver refuses it. */
  forbidden(): string[] {
    const f = this.#informer?.stats.forbidden ?? '';
    return f !== '' ? [f] : [];
  }

  /** True when no watch is needed, or it has read every Namespace once. */
  ready(): boolean {
    return this.#informer === undefined || this.#informer.synced();
  }

  /** The labels of `namespace` (undefined: not known: no watch, not read yet, or no such namespace). */
  labels(namespace: string): Readonly<Record<string, string>> | undefined {
    return this.#informer === undefined ? undefined : this.#cache.labels(namespace);
  }

  async stop(): Promise<void> {
    await this.#informer?.stop();
    this.#informer = undefined;
  }
}
