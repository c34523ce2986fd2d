/**
 * Runs LoadBalancer IP allocation inside `herald run` when `pools` are configured with the Kubernetes source: one
 * LeaderElector per instance (Lease `herald-allocator` in Herald's namespace, holder = node name; docs/decisions.md "Pools") and an
 * AllocatorController that acts only while this instance leads. Passes are triggered by Service changes from the
 * source, by winning the election, and every `resyncSec` (level-triggered: a missed event is healed by the next pass).
 *
 * Herald's namespace: src/k8s/client.ts `heraldNamespace`.
 */
import type { KubeClient } from '../k8s/client.ts';
import type { Logger } from 'pino';
import type { Source } from '../sources/source.ts';
import { EventRecorder, KubernetesEventSink, repeatAfterFromEnv } from '../events/recorder.ts';
import { heraldNamespace } from '../k8s/client.ts';
import type { EventDropReason } from '../events/recorder.ts';
import { ForbiddenCalls } from '../k8s/forbidden.ts';
import { LeaderElector, type LeaseStore } from '../leader/election.ts';
import { KubernetesLeaseStore } from '../leader/lease-store.ts';
import { AllocatorController } from './controller.ts';
import { KubernetesServiceStatusWriter, type ServiceStatusWriter } from '../status/service-status.ts';
import { NamespaceLabels } from './namespaces.ts';
import { parsePool, type Pool, type PoolConfig } from './pool.ts';
import { poolUsage } from './usage.ts';
import type { PoolUsage } from '../status/object-conditions.ts';


/** The allocator's Lease, in Herald's namespace (docs/decisions.md "Pools"). */
const LEASE_NAME = 'herald-allocator';

export interface AllocatorRunOptions {
  readonly kc: KubeClient;
  readonly source: Source;
  /** The pools in force, read at every pass (the file's and IPAddressPool objects': the daemon's merged configuration). */
  readonly pools: () => readonly PoolConfig[];
  /** `compatibility.metallbAnnotations` in force, read at every pass (default false). */
  readonly metallbAnnotations?: () => boolean;
  readonly nodeName: string;
  readonly loadBalancerClass?: string;
  readonly log: Logger;
  readonly env?: NodeJS.ProcessEnv;
  /** false: its informers read by LIST (the test hook HERALD_TEST_STREAMING_LIST: src/daemon/cluster-components.ts). */
  readonly streamingList?: boolean;
  readonly resyncSec?: number;
  /** Records the Lease, status and Event calls refused with 403 (default: a private registry). */
  readonly forbidden?: ForbiddenCalls;
  /** Called for each allocation Event lost (rate limit, failed write), e.g. to count it in metrics. */
  readonly onEventDropped?: (reason: EventDropReason) => void;
}

/** A running allocator: `isLeader()` for status, `stop()` releases the Lease. */
export interface RunningAllocator {
  /** The Lease elected on, "namespace/name". */
  readonly lease: string;
  isLeader(): boolean;
  stats(): { passes: number; writes: number; writeErrors: number; leader: boolean; holder: string | undefined };
  /** How full each pool is, from this node's view of the Services (usage.ts). */
  usage(): PoolUsage[];
  /** Services the last pass left without addresses, by why (empty while not leading). */
  failed(): ReadonlyMap<string, number>;
  /** Refused reads of its own informers (the Namespaces' labels), as "verb resource: message". */
  forbidden(): string[];
  stop(): Promise<void>;
}

/**
 * Starts election and allocation.
 * @throws PoolError for a pool whose addresses do not parse (the config schema has already checked their shape).
 */
