// RFC 5880 §4.1 Control packet codec and the packet-level discard rules of §6.8.6.
import t from 'tap';
import { BFD_CONTROL_LENGTH, decodeControlPacket, describeDiag, encodeControlPacket } from '../../../bgp/bfd/packet.ts';
import type { ControlPacket } from '../../../bgp/bfd/packet.ts';

const base: ControlPacket = {
  diag: 0,
  state: 'Down',
  poll: false,
  final: false,
  controlPlaneIndependent: false,
  demand: false,
  detectMult: 3,
  myDiscriminator: 0x11223344,
  yourDiscriminator: 0,
  desiredMinTxIntervalUs: 1_000_000,
  requiredMinRxIntervalUs: 300_000,
  requiredMinEchoRxIntervalUs: 0,
};

function decoded(hex: string): ControlPacket {
  const r = decodeControlPacket(Buffer.from(hex, 'hex'));
  if (!r.ok) throw new Error(`expected a packet, got ${r.reason}: ${r.message}`);
  return r.packet;
}

t.test('a packet BIRD 2.0.12 sent (multihop, Down, captured on loopback)', async (t) => {
  const p = decoded('204005181356663600000000000f42400000271000000000');
  t.same(p, {
    diag: 0,
    state: 'Down',
    poll: false,
    final: false,
    controlPlaneIndependent: false,
    demand: false,
    detectMult: 5,
    myDiscriminator: 0x13566636,
    yourDiscriminator: 0,
    desiredMinTxIntervalUs: 1_000_000,
    requiredMinRxIntervalUs: 10_000,
    requiredMinEchoRxIntervalUs: 0,
  });
  t.equal(encodeControlPacket(p).toString('hex'), '204005181356663600000000000f42400000271000000000', 're-encodes byte for byte');
});

t.test('every field and flag round-trips, at its bit position', async (t) => {
  const p: ControlPacket = { ...base, diag: 7, state: 'Up', poll: true, controlPlaneIndependent: true, demand: true, yourDiscriminator: 0xfffffffe, detectMult: 255, requiredMinEchoRxIntervalUs: 50_000 };
  const buf = encodeControlPacket(p);
  t.equal(buf.length, BFD_CONTROL_LENGTH);
  t.equal(buf[0], (1 << 5) | 7, 'version 1, diag 7');
  t.equal(buf[1], (3 << 6) | 0x20 | 0x08 | 0x02, 'Up, P, C, D');
  t.equal(buf[3], 24, 'Length');
  t.same(decoded(buf.toString('hex')), p);
  const f = encodeControlPacket({ ...base, state: 'Init', final: true, yourDiscriminator: 9 });
  t.equal(f[1], (2 << 6) | 0x10, 'Init, F');
  t.equal(decoded(encodeControlPacket({ ...base, state: 'AdminDown' }).toString('hex')).state, 'AdminDown');
});

t.test('octets past Length are ignored (RFC 5880 §6.8.6 only bounds Length by the payload)', async (t) => {
  const buf = Buffer.concat([encodeControlPacket(base), Buffer.from('deadbeef', 'hex')]);
  t.same(decoded(buf.toString('hex')), base);
});

