// Fakes of the daemon's seams (SpeakerLike, HealthLike, Source) that follow the production path: the speaker keeps
// its table from setRoutes and the incremental updateRoutes, the health checker answers gates like HealthManager.
import { EventEmitter } from 'node:events';
import type { PeerConfig as SpeakerPeerConfig, PeerStatus, Route, SpeakerOptions, StopMode, StopOutcome } from '../../../bgp/index.ts';
import { ObjectStore } from '../../../src/k8s/object-store.ts';
import type { SpeakerLike } from '../../../src/daemon/speaker-like.ts';
import type { CheckSpec, GateResult, HealthEvents, HealthLike, HealthState } from '../../../src/health/types.ts';
import type { Source, SourceStatus } from '../../../src/sources/source.ts';

/**
 * A speaker that keeps the desired table as bgp/speaker.ts does: replaced by setRoutes, changed by updateRoutes (the
 * daemon's incremental path, as in production).
 */
export class FakeSpeaker extends EventEmitter implements SpeakerLike {
  readonly localAs: number;
  calls: string[] = [];
  peerCfgs = new Map<string, SpeakerPeerConfig>();
  states = new Map<string, string>();
  /** The desired table, by prefix. */
  current = new Map<string, Route>();
  /** Every whole set handed over by setRoutes. */
  routesSet: Route[][] = [];
  /** Every incremental change handed over by updateRoutes. */
  updates: Array<{ changed: Route[]; removed: string[] }> = [];
  draining = false;
  readonly opts: SpeakerOptions;
  /** Listener binds that fail (EADDRINUSE, as bgp/speaker.ts reports them) before one succeeds. */
  bindFailures: number;
  bindAttempts = 0;
  constructor(opts: SpeakerOptions, bindFailures = 0) {
    super();
    this.opts = opts;
    this.localAs = opts.localAs;
    this.bindFailures = bindFailures;
  }
  #bind(): Promise<void> {
    this.bindAttempts++;
    if (this.bindAttempts > this.bindFailures) return Promise.resolve();
    const err = Object.assign(new Error('listen EADDRINUSE: address already in use 127.0.0.1:1179'), { code: 'EADDRINUSE', syscall: 'listen' });
    // Like bgp/speaker.ts: the failure is also emitted as 'error'.
    queueMicrotask(() => this.emit('error', err));
    return Promise.reject(err);
  }
  listen() {
    this.order.push('listen');
    return this.#bind();
  }
  /** Every call that matters to the start-up order (docs/sessions.md "Start-up order"), in order. */
  order: string[] = [];
  addPeer(cfg: SpeakerPeerConfig) {
    this.order.push(`add ${cfg.name}`);
    this.calls.push(`add ${cfg.name}`);
    this.peerCfgs.set(cfg.name, cfg);
  }
  updatePeer(cfg: SpeakerPeerConfig) {
    this.calls.push(`update ${cfg.name}`);
    this.peerCfgs.set(cfg.name, cfg);
  }
  async removePeer(name: string) {
    this.calls.push(`remove ${name}`);
    this.peerCfgs.delete(name);
  }
  /** Called with the whole table after every change. */
  onChange: ((routes: Route[]) => void) | undefined;
  setRoutes(routes: readonly Route[]) {
    this.current = new Map(routes.map((r) => [r.prefix, r]));
    this.order.push(`setRoutes ${this.current.size}`);
    this.routesSet.push([...this.current.values()]);
    this.onChange?.([...this.current.values()]);
  }
  updateRoutes(changed: readonly Route[], removed: readonly string[]) {
    this.updates.push({ changed: [...changed], removed: [...removed] });
    for (const p of removed) this.current.delete(p);
    for (const r of changed) this.current.set(r.prefix, r);
    this.onChange?.([...this.current.values()]);
  }
  markInitialSyncDone() {
    this.order.push('markInitialSyncDone');
    this.calls.push('markInitialSyncDone');
  }
  async drain(o: { waitTimeSec: number }) {
    this.draining = true;
    this.calls.push(`drain ${o.waitTimeSec}`);
  }
  undrain() {
    this.draining = false;
    this.calls.push('undrain');
  }
  /** Every stop, with the message the peers would read. */
  stops: Array<{ mode: StopMode; message?: string; waitTimeSec?: number }> = [];
  async stop(o: { mode: StopMode; message?: string; waitTimeSec?: number }): Promise<StopOutcome> {
    this.stops.push(o);
    this.calls.push(`stop ${o.mode}${o.waitTimeSec !== undefined ? ` wait=${o.waitTimeSec}` : ''}`);
    return { mode: o.mode, peers: [...this.peerCfgs.keys()].map((peer) => ({ peer, ending: o.mode === 'restart' ? ('closedWithoutNotification' as const) : ('cease' as const) })) };
  }
  resetPeer(name: string, o: { soft: boolean }) {
    this.calls.push(`reset ${name} ${o.soft}`);
  }
  peers(): PeerStatus[] {
    return [...this.peerCfgs.values()].map((c) => ({
      name: c.name,
      address: c.address,
      port: c.port ?? 179,
      peerAs: c.peerAs,
      localAs: c.localAs ?? this.localAs,
      bgpIdentifier: c.bgpIdentifier ?? '192.0.2.254',
      state: this.states.get(c.name) ?? 'Idle',
      uptimeSec: undefined,
      negotiated: undefined,
      lastReason: undefined,
      lastNotificationSent: undefined,
      lastNotificationReceived: undefined,
      messagesSent: {},
      messagesReceived: {},
      prefixesAdvertised: this.adjRibOut(c.name).length,
      prefixesReceived: 0,
      endOfRibReceived: [],
      endOfRibSent: [],
      gracefulShutdown: false,
    }));
  }
  adjRibOut(peer: string) {
    return [...this.current.values()].filter((r) => !r.peers || r.peers.includes(peer)).map((r) => ({ ...r, nextHop: '127.0.0.1', asPath: [this.localAs] }));
  }
  get last(): string[] {
    return [...this.current.keys()].sort();
  }
}

