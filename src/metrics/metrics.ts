/**
 * Every Prometheus metric Herald exports, on a private prom-client Registry (not the global one,
 * so tests and several daemons in one process never collide). docs/metrics.md lists them.
 *
 * State is read at scrape time from providers, so it can never drift from what the admin API shows: sessions and
 * message counters from the peers (`setPeersProvider`; message counters are kept monotonic across session restarts
 * by adding deltas of the per-session counts), each VIP's announced state from the Service decisions
 * (`setVipsProvider`: the VIPs this node handles, src/daemon/admin-view.ts `handledVips`), pool usage and allocator leadership from the allocator (`setAllocatorProvider`).
 * Everything else is observed by the daemon as it happens. A removed peer's series go with it (`removePeer`).
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { PeerView } from '../admin/view.ts';
import type { PoolUsage } from '../status/object-conditions.ts';

/** Metric name prefix. */
export const PREFIX = 'herald_';

/** What the metrics read from a running LoadBalancer allocator (src/ipam/run.ts). */
export interface AllocatorMetricsView {
  /** The Lease elected on, "namespace/name". */
  readonly lease: string;
  isLeader(): boolean;
  usage(): PoolUsage[];
  /** Services the allocator's last pass left without addresses, by why (empty while not leading). */
  failed(): ReadonlyMap<string, number>;
}

/**
 * One VIP of a Service that this node handles (announces, or would once what blocks it now clears), one per kind of
 * VIP: the series of `herald_vip_announced`.
 */
export interface HandledVip {
  readonly service: string;
  readonly address: string;
  readonly announced: boolean;
}

/**
 * A Gauge whose `collect` builds every series from scratch on each read (a scrape), and that lets them go once read:
 * `herald_vip_announced` has one series per Service VIP (10,000 Services: some 2 MiB of label objects and hash keys
 * held from one scrape to the next for nothing; docs/benchmarks.md "Where the memory goes"). What a read returns is
 * the same as a Gauge's.
 */
class ScrapeGauge<T extends string> extends Gauge<T> {
  override async get(): ReturnType<Gauge<T>['get']> {
    try {
      return await super.get();
    } finally {
      this.reset();
    }
  }
}

/** Owner of the registry and all metric objects. */
/** Kinds of refused input always exported (0 when none): manifest files and Herald's configuration objects. */
const REFUSED_KINDS = ['file', 'BGPPeer', 'BGPAdvertisement', 'IPAddressPool', 'BGPNodeConfigOverride'];

export class HeraldMetrics {
  readonly registry: Registry;
  readonly sessionUp: Gauge<'peer'>;
  readonly sessionStateChanges: Counter<'peer' | 'from' | 'to'>;
  readonly messagesSent: Counter<'peer' | 'type'>;
  readonly messagesReceived: Counter<'peer' | 'type'>;
  readonly notifications: Counter<'peer' | 'direction' | 'code' | 'subcode'>;
  readonly prefixesAdvertised: Gauge<'peer'>;
  readonly prefixesReceived: Gauge<'peer'>;
  readonly updateSendDuration: Histogram<'peer'>;
  readonly healthCheckResults: Counter<'result'>;
  readonly healthCheckDuration: Histogram<'result'>;
  readonly reconcileDuration: Histogram;
  readonly desiredRoutes: Gauge;
  readonly kubernetesWatchRestarts: Counter<'resource'>;
  readonly kubernetesLastSync: Gauge<'resource'>;
  readonly kubernetesWatchLastConnect: Gauge<'resource'>;
  readonly kubernetesEventsDropped: Counter<'component' | 'reason'>;
  readonly kubernetesRequests: Counter<'verb' | 'resource' | 'code'>;
  readonly kubernetesThrottleWait: Counter;
  readonly kubernetesRetryAfter: Counter;
  readonly metricsRefused: Counter<'reason'>;
  readonly objectStatusWrites: Counter<'kind' | 'result'>;
  /** Writes of the published node set's shards (src/status/node-set-publisher.ts), by result. */
  readonly nodeSetWrites: Counter<'result'>;
  readonly statusWriterLeader: Gauge<'lease'>;
  readonly buildInfo: Gauge<'version'>;
  readonly configReloads: Counter<'result'>;
  readonly configLastReloadSuccessful: Gauge;
  readonly configLastReloadSuccessTime: Gauge;
  readonly vipAnnounced: Gauge<'service' | 'address'>;
  readonly tenantInputsRefused: Gauge<'reason'>;
  readonly ipamPoolAddresses: Gauge<'pool' | 'family' | 'state'>;
  readonly ipamLeader: Gauge<'lease'>;
  readonly ipamAllocationsFailed: Gauge<'reason'>;
  readonly drained: Gauge;
  readonly nodeDeparting: Gauge;
  readonly quarantinedObjects: Gauge<'kind'>;
  readonly refusedInputs: Gauge<'kind'>;
  readonly bfdSessionUp: Gauge<'peer'>;
  readonly bfdDetectionTime: Gauge<'peer'>;
  readonly bfdStateChanges: Counter<'peer' | 'from' | 'to'>;
  readonly bfdDiscards: Counter<'peer' | 'reason'>;

