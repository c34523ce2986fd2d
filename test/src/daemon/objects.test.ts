// Herald's objects reaching the sessions the way a file reload does (src/daemon/config-in-force.ts): only what
// changed; per-peer nodeSelectors and local AS; a node's override; a label move moves the session; Secrets of
// passwordSecret peers; a status-only change of an object costs nothing.
import t from 'tap';
import { EventEmitter } from 'node:events';
import { pino } from 'pino';
import { validateConfig } from '../../../src/config/load.ts';
import type { Config } from '../../../src/config/schema.ts';
import { Daemon } from '../../../src/daemon/daemon.ts';
import type { SecretLookup, SecretValue } from '../../../src/k8s/secrets.ts';
import type { ResourceKind } from '../../../src/k8s/types.ts';
import type { KubeObject } from '../../../src/k8s/types.ts';
import { HeraldMetrics } from '../../../src/metrics/metrics.ts';
import { FakeHealth, FakeSource, FakeSpeaker } from './fakes.ts';
import { heraldObject, node } from '../../helpers/k8s-objects.ts';

function cfg(data: object): Config {
  const r = validateConfig({ bgp: { localAs: 65000, routerId: '10.0.0.1' }, source: { kubernetes: {} }, ...data });
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return r.config;
}

/** Secrets the test sets; `change` as SecretCache emits it. */
class FakeSecrets extends EventEmitter implements SecretLookup {
  values = new Map<string, Record<string, string>>();
  retained: string[] = [];
  get(name: string, key: string): SecretValue {
    const v = this.values.get(name)?.[key];
    return v === undefined ? { problem: `Secret herald-system/${name}: not found` } : { value: v };
  }
  retain(names: ReadonlySet<string>): void {
    this.retained = [...names].sort();
  }
}

function make(config: Config, source: FakeSource, secrets?: FakeSecrets) {
  let speaker!: FakeSpeaker;
  const daemon = new Daemon(config, { nodeName: 'node-a', routerId: '10.0.0.1', nodeIps: ['127.0.0.1'] }, {
    createSpeaker: (opts) => (speaker = new FakeSpeaker(opts)),
    health: new FakeHealth(),
    source,
    ...(secrets ? { secrets } : {}),
    logger: pino({ level: 'silent' }),
    metrics: new HeraldMetrics({ version: 'test', defaultMetrics: false }),
    version: 'test',
    restarting: false,
    env: {},
  });
  return { daemon, speaker };
}

/** Applies an object to the fake source's store and emits its change keys, as KubernetesSource does. */
function put(source: FakeSource, kind: ResourceKind, obj: KubeObject): void {
  source.emit('change', source.store.apply(kind, obj));
}
function del(source: FakeSource, kind: ResourceKind, obj: KubeObject): void {
  source.emit('change', source.store.remove(kind, obj));
}
const tick = () => new Promise((r) => setImmediate(r));

const torA = (extra: object = {}) => heraldObject('BGPPeer', 'tor-a', { peerAddress: '192.0.2.1', peerASN: 65101, myASN: 64601, nodeSelectors: [{ matchLabels: { rack: 'a' } }], ...extra });
const torB = heraldObject('BGPPeer', 'tor-b', { peerAddress: '192.0.2.2', peerASN: 65102, myASN: 64602, nodeSelectors: [{ matchLabels: { rack: 'b' } }] });

t.test('objects read while syncing are in force before the first full pass; a change reaches only its session', async (t) => {
  const source = new FakeSource();
  const { daemon, speaker } = make(cfg({ peers: [{ name: 'core', address: '192.0.2.9', peerAs: 65009 }] }), source);
  await daemon.start();
  t.same(speaker.calls, ['add core'], 'the file\'s peer runs at once');
  put(source, 'Node', node('node-a', { labels: { rack: 'a' } }));
  put(source, 'BGPPeer', torA());
  put(source, 'BGPPeer', torB);
  source.isSynced = true;
  source.emit('synced');
  await daemon.idle();
  t.same(speaker.calls, ['add core', 'add tor-a', 'markInitialSyncDone'], 'only the peer of its rack, before End-of-RIB');
  t.equal(speaker.peerCfgs.get('tor-a')?.localAs, 64601, 'with the peer\'s own AS number');
  t.equal(speaker.peerCfgs.get('core')?.localAs, undefined, 'the file\'s peer keeps the Speaker\'s');

  speaker.calls = [];
  put(source, 'BGPPeer', torA({ holdTime: 30 }));
  await tick();
  await daemon.idle();
  t.same(speaker.calls, ['update tor-a'], 'one changed object: one updated peer, nothing else');
  t.equal(speaker.peerCfgs.get('tor-a')?.holdTimeSec, 30);

  speaker.calls = [];
  const withStatus = torA({ holdTime: 30 });
  withStatus.status = { conditions: [{ type: 'Valid', status: 'True', lastTransitionTime: '2026-01-01T00:00:00Z', reason: 'Valid', message: '' }] };
  put(source, 'BGPPeer', withStatus);
  await tick();
  await daemon.idle();
  t.same(speaker.calls, [], 'a status-only change touches no session');

  // The node moves to rack b: its session moves with it.
  put(source, 'Node', node('node-a', { labels: { rack: 'b' } }));
  await daemon.idle();
  t.same(speaker.calls, ['remove tor-a', 'add tor-b']);
  t.equal(speaker.peerCfgs.get('tor-b')?.localAs, 64602);

  speaker.calls = [];
  del(source, 'BGPPeer', torB);
  await tick();
  await daemon.idle();
  t.same(speaker.calls, ['remove tor-b'], 'a deleted object removes its peer only');
  await daemon.shutdown('test');
});

