// Daemon wiring with a fake Speaker, a fake HealthManager and a fake Source: what reaches
// speaker.setRoutes, when markInitialSyncDone is called, reload as a diff, state-change bookkeeping.
import t from 'tap';
import { pino } from 'pino';
import type { Logger } from 'pino';
import { FakeClock } from '../../../bgp/index.ts';
import { validateConfig } from '../../../src/config/load.ts';
import type { Config } from '../../../src/config/schema.ts';
import { computeDesiredRoutes } from '../../../src/controller/desired-routes.ts';
import { Daemon } from '../../../src/daemon/daemon.ts';
import { onTheWire } from '../../../src/daemon/admin-view.ts';
import { annotationDrainRecord } from '../../../src/daemon/drain.ts';
import type { DrainRecord } from '../../../src/daemon/drain.ts';
import { desiredRoute, desiredRoutesContext, MappingError, staticRoute } from '../../../src/daemon/mapping.ts';
import { gateKeyText, serviceGate } from '../../../src/daemon/gate-key.ts';
import { HeraldMetrics } from '../../../src/metrics/metrics.ts';
import { NotFoundError } from '../../../src/admin/view.ts';
import { FakeHealth, FakeSource, FakeSpeaker } from './fakes.ts';
import { DOCUMENTATION_PREFIXES, node, service, slice } from '../../helpers/k8s-objects.ts';

function cfg(data: object): Config {
  const r = validateConfig({ bgp: { localAs: 65000, routerId: '10.0.0.1' }, allowedPrefixes: DOCUMENTATION_PREFIXES, ...data });
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return r.config;
}

const tick = () => new Promise((r) => setImmediate(r));

function make(config: Config, o: { source?: FakeSource; env?: NodeJS.ProcessEnv; restarting?: boolean; nodeIp?: string | null; clock?: FakeClock; logger?: Logger; drainRecord?: DrainRecord } = {}) {
  let speaker!: FakeSpeaker;
  const health = new FakeHealth();
  const metrics = new HeraldMetrics({ version: 'test', defaultMetrics: false });
  const logger = o.logger ?? pino({ level: 'silent' });
  const daemon = new Daemon(config, { nodeName: 'node-a', routerId: '10.0.0.1', nodeIps: o.nodeIp === null ? [] : [o.nodeIp ?? '127.0.0.1'] }, {
    createSpeaker: (opts) => (speaker = new FakeSpeaker(opts)),
    health,
    ...(o.source ? { source: o.source } : {}),
    logger,
    metrics,
    version: 'test',
    restarting: o.restarting ?? false,
    env: o.env ?? {},
    ...(o.clock ? { clock: o.clock } : {}),
    ...(o.drainRecord ? { drainRecord: o.drainRecord } : {}),
  });
  return { daemon, speaker, health, metrics };
}

const peerA = { name: 'a', address: '127.0.0.2', peerAs: 65001 };
const peerB = { name: 'b', address: '127.0.0.3', peerAs: 65002 };

t.test('static routes only: peers added, routes set, initial sync at once', async (t) => {
  const { daemon, speaker } = make(cfg({ peers: [peerA, peerB], routes: [{ prefix: '192.0.2.10/32', communities: ['65000:1'], peers: ['a'] }, { prefix: '2001:db8::/64', med: 5 }] }), { restarting: true });
  t.same(speaker.opts, { localAs: 65000, bgpIdentifier: '10.0.0.1', gracefulRestart: { restarting: true } });
  await daemon.start();
  t.same(speaker.calls, ['markInitialSyncDone', 'add a', 'add b']);
  t.same(speaker.order, ['setRoutes 2', 'markInitialSyncDone', 'add a', 'add b', 'listen'], 'the first route set, then the peers and the listener');
  t.match(speaker.peerCfgs.get('a'), { name: 'a', address: '127.0.0.2', port: 179, peerAs: 65001, holdTimeSec: 90, connectRetryTimeSec: 120, passive: false, families: ['ipv4-unicast', 'ipv6-unicast'], gracefulRestart: false });
  const routes = speaker.routesSet.at(-1)!;
  t.same(routes.find((r) => r.prefix === '192.0.2.10/32'), { prefix: '192.0.2.10/32', family: 'ipv4-unicast', communities: [65000 * 65536 + 1], peers: ['a'] });
  t.same(routes.find((r) => r.prefix === '2001:db8::/64'), { prefix: '2001:db8::/64', family: 'ipv6-unicast', med: 5 });
  t.equal(daemon.view.status().ready, true);
  t.same((await daemon.view.routes({ peer: 'b' })).map((r) => r.prefix), ['2001:db8::/64']);
  t.same((await daemon.view.routes({ prefix: '192.0.2.0/24' })).map((r) => r.prefix), ['192.0.2.10/32']);
  t.same((await daemon.view.routes({ prefix: '192.0.2.10' })).map((r) => r.prefix), ['192.0.2.10/32']);
  t.same((await daemon.view.routes({ peer: 'a' }))[0]?.communities, ['65000:1']);
});

t.test('health-checked static route: announced only while its gate passes', async (t) => {
  const c = cfg({ peers: [peerA], routes: [{ prefix: '192.0.2.20/32', healthCheck: { kind: 'tcp', port: 8080 } }, { prefix: '192.0.2.21/32' }] });
  const { daemon, speaker, health } = make(c);
  health.failing.add('route:192.0.2.20/32');
  await daemon.start();
  t.same(speaker.last, ['192.0.2.21/32']);
  t.notOk(health.readBeforeRegistered.has('route:192.0.2.20/32'), 'the gate was read only after its check was registered');
  t.equal(health.specs.length, 1);
  t.match(health.specs[0], { gate: 'route:192.0.2.20/32', kind: 'tcp', hosts: ['127.0.0.1'], port: 8080, intervalSec: 5, rise: 2, fall: 3 });
  health.failing.clear();
  health.emit('change', ['route:192.0.2.20/32'], { nodeLevel: false });
  await tick();
  t.same(speaker.last, ['192.0.2.20/32', '192.0.2.21/32']);
  t.equal(health.announced.get('route:192.0.2.20/32'), true);
  health.failing.add('route:192.0.2.20/32');
  health.emit('change', [], { nodeLevel: false });
  await tick();
  t.same(speaker.last, ['192.0.2.21/32']);
  t.equal(health.announced.get('route:192.0.2.20/32'), false, 'withdrawal reported to the flap damper');
  t.match(daemon.view.health(), [{ gate: 'route:192.0.2.20/32', kind: 'tcp', target: '127.0.0.1:8080', state: 'down', since: '1970-01-01T00:00:00.000Z', latencyMs: 1.5, lastFailure: { code: 'ConnectionRefused', message: 'refused' } }]);
});

