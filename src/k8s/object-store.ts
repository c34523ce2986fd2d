/**
 * Snapshot: the read-only view of cluster state that the controller reads, and `ObjectStore`, the mutable
 * in-memory store both sources (Kubernetes informers, manifest files) keep it in. `apply` and `remove` are the one
 * place objects enter and leave it, for both sources: `apply` keeps only the fields Herald reads (trim.ts), and an
 * update that changes none of them (a heartbeat, a Pod reference, managedFields) replaces the object without a change
 * key. The store is also the informers' cache (`cacheOf`): one copy of every object in the process.
 *
 * EndpointSlices are indexed by the Service they belong to (label `kubernetes.io/service-name`,
 * same namespace; discovery.k8s.io/v1 well-known labels), so reading one Service's endpoints costs O(its slices) and
 * one slice change touches at most two Services (old and new label). The index holds one array per Service (most
 * have one slice), replaced, never changed in place: `endpointSlicesFor` hands it out as it is.
 */
import type { EndpointSlice, KubeObject, Node, ResourceKind, Service, ServiceCIDR } from './types.ts';
import type { ConfigKind, HeraldObject } from './herald-kinds.ts';
import { CONFIG_KINDS } from './herald-kinds.ts';
import type { PublishedNodeSet } from './node-set.ts';
import { NODE_SET_KEY } from './node-set.ts';
import { sameContent, trimObject } from './trim.ts';
import { ALL_KEY, heraldChangeKey, nodeChangeKey, objectKey, serviceChangeKey, serviceCIDRChangeKey, serviceKeyOfSlice } from './keys.ts';

/** Read-only view of the cluster state for one reconcile. */
export interface Snapshot {
  /** All Services, any order. */
  services(): Iterable<Service>;
  /** One Service by "ns/name". */
  service(key: string): Service | undefined;
  /** The EndpointSlices labelled for Service "ns/name" (all slices, all address types). */
  endpointSlicesFor(serviceKey: string): readonly EndpointSlice[];
  /** A Node by name. */
  node(name: string): Node | undefined;
  /** All Nodes, any order (every Node the source watches: only this node's unless every Node is watched). */
  nodes(): Iterable<Node>;
  /** All networking.k8s.io ServiceCIDR objects. */
  serviceCIDRs(): Iterable<ServiceCIDR>;
  /** Herald's configuration objects of one kind (herald.io; read in Herald's namespace), any order. */
  heraldObjects(kind: ConfigKind): Iterable<HeraldObject>;
  /**
   * The published node set (node-set.ts) while the source reads it instead of every Node; undefined otherwise (the
   * choice is then computed from `nodes()`).
   */
  nodeSet(): PublishedNodeSet | undefined;
}

/** What an informer needs to know of the objects it has delivered (src/k8s/informer.ts): the store holds them. */
export interface InformerCache {
  /** The resourceVersion of the stored object with the namespace and name of `obj` (undefined: none stored). */
  versionOf(obj: KubeObject): string | undefined;
  /** Every stored object of the kind (a relist deletes those it does not list again). */
  objects(): Iterable<KubeObject>;
}

/** Mutable store implementing `Snapshot`. `apply`/`remove` return the change keys they affect. */
export class ObjectStore implements Snapshot {
  readonly #services = new Map<string, Service>();
  readonly #slices = new Map<string, EndpointSlice>(); // by "ns/sliceName"
  /** Service "ns/name" → its slices (never empty, replaced on every change). */
  readonly #slicesByService = new Map<string, readonly EndpointSlice[]>();
  readonly #nodes = new Map<string, Node>();
  readonly #cidrs = new Map<string, ServiceCIDR>();
  readonly #herald = new Map<ConfigKind, Map<string, HeraldObject>>(CONFIG_KINDS.map((k) => [k, new Map()]));
  #nodeSet: PublishedNodeSet | undefined;

  services(): Iterable<Service> {
    return this.#services.values();
  }

  service(key: string): Service | undefined {
    return this.#services.get(key);
  }

  endpointSlicesFor(serviceKey: string): readonly EndpointSlice[] {
    return this.#slicesByService.get(serviceKey) ?? [];
  }

  node(name: string): Node | undefined {
    return this.#nodes.get(name);
  }

  nodes(): Iterable<Node> {
    return this.#nodes.values();
  }

  serviceCIDRs(): Iterable<ServiceCIDR> {
    return this.#cidrs.values();
  }

  heraldObjects(kind: ConfigKind): Iterable<HeraldObject> {
    return this.#heraldMap(kind).values();
  }

  nodeSet(): PublishedNodeSet | undefined {
    return this.#nodeSet;
  }

  /** Replace the published node set (undefined: no longer read). Returns its change key. */
  setNodeSet(set: PublishedNodeSet | undefined): string[] {
    this.#nodeSet = set;
    return [NODE_SET_KEY];
  }

