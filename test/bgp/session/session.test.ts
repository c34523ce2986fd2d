// Session over loopback sockets against a scripted raw peer (bytes from test/helpers/wire.ts), timers on a FakeClock.
import t from 'tap';
import { Session, WITHOUT_NOTIFICATION } from '../../../bgp/session/session.ts';
import type { SessionOptions, TxSource } from '../../../bgp/session/session.ts';
import { BgpListener } from '../../../bgp/session/listener.ts';
import { FakeClock } from '../../../bgp/clock.ts';
import { describeReason } from '../../../bgp/fsm/state.ts';
import type { StateReason } from '../../../bgp/fsm/state.ts';
import { capability, ip4, keepalive, message, notification, open, param, u16, u32, u8, bytes } from '../../helpers/wire.ts';
import { RawPeer, once, testAddresses } from './raw-peer.ts';
import type { RawConn } from './raw-peer.ts';

const T = { timeout: 20_000 };

function caps(...c: Buffer[]): Buffer {
  return param(2, ...c);
}
const mp = (afi: number, safi: number) => capability(1, u16(afi), u8(0), u8(safi));
const as4 = (as: number) => capability(65, u32(as));
const rr = () => capability(2);

function peerOpen(o: { as?: number; holdTime?: number; id?: string; as4?: number | false; extra?: Buffer[] } = {}): Buffer {
  const list = [mp(1, 1), mp(2, 1), rr(), ...(o.extra ?? [])];
  if (o.as4 !== false) list.push(as4(o.as4 ?? o.as ?? 65002));
  return open({ as: o.as ?? 65002, holdTime: o.holdTime ?? 90, id: o.id ?? '10.0.0.2', params: [caps(...list)] });
}

/** An IPv4 UPDATE announcing `prefixes` (/24s) with ORIGIN, AS_PATH [65002] and NEXT_HOP. */
function update4(prefixes: string[], nh = '127.0.0.2'): Buffer {
  const attrs = bytes(
    [0x40, 1, 1, 0],
    [0x40, 2, 6, 2, 1], u32(65002),
    [0x40, 3, 4], ip4(nh),
  );
  const nlri = bytes(...prefixes.map((p) => bytes(u8(24), ip4(p).subarray(0, 3))));
  return message(2, u16(0), u16(attrs.length), attrs, nlri);
}

interface Setup {
  session: Session;
  peer: RawPeer;
  clock: FakeClock;
  addrs: ReturnType<typeof testAddresses>;
  reasons: StateReason[];
}

async function setup(t: { teardown(fn: () => unknown): void }, over: Partial<SessionOptions> = {}): Promise<Setup> {
  const addrs = testAddresses();
  const peer = await RawPeer.listen(addrs.peer);
  const clock = new FakeClock(1_000_000);
  const session = new Session({
    name: 'p1',
    localAs: 65001,
    peerAs: 65002,
    bgpIdentifier: '10.0.0.1',
    remoteAddress: addrs.peer,
    remotePort: peer.port,
    localAddress: addrs.ours,
    holdTimeSec: 90,
    connectRetryTimeSec: 30,
    passive: false,
    families: ['ipv4-unicast', 'ipv6-unicast'],
    clock,
    random: () => 0.5,
    ...over,
  });
  const reasons: StateReason[] = [];
  session.on('stateChange', (e: { reason: StateReason }) => reasons.push(e.reason));
  t.teardown(async () => {
    await Promise.race([session.stop(), new Promise((r) => setTimeout(r, 2000))]);
    await peer.close();
  });
  return { session, peer, clock, addrs, reasons };
}

/** Runs the OPEN/KEEPALIVE exchange from the raw peer's side; returns the connection and our OPEN. */
async function establish(s: Setup, peerOpenBytes = peerOpen()): Promise<{ conn: RawConn; ourOpen: Buffer }> {
  s.session.start();
  const conn = await s.peer.accept();
  const o = await conn.next(1);
  conn.send(peerOpenBytes);
  await conn.next(4);
  conn.send(keepalive());
  if (s.session.state !== 'Established') await once(s.session, 'stateChange', (e: { to: string }) => e.to === 'Established');
  return { conn, ourOpen: o.body };
}