t.test('a health-checked static route with nothing to probe gets an invalid check, never an unchecked announcement', async (t) => {
  const { daemon, health } = make(cfg({ routes: [{ prefix: '192.0.2.40/32', healthCheck: { port: 80 } }] }), { nodeIp: null });
  await daemon.start();
  t.equal(health.specs.length, 1);
  t.match(health.specs[0], { gate: 'route:192.0.2.40/32', error: /no address to probe/ });
  t.match(daemon.view.health(), [{ gate: 'route:192.0.2.40/32', state: 'invalid', lastFailure: { code: 'InvalidCheck', message: /no address to probe/ } }]);
});

t.test('source: no End-of-RIB before sync; Service VIPs with reasons; nodeSelector peers', async (t) => {
  const source = new FakeSource();
  const c = cfg({ peers: [peerA, { ...peerB, nodeSelector: { matchLabels: { rack: 'r1' } } }], routes: [{ prefix: '192.0.2.30/32' }], source: { manifests: '/nonexistent' } });
  const { daemon, speaker, health } = make(c, { source });
  await daemon.start();
  t.same(speaker.calls, ['add a'], 'b is not selected (no node labels yet); no EoR before sync');
  t.same(speaker.last, ['192.0.2.30/32'], 'static routes announced before sync');
  t.equal(daemon.view.status().ready, false);
  t.match(daemon.view.status().notReady, ['manifests source not synced', 'initial route computation pending']);
  source.store.apply('Node', node('node-a', { labels: { rack: 'r1' } }));
  source.store.apply('Service', service('web', { lbIPs: ['198.51.100.1'], etp: 'Local' }));
  source.store.apply('EndpointSlice', slice('web-1', 'web', [['10.1.0.5', 'node-a']]));
  source.store.apply('Service', service('cart', { ns: 'shop', lbIPs: ['198.51.100.2'], etp: 'Local' }));
  source.store.apply('EndpointSlice', slice('cart-1', 'cart', [['10.1.0.6', 'node-b']], { ns: 'shop' }));
  source.isSynced = true;
  source.emit('synced');
  await daemon.idle();
  t.same(speaker.calls, ['add a', 'add b', 'markInitialSyncDone']);
  t.same(speaker.last, ['192.0.2.30/32', '198.51.100.1/32']);
  t.equal(daemon.view.status().ready, true);
  const svcs = daemon.view.services();
  t.same(svcs.map((s) => [s.service, s.vips.filter((v) => v.kind === 'loadBalancer').map((v) => v.announced)]), [['default/web', [true]], ['shop/cart', [false]]]);
  t.match(svcs[1]?.vips.find((v) => v.kind === 'loadBalancer')?.reasons, [{ code: 'NoLocalReadyEndpoint' }]);
  // The VIP's health gate fails: the controller recomputes that Service and the route goes.
  health.failing.add('svc:default/web 198.51.100.1');
  health.emit('change', ['svc:default/web 198.51.100.1'], { nodeLevel: false });
  await daemon.idle();
  t.same(speaker.last, ['192.0.2.30/32']);
  t.match(daemon.view.services()[0]?.vips.find((v) => v.kind === 'loadBalancer'), { announced: false, reasons: [{ code: 'HealthCheckFailing' }] });
  t.equal(health.announced.get('svc:default/web 198.51.100.1'), false);
  health.failing.clear();
  health.emit('change', ['svc:default/web 198.51.100.1'], { nodeLevel: false });
  await daemon.idle();
  t.same(speaker.last, ['192.0.2.30/32', '198.51.100.1/32']);
  // The node loses its label: peer b goes away.
  source.store.apply('Node', node('node-a', { labels: {} }));
  source.emit('change', ['node:node-a']);
  await daemon.idle();
  t.same(speaker.calls.slice(3), ['remove b']);
  await daemon.shutdown('test');
});

t.test('drain annotation as the record: static routes wait until the Node is read, and a node starting drained announces none', async (t) => {
  const c = cfg({ peers: [peerA], routes: [{ prefix: '192.0.2.31/32' }], source: { manifests: '/nonexistent' } });
  for (const drained of [true, false]) {
    const source = new FakeSource();
    const { daemon, speaker } = make(c, { source, drainRecord: annotationDrainRecord(async () => {}) });
    await daemon.start();
    t.same(speaker.last, [], `${drained ? 'drained' : 'undrained'} Node: no static route before the Node is read`);
    t.same(speaker.updates.flatMap((u) => u.changed), [], 'nor as an incremental change');
    t.match(daemon.view.status().notReady, ['manifests source not synced', 'static routes held until Node node-a is read: its herald.io/drain annotation may drain this node', 'initial route computation pending'], '/readyz says why');
    source.store.apply('Node', node('node-a', drained ? { annotations: { 'herald.io/drain': 'maintenance' } } : {}));
    source.isSynced = true;
    source.emit('synced');
    await daemon.idle();
    if (drained) {
      t.equal(speaker.draining, true, 'drained at once');
      t.ok(speaker.calls.indexOf('drain 0') >= 0 && speaker.calls.indexOf('drain 0') < speaker.calls.indexOf('markInitialSyncDone'), 'the drain (no wait) comes before End-of-RIB');
    } else {
      t.same(speaker.last, ['192.0.2.31/32'], 'undrained Node read: the static route is announced');
      t.equal(speaker.draining, false);
    }
    t.notOk(daemon.view.status().notReady.some((r) => r.startsWith('static routes held')), 'no longer held once the Node is read');
    await daemon.shutdown('test');
  }
});

