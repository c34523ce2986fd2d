// Speaker over scripted fake sessions (no sockets): fan-out, export per peer, GR options and End-of-RIB gating,
// route refresh, drain/undrain (RFC 8326), the stop modes (restart, departure), updatePeer, peers() status.
import t from 'tap';
import { EventEmitter } from 'node:events';
import { Speaker } from '../../bgp/speaker.ts';
import type { PeerListener, PeerSession } from '../../bgp/speaker.ts';
import { FakeClock } from '../../bgp/clock.ts';
import type { Negotiated } from '../../bgp/codec/open.ts';
import type { SessionOptions, StopRequest } from '../../bgp/session/session.ts';
import type { CodecContext } from '../../bgp/codec/types.ts';
import { decodeUpdate } from './rib/wire-decode.ts';
import type { DecodedUpdate } from './rib/wire-decode.ts';

type Tx = { nextMessage(ctx: CodecContext, maxLength: number): Buffer | undefined };

class FakeSession extends EventEmitter implements PeerSession {
  state = 'Idle';
  negotiated: Negotiated | undefined;
  lastReason = undefined;
  stats = { messagesSent: { UPDATE: 0 } as Record<string, number>, messagesReceived: {}, prefixesReceived: 0, updatesReceived: 0, flaps: 0, establishedAt: undefined as number | undefined };
  localAddress: string | undefined = '127.0.0.1';
  tx: Tx | undefined;
  kicks = 0;
  started = 0;
  stopped: StopRequest[] = [];
  resets: unknown[] = [];
  readonly options: SessionOptions;
  constructor(options: SessionOptions) {
    super();
    this.options = options;
  }
  get name(): string {
    return this.options.name;
  }
  start(): void {
    this.started++;
  }
  acceptConnection(): void {
    throw new Error('the fake listener hands out no connections');
  }
  async stop(request?: StopRequest): Promise<void> {
    this.stopped.push(request ?? { subcode: 0 });
    this.down();
  }
  reset(cease?: unknown): void {
    this.resets.push(cease);
    this.down();
  }
  setTxSource(src: Tx): void {
    this.tx = src;
  }
  kickTx(): void {
    this.kicks++;
  }
  establish(n: Partial<Negotiated> = {}): void {
    this.negotiated = {
      holdTimeSec: 90, keepaliveTimeSec: 30, fourOctetAs: true, peerAs: this.options.peerAs, extendedMessage: false,
      families: ['ipv4-unicast', 'ipv6-unicast'], routeRefresh: true, enhancedRouteRefresh: false,
      addPath: { send: {}, receive: {} }, ...n,
    } as Negotiated;
    this.state = 'Established';
    this.stats.establishedAt = 0;
    this.emit('stateChange', { from: 'OpenConfirm', to: 'Established', reason: { kind: 'started' } });
    this.emit('established', this.negotiated);
  }
  down(): void {
    if (this.state === 'Idle') return;
    this.state = 'Idle';
    this.emit('down', { kind: 'connectionClosed' });
  }
  /** Pull everything pending, as the session's tx pump would, undecoded. */
  pullRaw(max = 4096): Buffer[] {
    const out: Buffer[] = [];
    for (let m = this.tx!.nextMessage({ fourOctetAs: true, extendedMessage: false, addPath: {} }, max); m !== undefined; m = this.tx!.nextMessage({ fourOctetAs: true, extendedMessage: false, addPath: {} }, max)) out.push(m);
    return out;
  }
  /** Pull everything pending, as the session's tx pump would. */
  pull(max = 4096): DecodedUpdate[] {
    const out: DecodedUpdate[] = [];
    for (;;) {
      const m = this.tx!.nextMessage({ fourOctetAs: true, extendedMessage: false, addPath: {} }, max);
      if (m === undefined) return out;
      this.stats.messagesSent.UPDATE!++;
      out.push(decodeUpdate(m));
    }
  }
}

