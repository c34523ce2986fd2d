/**
 * NLRI and address text (RFC 4271 §4.3, RFC 4760 §5, RFC 7911 §3, RFC 5952): prefix encode/decode, host-bit
 * zeroing, ADD-PATH, 3/10 errors, and IPv6 text identical to Node's net.SocketAddress (inet_ntop) for any address.
 */
import t from 'tap';
import fc from 'fast-check';
import { SocketAddress } from 'node:net';
import { BgpError } from '../../../bgp/errors.ts';
import {
  canonicalAddress,
  canonicalPrefix,
  decodeNlri,
  isCanonicalIPv4Prefix,
  decodePrefixAt,
  encodeNlri,
  formatIPv6,
  formatPrefixBits,
  nlriLength,
  parseAddress,
  parsePrefix,
} from '../../../bgp/codec/nlri.ts';
import { bgpErrorOf } from '../../helpers/bgp-error.ts';
import { hex, toHex } from '../../helpers/hex.ts';

t.test('RFC 4271 §4.3: IPv4 prefixes, lengths 0..32', async (t) => {
  const wire = hex`
    00                # 0.0.0.0/0
    08 0a             # 10.0.0.0/8
    0c ac10           # 172.16.0.0/12
    18 c0a801         # 192.168.1.0/24
    19 c0a80180       # 192.168.1.128/25
    20 c0000201       # 192.0.2.1/32
  `;
  const entries = [
    { prefix: '0.0.0.0/0' },
    { prefix: '10.0.0.0/8' },
    { prefix: '172.16.0.0/12' },
    { prefix: '192.168.1.0/24' },
    { prefix: '192.168.1.128/25' },
    { prefix: '192.0.2.1/32' },
  ];
  t.same(decodeNlri(wire, 'ipv4-unicast', false), entries);
  t.equal(toHex(encodeNlri(entries, 'ipv4-unicast', false)), toHex(wire));
});

t.test('host bits are zeroed on decode (bgpdump updates.nlri_mask_trailing_bits case) and on encode', async (t) => {
  t.same(decodeNlri(hex`0c ac1f  17 c0a8ff`, 'ipv4-unicast', false), [
    { prefix: '172.16.0.0/12' },
    { prefix: '192.168.254.0/23' },
  ]);
  t.same(decodeNlri(hex`31 20010db800ff81`, 'ipv6-unicast', false), [{ prefix: '2001:db8:ff:8000::/49' }]);
  t.equal(toHex(encodeNlri([{ prefix: '10.1.2.3/8' }], 'ipv4-unicast', false)), '080a');
  t.equal(toHex(encodeNlri([{ prefix: '192.168.1.255/25' }], 'ipv4-unicast', false)), '19c0a80180');
});

t.test('RFC 4760 §5: IPv6 prefixes', async (t) => {
  const wire = hex`
    00                                     # ::/0
    20 20010db8                            # 2001:db8::/32
    40 20010db800000001                    # 2001:db8:0:1::/64
    80 20010db8000000000000000000000001    # 2001:db8::1/128
    80 00000000000000000000ffffc0000201    # ::ffff:192.0.2.1/128
  `;
  const entries = ['::/0', '2001:db8::/32', '2001:db8:0:1::/64', '2001:db8::1/128', '::ffff:192.0.2.1/128'].map((prefix) => ({ prefix }));
  t.same(decodeNlri(wire, 'ipv6-unicast', false), entries);
  t.equal(toHex(encodeNlri(entries, 'ipv6-unicast', false)), toHex(wire));
});