  #heraldMap(kind: ConfigKind): Map<string, HeraldObject> {
    const m = this.#herald.get(kind);
    if (!m) throw new Error(`object store: unknown kind ${kind}`);
    return m;
  }

  /** Number of objects per kind (for status/metrics). */
  counts(): Record<ResourceKind, number> {
    const herald = Object.fromEntries(CONFIG_KINDS.map((k) => [k, this.#heraldMap(k).size])) as Record<ConfigKind, number>;
    return { Service: this.#services.size, EndpointSlice: this.#slices.size, Node: this.#nodes.size, ServiceCIDR: this.#cidrs.size, ...herald };
  }

  /** All objects of a kind (used by the manifest source to diff file contents). */
  list(kind: ResourceKind): KubeObject[] {
    switch (kind) {
      case 'Service': return [...this.#services.values()];
      case 'EndpointSlice': return [...this.#slices.values()];
      case 'Node': return [...this.#nodes.values()];
      case 'ServiceCIDR': return [...this.#cidrs.values()];
      default: return [...this.#heraldMap(kind).values()];
    }
  }

  /** The store as the cache of the informer of `kind`. */
  cacheOf(kind: ResourceKind): InformerCache {
    const map = this.#map(kind);
    return {
      versionOf: (obj) => map.get(objectKey(obj))?.metadata?.resourceVersion,
      objects: () => map.values(),
    };
  }

  /**
   * Add or replace an object, trimmed to the fields Herald reads (trim.ts). Returns the change keys affected: none
   * when the trimmed object says the same as the stored one (only its resourceVersion is taken over).
   */
  apply(kind: ResourceKind, raw: KubeObject): string[] {
    const obj = trimObject(kind, raw);
    const key = objectKey(obj);
    const map = this.#map(kind);
    const old = map.get(key);
    if (old !== undefined && sameContent(old, obj)) {
      map.set(key, obj);
      if (kind === 'EndpointSlice') this.#indexSlice(obj as EndpointSlice, old as EndpointSlice);
      return [];
    }
    switch (kind) {
      case 'Service':
        this.#services.set(key, obj as Service);
        return [serviceChangeKey(key)];
      case 'EndpointSlice': {
        const keys = this.#removeSlice(key);
        const slice = obj as EndpointSlice;
        this.#slices.set(key, slice);
        const svc = this.#indexSlice(slice);
        if (svc !== undefined) keys.add(serviceChangeKey(svc));
        return [...keys];
      }
      case 'Node':
        this.#nodes.set(key, obj as Node);
        return [nodeChangeKey(key)];
      case 'ServiceCIDR':
        this.#cidrs.set(key, obj as ServiceCIDR);
        return [serviceCIDRChangeKey(key)];
      default:
        this.#heraldMap(kind).set(key, obj);
        return [heraldChangeKey(kind, key)];
    }
  }

  /** Remove an object (only its namespace/name is read). Returns the change keys affected. */
  remove(kind: ResourceKind, obj: KubeObject): string[] {
    const key = objectKey(obj);
    switch (kind) {
      case 'Service':
        return this.#services.delete(key) ? [serviceChangeKey(key)] : [];
      case 'EndpointSlice':
        return [...this.#removeSlice(key)];
      case 'Node':
        return this.#nodes.delete(key) ? [nodeChangeKey(key)] : [];
      case 'ServiceCIDR':
        return this.#cidrs.delete(key) ? [serviceCIDRChangeKey(key)] : [];
      default:
        return this.#heraldMap(kind).delete(key) ? [heraldChangeKey(kind, key)] : [];
    }
  }

  /** Remove everything. Returns [ALL_KEY]. */
  clear(): string[] {
    this.#services.clear();
    this.#slices.clear();
    this.#slicesByService.clear();
    this.#nodes.clear();
    this.#cidrs.clear();
    for (const m of this.#herald.values()) m.clear();
    this.#nodeSet = undefined;
    return [ALL_KEY];
  }

  #map(kind: ResourceKind): Map<string, KubeObject> {
    switch (kind) {
      case 'Service': return this.#services;
      case 'EndpointSlice': return this.#slices;
      case 'Node': return this.#nodes;
      case 'ServiceCIDR': return this.#cidrs;
      default: return this.#heraldMap(kind);
    }
  }

  /**
   * Index `slice` by its Service, in the place of `replaces` (the object stored before under the same key, with the
   * same content) when given; returns the Service's key. The index holds the stored objects themselves.
   */
  #indexSlice(slice: EndpointSlice, replaces?: EndpointSlice): string | undefined {
    const svc = serviceKeyOfSlice(slice);
    if (svc === undefined) return undefined;
    const list = this.#slicesByService.get(svc) ?? [];
    const i = replaces === undefined ? -1 : list.indexOf(replaces);
    this.#slicesByService.set(svc, i < 0 ? list.concat(slice) : list.with(i, slice));
    return svc;
  }

  #removeSlice(key: string): Set<string> {
    const keys = new Set<string>();
    const old = this.#slices.get(key);
    if (!old) return keys;
    this.#slices.delete(key);
    const svc = serviceKeyOfSlice(old);
    if (svc !== undefined) {
      const list = this.#slicesByService.get(svc) ?? [];
      const i = list.indexOf(old);
      if (list.length === 1 && i === 0) this.#slicesByService.delete(svc);
      else if (i >= 0) this.#slicesByService.set(svc, list.toSpliced(i, 1));
      keys.add(serviceChangeKey(svc));
    }
    return keys;
  }
}
