// The peer set on its own (src/daemon/peer-set.ts): nothing reaches the speaker before `open()` (the last list
// applied is what opens), then each list is applied as a diff; the speaker's events make each peer's history and
// metrics, kept for the peers that run only.
import t from 'tap';
import { pino } from 'pino';
import type { PeerConfig } from '../../../bgp/index.ts';
import { FakeClock } from '../../../bgp/index.ts';
import { PeerSet } from '../../../src/daemon/peer-set.ts';
import { HeraldMetrics } from '../../../src/metrics/metrics.ts';
import { FakeSpeaker } from './fakes.ts';

const peer = (name: string, o: Partial<PeerConfig> = {}): PeerConfig => ({ name, address: `127.0.0.${name.charCodeAt(0) - 95}`, port: 179, peerAs: 65001, holdTimeSec: 90, connectRetryTimeSec: 120, passive: false, families: ['ipv4-unicast'], gracefulRestart: false, ...o }) as PeerConfig;

function make() {
  const speaker = new FakeSpeaker({ localAs: 65000, bgpIdentifier: '10.0.0.1' });
  const metrics = new HeraldMetrics({ version: 't', defaultMetrics: false });
  const clock = new FakeClock(Date.parse('2026-01-01T00:00:00Z'));
  const set = new PeerSet({ speaker, log: pino({ level: 'silent' }), metrics, clock });
  return { speaker, metrics, clock, set };
}

t.test('before open() nothing reaches the speaker; open() starts the last list applied', async (t) => {
  const { speaker, set } = make();
  set.apply([peer('a'), peer('b')]);
  set.apply([peer('b'), peer('c')]);
  t.same(speaker.calls, [], 'no call before open');
  t.notOk(set.has('b'), 'no peer runs before open');
  set.open();
  t.same(speaker.calls, ['add b', 'add c']);
  set.open();
  t.same(speaker.calls, ['add b', 'add c'], 'open is idempotent');
});

t.test('after open() a list is a diff: unchanged kept, changed updated, removed removed, new added', async (t) => {
  const { speaker, set } = make();
  set.open();
  set.apply([peer('a'), peer('b'), peer('c')]);
  speaker.calls = [];
  set.apply([peer('a'), peer('b', { holdTimeSec: 30 }), peer('d')]);
  t.same(speaker.calls, ['remove c', 'update b', 'add d']);
  t.ok(set.has('a') && set.has('b') && set.has('d'));
  t.notOk(set.has('c'));
  t.equal(speaker.peerCfgs.get('b')?.holdTimeSec, 30);
});

t.test('follow(): session and BFD states make the history and the metrics; a removed peer leaves no series', async (t) => {
  const { speaker, metrics, clock, set } = make();
  let changes = 0;
  set.follow(speaker, () => changes++);
  set.open();
  set.apply([peer('a'), peer('b')]);
  clock.advance(5000);
  speaker.states.set('a', 'Established');
  speaker.emit('peerState', { peer: 'a', from: 'OpenConfirm', to: 'Established' });
  t.equal(changes, 1, 'a session state change is a status change');
  clock.advance(1000);
  speaker.states.set('a', 'Idle');
  speaker.emit('peerState', { peer: 'a', from: 'Established', to: 'Idle', reason: { kind: 'notificationReceived', code: 6, subcode: 2 } });
  const a = set.views().find((p) => p.name === 'a');
  t.equal(a?.flaps, 1, 'leaving Established is a flap');
  t.equal(a?.since, '2026-01-01T00:00:06.000Z', 'since when in this state');
  t.match(a?.lastError, { kind: 'notificationReceived' }, 'the last error is kept');
  speaker.emit('bfdState', { peer: 'a', from: 'Down', to: 'Up', diagnostic: 0, remoteState: 'Up', detectionTimeMs: 300, failure: false });
  t.equal(changes, 3, 'a BFD state change is a status change');
  const text = async () => (await metrics.text()).body;
  t.match(await text(), /herald_bgp_session_state_changes_total\{peer="a",from="OpenConfirm",to="Established"\} 1/);
  set.apply([peer('b')]);
  t.notOk(set.views().some((p) => p.name === 'a'), 'a removed peer is not shown');
  t.notMatch(await text(), /peer="a"/, 'nor counted');
  speaker.emit('peerState', { peer: 'a', from: 'Idle', to: 'Idle' });
  t.notMatch(await text(), /peer="a"/, 'its last events are not counted either');
});