t.test('RFC 7911 §3: ADD-PATH path identifiers', async (t) => {
  const wire = hex`00000001 18 c00002   ffffffff 20 c0000201`;
  const entries = [
    { prefix: '192.0.2.0/24', pathId: 1 },
    { prefix: '192.0.2.1/32', pathId: 4294967295 },
  ];
  t.same(decodeNlri(wire, 'ipv4-unicast', true), entries);
  t.equal(toHex(encodeNlri(entries, 'ipv4-unicast', true)), toHex(wire));
  t.equal(toHex(encodeNlri([{ prefix: '10.0.0.0/8' }], 'ipv4-unicast', true)), '00000000080a', 'missing pathId → 0');
  // The same bytes read without ADD-PATH are different prefixes (why the context must say).
  t.same(decodeNlri(hex`00000000 20 01010101`, 'ipv4-unicast', false), [
    { prefix: '0.0.0.0/0' },
    { prefix: '0.0.0.0/0' },
    { prefix: '0.0.0.0/0' },
    { prefix: '0.0.0.0/0' },
    { prefix: '1.1.1.1/32' },
  ]);
});

t.test('RFC 4271 §6.3 / RFC 7606 §5.3: bad NLRI → BgpError 3/10, empty data', async (t) => {
  const cases: [string, Buffer, 'ipv4-unicast' | 'ipv6-unicast', boolean][] = [
    ['IPv4 length 33', hex`21 0a000000 00`, 'ipv4-unicast', false],
    ['IPv6 length 129', hex`81 ${'00'.repeat(17)}`, 'ipv6-unicast', false],
    ['IPv4 prefix overrun', hex`18 0a00`, 'ipv4-unicast', false],
    ['IPv6 prefix overrun', hex`40 20010db8`, 'ipv6-unicast', false],
    ['ADD-PATH id truncated', hex`000000`, 'ipv4-unicast', true],
    ['ADD-PATH without length octet', hex`00000001`, 'ipv4-unicast', true],
  ];
  for (const [name, wire, fam, ap] of cases) {
    try {
      decodeNlri(wire, fam, ap);
      t.fail(`${name}: should throw`);
    } catch (e) {
      t.ok(e instanceof BgpError, `${name}: BgpError`);
      t.same({ code: (e as BgpError).code, subcode: (e as BgpError).subcode, data: toHex((e as BgpError).data) }, { code: 3, subcode: 10, data: '' }, name);
    }
  }
});

t.test('decodePrefixAt: one prefix at an offset (MRT RIB records), host bits zeroed, bounds checked', async (t) => {
  const wire = hex`ee  19 c0a801ff  77  40 20010db8 00000001  99`;
  t.same(decodePrefixAt(wire, 1, wire.length, 'ipv4-unicast'), { prefix: '192.168.1.128/25', next: 6 });
  t.same(decodePrefixAt(wire, 7, wire.length, 'ipv6-unicast'), { prefix: '2001:db8:0:1::/64', next: 16 });
  t.same(decodePrefixAt(hex`00`, 0, 1, 'ipv6-unicast'), { prefix: '::/0', next: 1 });
  const bad = { code: 3, subcode: 10, data: '' };
  t.same(bgpErrorOf(() => decodePrefixAt(wire, 1, 5, 'ipv4-unicast')), bad, 'octets past end');
  t.same(bgpErrorOf(() => decodePrefixAt(hex`21 0a000000 00`, 0, 6, 'ipv4-unicast')), bad, 'IPv4 length 33');
  t.same(bgpErrorOf(() => decodePrefixAt(hex`81`, 0, 1, 'ipv6-unicast')), bad, 'IPv6 length 129');
  t.same(bgpErrorOf(() => decodePrefixAt(wire, wire.length, wire.length, 'ipv4-unicast')), bad, 'no length octet');
  try {
    decodePrefixAt(hex`18 0a00`, 0, 3, 'ipv4-unicast', 'RIB prefix');
  } catch (e) {
    t.match((e as Error).message, /RIB prefix: prefix of \/24 overruns/, '`where` names the field');
  }
});

