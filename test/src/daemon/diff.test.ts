// Reload diff: pure comparison of two validated configurations.
import t from 'tap';
import { validateConfig } from '../../../src/config/load.ts';
import type { Config } from '../../../src/config/schema.ts';
import { diffConfig, diffPeers, effectiveReloadConfig } from '../../../src/daemon/diff.ts';

function cfg(data: object): Config {
  const r = validateConfig({ bgp: { localAs: 65000, routerId: '10.0.0.1' }, ...data });
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return r.config;
}
const a = { name: 'a', address: '127.0.0.2', peerAs: 65001 };
const b = { name: 'b', address: '127.0.0.3', peerAs: 65002 };
const c = { name: 'c', address: '127.0.0.4', peerAs: 65003 };

t.test('identical configs give an empty diff', async (t) => {
  const d = diffConfig(cfg({ peers: [a, b] }), cfg({ peers: [b, a] }));
  t.ok(d.empty);
  t.same(d.peers.unchanged.sort(), ['a', 'b']);
  t.same(d.restartRequired, []);
});

t.test('added, removed, unchanged peers', async (t) => {
  const d = diffConfig(cfg({ peers: [a, b] }), cfg({ peers: [a, c] }));
  t.same(d.peers.added.map((p) => p.name), ['c']);
  t.same(d.peers.removed.map((p) => p.name), ['b']);
  t.same(d.peers.unchanged, ['a']);
  t.same(d.peers.changed, []);
  t.notOk(d.empty);
});

t.test('session-relevant vs export-only peer changes', async (t) => {
  const d = diffConfig(
    cfg({ peers: [a, b, c] }),
    cfg({ peers: [{ ...a, holdTime: 30 }, { ...b, nextHop: '127.0.0.9' }, { ...c, password: { env: 'X' }, gracefulShutdown: { enabled: true } }] }),
  );
  const by = Object.fromEntries(d.peers.changed.map((x) => [x.name, x]));
  t.same(by['a']?.fields, ['holdTime']);
  t.equal(by['a']?.sessionReset, true);
  t.same(by['b']?.fields, ['nextHop']);
  t.equal(by['b']?.sessionReset, false);
  t.same(by['c']?.fields, ['gracefulShutdown', 'password']);
  t.equal(by['c']?.sessionReset, true);
  t.same(d.peers.unchanged, []);
});

t.test('routes, policy, health, log level and restart-only fields', async (t) => {
  const before = cfg({ routes: [{ prefix: '10.0.0.0/24' }] });
  t.ok(diffConfig(before, cfg({ routes: [{ prefix: '10.0.0.0/24', med: 5 }] })).routesChanged);
  t.ok(diffConfig(before, cfg({ routes: [{ prefix: '10.0.0.0/24' }], advertisements: [{ name: 'x' }] })).policyChanged);
  t.ok(diffConfig(before, cfg({ routes: [{ prefix: '10.0.0.0/24' }], healthChecks: { interval: 1, timeout: 1 } })).healthChanged);
  t.ok(diffConfig(before, cfg({ routes: [{ prefix: '10.0.0.0/24' }], logLevel: 'debug' })).logLevelChanged);
  const r = diffConfig(before, { ...cfg({ routes: [{ prefix: '10.0.0.0/24' }], admin: { port: 1 }, stateDir: '/tmp/x' }), bgp: { localAs: 65009, routerId: '10.0.0.1' } });
  t.same(r.restartRequired, ['bgp.localAs', 'admin', 'stateDir']);
  t.notOk(r.routesChanged);
  t.notOk(r.empty);
});

t.test('effectiveReloadConfig keeps restart-only values', async (t) => {
  const before = cfg({ admin: { port: 1000 }, peers: [a] });
  const after = { ...cfg({ admin: { port: 2000 }, peers: [a, b] }), bgp: { localAs: 1, routerId: '10.9.9.9' } };
  const eff = effectiveReloadConfig(before, after);
  t.equal(eff.admin.port, 1000);
  t.equal(eff.bgp.localAs, 65000);
  t.equal(eff.bgp.routerId, '10.0.0.1');
  t.same(eff.peers.map((p) => p.name), ['a', 'b']);
});

t.test('diffPeers on arbitrary records with custom session fields', async (t) => {
  const d = diffPeers([{ name: 'x', v: 1, w: 1 }], [{ name: 'x', v: 1, w: 2 }], (fields) => fields.includes('v'));
  t.same(d.changed.map((c) => [c.name, c.fields, c.sessionReset]), [['x', ['w'], false]]);
  const e = diffPeers([{ name: 'x', v: 1 }], [{ name: 'x', v: 2 }], (fields) => fields.includes('v'));
  t.equal(e.changed[0]?.sessionReset, true);
});

t.test('flapControl is restart-only', async (t) => {
  const before = cfg({});
  const after = cfg({ flapControl: { holdDown: 1 } });
  const d = diffConfig(before, after);
  t.same(d.restartRequired, ['flapControl']);
  t.notOk(d.healthChanged);
  t.equal(effectiveReloadConfig(before, after).flapControl.holdDown, 10);
});

t.test('the metrics listener is restart-only: a reload neither opens, moves nor closes it', async (t) => {
  const none = cfg({});
  const on = cfg({ metrics: { port: 9100 } });
  const moved = cfg({ metrics: { port: 9200 } });
  t.same(diffConfig(none, on).restartRequired, ['metrics']);
  t.equal(effectiveReloadConfig(none, on).metrics, undefined, 'not opened by a reload');
  t.equal(effectiveReloadConfig(on, moved).metrics?.port, 9100, 'not moved by a reload');
  t.equal(effectiveReloadConfig(on, none).metrics?.port, 9100, 'not closed by a reload');
});