t.test('establishes: our OPEN carries the RFC fields and capabilities; negotiated result', T, async (t) => {
  const s = await setup(t, { gracefulRestart: { restartTimeSec: 120, restarting: true, forwardingPreserved: true } });
  const established = once(s.session, 'established');
  const { ourOpen } = await establish(s);
  t.equal(ourOpen[0], 4, 'version 4');
  t.equal(ourOpen.readUInt16BE(1), 65001, 'My AS');
  t.equal(ourOpen.readUInt16BE(3), 90, 'Hold Time');
  t.equal(ip4('10.0.0.1').equals(ourOpen.subarray(5, 9)), true, 'BGP Identifier');
  const hex = ourOpen.toString('hex');
  t.match(hex, mp(1, 1).toString('hex'), 'MP ipv4 unicast');
  t.match(hex, mp(2, 1).toString('hex'), 'MP ipv6 unicast');
  t.match(hex, '0200', 'route refresh');
  t.match(hex, '0600', 'extended message');
  t.match(hex, as4(65001).toString('hex'), '4-octet AS');
  // GR: code 64, length 2 + 4 per family; flags R=0x8 with restart time 120 = 0x8078; F bit 0x80 per family
  t.match(hex, '400a8078000101800002018' + '0', 'graceful restart with R bit, time and F bits');
  t.notMatch(hex, /45..0001/, 'no ADD-PATH offered');
  const n = (await established) as { fourOctetAs: boolean; families: string[]; holdTimeSec: number };
  t.equal(n.fourOctetAs, true);
  t.same(n.families, ['ipv4-unicast', 'ipv6-unicast']);
  t.equal(n.holdTimeSec, 90);
  t.equal(s.session.localAddress, s.addrs.ours, 'bound to localAddress');
  t.same(s.reasons.map((r) => r.kind), ['started', 'progress', 'progress', 'progress']);
});

t.test('RFC 6793: localAs > 65535 puts AS_TRANS in My AS', T, async (t) => {
  const s = await setup(t, { localAs: 4200000001 });
  s.session.start();
  const conn = await s.peer.accept();
  const o = await conn.next(1);
  t.equal(o.body.readUInt16BE(1), 23456, 'AS_TRANS');
  t.match(o.body.toString('hex'), as4(4200000001).toString('hex'));
});

t.test('2-octet-only peer: session without 4-octet AS', T, async (t) => {
  const s = await setup(t);
  const established = once(s.session, 'established');
  await establish(s, peerOpen({ as4: false }));
  const n = (await established) as { fourOctetAs: boolean; peerAs: number };
  t.equal(n.fourOctetAs, false);
  t.equal(n.peerAs, 65002);
});

t.test('RFC 4271 6.5: hold timer expiry sends 4/0, closes, then reconnects after the backoff', T, async (t) => {
  const s = await setup(t, { holdTimeSec: 9 });
  const { conn } = await establish(s);
  const down = once<StateReason>(s.session, 'down');
  s.clock.advance(9000);
  const n = await conn.next(3);
  t.same([n.body[0], n.body[1], n.body.length], [4, 0, 2], 'NOTIFICATION 4/0, no data');
  await conn.waitClosed();
  t.same(await down, { kind: 'holdTimerExpired' });
  t.equal(s.session.state, 'Idle');
  t.equal(s.session.stats.lastNotificationSent?.code, 4);
  s.clock.advance(1000); // first backoff delay (base 1 s, no jitter at random 0.5)
  const again = await s.peer.accept();
  t.equal((await again.next(1)).type, 1, 'reconnected and sent OPEN');
});

t.test('keepalives are sent every third of the negotiated hold time', T, async (t) => {
  const s = await setup(t, { holdTimeSec: 30 });
  const { conn } = await establish(s, peerOpen({ holdTime: 12 }));
  const before = conn.received.filter((m) => m.type === 4).length;
  s.clock.advance(4000);
  await conn.next(4);
  s.clock.advance(4000);
  await conn.next(4);
  t.equal(conn.received.filter((m) => m.type === 4).length, before + 2);
  t.equal(s.session.negotiated?.holdTimeSec, 12);
  t.equal(s.session.negotiated?.keepaliveTimeSec, 4);
});

t.test('hold time 0 disables keepalives and the hold timer', T, async (t) => {
  const s = await setup(t);
  const { conn } = await establish(s, peerOpen({ holdTime: 0 }));
  const count = conn.received.length;
  s.clock.advance(3_600_000);
  await new Promise((r) => setTimeout(r, 100));
  t.equal(s.session.state, 'Established');
  t.equal(conn.received.length, count, 'nothing sent in an hour');
});