t.test('§6.8.6 discard rules, each with its reason', async (t) => {
  const good = encodeControlPacket({ ...base, state: 'Up', yourDiscriminator: 5 });
  const mutate = (f: (b: Buffer) => void, b: Buffer = good): Buffer => {
    const c = Buffer.from(b);
    f(c);
    return c;
  };
  const cases: [string, Buffer, string][] = [
    ['3 octets', good.subarray(0, 3), 'short'],
    ['version 0', mutate((b) => (b[0] = (0 << 5) | 0)), 'version'],
    ['version 2', mutate((b) => (b[0] = (2 << 5) | 0)), 'version'],
    ['Length 23', mutate((b) => (b[3] = 23)), 'length'],
    ['Length 25 with the A bit (needs 26)', mutate((b) => ((b[1] = (b[1] ?? 0) | 0x04), (b[3] = 25))), 'length'],
    ['Length 28 in a 24-octet payload', mutate((b) => (b[3] = 28)), 'length'],
    ['Detect Mult 0', mutate((b) => (b[2] = 0)), 'detectMult'],
    ['M bit', mutate((b) => (b[1] = (b[1] ?? 0) | 0x01)), 'multipoint'],
    ['My Discriminator 0', mutate((b) => b.writeUInt32BE(0, 4)), 'myDiscriminator'],
    ['Your Discriminator 0 with State Up', mutate((b) => b.writeUInt32BE(0, 8)), 'yourDiscriminator'],
    ['Your Discriminator 0 with State Init', mutate((b) => (b.writeUInt32BE(0, 8), (b[1] = 2 << 6))), 'yourDiscriminator'],
    ['A bit (authentication not supported)', Buffer.concat([mutate((b) => ((b[1] = (b[1] ?? 0) | 0x04), (b[3] = 33))), Buffer.from('0109016162636465666768', 'hex')]), 'authentication'],
  ];
  for (const [name, buf, reason] of cases) {
    const r = decodeControlPacket(buf);
    t.equal(r.ok ? 'accepted' : r.reason, reason, name);
    if (!r.ok) t.ok(r.message.length > 0, `${name}: message "${r.message}"`);
  }
  for (const state of ['Down', 'AdminDown'] as const) {
    t.ok(decodeControlPacket(encodeControlPacket({ ...base, state })).ok, `Your Discriminator 0 accepted with State ${state}`);
  }
});

t.test('the encoder refuses what the RFC forbids', async (t) => {
  t.throws(() => encodeControlPacket({ ...base, poll: true, final: true }), /both Poll and Final/);
  t.throws(() => encodeControlPacket({ ...base, detectMult: 0 }), /Detect Mult/);
  t.throws(() => encodeControlPacket({ ...base, detectMult: 256 }), /Detect Mult/);
  t.throws(() => encodeControlPacket({ ...base, myDiscriminator: 0 }), /My Discriminator/);
  t.throws(() => encodeControlPacket({ ...base, diag: 32 }), /Diag/);
  t.throws(() => encodeControlPacket({ ...base, desiredMinTxIntervalUs: 2 ** 32 }), /Desired Min TX/);
  t.throws(() => encodeControlPacket({ ...base, requiredMinRxIntervalUs: -1 }), /Required Min RX/);
});

t.test('diagnostic names (RFC 5880 §4.1)', async (t) => {
  t.equal(describeDiag(1), 'Control Detection Time Expired');
  t.equal(describeDiag(3), 'Neighbor Signaled Session Down');
  t.equal(describeDiag(7), 'Administratively Down');
  t.equal(describeDiag(20), 'Reserved (20)');
});

t.test('any 24..64 random octets decode or are discarded, never throw', async (t) => {
  let accepted = 0;
  for (let i = 0; i < 5000; i++) {
    const buf = Buffer.alloc(24 + (i % 40));
    for (let j = 0; j < buf.length; j++) buf[j] = Math.floor(Math.random() * 256);
    if (i % 2 === 0) {
      buf[0] = (1 << 5) | ((buf[0] ?? 0) & 0x1f);
      buf[3] = 24;
    }
    const r = decodeControlPacket(buf);
    if (r.ok) {
      accepted++;
      if (r.packet.poll && r.packet.final) continue; // accepted on receipt (§6.8.6 has no rule), never sent (§6.8.7)
      if (encodeControlPacket(r.packet).subarray(4).toString('hex') !== buf.subarray(4, 24).toString('hex')) t.fail(`packet ${buf.toString('hex')} did not re-encode its fields`);
    }
  }
  t.ok(accepted > 0, `some random packets were valid (${accepted})`);
});
