/**
 * AS_PATH / AS4_PATH (RFC 4271 §4.3, RFC 6793, RFC 5065): 2- and 4-octet segments, RFC 7606 §7.2 malformations,
 * the RFC 6793 §4.2.3 merge, effectiveAsPath, and the bgpdump text form.
 */
import t from 'tap';
import { ByteWriter } from '../../../bgp/wire/writer.ts';
import {
  asPathLength,
  decodeAsPathSegments,
  effectiveAggregator,
  effectiveAsPath,
  formatAsPath,
  mergeAs4Path,
  writeAsPathSegments,
} from '../../../bgp/codec/as-path.ts';
import * as b from '../../../bgp/codec/build.ts';
import type { AsPathSegment, PathAttribute } from '../../../bgp/codec/types.ts';
import { hex, toHex } from '../../helpers/hex.ts';

const seq = (...asns: number[]): AsPathSegment => ({ type: 2, asns });
const set = (...asns: number[]): AsPathSegment => ({ type: 1, asns });

t.test('RFC 4271 §4.3: 2-octet segments', async (t) => {
  const wire = hex`02 03 0001 0002 fde8   01 02 0064 00c8`;
  const segs = decodeAsPathSegments(wire, 0, wire.length, 2);
  t.same(segs, [seq(1, 2, 65000), set(100, 200)]);
  const w = new ByteWriter();
  writeAsPathSegments(w, segs as AsPathSegment[], 2);
  t.equal(toHex(w.toBuffer()), toHex(wire));
});

t.test('RFC 6793 §3: 4-octet segments', async (t) => {
  const wire = hex`02 02 00010000 ffffffff   03 01 0000fc00`;
  const segs = decodeAsPathSegments(wire, 0, wire.length, 4);
  t.same(segs, [seq(65536, 4294967295), { type: 3, asns: [64512] }]);
  const w = new ByteWriter();
  writeAsPathSegments(w, segs as AsPathSegment[], 4);
  t.equal(toHex(w.toBuffer()), toHex(wire));
});

t.test('RFC 7606 §7.2: malformed AS_PATH values are reported, never thrown', async (t) => {
  const bad: [string, Buffer][] = [
    ['segment type 0', hex`00 01 0001`],
    ['segment type 5', hex`05 01 0001`],
    ['zero-length segment', hex`02 00`],
    ['count overruns', hex`02 02 0001`],
    ['truncated header', hex`02`],
    ['trailing octet', hex`02 01 0001 02`],
  ];
  for (const [name, wire] of bad) t.type(decodeAsPathSegments(wire, 0, wire.length, 2), 'string', name);
  t.same(decodeAsPathSegments(Buffer.alloc(0), 0, 0, 4), [], 'an empty AS_PATH is valid');
  const fourRead2 = hex`02 01 00010000`;
  t.type(decodeAsPathSegments(fourRead2, 0, fourRead2.length, 2), 'string', '4-octet bytes read as 2-octet: malformed');
});

t.test('segments longer than 255 ASes are split on encode', async (t) => {
  const asns = Array.from({ length: 300 }, (_, i) => i + 1);
  const w = new ByteWriter();
  writeAsPathSegments(w, [seq(...asns)], 2);
  const out = w.toBuffer();
  t.equal(out.length, 2 + 255 * 2 + 2 + 45 * 2);
  t.equal(out[1], 255);
  t.same(decodeAsPathSegments(out, 0, out.length, 2), [seq(...asns.slice(0, 255)), seq(...asns.slice(255))]);
});

t.test('asPathLength: RFC 4271 §9.1.2.2 a counting', async (t) => {
  t.equal(asPathLength([seq(1, 2, 3), set(4, 5), { type: 3, asns: [6, 7] }, { type: 4, asns: [8] }]), 4);
  t.equal(asPathLength([]), 0);
});

t.test('RFC 6793 §4.2.3: AS4_PATH merge', async (t) => {
  t.same(mergeAs4Path([seq(65001, 23456, 23456)], [seq(200000, 200001)]), [seq(65001, 200000, 200001)], 'leading 2-octet AS kept');
  t.same(mergeAs4Path([seq(23456, 23456)], [seq(200000, 200001)]), [seq(200000, 200001)], 'equal lengths: AS4_PATH wins');
  t.same(mergeAs4Path([seq(23456)], [seq(200000, 200001)]), [seq(23456)], 'AS4_PATH longer than AS_PATH: ignored');
  t.same(mergeAs4Path([seq(1, 2), set(3, 23456), seq(23456)], [set(3, 300000), seq(400000)]), [seq(1, 2), set(3, 300000), seq(400000)], 'AS_SET counts one');
  t.same(
    mergeAs4Path([{ type: 3, asns: [64512] }, seq(1, 23456)], [{ type: 3, asns: [64513] }, seq(200000)]),
    [{ type: 3, asns: [64512] }, seq(1, 200000)],
    'confederation segments of AS4_PATH dropped; those of AS_PATH before the cut kept',
  );
  t.same(mergeAs4Path([], []), []);
});

t.test('effectiveAsPath', async (t) => {
  t.same(effectiveAsPath([]), [], 'no AS_PATH');
  t.same(effectiveAsPath([b.asSequence([1, 2])]), [seq(1, 2)]);
  t.same(
    effectiveAsPath([b.asSequence([65001, 23456]), { type: 'AS4_PATH', flags: 0xc0, segments: [seq(70000)] }]),
    [seq(65001, 70000)],
  );
});

t.test('RFC 6793 §4.2.3: AGGREGATOR other than AS_TRANS → AS4_PATH ignored; AS4_AGGREGATOR used only behind AS_TRANS', async (t) => {
  const as4: PathAttribute = { type: 'AS4_PATH', flags: 0xc0, segments: [seq(70000)] };
  const as4agg: PathAttribute = { type: 'AS4_AGGREGATOR', flags: 0xc0, asNumber: 70000, address: '192.0.2.9' };
  t.same(effectiveAsPath([b.asSequence([65001, 23456]), b.aggregator(65002, '192.0.2.1'), as4]), [seq(65001, 23456)]);
  t.same(effectiveAsPath([b.asSequence([65001, 23456]), b.aggregator(23456, '192.0.2.1'), as4, as4agg]), [seq(65001, 70000)]);
  t.same(effectiveAggregator([b.aggregator(23456, '192.0.2.1'), as4agg]), { asNumber: 70000, address: '192.0.2.9' });
  t.same(effectiveAggregator([b.aggregator(65002, '192.0.2.1'), as4agg]), { asNumber: 65002, address: '192.0.2.1' });
  t.same(effectiveAggregator([b.aggregator(23456, '192.0.2.1')]), { asNumber: 23456, address: '192.0.2.1' });
  t.equal(effectiveAggregator([]), undefined);
});

t.test('formatAsPath: bgpdump text', async (t) => {
  t.equal(formatAsPath([seq(1, 2), set(3, 4)]), '1 2 {3,4}');
  t.equal(formatAsPath([{ type: 3, asns: [5, 6] }, { type: 4, asns: [7, 8] }, seq(9)]), '(5 6) [7,8] 9');
  t.equal(formatAsPath([]), '');
});