const badOpens: { name: string; open: Buffer; code: number; subcode: number; data: string }[] = [
  { name: 'RFC 4271 6.2: hold time 2 -> 2/6 with the hold time', open: peerOpen({ holdTime: 2 }), code: 2, subcode: 6, data: '0002' },
  { name: 'RFC 4271 6.2: hold time 1 -> 2/6', open: peerOpen({ holdTime: 1 }), code: 2, subcode: 6, data: '0001' },
  { name: 'RFC 4271 6.2: peer AS mismatch -> 2/2 with the AS field', open: peerOpen({ as: 65099 }), code: 2, subcode: 2, data: u16(65099).toString('hex') },
  { name: 'RFC 4271 6.2: version 3 -> 2/1 with version 4', open: open({ version: 3, as: 65002, holdTime: 90, id: '10.0.0.2' }), code: 2, subcode: 1, data: '0004' },
  { name: 'RFC 6286: BGP Identifier 0 -> 2/3', open: peerOpen({ id: '0.0.0.0' }), code: 2, subcode: 3, data: '00000000' },
];
for (const b of badOpens) {
  t.test(b.name, T, async (t) => {
    const s = await setup(t);
    s.session.start();
    const conn = await s.peer.accept();
    await conn.next(1);
    conn.send(b.open);
    const n = await conn.next(3);
    t.equal(n.body[0], b.code, 'code');
    t.equal(n.body[1], b.subcode, 'subcode');
    t.equal(n.body.subarray(2).toString('hex'), b.data, 'data');
    await conn.waitClosed();
    t.equal(s.session.state, 'Idle');
    t.same(s.session.lastReason, { kind: 'notificationSent', code: b.code, subcode: b.subcode });
    t.equal(s.session.nextRetryDelayMs, 2000, 'after rejecting an OPEN the retry backs off like any failure (1 s used, 2 s next)');
  });
}

t.test('iBGP: the peer using our BGP Identifier -> 2/3', T, async (t) => {
  const s = await setup(t, { peerAs: 65001 });
  s.session.start();
  const conn = await s.peer.accept();
  await conn.next(1);
  conn.send(peerOpen({ as: 65001, id: '10.0.0.1' }));
  const n = await conn.next(3);
  t.same([n.body[0], n.body[1], n.body.subarray(2).toString('hex')], [2, 3, '0a000001']);
});

t.test('RFC 6608: unexpected messages give 5/1 and 5/2 with the message type', T, async (t) => {
  const s = await setup(t);
  s.session.start();
  const c1 = await s.peer.accept();
  await c1.next(1);
  c1.send(keepalive());
  const n1 = await c1.next(3);
  t.equal(n1.body.toString('hex'), '050104', 'KEEPALIVE in OpenSent -> 5/1 data 04');
  await c1.waitClosed();
  s.clock.advance(1000);
  const c2 = await s.peer.accept();
  await c2.next(1);
  c2.send(peerOpen());
  await c2.next(4);
  c2.send(update4(['10.9.0.0']));
  const n2 = await c2.next(3);
  t.equal(n2.body.toString('hex'), '050202', 'UPDATE in OpenConfirm -> 5/2 data 02');
});

t.test('RFC 4271 6.1: bad marker -> 1/1; bad length -> 1/2 with the length', T, async (t) => {
  const s = await setup(t);
  const { conn } = await establish(s);
  const bad = keepalive();
  bad[3] = 0;
  conn.send(bad);
  const n = await conn.next(3);
  t.equal(n.body.toString('hex'), '0101');
  await conn.waitClosed();
  s.clock.advance(1000);
  const c2 = await s.peer.accept();
  await c2.next(1);
  const long = Buffer.alloc(19, 0xff);
  long.writeUInt16BE(4097, 16);
  long[18] = 2;
  c2.send(long);
  const n2 = await c2.next(3);
  t.equal(n2.body.toString('hex'), '01021001');
});

t.test('peer NOTIFICATION is recorded with its RFC 9003 text; after a 2/x the retry backs off', T, async (t) => {
  const s = await setup(t);
  const { conn } = await establish(s);
  const text = Buffer.from('maintenance window', 'utf8');
  const down = once<StateReason>(s.session, 'down');
  conn.send(notification(6, 2, u8(text.length), text));
  t.same(await down, { kind: 'notificationReceived', code: 6, subcode: 2, text: 'maintenance window' });
  t.equal(s.session.stats.lastNotificationReceived?.text, 'maintenance window');
  t.equal(s.session.stats.lastNotificationReceived?.description, 'Cease / Administrative Shutdown');
  // Next: the peer rejects our OPEN with 2/2: the second failure in a row, so the next retry waits 2 s.
  s.clock.advance(1000);
  const c2 = await s.peer.accept();
  await c2.next(1);
  c2.send(notification(2, 2, u16(65001)));
  await c2.waitClosed();
  t.equal(s.session.lastReason?.kind, 'notificationReceived');
  s.clock.advance(1999);
  await new Promise((r) => setTimeout(r, 150));
  t.equal(s.peer.conns.length, 2, 'no reconnect before the backoff delay');
  s.clock.advance(1);
  const c3 = await s.peer.accept();
  t.ok(c3, 'reconnected after 2 s');
});

