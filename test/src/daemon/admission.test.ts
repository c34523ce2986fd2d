// The allowed address space as the daemon puts it in force (docs/decisions.md "Allowed address space"): the file's
// allowedPrefixes and pools, IPAddressPool objects, a BGPAdvertisement's allowedPrefixes (only narrowing), and the log
// line that says when no LoadBalancer or external address can be announced.
import t from 'tap';
import { pino } from 'pino';
import { validateConfig } from '../../../src/config/load.ts';
import type { Config } from '../../../src/config/schema.ts';
import { Daemon } from '../../../src/daemon/daemon.ts';
import type { ResourceKind } from '../../../src/k8s/types.ts';
import type { KubeObject } from '../../../src/k8s/types.ts';
import { HeraldMetrics } from '../../../src/metrics/metrics.ts';
import { FakeHealth, FakeSource, FakeSpeaker } from './fakes.ts';
import { heraldObject, node, service, slice } from '../../helpers/k8s-objects.ts';

function cfg(data: object): Config {
  const r = validateConfig({ bgp: { localAs: 65000, routerId: '10.0.0.1' }, source: { kubernetes: {} }, kubeProxy: { enabled: false }, peers: [{ name: 'a', address: '127.0.0.2', peerAs: 65001 }], ...data });
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return r.config;
}

function put(source: FakeSource, kind: ResourceKind, obj: KubeObject): void {
  source.emit('change', source.store.apply(kind, obj));
}

async function start(config: Config) {
  const source = new FakeSource();
  const lines: Array<{ level: number; msg: string }> = [];
  let speaker!: FakeSpeaker;
  const daemon = new Daemon(config, { nodeName: 'node-a', routerId: '10.0.0.1', nodeIps: ['127.0.0.1'] }, {
    createSpeaker: (opts) => (speaker = new FakeSpeaker(opts)),
    health: new FakeHealth(),
    source,
    logger: pino({ level: 'info' }, { write: (s: string) => void lines.push(JSON.parse(s) as { level: number; msg: string }) }),
    metrics: new HeraldMetrics({ version: 'test', defaultMetrics: false }),
    version: 'test',
    restarting: false,
    env: {},
  });
  source.store.apply('Node', node('node-a'));
  // A tenant's Service: a LoadBalancer address, an externalIP inside 203.0.113.0/24 and two outside anything allowed.
  source.store.apply('Service', service('web', { lbIPs: ['203.0.113.10'], externalIPs: ['203.0.113.99', '8.8.8.8', '1.1.1.1'] }));
  source.store.apply('EndpointSlice', slice('web-1', 'web', [['10.1.0.1', 'node-a']]));
  await daemon.start();
  source.isSynced = true;
  source.emit('synced');
  await daemon.idle();
  await daemon.idle();
  const prefixes = () => [...speaker.current.keys()].filter((p) => p !== '10.96.0.10/32').sort();
  return { daemon, source, lines, prefixes };
}

const ADS = [{ name: 'lb-and-external', addressKinds: ['loadBalancer', 'externalIP'] }];

t.test('guard: no pools, no allowedPrefixes: nothing of the tenant is announced, the log says why and how; an IPAddressPool object allows its addresses', async (t) => {
  const { daemon, source, lines, prefixes } = await start(cfg({ advertisements: ADS }));
  t.teardown(() => daemon.shutdown('test'));
  t.strictSame(prefixes(), [], 'nothing announced');
  const warned = lines.filter((l) => l.level === 40 && /neither pools nor allowedPrefixes are configured/.test(l.msg));
  t.equal(warned.length, 1, 'said once, plainly');
  t.match(warned[0]?.msg, /list the CIDRs Herald may announce them in under allowedPrefixes/);
  const vips = daemon.view.services().find((s) => s.service === 'default/web')?.vips ?? [];
  t.ok(vips.filter((v) => v.kind !== 'clusterIP').every((v) => !v.announced && v.reasons.some((r) => r.code === 'PrefixNotAllowed')), 'every LoadBalancer and external VIP says PrefixNotAllowed');
  put(source, 'IPAddressPool', heraldObject('IPAddressPool', 'public', { addresses: ['203.0.113.0/28'] }));
  await daemon.idle();
  await daemon.idle();
  t.strictSame(prefixes(), ['203.0.113.10/32'], "the pool object's addresses are allowed space; the rest stays out");
  t.ok(lines.some((l) => l.level === 30 && /now allow LoadBalancer and external addresses/.test(l.msg)), 'the change is logged');
});

