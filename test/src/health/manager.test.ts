// HealthManager on a fake clock with a scripted probe: no network, no real time.
import t from 'tap';
import { FakeClock } from '../../../bgp/index.ts';
import { HealthManager } from '../../../src/health/manager.ts';
import type { ProbeFn } from '../../../src/health/manager.ts';
import type { CheckSpec, ProbeFailureCode, ProbeResult } from '../../../src/health/types.ts';

type Script = Map<string, 'ok' | ProbeFailureCode | 'hang'>;

function setup(opts: { maxConcurrent?: number; holdDownSec?: number } = {}) {
  const clock = new FakeClock(0);
  const script: Script = new Map();
  const calls: string[] = [];
  const aborted: string[] = [];
  const probe: ProbeFn = (spec, signal) => {
    calls.push(spec.key);
    const m = script.get(spec.key) ?? 'ok';
    if (m === 'hang') {
      return new Promise<ProbeResult>((resolve) => {
        signal.addEventListener('abort', () => {
          aborted.push(spec.key);
          resolve({ ok: false, code: 'Timeout', message: 'aborted', latencyMs: 0 });
        });
      });
    }
    if (m === 'ok') return Promise.resolve({ ok: true, message: 'fine', latencyMs: 2 });
    return Promise.resolve({ ok: false, code: m, message: `scripted ${m}`, latencyMs: 3 });
  };
  const hm = new HealthManager({
    clock,
    probe,
    random: () => 0,
    jitter: 0,
    maxConcurrent: opts.maxConcurrent ?? 16,
    flapControl: { holdDownSec: opts.holdDownSec ?? 5, penalty: 1000, suppressThreshold: 2000, reuseThreshold: 750, halfLifeSec: 60, maxSuppressSec: 300 },
  });
  const changes: Array<{ keys: string[]; nodeLevel: boolean }> = [];
  hm.on('change', (keys, info) => changes.push({ keys: [...keys].sort(), nodeLevel: info.nodeLevel }));
  const settle = () => new Promise<void>((r) => setImmediate(r));
  // Advance the fake clock step by step, letting probes settle after each step.
  const run = async (ms: number, stepMs = 100) => {
    await settle();
    clock.advance(0);
    await settle();
    for (let done = 0; done < ms; done += stepMs) {
      clock.advance(Math.min(stepMs, ms - done));
      await settle();
    }
  };
  return { clock, script, calls, aborted, hm, changes, run, settle };
}

function spec(key: string, gate: string, over: Partial<CheckSpec> = {}): CheckSpec {
  return { key, gate, kind: 'kube-proxy-service', hosts: ['10.0.0.1'], port: 30000, intervalSec: 1, timeoutSec: 1, rise: 2, fall: 2, ...over };
}

t.test('a new check is Pending until it passed rise times', async (t) => {
  const { hm, run, changes } = setup();
  t.teardown(() => hm.close());
  hm.setChecks([spec('c1', 'vip1')]);
  let g = hm.gate('vip1');
  t.equal(g.pass, false);
  t.same(g.reasons.map((r) => r.code), ['Pending']);
  await run(0); // first probe at t=0
  t.equal(hm.gate('vip1').pass, false, 'one pass is not enough (rise 2)');
  t.match(hm.gate('vip1').reasons[0]?.message, /passed 1 of 2 times/);
  await run(1000);
  g = hm.gate('vip1');
  t.equal(g.pass, true, 'up after 2 passes');
  t.same(g.reasons, []);
  t.ok(changes.some((c) => c.keys.includes('vip1') && !c.nodeLevel), 'change emitted for vip1');
  t.equal(hm.gate('other').pass, true, 'a key without checks passes');
});

t.test('an announced key stays while unknown, until fall failures', async (t) => {
  const { hm, run, script } = setup();
  t.teardown(() => hm.close());
  hm.setAnnounced('vip1', true);
  script.set('c1', 'ConnectionRefused');
  hm.setChecks([spec('c1', 'vip1')]);
  let g = hm.gate('vip1');
  t.equal(g.pass, true, 'kept while unknown');
  t.match(g.reasons[0]?.message, /kept announced/);
  await run(0);
  t.equal(hm.gate('vip1').pass, true, 'one failure of fall 2: still kept');
  await run(1000);
  g = hm.gate('vip1');
  t.equal(g.pass, false, 'down after fall failures');
  t.same(g.reasons.map((r) => r.code), ['ConnectionRefused'], 'refused reported as itself');
  t.match(g.reasons[0]?.message, /check c1 is down \(2 consecutive failures\): scripted ConnectionRefused/);
  t.equal(g.reasons[0]?.since, 1000);
});