function setup(opts: { restarting?: boolean } = {}) {
  const sessions: FakeSession[] = [];
  const registered: string[] = [];
  const clock = new FakeClock();
  const listener: PeerListener = { register: (a) => registered.push(a), unregister: () => undefined, listen: () => Promise.resolve(), close: () => undefined };
  const speaker = new Speaker({
    localAs: 65000, bgpIdentifier: '10.0.0.1', clock, listen: { address: '127.0.0.1', port: 1179 },
    gracefulRestart: { restarting: opts.restarting ?? false },
    createSession: (o) => {
      const s = new FakeSession(o);
      sessions.push(s);
      return s;
    },
    createListener: () => listener,
  });
  return { speaker, sessions, clock, registered };
}

const r4 = (i: number, extra = {}) => ({ prefix: `192.0.2.${i}/32`, family: 'ipv4-unicast' as const, ...extra });
const r6 = (i: number) => ({ prefix: `2001:db8::${i}/128`, family: 'ipv6-unicast' as const });

t.test('fan-out with per-peer export rules; End-of-RIB only after markInitialSyncDone; GR options', async (t) => {
  const { speaker, sessions, registered } = setup({ restarting: true });
  speaker.addPeer({ name: 'ebgp', address: '127.0.0.2', peerAs: 65001, nextHopIPv6: '2001:db8::ff' });
  speaker.addPeer({ name: 'ibgp', address: '127.0.0.3', peerAs: 65000 });
  t.same(registered, ['127.0.0.2', '127.0.0.3'], 'registered with the listener');
  const [e, i] = sessions as [FakeSession, FakeSession];
  t.equal(e.started, 1);
  t.same(e.options.gracefulRestart, { restartTimeSec: 120, restarting: true, forwardingPreserved: true, notification: true }, 'R, F and N bits');
  t.same(e.options.families, ['ipv4-unicast', 'ipv6-unicast']);
  speaker.setRoutes([r4(1, { localPref: 200, communities: [0xfde80001] }), r6(1), r4(2, { peers: ['ibgp'] })]);
  e.establish();
  i.establish();
  const em = e.pull();
  t.same(em.flatMap((m) => m.announced).sort(), ['ipv4-unicast 192.0.2.1/32', 'ipv6-unicast 2001:db8::1/128']);
  t.notOk(em.some((m) => m.attrs.has(5)), 'no LOCAL_PREF toward eBGP');
  t.equal(em.find((m) => m.mpNextHop)?.mpNextHop, '2001:db8::ff', 'configured IPv6 next hop over an IPv4 session');
  t.equal(em.filter((m) => m.endOfRib).length, 0, 'no End-of-RIB yet');
  const im = i.pull();
  t.same(im.flatMap((m) => m.announced).sort(), ['ipv4-unicast 192.0.2.1/32', 'ipv4-unicast 192.0.2.2/32'], 'no IPv6 without an IPv6 next hop');
  t.equal(im.find((m) => m.announced.includes('ipv4-unicast 192.0.2.1/32'))!.attrs.get(5)!.value.readUInt32BE(0), 200, 'LOCAL_PREF toward iBGP');
  const kicks = e.kicks;
  speaker.markInitialSyncDone();
  t.ok(e.kicks > kicks, 'kicked after markInitialSyncDone');
  t.same(e.pull().map((m) => m.endOfRib), ['ipv4-unicast', 'ipv6-unicast']);
  t.equal(e.options.gracefulRestart!.restarting, false, 'R bit cleared for later OPENs after our End-of-RIB');
  const st = speaker.peers().find((p) => p.name === 'ebgp')!;
  t.equal(st.state, 'Established');
  t.equal(st.prefixesAdvertised, 2);
  t.same(st.endOfRibSent, ['ipv4-unicast', 'ipv6-unicast']);
  t.equal(st.negotiated?.holdTimeSec, 90);
  t.same(speaker.adjRibOut('ebgp').map((r) => [r.prefix, r.asPath, r.communities]), [['192.0.2.1/32', [65000], [0xfde80001]], ['2001:db8::1/128', [65000], undefined]]);
  e.emit('endOfRib', 'ipv4-unicast');
  t.same(speaker.peers()[0]!.endOfRibReceived, ['ipv4-unicast']);
});

