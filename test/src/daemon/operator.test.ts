// Daemon behaviour operators hit: BGP listener bind retried with backoff (logged once per attempt, no stack,
// shown in readiness), RFC 8326 wait skipped when no session is Established (stop and drain).
import t from 'tap';
import { EventEmitter } from 'node:events';
import { pino } from 'pino';
import type { PeerConfig as SpeakerPeerConfig, PeerStatus, Route, SpeakerOptions } from '../../../bgp/index.ts';
import { validateConfig } from '../../../src/config/load.ts';
import type { Config } from '../../../src/config/schema.ts';
import { Daemon } from '../../../src/daemon/daemon.ts';
import type { SpeakerLike } from '../../../src/daemon/speaker-like.ts';
import type { GateResult, HealthEvents, HealthLike } from '../../../src/health/types.ts';
import { HeraldMetrics } from '../../../src/metrics/metrics.ts';

/** Speaker whose listener fails `failures` times (EADDRINUSE) before binding. */
class FakeSpeaker extends EventEmitter implements SpeakerLike {
  readonly localAs: number;
  calls: string[] = [];
  states = new Map<string, string>();
  private peerCfgs = new Map<string, SpeakerPeerConfig>();
  draining = false;
  failures: number;
  attempts = 0;
  constructor(opts: SpeakerOptions, failures: number) {
    super();
    this.localAs = opts.localAs;
    this.failures = failures;
  }
  private bind(): Promise<void> {
    this.attempts++;
    if (this.attempts > this.failures) return Promise.resolve();
    const err = Object.assign(new Error('listen EADDRINUSE: address already in use 127.0.0.1:1179'), { code: 'EADDRINUSE', syscall: 'listen' });
    // Like bgp/speaker.ts: the failure is also emitted as 'error'.
    queueMicrotask(() => this.emit('error', err));
    return Promise.reject(err);
  }
  private first: Promise<void> | undefined;
  ready() {
    this.first ??= this.bind();
    return this.first;
  }
  retryListen() {
    return this.bind();
  }
  addPeer(cfg: SpeakerPeerConfig) {
    this.peerCfgs.set(cfg.name, cfg);
  }
  updatePeer(cfg: SpeakerPeerConfig) {
    this.peerCfgs.set(cfg.name, cfg);
  }
  async removePeer(name: string) {
    this.peerCfgs.delete(name);
  }
  setRoutes(_routes: ReadonlyMap<string, Route>) {}
  updateRoutes(_changed: readonly Route[], _removed: readonly string[]) {}
  markInitialSyncDone() {}
  async drain(o: { waitTimeSec: number }) {
    this.draining = true;
    this.calls.push(`drain ${o.waitTimeSec}`);
  }
  undrain() {
    this.draining = false;
  }
  async shutdown(o: { graceful: boolean; message?: string; waitTimeSec?: number }) {
    this.calls.push(`shutdown graceful=${o.graceful} wait=${o.waitTimeSec}`);
  }
  resetPeer() {}
  peers(): PeerStatus[] {
    return [...this.peerCfgs.values()].map((c) => ({
      name: c.name,
      address: c.address,
      port: c.port ?? 179,
      peerAs: c.peerAs,
      state: this.states.get(c.name) ?? 'Idle',
      uptimeSec: undefined,
      negotiated: undefined,
      lastReason: undefined,
      lastNotificationSent: undefined,
      lastNotificationReceived: undefined,
      messagesSent: {},
      messagesReceived: {},
      prefixesAdvertised: 0,
      prefixesReceived: 0,
      endOfRibReceived: [],
      endOfRibSent: [],
      gracefulShutdown: false,
    }));
  }
  adjRibOut() {
    return [];
  }
}

class FakeHealth extends EventEmitter<HealthEvents> implements HealthLike {
  setChecks() {
    return { errors: [] };
  }
  gate(): GateResult {
    return { pass: true, reasons: [] };
  }
  setAnnounced() {}
  status() {
    return { checks: [], invalid: [] };
  }
  async close() {}
}

function cfg(data: object): Config {
  const r = validateConfig({ bgp: { localAs: 65000, routerId: '10.0.0.1' }, ...data });
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return r.config;
}