t.test('up tolerates fall-1 failures; distinct codes when down', async (t) => {
  const { hm, run, script } = setup();
  t.teardown(() => hm.close());
  hm.setChecks([spec('c1', 'vip1'), spec('c2', 'vip1', { kind: 'tcp', port: 80 })]);
  await run(1000);
  t.equal(hm.gate('vip1').pass, true);
  script.set('c1', 'NoLocalEndpoints');
  await run(1000);
  t.equal(hm.gate('vip1').pass, true, 'one failure tolerated');
  script.set('c2', 'Timeout');
  await run(1000);
  const g = hm.gate('vip1');
  t.equal(g.pass, false);
  t.same(g.reasons.map((r) => r.code).sort(), ['NoLocalEndpoints'], 'only c1 is down so far');
  await run(1000);
  t.same(hm.gate('vip1').reasons.map((r) => r.code).sort(), ['NoLocalEndpoints', 'Timeout'], 'both checks down, each with its own code');
  script.set('c1', 'ok');
  script.set('c2', 'ok');
  await run(2000);
  t.equal(hm.gate('vip1').pass, true, 'back up after rise passes');
});

t.test('a node-level check gates every key', async (t) => {
  const { hm, run, script, changes } = setup();
  t.teardown(() => hm.close());
  const node = spec('node', '', { kind: 'kube-proxy-node', port: 10256, scope: 'node' });
  hm.setChecks([node, spec('c1', 'vip1')]);
  hm.setAnnounced('static1', true);
  t.equal(hm.gate('static1').pass, true, 'announced key kept while the node check is unknown');
  t.equal(hm.gate('new-key').pass, false, 'nothing new announced before the node check is up');
  t.same(hm.gate('new-key').reasons.map((r) => r.code), ['Pending']);
  await run(1000);
  t.equal(hm.gate('new-key').pass, true);
  t.equal(hm.nodeGate().pass, true);
  changes.length = 0;
  script.set('node', 'NodeNotEligible');
  await run(2000);
  for (const k of ['vip1', 'static1', 'new-key']) {
    const g = hm.gate(k);
    t.equal(g.pass, false, `${k} blocked`);
    t.equal(g.reasons[0]?.code, 'NodeUnhealthy');
    t.match(g.reasons[0]?.message, /NodeNotEligible/);
  }
  const nodeChange = changes.find((c) => c.nodeLevel);
  t.ok(nodeChange, 'a node-level change was emitted');
  t.same(nodeChange?.keys, ['static1', 'vip1'], 'with every known key');
});

t.test('setChecks is level-triggered', async (t) => {
  const { hm, run, script, aborted } = setup();
  t.teardown(() => hm.close());
  hm.setChecks([spec('c1', 'vip1'), spec('c2', 'vip2'), spec('c3', 'vip3')]);
  await run(1000);
  const st = (k: string) => hm.status().checks.find((c) => c.key === k)?.state;
  t.same([st('c1'), st('c2'), st('c3')], ['up', 'up', 'up']);
  script.set('c3', 'hang');
  await run(1000); // c3 now has a probe in flight
  const res = hm.setChecks([
    spec('c1', 'vip1', { intervalSec: 2, rise: 3 }), // timing change only: keeps state
    spec('c2', 'vip2', { port: 30001 }), // new target: restarts unknown
    spec('bad', 'vip4', { hosts: ['not-an-ip'] }),
  ]);
  t.same(res.kept, ['c1']);
  t.same(res.restarted, ['c2']);
  t.same(res.removed, ['c3']);
  t.same(res.added, []);
  t.equal(res.errors.length, 1);
  t.match(res.errors[0]?.message, /host "not-an-ip" is not an IP address/);
  t.same(aborted, ['c3'], 'in-flight probe of the removed check aborted');
  t.equal(st('c1'), 'up');
  t.equal(hm.status().checks.find((c) => c.key === 'c1')?.rise, 3, 'timing applied');
  t.equal(st('c2'), 'unknown');
  t.equal(st('c3'), undefined);
  t.equal(hm.gate('vip3').pass, true, 'removed check no longer gates');
  const g4 = hm.gate('vip4');
  t.equal(g4.pass, false, 'invalid check blocks a new announcement');
  t.equal(g4.reasons[0]?.code, 'InvalidCheck');
  hm.setAnnounced('vip4', true);
  t.equal(hm.gate('vip4').pass, true, 'but keeps an announced key');
  t.same(hm.gate('vip4').reasons.map((r) => r.code), ['InvalidCheck'], 'still reported');
  const badNode = hm.setChecks([spec('node', '', { kind: 'kube-proxy-node', scope: 'node', hosts: [''] })]);
  t.equal(badNode.errors.length, 1);
  t.same(hm.gate('any-key').reasons.map((r) => r.code), ['InvalidCheck'], 'an invalid node check blocks every new key');
  t.equal(hm.gate('any-key').pass, false);
  t.equal(hm.status().invalid[0]?.scope, 'node');
  const junk = hm.setChecks([null as unknown as CheckSpec, spec('c1', 'vip1')]);
  t.match(junk.errors[0]?.message, /must be an object/, 'junk input reported, not thrown');
  t.same(junk.added, ['c1']);
  const dup = hm.setChecks([spec('c1', 'vip1'), spec('c1', 'vip9')]);
  t.match(dup.errors[0]?.message, /duplicate check key/);
});