t.test("guard: the file's allowedPrefixes, and a BGPAdvertisement object's allowedPrefixes narrowing them", async (t) => {
  const { daemon, source, prefixes } = await start(cfg({ allowedPrefixes: ['203.0.113.0/24'] }));
  t.teardown(() => daemon.shutdown('test'));
  t.strictSame(prefixes(), ['203.0.113.10/32'], 'the default advertisement: LoadBalancer addresses inside the list');
  put(source, 'BGPAdvertisement', heraldObject('BGPAdvertisement', 'external', { addressKinds: ['externalIP'], allowedPrefixes: ['0.0.0.0/0'] }));
  await daemon.idle();
  await daemon.idle();
  t.strictSame(prefixes(), ['203.0.113.99/32'], 'an externalIP inside the file\'s list; 0.0.0.0/0 on the object does not widen it (8.8.8.8, 1.1.1.1 stay out)');
  put(source, 'BGPAdvertisement', heraldObject('BGPAdvertisement', 'external', { addressKinds: ['externalIP'], allowedPrefixes: ['203.0.113.0/28'] }));
  await daemon.idle();
  await daemon.idle();
  t.strictSame(prefixes(), [], 'narrowed to /28: 203.0.113.99 is left out');
  const vip = daemon.view.services().find((s) => s.service === 'default/web')?.vips.find((v) => v.address === '203.0.113.99');
  t.match(vip?.reasons.find((r) => r.code === 'PrefixNotAllowed')?.message, 'advertisement external: 203.0.113.99 is outside its allowedPrefixes (203.0.113.0/28)');
});

t.test('guard (issue 35 N7): the services view shows what is on the wire, and what was asked for but withheld, with why', async (t) => {
  const source = new FakeSource();
  let speaker!: FakeSpeaker;
  const config = cfg({
    allowedPrefixes: ['203.0.113.0/24'],
    attributeChangeInterval: 0,
    advertisements: [{ name: 'lb', communities: ['64512:1'], serviceAttributes: { communities: ['64512:0-999'], med: true } }],
  });
  const daemon = new Daemon(config, { nodeName: 'node-a', routerId: '10.0.0.1', nodeIps: ['127.0.0.1'] }, {
    createSpeaker: (opts) => (speaker = new FakeSpeaker(opts)),
    health: new FakeHealth(),
    source,
    logger: pino({ level: 'silent' }),
    metrics: new HeraldMetrics({ version: 'test', defaultMetrics: false }),
    version: 'test',
    restarting: false,
    env: {},
  });
  t.teardown(() => daemon.shutdown('test'));
  const shared = (name: string, annotations: Record<string, string>, i: number) => {
    const s = service(name, { lbIPs: ['203.0.113.10'], clusterIPs: [`10.96.0.${10 + i}`] });
    s.metadata = { ...s.metadata, annotations };
    return s;
  };
  source.store.apply('Node', node('node-a'));
  source.store.apply('Service', shared('a', { 'herald.io/communities': '64512:666', 'herald.io/med': '7' }, 0));
  source.store.apply('Service', shared('b', { 'herald.io/communities': '64512:7', 'herald.io/med': '7' }, 1));
  source.store.apply('EndpointSlice', slice('a-1', 'a', [['10.1.0.1', 'node-a']]));
  source.store.apply('EndpointSlice', slice('b-1', 'b', [['10.1.0.2', 'node-a']]));
  await daemon.start();
  source.isSynced = true;
  source.emit('synced');
  await daemon.idle();
  await daemon.idle();
  const sent = speaker.current.get('203.0.113.10/32');
  t.strictSame(sent?.communities, [64512 * 65536 + 1], "on the wire: the advertisement's community only");
  t.equal(sent?.med, 7, 'the MED both Services ask for');
  const vip = daemon.view.services().find((s) => s.service === 'default/a')?.vips.find((v) => v.kind === 'loadBalancer');
  const entry = vip?.attributes?.[0];
  t.strictSame([entry?.communities, entry?.med], [['64512:1'], 7], 'the view shows the wire, not what the Service asked for');
  t.match(entry?.withheld?.[0], /herald\.io\/communities not sent on 203\.0\.113\.10\/32: not every Service and advertisement behind it asks for the same/);
  t.ok(vip?.reasons.some((r) => r.code === 'AttributeNotSent'), 'a reason the CLI and BGPNodeStatus show');
});
