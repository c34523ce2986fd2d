// The pipeline's passes on their own (src/daemon/pipeline.ts): bursts coalesce into one pass on the next turn, a
// failing pass keeps what is announced and makes the next one full, a node whose drain is not known yet announces
// nothing, and End-of-RIB waits for the first complete pass.
import t from 'tap';
import { pino } from 'pino';
import { FakeClock } from '../../../bgp/index.ts';
import { validateConfig } from '../../../src/config/load.ts';
import type { Config } from '../../../src/config/schema.ts';
import { checkContext } from '../../../src/daemon/check-specs.ts';
import { annotationDrainRecord, DrainControl } from '../../../src/daemon/drain.ts';
import type { DrainRecord } from '../../../src/daemon/drain.ts';
import { HealthGate } from '../../../src/daemon/health-gate.ts';
import { InitialSync } from '../../../src/daemon/initial-sync.ts';
import { Pipeline } from '../../../src/daemon/pipeline.ts';
import { RouteAssembly } from '../../../src/daemon/route-assembly.ts';
import type { CheckSpec } from '../../../src/health/types.ts';
import { HeraldMetrics } from '../../../src/metrics/metrics.ts';
import { FakeHealth, FakeSpeaker } from './fakes.ts';

function cfg(data: object): Config {
  const r = validateConfig({ bgp: { localAs: 65000, routerId: '10.0.0.1' }, ...data });
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return r.config;
}

/** A health checker whose setChecks fails while `broken`. */
class BrokenHealth extends FakeHealth {
  broken = false;
  override setChecks(specs: readonly CheckSpec[]) {
    if (this.broken) throw new Error('health checker closed');
    return super.setChecks(specs);
  }
}

const identity = { nodeName: 'n1', routerId: '10.0.0.1', nodeIps: ['127.0.0.1'] };
const tick = () => new Promise((r) => setImmediate(r));

function make(config: Config, o: { record?: DrainRecord } = {}) {
  const clock = new FakeClock(0);
  const log = pino({ level: 'silent' });
  const speaker = new FakeSpeaker({ localAs: 65000, bgpIdentifier: '10.0.0.1' });
  const health = new BrokenHealth();
  const metrics = new HeraldMetrics({ version: 't', defaultMetrics: false });
  const passes: { pipeline?: Pipeline } = {};
  const gate = new HealthGate({ health, log, inputs: { checks: checkContext(config, identity, {}), routes: config.routes }, onVerdictsChanged: () => passes.pipeline?.schedule('health') });
  const assembly = new RouteAssembly(speaker, { clock });
  const drains = new DrainControl({ speaker, log, record: o.record, nodeName: 'n1', waitSec: () => 0, departureDrains: () => false });
  const initialSync = new InitialSync({ markDone: () => speaker.markInitialSyncDone(), recheck: () => undefined, log, clock });
  const pipeline = new Pipeline({ identity, config, gate, assembly, drains, initialSync, log, metrics, hasSource: false });
  passes.pipeline = pipeline;
  return { speaker, health, pipeline, drains };
}

const routes = cfg({ routes: [{ prefix: '192.0.2.1/32' }, { prefix: '192.0.2.2/32', healthCheck: { kind: 'tcp', port: 80 } }] });

t.test('the first pass sets the routes; a burst of health changes is one pass on the next turn; then End-of-RIB', async (t) => {
  const { speaker, health, pipeline } = make(routes);
  health.failing.add('route:192.0.2.2/32');
  t.equal(pipeline.run('start', { full: true }), true);
  t.same(speaker.last, ['192.0.2.1/32']);
  t.same(speaker.calls, [], "End-of-RIB waits for the check's first verdict");
  health.failing.clear();
  for (let i = 0; i < 3; i++) health.emit('change', ['route:192.0.2.2/32'], { nodeLevel: false });
  t.same(speaker.last, ['192.0.2.1/32'], 'not at once');
  const before = pipeline.passes;
  await tick();
  const after = pipeline.passes;
  t.equal(after.full + after.incremental - before.full - before.incremental, 0, 'no candidates: a health pass counts as neither');
  t.same(speaker.last, ['192.0.2.1/32', '192.0.2.2/32'], 'one pass took the verdict to the speaker');
  t.equal(speaker.updates.length, 1, 'as one incremental update');
  t.same(speaker.calls, ['markInitialSyncDone'], 'without a source, End-of-RIB goes once no check is pending');
});

t.test('a failing pass keeps what is announced, says why, and the next pass is full', async (t) => {
  const { speaker, health, pipeline } = make(routes);
  pipeline.run('start', { full: true });
  const sets = speaker.routesSet.length;
  pipeline.configure(cfg({ routes: [{ prefix: '192.0.2.9/32', healthCheck: { kind: 'tcp', port: 81 } }] }));
  health.broken = true;
  t.equal(pipeline.run('reload'), false);
  t.equal(pipeline.lastError, 'health checker closed');
  t.same(speaker.last, ['192.0.2.1/32', '192.0.2.2/32'], 'the previous routes stay');
  health.broken = false;
  t.equal(pipeline.run('retry'), true);
  t.equal(speaker.routesSet.length, sets + 1, 'the next pass hands over the whole set');
  t.same(speaker.last, ['192.0.2.9/32']);
});

t.test('until the drain is known (the Node not read), not even static routes are announced', async (t) => {
  const { speaker, pipeline, drains } = make(routes, { record: annotationDrainRecord(async () => undefined) });
  drains.start('/nonexistent');
  pipeline.run('start', { full: true });
  t.same(speaker.last, [], 'held');
});

t.test('stop(): no pass after it', async (t) => {
  const { speaker, health, pipeline } = make(routes);
  health.failing.add('route:192.0.2.2/32');
  pipeline.run('start', { full: true });
  pipeline.stop();
  health.failing.clear();
  health.emit('change', ['route:192.0.2.2/32'], { nodeLevel: false });
  await tick();
  t.same(speaker.last, ['192.0.2.1/32']);
});
