/**
 * The components that read or write the cluster (components.ts), shared by `herald run` and `herald controller`:
 * the source of objects (manifests, or the apiserver with Herald's objects and the peers' Secrets), the status
 * writer of the configuration objects (src/status/object-status-writer.ts, Lease `herald-status`) and the LoadBalancer
 * allocator (src/ipam/run.ts, Lease `herald-allocator`). Each loads its modules only when the configuration needs it.
 */
import type { Logger } from 'pino';
import type { Config } from '../config/schema.ts';
import type { KubeClient, KubeClientOptions, RequestObserver } from '../k8s/client.ts';
import { ForbiddenCalls } from '../k8s/forbidden.ts';
import type { SecretCache } from '../k8s/secrets.ts';
import type { RunningAllocator } from '../ipam/run.ts';
import type { HeraldMetrics } from '../metrics/metrics.ts';
import type { KubernetesSource } from '../sources/kubernetes.ts';
import type { Source } from '../sources/source.ts';
import { boundsFanOut, selectorKeys } from '../controller/steering.ts';
import { evaluateNode } from '../controller/node-eligibility.ts';
import type { NodeSetSpec } from '../status/node-set-publisher.ts';
import type { ObjectStatusWriter } from '../status/object-status-writer.ts';
import type { Component } from './components.ts';
import type { InForce } from './config-in-force.ts';

/**
 * How long a stop waits for the Leases to be given up (ms), at the source's stop, the last: meanwhile the components
 * stopped between (the BGP sessions) have stopped. Well inside the DaemonSet's terminationGracePeriodSeconds (45 s).
 */
export const LEASE_RELEASE_MS = 3000;

/**
 * The Lease releases of a stop (the status writer's, the allocator's): begun when their components stop, without
 * holding the stops after them (the BGP sessions end whatever the apiserver does), and awaited, for at most
 * {@link LEASE_RELEASE_MS}, by the source's stop, which then closes the Kubernetes client, so that a request the
 * apiserver never answers cannot hold the exit until the kubelet's SIGKILL (docs/decisions.md "Stop modes").
 */
export class LeaseReleases {
  readonly #pending: Promise<unknown>[] = [];

  /** A release begun (its failure is the elector's to report). */
  begin(release: Promise<unknown>): void {
    this.#pending.push(release.catch(() => undefined));
  }

