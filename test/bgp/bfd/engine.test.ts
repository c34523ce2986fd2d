// BfdEngine over real loopback UDP (RFC 5881 single-hop, RFC 5883 multihop): two engines come Up, demultiplexing by
// Your Discriminator and by source for the first packets (RFC 5880 §6.3, §6.8.6), the kernel's TTL check, AdminDown,
// removal, timer changes, and a socket that cannot be bound.
import t from 'tap';
import { createSocket } from 'node:dgram';
import { realClock } from '../../../bgp/clock.ts';
import { BfdEngine } from '../../../bgp/bfd/engine.ts';
import type { BfdChange, BfdPeerConfig, BfdSessionInfo } from '../../../bgp/bfd/engine.ts';
import { encodeControlPacket } from '../../../bgp/bfd/packet.ts';
import { udpTransport } from '../../../bgp/bfd/udp.ts';

let counter = 0;
function addresses(): { a: string; b: string; c: string } {
  const n = (process.pid * 13 + counter++) % 60000;
  const p = `127.${100 + ((n >> 8) % 150)}.${n & 0xff}`;
  return { a: `${p}.1`, b: `${p}.2`, c: `${p}.3` };
}

function engine() {
  const updates: { id: string; change: BfdChange; info: BfdSessionInfo }[] = [];
  const errors: string[] = [];
  const e = new BfdEngine({ clock: realClock, transport: udpTransport, onUpdate: (id, change, info) => updates.push({ id, change, info }), onError: (_id, m) => errors.push(m) });
  return { e, updates, errors };
}

