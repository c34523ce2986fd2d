// RFC 4271 §6.8 connection collisions on a passive session behind BgpListener, against scripted raw peers over
// loopback (bytes from test/helpers/wire.ts), timers on a FakeClock. A second connection from the peer's address is
// held aside until it delivers an OPEN; only then is the collision resolved by BGP Identifier (RFC 4271 §6.8), and a
// connection that sends nothing or garbage is dropped without touching the existing one.
import t from 'tap';
import { Session } from '../../../bgp/session/session.ts';
import type { SessionOptions } from '../../../bgp/session/session.ts';
import { BgpListener } from '../../../bgp/session/listener.ts';
import { FakeClock } from '../../../bgp/clock.ts';
import { capability, keepalive, open, param, u16, u32, u8 } from '../../helpers/wire.ts';
import { RawPeer, once, testAddresses } from './raw-peer.ts';
import type { RawConn } from './raw-peer.ts';
import type { StateReason } from '../../../bgp/fsm/state.ts';

const T = { timeout: 20_000 };
const NOTIFICATION = 3;
/** RFC 4271 §8.2.2: the OpenSent hold time (4 minutes), which bounds a held-aside connection that sends nothing. */
const OPEN_SENT_HOLD_MS = 240_000;

const mp = (afi: number, safi: number) => capability(1, u16(afi), u8(0), u8(safi));
/** RFC 4724 graceful restart capability: restart time 120 s, IPv4 unicast with F bit. */
const gr = () => capability(64, u16(0x0078), u16(1), u8(1), u8(0x80));

function peerOpen(id: string, o: { gr?: boolean } = {}): Buffer {
  const list = [mp(1, 1), capability(2), capability(65, u32(65002))];
  if (o.gr) list.push(gr());
  return open({ as: 65002, holdTime: 90, id, params: [param(2, ...list)] });
}

interface Setup {
  session: Session;
  changes: { from: string; to: string; reason: StateReason }[];
  clock: FakeClock;
  connect(): Promise<RawConn>;
}

async function setup(t: { teardown(fn: () => unknown): void }, over: Partial<SessionOptions> = {}): Promise<Setup> {
  const addrs = testAddresses();
  const listener = new BgpListener({ address: addrs.ours, port: 0 });
  await listener.listen();
  const clock = new FakeClock(1_000_000);
  const session = new Session({
    name: 'passive', localAs: 65001, peerAs: 65002, bgpIdentifier: '10.0.0.1', remoteAddress: addrs.peer,
    holdTimeSec: 90, connectRetryTimeSec: 30, passive: true, families: ['ipv4-unicast'], clock, random: () => 0.5, ...over,
  });
  listener.register(addrs.peer, session);
  const changes: Setup['changes'] = [];
  session.on('stateChange', (c: Setup['changes'][number]) => changes.push(c));
  const conns: RawConn[] = [];
  t.teardown(async () => {
    await Promise.race([session.stop(), new Promise((r) => setTimeout(r, 2000))]);
    await listener.close();
    for (const c of conns) c.destroy();
  });
  session.start();
  return {
    session,
    changes,
    clock,
    async connect() {
      const c = await RawPeer.connect(addrs.ours, listener.boundPort ?? 0, addrs.peer);
      conns.push(c);
      return c;
    },
  };
}

