/**
 * The common interface of Herald's object sources: the Kubernetes API (informers) and a
 * directory of manifest files. Both keep an `ObjectStore` and emit change keys
 * (src/k8s/keys.ts) that the controller coalesces.
 */
import type { EventEmitter } from 'node:events';
import type { Snapshot } from '../k8s/object-store.ts';
import type { ResourceKind } from '../k8s/types.ts';

/** Per-resource status of a source. Times in ms since the epoch (0 = never). */
export interface ResourceStatus {
  /** The kind read; `ConfigMap`: the published node set (src/k8s/node-set.ts), while it is read. */
  kind: ResourceKind | 'ConfigMap';
  synced: boolean;
  /** The resource is not served by the API (ServiceCIDR on clusters older than 1.33). */
  notServed?: boolean;
  objects: number;
  restarts: number;
  errors: number;
  lists: number;
  /** Watch (re)connect attempts. */
  watchConnects: number;
  /** Last time a watch stream opened (ms since the epoch, 0 = never; the manifests source has none). */
  lastWatchConnectAtMs: number;
  /** Last time data arrived (ms since the epoch); staleness = now - lastEventAtMs. */
  lastEventAtMs: number;
  lastError: string;
  /** Listing or watching is refused with 403 (RBAC): "list services: HTTP 403: <apiserver message>". */
  forbidden?: string;
}

/** A problem with one input file (manifest source). `line`/`column` are 1-based. */
export interface FileError {
  path: string;
  line?: number;
  column?: number;
  message: string;
}

/** Status of a source for /readyz, metrics and logs. */
export interface SourceStatus {
  type: 'kubernetes' | 'manifests';
  synced: boolean;
  resources: ResourceStatus[];
  /** Manifest source: files currently rejected (their last good version stays in force). */
  fileErrors?: FileError[];
}

/**
 * A source of Services, EndpointSlices, Nodes and ServiceCIDRs.
 * Events: 'change' (keys: string[]) after objects changed; 'synced' () once when every resource
 * has been read once; 'error' for problems already handled (logs only): KubernetesSource emits
 * (kind: ResourceKind, err: unknown) and also 'restart' (kind, delayMs); ManifestSource emits
 * (e: FileError).
 */
export interface Source extends EventEmitter {
  /** Begin reading. Resolves after the first attempt; never rejects for API or file errors. */
  start(): Promise<void>;
  /** Stop reading and release timers, sockets and watchers. The snapshot stays readable. */
  stop(): Promise<void>;
  /** True once every resource has been read once; stays true afterwards. */
  synced(): boolean;
  /** Live read-only view of the current objects. */
  snapshot(): Snapshot;
  status(): SourceStatus;
}
