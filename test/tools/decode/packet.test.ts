import t from 'tap';
import type { Test } from 'tap';
import { parseFrame } from '../../../tools/decode/packet.ts';
import { ethernet, ipv4Tcp, ipv6Tcp } from './build.ts';

const payload = Buffer.from('hello');
const v4 = ipv4Tcp({ src: '10.1.2.3', dst: '10.3.2.1', sport: 50000, dport: 179, seq: 0xfffffff0, payload });
const v6 = ipv6Tcp({ src: '2001:db8::1', dst: 'fe80::2', sport: 179, dport: 50001, seq: 7, syn: true, payload }, true);

function check(t: Test, linkType: number, frame: Buffer, v: 4 | 6): void {
  const r = parseFrame(linkType, frame);
  if (r.kind !== 'tcp') {
    t.fail(`link type ${linkType}: ${r.reason}`);
    return;
  }
  t.ok(r.segment.payload.equals(payload), `link type ${linkType} payload`);
  if (v === 4) t.match(r.segment, { srcIp: '10.1.2.3', dstIp: '10.3.2.1', srcPort: 50000, dstPort: 179, seq: 0xfffffff0, syn: false, payloadLength: 5 });
  else t.match(r.segment, { srcIp: '2001:db8::1', dstIp: 'fe80::2', srcPort: 179, dstPort: 50001, seq: 7, syn: true });
}

t.test('every supported link layer, IPv4 and IPv6', async (t) => {
  for (const [ip, v] of [[v4, 4], [v6, 6]] as const) {
    const fam = Buffer.alloc(4);
    fam.writeUInt32LE(v === 4 ? 2 : 30);
    check(t, 0, Buffer.concat([fam, ip]), v); // BSD loopback, host order (LE)
    const famBe = Buffer.alloc(4);
    famBe.writeUInt32BE(v === 4 ? 2 : 24);
    check(t, 108, Buffer.concat([famBe, ip]), v); // OpenBSD LOOP, network order
    check(t, 1, ethernet(ip), v);
    check(t, 1, ethernet(ip, [100, 200]), v); // QinQ-style double tag
    for (const raw of [12, 14, 101]) check(t, raw, ip, v);
    const ppp = Buffer.concat([Buffer.from([0xff, 0x03, 0x00, v === 4 ? 0x21 : 0x57]), ip]);
    check(t, 9, ppp, v);
    const hdlc = Buffer.concat([Buffer.from([0x0f, 0x00]), Buffer.from(v === 4 ? [0x08, 0x00] : [0x86, 0xdd]), ip]);
    check(t, 104, hdlc, v);
    const sll = Buffer.alloc(16);
    sll.writeUInt16BE(v === 4 ? 0x0800 : 0x86dd, 14);
    check(t, 113, Buffer.concat([sll, ip]), v);
    const sll2 = Buffer.alloc(20);
    sll2.writeUInt16BE(v === 4 ? 0x0800 : 0x86dd, 0);
    check(t, 276, Buffer.concat([sll2, ip]), v);
    const fr = Buffer.concat([Buffer.from([0x18, 0x41, 0x03, v === 4 ? 0xcc : 0x8e]), ip]);
    check(t, 107, fr, v);
    const juniper = Buffer.concat([Buffer.from('MGC'), Buffer.from([0x81, 0x00, 0x03, 1, 1, 9]), ethernet(ip)]);
    check(t, 178, juniper, v);
  }
});

t.test('Ethernet padding is cut by the IP length; truncation is reported', async (t) => {
  const r = parseFrame(1, ethernet(v4));
  t.equal(r.kind === 'tcp' && r.segment.payload.length, 5);
  const cut = parseFrame(101, v4.subarray(0, v4.length - 2));
  t.match(cut, { kind: 'tcp', segment: { payloadLength: 5 } });
  t.equal(cut.kind === 'tcp' && cut.segment.payload.length, 3);
  t.match(parseFrame(101, v4.subarray(0, 30)), { kind: 'skip', reason: /TCP/ });
  t.match(parseFrame(1, Buffer.alloc(5)), { kind: 'skip', reason: /Ethernet/ });
  t.match(parseFrame(147, v4), { kind: 'skip', reason: /unsupported link type 147/ });
  const udp = Buffer.from(v4);
  udp[9] = 17;
  t.same(parseFrame(101, udp), { kind: 'skip' });
});
