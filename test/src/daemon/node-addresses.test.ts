// The health gate never fails open (issue 11; docs/decisions.md "Node addresses"): kube-proxy's health servers are
// probed on the Node object's InternalIP of each family (--node-ip / node.ip only override their family); a Local
// VIP whose kube-proxy check applies but has no node address of its family is not announced, with
// NodeAddressUnknown, and neither is anything while kube-proxy's node check has no address at all. Real
// HealthManager on a FakeClock, a scripted probe that answers ok.
import t from 'tap';
import type { Test } from 'tap';
import { pino } from 'pino';
import { FakeClock } from '../../../bgp/index.ts';
import { validateConfig } from '../../../src/config/load.ts';
import type { Config } from '../../../src/config/schema.ts';
import { Daemon } from '../../../src/daemon/daemon.ts';
import { nodeAddresses } from '../../../src/daemon/check-specs.ts';
import { HealthManager } from '../../../src/health/manager.ts';
import type { CheckSpec, ProbeResult } from '../../../src/health/types.ts';
import { HeraldMetrics } from '../../../src/metrics/metrics.ts';
import { FakeSource, FakeSpeaker } from './fakes.ts';
import { DOCUMENTATION_PREFIXES, node, service, slice } from '../../helpers/k8s-objects.ts';
import type { NodeOpts } from '../../helpers/k8s-objects.ts';

function cfg(data: object): Config {
  const r = validateConfig({ bgp: { localAs: 65000, routerId: '10.0.0.1' }, allowedPrefixes: DOCUMENTATION_PREFIXES, ...data });
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return r.config;
}

const V4 = '198.51.100.1';
const V6 = '2001:db8::1';

async function setup(t: Test, o: { nodeIps?: string[]; node: NodeOpts }) {
  const clock = new FakeClock(1_000_000);
  const probes: CheckSpec[] = [];
  const health = new HealthManager({
    clock,
    jitter: 0,
    probe: async (spec): Promise<ProbeResult> => {
      probes.push(spec);
      return { ok: true, message: 'ok', latencyMs: 1 };
    },
  });
  const source = new FakeSource();
  let speaker!: FakeSpeaker;
  const daemon = new Daemon(
    cfg({ peers: [{ name: 'a', address: '127.0.0.2', peerAs: 65001 }], source: { manifests: '/nonexistent' }, kubeProxy: { enabled: true }, healthChecks: { interval: 1, timeout: 0.5, rise: 1, fall: 1 } }),
    { nodeName: 'node-a', routerId: '10.0.0.1', nodeIps: o.nodeIps ?? [] },
    { createSpeaker: (x) => (speaker = new FakeSpeaker(x)), health, source, logger: pino({ level: 'silent' }), metrics: new HeraldMetrics({ version: 'test', defaultMetrics: false }), version: 'test', restarting: false, env: {}, clock },
  );
  t.teardown(() => daemon.shutdown('test'));
  source.store.apply('Node', node('node-a', o.node));
  const web = service('web', { lbIPs: [V4, V6], etp: 'Local', clusterIPs: ['10.96.0.10', 'fd00:96::10'] });
  web.spec!.healthCheckNodePort = 32100;
  source.store.apply('Service', web);
  source.store.apply('EndpointSlice', slice('web-4', 'web', [['10.1.0.5', 'node-a']]));
  source.store.apply('EndpointSlice', slice('web-6', 'web', [['fd00:1::5', 'node-a']]));
  await daemon.start();
  source.isSynced = true;
  source.emit('synced');
  await daemon.idle();
  const settle = async () => {
    for (let i = 0; i < 3; i++) {
      clock.advance(1000);
      await new Promise((r) => setTimeout(r, 10));
      await daemon.idle();
    }
  };
  await settle();
  const targets = () => [...new Set(probes.map((p) => `${p.kind} ${p.hosts.join(',')}:${p.port}`))].sort();
  const vip = (address: string) => daemon.view.services()[0]?.vips.find((v) => v.address === address && v.kind === 'loadBalancer');
  return { daemon, source, speaker: () => speaker, targets, vip, settle, probes };
}