t.test('hold-down after a withdrawal, visible with time left', async (t) => {
  const { hm, run, changes, clock } = setup({ holdDownSec: 5 });
  t.teardown(() => hm.close());
  hm.setAnnounced('vip1', true);
  hm.setAnnounced('vip1', false);
  const g = hm.gate('vip1');
  t.equal(g.pass, false);
  t.same(g.reasons.map((r) => r.code), ['HoldDown']);
  t.equal(g.reasons[0]?.until, clock.now() + 5000);
  t.match(g.reasons[0]?.message, /5\.0 s left/);
  await run(2000);
  t.match(hm.gate('vip1').reasons[0]?.message, /3\.0 s left/);
  changes.length = 0;
  await run(3000);
  t.equal(hm.gate('vip1').pass, true, 'free after hold-down');
  t.ok(changes.some((c) => c.keys.includes('vip1')), 'change emitted when hold-down ended');
  hm.setAnnounced('vip1', true);
  hm.setAnnounced('vip1', true);
  t.same(hm.announcedKeys(), ['vip1'], 'setAnnounced is idempotent');
});

t.test('flap control never keeps a key dark: othersCanServe false waives hold-down and suppression, and says so', async (t) => {
  const { hm, run } = setup({ holdDownSec: 1 });
  t.teardown(() => hm.close());
  for (let i = 0; i < 3; i++) {
    hm.setAnnounced('vip1', true);
    hm.setAnnounced('vip1', false);
    if (i < 2) await run(2000);
  }
  const held = hm.gate('vip1', { othersCanServe: true });
  t.equal(held.pass, false, 'other nodes can serve it: suppressed');
  t.match(held.reasons, [{ code: 'Suppressed', message: /\(other nodes serve it meanwhile\)$/ }]);
  t.equal(hm.gate('vip1').pass, false, 'unknown (default): suppressed, as before');
  const dark = hm.gate('vip1', { othersCanServe: false });
  t.equal(dark.pass, true, 'no other node can serve it: announced');
  t.match(dark.reasons, [{ code: 'FlapControlWaived', message: /^announced although flapping: suppressed after 3 withdrawals.*: no other node can serve it$/ }]);
  hm.setAnnounced('vip2', true);
  hm.setAnnounced('vip2', false);
  t.match(hm.gate('vip2', { othersCanServe: false }), { pass: true, reasons: [{ code: 'FlapControlWaived', message: /withdrawn recently: hold-down/ }] }, 'hold-down waived the same way');
  hm.setChecks([spec('c3', 'vip3')]);
  hm.setAnnounced('vip3', true);
  hm.setAnnounced('vip3', false);
  t.match(hm.gate('vip3', { othersCanServe: false }), { pass: false, reasons: [{ code: 'Pending' }] }, 'a check not passing still blocks: only flap control is waived');
});

t.test('a flapping key gets suppressed, with the time left, then reused', async (t) => {
  const { hm, run, clock } = setup({ holdDownSec: 1 });
  t.teardown(() => hm.close());
  for (let i = 0; i < 3; i++) {
    hm.setAnnounced('vip1', true);
    hm.setAnnounced('vip1', false);
    if (i < 2) await run(2000);
  }
  const g = hm.gate('vip1');
  t.equal(g.pass, false);
  t.same(g.reasons.map((r) => r.code), ['Suppressed'], 'suppression hides the shorter hold-down');
  const until = g.reasons[0]?.until as number;
  t.ok(until > clock.now() + 60_000, 'suppressed for more than a minute');
  t.match(g.reasons[0]?.message, /suppressed after 3 withdrawals, penalty \d+ \(reuse at 750\), \d+\.\d s left/);
  const d = hm.status().dampers.find((x) => x.key === 'vip1');
  t.equal(d?.suppressed, true);
  t.equal(d?.suppressedUntilMs, until);
  await run(until - clock.now() - 1000, 1000);
  t.equal(hm.gate('vip1').pass, false, 'still suppressed just before');
  await run(1000, 1000);
  t.equal(hm.gate('vip1').pass, true, 'reused once the penalty decayed');
  hm.setAnnounced('vip1', true);
  t.equal(hm.gate('vip1').pass, true, 'announced keys are never blocked by the damper');
});

