import t from 'tap';
import { BgpStreamSplitter } from '../../../tools/decode/splitter.ts';
import type { SplitItem } from '../../../tools/decode/splitter.ts';
import { KEEPALIVE, bgpMessage, simpleUpdate } from './build.ts';

const max = (): number => 4096;
const update = simpleUpdate([65001], '192.0.2.1', ['10.0.0', '10.0.1']);
const open = bgpMessage(1, Buffer.from('04fde900b4c0000201' + '00', 'hex'));
const stream = Buffer.concat([open, KEEPALIVE, update, KEEPALIVE]);

function summary(items: SplitItem[]): string[] {
  return items.map((i) => (i.kind === 'message' ? `${i.offset}:${i.bytes[18]}` : i.kind === 'error' ? `${i.offset}:E${i.code}/${i.subcode}` : i.kind === 'skipped' ? `${i.offset}:skip${i.octets}` : `${i.offset}:trunc${i.have}/${i.need}`));
}

const expected = [`0:1`, `${open.length}:4`, `${open.length + 19}:2`, `${open.length + 19 + update.length}:4`];

t.test('every split point and byte-at-a-time delivery give the same messages', async (t) => {
  let checked = 0;
  for (let i = 1; i < stream.length; i++) {
    const s = new BgpStreamSplitter(true);
    const items = [...s.push(stream.subarray(0, i), max), ...s.push(stream.subarray(i), max), ...s.end()];
    t.same(summary(items), expected, `split at ${i}`);
    checked++;
  }
  t.equal(checked, stream.length - 1);
  const s = new BgpStreamSplitter(true);
  const items: SplitItem[] = [];
  for (const b of stream) items.push(...s.push(Buffer.from([b]), max));
  t.same(summary(items), expected);
  const bytes = items.map((i) => (i.kind === 'message' ? i.bytes : Buffer.alloc(0)));
  t.ok(Buffer.concat(bytes).equals(stream), 'views stay intact after later chunks');
});

t.test('a bad marker and a bad length are reported, then the next header is found', async (t) => {
  const bad = Buffer.from(KEEPALIVE);
  bad[3] = 0;
  const s = new BgpStreamSplitter(true);
  t.same(summary([...s.push(Buffer.concat([bad, update]), max), ...s.end()]), ['0:E1/1', '1:skip18', `19:2`]);
  const long = Buffer.from(KEEPALIVE);
  long.writeUInt16BE(5000, 16);
  const s2 = new BgpStreamSplitter(true);
  t.same(summary([...s2.push(Buffer.concat([long, KEEPALIVE]), max), ...s2.end()]), ['0:E1/2', '1:skip18', '19:4']);
  const s3 = new BgpStreamSplitter(true);
  t.same(summary([...s3.push(Buffer.concat([long, KEEPALIVE]), () => 65535), ...s3.end()]), ['0:trunc38/5000']);
});

t.test('a stream starting mid-message resynchronises on the first plausible header', async (t) => {
  const s = new BgpStreamSplitter(false);
  const tail = update.subarray(10);
  const items = [...s.push(Buffer.concat([tail, KEEPALIVE.subarray(0, 10)]), max), ...s.push(KEEPALIVE.subarray(10), max), ...s.end()];
  const skipped = items.reduce((n, i) => n + (i.kind === 'skipped' ? i.octets : 0), 0);
  t.equal(skipped, tail.length, 'every octet before the header is reported skipped');
  t.same(summary(items.filter((i) => i.kind !== 'skipped')), [`${tail.length}:4`]);
});

t.test('a gap drops the partial message and resynchronises', async (t) => {
  const s = new BgpStreamSplitter(true);
  const items = [...s.push(update.subarray(0, 30), max)];
  s.gap(100);
  items.push(...s.push(Buffer.concat([Buffer.from('junk'), KEEPALIVE]), max), ...s.end());
  t.same(summary(items), [`130:skip4`, `134:4`]);
});