  private peersProvider: () => PeerView[] = () => [];
  private vipsProvider: () => Iterable<HandledVip> = () => [];
  private refusalsProvider: () => ReadonlyMap<string, number> = () => new Map();
  private allocatorProvider: () => AllocatorMetricsView | undefined = () => undefined;
  private statusWriterProvider: () => { readonly lease: string; isLeader(): boolean } | undefined = () => undefined;
  /** Last per-session message counts seen, to turn them into monotonic counters. */
  private readonly lastCounts = new Map<string, number>();
  /** Per peer, how to remove each series it has in a counter or histogram (key: metric name and label values). */
  private readonly peerSeries = new Map<string, Map<string, () => void>>();

  /**
   * @param opts.version Herald's version (`herald_build_info`); the node is the target's label, not a metric's
   * @param opts.defaultMetrics also export process_* and nodejs_* metrics (default true)
   */
  constructor(opts: { version: string; defaultMetrics?: boolean }) {
    this.registry = new Registry();
    const registers = [this.registry];
    // eslint-disable-next-line @typescript-eslint/no-this-alias
    const self = this;
    this.sessionUp = new Gauge({
      name: `${PREFIX}bgp_session_up`,
      help: '1 when the BGP session with the peer is Established, else 0.',
      labelNames: ['peer'],
      registers,
      collect() {
        this.reset();
        for (const p of self.peersProvider()) this.set({ peer: p.name }, p.state === 'Established' ? 1 : 0);
      },
    });
    this.sessionStateChanges = new Counter({
      name: `${PREFIX}bgp_session_state_changes_total`,
      help: 'BGP FSM state transitions, by peer and from/to state.',
      labelNames: ['peer', 'from', 'to'],
      registers,
    });
    this.messagesSent = new Counter({
      name: `${PREFIX}bgp_messages_sent_total`,
      help: 'BGP messages sent, by peer and message type.',
      labelNames: ['peer', 'type'],
      registers,
      collect() {
        self.syncMessageCounters();
      },
    });
    this.messagesReceived = new Counter({
      name: `${PREFIX}bgp_messages_received_total`,
      help: 'BGP messages received, by peer and message type.',
      labelNames: ['peer', 'type'],
      registers,
      collect() {
        self.syncMessageCounters();
      },
    });
    this.notifications = new Counter({
      name: `${PREFIX}bgp_notifications_total`,
      help: 'NOTIFICATION messages, by peer, direction (sent/received), error code and subcode.',
      labelNames: ['peer', 'direction', 'code', 'subcode'],
      registers,
    });
    this.prefixesAdvertised = new Gauge({
      name: `${PREFIX}bgp_prefixes_advertised`,
      help: "Prefixes in the peer's Adj-RIB-Out (advertised to it).",
      labelNames: ['peer'],
      registers,
      collect() {
        this.reset();
        for (const p of self.peersProvider()) this.set({ peer: p.name }, p.prefixes.sent);
      },
    });
    this.prefixesReceived = new Gauge({
      name: `${PREFIX}bgp_prefixes_received`,
      help: 'Prefixes the peer announced to us (counted, never installed).',
      labelNames: ['peer'],
      registers,
      collect() {
        this.reset();
        for (const p of self.peersProvider()) this.set({ peer: p.name }, p.prefixes.received);
      },
    });
    this.updateSendDuration = new Histogram({
      name: `${PREFIX}bgp_update_send_duration_seconds`,
      help: 'Time from a desired-route change to the last UPDATE for it handed to the socket, seconds.',
      labelNames: ['peer'],
      buckets: [0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10],
      registers,
    });
    this.healthCheckResults = new Counter({
      name: `${PREFIX}health_check_results_total`,
      help: 'Health-check probe results (result = ok or a failure reason code).',
      labelNames: ['result'],
      registers,
    });
    this.healthCheckDuration = new Histogram({
      name: `${PREFIX}health_check_duration_seconds`,
      help: 'Duration of one health-check probe, seconds.',
      labelNames: ['result'],
      buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers,
    });
    this.reconcileDuration = new Histogram({
      name: `${PREFIX}reconcile_duration_seconds`,
      help: 'Time to compute the desired routes and hand them to the speaker, seconds.',
      buckets: [0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5],
      registers,
    });
    this.desiredRoutes = new Gauge({ name: `${PREFIX}desired_routes`, help: 'Routes this node wants announced (after health gating).', registers });
    this.kubernetesWatchRestarts = new Counter({
      name: `${PREFIX}kubernetes_watch_restarts_total`,
      help: 'Kubernetes watch restarts, by resource.',
      labelNames: ['resource'],
      registers,
    });
    this.kubernetesLastSync = new Gauge({
      name: `${PREFIX}kubernetes_last_sync_timestamp_seconds`,
      help: 'Unix time of the last complete list or watch event, by resource.',
      labelNames: ['resource'],
      registers,
    });
    this.kubernetesWatchLastConnect = new Gauge({
      name: `${PREFIX}kubernetes_watch_last_connect_timestamp_seconds`,
      help: 'Unix time the last watch stream opened, by resource (a working watch of a quiet resource reopens every 5 to 10 minutes).',
      labelNames: ['resource'],
      registers,
    });
    this.kubernetesEventsDropped = new Counter({
      name: `${PREFIX}kubernetes_events_dropped_total`,
      help: 'Kubernetes Events lost, by recording component (herald, herald-controller, herald-allocator) and reason (rateLimited, sendFailed).',
      labelNames: ['component', 'reason'],
      registers,
    });
    this.kubernetesRequests = new Counter({
      name: `${PREFIX}kubernetes_requests_total`,
      help: 'Requests to the Kubernetes apiserver, by verb (get, list, watch, create, update, patch, delete), resource (plural[/subresource]) and code (HTTP status, or error).',
      labelNames: ['verb', 'resource', 'code'],
      registers,
    });
    this.kubernetesThrottleWait = new Counter({
      name: `${PREFIX}kubernetes_client_throttle_wait_seconds_total`,
      help: 'Time requests to the apiserver waited for the client-side limit (source.kubernetes.qps, burst), seconds.',
      registers,
    });
    this.kubernetesRetryAfter = new Counter({
      name: `${PREFIX}kubernetes_retry_after_total`,
      help: 'Answers of the apiserver asking to retry later (429, or 5xx with Retry-After) that Herald waited out before sending the request again.',
      registers,
    });
    this.metricsRefused = new Counter({
      name: `${PREFIX}metrics_refused_total`,
      help: 'Requests and connections the metrics-only listener refused, by reason: rate (over its request rate, answered 429) or connections (over its connection cap, closed at once).',
      labelNames: ['reason'],
      registers,
    });
    this.objectStatusWrites = new Counter({
      name: `${PREFIX}object_status_writes_total`,
      help: "Writes of the conditions of Herald's configuration objects by the elected status writer, by kind and result (ok, forbidden, error).",
      labelNames: ['kind', 'result'],
      registers,
    });
    this.nodeSetWrites = new Counter({
      name: `${PREFIX}node_set_writes_total`,
      help: 'Writes of the published node set (ConfigMaps herald-node-set-*, read by the nodes for maxNodesPerVip) by the elected status writer, by result (ok, forbidden, error).',
      labelNames: ['result'],
      registers,
    });
    this.statusWriterLeader = new Gauge({
      name: `${PREFIX}status_writer_leader`,
      help: "1 while this node writes the conditions of Herald's configuration objects (lease: the Lease elected on, namespace/name), else 0; absent without the kubernetes source.",
      labelNames: ['lease'],
      registers,
      collect() {
        this.reset();
        const w = self.statusWriterProvider();
        if (w) this.set({ lease: w.lease }, w.isLeader() ? 1 : 0);
      },
    });
    this.buildInfo = new Gauge({ name: `${PREFIX}build_info`, help: "Always 1; the version label is Herald's version.", labelNames: ['version'], registers });
    this.buildInfo.set({ version: opts.version }, 1);
    this.configReloads = new Counter({ name: `${PREFIX}config_reloads_total`, help: 'Configuration reloads, by result (ok, invalid).', labelNames: ['result'], registers });
    this.configLastReloadSuccessful = new Gauge({
      name: `${PREFIX}config_last_reload_successful`,
      help: '1 when the last configuration load (start or reload) succeeded, 0 when the last reload was rejected.',
      registers,
    });
    this.configLastReloadSuccessTime = new Gauge({
      name: `${PREFIX}config_last_reload_success_timestamp_seconds`,
      help: 'Unix time of the last successful configuration load (start or reload).',
      registers,
    });
    this.vipAnnounced = new ScrapeGauge({
      name: `${PREFIX}vip_announced`,
      help: 'Per Service VIP this node handles: 1 while this node announces it, else 0 (VIPs no advertisement selects here are left out).',
      labelNames: ['service', 'address'],
      registers,
      collect() {
        this.reset();
        for (const v of self.vipsProvider()) {
          const labels = { service: v.service, address: v.address };
          // One address may be two kinds of VIP of one Service (an externalIP equal to its ingress IP): announced if either is.
          if (v.announced) this.set(labels, 1);
          else this.inc(labels, 0);
        }
      },
    });
    this.tenantInputsRefused = new Gauge({
      name: `${PREFIX}tenant_inputs_refused`,
      help: "Service inputs this node refuses now because the operator's policy does not allow them (docs/security.md), by reason code: one per VIP and reason.",
      labelNames: ['reason'],
      registers,
      collect() {
        for (const [reason, n] of self.refusalsProvider()) this.set({ reason }, n);
      },
    });
    this.ipamPoolAddresses = new Gauge({
      name: `${PREFIX}ipam_pool_addresses`,
      help: 'LoadBalancer pool addresses by pool, family (IPv4, IPv6) and state (allocated, available), as this node sees the Services.',
      labelNames: ['pool', 'family', 'state'],
      registers,
      collect() {
        this.reset();
        for (const u of self.allocatorProvider()?.usage() ?? []) {
          this.set({ pool: u.pool, family: u.family, state: 'allocated' }, u.allocated);
          this.set({ pool: u.pool, family: u.family, state: 'available' }, u.available);
        }
      },
    });
    this.ipamAllocationsFailed = new Gauge({
      name: `${PREFIX}ipam_allocations_failed`,
      help: "LoadBalancer Services the allocator's last pass left without the addresses they need, by reason (PoolNotAllowed, OutsidePools, InUse, Unassignable, InvalidRequest, NoSuchPool, NoPool, PoolExhausted); the leader only.",
      labelNames: ['reason'],
      registers,
      collect() {
        this.reset();
        for (const [reason, n] of self.allocatorProvider()?.failed() ?? []) this.set({ reason }, n);
      },
    });
    this.ipamLeader = new Gauge({
      name: `${PREFIX}ipam_leader`,
      help: '1 while this node leads the LoadBalancer allocator (lease: the Lease elected on, namespace/name), else 0; absent without pools.',
      labelNames: ['lease'],
      registers,
      collect() {
        this.reset();
        const a = self.allocatorProvider();
        if (a) this.set({ lease: a.lease }, a.isLeader() ? 1 : 0);
      },
    });
    this.drained = new Gauge({ name: `${PREFIX}drained`, help: '1 while the node is drained (RFC 8326 graceful shutdown in effect): by the herald.io/drain annotation, the stateDir record (standalone) or a departure.', registers });
    this.nodeDeparting = new Gauge({ name: `${PREFIX}node_departing`, help: "1 while this node's Node object says it is leaving service (deletion, autoscaler or out-of-service taint, Ready False/Unknown, exclude label).", registers });
    this.quarantinedObjects = new Gauge({ name: `${PREFIX}quarantined_objects`, help: 'Kubernetes objects treated as absent because Herald cannot use them, by kind (herald status lists them).', labelNames: ['kind'], registers });
    for (const kind of ['Service', 'EndpointSlice', 'Node', 'ServiceCIDR']) this.quarantinedObjects.set({ kind }, 0);
    this.refusedInputs = new Gauge({ name: `${PREFIX}refused_inputs`, help: 'Input refused whole, its last good version in force, by kind: file (a manifest file that cannot be read or parsed) or the kind of a configuration object every node ignores (herald status lists them).', labelNames: ['kind'], registers });
    for (const kind of REFUSED_KINDS) this.refusedInputs.set({ kind }, 0);
    this.bfdSessionUp = new Gauge({
      name: `${PREFIX}bfd_session_up`,
      help: "1 when the peer's BFD session is Up, else 0 (peers with BFD only).",
      labelNames: ['peer'],
      registers,
      collect() {
        this.reset();
        for (const p of self.peersProvider()) if (p.bfd) this.set({ peer: p.name }, p.bfd.state === 'Up' ? 1 : 0);
      },
    });
    this.bfdDetectionTime = new Gauge({
      name: `${PREFIX}bfd_detection_time_seconds`,
      help: "Negotiated BFD Detection Time: the silence after which the peer's session is declared down, seconds (0 while not Up or Init).",
      labelNames: ['peer'],
      registers,
      collect() {
        this.reset();
        for (const p of self.peersProvider()) if (p.bfd) this.set({ peer: p.name }, p.bfd.detectionTimeMs / 1000);
      },
    });
    this.bfdDiscards = new Counter({
      name: `${PREFIX}bfd_packets_discarded_total`,
      help: 'BFD packets meant for the peer\'s session that were discarded (RFC 5880 §6.8.6), by peer and reason: authentication (the peer uses BFD authentication), remoteDiscriminator (not the peer\'s My Discriminator: spoofed, or the peer restarted), wrongSource, ttlUnchecked (fail closed), noSession, ...',
      labelNames: ['peer', 'reason'],
      registers,
      collect() {
        this.reset();
        for (const p of self.peersProvider()) for (const [reason, n] of Object.entries(p.bfd?.discards ?? {})) this.inc({ peer: p.name, reason }, n);
      },
    });
    this.bfdStateChanges = new Counter({
      name: `${PREFIX}bfd_session_state_changes_total`,
      help: 'BFD state transitions (RFC 5880: AdminDown, Down, Init, Up), by peer and from/to state.',
      labelNames: ['peer', 'from', 'to'],
      registers,
    });
    if (opts.defaultMetrics !== false) collectDefaultMetrics({ register: this.registry });
  }