  /** True when every release begun has ended within `ms`; false when the time ran out first. */
  async ended(ms: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
    try {
      return await Promise.race([Promise.all(this.#pending).then(() => true as const), late]);
    } finally {
      clearTimeout(timer);
    }
  }
}

/** Kubernetes calls refused by RBAC: warned once each, shown in `herald status` until they succeed. */
export function forbiddenCalls(log: Logger): ForbiddenCalls {
  return new ForbiddenCalls({
    onForbidden: (c) => log.warn({ call: c.call, err: c.message }, 'Kubernetes API call forbidden (403): grant it in the RBAC rules (deploy/kubernetes/rbac.yaml)'),
    onAllowed: (call) => log.info({ call }, 'Kubernetes API call allowed again'),
  });
}

/**
 * Test hook (docs/development.md): HERALD_TEST_STREAMING_LIST=off makes every informer read its collection by LIST (the
 * path of apiservers without streaming lists).
 */
export function streamingListFromEnv(env: NodeJS.ProcessEnv): { streamingList?: false } {
  return env['HERALD_TEST_STREAMING_LIST'] === 'off' ? { streamingList: false } : {};
}

/** The source of objects, and with the apiserver its client, the Secrets' cache and Herald's namespace. */
export interface SourceParts {
  readonly source?: Source;
  /** The source, when it is the apiserver's (its node-set watch follows the configuration: `followNodeSet`). */
  readonly kube?: KubernetesSource;
  readonly kc?: KubeClient;
  readonly secrets?: SecretCache;
  readonly namespace?: string;
}

/**
 * What the Kubernetes client reports: requests, waits and `Retry-After` as metrics, a token file that cannot be read
 * again (the last token read is still sent) as a warning.
 */
export function kubernetesObserver(metrics: HeraldMetrics, log: Logger): RequestObserver {
  return { ...metrics.kubernetesObserver(), onTokenFileError: (reason) => log.warn({ err: reason }, 'cannot read the Kubernetes token file again: the last token read is still sent') };
}

/**
 * The source of the configuration: manifests, or the apiserver (Services, EndpointSlices, this node's Node — the
 * published node set while an advertisement sets `maxNodesPerVip` —, ServiceCIDRs and Herald's objects in its namespace,
 * src/k8s/client.ts `heraldNamespace`) with the Secrets of `passwordSecret` peers.
 * `herald controller` reads Services and Herald's objects only (no node: `scope` `controller`).
 * @param client the client's role, version and observer (User-Agent, metrics)
 */
export async function createSource(cfg: Config, env: NodeJS.ProcessEnv, forbidden: ForbiddenCalls, client: KubeClientOptions, scope: { nodeName: string } | 'controller'): Promise<SourceParts> {
  if (!cfg.source) return {};
  if (cfg.source.manifests !== undefined) {
    const { ManifestSource } = await import('../sources/manifests.ts');
    return { source: new ManifestSource({ dir: cfg.source.manifests }) };
  }
  const { heraldNamespace, loadKubeConfig } = await import('../k8s/client.ts');
  const { KubernetesSource } = await import('../sources/kubernetes.ts');
  const { SecretCache, apiSecretReader } = await import('../k8s/secrets.ts');
  const k = cfg.source.kubernetes;
  const limit = { ...(k?.qps !== undefined ? { qps: k.qps } : {}), ...(k?.burst !== undefined ? { burst: k.burst } : {}) };
  const { kc } = loadKubeConfig(k?.kubeconfig, env, { ...client, limit });
  const namespace = heraldNamespace(env);
  const secrets = new SecretCache({ read: apiSecretReader(kc, namespace, forbidden), namespace });
  // This node's Node by name; the published node set only while maxNodesPerVip, from the file or a BGPAdvertisement,
  // needs it (docs/decisions.md "Node watch"). The status writer reads every Node itself while it leads, and publishes
  // the set.
  // Test hook (docs/development.md): HERALD_TEST_MIN_WATCH_TIMEOUT_SEC=N makes every watch ask for N to 2N seconds.
  const minWatch = Number(env['HERALD_TEST_MIN_WATCH_TIMEOUT_SEC'] ?? '');
  const watch = Number.isFinite(minWatch) && minWatch > 0 ? { minWatchTimeoutSec: minWatch } : {};
  const streaming = streamingListFromEnv(env);
  const reads = scope === 'controller' ? { nodes: false, endpointSlices: false, serviceCIDRs: false } : { nodeName: scope.nodeName, followNodeSet: boundsFanOut(cfg.advertisements) };
  const kube = new KubernetesSource({ kc, heraldNamespace: namespace, ...reads, ...watch, ...streaming });
  return { source: kube, kube, kc, secrets, namespace };
}

/**
 * The source as a component: its errors logged and its watch restarts counted from the start. In `herald run` the
 * source is started by whoever reads it first (the daemon's controller) and stopped by it; with `runs` this component
 * starts and stops it (`herald controller`). The Secrets' cache stops here. Its stop, the last, waits for the Lease
 * releases (at most {@link LEASE_RELEASE_MS}) and closes the Kubernetes client.
 */
export function sourceComponent(parts: SourceParts, o: { log: Logger; metrics: HeraldMetrics; releases: LeaseReleases; runs?: boolean }): Component {
  const { source } = parts;
  // KubernetesSource emits (kind, err), ManifestSource (fileError): name the resource when there is one.
  source?.on('error', (...args: unknown[]) => o.log.warn({ ...(args.length > 1 ? { kind: args[0] } : {}), err: args[args.length - 1] }, 'source error'));
  source?.on('restart', (kind: string) => o.metrics.kubernetesWatchRestarts.inc({ resource: String(kind) }));
  return {
    name: 'source',
    start: async () => {
      if (o.runs) await source?.start();
    },
    async stop() {
      if (o.runs) await source?.stop().catch(() => undefined);
      parts.secrets?.stop();
      if (!(await o.releases.ended(LEASE_RELEASE_MS))) {
        o.log.warn({ waitedMs: LEASE_RELEASE_MS }, 'Leases not released: the apiserver did not answer in time (other nodes take them over when they expire)');
      }
      parts.kc?.close();
    },
  };
}

/** Options of {@link objectStatusComponent}. */
export interface ObjectStatusOptions {
  readonly kc: KubeClient;
  readonly namespace: string;
  /** This instance's holder identity of the Lease `herald-status`. */
  readonly identity: string;
  readonly source: Source;
  /** The configuration in force: the merge whose verdicts the conditions show, the pools whose usage they count. */
  readonly inForce: InForce;
  readonly loadBalancerClass: string | undefined;
  readonly forbidden: ForbiddenCalls;
  readonly log: Logger;
  readonly metrics: HeraldMetrics;
  /** Where its stop begins the Lease release (awaited by the source's stop). */
  readonly releases: LeaseReleases;
  /** The environment (its informers follow the test hook HERALD_TEST_STREAMING_LIST). */
  readonly env: NodeJS.ProcessEnv;
}

/** The elected writer of the configuration objects' conditions (src/status/object-status-writer.ts). */
export interface ObjectStatusComponent extends Component {
  /** Its node-status informer's 403 (for `herald status`). */
  forbidden(): string[];
  /** True while this instance holds the Lease (and so writes). */
  isLeader(): boolean;
}

/** See {@link ObjectStatusComponent}; the writer is built here, elected from its start. */
export async function objectStatusComponent(o: ObjectStatusOptions): Promise<ObjectStatusComponent> {
  const { ObjectStatusWriter } = await import('../status/object-status-writer.ts');
  const { poolUsage } = await import('../ipam/usage.ts');
  const { parsePool } = await import('../ipam/pool.ts');
  const writer: ObjectStatusWriter = new ObjectStatusWriter({
    kc: o.kc,
    namespace: o.namespace,
    identity: o.identity,
    source: o.source,
    merged: () => o.inForce.merged,
    // Pools in force are valid (the schema checked their addresses); usage as the allocator counts it.
    poolUsage: () => poolUsage(o.source.snapshot().services(), (o.inForce.config.pools ?? []).map((p, i) => parsePool(p, i)), o.loadBalancerClass !== undefined ? { loadBalancerClass: o.loadBalancerClass } : {}),
    forbidden: o.forbidden,
    log: o.log,
    onWrite: (kind, result) => o.metrics.objectStatusWrites.inc({ kind, result }),
    nodeSet: () => nodeSetSpec(o.inForce.merged.config),
    onNodeSetWrite: (result) => o.metrics.nodeSetWrites.inc({ result }),
    ...streamingListFromEnv(o.env),
  });
  o.metrics.setStatusWriterProvider(() => writer);
  return {
    name: 'object status',
    start: () => writer.start(),
    stop: () => o.releases.begin(writer.stop()),
    forbidden: () => writer.forbidden(),
    isLeader: () => writer.isLeader(),
  };
}

/** Options of {@link allocatorComponent}. */
export interface AllocatorOptions {
  readonly kc: KubeClient | undefined;
  readonly source: Source | undefined;
  /** The configuration in force: the pools (the file's and IPAddressPool objects'), read at every pass. */
  readonly inForce: InForce;
  /** This instance's holder identity of the Lease `herald-allocator`. */
  readonly identity: string;
  readonly loadBalancerClass: string | undefined;
  readonly env: NodeJS.ProcessEnv;
  readonly forbidden: ForbiddenCalls;
  readonly log: Logger;
  readonly metrics: HeraldMetrics;
  /** Where its stop begins the Lease release (awaited by the source's stop). */
  readonly releases: LeaseReleases;
}

/** The LoadBalancer allocator: started once the configuration in force has a pool (`check` after each change). */
export interface AllocatorComponent extends Component {
  /** The configuration in force may have changed: start the allocator if it now has a pool. */
  check(): void;
  /** The allocator's refused reads (RunningAllocator.forbidden), empty while it does not run. */
  forbidden(): string[];
}

/**
 * LoadBalancer IPAM needs the apiserver (it writes Service status): pools with another source are reported and
 * ignored. With it, the allocator starts once the configuration in force (the file's pools and IPAddressPool
 * objects) has a pool, and reads the pools in force at every pass.
 */
export function allocatorComponent(o: AllocatorOptions): AllocatorComponent {
  let allocator: RunningAllocator | undefined;
  let started = false;
  let stopped = false;
  const startOnce = async () => {
    const { kc, source } = o;
    if (!started || stopped || allocator !== undefined || !kc || !source || (o.inForce.config.pools ?? []).length === 0) return;
    try {
      const { startAllocator } = await import('../ipam/run.ts');
      if (stopped || allocator !== undefined) return;
      allocator = startAllocator({
        kc,
        source,
        pools: () => o.inForce.config.pools ?? [],
        metallbAnnotations: () => o.inForce.config.compatibility.metallbAnnotations,
        nodeName: o.identity,
        log: o.log,
        env: o.env,
        ...streamingListFromEnv(o.env ?? {}),
        forbidden: o.forbidden,
        onEventDropped: (reason) => o.metrics.kubernetesEventsDropped.inc({ component: 'herald-allocator', reason }),
        ...(o.loadBalancerClass !== undefined ? { loadBalancerClass: o.loadBalancerClass } : {}),
      });
      const a = allocator;
      o.metrics.setAllocatorProvider(() => a);
    } catch (err) {
      o.log.error({ err: (err as Error).message }, 'cannot start the LoadBalancer allocator; announcing continues');
    }
  };
  return {
    name: 'allocator',
    async start() {
      started = true;
      if ((o.inForce.config.pools ?? []).length > 0 && !o.kc) o.log.warn('pools are configured but need source.kubernetes: no LoadBalancer addresses are allocated');
      await startOnce();
    },
    check: () => void startOnce(),
    forbidden: () => allocator?.forbidden() ?? [],
    stop() {
      stopped = true;
      if (allocator) o.releases.begin(allocator.stop());
    },
  };
}

/**
 * What the published node set carries under `config` (the file's advertisements with the objects' merged in):
 * undefined while no advertisement sets `maxNodesPerVip`; else the label keys their node selectors read, and each
 * Node judged as its own Herald judges itself (src/controller/node-eligibility.ts, `ignoreExcludeLB` included).
 */
export function nodeSetSpec(config: Config): NodeSetSpec | undefined {
  const bounded = (config.advertisements ?? []).filter((a) => a.maxNodesPerVip !== undefined);
  if (bounded.length === 0) return undefined;
  const opts = { ignoreExcludeLabel: config.ignoreExcludeLB ?? false };
  return {
    labelKeys: [...new Set(bounded.flatMap((a) => selectorKeys(a)))],
    entry: (node) => {
      const name = node.metadata?.name;
      if (name === undefined || name === '') return undefined;
      const st = evaluateNode(node, name, opts);
      return { name, eligible: st.eligible, labels: st.labels };
    },
  };
}
