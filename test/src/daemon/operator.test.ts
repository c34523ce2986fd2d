// Daemon behaviour operators hit: BGP listener bind retried with backoff (logged once per attempt, no stack,
// shown in readiness), RFC 8326 wait skipped when no session is Established (stop and drain).
import t from 'tap';
import { pino } from 'pino';
import { validateConfig } from '../../../src/config/load.ts';
import type { Config } from '../../../src/config/schema.ts';
import { Daemon } from '../../../src/daemon/daemon.ts';
import { HeraldMetrics } from '../../../src/metrics/metrics.ts';
import { FakeHealth, FakeSpeaker } from './fakes.ts';

function cfg(data: object): Config {
  const r = validateConfig({ bgp: { localAs: 65000, routerId: '10.0.0.1' }, ...data });
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return r.config;
}

function make(config: Config, failures = 0) {
  let speaker!: FakeSpeaker;
  const lines: Record<string, unknown>[] = [];
  const logger = pino({ level: 'info' }, { write: (s: string) => void lines.push(JSON.parse(s) as Record<string, unknown>) });
  const daemon = new Daemon(config, { nodeName: 'node-a', routerId: '10.0.0.1', nodeIps: ['127.0.0.1'] }, {
    createSpeaker: (opts) => (speaker = new FakeSpeaker(opts, failures)),
    health: new FakeHealth(),
    logger,
    metrics: new HeraldMetrics({ version: 'test', defaultMetrics: false }),
    version: 'test',
    restarting: false,
    env: {},
    listenRetry: { firstMs: 5, maxMs: 20 },
  });
  return { daemon, speaker, lines };
}

const peerA = { name: 'a', address: '127.0.0.2', peerAs: 65001, gracefulShutdown: { enabled: true, waitTime: 7 } };
/** The speaker calls of a drain or a stop. */
const lifecycle = (call: string): boolean => call.startsWith('drain') || call.startsWith('stop');

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
  t.equal(speaker.bindAttempts, 4, 'three failures, then bound');
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
  const n = speaker.bindAttempts;
  await new Promise((r) => setTimeout(r, 60));
  t.equal(speaker.bindAttempts, n, 'no attempt after shutdown');
});

t.test('a departure and a drain skip the wait when no session is Established', async (t) => {
  const idle = make(cfg({ peers: [peerA] }));
  await idle.daemon.start();
  await idle.daemon.drain();
  await idle.daemon.shutdown('SIGTERM');
  t.same(idle.speaker.calls.filter(lifecycle), ['drain 0', 'stop departure wait=0'], 'drained, so SIGTERM is a departure; nothing Established: nothing to move, no wait');
  t.match(idle.lines.find((l) => typeof l['msg'] === 'string' && l['msg'].startsWith('stopping (SIGTERM): departure')), { mode: 'departure', why: /the node is drained/, waitTimeSec: 0, skippedWait: 'no Established session' });

  const up = make(cfg({ peers: [peerA] }));
  await up.daemon.start();
  up.speaker.states.set('a', 'Established');
  await up.daemon.drain();
  await up.daemon.shutdown('SIGTERM');
  t.same(up.speaker.calls.filter(lifecycle), ['drain 7', 'stop departure wait=7'], 'an Established session gets the configured wait');
});
