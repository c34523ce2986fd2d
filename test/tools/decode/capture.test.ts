import t from 'tap';
import { captureFormat, readCapture } from '../../../tools/decode/capture.ts';
import type { CaptureFrame } from '../../../tools/decode/capture.ts';
import { ethernet, ipv4Tcp, pcapFile, pcapngFile } from './build.ts';

const frames = [ethernet(ipv4Tcp({ seq: 1 })), ethernet(ipv4Tcp({ seq: 2 }))];

function framesOf(buf: Buffer): CaptureFrame[] {
  return [...readCapture(buf)].filter((i): i is CaptureFrame => i.kind === 'frame');
}

t.test('classic pcap in both byte orders, µs and ns resolution', async (t) => {
  for (const bigEndian of [false, true]) {
    const f = framesOf(pcapFile(1, frames, { bigEndian, times: [[1700000000, 5], [1700000001, 999999]] }));
    t.equal(f.length, 2);
    t.same(f.map((x) => x.frame), [1, 2]);
    t.same(f.map((x) => x.timestamp), [1700000000.000005, 1700000001.999999]);
    t.equal(f[0]!.linkType, 1);
    t.ok(f[0]!.data.equals(frames[0]!));
    t.equal(f[0]!.offset, 24);
  }
  const ns = framesOf(pcapFile(101, frames, { nano: true, times: [[1700000000, 123456789], [1, 1]] }));
  t.same(ns.map((x) => x.timestamp), [Number('1700000000.123456789'), 1.000000001]);
  t.equal(captureFormat(pcapFile(1, [], { nano: true, bigEndian: true })), 'pcap');
});

t.test('pcapng with default and nanosecond if_tsresol', async (t) => {
  const f = framesOf(pcapngFile(1, frames));
  t.equal(f.length, 2);
  t.equal(f[0]!.timestamp, 1700000000.25);
  t.ok(f[1]!.data.equals(frames[1]!));
  const ns = framesOf(pcapngFile(113, frames, { tsresol: 9, units: [1700000000123456789n, 5n] }));
  t.same(ns.map((x) => x.timestamp), [Number('1700000000.123456789'), 5e-9]);
  t.equal(ns[0]!.linkType, 113);
});

t.test('truncated files are reported as problems, never thrown', async (t) => {
  const full = pcapFile(1, frames);
  const items = [...readCapture(full.subarray(0, full.length - 5))];
  t.equal(items.filter((i) => i.kind === 'frame').length, 1);
  const last = items.at(-1)!;
  t.equal(last.kind, 'problem');
  t.match(last, { recoverable: false, message: /record 2 claims/ });
  const ng = pcapngFile(1, frames);
  const ngItems = [...readCapture(ng.subarray(0, ng.length - 3))];
  t.equal(ngItems.filter((i) => i.kind === 'frame').length, 1);
  t.equal(ngItems.at(-1)!.kind, 'problem');
  t.same([...readCapture(Buffer.from('hello world, not a capture'))].map((i) => i.kind), ['problem']);
  t.same([...readCapture(full.subarray(0, 10))].map((i) => i.kind), ['problem']);
});