t.test('session down resets Adj-RIB-Out; re-establish resends; route refresh resends the family', async (t) => {
  const { speaker, sessions } = setup();
  speaker.addPeer({ name: 'p', address: '127.0.0.2', peerAs: 65001 });
  const s = sessions[0]!;
  t.equal(s.options.gracefulRestart!.restarting, false, 'no R bit when not restarting');
  speaker.setRoutes([r4(1), r4(2)]);
  s.establish();
  t.equal(s.pull().flatMap((m) => m.announced).length, 2);
  s.down();
  t.equal(speaker.peers()[0]!.prefixesAdvertised, 0);
  speaker.setRoutes([r4(1)]);
  s.establish();
  t.same(s.pull().map((m) => [m.withdrawn, m.announced]), [[[], ['ipv4-unicast 192.0.2.1/32']]], 'only the current set, no withdraw');
  s.emit('routeRefresh', { afi: 1, safi: 1, subtype: 0 });
  t.same(s.pull().flatMap((m) => m.announced), ['ipv4-unicast 192.0.2.1/32']);
  speaker.resetPeer('p', { soft: true });
  t.same(s.pull().flatMap((m) => m.announced), ['ipv4-unicast 192.0.2.1/32'], 'soft reset resends');
  speaker.resetPeer('p', { soft: false });
  t.same(s.resets, [{ subcode: 4, hardReset: true }], 'hard reset: Cease 4, inside a Hard Reset where N was negotiated');
});

t.test('invalid routes: RouteError, nothing applied', async (t) => {
  const { speaker, sessions } = setup();
  speaker.addPeer({ name: 'p', address: '127.0.0.2', peerAs: 65001 });
  speaker.setRoutes([r4(1)]);
  sessions[0]!.establish();
  sessions[0]!.pull();
  t.throws(() => speaker.setRoutes([r4(2), { prefix: '192.0.2.1/24', family: 'ipv4-unicast' }]), { name: 'RouteError' });
  t.same(sessions[0]!.pull(), [], 'nothing sent');
  t.same(speaker.routes().map((r) => r.prefix), ['192.0.2.1/32']);
  t.throws(() => speaker.addPeer({ name: 'p', address: '127.0.0.9', peerAs: 1 }), /already exists/);
  t.throws(() => speaker.resetPeer('nope', { soft: true }), /unknown peer/);
});

t.test('drain: 65535:0 re-announce (LOCAL_PREF 0 to iBGP), wait, withdraw; undrain restores', async (t) => {
  const { speaker, sessions, clock } = setup();
  speaker.addPeer({ name: 'e', address: '127.0.0.2', peerAs: 65001 });
  speaker.addPeer({ name: 'i', address: '127.0.0.3', peerAs: 65000 });
  speaker.setRoutes([r4(1)]);
  const [e, i] = sessions as [FakeSession, FakeSession];
  e.establish();
  i.establish();
  e.pull();
  i.pull();
  const done = speaker.drain({ waitTimeSec: 30 });
  const em = e.pull();
  t.equal(em.length, 1);
  t.equal(em[0]!.attrs.get(8)!.value.toString('hex'), 'ffff0000', 'GRACEFUL_SHUTDOWN toward eBGP');
  const im = i.pull();
  t.equal(im[0]!.attrs.get(5)!.value.readUInt32BE(0), 0, 'LOCAL_PREF 0 toward iBGP');
  t.equal(speaker.peers()[0]!.gracefulShutdown, true);
  speaker.setRoutes([r4(1), r4(2)]);
  t.equal(e.pull()[0]!.attrs.get(8)!.value.toString('hex'), 'ffff0000', 'routes added while draining carry 65535:0');
  clock.advance(29_999);
  t.same(e.pull(), [], 'nothing withdrawn before the wait is over');
  clock.advance(1);
  await done;
  t.same(e.pull().flatMap((m) => m.withdrawn).sort(), ['ipv4-unicast 192.0.2.1/32', 'ipv4-unicast 192.0.2.2/32']);
  speaker.undrain();
  const back = e.pull();
  t.same(back.flatMap((m) => m.announced).sort(), ['ipv4-unicast 192.0.2.1/32', 'ipv4-unicast 192.0.2.2/32']);
  t.notOk(back[0]!.attrs.has(8), 'no community after undrain');
});