t.test('formatPrefixBits: a length beside a whole address (MRT TABLE_DUMP), host bits zeroed', async (t) => {
  const v4 = hex`c0a801ff`;
  t.equal(formatPrefixBits(v4, 0, 4, 24, 'ipv4-unicast'), '192.168.1.0/24');
  t.equal(formatPrefixBits(v4, 0, 4, 0, 'ipv4-unicast'), '0.0.0.0/0');
  t.equal(formatPrefixBits(v4, 0, 4, 32, 'ipv4-unicast'), '192.168.1.255/32');
  t.equal(formatPrefixBits(hex`20010db8ffffffff 0000000000000000`, 0, 16, 33, 'ipv6-unicast'), '2001:db8:8000::/33');
  t.same(bgpErrorOf(() => formatPrefixBits(v4, 0, 4, 33, 'ipv4-unicast')), { code: 3, subcode: 10, data: '' }, 'length 33');
  t.same(bgpErrorOf(() => formatPrefixBits(v4, 2, 4, 24, 'ipv4-unicast')), { code: 3, subcode: 10, data: '' }, 'octets past end');
});

t.test('nlriLength: octets on the wire without path id', async (t) => {
  t.equal(nlriLength('0.0.0.0/0'), 1);
  t.equal(nlriLength('10.0.0.0/8'), 2);
  t.equal(nlriLength('10.0.0.0/9'), 3);
  t.equal(nlriLength('192.0.2.1/32'), 5);
  t.equal(nlriLength('2001:db8::/128'), 17);
  t.equal(nlriLength('2001:db8::/33'), 6);
  t.throws(() => nlriLength('10.0.0.0'));
});

t.test('canonical text: RFC 5952 like inet_ntop', async (t) => {
  t.equal(canonicalAddress('2001:DB8:0:0:0:0:0:1'), '2001:db8::1');
  t.equal(canonicalAddress('2001:db8:0:0:1:0:0:1'), '2001:db8::1:0:0:1', 'first of equal runs');
  t.equal(canonicalAddress('2001:db8:0:1:1:1:1:1'), '2001:db8:0:1:1:1:1:1', 'a single zero group is not compressed');
  t.equal(canonicalAddress('::'), '::');
  t.equal(canonicalAddress('::1'), '::1');
  t.equal(canonicalAddress('::ffff:c000:201'), '::ffff:192.0.2.1');
  t.equal(canonicalAddress('fe80::1:0:0:0'), 'fe80::1:0:0:0');
  t.equal(canonicalPrefix('10.1.2.3/8'), '10.0.0.0/8');
  t.equal(canonicalPrefix('2001:db8::ffff/32'), '2001:db8::/32');
  t.same(parsePrefix('192.0.2.0/24').length, 24);
  t.throws(() => parsePrefix('192.0.2.0/33'));
  t.throws(() => parseAddress('1.2.3'));
  t.throws(() => parseAddress('1.2.3.256'));
  t.throws(() => parseAddress('1:2:3:4:5:6:7:8:9'));
  t.throws(() => parseAddress('1::2::3'));
  t.throws(() => parseAddress('12345::'));
});

t.test('property: formatIPv6 equals net.SocketAddress for any 16 octets; parse inverts it', async (t) => {
  // Bias towards zero groups so the "::" rules are exercised.
  const group = fc.oneof(fc.constant(0), fc.constant(0), fc.constant(0xffff), fc.integer({ min: 0, max: 0xffff }));
  fc.assert(
    fc.property(fc.array(group, { minLength: 8, maxLength: 8 }), (groups) => {
      const b = Buffer.alloc(16);
      groups.forEach((g, i) => b.writeUInt16BE(g, 2 * i));
      const ours = formatIPv6(b, 0);
      const node = new SocketAddress({ address: ours, family: 'ipv6' }).address;
      if (ours !== node) throw new Error(`${ours} vs ${node}`);
      if (!parseAddress(ours).equals(b)) throw new Error(`parse(${ours}) differs`);
    }),
    { numRuns: 3000 },
  );
  t.pass('3000 addresses agree');
});

