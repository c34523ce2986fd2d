// The configuration in force on its own (src/daemon/config-in-force.ts): the file merged with Herald's objects, each
// change handed to one listener that puts it in force or refuses it (then nothing changes); objects changed before
// the source synced are merged once on 'synced'; an invalid object is warned about once; a change of nothing but
// what peers read (a Secret) refreshes the peers only; reloads keep restart-only settings and are recorded.
import t from 'tap';
import { EventEmitter } from 'node:events';
import { pino } from 'pino';
import { FakeClock } from '../../../bgp/index.ts';
import { validateConfig } from '../../../src/config/load.ts';
import type { Config } from '../../../src/config/schema.ts';
import { ConfigInForce } from '../../../src/daemon/config-in-force.ts';
import type { ConfigChange } from '../../../src/daemon/config-in-force.ts';
import { MappingError } from '../../../src/daemon/mapping.ts';
import type { ResourceKind, KubeObject } from '../../../src/k8s/types.ts';
import { HeraldMetrics } from '../../../src/metrics/metrics.ts';
import { FakeSource } from './fakes.ts';
import { heraldObject } from '../../helpers/k8s-objects.ts';

function cfg(data: object = {}): Config {
  const r = validateConfig({ bgp: { localAs: 65000, routerId: '10.0.0.1' }, source: { kubernetes: {} }, ...data });
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return r.config;
}

const tick = () => new Promise((r) => setImmediate(r));
const put = (source: FakeSource, kind: ResourceKind, obj: KubeObject) => source.emit('change', source.store.apply(kind, obj));

function make(file: Config, o: { source?: FakeSource; secrets?: EventEmitter } = {}) {
  const lines: Record<string, unknown>[] = [];
  const log = pino({ level: 'info' }, { write: (l: string) => void lines.push(JSON.parse(l) as Record<string, unknown>) });
  const metrics = new HeraldMetrics({ version: 't', defaultMetrics: false });
  let reads = 0;
  const inForce = new ConfigInForce({ file, nodeName: 'node-a', ...(o.source ? { source: o.source } : {}), ...(o.secrets ? { secrets: o.secrets } : {}), log, metrics, clock: new FakeClock(Date.parse('2026-01-01T00:00:00Z')), onObjectsRead: () => reads++ });
  const changes: ConfigChange[] = [];
  const refreshes: number[] = [];
  let refuse = false;
  inForce.listen({
    apply: (c) => {
      t.equal(inForce.config, c.merged.config, 'the change shows in force while its listener applies it');
      if (refuse) throw new MappingError([{ path: 'peers[0].password.file', message: 'cannot read' }]);
      changes.push(c);
    },
    refresh: () => void refreshes.push(changes.length),
  });
  inForce.follow();
  return { inForce, lines, metrics, changes, refreshes, refuse: (v: boolean) => (refuse = v), reads: () => reads };
}

const peerObject = (name: string, address: string) => heraldObject('BGPPeer', name, { peerAddress: address, peerASN: 65001 });

t.test('objects changed before the source synced are merged once, on synced', async (t) => {
  const source = new FakeSource();
  const { inForce, changes } = make(cfg(), { source });
  put(source, 'BGPPeer', peerObject('tor-a', '192.0.2.1'));
  await tick();
  t.same(changes, [], 'nothing before synced');
  t.same(inForce.config.peers, []);
  source.isSynced = true;
  source.emit('synced');
  t.equal(changes.length, 1);
  t.equal(changes[0]?.why, 'objects read');
  t.same(changes[0]?.diff.peers.added.map((p) => p.name), ['tor-a']);
  t.same(inForce.config.peers.map((p) => p.name), ['tor-a']);
  t.equal(inForce.merged.origins.get('tor-a'), 'BGPPeer');
});