t.test('drain with no wait: withdrawn before drain() returns; routes set after it are not sent (a node starting drained)', async (t) => {
  const { speaker, sessions } = setup();
  speaker.addPeer({ name: 'e', address: '127.0.0.2', peerAs: 65001 });
  const e = sessions[0]!;
  e.establish();
  e.pull();
  const done = speaker.drain({ waitTimeSec: 0 });
  t.equal(speaker.draining, true);
  speaker.setRoutes([r4(1)]);
  t.same(e.pull().flatMap((m) => m.announced), [], 'nothing announced');
  await done;
  t.same(e.pull(), [], 'still nothing');
  speaker.undrain();
  t.same(e.pull().flatMap((m) => m.announced), ['ipv4-unicast 192.0.2.1/32'], 'undrain announces the set');
});

t.test('stop restart: nothing withdrawn, no 65535:0; each session ends by what graceful restart it agreed', async (t) => {
  const { speaker, sessions } = setup();
  speaker.addPeer({ name: 'n', address: '127.0.0.2', peerAs: 65001 });
  speaker.addPeer({ name: 'gr', address: '127.0.0.3', peerAs: 65001 });
  speaker.addPeer({ name: 'plain', address: '127.0.0.4', peerAs: 65001, gracefulRestart: false });
  speaker.addPeer({ name: 'down', address: '127.0.0.5', peerAs: 65001 });
  speaker.setRoutes([r4(1)]);
  const [n, gr, plain] = sessions as [FakeSession, FakeSession, FakeSession, FakeSession];
  n.establish({ gracefulRestartMode: 'notification' });
  gr.establish({ gracefulRestartMode: 'restart' });
  plain.establish({ gracefulRestartMode: 'none' });
  for (const s of [n, gr, plain]) s.pull();
  const outcome = await speaker.stop({ mode: 'restart', message: 'herald restarting' });
  for (const s of [n, gr, plain]) t.same(s.pull(), [], `${s.name}: no UPDATE at all (no withdrawal, no 65535:0)`);
  t.same(outcome, {
    mode: 'restart',
    peers: [
      { peer: 'n', ending: 'ceaseKeepingRoutes' },
      { peer: 'gr', ending: 'closedWithoutNotification' },
      { peer: 'plain', ending: 'cease' },
      { peer: 'down', ending: 'notEstablished' },
    ],
  });
  t.same(sessions.map((s) => s.stopped), [
    [{ subcode: 4, shutdownCommunication: 'herald restarting', hardReset: false }],
    ['withoutNotification'],
    [{ subcode: 2, shutdownCommunication: 'herald restarting' }],
    ['withoutNotification'],
  ]);
  t.same(await speaker.stop({ mode: 'departure' }), outcome, 'a second stop returns the first outcome');
  t.equal(sessions[0]!.stopped.length, 1, 'and stops nothing twice');
});

