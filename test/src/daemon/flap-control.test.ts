// Flap control never keeps a Service dark (issue 11; docs/decisions.md "Flap control"): hold-down and damping hold a
// VIP back only while other nodes can serve it. Real HealthManager (default flap control: hold-down 10 s, penalty
// 1000, suppress at 2000, half-life 60 s) on a FakeClock, the daemon's pipeline, a fake speaker.
import t from 'tap';
import type { Test } from 'tap';
import { pino } from 'pino';
import { FakeClock } from '../../../bgp/index.ts';
import { validateConfig } from '../../../src/config/load.ts';
import { Daemon } from '../../../src/daemon/daemon.ts';
import { HealthManager } from '../../../src/health/manager.ts';
import { HeraldMetrics } from '../../../src/metrics/metrics.ts';
import { FakeSource, FakeSpeaker } from './fakes.ts';
import type { EpSpec } from '../../helpers/k8s-objects.ts';
import { DOCUMENTATION_PREFIXES, node, service, slice } from '../../helpers/k8s-objects.ts';

const VIP = '198.51.100.1';

async function setup(t: Test, etp: 'Cluster' | 'Local') {
  const clock = new FakeClock(1_000_000);
  const health = new HealthManager({ clock, jitter: 0, probe: async () => ({ ok: true, message: 'ok', latencyMs: 1 }) });
  const source = new FakeSource();
  let speaker!: FakeSpeaker;
  const r = validateConfig({ bgp: { localAs: 65000, routerId: '10.0.0.1' }, allowedPrefixes: DOCUMENTATION_PREFIXES, peers: [{ name: 'a', address: '127.0.0.2', peerAs: 65001 }], source: { manifests: '/nonexistent' } });
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  const daemon = new Daemon(r.config, { nodeName: 'node-a', routerId: '10.0.0.1', nodeIps: ['127.0.0.1'] }, {
    createSpeaker: (o) => (speaker = new FakeSpeaker(o)), health, source, logger: pino({ level: 'silent' }), metrics: new HeraldMetrics({ version: 'test', defaultMetrics: false }), version: 'test', restarting: false, env: {}, clock,
  });
  t.teardown(() => daemon.shutdown('test'));
  for (const n of ['node-a', 'node-b', 'node-c']) source.store.apply('Node', node(n));
  source.store.apply('Service', service('web', { lbIPs: [VIP], etp }));
  await daemon.start();
  source.isSynced = true;
  source.emit('synced');
  const endpoints = async (eps: EpSpec[]) => {
    source.store.apply('EndpointSlice', slice('web-1', 'web', eps));
    source.emit('change', ['service:default/web']);
    await daemon.idle();
  };
  const after = async (ms: number) => {
    clock.advance(ms);
    await new Promise((res) => setTimeout(res, 5));
    await daemon.idle();
  };
  const announced = () => speaker.last.includes(`${VIP}/32`);
  const vip = () => daemon.view.services()[0]?.vips.find((v) => v.kind === 'loadBalancer');
  return { endpoints, after, announced, vip, health };
}

t.test("Cluster policy: the only endpoint crash-loops and ends ready: the VIP is announced at once, damping waived", async (t) => {
  const s = await setup(t, 'Cluster');
  for (let i = 0; i < 3; i++) {
    await s.endpoints([['10.1.0.9', 'node-b', { ready: true }]]);
    t.equal(s.announced(), true, `flap ${i + 1}: announced while the pod is ready`);
    await s.endpoints([['10.1.0.9', 'node-b', { ready: false }]]);
    t.equal(s.announced(), false, `flap ${i + 1}: withdrawn while it is not`);
    await s.after(2000);
  }
  await s.endpoints([['10.1.0.9', 'node-b', { ready: true }]]);
  t.equal(s.announced(), true, 'announced as soon as the pod is ready: every node sees the same flaps, none is damped against the others');
  t.match(s.vip()?.reasons, [{ code: 'ReadyEndpoint' }, { code: 'Advertised' }, { code: 'FlapControlWaived', message: /announced although flapping: suppressed after 3 withdrawals.*no other node can serve it/ }], 'the reason chain says which rule applied');
  t.equal(s.health.status().dampers.find((d) => d.key === `svc:default/web ${VIP}`)?.suppressed, true, 'the damper itself still counts the flaps');
});

t.test('Local policy: a flapping local endpoint while node-b serves steadily is suppressed; alone, it is not', async (t) => {
  const s = await setup(t, 'Local');
  const steady: EpSpec = ['10.1.0.2', 'node-b', { ready: true }];
  for (let i = 0; i < 3; i++) {
    await s.endpoints([['10.1.0.1', 'node-a', { ready: true }], steady]);
    t.equal(s.announced(), true, `flap ${i + 1}: announced`);
    await s.endpoints([['10.1.0.1', 'node-a', { ready: false }], steady]);
    await s.after(11_000);
  }
  await s.endpoints([['10.1.0.1', 'node-a', { ready: true }], steady]);
  t.equal(s.announced(), false, 'node-b serves the VIP: this flapping node is held back');
  t.match(s.vip()?.reasons, [{ code: 'HealthCheckFailing', causes: [{ code: 'Suppressed', message: /\(other nodes serve it meanwhile\)$/ }] }], 'the reason says other nodes serve it');
  // node-b's endpoint goes away: this node is the only one that can serve the VIP now.
  await s.endpoints([['10.1.0.1', 'node-a', { ready: true }], ['10.1.0.2', 'node-b', { ready: false }]]);
  t.equal(s.announced(), true, 'no other node can serve it: announced at once');
  t.match(s.vip()?.reasons, [{ code: 'LocalReadyEndpoint' }, { code: 'Advertised' }, { code: 'FlapControlWaived' }]);
});