t.test('an invalid object changes nothing and is reported; fixing it applies it', async (t) => {
  const source = new FakeSource();
  source.isSynced = true;
  const { daemon, speaker } = make(cfg({ peers: [{ name: 'core', address: '192.0.2.9', peerAs: 65009 }] }), source);
  await daemon.start();
  await daemon.idle();
  speaker.calls = [];
  put(source, 'BGPPeer', heraldObject('BGPPeer', 'core', { peerAddress: '192.0.2.8', peerASN: 65008 }));
  put(source, 'BGPPeer', heraldObject('BGPPeer', 'x', { peerAddress: '192.0.2.7', peerASN: 65007, holdTime: 1 }));
  await tick();
  await daemon.idle();
  t.same(speaker.calls, [], 'neither the file\'s peer nor anything else is touched');
  t.match(daemon.objects().merged.verdicts, [{ name: 'core', issues: [{ path: 'metadata.name' }] }, { name: 'x', issues: [{ path: 'spec.holdTime' }] }]);
  put(source, 'BGPPeer', heraldObject('BGPPeer', 'x', { peerAddress: '192.0.2.7', peerASN: 65007, holdTime: 3 }));
  await tick();
  await daemon.idle();
  t.same(speaker.calls, ['add x']);
  await daemon.shutdown('test');
});

t.test('BGPNodeConfigOverride: this node\'s AS number, router ID and source addresses on its sessions (a peer\'s own myASN wins); removing it restores the file\'s', async (t) => {
  const source = new FakeSource();
  source.isSynced = true;
  put(source, 'Node', node('node-a', { labels: { rack: 'a' } }));
  const { daemon, speaker } = make(cfg({ peers: [{ name: 'core', address: '192.0.2.9', peerAs: 65009 }] }), source);
  await daemon.start();
  put(source, 'BGPPeer', torA());
  await tick();
  await daemon.idle();
  speaker.calls = [];
  const override = heraldObject('BGPNodeConfigOverride', 'node-a', { myASN: 64700, routerID: '10.0.0.77', peers: [{ name: 'own', peerAddress: '192.0.2.50', peerASN: 65050 }] });
  put(source, 'BGPNodeConfigOverride', heraldObject('BGPNodeConfigOverride', 'node-b', { myASN: 64800 }));
  await tick();
  await daemon.idle();
  t.same(speaker.calls, [], 'another node\'s override changes nothing here');
  put(source, 'BGPNodeConfigOverride', override);
  await tick();
  await daemon.idle();
  t.same(speaker.calls.sort(), ['add own', 'update core', 'update tor-a'], 'the identity changed on every session; its own peer added');
  t.match(speaker.peerCfgs.get('core'), { localAs: 64700, bgpIdentifier: '10.0.0.77' });
  t.match(speaker.peerCfgs.get('tor-a'), { localAs: 64601, bgpIdentifier: '10.0.0.77' }, 'the peer\'s own myASN wins');
  t.match(speaker.peerCfgs.get('own'), { localAs: 64700 });
  speaker.calls = [];
  put(source, 'BGPNodeConfigOverride', heraldObject('BGPNodeConfigOverride', 'node-a', { ...(override.spec as object), sourceAddresses: ['2001:db8::11', '127.0.0.11'] }));
  await tick();
  await daemon.idle();
  t.same(speaker.calls.sort(), ['update core', 'update own', 'update tor-a'], 'the source address changed on every IPv4 session');
  t.equal(speaker.peerCfgs.get('tor-a')?.localAddress, '127.0.0.11', 'the node\'s address of the peer\'s family');
  put(source, 'BGPPeer', torA({ sourceAddress: '127.0.0.99' }));
  await tick();
  await daemon.idle();
  t.equal(speaker.peerCfgs.get('tor-a')?.localAddress, '127.0.0.99', 'a peer\'s own sourceAddress wins');
  t.equal(speaker.peerCfgs.get('core')?.localAddress, '127.0.0.11');
  speaker.calls = [];
  del(source, 'BGPNodeConfigOverride', override);
  await tick();
  await daemon.idle();
  t.same(speaker.calls.sort(), ['remove own', 'update core', 'update tor-a']);
  t.equal(speaker.peerCfgs.get('core')?.localAs, undefined);
  t.equal(speaker.peerCfgs.get('core')?.localAddress, undefined, 'the override\'s source address is gone with it');
  await daemon.shutdown('test');
});

t.test('passwordSecret: the peer waits for its Secret, the others run; a readable Secret starts it', async (t) => {
  const source = new FakeSource();
  source.isSynced = true;
  const secrets = new FakeSecrets();
  const { daemon, speaker } = make(cfg({ peers: [{ name: 'core', address: '192.0.2.9', peerAs: 65009 }] }), source, secrets);
  await daemon.start();
  await daemon.idle();
  speaker.calls = [];
  put(source, 'BGPPeer', heraldObject('BGPPeer', 'md5', { peerAddress: '192.0.2.3', peerASN: 65003, passwordSecret: { name: 'tor-pw' } }));
  await tick();
  await daemon.idle();
  t.same(speaker.calls, [], 'not run without its password');
  t.same(daemon.objects().problems, ['md5: Secret herald-system/tor-pw: not found']);
  t.same(secrets.retained, ['tor-pw'], 'the cache keeps the Secret in use');
  secrets.values.set('tor-pw', { password: 's3cret' });
  secrets.emit('change');
  await tick();
  await daemon.idle();
  t.same(speaker.calls, ['add md5']);
  t.equal(speaker.peerCfgs.get('md5')?.md5Password, 's3cret');
  t.same(daemon.objects().problems, []);
  t.notMatch(JSON.stringify(daemon.view.peers()), /s3cret/, 'the password is in no view');
  await daemon.shutdown('test');
});