t.test('RFC 7606: a malformed UPDATE on one session does not disturb another; treat-as-withdraw is counted', T, async (t) => {
  const a = await setup(t);
  const b = await setup(t, { name: 'p2' });
  const ea = await establish(a);
  const eb = await establish(b);
  // treat-as-withdraw: ORIGIN value 7 is invalid -> counted, session stays up
  const updates: unknown[] = [];
  a.session.on('update', (u) => updates.push(u));
  const badOrigin = update4(['10.1.0.0']);
  badOrigin[19 + 4 + 3] = 7;
  ea.conn.send(badOrigin, keepalive());
  await once(a.session, 'update');
  t.equal(a.session.state, 'Established', 'treat-as-withdraw keeps the session');
  t.equal(a.session.stats.malformedUpdatesReceived, 1);
  // session-fatal: attribute length overruns -> 3/1 on A only
  const fatal = message(2, u16(0), u16(10), [0x40, 1, 1, 0]);
  ea.conn.send(fatal);
  const n = await ea.conn.next(3);
  t.equal(n.body[0], 3, 'UPDATE Message Error');
  t.equal(n.body[1], 1, 'Malformed Attribute List');
  await ea.conn.waitClosed();
  eb.conn.send(update4(['10.2.0.0']));
  await once(b.session, 'update');
  t.equal(b.session.state, 'Established', 'the other session is untouched');
  t.equal(b.session.stats.prefixesReceived, 1);
});

t.test('maxPrefixes exceeded -> Cease 1 with AFI/SAFI/limit', T, async (t) => {
  const s = await setup(t, { maxPrefixes: 2 });
  const { conn } = await establish(s);
  conn.send(update4(['10.1.0.0', '10.2.0.0']));
  await once(s.session, 'update');
  t.equal(s.session.state, 'Established');
  conn.send(update4(['10.3.0.0']));
  const n = await conn.next(3);
  t.equal(n.body.toString('hex'), '0601' + '0001' + '01' + '00000002');
});

t.test('maxPrefixes counts prefixes currently announced: re-announcements and withdrawn prefixes do not add up', T, async (t) => {
  const s = await setup(t, { maxPrefixes: 2 });
  const { conn } = await establish(s);
  for (let i = 0; i < 3; i++) {
    conn.send(update4(['10.1.0.0', '10.2.0.0']));
    await once(s.session, 'update');
  }
  t.equal(s.session.stats.prefixesReceived, 2);
  conn.send(message(2, u16(4), [24, 10, 1, 0], u16(0)));
  await once(s.session, 'update');
  t.equal(s.session.stats.prefixesReceived, 1, 'withdrawn');
  conn.send(update4(['10.3.0.0']));
  await once(s.session, 'update');
  t.equal(s.session.state, 'Established', 'still within the limit');
  t.equal(s.session.stats.prefixesReceived, 2);
});

t.test('End-of-RIB and ROUTE-REFRESH from the peer are emitted', T, async (t) => {
  const s = await setup(t);
  const { conn } = await establish(s);
  const eor = once(s.session, 'endOfRib');
  conn.send(message(2, u16(0), u16(0)));
  t.equal(await eor, 'ipv4-unicast');
  const refresh = once(s.session, 'routeRefresh');
  conn.send(message(5, u16(2), u8(0), u8(1)));
  t.same(await refresh, { afi: 2, safi: 1, subtype: 0 });
});

t.test('TxSource: UPDATEs are pulled after Established, in order', T, async (t) => {
  const s = await setup(t);
  const queue = [update4(['10.5.0.0']), update4(['10.6.0.0'])];
  const src: TxSource = { nextMessage: (_ctx, max) => (t.equal(max, 65535, 'extended message negotiated'), queue.shift()) };
  s.session.setTxSource(src);
  const { conn } = await establish(s, peerOpen({ extra: [capability(6)] }));
  const u1 = await conn.next(2);
  const u2 = await conn.next(2);
  t.equal(u1.raw.toString('hex'), update4(['10.5.0.0']).toString('hex'));
  t.equal(u2.raw.toString('hex'), update4(['10.6.0.0']).toString('hex'));
  queue.push(update4(['10.7.0.0']));
  s.session.kickTx();
  t.equal((await conn.next(2)).raw.toString('hex'), update4(['10.7.0.0']).toString('hex'));
  t.equal(s.session.stats.messagesSent.UPDATE, 3);
});

t.test('an exception in our own code (the TxSource) ends the session with Cease / Out of Resources, and the reason says what failed', T, async (t) => {
  // Regression (issue 19): the reason said only "Cease / Out of Resources"; what failed was never shown.
  const s = await setup(t);
  s.session.setTxSource({ nextMessage: () => { throw new RangeError('cannot encode this'); } });
  const { conn } = await establish(s);
  const n = await conn.next(3);
  t.same([n.body[0], n.body[1]], [6, 8], 'Cease / Out of Resources on the wire');
  const down = s.reasons.find((r) => r.kind === 'notificationSent');
  t.same(down, { kind: 'notificationSent', code: 6, subcode: 8, cause: 'internal error: cannot encode this' });
  t.equal(describeReason(down), 'NOTIFICATION sent: Cease / Out of Resources (internal error: cannot encode this)');
});