export class FakeHealth extends EventEmitter<HealthEvents> implements HealthLike {
  failing = new Set<string>();
  specs: CheckSpec[] = [];
  announced = new Map<string, boolean>();
  invalid = new Set<string>();
  calls = 0;
  /** setChecks call number in which each gate first had a check. */
  firstSeen = new Map<string, number>();
  setChecks(specs: readonly CheckSpec[]) {
    this.calls++;
    for (const x of specs) if (!this.firstSeen.has(x.gate)) this.firstSeen.set(x.gate, this.calls);
    this.specs = [...specs];
    // Like HealthManager: a spec with an error fails its gate with InvalidCheck.
    this.invalid = new Set(specs.filter((x) => x.error !== undefined).map((x) => x.gate));
    return { errors: specs.filter((x) => x.error !== undefined).map((x) => ({ key: x.key, gate: x.gate, message: x.error as string })) };
  }
  /** Gates read while no check for them had been registered yet. */
  readBeforeRegistered = new Set<string>();
  /** Gates that have been read passing while their check was registered. */
  passedWhileRegistered = new Set<string>();
  gate(key: string): GateResult {
    if (!this.firstSeen.has(key)) this.readBeforeRegistered.add(key);
    else if (!this.invalid.has(key) && !this.failing.has(key)) this.passedWhileRegistered.add(key);
    if (this.invalid.has(key)) return { pass: false, reasons: [{ code: 'InvalidCheck', message: 'invalid check' }] };
    return this.failing.has(key) ? { pass: false, reasons: [{ code: 'Pending', message: `${key} not up yet` }] } : { pass: true, reasons: [] };
  }
  /** Every setAnnounced call, in order. */
  announceCalls: Array<[string, boolean]> = [];
  setAnnounced(key: string, a: boolean) {
    this.announceCalls.push([key, a]);
    this.announced.set(key, a);
  }
  status() {
    const state = (gate: string): HealthState => (this.failing.has(gate) ? 'down' : 'up');
    return {
      checks: this.specs
        .filter((x) => x.error === undefined)
        .map((x) => ({ key: x.key, gate: x.gate, scope: x.scope ?? ('gate' as const), kind: x.kind, target: `${x.hosts[0]}:${x.port}`, state: state(x.gate), since: 0, intervalSec: x.intervalSec, rise: x.rise, fall: x.fall, consecutiveOk: 0, consecutiveFail: 3, latencyMs: 1.5, lastFailure: this.failing.has(x.gate) ? { code: 'ConnectionRefused', message: 'refused' } : null })),
      invalid: this.specs.filter((x) => x.error !== undefined).map((x) => ({ key: x.key, gate: x.gate, message: x.error as string })),
    };
  }
  async close() {}
}

/** A Source whose objects the test applies to `store` and whose sync the test declares. */
export class FakeSource extends EventEmitter implements Source {
  store = new ObjectStore();
  isSynced = false;
  async start() {}
  async stop() {}
  synced() {
    return this.isSynced;
  }
  snapshot() {
    return this.store;
  }
  status(): SourceStatus {
    return { type: 'manifests', synced: this.isSynced, resources: [] };
  }
}