t.test('stop departure: 65535:0, the wait, the withdrawal handed to the sessions, then Hard Reset where N was agreed', async (t) => {
  const { speaker, sessions, clock } = setup();
  speaker.addPeer({ name: 'n', address: '127.0.0.2', peerAs: 65001 });
  speaker.addPeer({ name: 'gr', address: '127.0.0.3', peerAs: 65001 });
  speaker.setRoutes([r4(1), r4(2)]);
  const [n, gr] = sessions as [FakeSession, FakeSession];
  n.establish({ gracefulRestartMode: 'notification' });
  gr.establish({ gracefulRestartMode: 'restart' });
  n.pull();
  gr.pull();
  let outcome: unknown;
  const done = speaker.stop({ mode: 'departure', message: 'node leaving', waitTimeSec: 30 }).then((o) => (outcome = o));
  t.equal(n.pull()[0]!.attrs.get(8)!.value.toString('hex'), 'ffff0000', '65535:0 at once');
  clock.advance(29_999);
  await new Promise((r) => setImmediate(r));
  t.same(n.pull(), [], 'nothing withdrawn during the wait');
  clock.advance(1);
  await new Promise((r) => setImmediate(r));
  t.same(n.stopped, [], 'no Cease while withdrawals are pending');
  t.same(n.pull().flatMap((m) => m.withdrawn).sort(), ['ipv4-unicast 192.0.2.1/32', 'ipv4-unicast 192.0.2.2/32']);
  clock.advance(20);
  await new Promise((r) => setImmediate(r));
  t.same(n.stopped, [], 'still waiting: the other session has not taken its withdrawals');
  t.equal(gr.pull().flatMap((m) => m.withdrawn).length, 2);
  clock.advance(20);
  await done;
  t.same(outcome, { mode: 'departure', peers: [{ peer: 'n', ending: 'hardReset' }, { peer: 'gr', ending: 'cease' }] });
  t.same(n.stopped, [{ subcode: 2, shutdownCommunication: 'node leaving', hardReset: true }]);
  t.same(gr.stopped, [{ subcode: 2, shutdownCommunication: 'node leaving' }]);
  t.throws(() => speaker.addPeer({ name: 'x', address: '127.0.0.5', peerAs: 1 }), /shut down/);
});

t.test('stop departure after a finished drain: no second wait', async (t) => {
  const { speaker, sessions, clock } = setup();
  speaker.addPeer({ name: 'e', address: '127.0.0.2', peerAs: 65001 });
  speaker.setRoutes([r4(1)]);
  const e = sessions[0]!;
  e.establish();
  e.pull();
  const drained = speaker.drain({ waitTimeSec: 10 });
  clock.advance(10_000);
  await drained;
  e.pull();
  const outcome = await speaker.stop({ mode: 'departure', waitTimeSec: 60 });
  t.same(outcome.peers, [{ peer: 'e', ending: 'cease' }], 'stopped without advancing the clock');
});

t.test('updatePeer: next hop change keeps the session; other changes restart it with Cease 6; removePeer Cease 3', async (t) => {
  const { speaker, sessions } = setup();
  speaker.addPeer({ name: 'e', address: '127.0.0.2', peerAs: 65001 });
  speaker.setRoutes([r4(1)]);
  const e = sessions[0]!;
  e.establish();
  t.equal(e.pull()[0]!.attrs.get(3)!.value.toString('hex'), '7f000001', 'next hop = session local address');
  speaker.updatePeer({ name: 'e', address: '127.0.0.2', peerAs: 65001, nextHopIPv4: '198.51.100.7' });
  t.equal(sessions.length, 1, 'same session');
  t.equal(e.pull()[0]!.attrs.get(3)!.value.toString('hex'), 'c6336407', 'new next hop re-announced');
  speaker.updatePeer({ name: 'e', address: '127.0.0.2', peerAs: 65002, nextHopIPv4: '198.51.100.7' });
  t.same(e.stopped, [{ subcode: 6 }]);
  t.equal(sessions.length, 2, 'new session');
  t.equal(sessions[1]!.options.peerAs, 65002);
  await speaker.removePeer('e');
  t.same(sessions[1]!.stopped, [{ subcode: 3 }]);
  t.same(speaker.peers(), []);
});

t.test('updatePeer: a field bgp/peer-config.ts does not classify resets the session (the safe side)', async (t) => {
  const { speaker, sessions } = setup();
  speaker.addPeer({ name: 'u', address: '127.0.0.2', peerAs: 65001 });
  const u = sessions[0]!;
  u.establish();
  // an option added to PeerConfig by a caller that knows it, unknown to the table: never taken as export only
  const withUnknown = Object.assign({ name: 'u', address: '127.0.0.2', peerAs: 65001 }, { someFutureOption: 7 });
  speaker.updatePeer(withUnknown);
  t.same(u.stopped, [{ subcode: 6 }], 'Cease 6: the session restarts');
  t.equal(sessions.length, 2, 'new session');
});