t.test('property: isCanonicalIPv4Prefix is true exactly when the parsed canonical form is the text itself', async (t) => {
  // Octets and lengths with and without leading zeros, host bits set or not, and near-misses of the shape.
  const num = (max: number) => fc.tuple(fc.integer({ min: 0, max }), fc.constantFrom('', '', '', '0', '00')).map(([n, z]) => `${z}${n}`);
  const junk = fc.constantFrom('', '', '', '', '.', '/', ' ', 'x', '.1', '/1', '256', '-1');
  const anyText = fc.tuple(num(300), num(255), num(255), num(255), num(40), junk, fc.integer({ min: 0, max: 4 })).map(([a, b, c, d, len, j, where]) => {
    const s = `${[a, b, c, d].join('.')}/${len}`;
    return where === 0 ? s + j : where === 1 ? j + s : s;
  });
  // Masked values: canonical unless a leading zero or junk is added.
  const maskedText = fc.tuple(fc.integer({ min: 0, max: 0xffffffff }), fc.integer({ min: 0, max: 32 }), fc.constantFrom('', '', '', '0'), junk).map(([v, len, z, j]) => {
    const b = Buffer.alloc(4);
    b.writeUInt32BE(len === 0 ? 0 : (v & (0xffffffff << (32 - len))) >>> 0);
    return `${z}${b.join('.')}/${len}${j}`;
  });
  const text = fc.oneof(anyText, maskedText);
  const slow = (s: string): string | undefined => {
    try {
      const { bytes, length } = parsePrefix(s);
      return bytes.length === 4 ? `${[...bytes].join('.')}/${length}` : undefined;
    } catch {
      return undefined;
    }
  };
  let canonical = 0;
  fc.assert(
    fc.property(text, (s) => {
      const fast = isCanonicalIPv4Prefix(s);
      if (fast !== (slow(s) === s)) throw new Error(`${JSON.stringify(s)}: fast ${fast}, parsed ${slow(s)}`);
      if (fast) canonical++;
      if (fast && canonicalPrefix(s) !== s) throw new Error(`canonicalPrefix(${s}) is not the text itself`);
    }),
    { numRuns: 5000 },
  );
  t.ok(canonical > 100, `${canonical} canonical texts among 5000`);
  t.equal(isCanonicalIPv4Prefix('10.0.0.1/32'), true);
  t.equal(isCanonicalIPv4Prefix('10.0.0.0/8'), true);
  t.equal(isCanonicalIPv4Prefix('10.0.0.1/8'), false, 'host bits');
  t.equal(isCanonicalIPv4Prefix('010.0.0.1/32'), false, 'leading zero');
  t.equal(isCanonicalIPv4Prefix('10.0.0.1/032'), false, 'leading zero in the length');
  t.equal(isCanonicalIPv4Prefix('0.0.0.0/0'), true);
  t.equal(isCanonicalIPv4Prefix('2001:db8::/32'), false, 'IPv6 takes the parse');
});

t.test('property: NLRI encode/decode round-trip for canonical prefixes', async (t) => {
  const v4 = fc.tuple(fc.integer({ min: 0, max: 32 }), fc.integer({ min: 0, max: 0xffffffff })).map(([len, a]) => {
    const b = Buffer.alloc(4);
    b.writeUInt32BE(a);
    return canonicalPrefix(`${b.join('.')}/${len}`);
  });
  fc.assert(
    fc.property(fc.array(fc.record({ prefix: v4, pathId: fc.integer({ min: 0, max: 0xffffffff }) }), { maxLength: 20 }), (entries) => {
      const wire = encodeNlri(entries, 'ipv4-unicast', true);
      const back = decodeNlri(wire, 'ipv4-unicast', true);
      if (JSON.stringify(back) !== JSON.stringify(entries)) throw new Error('round trip differs');
    }),
  );
  t.pass('round trips');
});