t.test('annotation health checks: a VIP waits for its check to be registered and pass; bad annotations block with the reason', async (t) => {
  const source = new FakeSource();
  const { daemon, speaker, health } = make(cfg({ source: { manifests: '/nonexistent' } }), { source });
  await daemon.start();
  const web = service('web', { lbIPs: ['198.51.100.1'] });
  web.metadata!.annotations = { 'herald.io/health-check-type': 'http', 'herald.io/health-check-port': '8080', 'herald.io/health-check-path': '/ready' };
  const bad = service('bad', { lbIPs: ['198.51.100.2'] });
  bad.metadata!.annotations = { 'herald.io/health-check-type': 'tcp', 'herald.io/health-check-port': '80x' };
  source.store.apply('Node', node('node-a'));
  source.store.apply('Service', web);
  source.store.apply('EndpointSlice', slice('web-1', 'web', [['10.1.0.5', 'node-a'], ['10.1.0.6', 'node-b']]));
  source.store.apply('Service', bad);
  source.store.apply('EndpointSlice', slice('bad-1', 'bad', [['10.1.0.7', 'node-a']]));
  const api = service('api', { lbIPs: ['198.51.100.3'] });
  api.metadata!.annotations = { 'herald.io/health-check-type': 'tcp', 'herald.io/health-check-port': '9000' };
  source.store.apply('Service', api);
  source.store.apply('EndpointSlice', slice('api-1', 'api', [['10.1.0.8', 'node-a']]));
  let uncheckedAnnouncement = false;
  speaker.onChange = (routes) => {
    // Announced only after its gate was read passing while its check was registered (setChecks runs only when the
    // set of checks changes, so "registered in an earlier setChecks call" is not the criterion).
    if (routes.some((r) => r.prefix === '198.51.100.3/32') && !health.passedWhileRegistered.has('svc:default/api 198.51.100.3')) uncheckedAnnouncement = true;
  };
  health.failing.add('svc:default/web 198.51.100.1');
  source.isSynced = true;
  source.emit('synced');
  await daemon.idle();
  await daemon.idle();
  const webSpec = health.specs.find((x) => x.gate === 'svc:default/web 198.51.100.1');
  t.match(webSpec, { kind: 'http', port: 8080, path: '/ready', hosts: ['10.1.0.5'] }, 'probes the local endpoint only');
  const badSpec = health.specs.find((x) => x.gate === 'svc:default/bad 198.51.100.2');
  t.match(badSpec, { error: /health-check-port="80x"/ });
  t.same(speaker.last, ['198.51.100.3/32'], 'nothing announced while checks are failing or invalid; api passes');
  t.notOk(uncheckedAnnouncement, 'api was never announced before its check was registered');
  t.match(daemon.view.services().find((x) => x.service === 'default/web')?.vips[0], { announced: false, reasons: [{ code: 'HealthCheckFailing' }] });
  health.failing.clear();
  health.emit('change', ['svc:default/web 198.51.100.1'], { nodeLevel: false });
  await daemon.idle();
  t.same(speaker.last, ['198.51.100.1/32', '198.51.100.3/32'], 'announced once its check passes');
  await daemon.shutdown('test');
});

t.test('reload applies a peer diff and re-announces changed routes', async (t) => {
  const { daemon, speaker } = make(cfg({ peers: [peerA, peerB], routes: [{ prefix: '192.0.2.1/32' }] }));
  await daemon.start();
  speaker.calls = [];
  const d = daemon.reload(cfg({ peers: [{ ...peerA, holdTime: 30 }, { name: 'c', address: '127.0.0.4', peerAs: 65003 }], routes: [{ prefix: '192.0.2.2/32' }] }));
  t.same(speaker.calls, ['remove b', 'update a', 'add c']);
  t.equal(speaker.peerCfgs.get('a')?.holdTimeSec, 30);
  t.same(speaker.last, ['192.0.2.2/32']);
  t.same(d.peers.changed.map((c) => [c.name, c.sessionReset]), [['a', true]]);
  speaker.emit('peerState', { peer: 'b', from: 'Established', to: 'Idle', reason: { kind: 'notificationSent', code: 6, subcode: 3 } });
  t.same(daemon.view.peers().map((p) => p.name).sort(), ['a', 'c'], 'a removed peer leaves nothing behind');
  t.match(daemon.view.status().lastReload, { ok: true });
  // Unchanged reload: no peer calls at all.
  speaker.calls = [];
  daemon.reload(cfg({ peers: [{ ...peerA, holdTime: 30 }, { name: 'c', address: '127.0.0.4', peerAs: 65003 }], routes: [{ prefix: '192.0.2.2/32' }] }));
  t.same(speaker.calls, []);
});

t.test('reload with an unresolvable password changes nothing', async (t) => {
  const { daemon, speaker } = make(cfg({ peers: [peerA] }), { env: {} });
  await daemon.start();
  speaker.calls = [];
  t.throws(() => daemon.reload(cfg({ peers: [peerA, { ...peerB, password: { env: 'NOPE' } }] })), MappingError);
  t.same(speaker.calls, []);
  t.equal(daemon.currentConfig.peers.length, 1);
  const withPw = make(cfg({ peers: [{ ...peerB, password: { env: 'PW' } }] }), { env: { PW: 'secret' } });
  await withPw.daemon.start();
  t.equal(withPw.speaker.peerCfgs.get('b')?.md5Password, 'secret');
  t.throws(() => make(cfg({ peers: [{ ...peerB, password: { file: '/nonexistent/pw' } }] })), /peers\[0\]\.password\.file: cannot read/);
});

t.test('session events: history, metrics; actions', async (t) => {
  const { daemon, speaker, metrics } = make(cfg({ peers: [{ ...peerA, gracefulShutdown: { enabled: true, waitTime: 7 } }] }));
  await daemon.start();
  speaker.states.set('a', 'Established');
  speaker.emit('peerState', { peer: 'a', from: 'OpenConfirm', to: 'Established', reason: { kind: 'started' } });
  speaker.states.set('a', 'Idle');
  speaker.emit('peerState', { peer: 'a', from: 'Established', to: 'Idle', reason: { kind: 'notificationReceived', code: 6, subcode: 2, text: 'maint' } });
  const p = daemon.view.peers()[0]!;
  t.equal(p.flaps, 1);
  t.match(p.lastError, { kind: 'notificationReceived', code: 6, subcode: 2, description: /Cease/, message: 'maint' });
  const text = (await daemon.view.metrics()).body;
  t.match(text, /herald_bgp_notifications_total\{peer="a",direction="received",code="6",subcode="2"\} 1/);
  t.match(text, /herald_bgp_session_state_changes_total\{peer="a",from="Established",to="Idle"\} 1/);
  t.match(text, /herald_bgp_session_up\{peer="a"\} 0/);
  t.equal(metrics.registry.getSingleMetric('herald_build_info') !== undefined, true);
  speaker.states.set('a', 'Established'); // the RFC 8326 wait applies only with an Established session (operator.test.ts)
  await daemon.resetPeer('a', true);
  await t.rejects(daemon.view.resetPeer('zz', false), NotFoundError);
  await daemon.drain();
  t.equal(daemon.view.status().drained, true);
  await daemon.undrain();
  await daemon.shutdown('SIGTERM');
  t.same(speaker.calls.slice(-4), ['reset a true', 'drain 7', 'undrain', 'stop restart'], 'undrained: SIGTERM is a restart');
  t.equal(daemon.view.live(), false);
});