export function startAllocator(o: AllocatorRunOptions): RunningAllocator {
  const namespace = heraldNamespace(o.env);
  const log = o.log.child({ component: 'allocator' });
  // Parsed again only when the configuration in force changed; a pool that does not parse keeps the previous set.
  let parsedFrom = o.pools();
  let pools: Pool[] = parsedFrom.map((p, i) => parsePool(p, i));
  const poolsNow = (): Pool[] => {
    const cfg = o.pools();
    if (cfg === parsedFrom) return pools;
    parsedFrom = cfg;
    try {
      pools = cfg.map((p, i) => parsePool(p, i));
    } catch (err) {
      log.error({ err: (err as Error).message }, 'pools not applied; the previous pools stay');
    }
    return pools;
  };
  const forbidden = o.forbidden ?? new ForbiddenCalls();
  const leases = new KubernetesLeaseStore(o.kc, namespace, LEASE_NAME);
  const store: LeaseStore = {
    get: () => forbidden.track('get leases', () => leases.get()),
    create: (r) => forbidden.track('create leases', () => leases.create(r)),
    update: (r, rv) => forbidden.track('update leases', () => leases.update(r, rv)),
  };
  const statusWriter = new KubernetesServiceStatusWriter(o.kc);
  const writer: ServiceStatusWriter = { patchIngress: (s, ips, rv) => forbidden.track('patch services/status', () => statusWriter.patchIngress(s, ips, rv)) };
  const elector = new LeaderElector({ identity: o.nodeName, store });
  const recorder = new EventRecorder(new KubernetesEventSink(o.kc, 'herald-allocator', o.nodeName, forbidden), {
    ...repeatAfterFromEnv(o.env ?? process.env),
    onError: (err, e) => log.warn({ err: (err as Error).message, service: e.service, reason: e.reason }, 'cannot record event'),
    onDropped: (_e, reason) => o.onEventDropped?.(reason),
  });
  // The Namespaces' labels, read while some pool in force has namespaceSelectors.
  const namespaceLabels = new NamespaceLabels({ kc: o.kc, ...(o.streamingList === false ? { streamingList: false } : {}), onChange: () => pass(), onError: (err) => log.warn({ err: (err as Error).message }, 'reading the Namespaces failed (retried)') });
  /** True when the Namespaces needed (or none) are read: a pass waits for them rather than refuse on unknown labels. */
  const namespacesReady = (): boolean => {
    namespaceLabels.need(poolsNow().some((p) => (p.config.namespaceSelectors?.length ?? 0) > 0));
    return namespaceLabels.ready();
  };
  const controller = new AllocatorController({
    services: () => [...o.source.snapshot().services()],
    pools: poolsNow,
    planOptions: () => ({ metallbAnnotations: o.metallbAnnotations?.() ?? false, namespaceLabels: (ns) => namespaceLabels.labels(ns) }),
    isLeader: () => elector.isLeader() && o.source.synced() && namespacesReady(),
    writer,
    recorder,
    ...(o.loadBalancerClass !== undefined ? { loadBalancerClass: o.loadBalancerClass } : {}),
    onError: (err, service) => log.warn({ service, err: (err as Error).message }, 'status write failed; retried on the next pass'),
  });
  const pass = () => void controller.reconcile().catch((err: unknown) => log.error({ err }, 'allocation pass failed'));
  elector.on('started', () => {
    log.info({ namespace, lease: LEASE_NAME }, 'became the allocator leader');
    pass();
  });
  elector.on('stopped', () => log.warn('stopped leading the allocator'));
  let stopping = false; // a stop closes the client under its last requests: nothing is retried
  elector.on('error', (err: unknown) => {
    if (!stopping) log.warn({ err: (err as Error).message }, 'leader election error');
  });
  const onChange = (keys: readonly string[]) => {
    if (keys.some((k) => !k.startsWith('node:'))) pass();
  };
  o.source.on('change', onChange);
  o.source.on('synced', pass);
  const timer = setInterval(pass, (o.resyncSec ?? 30) * 1000);
  timer.unref();
  elector.start();
  log.info({ pools: pools.map((p) => p.config.name), namespace }, 'allocator started');
  return {
    lease: `${namespace}/${LEASE_NAME}`,
    isLeader: () => elector.isLeader(),
    stats: () => ({ ...controller.stats, leader: elector.isLeader(), holder: elector.observedHolder() }),
    failed: () => (elector.isLeader() ? controller.failed : new Map()),
    forbidden: () => namespaceLabels.forbidden(),
    usage: () => poolUsage(o.source.snapshot().services(), poolsNow(), o.loadBalancerClass !== undefined ? { loadBalancerClass: o.loadBalancerClass } : {}),
    stop: async () => {
      stopping = true;
      clearInterval(timer);
      o.source.off('change', onChange);
      o.source.off('synced', pass);
      await namespaceLabels.stop();
      await elector.stop();
    },
  };
}
