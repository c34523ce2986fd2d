// BfdSession (RFC 5880 §6.5, §6.8.1–§6.8.7, §6.8.16): two sessions wired back to back on a FakeClock.
import t from 'tap';
import { FakeClock } from '../../../bgp/clock.ts';
import { decodeControlPacket } from '../../../bgp/bfd/packet.ts';
import type { BfdState, ControlPacket } from '../../../bgp/bfd/packet.ts';
import { BfdSession } from '../../../bgp/bfd/session.ts';
import type { BfdSessionChange, BfdSessionParameters } from '../../../bgp/bfd/session.ts';

interface Sent {
  at: number;
  from: 'a' | 'b';
  p: ControlPacket;
}

/** Two sessions joined by a 1 ms link each way that can be cut per direction. */
function pair(pa: Partial<BfdSessionParameters> = {}, pb: Partial<BfdSessionParameters> = {}, random: () => number = Math.random) {
  const clock = new FakeClock(1_000_000);
  const log: Sent[] = [];
  const changes: { a: BfdSessionChange[]; b: BfdSessionChange[] } = { a: [], b: [] };
  const cut = { ab: false, ba: false };
  const sessions: { a?: BfdSession; b?: BfdSession } = {};
  const make = (name: 'a' | 'b', discr: number, p: Partial<BfdSessionParameters>): BfdSession =>
    new BfdSession({
      localDiscriminator: discr,
      desiredMinTxUs: 300_000,
      requiredMinRxUs: 300_000,
      detectMult: 3,
      passive: false,
      ...p,
      clock,
      random,
      send: (buf) => {
        const r = decodeControlPacket(buf);
        if (!r.ok) throw new Error(`session sent an invalid packet: ${r.message}`);
        log.push({ at: clock.now(), from: name, p: r.packet });
        const blocked = name === 'a' ? cut.ab : cut.ba;
        if (blocked) return;
        clock.setTimer(() => (name === 'a' ? sessions.b : sessions.a)?.receive(r.packet), 1);
      },
      onChange: (c) => changes[name].push(c),
    });
  sessions.a = make('a', 0xa, pa);
  sessions.b = make('b', 0xb, pb);
  return { clock, log, changes, cut, a: sessions.a, b: sessions.b };
}

function states(c: BfdSessionChange[]): string[] {
  return c.flatMap((x) => (x.kind === 'state' ? [`${x.from}>${x.to}`] : []));
}

/** Gaps between consecutive periodic (non-Final) packets of one side, in ms, within [from, to). */
function gaps(log: Sent[], side: 'a' | 'b', from: number, to: number): number[] {
  const times = log.filter((s) => s.from === side && !s.p.final && s.at >= from && s.at < to).map((s) => s.at);
  return times.slice(1).map((x, i) => x - (times[i] ?? 0));
}

t.test('three-way handshake to Up, then the Poll Sequence to the configured intervals', async (t) => {
  const { clock, log, changes, a, b } = pair();
  a.start();
  b.start();
  clock.advance(50);
  t.equal(a.sessionState, 'Up');
  t.equal(b.sessionState, 'Up');
  t.same(states(changes.a), ['Down>Init', 'Init>Up'], 'both started Down: each saw Down, then Init');
  t.same(states(changes.b), ['Down>Init', 'Init>Up']);
  const first = log[0]?.p;
  t.equal(first?.state, 'Down');
  t.equal(first?.yourDiscriminator, 0, 'first packet: Your Discriminator 0');
  t.equal(first?.desiredMinTxIntervalUs, 1_000_000, 'slow start: DesiredMinTx 1 s while not Up (§6.8.3)');
  const upPackets = log.filter((s) => s.p.state === 'Up');
  t.ok(upPackets.some((s) => s.p.poll && s.p.desiredMinTxIntervalUs === 300_000), 'on Up, a Poll announces 300 ms');
  t.ok(log.some((s) => s.p.final && !s.p.poll), 'the Poll is answered with Final (P clear)');
  clock.advance(100);
  t.notOk(a.status().pollActive, 'poll finished');
  t.notOk(b.status().pollActive);
  const s = a.status();
  t.equal(s.transmitIntervalMs, 300);
  t.equal(s.detectionTimeMs, 900, '3 × max(300, 300)');
  t.equal(s.remoteDiscriminator, 0xb);
  t.equal(s.localDiag, 0);
  const start = clock.now();
  clock.advance(30_000);
  const g = gaps(log, 'a', start, clock.now());
  t.ok(g.length > 90, `${g.length} periodic packets in 30 s`);
  t.ok(Math.min(...g) >= 225 && Math.max(...g) <= 300, `gaps within 75–100 % of 300 ms: ${Math.min(...g)}..${Math.max(...g)}`);
  t.ok(Math.max(...g) - Math.min(...g) > 40, 'and actually jittered');
  t.equal(a.sessionState, 'Up');
  t.equal(b.sessionState, 'Up');
});

