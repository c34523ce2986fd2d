import t from 'tap';
import type { TcpSegment } from '../../../tools/decode/packet.ts';
import { MAX_PENDING_OCTETS, TcpDirection } from '../../../tools/decode/reassembly.ts';
import type { StreamEvent } from '../../../tools/decode/reassembly.ts';

function seg(seq: number, data: string, flags: { syn?: boolean; wire?: number } = {}): TcpSegment {
  const payload = Buffer.from(data);
  return { srcIp: '192.0.2.1', dstIp: '192.0.2.2', srcPort: 1, dstPort: 179, seq: seq >>> 0, syn: flags.syn === true, fin: false, rst: false, payload, payloadLength: flags.wire ?? payload.length, ack: 0, ackFlag: false };
}

function push(d: TcpDirection<number>, s: TcpSegment): StreamEvent<number>[] {
  return d.push(s, 0);
}

function text(events: StreamEvent<number>[]): string {
  return events.map((e) => (e.kind === 'data' ? e.bytes.toString() : e.kind === 'gap' ? `<gap ${e.missing}>` : e.kind === 'rewrite' ? `<rewrite ${e.bytes.toString()}>` : '<restart>')).join('');
}

t.test('in order, out of order, retransmitted and overlapping segments give each byte once', async (t) => {
  const d = new TcpDirection<number>();
  let out = text(push(d, seg(1000, '', { syn: true })));
  out += text(push(d, seg(1001, 'abc')));
  out += text(push(d, seg(1007, 'ghi'))); // waits for the hole
  t.equal(out, 'abc');
  out += text(push(d, seg(1001, 'abc'))); // retransmission
  out += text(push(d, seg(1002, 'bcdef'))); // overlap, fills the hole
  t.equal(out, 'abcdefghi');
  out += text(push(d, seg(1005, 'efghijk'))); // overlapping resend with new data
  t.equal(out, 'abcdefghijk');
  t.equal(d.midStream, false);
});

t.test('payload in the SYN starts at ISN + 1; sequence numbers wrap', async (t) => {
  const d = new TcpDirection<number>();
  const out = text(push(d, seg(0xfffffffe, 'xy', { syn: true }))) + text(push(d, seg(1, 'z')));
  t.equal(out, 'xyz');
});

t.test('a capture starting mid-session is flagged; holes are skipped at flush', async (t) => {
  const d = new TcpDirection<number>();
  let out = text(push(d, seg(5000, 'abc')));
  t.equal(d.midStream, true);
  out += text(push(d, seg(5010, 'xyz')));
  out += text(d.flush());
  t.equal(out, 'abc<gap 7>xyz');
});

t.test('a segment cut by the snap length reports the missing octets', async (t) => {
  const d = new TcpDirection<number>();
  const out = text(push(d, seg(1, 'ab', { syn: true }))) + text(push(d, seg(4, 'cd', { wire: 5 }))) + text(push(d, seg(9, 'e')));
  t.equal(out, 'ab' + 'cd<gap 3>' + 'e');
});

t.test('too much data behind a hole skips the hole', async (t) => {
  const d = new TcpDirection<number>();
  push(d, seg(0, '', { syn: true }));
  const big = 'x'.repeat(1000);
  let events: StreamEvent<number>[] = [];
  for (let i = 0; events.length === 0 && i < MAX_PENDING_OCTETS / 1000 + 2; i++) events = push(d, seg(101 + i * 1000, big));
  t.equal(events[0]?.kind, 'gap');
  t.equal(events[0]?.kind === 'gap' && events[0].missing, 100);
});

t.test('a new SYN restarts the stream; a retransmitted SYN does not', async (t) => {
  const d = new TcpDirection<number>();
  let out = text(push(d, seg(10, 'one', { syn: true })));
  out += text(push(d, seg(10, 'one', { syn: true })));
  out += text(push(d, seg(10, 'two', { syn: true })));
  out += text(push(d, seg(99, 'three', { syn: true })));
  t.equal(out, 'one<restart>two<restart>three');
});

t.test('the other side acknowledging past a hole skips the hole at once', async (t) => {
  const d = new TcpDirection<number>();
  let out = text(push(d, seg(0, '', { syn: true }))) + text(push(d, seg(1, 'ab'))) + text(push(d, seg(6, 'fg')));
  t.equal(out, 'ab');
  out += text(d.acknowledged(4)); // acknowledges only part of the hole (offsets 2..4): the rest may still come
  t.equal(out, 'ab');
  out += text(d.acknowledged(7)); // past the start of the waiting segment: the hole is lost from the capture
  t.equal(out, 'ab<gap 3>fg');
  t.same(d.acknowledged(100), [], 'nothing pending');
});

t.test('the same sequence number resent with other bytes is delivered as a rewrite', async (t) => {
  const d = new TcpDirection<number>();
  const out = text(push(d, seg(0, 'abc'))) + text(push(d, seg(0, 'abc'))) + text(push(d, seg(0, 'xyz'))) + text(push(d, seg(3, 'd')));
  t.equal(out, 'abc<rewrite xyz>d');
});