t.test('stop() sends Cease 6/2 with the RFC 9003 text and resolves once closed; no reconnect', T, async (t) => {
  const s = await setup(t);
  const { conn } = await establish(s);
  await s.session.stop({ subcode: 2, shutdownCommunication: 'bye now' });
  const n = await conn.next(3);
  t.equal(n.body.toString('hex'), '0602' + '07' + Buffer.from('bye now').toString('hex'));
  t.same(s.session.lastReason, { kind: 'admin', message: 'bye now' });
  s.clock.advance(600_000);
  await new Promise((r) => setTimeout(r, 100));
  t.equal(s.peer.conns.length, 1, 'no reconnect after stop');
});

const GR_OPTIONS = { restartTimeSec: 120, restarting: false, forwardingPreserved: true };
/** The peer's GR capability: restart time 120 s, N bit (RFC 8538 §2) when `n`, IPv4 unicast with F. */
const peerGr = (n: boolean) => capability(64, u16((n ? 0x4000 : 0) | 120), u16(1), u8(1), u8(0x80));

t.test('RFC 8538: our OPEN sets the N bit when asked; both set it → gracefulRestartMode notification', T, async (t) => {
  const s = await setup(t, { gracefulRestart: { ...GR_OPTIONS, notification: true } });
  const { ourOpen } = await establish(s, peerOpen({ extra: [peerGr(true)] }));
  t.match(ourOpen.toString('hex'), '400a4078', 'GR flags N (0x4) with restart time 120');
  t.equal(s.session.negotiated?.gracefulRestartMode, 'notification');
});

t.test('stop() without a NOTIFICATION (graceful restart, RFC 4724): the peer sees the connection end, no message', T, async (t) => {
  const s = await setup(t, { gracefulRestart: GR_OPTIONS });
  const { conn } = await establish(s, peerOpen({ extra: [peerGr(false)] }));
  t.equal(s.session.negotiated?.gracefulRestartMode, 'restart');
  await s.session.stop(WITHOUT_NOTIFICATION);
  await conn.waitClosed();
  t.same(conn.received.filter((m) => m.type === 3), [], 'no NOTIFICATION');
  t.same(s.session.lastReason, { kind: 'admin', message: 'closed without NOTIFICATION: graceful restart (RFC 4724 §4)' });
  t.equal(s.session.stats.messagesSent.NOTIFICATION, 0);
});

t.test('N negotiated: stop() with 6/2 goes out as Hard Reset (RFC 8538 §3.1, §5), 6/4 stays a plain Cease', T, async (t) => {
  const a = await setup(t, { gracefulRestart: { ...GR_OPTIONS, notification: true } });
  const ea = await establish(a, peerOpen({ extra: [peerGr(true)] }));
  await a.session.stop({ subcode: 2, shutdownCommunication: 'leaving' });
  t.equal((await ea.conn.next(3)).body.toString('hex'), '0609' + '0602' + '07' + Buffer.from('leaving').toString('hex'));
  t.same(a.session.lastReason, { kind: 'notificationSent', code: 6, subcode: 9, text: 'leaving' });
  t.same(a.session.stats.lastNotificationSent?.text, 'leaving');

  const b = await setup(t, { gracefulRestart: { ...GR_OPTIONS, notification: true } });
  const eb = await establish(b, peerOpen({ extra: [peerGr(true)] }));
  await b.session.stop({ subcode: 4, shutdownCommunication: 'back soon', hardReset: false });
  t.equal((await eb.conn.next(3)).body.toString('hex'), '0604' + '09' + Buffer.from('back soon').toString('hex'), 'Cease that keeps graceful restart');

  const c = await setup(t, { gracefulRestart: { ...GR_OPTIONS, notification: true } });
  const ec = await establish(c, peerOpen({ extra: [peerGr(false)] }));
  await c.session.stop({ subcode: 2 });
  t.equal((await ec.conn.next(3)).body.toString('hex'), '0602', 'the peer did not set N: never a Hard Reset');
});

t.test('reset() sends Cease 6/4 and reconnects', T, async (t) => {
  const s = await setup(t);
  const { conn } = await establish(s);
  s.session.reset({ subcode: 4, shutdownCommunication: 'config change' });
  const n = await conn.next(3);
  t.equal(n.body.subarray(0, 2).toString('hex'), '0604');
  await conn.waitClosed();
  s.clock.advance(1000);
  const c2 = await s.peer.accept();
  t.equal((await c2.next(1)).type, 1);
});