  /** The refused input now (src/daemon/admin-view.ts `refused`): counts by kind, 0 for the kinds always shown. */
  setRefused(list: readonly { kind: string }[]): void {
    const counts: Record<string, number> = Object.fromEntries(REFUSED_KINDS.map((k) => [k, 0]));
    for (const r of list) counts[r.kind] = (counts[r.kind] ?? 0) + 1;
    this.refusedInputs.reset();
    for (const [kind, n] of Object.entries(counts)) this.refusedInputs.set({ kind }, n);
  }

  /** The quarantined objects now (src/controller/quarantine.ts): counts by kind. */
  setQuarantined(objects: readonly { kind: string }[]): void {
    const counts: Record<string, number> = { Service: 0, EndpointSlice: 0, Node: 0, ServiceCIDR: 0 };
    for (const o of objects) counts[o.kind] = (counts[o.kind] ?? 0) + 1;
    for (const [kind, n] of Object.entries(counts)) this.quarantinedObjects.set({ kind }, n);
  }

  /** Where session gauges and message counters read from at scrape time (the peers that run). */
  setPeersProvider(fn: () => PeerView[]): void {
    this.peersProvider = fn;
  }

  /** Where `herald_vip_announced` reads the decision of each VIP this node handles from at scrape time. */
  setVipsProvider(fn: () => Iterable<HandledVip>): void {
    this.vipsProvider = fn;
  }

