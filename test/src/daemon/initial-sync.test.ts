// End-of-RIB after the first complete desired set (docs/decisions.md "Graceful restart"), with the real
// HealthManager on a FakeClock and a scripted probe.
import t from 'tap';
import { pino } from 'pino';
import { FakeClock } from '../../../bgp/index.ts';
import { validateConfig } from '../../../src/config/load.ts';
import type { Config } from '../../../src/config/schema.ts';
import { Daemon } from '../../../src/daemon/daemon.ts';
import { InitialSync } from '../../../src/daemon/initial-sync.ts';
import { HealthManager } from '../../../src/health/manager.ts';
import type { CheckSpec, ProbeResult } from '../../../src/health/types.ts';
import { HeraldMetrics } from '../../../src/metrics/metrics.ts';
import { FakeSource, FakeSpeaker } from './fakes.ts';
import { DOCUMENTATION_PREFIXES, node, service, slice } from '../../helpers/k8s-objects.ts';

function cfg(data: object): Config {
  const r = validateConfig({ bgp: { localAs: 65000, routerId: '10.0.0.1' }, allowedPrefixes: DOCUMENTATION_PREFIXES, ...data });
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return r.config;
}

// Regression (issue 11): with kube-proxy's node check configured, the restarted Herald logged `initial sync done`
// with `routes: 0, pendingChecks: 0`: the node check, still unknown, held back every VIP but was not counted as
// pending, so End-of-RIB went out before the first desired set and the router removed the node's stale paths.
t.test('End-of-RIB waits for kube-proxy node health (scope node) before the first desired set goes out', async (t) => {
  const clock = new FakeClock(1_000_000);
  const probes: CheckSpec[] = [];
  let nodeHealthy = false;
  const health = new HealthManager({
    clock,
    jitter: 0,
    probe: async (spec): Promise<ProbeResult> => {
      probes.push(spec);
      return nodeHealthy ? { ok: true, message: 'ok', latencyMs: 1 } : { ok: false, code: 'ConnectionRefused', message: 'refused', latencyMs: 1 };
    },
  });
  const source = new FakeSource();
  let speaker!: FakeSpeaker;
  const daemon = new Daemon(
    cfg({ peers: [{ name: 'a', address: '127.0.0.2', peerAs: 65001 }], source: { manifests: '/nonexistent' }, kubeProxy: { enabled: true }, healthChecks: { interval: 1, timeout: 0.5, rise: 1, fall: 1 } }),
    { nodeName: 'node-a', routerId: '10.0.0.1', nodeIps: ['127.0.0.1'] },
    { createSpeaker: (o) => (speaker = new FakeSpeaker(o)), health, source, logger: pino({ level: 'silent' }), metrics: new HeraldMetrics({ version: 'test', defaultMetrics: false }), version: 'test', restarting: true, env: {}, clock },
  );
  t.teardown(() => daemon.shutdown('test'));
  source.store.apply('Node', node('node-a'));
  source.store.apply('Service', service('web', { lbIPs: ['198.51.100.1'] })); // Cluster policy: no per-Service check
  source.store.apply('EndpointSlice', slice('web-1', 'web', [['10.1.0.5', 'node-b']]));
  await daemon.start();
  source.isSynced = true;
  source.emit('synced');
  await daemon.idle();
  t.same(speaker.last, [], 'the VIP waits for the node check');
  t.notOk(speaker.calls.includes('markInitialSyncDone'), 'no End-of-RIB while the node check is unknown');
  nodeHealthy = true;
  clock.advance(1000);
  await new Promise((r) => setTimeout(r, 20));
  await daemon.idle();
  t.ok(probes.some((p) => p.kind === 'kube-proxy-node'), 'the node check was probed');
  t.same(speaker.last, ['198.51.100.1/32'], 'the VIP is announced once the node check passed');
  t.ok(speaker.calls.includes('markInitialSyncDone'), 'and End-of-RIB follows it');
});

// InitialSync on its own (src/daemon/initial-sync.ts): End-of-RIB once, after a complete set with no pending check,
// or once the wait for pending checks has run out (the slowest check's rise × interval + timeout, plus 2 s).
t.test('InitialSync: at once without pending checks, once only', async (t) => {
  const clock = new FakeClock(0);
  let done = 0;
  const sync = new InitialSync({ markDone: () => done++, recheck: () => undefined, log: pino({ level: 'silent' }), clock });
  t.equal(sync.done, false);
  sync.observe(0, [], 3);
  t.equal(sync.done, true);
  sync.observe(0, [], 3);
  t.equal(done, 1, 'End-of-RIB is marked once');
});

t.test('InitialSync: pending checks hold it until their first verdict or the bounded wait', async (t) => {
  const clock = new FakeClock(0);
  let done = 0;
  let rechecks = 0;
  const sync = new InitialSync({ markDone: () => done++, recheck: () => rechecks++, log: pino({ level: 'silent' }), clock });
  // rise 2 × interval 1 s + timeout 1 s = 3 s, plus the 2 s margin: 5 s.
  const spec = { rise: 2, intervalSec: 1, timeoutSec: 1 } as CheckSpec;
  sync.observe(1, [spec], 3);
  t.equal(sync.done, false, 'a pending check holds it');
  clock.advance(4999);
  t.equal(rechecks, 0);
  sync.observe(1, [spec], 3);
  t.equal(sync.done, false, 'still within the wait');
  clock.advance(1);
  t.equal(rechecks, 1, 'the pipeline is asked to run again when the wait runs out');
  sync.observe(1, [spec], 3);
  t.equal(sync.done, true, 'the wait ran out: End-of-RIB goes');
  t.equal(done, 1);

  const early = new InitialSync({ markDone: () => done++, recheck: () => rechecks++, log: pino({ level: 'silent' }), clock });
  early.observe(1, [spec], 3);
  early.observe(0, [spec], 3);
  t.equal(early.done, true, 'the first verdict ends the wait early');
  early.stop();
  clock.advance(10_000);
  t.equal(rechecks, 1, 'no recheck after it is done');
});