t.test('connection refused: retries with growing backoff', T, async (t) => {
  const s = await setup(t);
  const port = s.peer.port;
  await s.peer.close();
  const seen: string[] = [];
  s.session.on('stateChange', (e: { to: string }) => seen.push(e.to));
  s.session.start();
  await once(s.session, 'stateChange', (e: { to: string }) => e.to === 'Active');
  t.equal(s.session.nextRetryDelayMs, 2000, 'first retry used the base; next is doubled');
  s.clock.advance(1000);
  await once(s.session, 'stateChange', (e: { to: string }) => e.to === 'Active');
  t.equal(s.session.nextRetryDelayMs, 4000);
  t.ok(seen.filter((x) => x === 'Connect').length >= 2, 'dialled again');
  t.ok(port > 0);
});

t.test('passive session through BgpListener; unknown peers are refused', T, async (t) => {
  const addrs = testAddresses();
  const listener = new BgpListener({ address: addrs.ours, port: 0 });
  await listener.listen();
  const clock = new FakeClock();
  const session = new Session({
    name: 'passive', localAs: 65001, peerAs: 65002, bgpIdentifier: '10.0.0.1', remoteAddress: addrs.peer,
    holdTimeSec: 90, connectRetryTimeSec: 30, passive: true, families: ['ipv4-unicast'], clock,
  });
  listener.register(addrs.peer, session);
  t.teardown(async () => {
    await session.stop();
    await listener.close();
  });
  session.start();
  t.equal(session.state, 'Active');
  const stranger = await RawPeerConnect(addrs.ours, listener.boundPort ?? 0, addrs.peer2);
  await stranger.waitClosed();
  t.equal(listener.rejected, 1, 'unknown address refused');
  const conn = await RawPeerConnect(addrs.ours, listener.boundPort ?? 0, addrs.peer);
  await conn.next(1);
  conn.send(peerOpen());
  await conn.next(4);
  conn.send(keepalive());
  await once(session, 'stateChange', (e: { to: string }) => e.to === 'Established');
  t.equal(session.state, 'Established');
});

async function RawPeerConnect(host: string, port: number, local: string): Promise<RawConn> {
  return RawPeer.connect(host, port, local);
}

t.test('RFC 4271 6.8 collision: higher peer BGP Identifier keeps the peer-initiated connection', T, async (t) => {
  const s = await setup(t);
  const listener = new BgpListener({ address: s.addrs.ours, port: 0 });
  await listener.listen();
  listener.register(s.addrs.peer, s.session);
  t.teardown(() => listener.close());
  s.session.start();
  const outgoing = await s.peer.accept();
  await outgoing.next(1); // we are in OpenSent on our connection
  const incoming = await RawPeer.connect(s.addrs.ours, listener.boundPort ?? 0, s.addrs.peer);
  await incoming.next(1); // we answer the candidate with our OPEN
  incoming.send(peerOpen({ id: '10.0.0.9' })); // 10.0.0.9 > 10.0.0.1: keep the peer's connection
  const cease = await outgoing.next(3);
  t.equal(cease.body.toString('hex'), '0607', 'Cease 7 on our connection');
  await incoming.next(4);
  incoming.send(keepalive());
  await once(s.session, 'stateChange', (e: { to: string }) => e.to === 'Established');
  t.equal(s.session.state, 'Established');
});

t.test('RFC 4271 6.8 collision: lower peer BGP Identifier keeps our connection', T, async (t) => {
  const s = await setup(t, { bgpIdentifier: '10.0.0.200' });
  const listener = new BgpListener({ address: s.addrs.ours, port: 0 });
  await listener.listen();
  listener.register(s.addrs.peer, s.session);
  t.teardown(() => listener.close());
  s.session.start();
  const outgoing = await s.peer.accept();
  await outgoing.next(1);
  const incoming = await RawPeer.connect(s.addrs.ours, listener.boundPort ?? 0, s.addrs.peer);
  await incoming.next(1);
  incoming.send(peerOpen({ id: '10.0.0.2' }));
  const cease = await incoming.next(3);
  t.equal(cease.body.toString('hex'), '0607', 'Cease 7 on the peer-initiated connection');
  outgoing.send(peerOpen({ id: '10.0.0.2' }));
  await outgoing.next(4);
  outgoing.send(keepalive());
  await once(s.session, 'stateChange', (e: { to: string }) => e.to === 'Established');
  t.equal(s.session.state, 'Established');
});