// Regression: kube-proxy checks ran only with the Kubernetes source, so the manifests-driven demo's kube-proxy 503 never
// withdrew anything. Now `kubeProxy.enabled` decides; its default stays off for the manifests source (plain Linux).
t.test('kube-proxy checks: off by default with the manifests source, on when kubeProxy.enabled', async (t) => {
  for (const enabled of [undefined, true]) {
    const source = new FakeSource();
    const c = cfg({ peers: [peerA], source: { manifests: '/nonexistent' }, ...(enabled ? { kubeProxy: { enabled } } : {}) });
    const { daemon, health } = make(c, { source });
    await daemon.start();
    source.store.apply('Node', node('node-a'));
    const web = service('web', { lbIPs: ['198.51.100.1'], etp: 'Local' });
    web.spec!.healthCheckNodePort = 32100;
    source.store.apply('Service', web);
    source.store.apply('EndpointSlice', slice('web-1', 'web', [['10.1.0.5', 'node-a']]));
    source.isSynced = true;
    source.emit('synced');
    await daemon.idle();
    const kinds = health.specs.map((s) => `${s.kind} ${s.hosts.join(',')}:${s.port}`).sort();
    if (enabled) t.same(kinds, ['kube-proxy-node 127.0.0.1:10256', 'kube-proxy-service 127.0.0.1:32100'], 'both kube-proxy checks with enabled: true');
    else t.same(kinds, [], 'no kube-proxy checks by default with the manifests source');
    await daemon.shutdown('test');
  }
});

// Regression: after a restart End-of-RIB went out before the health checks of the VIPs had passed `rise` times, so
// the router flushed the routes graceful restart had kept (the demo saw node1's path vanish for ~1 s).
t.test('End-of-RIB waits for the first verdict of pending VIP health checks', async (t) => {
  const source = new FakeSource();
  const { daemon, speaker, health } = make(cfg({ peers: [peerA], source: { manifests: '/nonexistent' }, kubeProxy: { enabled: true } }), { source });
  const gate = 'svc:default/web 198.51.100.1';
  health.failing.add(gate); // FakeHealth reports a failing gate as Pending: not passed rise times yet
  await daemon.start();
  source.store.apply('Node', node('node-a'));
  const web = service('web', { lbIPs: ['198.51.100.1'], etp: 'Local' });
  web.spec!.healthCheckNodePort = 32100;
  source.store.apply('Service', web);
  source.store.apply('EndpointSlice', slice('web-1', 'web', [['10.1.0.5', 'node-a']]));
  source.isSynced = true;
  source.emit('synced');
  await daemon.idle();
  t.notOk(speaker.calls.includes('markInitialSyncDone'), 'no End-of-RIB while the check is pending');
  health.failing.clear();
  health.emit('change', [gate], { nodeLevel: false });
  await daemon.idle();
  t.ok(speaker.calls.includes('markInitialSyncDone'), 'End-of-RIB once the check passed');
  t.same(speaker.last, ['198.51.100.1/32'], 'and the VIP is announced in the same table');
  await daemon.shutdown('test');
});