t.test('nodeAddresses: one per family, an override wins in its family only', async (t) => {
  t.same(nodeAddresses([], { IPv4: '10.0.0.5', IPv6: 'fd00::5' }), ['10.0.0.5', 'fd00::5']);
  t.same(nodeAddresses(['192.0.2.9'], { IPv4: '10.0.0.5', IPv6: 'fd00::5' }), ['192.0.2.9', 'fd00::5']);
  t.same(nodeAddresses(['fd00::9'], { IPv4: '10.0.0.5' }), ['10.0.0.5', 'fd00::9']);
  t.same(nodeAddresses([], {}), []);
  t.same(nodeAddresses(['192.0.2.9'], undefined), ['192.0.2.9']);
});

t.test("no --node-ip: kube-proxy is probed on the Node's InternalIP of each family; the IPv6 VIP on the IPv6 address", async (t) => {
  const s = await setup(t, { node: { addresses: [{ type: 'Hostname', address: 'node-a' }, { type: 'ExternalIP', address: '203.0.113.5' }, { type: 'InternalIP', address: '10.0.0.5' }, { type: 'InternalIP', address: 'fd00::5' }] } });
  t.same(s.targets(), ['kube-proxy-node 10.0.0.5,fd00::5:10256', 'kube-proxy-service 10.0.0.5:32100', 'kube-proxy-service fd00::5:32100']);
  t.same(s.speaker().last, [`${V4}/32`, `${V6}/128`], 'both VIPs announced once their checks passed');
});

t.test('--node-ip overrides its family only', async (t) => {
  const s = await setup(t, { nodeIps: ['192.0.2.9'], node: { addresses: [{ type: 'InternalIP', address: '10.0.0.5' }, { type: 'InternalIP', address: 'fd00::5' }] } });
  t.same(s.targets(), ['kube-proxy-node 192.0.2.9,fd00::5:10256', 'kube-proxy-service 192.0.2.9:32100', 'kube-proxy-service fd00::5:32100']);
});

t.test('no IPv6 node address: the IPv6 Local VIP is not announced, NodeAddressUnknown; the IPv4 one is', async (t) => {
  const s = await setup(t, { node: { addresses: [{ type: 'InternalIP', address: '10.0.0.5' }] } });
  t.same(s.speaker().last, [`${V4}/32`], 'only the IPv4 VIP');
  const v6 = s.vip(V6);
  t.equal(v6?.announced, false);
  t.match(v6?.reasons, [{ code: 'HealthCheckFailing', causes: [{ code: 'NodeAddressUnknown', message: /no IPv6 address/ }] }], 'the reason chain says why');
  t.match(s.daemon.view.health().filter((h) => h.state === 'invalid'), [{ gate: `svc:default/web ${V6}`, lastFailure: { code: 'NodeAddressUnknown' } }], 'herald health shows it');
  // The Node gains an IPv6 InternalIP: the check is built, passes, the VIP is announced.
  s.source.store.apply('Node', node('node-a', { addresses: [{ type: 'InternalIP', address: '10.0.0.5' }, { type: 'InternalIP', address: 'fd00::5' }] }));
  s.source.emit('change', ['node:node-a']);
  await s.settle();
  t.same(s.speaker().last, [`${V4}/32`, `${V6}/128`], 'announced once the address is known and its check passed');
});

t.test("no node address at all: kube-proxy's node check cannot be built, nothing is announced", async (t) => {
  const s = await setup(t, { node: {} });
  t.same(s.speaker().last, [], 'nothing announced: the health gate does not fail open');
  t.same(s.probes, [], 'nothing probed');
  t.match(s.vip(V4)?.reasons, [{ code: 'HealthCheckFailing', causes: [{ code: 'NodeAddressUnknown', message: /kube-proxy's health cannot be probed: this node has no address/ }] }]);
});