  /**
   * Where `herald_tenant_inputs_refused` reads, at scrape time, how many VIPs each refusal reason code holds back now
   * (every code Herald refuses with, 0 when none: src/daemon/admin-view.ts `refusedInputs`).
   */
  setRefusalsProvider(fn: () => ReadonlyMap<string, number>): void {
    this.refusalsProvider = fn;
  }

  /** Where the status writer's leadership is read from at scrape time (undefined: no status writer runs). */
  /** What a Kubernetes client reports of its requests (src/k8s/client.ts `RequestObserver`), counted here. */
  kubernetesObserver(): { onResponse(verb: string, resource: string, code: string): void; onThrottled(waitMs: number): void; onRetryAfter(waitMs: number): void } {
    return {
      onResponse: (verb, resource, code) => this.kubernetesRequests.inc({ verb, resource, code }),
      onThrottled: (waitMs) => this.kubernetesThrottleWait.inc(waitMs / 1000),
      onRetryAfter: () => this.kubernetesRetryAfter.inc(),
    };
  }

  setStatusWriterProvider(fn: () => { readonly lease: string; isLeader(): boolean } | undefined): void {
    this.statusWriterProvider = fn;
  }

  /** Where pool usage and allocator leadership are read from at scrape time (undefined: no allocator runs). */
  setAllocatorProvider(fn: () => AllocatorMetricsView | undefined): void {
    this.allocatorProvider = fn;
  }