async function until(cond: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Connection A: the peer dials, exchanges OPENs; we end in OpenConfirm. */
async function toOpenConfirm(s: Setup, id: string, o: { gr?: boolean } = {}): Promise<RawConn> {
  const a = await s.connect();
  await a.next(1);
  a.send(peerOpen(id, o));
  await a.next(4);
  if (s.session.state !== 'OpenConfirm') throw new Error(`expected OpenConfirm, got ${s.session.state}`);
  return a;
}

/** Connection A up to Established. */
async function toEstablished(s: Setup, id: string, o: { gr?: boolean } = {}): Promise<RawConn> {
  const a = await toOpenConfirm(s, id, o);
  a.send(keepalive());
  await once(s.session, 'stateChange', (e: { to: string }) => e.to === 'Established');
  return a;
}

/** Sends a KEEPALIVE on `a` and waits until the session counted it (proves `a` is still the live connection). */
async function keepaliveThrough(s: Setup, a: RawConn): Promise<void> {
  const before = s.session.stats.messagesReceived.KEEPALIVE ?? 0;
  a.send(keepalive());
  await until(() => (s.session.stats.messagesReceived.KEEPALIVE ?? 0) > before, 'KEEPALIVE processed');
}

/** Advances the clock past the OpenSent hold time in 60 s steps, keeping `a` alive with KEEPALIVEs (hold 90 s). */
async function outliveOpenSentHold(s: Setup, a: RawConn): Promise<void> {
  for (let ms = 0; ms < OPEN_SENT_HOLD_MS; ms += 60_000) {
    s.clock.advance(60_000);
    await keepaliveThrough(s, a);
  }
}

function notifications(c: RawConn): string[] {
  return c.received.filter((m) => m.type === NOTIFICATION).map((m) => m.body.subarray(0, 2).toString('hex'));
}

t.test('bare connect in OpenConfirm: the existing connection is untouched and reaches Established', T, async (t) => {
  const s = await setup(t);
  const a = await toOpenConfirm(s, '10.0.0.2');
  const b = await s.connect();
  t.equal((await b.next(1)).type, 1, 'the newcomer gets our OPEN (its own OpenSent, RFC 4271 §8)');
  t.equal(s.session.state, 'OpenConfirm', 'no collision decision without an OPEN on the newcomer');
  a.send(keepalive());
  await once(s.session, 'stateChange', (e: { to: string }) => e.to === 'Established');
  t.same(notifications(a), [], 'no NOTIFICATION on the existing connection');
  t.notOk(a.closed, 'existing connection open');
  await outliveOpenSentHold(s, a);
  t.equal((await b.next(NOTIFICATION)).body.subarray(0, 2).toString('hex'), '0400', 'silent newcomer: Hold Timer Expired');
  await b.waitClosed();
  t.equal(s.session.state, 'Established');
  t.equal(s.session.stats.flaps, 0);
  t.same(notifications(a), []);
});

t.test('bare connect while Established without graceful restart: newcomer gets Cease 7, session untouched', T, async (t) => {
  const s = await setup(t);
  const a = await toEstablished(s, '10.0.0.2');
  const b = await s.connect();
  t.equal((await b.next(NOTIFICATION)).body.toString('hex'), '0607', 'Cease 7 on the newcomer (RFC 4271 §6.8)');
  await b.waitClosed();
  await keepaliveThrough(s, a);
  t.equal(s.session.state, 'Established');
  t.equal(s.session.stats.flaps, 0);
  t.same(notifications(a), []);
  t.notOk(a.closed);
});

t.test('bare connect while Established with graceful restart: session untouched, newcomer dropped after the hold time', T, async (t) => {
  const s = await setup(t);
  const a = await toEstablished(s, '10.0.0.2', { gr: true });
  t.ok(s.session.negotiated?.gracefulRestart, 'peer negotiated GR');
  const b = await s.connect();
  t.equal((await b.next(1)).type, 1, 'newcomer gets our OPEN');
  await keepaliveThrough(s, a);
  t.equal(s.session.state, 'Established', 'no OPEN on the newcomer: the old session stays');
  await outliveOpenSentHold(s, a);
  t.equal((await b.next(NOTIFICATION)).body.subarray(0, 2).toString('hex'), '0400');
  await b.waitClosed();
  t.equal(s.session.state, 'Established');
  t.equal(s.session.stats.flaps, 0);
  t.same(notifications(a), []);
});

t.test('OpenConfirm, newcomer OPEN, peer Identifier higher than ours: the existing one gets Cease 7, the new one wins', T, async (t) => {
  const s = await setup(t); // ours 10.0.0.1 < peer 10.0.0.9
  const a = await toOpenConfirm(s, '10.0.0.9');
  const b = await s.connect();
  await b.next(1);
  t.equal(s.session.state, 'OpenConfirm');
  b.send(peerOpen('10.0.0.9'));
  t.equal((await a.next(NOTIFICATION)).body.toString('hex'), '0607', 'Cease 7 on the existing connection');
  await a.waitClosed();
  await b.next(4);
  t.ok(
    s.changes.some((c) => c.from === 'OpenConfirm' && c.to === 'OpenSent' && c.reason.kind === 'collision'),
    'OpenConfirm -> OpenSent on the new connection, reason collision',
  );
  b.send(keepalive());
  await once(s.session, 'stateChange', (e: { to: string }) => e.to === 'Established');
  t.same(notifications(b), [], 'no NOTIFICATION on the survivor');
  await keepaliveThrough(s, b);
  t.equal(s.session.state, 'Established');
});

t.test('OpenConfirm, newcomer OPEN, peer Identifier lower than ours: the newcomer gets Cease 7, the existing one wins', T, async (t) => {
  const s = await setup(t, { bgpIdentifier: '10.0.0.200' });
  const a = await toOpenConfirm(s, '10.0.0.2');
  const b = await s.connect();
  await b.next(1);
  b.send(peerOpen('10.0.0.2'));
  t.equal((await b.next(NOTIFICATION)).body.toString('hex'), '0607', 'Cease 7 on the newcomer');
  await b.waitClosed();
  t.equal(s.session.state, 'OpenConfirm');
  a.send(keepalive());
  await once(s.session, 'stateChange', (e: { to: string }) => e.to === 'Established');
  t.same(notifications(a), []);
});

t.test('newcomer held from OpenConfirm sends its OPEN after Established (no GR): Cease 7 on it, session untouched', T, async (t) => {
  const s = await setup(t); // ours lower: in OpenConfirm the newcomer would have won
  const a = await toOpenConfirm(s, '10.0.0.9');
  const b = await s.connect();
  await b.next(1);
  a.send(keepalive());
  await once(s.session, 'stateChange', (e: { to: string }) => e.to === 'Established');
  b.send(peerOpen('10.0.0.9'));
  t.equal((await b.next(NOTIFICATION)).body.toString('hex'), '0607', 'collision with Established closes the newcomer');
  await b.waitClosed();
  await keepaliveThrough(s, a);
  t.equal(s.session.state, 'Established');
  t.equal(s.session.stats.flaps, 0);
  t.same(notifications(a), []);
});

for (const when of ['OpenConfirm', 'Established with graceful restart'] as const) {
  t.test(`garbage on the newcomer in ${when}: only the newcomer is closed`, T, async (t) => {
    const s = await setup(t);
    const a = when === 'OpenConfirm' ? await toOpenConfirm(s, '10.0.0.9') : await toEstablished(s, '10.0.0.9', { gr: true });
    const b = await s.connect();
    await b.next(1);
    b.send(Buffer.alloc(19, 0x00)); // bad marker
    t.equal((await b.next(NOTIFICATION)).body.subarray(0, 2).toString('hex'), '0101', 'Connection Not Synchronized on the newcomer');
    await b.waitClosed();
    if (when === 'OpenConfirm') {
      t.equal(s.session.state, 'OpenConfirm');
      a.send(keepalive());
      await once(s.session, 'stateChange', (e: { to: string }) => e.to === 'Established');
    } else {
      await keepaliveThrough(s, a);
    }
    t.equal(s.session.state, 'Established');
    t.equal(s.session.stats.flaps, 0);
    t.same(notifications(a), []);
    t.notOk(a.closed);
  });
}

t.test('newcomer that closes without an OPEN in OpenConfirm: dropped, the existing connection continues', T, async (t) => {
  const s = await setup(t);
  const a = await toOpenConfirm(s, '10.0.0.9');
  const b = await s.connect();
  await b.next(1);
  b.destroy();
  await b.waitClosed();
  a.send(keepalive());
  await once(s.session, 'stateChange', (e: { to: string }) => e.to === 'Established');
  t.same(notifications(a), []);
  t.equal(s.session.stats.flaps, 0);
});

t.test('graceful restart: a newcomer with a valid OPEN while Established replaces the old connection (RFC 4724 §4)', T, async (t) => {
  const s = await setup(t);
  const a = await toEstablished(s, '10.0.0.2', { gr: true });
  const down = once(s.session, 'down');
  const b = await s.connect();
  await b.next(1);
  b.send(peerOpen('10.0.0.2', { gr: true }));
  await down;
  await a.waitClosed();
  await b.next(4);
  b.send(keepalive());
  await once(s.session, 'stateChange', (e: { to: string }) => e.to === 'Established');
  await keepaliveThrough(s, b);
  t.equal(s.session.state, 'Established');
  t.equal(s.session.stats.flaps, 1, 'the old session went down once');
});

t.test('newcomer sends a KEEPALIVE before any OPEN: 5/1 on it only; its OPEN wait timer does not outlive it', T, async (t) => {
  const s = await setup(t);
  const a = await toOpenConfirm(s, '10.0.0.9');
  const b = await s.connect();
  await b.next(1);
  b.send(keepalive());
  t.equal((await b.next(NOTIFICATION)).body.subarray(0, 2).toString('hex'), '0501', 'FSM error in OpenSent on the newcomer');
  await b.waitClosed();
  a.send(keepalive());
  await once(s.session, 'stateChange', (e: { to: string }) => e.to === 'Established');
  t.same(notifications(a), []);
  await s.session.stop();
  t.equal(s.clock.pending, 0, 'no timer left after stop');
});

t.test('a second bare connect replaces the first held one; the existing connection is untouched', T, async (t) => {
  const s = await setup(t);
  const a = await toOpenConfirm(s, '10.0.0.9');
  const b1 = await s.connect();
  await b1.next(1);
  const b2 = await s.connect();
  await b2.next(1);
  t.equal((await b1.next(NOTIFICATION)).body.toString('hex'), '0607', 'older held connection closed with Cease 7');
  await b1.waitClosed();
  t.equal(s.session.state, 'OpenConfirm');
  b2.send(peerOpen('10.0.0.9')); // ours 10.0.0.1 lower: the newcomer wins
  t.equal((await a.next(NOTIFICATION)).body.toString('hex'), '0607');
  await b2.next(4);
  b2.send(keepalive());
  await once(s.session, 'stateChange', (e: { to: string }) => e.to === 'Established');
  t.same(notifications(b2), []);
});

// RFC 6286 §2.3: with equal BGP Identifiers (allowed between eBGP peers, RFC 6286 §2.2), the connection opened by the
// speaker with the larger AS number survives; the other gets Cease 7. Here the session dials the raw peer and the
// raw peer dials our listener, so one connection is ours and one is the peer's.
async function activeSetup(t: { teardown(fn: () => unknown): void }, over: Partial<SessionOptions> = {}) {
  const addrs = testAddresses();
  const peer = await RawPeer.listen(addrs.peer);
  const listener = new BgpListener({ address: addrs.ours, port: 0 });
  await listener.listen();
  const clock = new FakeClock(1_000_000);
  const session = new Session({
    name: 'active', localAs: 65001, peerAs: 65002, bgpIdentifier: '10.0.0.1', remoteAddress: addrs.peer, remotePort: peer.port,
    localAddress: addrs.ours, holdTimeSec: 90, connectRetryTimeSec: 30, families: ['ipv4-unicast'], clock, random: () => 0.5, ...over,
  });
  listener.register(addrs.peer, session);
  const conns: RawConn[] = [];
  t.teardown(async () => {
    await Promise.race([session.stop(), new Promise((r) => setTimeout(r, 2000))]);
    await listener.close();
    await peer.close();
    for (const c of conns) c.destroy();
  });
  session.start();
  const ours = await peer.accept();
  await ours.next(1);
  const dialIn = async (): Promise<RawConn> => {
    const c = await RawPeer.connect(addrs.ours, listener.boundPort ?? 0, addrs.peer);
    conns.push(c);
    await c.next(1);
    return c;
  };
  return { session, ours, dialIn };
}

for (const at of ['OpenSent', 'OpenConfirm'] as const) {
  t.test(`RFC 6286 2.3, ${at}: equal BGP Identifiers and the peer's AS larger: our connection gets Cease 7, the peer's survives`, T, async (t) => {
    const { session, ours, dialIn } = await activeSetup(t); // local AS 65001 < peer AS 65002
    if (at === 'OpenConfirm') {
      ours.send(peerOpen('10.0.0.1'));
      await ours.next(4);
      t.equal(session.state, 'OpenConfirm');
    }
    const theirs = await dialIn();
    theirs.send(peerOpen('10.0.0.1')); // the same BGP Identifier as ours
    t.equal((await ours.next(NOTIFICATION)).body.toString('hex'), '0607', 'Cease 7 on the connection we opened');
    await ours.waitClosed();
    await theirs.next(4);
    theirs.send(keepalive());
    await once(session, 'stateChange', (e: { to: string }) => e.to === 'Established');
    t.same(notifications(theirs), [], 'no NOTIFICATION on the peer-initiated connection');
    t.equal(session.state, 'Established');
  });

  t.test(`RFC 6286 2.3, ${at}: equal BGP Identifiers and our AS larger: the peer's connection gets Cease 7, ours survives`, T, async (t) => {
    const { session, ours, dialIn } = await activeSetup(t, { localAs: 65010 }); // local AS 65010 > peer AS 65002
    if (at === 'OpenConfirm') {
      ours.send(peerOpen('10.0.0.1'));
      await ours.next(4);
    }
    const theirs = await dialIn();
    theirs.send(peerOpen('10.0.0.1'));
    t.equal((await theirs.next(NOTIFICATION)).body.toString('hex'), '0607', 'Cease 7 on the peer-initiated connection');
    await theirs.waitClosed();
    if (at === 'OpenSent') {
      ours.send(peerOpen('10.0.0.1'));
      await ours.next(4);
    }
    ours.send(keepalive());
    await once(session, 'stateChange', (e: { to: string }) => e.to === 'Established');
    t.same(notifications(ours), [], 'no NOTIFICATION on the connection we opened');
  });
}

t.test('RFC 6286 2.3 on a passive session: equal BGP Identifiers, both connections opened by the peer: the existing one stays', T, async (t) => {
  const s = await setup(t); // ours 10.0.0.1, AS 65001 < 65002: the rule favours the peer's connections, and both are
  const a = await toOpenConfirm(s, '10.0.0.1');
  const b = await s.connect();
  await b.next(1);
  b.send(peerOpen('10.0.0.1'));
  t.equal((await b.next(NOTIFICATION)).body.toString('hex'), '0607', 'Cease 7 on the newcomer');
  await b.waitClosed();
  a.send(keepalive());
  await once(s.session, 'stateChange', (e: { to: string }) => e.to === 'Established');
  t.same(notifications(a), []);
});