t.test('constructor rejects hold time 1 and 2', async (t) => {
  const base = { name: 'x', localAs: 1, peerAs: 2, bgpIdentifier: '1.1.1.1', remoteAddress: '127.0.0.1', connectRetryTimeSec: 1, passive: true, families: [] };
  t.throws(() => new Session({ ...base, holdTimeSec: 2 }), RangeError);
  t.throws(() => new Session({ ...base, holdTimeSec: 1 }), RangeError);
  t.doesNotThrow(() => new Session({ ...base, holdTimeSec: 0 }));
});

t.test('RFC 4271 6.8 collision in OpenConfirm: decided when the OPEN arrives on the new connection, not at connect', T, async (t) => {
  const s = await setup(t); // our id 10.0.0.1 < peer 10.0.0.2: the peer's connection wins
  const listener = new BgpListener({ address: s.addrs.ours, port: 0 });
  await listener.listen();
  listener.register(s.addrs.peer, s.session);
  t.teardown(() => listener.close());
  s.session.start();
  const outgoing = await s.peer.accept();
  await outgoing.next(1);
  outgoing.send(peerOpen());
  await outgoing.next(4);
  t.equal(s.session.state, 'OpenConfirm');
  const incoming = await RawPeer.connect(s.addrs.ours, listener.boundPort ?? 0, s.addrs.peer);
  await incoming.next(1);
  t.equal(s.session.state, 'OpenConfirm', 'a bare connect decides nothing');
  t.equal(outgoing.received.filter((m) => m.type === 3).length, 0, 'no NOTIFICATION on our connection yet');
  incoming.send(peerOpen());
  t.equal((await outgoing.next(3)).body.toString('hex'), '0607', 'Cease 7 on our connection');
  t.ok(s.reasons.some((r) => r.kind === 'collision'), 'moved to the peer-initiated connection, reason collision');
  await incoming.next(4);
  incoming.send(keepalive());
  await once(s.session, 'stateChange', (e: { to: string }) => e.to === 'Established');
});

t.test('incoming connection while Established: refused with Cease 7; with graceful restart it replaces the old one', T, async (t) => {
  const s = await setup(t);
  const listener = new BgpListener({ address: s.addrs.ours, port: 0 });
  await listener.listen();
  listener.register(s.addrs.peer, s.session);
  t.teardown(() => listener.close());
  const gr = capability(64, u16(0x8078), u16(1), u8(1), u8(0x80));
  const { conn } = await establish(s, peerOpen({ extra: [gr] }));
  t.ok(s.session.negotiated?.gracefulRestart, 'peer sent GR');
  const down = once<StateReason>(s.session, 'down');
  const second = await RawPeer.connect(s.addrs.ours, listener.boundPort ?? 0, s.addrs.peer);
  await second.next(1);
  t.equal(s.session.state, 'Established', 'still up until the new connection brings an OPEN');
  second.send(peerOpen());
  t.equal((await down).kind, 'transportError');
  await conn.waitClosed();
  await second.next(4);
  second.send(keepalive());
  await once(s.session, 'stateChange', (e: { to: string }) => e.to === 'Established');
  t.equal(s.session.negotiated?.gracefulRestart, undefined, 'new session without GR');
  const third = await RawPeer.connect(s.addrs.ours, listener.boundPort ?? 0, s.addrs.peer);
  t.equal((await third.next(3)).body.toString('hex'), '0607', 'without GR the new connection gets Cease 7');
  await third.waitClosed();
  t.equal(s.session.state, 'Established', 'existing session kept');
});

t.test('stop() leaves no timer behind', T, async (t) => {
  const s = await setup(t, { holdTimeSec: 30 });
  await establish(s);
  t.ok(s.clock.pending > 0, 'timers run while Established');
  await s.session.stop();
  t.equal(s.clock.pending, 0, 'no pending timers after stop');
  t.equal(s.session.state, 'Idle');
});

t.test('a peer that closes during OpenSent: reconnect with backoff, counter incremented', T, async (t) => {
  const s = await setup(t);
  s.session.start();
  const c1 = await s.peer.accept();
  await c1.next(1);
  c1.destroy();
  await once(s.session, 'stateChange', (e: { to: string }) => e.to === 'Active');
  t.equal(s.session.lastReason?.kind, 'connectionClosed');
  t.equal(s.session.connectRetryCounter, 1);
  s.clock.advance(1000);
  const c2 = await s.peer.accept();
  t.equal((await c2.next(1)).type, 1);
});