  /** Record one FSM transition (call on every session state change). */
  observeStateChange(peer: string, from: string, to: string): void {
    const labels = { peer, from, to };
    this.sessionStateChanges.inc(labels);
    this.track(peer, `state\0${from}\0${to}`, () => this.sessionStateChanges.remove(labels));
  }

  /** Record one BFD state transition. */
  observeBfdStateChange(peer: string, from: string, to: string): void {
    const labels = { peer, from, to };
    this.bfdStateChanges.inc(labels);
    this.track(peer, `bfd\0${from}\0${to}`, () => this.bfdStateChanges.remove(labels));
  }

  /** Record a NOTIFICATION. */
  observeNotification(peer: string, direction: 'sent' | 'received', code: number, subcode: number): void {
    const labels = { peer, direction, code: String(code), subcode: String(subcode) };
    this.notifications.inc(labels);
    this.track(peer, `notification\0${direction}\0${code}\0${subcode}`, () => this.notifications.remove(labels));
  }

  /** Record the time to pack one UPDATE for `peer` and hand it to the socket, seconds. */
  observeUpdateSent(peer: string, seconds: number): void {
    this.updateSendDuration.observe({ peer }, seconds);
    this.track(peer, 'update', () => this.updateSendDuration.remove({ peer }));
  }

