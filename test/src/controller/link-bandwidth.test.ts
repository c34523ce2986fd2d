// Link bandwidth from endpoint counts (src/controller/link-bandwidth.ts): the float32 rounding the wire imposes, the
// limits, argument errors, ratios kept, and the community it builds.
import t from 'tap';
import fc from 'fast-check';
import { linkBandwidthOf } from '../../../bgp/index.ts';
import { MAX_LINK_BANDWIDTH, endpointBandwidth, endpointLinkBandwidthCommunity } from '../../../src/controller/link-bandwidth.ts';

t.test('endpoints × bandwidth per endpoint, rounded to float32', async (t) => {
  t.same(endpointBandwidth(3, 125_000_000), { bytesPerSecond: 375_000_000, clamped: false }, '3 × 1 Gbit/s, exact');
  t.same(endpointBandwidth(0, 125_000_000), { bytesPerSecond: 0, clamped: false }, 'no endpoints');
  t.same(endpointBandwidth(1, 16_777_217), { bytesPerSecond: 16_777_216, clamped: false }, 'above 2^24 integers round to even');
  t.same(endpointBandwidth(3, 0.1), { bytesPerSecond: Math.fround(0.30000000000000004), clamped: false }, 'fractions too');
  t.same(endpointBandwidth(7, 1.5e6), { bytesPerSecond: 10_500_000, clamped: false });
  t.same(endpointBandwidth(1, MAX_LINK_BANDWIDTH + 1e31), { bytesPerSecond: MAX_LINK_BANDWIDTH, clamped: false }, 'within half a float32 step of the largest: rounds down to it');
  t.same(endpointBandwidth(2, 3e38), { bytesPerSecond: MAX_LINK_BANDWIDTH, clamped: true }, 'overflow is clamped and said');
  t.same(endpointBandwidth(Number.MAX_SAFE_INTEGER, 1e30), { bytesPerSecond: MAX_LINK_BANDWIDTH, clamped: true });
});

t.test('arguments', async (t) => {
  for (const e of [-1, 1.5, Number.NaN, Infinity, 2 ** 53]) t.throws(() => endpointBandwidth(e, 1), RangeError, `endpoints ${e}`);
  for (const b of [0, -1, Number.NaN, Infinity]) t.throws(() => endpointBandwidth(1, b), /bandwidth per endpoint must be a finite number of bytes per second > 0/, `bandwidth ${b}`);
});

t.test('property: ratios between nodes survive the rounding (7 significant digits)', async (t) => {
  let checked = 0;
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 100_000 }), fc.integer({ min: 1, max: 100_000 }), fc.double({ min: 1, max: 1e12, noNaN: true }), (a, b, per) => {
      const ra = endpointBandwidth(a, per).bytesPerSecond;
      const rb = endpointBandwidth(b, per).bytesPerSecond;
      if (Math.abs(ra / rb - a / b) > (a / b) * 2.5e-7) throw new Error(`${a}:${b} became ${ra}:${rb}`);
      checked++;
    }),
    { numRuns: 1000 },
  );
  t.equal(checked, 1000);
});

t.test('the community: transitive link bandwidth with the local AS', async (t) => {
  const c = endpointLinkBandwidthCommunity(65001, 3, 125_000_000);
  t.equal(c.value.toString('hex'), '0004fde94db2d05e');
  t.same(linkBandwidthOf(c), { asNumber: 65001, bytesPerSecond: 375_000_000, transitive: true });
  t.equal(linkBandwidthOf(endpointLinkBandwidthCommunity(4200000001, 1, 1))?.asNumber, 23456, 'AS_TRANS for a 4-octet AS');
});
