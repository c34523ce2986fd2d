// The daemon's start-up order (docs/sessions.md "Start-up order"): the first route set reaches the speaker before any
// peer is added or the BGP listener bound, so a session never comes up to an empty table and waits for it; and
// End-of-RIB (markInitialSyncDone) never precedes the first complete desired set.
import t from 'tap';
import fc from 'fast-check';
import { pino } from 'pino';
import { FakeClock } from '../../../bgp/index.ts';
import { validateConfig } from '../../../src/config/load.ts';
import type { Config } from '../../../src/config/schema.ts';
import { Daemon } from '../../../src/daemon/daemon.ts';
import { HeraldMetrics } from '../../../src/metrics/metrics.ts';
import { FakeHealth, FakeSource, FakeSpeaker } from './fakes.ts';
import { DOCUMENTATION_PREFIXES, node, service, slice } from '../../helpers/k8s-objects.ts';

function cfg(data: object): Config {
  const r = validateConfig({ bgp: { localAs: 65000, routerId: '10.0.0.1', listen: { address: '127.0.0.1', port: 1179 } }, allowedPrefixes: DOCUMENTATION_PREFIXES, ...data });
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return r.config;
}

function make(config: Config, source?: FakeSource) {
  let speaker!: FakeSpeaker;
  const health = new FakeHealth();
  const daemon = new Daemon(config, { nodeName: 'node-a', routerId: '10.0.0.1', nodeIps: ['127.0.0.1'] }, {
    createSpeaker: (opts) => (speaker = new FakeSpeaker(opts)),
    health,
    ...(source ? { source } : {}),
    logger: pino({ level: 'silent' }),
    metrics: new HeraldMetrics({ version: 'test', defaultMetrics: false }),
    version: 'test',
    restarting: true,
    env: {},
    clock: new FakeClock(1_000_000),
  });
  return { daemon, speaker, health };
}

const peerA = { name: 'a', address: '127.0.0.2', peerAs: 65001 };
const peerB = { name: 'b', address: '127.0.0.3', peerAs: 65002 };

t.test('static routes: the route set first, then the peers, then the listener', async (t) => {
  const { daemon, speaker } = make(cfg({ peers: [peerA, peerB], routes: [{ prefix: '192.0.2.1/32' }, { prefix: '192.0.2.2/32' }] }));
  t.same(speaker.opts.deferListen, true, 'the speaker does not bind at construction');
  t.same(speaker.order, [], 'nothing reaches the speaker before start()');
  t.same(daemon.view.peers(), [], 'no peer runs yet');
  await daemon.start();
  t.same(speaker.order, ['setRoutes 2', 'markInitialSyncDone', 'add a', 'add b', 'listen']);
  t.same(daemon.view.peers().map((p) => p.name), ['a', 'b']);
  await daemon.shutdown('test');
});

t.test('a reload before start changes the peers that start, and none starts early', async (t) => {
  const { daemon, speaker } = make(cfg({ peers: [peerA], routes: [{ prefix: '192.0.2.1/32' }] }));
  daemon.reload(cfg({ peers: [peerB], routes: [{ prefix: '192.0.2.1/32' }, { prefix: '192.0.2.9/32' }] }));
  t.notOk(speaker.order.some((c) => c.startsWith('add') || c === 'listen'), 'no peer and no listener before start()');
  await daemon.start();
  const firstSet = speaker.order.findIndex((c) => c.startsWith('setRoutes'));
  t.ok(firstSet >= 0 && firstSet < speaker.order.indexOf('add b'), 'a route set precedes the peer');
  t.notOk(speaker.order.includes('add a'), 'the peer reloaded away never started');
  t.equal(speaker.order.at(-1), 'listen');
  t.same(speaker.last, ['192.0.2.1/32', '192.0.2.9/32']);
  await daemon.shutdown('test');
});

t.test('with a source: static routes first, the peers and the listener at start, End-of-RIB only after sync', async (t) => {
  const source = new FakeSource();
  const { daemon, speaker } = make(cfg({ peers: [peerA], routes: [{ prefix: '192.0.2.30/32' }], source: { manifests: '/nonexistent' } }), source);
  await daemon.start();
  t.same(speaker.order, ['setRoutes 1', 'add a', 'listen'], 'peers start with the static routes; no End-of-RIB before sync');
  source.store.apply('Node', node('node-a'));
  source.store.apply('Service', service('web', { lbIPs: ['198.51.100.1'], etp: 'Local' }));
  source.store.apply('EndpointSlice', slice('web-1', 'web', [['10.1.0.5', 'node-a']]));
  source.isSynced = true;
  source.emit('synced');
  await daemon.idle();
  t.equal(speaker.order.at(-1), 'markInitialSyncDone');
  t.same(speaker.last, ['192.0.2.30/32', '198.51.100.1/32'], 'End-of-RIB after the complete set');
  await daemon.shutdown('test');
});