  /** Forget every series of a removed peer (call once it no longer runs; its gauges go at the next scrape). */
  removePeer(peer: string): void {
    for (const remove of this.peerSeries.get(peer)?.values() ?? []) remove();
    this.peerSeries.delete(peer);
    for (const key of [...this.lastCounts.keys()]) if (key.split('\0')[1] === peer) this.lastCounts.delete(key);
  }

  /** The configuration in force loaded successfully at `atMs` (epoch ms): at start, and after each good reload. */
  observeConfigLoaded(atMs: number): void {
    this.configLastReloadSuccessful.set(1);
    this.configLastReloadSuccessTime.set(atMs / 1000);
  }

  /** Record one reload: applied (`ok`) or rejected, the running configuration kept. */
  observeReload(ok: boolean, atMs: number): void {
    this.configReloads.inc({ result: ok ? 'ok' : 'invalid' });
    if (ok) this.observeConfigLoaded(atMs);
    else this.configLastReloadSuccessful.set(0);
  }

  private track(peer: string, key: string, remove: () => void): void {
    let series = this.peerSeries.get(peer);
    if (!series) this.peerSeries.set(peer, (series = new Map()));
    if (!series.has(key)) series.set(key, remove);
  }

  /** Record one probe result; `result` is 'ok' or a failure reason code. */
  observeHealthCheck(result: string, durationSec: number): void {
    this.healthCheckResults.inc({ result });
    this.healthCheckDuration.observe({ result }, durationSec);
  }

  private syncMessageCounters(): void {
    for (const p of this.peersProvider()) {
      for (const [dir, counts] of [['sent', p.messages.sent], ['received', p.messages.received]] as const) {
        const counter = dir === 'sent' ? this.messagesSent : this.messagesReceived;
        for (const [type, n] of Object.entries(counts)) {
          const key = `${dir}\0${p.name}\0${type}`;
          const last = this.lastCounts.get(key) ?? 0;
          // A lower count means a new session object started counting from zero.
          const delta = n >= last ? n - last : n;
          const labels = { peer: p.name, type };
          if (delta > 0) counter.inc(labels, delta);
          else if (!this.lastCounts.has(key)) counter.inc(labels, 0);
          this.lastCounts.set(key, n);
          this.track(p.name, key, () => counter.remove(labels));
        }
      }
    }
  }

  /** Prometheus text exposition format 0.0.4. */
  async text(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
