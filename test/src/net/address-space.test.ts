// src/net/address-space.ts: the sets of addresses admission reads (pools, allowedPrefixes).
import t from 'tap';
import fc from 'fast-check';
import { AddressSpace, parseAddressRange, rangeText } from '../../../src/net/address-space.ts';

t.test('parseAddressRange reads CIDRs, ranges and addresses, and names what is wrong', async (t) => {
  t.same(parseAddressRange('10.0.0.0/30'), { family: 'IPv4', first: 0x0a000000n, last: 0x0a000003n });
  t.same(parseAddressRange(' 10.0.0.5 - 10.0.0.7 '), { family: 'IPv4', first: 0x0a000005n, last: 0x0a000007n });
  t.same(parseAddressRange('2001:db8::1'), { family: 'IPv6', first: 0x20010db8000000000000000000000001n, last: 0x20010db8000000000000000000000001n });
  t.throws(() => parseAddressRange('10.0.0.1/24'), /host bits set \(did you mean 10\.0\.0\.0\/24\?\)/);
  t.throws(() => parseAddressRange('10.0.0.9-10.0.0.1'), /first address is after the last/);
  t.throws(() => parseAddressRange('10.0.0.1-2001:db8::1'), /mixes IPv4 and IPv6/);
  t.throws(() => parseAddressRange('10.0.0.0/33'), /prefix length must be 0\.\.32/);
  t.throws(() => parseAddressRange('example.com'), /neither a CIDR/);
});

t.test('contains and coversPrefix', async (t) => {
  const s = AddressSpace.of(['198.51.100.0/25', '198.51.100.128-198.51.100.200', '2001:db8::/64']);
  t.ok(s.contains('198.51.100.200'));
  t.notOk(s.contains('198.51.100.201'));
  t.notOk(s.contains('not an address'));
  t.ok(s.contains('2001:db8::ffff'));
  t.notOk(s.contains('2001:db8:0:1::'), 'outside the /64');
  t.ok(s.coversPrefix('198.51.100.0/25'));
  t.ok(s.coversPrefix('198.51.100.64/26'), 'a prefix inside');
  t.notOk(s.coversPrefix('198.51.100.0/24'), 'the /24 reaches past .200');
  t.ok(s.coversPrefix('198.51.100.150'), 'an address alone is its host route');
  t.ok(s.coversPrefix('198.51.100.7/25'), 'host bits are masked');
  t.notOk(s.coversPrefix('0.0.0.0/0'));
  t.notOk(s.coversPrefix('198.51.100.0/40'), 'not a prefix');
  t.notOk(AddressSpace.EMPTY.contains('198.51.100.1'));
  t.ok(AddressSpace.EMPTY.empty);
  t.equal(String(s), '198.51.100.0-198.51.100.200, 2001:db8::/64', 'adjacent ranges coalesced');
  t.equal(String(AddressSpace.EMPTY), 'nothing');
});

t.test('union and intersect', async (t) => {
  const a = AddressSpace.of(['10.0.0.0/24']);
  const b = AddressSpace.of(['10.0.0.128/25', '10.0.1.0/24']);
  t.equal(String(a.union(b)), '10.0.0.0/23');
  t.equal(String(a.intersect(b)), '10.0.0.128/25');
  t.equal(String(a.intersect(AddressSpace.of(['2001:db8::/32']))), 'nothing', 'families never meet');
  t.equal(rangeText({ family: 'IPv4', first: 1n, last: 2n }), '0.0.0.1-0.0.0.2');
});

t.test('coversPrefix agrees with a brute-force walk over small spaces (property)', async (t) => {
  let runs = 0;
  // Ranges inside 10.0.0.0/27: 32 addresses, small enough to check every address of every prefix.
  const range = fc.tuple(fc.integer({ min: 0, max: 31 }), fc.integer({ min: 0, max: 31 })).map(([x, y]) => `10.0.0.${Math.min(x, y)}-10.0.0.${Math.max(x, y)}`);
  fc.assert(
    fc.property(fc.array(range, { maxLength: 4 }), fc.integer({ min: 0, max: 31 }), fc.integer({ min: 27, max: 32 }), (ranges, base, len) => {
      runs++;
      const s = AddressSpace.of(ranges);
      const inside = new Set<number>();
      for (const r of ranges) {
        const [lo, hi] = r.split('-').map((x) => Number(x.split('.')[3]));
        for (let i = lo as number; i <= (hi as number); i++) inside.add(i);
      }
      const size = 2 ** (32 - len);
      const first = base - (base % size);
      let all = true;
      for (let i = first; i < first + size; i++) if (!inside.has(i)) all = false;
      return s.coversPrefix(`10.0.0.${base}/${len}`) === all && s.contains(`10.0.0.${base}`) === inside.has(base);
    }),
    { numRuns: 500, seed: 7 },
  );
  t.equal(runs, 500);
});