// Property: whatever happens before and after start() — objects applied, the sync at any point, health gates
// flipping, reloads — no peer and no listener precede the first route set, and when End-of-RIB is allowed the
// speaker holds exactly the complete desired set of that moment (the static routes and every VIP with a local ready
// endpoint whose gate passes), with the source synced.
t.test('property: no peer before the first route set; End-of-RIB never precedes the first complete set', async (t) => {
  const SERVICES = 4;
  const vip = (i: number) => `198.51.100.${i + 1}`;
  type Op = { kind: 'service'; i: number; present: boolean; local: boolean } | { kind: 'gate'; i: number; failing: boolean } | { kind: 'sync' } | { kind: 'start' } | { kind: 'reload'; peers: number };
  const opArb: fc.Arbitrary<Op> = fc.oneof(
    fc.record({ kind: fc.constant('service' as const), i: fc.integer({ min: 0, max: SERVICES - 1 }), present: fc.boolean(), local: fc.boolean() }),
    fc.record({ kind: fc.constant('gate' as const), i: fc.integer({ min: 0, max: SERVICES - 1 }), failing: fc.boolean() }),
    fc.constant({ kind: 'sync' as const }),
    fc.constant({ kind: 'start' as const }),
    fc.record({ kind: fc.constant('reload' as const), peers: fc.integer({ min: 1, max: 2 }) }),
  );
  let runs = 0;
  let endOfRibs = 0;
  await fc.assert(
    fc.asyncProperty(fc.array(opArb, { maxLength: 14 }), async (ops) => {
      runs++;
      const source = new FakeSource();
      const config = (peers: number) => cfg({ peers: [peerA, peerB].slice(0, peers), routes: [{ prefix: '192.0.2.30/32' }], source: { manifests: '/nonexistent' } });
      const { daemon, speaker, health } = make(config(1), source);
      source.store.apply('Node', node('node-a'));
      const state = Array.from({ length: SERVICES }, () => ({ present: false, local: false, failing: false }));
      const complete = () => ['192.0.2.30/32', ...state.flatMap((s, i) => (s.present && s.local && !s.failing ? [`${vip(i)}/32`] : []))].sort();
      let atEndOfRib: { table: string[]; complete: string[]; synced: boolean } | undefined;
      const mark = speaker.markInitialSyncDone.bind(speaker);
      speaker.markInitialSyncDone = () => {
        atEndOfRib ??= { table: speaker.last, complete: complete(), synced: source.isSynced };
        mark();
      };
      let started = false;
      for (const op of [...ops, { kind: 'start' as const }, { kind: 'sync' as const }]) {
        switch (op.kind) {
          case 'service': {
            const s = state[op.i]!;
            s.present = op.present;
            s.local = op.local;
            const name = `svc-${op.i}`;
            const svc = service(name, { lbIPs: [vip(op.i)], etp: 'Local' });
            const eps = slice(`${name}-1`, name, [[`10.1.0.${op.i + 1}`, op.local ? 'node-a' : 'node-b']]);
            const keys = op.present ? [...source.store.apply('Service', svc), ...source.store.apply('EndpointSlice', eps)] : [...source.store.remove('EndpointSlice', eps), ...source.store.remove('Service', svc)];
            if (source.isSynced && keys.length > 0) source.emit('change', keys);
            break;
          }
          case 'gate': {
            state[op.i]!.failing = op.failing;
            const gate = `svc:default/svc-${op.i} ${vip(op.i)}`;
            if (op.failing) health.failing.add(gate);
            else health.failing.delete(gate);
            health.emit('change', [gate], { nodeLevel: false });
            break;
          }
          case 'sync':
            if (source.isSynced) break;
            source.isSynced = true;
            source.emit('synced');
            break;
          case 'start':
            if (started) break;
            started = true;
            await daemon.start();
            break;
          case 'reload':
            daemon.reload(config(op.peers));
            break;
        }
        await daemon.idle();
        await new Promise((r) => setImmediate(r));
      }
      await daemon.shutdown('test');
      const firstSet = speaker.order.findIndex((c) => c.startsWith('setRoutes'));
      const firstPeerOrListen = speaker.order.findIndex((c) => c.startsWith('add') || c === 'listen');
      if (firstPeerOrListen >= 0 && !(firstSet >= 0 && firstSet < firstPeerOrListen)) throw new Error(`a peer or the listener before the first route set: ${speaker.order.join(', ')}`);
      if (!speaker.order.includes('listen')) throw new Error('the listener was never bound');
      if (atEndOfRib === undefined) return; // End-of-RIB may wait (nothing forces it here); never early
      endOfRibs++;
      if (!atEndOfRib.synced) throw new Error('End-of-RIB before the source synced');
      if (atEndOfRib.table.join() !== atEndOfRib.complete.join()) throw new Error(`End-of-RIB with ${atEndOfRib.table.join()} held, ${atEndOfRib.complete.join()} complete`);
    }),
    { numRuns: 60, seed: 12_345 },
  );
  t.equal(runs, 60, 'every generated run was checked');
  t.ok(endOfRibs > 0, `End-of-RIB was reached and checked in ${endOfRibs} runs`);
});