t.test('one EndpointSlice change among 5,000 Services costs O(1): one decision, at most one Route object, one gate', async (t) => {
  const N = 5000;
  const source = new FakeSource();
  // The VIPs are 10.100.x.y and 10.99.0.1: the space they are drawn from is allowed.
  const c = cfg({ peers: [peerA], source: { manifests: '/nonexistent' }, routes: [{ prefix: '192.0.2.99/32' }], allowedPrefixes: ['10.96.0.0/11'] });
  const { daemon, speaker, health } = make(c, { source });
  const vip = (i: number) => `10.${100 + (i >> 16)}.${(i >> 8) & 255}.${i & 255}`;
  source.store.apply('Node', node('node-a'));
  for (let i = 0; i < N; i++) {
    source.store.apply('Service', service(`s${i}`, { lbIPs: [vip(i)] }));
    source.store.apply('EndpointSlice', slice(`s${i}-1`, `s${i}`, [[`10.1.${i >> 8}.${i & 255}`, 'node-a']]));
  }
  // One Service with an annotation health check: its spec is recomputed when its endpoints change.
  const checked = service('checked', { lbIPs: ['10.99.0.1'] });
  checked.metadata!.annotations = { 'herald.io/health-check-type': 'tcp', 'herald.io/health-check-port': '9000' };
  source.store.apply('Service', checked);
  source.store.apply('EndpointSlice', slice('checked-1', 'checked', [['10.2.0.1', 'node-a'], ['10.2.0.2', 'node-a']]));
  await daemon.start();
  source.isSynced = true;
  source.emit('synced');
  await daemon.idle();
  await daemon.idle();
  t.equal(speaker.current.size, N + 2, 'every VIP and the static route desired');
  t.ok(speaker.current.has('10.99.0.1/32'), 'the checked VIP is announced once its check is registered');
  const setRoutesBefore = speaker.routesSet.length;
  const stats0 = { ...daemon.reconcileStats };
  const objects0 = new Map(speaker.current);
  const setChecks0 = health.calls;
  health.announceCalls = [];
  speaker.updates = [];
  const flip = async (name: string, eps: Parameters<typeof slice>[2]) => {
    source.store.apply('EndpointSlice', slice(`${name}-1`, name, eps));
    source.emit('change', [`service:default/${name}`]);
    await daemon.idle();
  };

  // 1. s1234's only endpoint turns unready: its VIP is withdrawn, nothing else is touched.
  await flip('s1234', [['10.1.4.210', 'node-a', { ready: false }]]);
  t.equal(daemon.reconcileStats.full, stats0.full, 'no full recompute');
  t.equal(daemon.reconcileStats.servicesApplied - stats0.servicesApplied, 1, 'one Service decision applied');
  t.equal(daemon.reconcileStats.specsComputed - stats0.specsComputed, 1, "one Service's checks recomputed");
  t.equal(daemon.reconcileStats.routesMade - stats0.routesMade, 0, 'no Route object made for a withdrawal');
  t.equal(speaker.routesSet.length, setRoutesBefore, 'the whole set is not handed over again');
  t.same(speaker.updates, [{ changed: [], removed: [`${vip(1234)}/32`] }], 'the speaker gets exactly the withdrawal');
  t.same(health.announceCalls, [[`svc:default/s1234 ${vip(1234)}`, false]], 'only the changed gate is reported');
  t.equal(health.calls, setChecks0, 'checks unchanged: no setChecks');
  let sameObjects = 0;
  for (const [p, r] of speaker.current) if (objects0.get(p) === r) sameObjects++;
  t.equal(sameObjects, N + 1, 'every other route keeps its object');

  // 2. Ready again: announced with exactly one new Route object.
  const stats1 = { ...daemon.reconcileStats };
  health.announceCalls = [];
  speaker.updates = [];
  await flip('s1234', [['10.1.4.210', 'node-a']]);
  t.equal(daemon.reconcileStats.routesMade - stats1.routesMade, 1, 'one Route object made');
  t.equal(daemon.reconcileStats.servicesApplied - stats1.servicesApplied, 1, 'one Service decision applied');
  t.same(speaker.updates.map((u) => [u.changed.map((r) => r.prefix), u.removed]), [[[`${vip(1234)}/32`], []]]);
  t.same(health.announceCalls, [[`svc:default/s1234 ${vip(1234)}`, true]]);
  t.equal(speaker.current.size, N + 2);

  // 3. The checked Service loses a local endpoint: its check's target changes, so the checks are handed over again.
  const stats2 = { ...daemon.reconcileStats };
  speaker.updates = [];
  await flip('checked', [['10.2.0.1', 'node-a']]);
  t.equal(health.calls, setChecks0 + 1, 'setChecks once: the check changed');
  t.match(health.specs.find((x) => x.gate === 'svc:default/checked 10.99.0.1'), { hosts: ['10.2.0.1'] });
  t.equal(daemon.reconcileStats.servicesApplied - stats2.servicesApplied, 1);
  t.same(speaker.updates, [], 'its route did not change: nothing for the speaker');

  // 4. Level-triggered: a reload recomputes everything, and unchanged routes keep their objects.
  const stats3 = { ...daemon.reconcileStats };
  const objects3 = new Map(speaker.current);
  health.announceCalls = [];
  daemon.reload(c);
  t.equal(daemon.reconcileStats.full - stats3.full, 1, 'a reload is a full recompute');
  t.equal(daemon.reconcileStats.routesMade - stats3.routesMade, 0, 'no Route object remade');
  t.equal(speaker.routesSet.length, setRoutesBefore, 'nothing changed: nothing handed over (the Speaker holds the table, issue 34)');
  t.equal(speaker.current.size, N + 2);
  let kept = 0;
  for (const [p, r] of speaker.current) if (objects3.get(p) === r) kept++;
  t.equal(kept, N + 2, 'object identity kept');
  t.same(health.announceCalls, [], 'no gate changed');
  await daemon.shutdown('test');
});

t.test('a failing health gate keeps its causes as data in the service view (code, until)', async (t) => {
  const source = new FakeSource();
  const { daemon, health } = make(cfg({ peers: [peerA], source: { manifests: '/nonexistent' } }), { source });
  const gate = 'svc:default/web 198.51.100.1';
  health.gate = (key: string) => (key === gate ? { pass: false, reasons: [{ code: 'Suppressed', message: 'flapping: suppressed', since: 1000, until: 61000 }] } : { pass: true, reasons: [] });
  await daemon.start();
  source.store.apply('Node', node('node-a'));
  source.store.apply('Service', service('web', { lbIPs: ['198.51.100.1'], etp: 'Local' }));
  source.store.apply('EndpointSlice', slice('web-1', 'web', [['10.1.0.5', 'node-a']]));
  source.isSynced = true;
  source.emit('synced');
  await daemon.idle();
  const vip = daemon.view.services()[0]?.vips.find((v) => v.kind === 'loadBalancer');
  t.match(vip, { announced: false, reasons: [{ code: 'HealthCheckFailing', causes: [{ code: 'Suppressed', since: '1970-01-01T00:00:01.000Z', until: '1970-01-01T00:01:01.000Z' }] }] });
  await daemon.shutdown('test');
});