async function until(cond: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

t.test('received KEEPALIVEs restart the hold timer; silence then expires it', T, async (t) => {
  const s = await setup(t, { holdTimeSec: 9 });
  const { conn } = await establish(s);
  for (let i = 0; i < 3; i++) {
    s.clock.advance(6000);
    const before = s.session.stats.messagesReceived.KEEPALIVE ?? 0;
    conn.send(keepalive());
    await until(() => (s.session.stats.messagesReceived.KEEPALIVE ?? 0) > before, 'KEEPALIVE processed');
  }
  s.clock.advance(6000);
  t.equal(s.session.state, 'Established', '18 s + 6 s with KEEPALIVEs every 6 s: still up (hold 9 s)');
  s.clock.advance(3000);
  t.equal(s.session.state, 'Idle', '9 s after the last KEEPALIVE: expired');
  t.same(s.session.lastReason, { kind: 'holdTimerExpired' });
});

t.test('OpenConfirm uses the negotiated hold time, not the 4-minute OpenSent timer', T, async (t) => {
  const s = await setup(t);
  s.session.start();
  const conn = await s.peer.accept();
  await conn.next(1);
  conn.send(peerOpen({ holdTime: 3 }));
  await conn.next(4);
  t.equal(s.session.state, 'OpenConfirm');
  s.clock.advance(2999);
  t.equal(s.session.state, 'OpenConfirm');
  s.clock.advance(1);
  t.equal(s.session.state, 'Idle');
  t.equal((await conn.next(3)).body.toString('hex'), '0400');
});

t.test('RFC 4271 8.2.2 OpenSent: no OPEN within 4 minutes -> 4/0', T, async (t) => {
  const s = await setup(t);
  s.session.start();
  const conn = await s.peer.accept();
  await conn.next(1);
  s.clock.advance(239_999);
  t.equal(s.session.state, 'OpenSent');
  s.clock.advance(1);
  t.equal((await conn.next(3)).body.toString('hex'), '0400');
});

t.test('RFC 6608: OPEN in Established -> 5/3 with type 1', T, async (t) => {
  const s = await setup(t);
  const { conn } = await establish(s);
  conn.send(peerOpen());
  t.equal((await conn.next(3)).body.toString('hex'), '050301');
});

t.test('graceful restart peer: a new connection that closes without an OPEN leaves the session up', T, async (t) => {
  const s = await setup(t);
  const listener = new BgpListener({ address: s.addrs.ours, port: 0 });
  await listener.listen();
  listener.register(s.addrs.peer, s.session);
  t.teardown(() => listener.close());
  const gr = capability(64, u16(0x0078), u16(1), u8(1), u8(0x80));
  const { conn } = await establish(s, peerOpen({ extra: [gr] }));
  const probe = await RawPeer.connect(s.addrs.ours, listener.boundPort ?? 0, s.addrs.peer);
  await probe.next(1);
  probe.destroy();
  await new Promise((r) => setTimeout(r, 50));
  t.equal(s.session.state, 'Established');
  conn.send(keepalive());
  const before = s.session.stats.messagesReceived.KEEPALIVE ?? 0;
  await until(() => (s.session.stats.messagesReceived.KEEPALIVE ?? 0) > before, 'KEEPALIVE on the old connection');
  t.equal(s.session.stats.flaps, 0);
});

// After an OPEN-time NOTIFICATION (a misconfigured peer AS, say) the session backs off but keeps retrying: the delay
// doubles per failure from the base (1 s) up to connectRetryTimeSec and stays there; it never jumps to the cap, so a
// router whose configuration is fixed is reached within one delay.
const openRejections = ['2/2 received in OpenSent', '2/2 sent in OpenSent', '2/2 received in OpenConfirm'] as const;
for (const how of openRejections) {
  t.test(`after an OPEN-time NOTIFICATION (${how}) the session backs off and keeps retrying`, T, async (t) => {
    const s = await setup(t, { connectRetryTimeSec: 120 });
    s.session.start();
    const at: number[] = [];
    for (let i = 0; i < 10; i++) {
      const conn = await s.peer.accept();
      at.push(s.clock.now());
      await conn.next(1);
      const idle = once(s.session, 'stateChange', (e: { to: string }) => e.to === 'Idle');
      if (how === '2/2 sent in OpenSent') {
        conn.send(peerOpen({ as: 65099 }));
      } else {
        if (how === '2/2 received in OpenConfirm') {
          conn.send(peerOpen());
          await conn.next(4);
        }
        conn.send(notification(2, 2, u16(65001)));
      }
      await idle;
      t.equal(s.session.lastReason?.kind, how.includes('sent') ? 'notificationSent' : 'notificationReceived');
      const due = s.clock.nextDueInMs();
      if (due === undefined) throw new Error(`no retry scheduled after attempt ${i + 1}`);
      s.clock.advance(due);
    }
    const gaps = at.slice(1).map((x, i) => x - (at[i] as number));
    t.same(gaps, [1000, 2000, 4000, 8000, 16000, 32000, 64000, 120_000, 120_000], 'doubling from 1 s to the 120 s cap, then every 120 s');
    t.ok(at.filter((x) => x - (at[0] as number) <= 70_000).length >= 5, 'several attempts in the first 70 s');
  });
}