t.test('after sync, a burst of object changes is one merge on the next turn', async (t) => {
  const source = new FakeSource();
  source.isSynced = true;
  const { changes, reads } = make(cfg(), { source });
  put(source, 'BGPPeer', peerObject('tor-a', '192.0.2.1'));
  put(source, 'BGPPeer', peerObject('tor-b', '192.0.2.2'));
  t.same(changes, [], 'not at once');
  await tick();
  t.equal(changes.length, 1, 'one merge');
  t.equal(changes[0]?.why, 'objects changed');
  t.same(changes[0]?.diff.peers.added.map((p) => p.name), ['tor-a', 'tor-b']);
  t.equal(reads(), 1, 'the node status is told the objects were read');
  put(source, 'Service', { apiVersion: 'v1', kind: 'Service', metadata: { name: 'x', namespace: 'default' } } as KubeObject);
  await tick();
  t.equal(reads(), 1, 'a change of anything else is not an object change');
});

t.test('an object change that changes nothing of the configuration refreshes the peers only', async (t) => {
  const source = new FakeSource();
  source.isSynced = true;
  const secrets = new EventEmitter();
  const { changes, refreshes } = make(cfg(), { source, secrets });
  put(source, 'BGPPeer', peerObject('tor-a', '192.0.2.1'));
  await tick();
  secrets.emit('change');
  await tick();
  t.equal(changes.length, 1, 'no new change');
  t.same(refreshes, [1], 'a Secret that changed: the peers are run again');
});

t.test('a refused change leaves what was in force, and is logged', async (t) => {
  const source = new FakeSource();
  source.isSynced = true;
  const { inForce, lines, refuse } = make(cfg(), { source });
  refuse(true);
  put(source, 'BGPPeer', peerObject('tor-a', '192.0.2.1'));
  await tick();
  t.same(inForce.config.peers, [], 'rolled back');
  t.ok(lines.some((l) => l['msg'] === 'cannot apply the configuration objects; the running configuration stays'));
});

t.test('an invalid object is ignored and warned about once per distinct set of problems', async (t) => {
  const source = new FakeSource();
  source.isSynced = true;
  const { inForce, lines } = make(cfg(), { source });
  put(source, 'BGPPeer', heraldObject('BGPPeer', 'bad', { peerAddress: 'not-an-address', peerASN: 65001 }));
  await tick();
  put(source, 'BGPPeer', peerObject('tor-a', '192.0.2.1'));
  await tick();
  const warned = lines.filter((l) => l['msg'] === 'configuration object ignored');
  t.equal(warned.length, 1, 'warned once');
  t.match(warned[0], { object: 'BGPPeer/bad', problems: [/peerAddress/] });
  t.same(inForce.config.peers.map((p) => p.name), ['tor-a'], 'the valid one is in force');
});

t.test('reload: restart-only settings keep their running values; a refused reload changes nothing; both recorded', async (t) => {
  const { inForce, lines, changes, refuse, metrics } = make(cfg({ logLevel: 'info' }));
  const d = inForce.reload(cfg({ logLevel: 'debug', bgp: { localAs: 65099, routerId: '10.0.0.1' } }));
  t.same(d.restartRequired, ['bgp.localAs']);
  t.equal(inForce.config.bgp.localAs, 65000, 'the running AS number stays');
  t.equal(inForce.config.logLevel, 'debug', 'the rest is in force');
  t.equal(changes.at(-1)?.why, 'reload');
  t.ok(lines.some((l) => l['msg'] === 'these settings change only on restart; running values kept'));
  inForce.reloaded(d);
  t.same(inForce.lastReload, { at: '2026-01-01T00:00:00.000Z', ok: true });
  refuse(true);
  t.throws(() => inForce.reload(cfg({ logLevel: 'warn' })), MappingError);
  t.equal(inForce.config.logLevel, 'debug', 'nothing changed');
  inForce.rejected(['peers[0].password.file: cannot read']);
  t.same(inForce.lastReload, { at: '2026-01-01T00:00:00.000Z', ok: false, errors: ['peers[0].password.file: cannot read'] });
  inForce.reloaded(d, 'RouteError: bad');
  t.match(inForce.lastReload?.errors, [/its routes could not be applied.*RouteError: bad/]);
  t.match((await metrics.text()).body, /herald_config_reloads_total\{result="invalid"\} 2/);
});