// The production path is incremental (the controller's candidate changes, the gate's verdict changes, route
// assembly's per-prefix merge and rate limit, updateRoutes); the reference is computeDesiredRoutes from scratch. They
// must agree after any sequence of object changes, verdict flips and other nodes' changes, once the rate limit's
// interval has passed: Services sharing VIPs and aggregated prefixes, link bandwidth (weighting), locality MED and
// prepend, the rendezvous choice (maxNodesPerVip) and the path-attribute annotations included.
t.test('the incremental pipeline always equals a from-scratch computation (seeded random operations, flapping gates, steering)', async (t) => {
  const source = new FakeSource();
  const clock = new FakeClock(1_000_000);
  // Two owners of one /31 with different communities: the merged route's attributes follow which Services exist.
  const advertisements = [
    // lb and agg accept the Services' annotations (no-export never: a well-known community), ext accepts none.
    { name: 'lb', addressKinds: ['loadBalancer'], weighting: 'endpoints', bandwidthPerEndpoint: '8mbps', maxNodesPerVip: 1, locality: { med: 50, prependOthers: 1 }, serviceAttributes: { communities: ['65000:100-200'], med: true, maxPrepend: 2 } },
    { name: 'agg', addressKinds: ['loadBalancer'], aggregationLength: 31, communities: ['65000:7'], serviceAttributes: { communities: ['65000:100-200'], med: true, maxPrepend: 2 } },
    { name: 'ext', addressKinds: ['externalIP'], aggregationLength: 31, communities: ['65000:9'], localPref: 300, locality: { prependOthers: 2 } },
  ];
  const c = cfg({ peers: [peerA], source: { manifests: '/nonexistent' }, advertisements, attributeChangeInterval: 5, routes: [{ prefix: '192.0.2.99/32' }, { prefix: '192.0.2.3/32', communities: ['65000:1'] }] });
  const { daemon, speaker, health } = make(c, { source, clock });
  await daemon.start();
  const nodes = ['node-a', 'node-b', 'node-c'];
  for (const n of nodes) source.store.apply('Node', node(n));
  source.isSynced = true;
  source.emit('synced');
  await daemon.idle();
  let seed = 4242;
  const rnd = (n: number): number => {
    seed = (seed + 0x6d2b79f5) | 0;
    let x = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) % n;
  };
  const change = (keys: string[]) => source.emit('change', keys);
  const gateText = (svc: string, address: string) => gateKeyText(serviceGate(svc, address));
  const annotations = (): Record<string, string> => {
    const a: Record<string, string> = {};
    if (rnd(3) === 0) a['herald.io/communities'] = ['65000:100', '65000:200 no-export'][rnd(2)] as string;
    if (rnd(3) === 0) a['herald.io/med'] = String(rnd(3) * 10);
    if (rnd(3) === 0) a['herald.io/as-path-prepend'] = String(rnd(3));
    return a;
  };
  let compared = 0;
  let nonTrivial = 0;
  let flips = 0;
  let weighted = 0;
  let notChosen = 0;
  let fallback = 0;
  for (let step = 0; step < 400; step++) {
    const i = rnd(5);
    switch (rnd(8)) {
      case 0: {
        const svc = service(`s${i}`, { lbIPs: [`192.0.2.${rnd(4)}`], externalIPs: rnd(2) ? [`192.0.2.${rnd(4)}`] : [], etp: rnd(2) ? 'Local' : 'Cluster' });
        svc.metadata!.annotations = annotations();
        change(source.store.apply('Service', svc));
        break;
      }
      case 1:
        change(source.store.remove('Service', service(`s${i}`)));
        break;
      case 2:
      case 3:
        change(source.store.apply('EndpointSlice', slice(`s${i}-${rnd(2)}`, `s${i}`, [[`10.0.0.${rnd(9)}`, nodes[rnd(3)], { ready: rnd(4) > 0 }], [`10.0.1.${rnd(9)}`, nodes[rnd(3)]]])));
        break;
      case 4:
        change(source.store.remove('EndpointSlice', slice(`s${i}-${rnd(2)}`, `s${i}`, [])));
        break;
      case 5: {
        // A verdict flips: the gate re-gates that Service from its cached candidates.
        const g = gateText(`default/s${i}`, `192.0.2.${rnd(4)}`);
        if (health.failing.has(g)) health.failing.delete(g);
        else health.failing.add(g);
        health.emit('change', [g], { nodeLevel: false });
        flips++;
        break;
      }
      case 6: {
        // Another node's readiness changes the rendezvous choice; this node's rarely.
        const n = rnd(8) === 0 ? 'node-a' : (nodes[1 + rnd(2)] as string);
        change(source.store.apply('Node', node(n, { ready: rnd(3) ? 'True' : 'False' })));
        break;
      }
      case 7:
        // Time passes: held attribute changes may go out in between.
        clock.advance(rnd(4000));
        break;
    }
    await daemon.idle();
    if (rnd(4) !== 0) continue;
    clock.advance(5000); // every held attribute change is due
    await daemon.idle();
    const want = computeDesiredRoutes(source.store, desiredRoutesContext(c, 'node-a'), (svc, address) => ({ pass: !health.failing.has(gateText(svc, address)) }));
    const wantRoutes = new Map(want.routes.map((d) => [d.prefix, desiredRoute(d)]));
    for (const r of c.routes) wantRoutes.set(staticRoute(r).prefix, staticRoute(r));
    t.same(new Map([...speaker.current].sort()), new Map([...wantRoutes].sort()), `routes at step ${step}`);
    const codes = (svcs: readonly { service: string; vips: { address: string; kind: string; announced: boolean; reasons: { code: string }[]; attributes?: unknown }[] }[]) =>
      svcs.map((s) => [s.service, s.vips.map((v) => [v.address, v.kind, v.announced, v.reasons.map((r) => r.code), v.attributes])]);
    // The view shows each steering entry's prefix as it is on the wire: the merged route of the from-scratch set.
    const merged = new Map(want.routes.map((d) => [d.prefix, d]));
    t.same(codes(daemon.view.services()), codes(want.services.map((x) => onTheWire(x, (p) => merged.get(p)))), `decisions at step ${step}`);
    compared++;
    if (want.routes.length >= 2) nonTrivial++;
    if (want.routes.some((r) => r.linkBandwidth !== undefined)) weighted++;
    const reasons = want.services.flatMap((s) => s.vips.flatMap((v) => v.reasons.map((r) => r.code)));
    if (reasons.includes('NotChosen')) notChosen++;
    if (reasons.includes('LocalityFallback')) fallback++;
  }
  t.ok(compared > 60, `${compared} comparisons`);
  t.ok(nonTrivial > 20, `${nonTrivial} comparisons with at least 2 Service routes`);
  t.ok(flips > 20, `${flips} verdict flips`);
  t.ok(weighted > 10, `${weighted} comparisons with a link bandwidth`);
  t.ok(notChosen > 10, `${notChosen} comparisons with a VIP this node was not chosen for`);
  t.ok(fallback > 10, `${fallback} comparisons with a locality fallback`);
  t.ok(daemon.reconcileStats.attributeChangesHeld > 5, `the rate limit held attribute changes (${daemon.reconcileStats.attributeChangesHeld})`);
  t.ok(speaker.updates.length > 20, `the incremental path (updateRoutes) carried the changes: ${speaker.updates.length} updates`);
  t.equal(speaker.routesSet.length, 1, 'one whole set, at start: every later pass, full or not, hands over what changed (issue 34)');
  t.ok(daemon.reconcileStats.incremental > 5 * daemon.reconcileStats.full, 'most passes are incremental');
  await daemon.shutdown('test');
});