t.test('the semaphore bounds probes in flight', async (t) => {
  const { hm, run, script, calls } = setup({ maxConcurrent: 2 });
  const specs = ['a', 'b', 'c', 'd', 'e'].map((k) => spec(k, `vip-${k}`));
  for (const s of specs) script.set(s.key, 'hang');
  hm.setChecks(specs);
  await run(0);
  const p = hm.status().probes;
  t.same(p, { inFlight: 2, waiting: 3, maxConcurrent: 2 });
  t.equal(calls.length, 2, 'only two probes started');
  await hm.close();
  t.equal(hm.status().checks.length, 0, 'closed manager holds no checks');
  t.throws(() => hm.setChecks([]), /closed/);
});

t.test('status shows state, last result, latency, since and failures', async (t) => {
  const { hm, run, script } = setup();
  t.teardown(() => hm.close());
  script.set('c1', 'BadResponse');
  hm.setChecks([spec('c1', 'vip1', { hosts: ['10.0.0.1', 'fd00::1'] })]);
  await run(1000);
  const c = hm.status().checks[0];
  t.equal(c?.state, 'down');
  t.equal(c?.failures, 2);
  t.equal(c?.probes, 2);
  t.equal(c?.latencyMs, 3);
  t.equal(c?.since, 1000);
  t.equal(c?.lastResult?.code, 'BadResponse');
  t.equal(c?.target, '10.0.0.1:30000/health,[fd00::1]:30000/health');
  hm.setChecks([...hm.status().checks.map(() => spec('c1', 'vip1', { hosts: ['10.0.0.1', 'fd00::1'] })), spec('c2', 'vip2')]);
  hm.setAnnounced('vip3', true);
  hm.setAnnounced('vip3', false);
  t.same(hm.stats(), { checks: 2, up: 0, down: 1, unknown: 1, invalid: 0, probesTotal: 2, probeFailuresTotal: 2, inFlight: 0, waiting: 0, suppressed: 0, holdDown: 1 });
});

t.test('shared VIP: per-Service checks gated against the VIP route', async (t) => {
  const { hm, run, script } = setup({ holdDownSec: 5 });
  t.teardown(() => hm.close());
  hm.setAnnounced('192.0.2.1', true);
  script.set('svc-b', 'NoLocalEndpoints');
  hm.setChecks([spec('svc-a', 'ns/a@192.0.2.1'), spec('svc-b', 'ns/b@192.0.2.1')]);
  const any = () => ['ns/a@192.0.2.1', 'ns/b@192.0.2.1'].some((k) => hm.gate(k, { announcedAs: '192.0.2.1' }).pass);
  t.equal(hm.gate('ns/a@192.0.2.1').pass, false, 'without announcedAs the service key is not announced: Pending');
  t.equal(hm.gate('ns/a@192.0.2.1', { announcedAs: '192.0.2.1' }).pass, true, 'kept: the VIP route is announced');
  await run(1000);
  t.equal(hm.gate('ns/b@192.0.2.1', { announcedAs: '192.0.2.1' }).pass, false, 'b down');
  t.equal(any(), true, 'a keeps the shared VIP');
  hm.setAnnounced('192.0.2.1', false);
  const g = hm.gate('ns/a@192.0.2.1', { announcedAs: '192.0.2.1' });
  t.same(g.reasons.map((r) => r.code), ['HoldDown'], 'the VIP hold-down applies to each service');
});

t.test('idle dampers are dropped once their penalty has decayed', async (t) => {
  const { hm, run, clock } = setup({ holdDownSec: 5 });
  t.teardown(() => hm.close());
  hm.setAnnounced('vip1', true);
  hm.setAnnounced('vip1', false);
  t.equal(hm.status().dampers.length, 1);
  await run(60_000 * 5, 10_000);
  t.equal(hm.status().dampers.length, 1, 'kept while the penalty is above 1');
  await run(60_000 * 6, 10_000);
  t.equal(hm.status().dampers.length, 0, 'dropped after ~10 half-lives');
  t.equal(clock.pending, 0, 'no timer left behind');
});

t.test('change events are batched per microtask', async (t) => {
  const { hm, changes, settle } = setup();
  t.teardown(() => hm.close());
  hm.setChecks([spec('a', 'vip-a'), spec('b', 'vip-b'), spec('c', 'vip-c')]);
  hm.setAnnounced('vip-x', true);
  hm.setAnnounced('vip-x', false);
  await settle();
  t.equal(changes.length, 1, 'one event');
  t.same(changes[0]?.keys, ['vip-a', 'vip-b', 'vip-c', 'vip-x']);
});