t.test('packets every ≥ 750 ms (75 % of 1 s) before Up', async (t) => {
  const { clock, log, a } = pair();
  a.start(); // b never starts: a stays Down
  clock.advance(20_000);
  const g = gaps(log, 'a', 0, Infinity);
  t.ok(g.length >= 19, `${g.length} gaps`);
  t.ok(Math.min(...g) >= 750 && Math.max(...g) <= 1000, `slow gaps ${Math.min(...g)}..${Math.max(...g)}`);
  t.equal(a.sessionState, 'Down');
  t.equal(a.status().detectionTimeMs, 0, 'no Detection Time while Down');
});

t.test('Detect Mult 1 jitters to 75–90 % (§6.8.7)', async (t) => {
  const { clock, log, a, b } = pair({ detectMult: 1, desiredMinTxUs: 100_000, requiredMinRxUs: 100_000 }, { desiredMinTxUs: 100_000, requiredMinRxUs: 100_000 });
  a.start();
  b.start();
  clock.advance(1000);
  const start = clock.now();
  clock.advance(20_000);
  const g = gaps(log, 'a', start, clock.now());
  t.ok(Math.min(...g) >= 75 && Math.max(...g) <= 90, `gaps ${Math.min(...g)}..${Math.max(...g)}`);
  t.equal(b.status().detectionTimeMs, 100, "b's Detection Time uses a's Detect Mult 1");
});

t.test('the slower side sets the pace: TX = max(DesiredMinTx, RemoteMinRx)', async (t) => {
  const { clock, a, b } = pair({ desiredMinTxUs: 50_000, requiredMinRxUs: 50_000 }, { desiredMinTxUs: 200_000, requiredMinRxUs: 400_000, detectMult: 5 });
  a.start();
  b.start();
  clock.advance(2000);
  t.equal(a.status().transmitIntervalMs, 400, "a sends no faster than b's RequiredMinRx");
  t.equal(b.status().transmitIntervalMs, 200, "b's own DesiredMinTx is slower than a's RequiredMinRx");
  t.equal(a.status().detectionTimeMs, 5 * 200, "a: b's Detect Mult × max(50, b's DesiredMinTx 200)");
  t.equal(b.status().detectionTimeMs, 3 * 400, "b: a's Detect Mult × max(400, 50)");
});

t.test('silence for a Detection Time: Down with Diag 1, the remote hears it and goes Down with Diag 3', async (t) => {
  const { clock, log, changes, cut, a, b } = pair();
  a.start();
  b.start();
  clock.advance(2000);
  t.equal(a.sessionState, 'Up');
  cut.ba = true; // b's packets no longer reach a
  const at = clock.now();
  clock.advance(2000);
  const down = changes.a.find((c) => c.kind === 'state' && c.to === 'Down');
  t.ok(down && down.kind === 'state' && down.diag === 1, 'a: Down, Control Detection Time Expired');
  const aDown = log.find((s) => s.from === 'a' && s.at > at && s.p.state === 'Down');
  t.ok(aDown, 'a sent Down');
  t.ok(aDown !== undefined && aDown.at - at <= 900 && aDown.at - at > 600, `detected after ${aDown && aDown.at - at} ms (≤ 900)`);
  t.equal(aDown?.p.diag, 1);
  t.equal(aDown?.p.yourDiscriminator, 0, 'bfd.RemoteDiscr reset after a Detection Time without packets (§6.8.1)');
  t.equal(b.status().localDiag, 3, 'b: Neighbor Signaled Session Down');
  t.notOk(a.status().pollActive, 'no poll left waiting on a dead remote');
  cut.ba = false;
  clock.advance(5000);
  t.equal(a.sessionState, 'Up', 'back Up once packets flow again');
  t.equal(b.sessionState, 'Up');
});