t.test('weighting: an endpoint-count change re-announces only that VIP, at most once per attributeChangeInterval', async (t) => {
  const source = new FakeSource();
  const clock = new FakeClock(1_000_000);
  const advertisements = [{ name: 'lb', addressKinds: ['loadBalancer'], weighting: 'endpoints', bandwidthPerEndpoint: 1000 }];
  const c = cfg({ peers: [peerA], source: { manifests: '/nonexistent' }, advertisements, attributeChangeInterval: 5 });
  const { daemon, speaker } = make(c, { source, clock });
  const eps = (n: number, base: number): Parameters<typeof slice>[2] => Array.from({ length: n }, (_, i) => [`10.1.${base}.${i + 1}`, 'node-a']);
  source.store.apply('Node', node('node-a'));
  for (let i = 0; i < 3; i++) {
    source.store.apply('Service', service(`s${i}`, { lbIPs: [`192.0.2.${i + 1}`], etp: 'Local', clusterIPs: [`10.96.0.${i + 1}`] }));
    source.store.apply('EndpointSlice', slice(`s${i}-1`, `s${i}`, eps(1, i)));
  }
  await daemon.start();
  source.isSynced = true;
  source.emit('synced');
  await daemon.idle();
  const bw = (prefix: string) => speaker.current.get(prefix)?.extendedCommunities?.[0]?.value.readFloatBE(4);
  t.same([bw('192.0.2.1/32'), bw('192.0.2.2/32'), bw('192.0.2.3/32')], [1000, 1000, 1000], 'each node weighs by its one endpoint');
  const scale = async (n: number) => {
    source.store.apply('EndpointSlice', slice('s1-1', 's1', eps(n, 1)));
    source.emit('change', ['service:default/s1']);
    await daemon.idle();
  };
  clock.advance(10_000);
  speaker.updates = [];
  const objects = new Map(speaker.current);
  // s1 scales 1 → 3: only its VIP goes out again, with the new weight.
  await scale(3);
  t.same(speaker.updates.map((u) => [u.changed.map((r) => r.prefix), u.removed]), [[['192.0.2.2/32'], []]], 'only the affected VIP');
  t.equal(bw('192.0.2.2/32'), 3000);
  t.equal(speaker.current.get('192.0.2.1/32'), objects.get('192.0.2.1/32'), 'the others keep their Route objects');
  t.equal(speaker.current.get('192.0.2.3/32'), objects.get('192.0.2.3/32'));
  // Scaling on within the interval: held, then the latest value once the interval ends.
  speaker.updates = [];
  clock.advance(1000);
  await scale(5);
  clock.advance(1000);
  await scale(8);
  t.same(speaker.updates, [], 'held within the interval');
  t.equal(bw('192.0.2.2/32'), 3000, 'the value sent stays');
  const s1 = () => daemon.view.services().find((s) => s.service === 'default/s1')?.vips.find((v) => v.kind === 'loadBalancer');
  t.match(s1()?.reasons.find((r) => r.code === 'Weighted')?.message, /^weight 8 of 8 endpoints/, 'the chain shows the new count at once');
  t.equal(s1()?.attributes?.[0]?.heldUntil, new Date(1_000_000 + 10_000 + 5000).toISOString(), 'and says when it goes out');
  t.equal(daemon.view.services().find((s) => s.service === 'default/s0')?.vips[0]?.attributes?.[0]?.heldUntil, undefined, 'nothing held for the others');
  clock.advance(3000);
  await daemon.idle();
  t.equal(s1()?.attributes?.[0]?.heldUntil, undefined, 'sent: no longer held');
  t.same(speaker.updates.map((u) => u.changed.map((r) => r.prefix)), [['192.0.2.2/32']], 'one UPDATE when the interval ends');
  t.equal(bw('192.0.2.2/32'), 8000, 'with the latest count; 5 never went out');
  // Scaling to zero withdraws at once: withdrawals are never held.
  speaker.updates = [];
  clock.advance(100);
  await scale(0);
  t.same(speaker.updates.map((u) => u.removed), [['192.0.2.2/32']], 'withdrawn at once');
  await daemon.shutdown('test');
});

/** The samples of one metric in the exposition text: label text → value. */
function samples(text: string, name: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const m of text.matchAll(new RegExp(`^${name}(\\{[^}]*\\})? (\\S+)$`, 'gm'))) out.set(m[1] ?? '', Number(m[2]));
  return out;
}

// Regression: a removed peer's counters and histograms (state changes, NOTIFICATIONs, messages, UPDATE send times,
// BFD) stayed in /metrics forever, and the Cease of its removal was counted after it was gone.
t.test('a removed peer takes its metric series with it; the events of its removal are not counted', async (t) => {
  const { daemon, speaker } = make(cfg({ peers: [peerA, peerB] }));
  await daemon.start();
  for (const p of ['a', 'b']) {
    speaker.states.set(p, 'Established');
    speaker.emit('peerState', { peer: p, from: 'OpenConfirm', to: 'Established', reason: { kind: 'started' } });
    speaker.emit('peerState', { peer: p, from: 'Established', to: 'Idle', reason: { kind: 'notificationReceived', code: 6, subcode: 2 } });
    speaker.emit('updateSent', { peer: p, packMs: 0.5 });
    speaker.emit('bfdState', { peer: p, from: 'Down', to: 'Up', diagnostic: 'No Diagnostic', remoteState: 'Up', detectionTimeMs: 900, failure: false });
  }
  const peerSeries = (text: string, peer: string) => text.split('\n').filter((l) => l.startsWith('herald_') && l.includes(`peer="${peer}"`));
  const before = (await daemon.view.metrics()).body;
  for (const name of ['herald_bgp_session_state_changes_total', 'herald_bgp_notifications_total', 'herald_bgp_update_send_duration_seconds_count', 'herald_bfd_session_state_changes_total', 'herald_bgp_session_up']) {
    t.ok(peerSeries(before, 'b').some((l) => l.startsWith(name)), `b has ${name} before`);
  }
  t.ok(peerSeries(before, 'b').length >= 8, `${peerSeries(before, 'b').length} series of b`);

  daemon.reload(cfg({ peers: [peerA] }));
  // The speaker stops b's session: Cease / Peer De-configured, after b left the configuration.
  speaker.emit('peerState', { peer: 'b', from: 'Established', to: 'Idle', reason: { kind: 'notificationSent', code: 6, subcode: 3 } });
  speaker.emit('updateSent', { peer: 'b', packMs: 0.5 });
  speaker.emit('bfdState', { peer: 'b', from: 'Up', to: 'AdminDown', diagnostic: 'Administratively Down', remoteState: 'Up', detectionTimeMs: 0, failure: false });
  const after = (await daemon.view.metrics()).body;
  t.same(peerSeries(after, 'b'), [], 'no series of b after its removal');
  t.same(peerSeries(after, 'a').length, peerSeries(before, 'a').length, 'a keeps all of its series');
  t.equal(samples(after, 'herald_bgp_session_state_changes_total').get('{peer="a",from="OpenConfirm",to="Established"}'), 1);

  // Configured again: it starts from nothing.
  daemon.reload(cfg({ peers: [peerA, peerB] }));
  speaker.emit('peerState', { peer: 'b', from: 'Idle', to: 'Connect', reason: { kind: 'started' } });
  const again = (await daemon.view.metrics()).body;
  t.same(peerSeries(again, 'b').filter((l) => l.startsWith('herald_bgp_session_state_changes_total')), ['herald_bgp_session_state_changes_total{peer="b",from="Idle",to="Connect"} 1']);
  await daemon.shutdown('test');
});