async function waitFor<T>(f: () => T | undefined | false, what: string, ms = 8000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = f();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const fast = (remoteAddress: string, localAddress: string, extra: Partial<BfdPeerConfig> = {}): BfdPeerConfig => ({
  remoteAddress,
  localAddress,
  multihop: false,
  transmitIntervalMs: 50,
  receiveIntervalMs: 50,
  detectMultiplier: 3,
  passive: false,
  ...extra,
});

/** Two engines on loopback with one session each way (`extra` for both), both Up. Closed at teardown. */
async function upPair(t: { teardown(fn: () => unknown): void }, extra: Partial<BfdPeerConfig> = {}, extraB: Partial<BfdPeerConfig> = extra) {
  const ip = addresses();
  const A = engine();
  const B = engine();
  t.teardown(async () => {
    await A.e.close();
    await B.e.close();
  });
  await A.e.add('b', fast(ip.b, ip.a, extra));
  await B.e.add('a', fast(ip.a, ip.b, extraB));
  await waitFor(() => A.e.info('b')?.state === 'Up' && B.e.info('a')?.state === 'Up', 'both Up');
  return { ip, A, B };
}

/** Sends one raw datagram with the given TTL to addr:port. */
async function rawSend(from: string, to: string, port: number, packet: Buffer, ttl = 255): Promise<void> {
  const s = createSocket('udp4');
  await new Promise<void>((r) => s.bind(0, from, () => r()));
  s.setTTL(ttl);
  await new Promise<void>((r) => s.send(packet, port, to, () => r()));
  s.close();
}

t.test('single-hop: Up within a moment, TTL checked by the kernel, 50 ms negotiated', async (t) => {
  const ip = addresses();
  const A = engine();
  const B = engine();
  t.teardown(async () => {
    await A.e.close();
    await B.e.close();
  });
  await A.e.add('b', fast(ip.b, ip.a));
  await B.e.add('a', fast(ip.a, ip.b, { passive: true }));
  await waitFor(() => A.e.info('b')?.state === 'Up' && B.e.info('a')?.state === 'Up', 'both Up');
  await waitFor(() => !A.e.info('b')?.pollActive && !B.e.info('a')?.pollActive, 'polls done');
  const info = A.e.info('b');
  t.equal(info?.ttlCheck, 'kernel', 'single-hop: TTL 255 required, enforced by the kernel');
  t.equal(info?.transmitIntervalMs, 50);
  t.equal(info?.detectionTimeMs, 150);
  t.ok((info?.sourcePort ?? 0) >= 49152, `source port ${info?.sourcePort}`);
  t.same(A.errors, []);
  const states = A.updates.filter((u) => u.change.kind === 'state').map((u) => u.change.kind === 'state' && `${u.change.from}>${u.change.to}`);
  t.same(states, ['Down>Up'], 'A (active) saw the passive B in Init and went straight Up');
  t.same(B.updates.filter((u) => u.change.kind === 'state').map((u) => u.change.kind === 'state' && u.change.to), ['Init', 'Up'], 'B: Init, then Up');

  // A forged "Down" for A's discriminator, from the right source but with TTL 254: the kernel drops it.
  const forged = encodeControlPacket({ diag: 0, state: 'Down', poll: false, final: false, controlPlaneIndependent: false, demand: false, detectMult: 3, myDiscriminator: info?.remoteDiscriminator ?? 1, yourDiscriminator: info?.localDiscriminator ?? 1, desiredMinTxIntervalUs: 1_000_000, requiredMinRxIntervalUs: 50_000, requiredMinEchoRxIntervalUs: 0 });
  await rawSend(ip.b, ip.a, 3784, forged, 254);
  await new Promise((r) => setTimeout(r, 200));
  t.equal(A.e.info('b')?.state, 'Up', 'a TTL-254 Down packet never reached the session');
  // The same from another source with TTL 255 reaches the engine and is discarded by the demultiplexer.
  await rawSend(ip.c, ip.a, 3784, forged, 255);
  await waitFor(() => A.e.discards.wrongSource, 'wrong source counted');
  t.equal(A.e.info('b')?.state, 'Up', 'a packet for our discriminator from another address is discarded');
  await rawSend(ip.b, ip.a, 3784, encodeControlPacket({ ...decodedFields(forged), yourDiscriminator: 12345 }), 255);
  await waitFor(() => A.e.discards.noSession, 'unknown discriminator counted');
  await rawSend(ip.b, ip.a, 3784, Buffer.from('00', 'hex'), 255);
  await waitFor(() => A.e.discards.short, 'malformed counted');
  t.equal(A.e.info('b')?.state, 'Up');
});

function decodedFields(buf: Buffer) {
  return {
    diag: 0, state: 'Down' as const, poll: false, final: false, controlPlaneIndependent: false, demand: false, detectMult: 3,
    myDiscriminator: buf.readUInt32BE(4), yourDiscriminator: buf.readUInt32BE(8), desiredMinTxIntervalUs: 1_000_000, requiredMinRxIntervalUs: 50_000, requiredMinEchoRxIntervalUs: 0,
  };
}

t.test('AdminDown: the peer goes Down with Diag 3 (remote AdminDown) and adminDown() resolves on its Final', async (t) => {
  const { A, B } = await upPair(t);
  const t0 = Date.now();
  await A.e.adminDown();
  t.ok(Date.now() - t0 < 900, `resolved on the Final, not the timeout (${Date.now() - t0} ms)`);
  t.equal(A.e.info('b')?.state, 'AdminDown');
  t.notOk(A.e.info('b')?.pollActive);
  await waitFor(() => B.e.info('a')?.state === 'Down', 'B Down');
  const down = B.updates.find((u) => u.change.kind === 'state' && u.change.to === 'Down');
  t.ok(down && down.change.kind === 'state' && down.change.remoteState === 'AdminDown' && down.change.diag === 3, 'B: Neighbor Signaled Session Down, remote AdminDown');
  A.e.adminUp();
  await waitFor(() => A.e.info('b')?.state === 'Up' && B.e.info('a')?.state === 'Up', 'both Up again');
  // removal sends AdminDown: B goes Down the same way, not by a Detection Time
  await A.e.remove('b');
  t.equal(A.e.info('b'), undefined);
  await waitFor(() => B.e.info('a')?.state === 'Down', 'B Down after removal');
  t.equal(B.e.info('a')?.remoteState, 'AdminDown');
  t.equal(B.e.info('a')?.localDiag, 3);
});

t.test('a silent peer: Down after the Detection Time with Diag 1', async (t) => {
  const { A, B } = await upPair(t);
  await B.e.close(); // no AdminDown: like a dead node
  await waitFor(() => A.e.info('b')?.state === 'Down', 'A Down', 3000);
  t.equal(A.e.info('b')?.localDiag, 1, 'Control Detection Time Expired');
  t.equal(A.e.info('b')?.remoteDiscriminator, 0);
});

t.test('timer change while Up: a Poll Sequence, then the new interval', async (t) => {
  const { ip, A, B } = await upPair(t);
  await waitFor(() => !A.e.info('b')?.pollActive, 'poll done');
  await A.e.update('b', fast(ip.b, ip.a, { transmitIntervalMs: 120, receiveIntervalMs: 80, detectMultiplier: 4 }));
  await waitFor(() => A.e.info('b')?.transmitIntervalMs === 120 && !A.e.info('b')?.pollActive, 'new interval');
  await waitFor(() => B.e.info('a')?.detectionTimeMs === 480, "B's Detection Time: 4 × 120");
  t.equal(B.e.info('a')?.transmitIntervalMs, 80, "B: max(50, A's RequiredMinRx 80)");
  t.equal(A.e.info('b')?.state, 'Up');
  t.equal(B.e.info('a')?.state, 'Up', 'no flap through the change');
});

t.test('multihop with a minimum TTL, and one session per peer address and hop mode', async (t) => {
  const { ip, A, B } = await upPair(t, { multihop: true, minimumTtl: 250 }, { multihop: true });
  t.equal(A.e.info('b')?.ttlCheck, 'kernel');
  t.equal(B.e.info('a')?.ttlCheck, 'none', 'multihop without minimumTtl checks nothing');
  await t.rejects(A.e.add('again', fast(ip.b, ip.a, { multihop: true })), /already runs multihop/);
  await t.rejects(A.e.add('b', fast(ip.c, ip.a)), /already exists/);
  await t.rejects(A.e.add('bad', fast(ip.c, ip.a, { detectMultiplier: 0 })), /detectMultiplier/);
});

t.test('a local address not on this host: the error is in the status, no exception, retried', async (t) => {
  const A = engine();
  t.teardown(() => A.e.close());
  await A.e.add('x', fast('192.0.2.2', '192.0.2.1'));
  const info = A.e.info('x');
  t.match(info?.error, /cannot open BFD sockets for 192\.0\.2\.2: .*EADDRNOTAVAIL|errno 99/);
  t.equal(info?.state, 'Down');
  t.ok(A.errors.length === 1, 'reported once');
});
