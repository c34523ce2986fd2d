/**
 * Every Prometheus metric Herald exports, on a private prom-client Registry (not the global one,
 * so tests and several daemons in one process never collide). docs/metrics.md lists them.
 *
 * Session gauges and message counters are filled at scrape time from a peers provider
 * (`setPeersProvider`), so they can never drift from what the admin API shows: message counters
 * are kept monotonic across session restarts by adding deltas of the per-session counts.
 * Everything else is observed by the daemon as it happens.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { PeerView } from '../admin/view.ts';

/** Metric name prefix. */
export const PREFIX = 'herald_';

/** Owner of the registry and all metric objects. */
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
  readonly buildInfo: Gauge<'version' | 'node'>;
  readonly configReloads: Counter<'result'>;
  readonly drained: Gauge;
  readonly nodeDeparting: Gauge;
  readonly bfdSessionUp: Gauge<'peer'>;
  readonly bfdDetectionTime: Gauge<'peer'>;
  readonly bfdStateChanges: Counter<'peer' | 'from' | 'to'>;

  private peersProvider: () => PeerView[] = () => [];
  /** Last per-session message counts seen, to turn them into monotonic counters. */
  private readonly lastCounts = new Map<string, number>();

  /**
   * @param opts.defaultMetrics also export process_* and nodejs_* metrics (default true)
   */
  constructor(opts: { version: string; node: string; defaultMetrics?: boolean }) {
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
    this.buildInfo = new Gauge({ name: `${PREFIX}build_info`, help: 'Always 1; labels carry the version and node name.', labelNames: ['version', 'node'], registers });
    this.buildInfo.set({ version: opts.version, node: opts.node }, 1);
    this.configReloads = new Counter({ name: `${PREFIX}config_reloads_total`, help: 'Configuration reloads, by result (ok, invalid).', labelNames: ['result'], registers });
    this.drained = new Gauge({ name: `${PREFIX}drained`, help: '1 while the node is drained (RFC 8326 graceful shutdown in effect): by the herald.io/drain annotation, the stateDir record (standalone) or a departure.', registers });
    this.nodeDeparting = new Gauge({ name: `${PREFIX}node_departing`, help: "1 while this node's Node object says it is leaving service (deletion, autoscaler or out-of-service taint, Ready False/Unknown, exclude label).", registers });
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
    this.bfdStateChanges = new Counter({
      name: `${PREFIX}bfd_session_state_changes_total`,
      help: 'BFD state transitions (RFC 5880: AdminDown, Down, Init, Up), by peer and from/to state.',
      labelNames: ['peer', 'from', 'to'],
      registers,
    });
    if (opts.defaultMetrics !== false) collectDefaultMetrics({ register: this.registry });
  }

  /** Where session gauges and message counters read from at scrape time. */
  setPeersProvider(fn: () => PeerView[]): void {
    this.peersProvider = fn;
  }

  /** Record one FSM transition (call on every session state change). */
  observeStateChange(peer: string, from: string, to: string): void {
    this.sessionStateChanges.inc({ peer, from, to });
  }

  /** Record one BFD state transition. */
  observeBfdStateChange(peer: string, from: string, to: string): void {
    this.bfdStateChanges.inc({ peer, from, to });
  }

  /** Record a NOTIFICATION. */
  observeNotification(peer: string, direction: 'sent' | 'received', code: number, subcode: number): void {
    this.notifications.inc({ peer, direction, code: String(code), subcode: String(subcode) });
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
          if (delta > 0) counter.inc({ peer: p.name, type }, delta);
          else if (!this.lastCounts.has(key)) counter.inc({ peer: p.name, type }, 0);
          this.lastCounts.set(key, n);
        }
      }
    }
  }

  /** Prometheus text exposition format 0.0.4. */
  async text(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