t.test('setRoutes: a later duplicate key wins; unchanged routes are not resent', async (t) => {
  const { speaker, sessions } = setup();
  speaker.addPeer({ name: 'p', address: '127.0.0.2', peerAs: 65001 });
  const s = sessions[0]!;
  s.establish();
  speaker.setRoutes([r4(1, { med: 1 }), r4(1, { med: 2 })]);
  const m = s.pull();
  t.equal(m.length, 1);
  t.equal(m[0]!.attrs.get(4)!.value.readUInt32BE(0), 2, 'the later duplicate');
  speaker.setRoutes([r4(1, { med: 2 }), r4(2)]);
  t.same(s.pull().flatMap((x) => x.announced), ['ipv4-unicast 192.0.2.2/32'], 'only the new route is sent');
  speaker.setRoutes([r4(2), r4(1, { med: 2 })]);
  t.same(s.pull(), [], 'same set in another order: nothing sent');
});

t.test('an IPv4-mapped session address (dual-stack listener) is used as an IPv4 next hop', async (t) => {
  const { speaker, sessions } = setup();
  speaker.addPeer({ name: 'p', address: '127.0.0.2', peerAs: 65001 });
  const s = sessions[0]!;
  s.localAddress = '::ffff:127.0.0.9';
  speaker.setRoutes([r4(1)]);
  s.establish();
  t.equal(s.pull()[0]!.attrs.get(3)!.value.toString('hex'), '7f000009');
});

t.test('updateRoutes: upserts and removals only; validated first; a peer added later, drain and setRoutes see the result', async (t) => {
  const { speaker, sessions, clock } = setup();
  speaker.addPeer({ name: 'p', address: '127.0.0.2', peerAs: 65001 });
  const s = sessions[0]!;
  s.establish();
  const keep = r4(3);
  speaker.setRoutes([r4(1), r4(2), keep]);
  t.equal(s.pull().flatMap((m) => m.announced).length, 3);
  speaker.updateRoutes([r4(4), r4(2, { med: 7 }), r4(1)], ['192.0.2.3/32', '192.0.2.99/32']);
  const m = s.pull();
  t.same(m.flatMap((x) => x.withdrawn), ['ipv4-unicast 192.0.2.3/32'], 'the removed route is withdrawn (an unknown prefix is ignored)');
  t.same(m.flatMap((x) => x.announced).sort(), ['ipv4-unicast 192.0.2.2/32', 'ipv4-unicast 192.0.2.4/32'], 'the changed and the new route; the unchanged one is not resent');
  t.same(speaker.routes().map((r) => `${r.prefix} ${r.med ?? '-'}`).sort(), ['192.0.2.1/32 -', '192.0.2.2/32 7', '192.0.2.4/32 -']);
  // invalid: nothing changes
  t.throws(() => speaker.updateRoutes([r4(5), { prefix: '192.0.2.1/24', family: 'ipv4-unicast' }], ['192.0.2.1/32']), { name: 'RouteError' });
  t.same(s.pull(), [], 'nothing sent after a rejected update');
  t.equal(speaker.routes().length, 3);
  // a later duplicate wins; a prefix both changed and removed ends removed
  speaker.updateRoutes([r4(5, { med: 1 }), r4(5, { med: 2 }), r4(6)], ['192.0.2.6/32']);
  const m2 = s.pull();
  t.same(m2.flatMap((x) => x.announced), ['ipv4-unicast 192.0.2.5/32']);
  t.equal(m2[0]!.attrs.get(4)!.value.readUInt32BE(0), 2, 'the later duplicate');
  speaker.updateRoutes([r4(5, { med: 1 }), r4(5, { med: 2 })], []);
  t.same(s.pull(), [], 'back to the current attributes within the batch: nothing sent');
  // a peer added afterwards gets the current set
  speaker.addPeer({ name: 'q', address: '127.0.0.3', peerAs: 65002 });
  const q = sessions[1]!;
  q.establish();
  t.same(q.pull().flatMap((x) => x.announced).sort(), ['ipv4-unicast 192.0.2.1/32', 'ipv4-unicast 192.0.2.2/32', 'ipv4-unicast 192.0.2.4/32', 'ipv4-unicast 192.0.2.5/32']);
  // while drained: kept, not sent; undrain sends the current set
  const done = speaker.drain({ waitTimeSec: 1 });
  s.pull();
  clock.advance(1000);
  await done;
  t.equal(s.pull().flatMap((x) => x.withdrawn).length, 4, 'drained: everything withdrawn');
  speaker.updateRoutes([r4(7)], ['192.0.2.1/32']);
  t.same(s.pull(), [], 'nothing sent while drained');
  speaker.undrain();
  t.same(s.pull().flatMap((x) => x.announced).sort(), ['ipv4-unicast 192.0.2.2/32', 'ipv4-unicast 192.0.2.4/32', 'ipv4-unicast 192.0.2.5/32', 'ipv4-unicast 192.0.2.7/32']);
  // setRoutes after updateRoutes: the whole set replaces it
  speaker.setRoutes([r4(2, { med: 7 })]);
  t.same(s.pull().flatMap((x) => x.withdrawn).sort(), ['ipv4-unicast 192.0.2.4/32', 'ipv4-unicast 192.0.2.5/32', 'ipv4-unicast 192.0.2.7/32']);
});