t.test('Poll Sequence on a timer change while Up (§6.5, §6.8.3)', async (t) => {
  const { clock, log, cut, a, b } = pair();
  a.start();
  b.start();
  clock.advance(3000);
  cut.ba = true; // hold the Final back so we can watch the poll in progress
  const at = clock.now();
  a.setParameters({ desiredMinTxUs: 600_000, requiredMinRxUs: 100_000, detectMult: 3, passive: false });
  const pollPacket = log.find((s) => s.from === 'a' && s.at >= at);
  t.ok(pollPacket?.p.poll, 'a sends a Poll at once');
  t.equal(pollPacket?.p.desiredMinTxIntervalUs, 600_000, 'carrying the new values');
  t.equal(pollPacket?.p.requiredMinRxIntervalUs, 100_000);
  t.equal(a.status().transmitIntervalMs, 300, 'an increased DesiredMinTx does not slow us before the Final');
  t.equal(a.status().detectionTimeMs, 900, 'a reduced RequiredMinRx does not shorten our Detection Time before the Final');
  clock.advance(2000);
  t.equal(a.sessionState, 'Down', 'a times out on b meanwhile');
  const untilDown = log.filter((s) => s.from === 'a' && s.at > at && s.p.state === 'Up');
  t.ok(untilDown.length > 1 && untilDown.every((s) => s.p.poll), 'every packet carries P until then');
  const downAt = log.find((s) => s.from === 'a' && s.at > at && s.p.state === 'Down')?.at ?? Infinity;
  const g = gaps(log, 'a', at, downAt);
  t.ok(g.length >= 2 && Math.max(...g) <= 300, `still at ≤ 300 ms while polling, until Down (${g.length} gaps, max ${Math.max(...g)})`);
  t.notOk(a.status().pollActive, 'the poll is dropped on the way Down');
  cut.ba = false;
  clock.advance(5000);
  t.equal(a.sessionState, 'Up');
  clock.advance(2000);
  t.notOk(a.status().pollActive);
  t.equal(a.status().transmitIntervalMs, 600, 'the new DesiredMinTx applies after the Final');
  t.equal(b.status().transmitIntervalMs, 300, "b: max(300, a's RequiredMinRx 100)");
  t.equal(a.status().detectionTimeMs, 900, "a: 3 × max(100, b's 300)");
  t.equal(b.status().detectionTimeMs, 1800, "b: 3 × a's 600");
});

t.test('a poll answered while Up switches rates only after the Final', async (t) => {
  const { clock, log, a, b } = pair();
  a.start();
  b.start();
  clock.advance(3000);
  const at = clock.now();
  a.setParameters({ desiredMinTxUs: 1_000_000, requiredMinRxUs: 300_000, detectMult: 3, passive: false });
  clock.advance(5);
  const fin = log.find((s) => s.from === 'b' && s.at >= at && s.p.final);
  t.ok(fin, 'b answered at once');
  t.notOk(a.status().pollActive);
  t.equal(a.status().transmitIntervalMs, 1000);
  t.equal(b.status().detectionTimeMs, 3000, "b's Detection Time follows a's new DesiredMinTx");
  clock.advance(10_000);
  t.equal(a.sessionState, 'Up');
  t.equal(b.sessionState, 'Up');
  t.ok(a.status().packetsReceived > 0 && b.status().packetsSent > 0);
});