function make(config: Config, failures = 0) {
  let speaker!: FakeSpeaker;
  const lines: Record<string, unknown>[] = [];
  const logger = pino({ level: 'info' }, { write: (s: string) => void lines.push(JSON.parse(s) as Record<string, unknown>) });
  const daemon = new Daemon(config, { nodeName: 'node-a', routerId: '10.0.0.1', nodeIp: '127.0.0.1' }, {
    createSpeaker: (opts) => (speaker = new FakeSpeaker(opts, failures)),
    health: new FakeHealth(),
    logger,
    metrics: new HeraldMetrics({ version: 'test', node: 'node-a', defaultMetrics: false }),
    version: 'test',
    restarting: false,
    env: {},
    listenRetry: { firstMs: 5, maxMs: 20 },
  });
  return { daemon, speaker, lines };
}

const peerA = { name: 'a', address: '127.0.0.2', peerAs: 65001, gracefulShutdown: { enabled: true, waitTime: 7 } };

t.test('a BGP listener that cannot bind is retried with backoff, logged once per attempt without a stack', async (t) => {
  const { daemon, speaker, lines } = make(cfg({ bgp: { localAs: 65000, routerId: '10.0.0.1', listen: { address: '127.0.0.1', port: 1179 } } }), 3);
  t.teardown(() => daemon.shutdown('test'));
  await daemon.start(); // does not reject: the daemon keeps running and retrying
  const s = daemon.view.status();
  t.equal(s.ready, false);
  t.match(s.notReady, [/^BGP listener: listen EADDRINUSE: address already in use 127\.0\.0\.1:1179 \(attempt 1; retrying in 0\.005 s\)$/]);
  for (let i = 0; i < 400 && !daemon.view.status().ready; i++) await new Promise((r) => setTimeout(r, 5));
  t.equal(daemon.view.status().ready, true, 'ready once the port could be bound');
  t.same(daemon.view.status().notReady, []);
  t.equal(speaker.attempts, 4, 'three failures, then bound');
  const failed = lines.filter((l) => l['msg'] === 'BGP listener cannot bind');
  t.equal(failed.length, 3, 'one line per failed attempt');
  t.same(failed.map((l) => [l['attempt'], l['retryInSec']]), [[1, 0.005], [2, 0.01], [3, 0.02]], 'capped exponential backoff');
  for (const l of failed) t.match(l, { error: 'listen EADDRINUSE: address already in use 127.0.0.1:1179', code: 'EADDRINUSE' }, 'message and code, no stack');
  t.equal(lines.filter((l) => l['msg'] === 'speaker error').length, 0, 'the same failure is not logged again as a speaker error');
  t.equal(lines.filter((l) => JSON.stringify(l).includes('"stack"')).length, 0, 'no stack anywhere');
  t.ok(lines.some((l) => l['msg'] === 'BGP listener bound' && l['attempt'] === 4));
});

t.test('shutdown stops the bind retries', async (t) => {
  const { daemon, speaker } = make(cfg({ bgp: { localAs: 65000, routerId: '10.0.0.1', listen: { address: '127.0.0.1', port: 1179 } } }), 1000);
  await daemon.start();
  await daemon.shutdown('test');
  const n = speaker.attempts;
  await new Promise((r) => setTimeout(r, 60));
  t.equal(speaker.attempts, n, 'no attempt after shutdown');
});

t.test('graceful shutdown and drain skip the wait when no session is Established', async (t) => {
  const idle = make(cfg({ peers: [peerA] }));
  await idle.daemon.start();
  await idle.daemon.drain();
  await idle.daemon.shutdown('SIGTERM');
  t.same(idle.speaker.calls, ['drain 0', 'shutdown graceful=true wait=0'], 'nothing Established: nothing to move, no wait');
  t.match(idle.lines.find((l) => l['msg'] === 'shutting down'), { graceful: true, waitTimeSec: 0, skippedWait: 'no Established session' });

  const up = make(cfg({ peers: [peerA] }));
  await up.daemon.start();
  up.speaker.states.set('a', 'Established');
  await up.daemon.drain();
  await up.daemon.shutdown('SIGTERM');
  t.same(up.speaker.calls, ['drain 7', 'shutdown graceful=true wait=7'], 'an Established session gets the configured wait');
});