t.test('the table is packed while a peer has no session: the session that comes up gets those very UPDATEs', async (t) => {
  const { speaker, sessions, clock } = setup();
  const turn = () => new Promise<void>((resolve) => setImmediate(resolve));
  const routes = Array.from({ length: 2000 }, (_, i) => ({ prefix: `10.0.${i >> 8}.${i & 255}/32`, family: 'ipv4-unicast' as const }));
  speaker.setRoutes(routes);
  // the local address is configured: packed before the first session
  speaker.addPeer({ name: 'known', address: '127.0.0.2', peerAs: 65001, localAddress: '127.0.0.1' });
  // not configured: packed only once a session told it
  speaker.addPeer({ name: 'learnt', address: '127.0.0.3', peerAs: 65001 });
  const [k, l] = sessions as [FakeSession, FakeSession];
  await turn();
  k.establish();
  l.establish();
  const k1 = k.pullRaw();
  const l1 = l.pullRaw();
  t.equal(k1.length, 3, 'the table in 3 UPDATEs');
  k.down();
  l.down();
  await turn();
  k.establish();
  l.establish();
  const k2 = k.pullRaw();
  const l2 = l.pullRaw();
  t.ok(k2.length === k1.length && k2.every((b, i) => b === k1[i]), 'the first and the second session got the Buffers packed before the first');
  t.ok(l2.every((b, i) => b !== l1[i]), 'the first session without a known local address packed its table then');
  t.same(l2.map((b) => b.toString('hex')), l1.map((b) => b.toString('hex')), 'the same bytes');
  l.down();
  await turn();
  l.establish();
  const l3 = l.pullRaw();
  t.ok(l3.every((b, i) => b === l2[i]), 'packed after the session went down, with its local address');
  t.equal(speaker.peers().find((p) => p.name === 'learnt')!.prefixesAdvertised, 2000);

  // a change while the peer is down: packed again a second later
  l.down();
  await turn();
  speaker.setRoutes(routes.slice(0, 1000));
  clock.advance(1000);
  l.establish();
  const l4 = l.pullRaw();
  t.equal(l4.length, 2);
  t.ok(l4.every((b) => !l3.includes(b)), 'packed anew for the changed set');
  t.same(l4.flatMap((b) => decodeUpdate(b).announced).length, 1000, 'the changed set');
  l.down();
  await turn();
  l.establish();
  const l5 = l.pullRaw();
  t.ok(l5.length === l4.length && l5.every((b, i) => b === l4[i]), 'the session got the table packed by the timer: the next one gets it again, not a new pack');
  // a change just before the session is back, and the second has not passed: packed at session start as before
  l.down();
  await turn();
  speaker.setRoutes(routes.slice(0, 10));
  l.establish();
  t.same(l.pull().flatMap((m) => m.announced).length, 10);
});