t.test('herald_vip_announced: 1 or 0 per VIP this node handles; VIPs no advertisement selects here are left out', async (t) => {
  const source = new FakeSource();
  const { daemon, health } = make(cfg({ source: { manifests: '/nonexistent' } }), { source });
  await daemon.start();
  source.store.apply('Node', node('node-a'));
  source.store.apply('Service', service('web', { lbIPs: ['198.51.100.1'], etp: 'Local' }));
  source.store.apply('EndpointSlice', slice('web-1', 'web', [['10.1.0.5', 'node-a']]));
  source.store.apply('Service', service('cart', { ns: 'shop', lbIPs: ['198.51.100.2'], etp: 'Local' }));
  source.store.apply('EndpointSlice', slice('cart-1', 'cart', [['10.1.0.6', 'node-b']], { ns: 'shop' }));
  source.store.apply('Service', service('other', { lbIPs: ['198.51.100.3'], lbClass: 'example.com/other' }));
  source.isSynced = true;
  source.emit('synced');
  await daemon.idle();
  const vips = async () => samples((await daemon.view.metrics()).body, 'herald_vip_announced');
  t.same(
    [...(await vips())].sort(),
    [
      ['{service="default/web",address="198.51.100.1"}', 1],
      ['{service="shop/cart",address="198.51.100.2"}', 0],
    ],
    'announced web, not cart (no local endpoint); no ClusterIP (no advertisement selects it), no foreign-class VIP',
  );
  health.failing.add('svc:default/web 198.51.100.1');
  health.emit('change', ['svc:default/web 198.51.100.1'], { nodeLevel: false });
  await daemon.idle();
  t.equal((await vips()).get('{service="default/web",address="198.51.100.1"}'), 0, 'withdrawn: 0');
  source.store.remove('Service', service('cart', { ns: 'shop' }));
  source.emit('change', ['service:shop/cart']);
  await daemon.idle();
  t.notOk((await vips()).has('{service="shop/cart",address="198.51.100.2"}'), 'a deleted Service leaves');
  await daemon.shutdown('test');
});

t.test('config reload metrics: the last load succeeded (1) until a reload is rejected (0), and again after a good one', async (t) => {
  const { daemon } = make(cfg({ routes: [{ prefix: '192.0.2.1/32' }] }));
  await daemon.start();
  const m = async () => {
    const text = (await daemon.view.metrics()).body;
    return { ok: samples(text, 'herald_config_last_reload_successful').get(''), at: samples(text, 'herald_config_last_reload_success_timestamp_seconds').get(''), reloads: samples(text, 'herald_config_reloads_total') };
  };
  const start = await m();
  t.equal(start.ok, 1, 'the configuration loaded at start');
  t.ok((start.at ?? 0) > 1.7e9, 'with the time it loaded');
  daemon.reloadRejected(['routes[0].prefix: must be a CIDR prefix']);
  const rejected = await m();
  t.equal(rejected.ok, 0);
  t.equal(rejected.at, start.at, 'the last success time stays');
  t.equal(rejected.reloads.get('{result="invalid"}'), 1);
  await new Promise((r) => setTimeout(r, 5));
  daemon.reload(cfg({ routes: [{ prefix: '192.0.2.2/32' }] }));
  const good = await m();
  t.equal(good.ok, 1, 'a good reload clears it');
  t.ok((good.at ?? 0) > (start.at ?? 0));
  t.equal(good.reloads.get('{result="ok"}'), 1);
  await daemon.shutdown('test');
});

t.test('path-attribute annotations: a bad edit keeps the working announcement untouched and is logged per annotation', async (t) => {
  const source = new FakeSource();
  const lines: Array<{ level: number; msg: string; service?: string }> = [];
  const logger = pino({ level: 'info' }, { write: (s: string) => void lines.push(JSON.parse(s) as { level: number; msg: string }) });
  const c = cfg({ peers: [peerA], source: { manifests: '/nonexistent' }, attributeChangeInterval: 0, advertisements: [{ name: 'lb', serviceAttributes: { communities: ['65000:0-99'], med: true } }] });
  const { daemon, speaker } = make(c, { source, logger });
  const web = (annotations: Record<string, string>) => {
    const s = service('web', { lbIPs: ['192.0.2.1'], etp: 'Local' });
    s.metadata!.annotations = annotations;
    return s;
  };
  source.store.apply('Node', node('node-a'));
  source.store.apply('Service', web({ 'herald.io/med': '50', 'herald.io/communities': '65000:7' }));
  source.store.apply('EndpointSlice', slice('web-1', 'web', [['10.1.0.1', 'node-a']]));
  await daemon.start();
  source.isSynced = true;
  source.emit('synced');
  await daemon.idle();
  t.equal(speaker.current.get('192.0.2.1/32')?.med, 50);
  speaker.updates = [];
  source.store.apply('Service', web({ 'herald.io/med': '-5', 'herald.io/communities': '65000:7, 70000:1' }));
  source.emit('change', ['service:default/web']);
  await daemon.idle();
  t.same(speaker.updates, [], 'nothing withdrawn, nothing re-sent');
  t.equal(speaker.current.get('192.0.2.1/32')?.med, 50, 'the last good MED stays');
  const vip = daemon.view.services().find((s) => s.service === 'default/web')?.vips.find((v) => v.kind === 'loadBalancer');
  t.equal(vip?.announced, true);
  const bad = vip?.reasons.filter((r) => r.code === 'InvalidAnnotation') ?? [];
  t.equal(bad.length, 2, 'one reason per bad annotation');
  t.match(bad.map((r) => r.message).join('\n'), /herald\.io\/med/);
  t.match(bad.map((r) => r.message).join('\n'), /herald\.io\/communities/);
  const warned = lines.filter((l) => l.level === 40 && l.service === 'default/web');
  t.equal(warned.length, 2, 'one warning per bad annotation');
  await daemon.shutdown('test');
});