t.test('AdminDown (§6.8.16): the remote goes Down with Diag 3; rates hold until it confirmed', async (t) => {
  const { clock, log, changes, a, b } = pair();
  a.start();
  b.start();
  clock.advance(3000);
  const at = clock.now();
  a.adminDown();
  const first = log.find((s) => s.from === 'a' && s.at >= at);
  t.equal(first?.p.state, 'AdminDown', 'AdminDown sent at once');
  t.equal(first?.p.diag, 7, 'Diag 7 Administratively Down');
  t.ok(first?.p.poll, 'with a Poll for the 1 s DesiredMinTx');
  t.equal(a.status().transmitIntervalMs, 300, 'still at the negotiated rate until the Final');
  clock.advance(5);
  t.equal(b.sessionState, 'Down');
  const bDown = changes.b.find((c) => c.kind === 'state' && c.to === 'Down');
  t.ok(bDown && bDown.kind === 'state' && bDown.remoteState === 'AdminDown' && bDown.diag === 3, 'b: Down, neighbor signaled, remote state AdminDown');
  t.notOk(a.status().pollActive, "b's Final ended the poll");
  t.equal(a.status().transmitIntervalMs, 1000, 'then the slow rate');
  clock.advance(10_000);
  t.equal(a.sessionState, 'AdminDown', 'stays AdminDown whatever b sends');
  t.equal(b.sessionState, 'Down', 'b stays Down');
  t.ok(log.filter((s) => s.from === 'a' && s.at > at).every((s) => s.p.state === 'AdminDown'));
  a.adminUp();
  t.equal(a.sessionState, 'Down');
  clock.advance(5000);
  t.equal(a.sessionState, 'Up', 'AdminUp: the handshake runs again');
  t.equal(b.sessionState, 'Up');
  t.same(states(changes.a).slice(-3), ['Up>AdminDown', 'AdminDown>Down', states(changes.a).at(-1)]);
});

t.test('passive role: silent until the remote speaks (§6.8.7)', async (t) => {
  const { clock, log, a, b } = pair({}, { passive: true });
  b.start();
  clock.advance(10_000);
  t.equal(log.length, 0, 'a passive session with no remote sends nothing');
  a.start();
  clock.advance(3000);
  t.equal(a.sessionState, 'Up');
  t.equal(b.sessionState, 'Up');
  t.ok(log.some((s) => s.from === 'b'), 'b answers once it knows a');
});

t.test('RemoteMinRx 0: no periodic packets toward that remote (§6.8.7)', async (t) => {
  const { clock, log, a, b } = pair({}, { requiredMinRxUs: 0 });
  a.start();
  b.start();
  clock.advance(5000);
  const late = log.filter((s) => s.from === 'a' && s.at > 2000 + 1_000_000 && !s.p.final);
  t.equal(late.length, 0, 'a stops periodic transmission once it learns RequiredMinRx 0');
  t.equal(a.status().transmitIntervalMs, 0);
});

t.test('bad parameters are refused with the field named', async (t) => {
  const clock = new FakeClock();
  const base = { localDiscriminator: 1, desiredMinTxUs: 300_000, requiredMinRxUs: 300_000, detectMult: 3, passive: false, clock, send: () => undefined };
  t.throws(() => new BfdSession({ ...base, detectMult: 0 }), /detect multiplier/);
  t.throws(() => new BfdSession({ ...base, desiredMinTxUs: 0 }), /desired min TX/);
  t.throws(() => new BfdSession({ ...base, localDiscriminator: 0 }), /discriminator/);
  const s = new BfdSession(base);
  t.throws(() => s.setParameters({ desiredMinTxUs: 300_000, requiredMinRxUs: -5, detectMult: 3, passive: false }), /required min RX/);
  t.equal(s.status().requiredMinRxMs, 300, 'unchanged after a refused change');
});

t.test('a state change is reported after the packet carrying it went out', async (t) => {
  const order: string[] = [];
  const clock = new FakeClock();
  const s = new BfdSession({
    localDiscriminator: 7, desiredMinTxUs: 300_000, requiredMinRxUs: 300_000, detectMult: 3, passive: false, clock,
    send: (buf) => order.push(`send ${(decodeControlPacket(buf) as { ok: true; packet: ControlPacket }).packet.state}`),
    onChange: (c) => order.push(c.kind === 'state' ? `state ${c.to}` : 'timers'),
  });
  s.start();
  s.receive({ diag: 0, state: 'Down' as BfdState, poll: false, final: false, controlPlaneIndependent: false, demand: false, detectMult: 3, myDiscriminator: 9, yourDiscriminator: 0, desiredMinTxIntervalUs: 1_000_000, requiredMinRxIntervalUs: 300_000, requiredMinEchoRxIntervalUs: 0 });
  t.same(order.filter((x) => x !== 'timers'), ['send Down', 'send Init', 'state Init']);
  s.stop();
  clock.advance(10_000);
  t.equal(order.filter((x) => x.startsWith('send')).length, 2, 'nothing sent after stop()');
});
