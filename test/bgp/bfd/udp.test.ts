// bgp/bfd/udp.ts on real loopback sockets: TTL 255 sent, the received-TTL filter enforced by the kernel (the
// datagram sent with TTL 254 never arrives), source ports in 49152–65535, the BPF program shape.
import t from 'tap';
import type { Test } from 'tap';
import { BFD_SOURCE_PORT_MAX, BFD_SOURCE_PORT_MIN, ttlFilterProgram, udpTransport } from '../../../bgp/bfd/udp.ts';
import type { UdpEndpoint } from '../../../bgp/bfd/udp.ts';

const linux = process.platform === 'linux';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function exchange(t: Test, family: 4 | 6, rules: { source?: string; minTtl: number }[], ttls: number[]) {
  const host = family === 4 ? '127.0.0.1' : '::1';
  const got: { text: string; from: UdpEndpoint }[] = [];
  const rx = await udpTransport.openReceiver({ address: host, port: 0 }, (b, from) => got.push({ text: b.toString(), from }));
  t.teardown(() => rx.close());
  const check = rx.setTtlRules(rules);
  const senders = [];
  for (const ttl of ttls) {
    const tx = await udpTransport.openSender({ remote: rx.local, localAddress: host, ttl }, (e) => t.fail(String(e)));
    t.teardown(() => tx.close());
    senders.push(tx);
    tx.send(Buffer.from(`ttl${ttl}`));
  }
  for (let i = 0; i < 50 && got.length < 1; i++) await sleep(10);
  await sleep(100);
  return { check, got: got.map((g) => g.text).sort(), from: got.map((g) => g.from), senders, dropped: rx.droppedByKernel() };
}

t.test('IPv4: only TTL 255 passes the single-hop filter', { skip: linux ? false : 'Linux only' }, async (t) => {
  const r = await exchange(t, 4, [{ minTtl: 255 }], [64, 254, 255]);
  t.same(r.check, { kind: 'kernel' });
  t.same(r.got, ['ttl255']);
  t.ok((r.dropped ?? 0) >= 2, `the kernel counted the drops (${r.dropped})`);
  for (const s of r.senders) t.ok(s.local.port >= BFD_SOURCE_PORT_MIN && s.local.port <= BFD_SOURCE_PORT_MAX, `source port ${s.local.port} in 49152–65535`);
  t.ok(r.from.every((f) => f.port >= BFD_SOURCE_PORT_MIN), 'as seen by the receiver');
});

t.test('IPv6: the Hop Limit filter', { skip: linux ? false : 'Linux only' }, async (t) => {
  const r = await exchange(t, 6, [{ minTtl: 255 }], [64, 255]);
  t.same(r.check, { kind: 'kernel' });
  t.same(r.got, ['ttl255']);
});

t.test('per-source minimums (multihop): other sources fall through', { skip: linux ? false : 'Linux only' }, async (t) => {
  const r = await exchange(t, 4, [{ source: '127.0.0.1', minTtl: 250 }], [200, 250]);
  t.same(r.got, ['ttl250'], '127.0.0.1 needs ≥ 250');
  const r2 = await exchange(t, 4, [{ source: '127.9.9.9', minTtl: 250 }], [200]);
  t.same(r2.got, ['ttl200'], 'a source without a rule is accepted (the demultiplexer decides)');
  const r3 = await exchange(t, 6, [{ source: '::1', minTtl: 254 }, { source: '2001:db8::1', minTtl: 200 }], [253, 254]);
  t.same(r3.got, ['ttl254']);
  const none = await exchange(t, 4, [], [1]);
  t.same(none.check, { kind: 'none' });
  t.same(none.got, ['ttl1'], 'no rules, no filter');
});

t.test('BPF program shape', async (t) => {
  t.equal(ttlFilterProgram(4, [{ minTtl: 255 }]).length, 4 * 8, 'any source: 4 instructions');
  t.equal(ttlFilterProgram(4, [{ source: '10.0.0.1', minTtl: 254 }]).length, (2 + 4 + 1) * 8, 'one IPv4 source + accept');
  t.equal(ttlFilterProgram(6, [{ source: '2001:db8::1', minTtl: 254 }]).length, (8 + 4 + 1) * 8, 'one IPv6 source + accept');
  t.throws(() => ttlFilterProgram(4, [{ minTtl: 0 }]), /1\.\.255/);
  t.throws(() => ttlFilterProgram(4, [{ source: '::1', minTtl: 255 }]), /not an IPv4/);
  const many = Array.from({ length: 400 }, (_, i) => ({ source: `2001:db8::${i + 1}`, minTtl: 250 }));
  t.throws(() => ttlFilterProgram(6, many), /4096/, 'the kernel limit is named');
});
