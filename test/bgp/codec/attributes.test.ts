/**
 * Path attributes one by one (RFC 4271 §4.3/§5, RFC 1997, RFC 4360, RFC 4456, RFC 4760, RFC 6793, RFC 8092):
 * for each annotated vector, four tests — decode equals the object, encode equals the bytes, round trip, and the
 * attribute inside a whole UPDATE through decodeMessage. Then per-attribute RFC 7606 / RFC 4271 §6.3 errors, the
 * MRT RIB-entry MP_REACH_NLRI forms (RFC 6396 §4.3.4), builders, community text and the JSON view.
 */
import t from 'tap';
import { decodePathAttributes, encodePathAttributes, walkAttributes } from '../../../bgp/codec/attributes.ts';
import { attributesJsonText, attributesToJson, updateJsonText, updateToJson } from '../../../bgp/codec/attributes-json.ts';
import * as b from '../../../bgp/codec/build.ts';
import { decodeMessage } from '../../../bgp/codec/message.ts';
import type { CodecContext, PathAttribute } from '../../../bgp/codec/types.ts';
import { decodeUpdate, validateUpdateStrict } from '../../../bgp/codec/update.ts';
import { BgpError } from '../../../bgp/errors.ts';
import { hex, toHex } from '../../helpers/hex.ts';
import { bytes, message, u16 } from '../../helpers/wire.ts';

const AS2: CodecContext = { fourOctetAs: false, extendedMessage: false, addPath: {} };
const AS4: CodecContext = { fourOctetAs: true, extendedMessage: false, addPath: {} };
const AP: CodecContext = { fourOctetAs: true, extendedMessage: false, addPath: { ipv4: true, ipv6: true } };

interface Vector {
  name: string;
  ctx: CodecContext;
  wire: Buffer;
  attr: PathAttribute;
}

const vectors: Vector[] = [
  { name: 'ORIGIN IGP (RFC 4271 §5.1.1)', ctx: AS2, wire: hex`40 01 01 00`, attr: b.origin('IGP') },
  { name: 'ORIGIN INCOMPLETE', ctx: AS2, wire: hex`40 01 01 02`, attr: b.origin(2) },
  { name: 'AS_PATH empty', ctx: AS2, wire: hex`40 02 00`, attr: b.asSequence([]) },
  { name: 'AS_PATH 2-octet sequence + set', ctx: AS2, wire: hex`40 02 0a 02 02 fde8 fde9 01 01 0064`, attr: b.asPath([{ type: 2, asns: [65000, 65001] }, { type: 1, asns: [100] }]) },
  { name: 'AS_PATH 4-octet (RFC 6793)', ctx: AS4, wire: hex`40 02 0a 02 02 00010000 0000fde8`, attr: b.asSequence([65536, 65000]) },
  { name: 'NEXT_HOP (RFC 4271 §5.1.3)', ctx: AS2, wire: hex`40 03 04 c0000201`, attr: b.nextHop('192.0.2.1') },
  { name: 'MULTI_EXIT_DISC max', ctx: AS2, wire: hex`80 04 04 ffffffff`, attr: b.med(4294967295) },
  { name: 'LOCAL_PREF', ctx: AS2, wire: hex`40 05 04 00000064`, attr: b.localPref(100) },
  { name: 'ATOMIC_AGGREGATE', ctx: AS2, wire: hex`40 06 00`, attr: b.atomicAggregate() },
  { name: 'AGGREGATOR 2-octet', ctx: AS2, wire: hex`c0 07 06 fde8 c0000201`, attr: b.aggregator(65000, '192.0.2.1') },
  { name: 'AGGREGATOR 4-octet', ctx: AS4, wire: hex`c0 07 08 00010000 c0000201`, attr: b.aggregator(65536, '192.0.2.1') },
  { name: 'COMMUNITIES with well-known (RFC 1997, RFC 8326)', ctx: AS2, wire: hex`c0 08 0c fde80001 ffff0000 ffffff02`, attr: b.communities(['65000:1', 'GRACEFUL_SHUTDOWN', 'no-advertise']) },
  { name: 'ORIGINATOR_ID (RFC 4456)', ctx: AS2, wire: hex`80 09 04 0a000001`, attr: { type: 'ORIGINATOR_ID', flags: 0x80, originatorId: '10.0.0.1' } },
  { name: 'CLUSTER_LIST (RFC 4456)', ctx: AS2, wire: hex`80 0a 04 0a0000fe`, attr: { type: 'CLUSTER_LIST', flags: 0x80, clusterIds: ['10.0.0.254'] } },
  {
    name: 'MP_REACH_NLRI IPv4 with an IPv6 next hop (RFC 8950)',
    ctx: AS4,
    wire: hex`80 0e 19  0001 01 10 20010db8000000000000000000000001 00  18 c00002`,
    attr: b.mpReach('ipv4-unicast', ['2001:db8::1'], ['192.0.2.0/24']),
  },
  {
    name: 'MP_REACH_NLRI IPv6, 16-octet next hop, ADD-PATH',
    ctx: AP,
    wire: hex`80 0e 20  0002 01 10 20010db8000000000000000000000001 00  0000000a 30 20010db80001`,
    attr: b.mpReach('ipv6-unicast', ['2001:db8::1'], [{ prefix: '2001:db8:1::/48', pathId: 10 }]),
  },
  { name: 'MP_UNREACH_NLRI IPv4 (RFC 4760 §4)', ctx: AS4, wire: hex`80 0f 05 0001 01 08 0a`, attr: b.mpUnreach('ipv4-unicast', ['10.0.0.0/8']) },
  {
    name: 'EXTENDED_COMMUNITIES (RFC 4360) route target + opaque',
    ctx: AS2,
    wire: hex`c0 10 10 0002fde800000064 4300000000000000`,
    attr: b.extendedCommunities([b.routeTarget(65000, 100), '4300000000000000']),
  },
  { name: 'AS4_PATH (RFC 6793 §3)', ctx: AS2, wire: hex`c0 11 06 02 01 00030d40`, attr: { type: 'AS4_PATH', flags: 0xc0, segments: [{ type: 2, asns: [200000] }] } },
  { name: 'AS4_AGGREGATOR (RFC 6793 §3)', ctx: AS2, wire: hex`c0 12 08 00030d40 c0000201`, attr: { type: 'AS4_AGGREGATOR', flags: 0xc0, asNumber: 200000, address: '192.0.2.1' } },
  { name: 'LARGE_COMMUNITY (RFC 8092)', ctx: AS2, wire: hex`c0 20 0c 0000fde8 00000001 00000002`, attr: b.largeCommunities(['65000:1:2']) },
  { name: 'unknown optional transitive, Partial (type 40 PREFIX_SID)', ctx: AS2, wire: hex`e0 28 02 0102`, attr: { type: 'UNKNOWN', flags: 0xe0, typeCode: 40, value: Buffer.from([1, 2]) } },
  { name: 'unknown with Extended Length and a short value', ctx: AS2, wire: hex`d0 fe 0001 aa`, attr: { type: 'UNKNOWN', flags: 0xd0, typeCode: 254, value: Buffer.from([0xaa]) } },
  {
    name: 'IPv6 Address Specific Extended Community (RFC 5701 §2) route target',
    ctx: AS2,
    wire: hex`c0 19 14 0002 20010db8000000000000000000000001 0064`,
    attr: b.ipv6ExtendedCommunities(['000220010db80000000000000000000000010064']),
  },
];

/** A whole UPDATE holding only `attr` (no NLRI, so no mandatory attributes are needed). */
function inUpdate(wire: Buffer): Buffer {
  return message(2, u16(0), u16(wire.length), wire);
}

for (const v of vectors) {
  t.test(`${v.name}: quad`, async (t) => {
    const decoded = decodePathAttributes(v.wire, v.ctx);
    t.same(decoded, [v.attr], 'decode equals the object');
    t.equal(toHex(encodePathAttributes([v.attr], v.ctx)), toHex(v.wire), 'encode equals the bytes');
    t.same(decodePathAttributes(encodePathAttributes(decoded, v.ctx), v.ctx), decoded, 'round trip');
    const m = decodeMessage(inUpdate(v.wire), v.ctx);
    t.same(m.type === 'UPDATE' ? m.pathAttributes : undefined, [v.attr], 'decodeMessage');
  });
}
t.equal(vectors.length, 24, 'attribute vectors');

t.test('attribute order and flags are kept exactly as received', async (t) => {
  const wire = Buffer.concat([vectors[5], vectors[0], vectors[21], vectors[2]].map((v) => (v as Vector).wire));
  const attrs = decodePathAttributes(wire, AS2);
  t.same(attrs.map((a) => a.type), ['NEXT_HOP', 'ORIGIN', 'UNKNOWN', 'AS_PATH']);
  t.equal(toHex(encodePathAttributes(attrs, AS2)), toHex(wire));
});

// -------------------------------------------------------------------------------------------------------------
// Per-attribute errors: [name, ctx, attribute bytes, strict subcode, strict data ('attr' = the attribute), 7606 action]

type Action = 'treat-as-withdraw' | 'attribute-discard' | 'session-reset' | 'ignored';
const errorCases: [string, CodecContext, Buffer, number, 'attr' | 'none' | string, Action][] = [
  ['ORIGIN length 0', AS2, hex`40 01 00`, 5, 'attr', 'treat-as-withdraw'],
  ['ORIGIN flags optional', AS2, hex`80 01 01 00`, 4, 'attr', 'treat-as-withdraw'],
  ['ORIGIN value 7', AS2, hex`40 01 01 07`, 6, 'attr', 'treat-as-withdraw'],
  ['AS_PATH flags optional', AS2, hex`c0 02 00`, 4, 'attr', 'treat-as-withdraw'],
  ['AS_PATH zero-length segment', AS2, hex`40 02 02 02 00`, 11, 'none', 'treat-as-withdraw'],
  ['NEXT_HOP length 5', AS2, hex`40 03 05 0a00000100`, 5, 'attr', 'treat-as-withdraw'],
  ['NEXT_HOP 0.0.0.0', AS2, hex`40 03 04 00000000`, 8, 'attr', 'treat-as-withdraw'],
  ['NEXT_HOP 255.255.255.255', AS2, hex`40 03 04 ffffffff`, 8, 'attr', 'treat-as-withdraw'],
  ['MED flags well-known', AS2, hex`40 04 04 00000001`, 4, 'attr', 'treat-as-withdraw'],
  ['LOCAL_PREF length 2', AS2, hex`40 05 02 0001`, 5, 'attr', 'treat-as-withdraw'],
  ['ATOMIC_AGGREGATE length 1', AS2, hex`40 06 01 00`, 5, 'attr', 'attribute-discard'],
  ['AGGREGATOR 6 octets on a 4-octet session', AS4, hex`c0 07 06 fde8 c0000201`, 5, 'attr', 'attribute-discard'],
  ['AGGREGATOR flags well-known', AS2, hex`40 07 06 fde8 c0000201`, 4, 'attr', 'attribute-discard'],
  ['COMMUNITIES length 0 (RFC 7606 §7.8)', AS2, hex`c0 08 00`, 5, 'attr', 'treat-as-withdraw'],
  ['COMMUNITIES length 6', AS2, hex`c0 08 06 000100020003`, 5, 'attr', 'treat-as-withdraw'],
  ['ORIGINATOR_ID length 3', AS2, hex`80 09 03 0a0000`, 5, 'attr', 'treat-as-withdraw'],
  ['CLUSTER_LIST length 5', AS2, hex`80 0a 05 0a00000101`, 5, 'attr', 'treat-as-withdraw'],
  ['EXTENDED_COMMUNITIES length 7', AS2, hex`c0 10 07 00020000000000`, 5, 'attr', 'treat-as-withdraw'],
  ['AS4_AGGREGATOR length 6', AS2, hex`c0 12 06 fde8 c0000201`, 5, 'attr', 'attribute-discard'],
  ['LARGE_COMMUNITY length 8', AS2, hex`c0 20 08 0000000100000002`, 5, 'attr', 'treat-as-withdraw'],
  ['MP_REACH_NLRI shorter than 5', AS4, hex`80 0e 03 000201`, 9, 'attr', 'session-reset'],
  ['MP_REACH_NLRI next hop length 12 for IPv6 unicast', AS4, hex`80 0e 11 0002 01 0c 000000000000000000000000 00`, 9, 'attr', 'session-reset'],
  ['MP_UNREACH_NLRI shorter than 3', AS4, hex`80 0f 02 0002`, 9, 'attr', 'session-reset'],
  ['MP_UNREACH_NLRI bad prefix', AS4, hex`80 0f 05 0001 01 21 0a`, 10, 'none', 'session-reset'],
  ['MP_REACH_NLRI flags transitive', AS4, hex`c0 0e 05 0001 01 00 00`, 4, 'attr', 'session-reset'],
  ['ORIGIN with the Partial bit (RFC 4271 §4.3)', AS2, hex`60 01 01 00`, 4, 'attr', 'ignored'],
  ['MULTI_EXIT_DISC with the Partial bit', AS2, hex`a0 04 04 00000001`, 4, 'attr', 'ignored'],
];

for (const [name, ctx, attr, subcode, data, action] of errorCases) {
  t.test(`${name}: strict 3/${subcode}, RFC 7606 ${action}`, async (t) => {
    // Inside a complete UPDATE with NLRI and the mandatory attributes (the bad one replaces its own type).
    const code = attr[1] as number;
    const base = [hex`40 01 01 00`, ctx.fourOctetAs ? hex`40 02 06 02 01 0000fde8` : hex`40 02 04 02 01 fde8`, hex`40 03 04 c0000201`];
    const others = base.filter((a) => a[1] !== code);
    const attrs = Buffer.concat([...others, attr]);
    const body = bytes(u16(0), u16(attrs.length), attrs, [0x18, 198, 51, 100]);
    const e = validateUpdateStrict(body, ctx);
    t.same(
      { code: e?.code, subcode: e?.subcode, data: e ? toHex(e.data) : '' },
      { code: 3, subcode, data: data === 'attr' ? toHex(attr) : data === 'none' ? '' : data },
      'strict NOTIFICATION',
    );
    if (action === 'session-reset') {
      t.throws(() => decodeUpdate(body, ctx), BgpError, 'decodeUpdate throws');
      t.throws(() => decodePathAttributes(attr, ctx), BgpError, 'decodePathAttributes throws');
      return;
    }
    const r = decodeUpdate(body, ctx);
    t.equal(r.treatAsWithdraw, action === 'treat-as-withdraw', 'treat-as-withdraw flag');
    t.same(r.discardedAttributes, action === 'attribute-discard' ? [code] : [], 'discarded attributes');
    t.equal(r.problems.length, 1, 'one problem reported');
    if (action === 'ignored') t.ok(r.message.pathAttributes.some((a) => a.type !== 'UNKNOWN' && a.flags === attr[0]), 'the attribute is used as received');
    const walk = walkAttributes(attr, 0, attr.length, ctx);
    t.equal(walk.issues[0]?.action, action, 'walker action');
  });
}

t.test('RFC 7606 §4 (Herald: reset): attribute header or value overrunning the list → 3/1', async (t) => {
  for (const wire of [hex`40`, hex`40 01`, hex`50 01 00`, hex`40 01 02 00`, hex`50 02 0100 00`]) {
    t.throws(() => decodePathAttributes(wire, AS2), { code: 3, subcode: 1 }, toHex(wire));
  }
});

// -------------------------------------------------------------------------------------------------------------
// MRT (RFC 6396 §4.3.4)

t.test('MRT RIB entry: abbreviated MP_REACH_NLRI (next-hop length + next hop), IPv6 32 octets', async (t) => {
  const wire = hex`80 0e 21 20 20010db8000000000000000000000001 fe800000000000000000000000000001`;
  const attrs = decodePathAttributes(wire, AS4, { mrtRibEntry: true });
  t.same(attrs, [{ type: 'MP_REACH_NLRI', flags: 0x80, afi: 2, safi: 1, nextHops: ['2001:db8::1', 'fe80::1'], nlri: [], mrtAbbreviated: true }]);
  t.equal(toHex(encodePathAttributes(attrs, AS4)), toHex(wire), 're-encodes in the abbreviated form');
  t.match(decodePathAttributes(wire, AS4), [{ afi: 0x2020, safi: 1, raw: Buffer }], 'outside MRT it reads as the full form (an unknown AFI, kept raw)');
});

t.test('MRT RIB entry: abbreviated MP_REACH_NLRI with an IPv4 next hop', async (t) => {
  const wire = hex`80 0e 05 04 c0000201`;
  t.same(decodePathAttributes(wire, AS4, { mrtRibEntry: true }), [
    { type: 'MP_REACH_NLRI', flags: 0x80, afi: 1, safi: 1, nextHops: ['192.0.2.1'], nlri: [], mrtAbbreviated: true },
  ]);
});

t.test('MRT RIB entry: the full form (quagga, RIS) is accepted too', async (t) => {
  const wire = hex`80 0e 1a 0002 01 10 20010db8000000000000000000000001 00 20 20010db8`;
  const attrs = decodePathAttributes(wire, AS4, { mrtRibEntry: true });
  t.same(attrs, [b.mpReach('ipv6-unicast', ['2001:db8::1'], ['2001:db8::/32'])]);
  t.equal(toHex(encodePathAttributes(attrs, AS4)), toHex(wire));
});

t.test('MP_REACH_NLRI with a non-zero Reserved octet keeps raw and re-encodes exactly', async (t) => {
  const wire = hex`80 0e 1a 0002 01 10 20010db8000000000000000000000001 01 20 20010db8`;
  const [a] = decodePathAttributes(wire, AS4);
  t.match(a, { type: 'MP_REACH_NLRI', nextHops: ['2001:db8::1'], nlri: [{ prefix: '2001:db8::/32' }] });
  t.equal(toHex(encodePathAttributes([a as PathAttribute], AS4)), toHex(wire));
});

// -------------------------------------------------------------------------------------------------------------
// Builders and community text

t.test('community text (RFC 1997, RFC 8092)', async (t) => {
  t.equal(b.parseCommunity('65535:0'), 0xffff0000);
  t.equal(b.parseCommunity('GRACEFUL_SHUTDOWN'), 0xffff0000);
  t.equal(b.parseCommunity('no-export'), 0xffffff01);
  t.equal(b.parseCommunity('NO_EXPORT_SUBCONFED'), 0xffffff03);
  t.equal(b.parseCommunity('blackhole'), 0xffff029a);
  // Names configs use for RFC 7611 ACCEPT_OWN and RFC 3765 NOPEER.
  t.equal(b.parseCommunity('accept-own'), 0xffff0001);
  t.equal(b.parseCommunity('no-peer'), 0xffffff04);
  t.equal(b.parseCommunity('NOPEER'), 0xffffff04);
  t.equal(b.parseCommunity('4294967295'), 0xffffffff);
  t.equal(b.parseCommunity('65000:100'), (65000 * 65536 + 100) >>> 0);
  t.throws(() => b.parseCommunity('65536:1'));
  t.throws(() => b.parseCommunity('1:2:3'));
  t.throws(() => b.parseCommunity('NO_SUCH'));
  t.equal(b.formatCommunity(0xffffff01), '65535:65281');
  t.equal(b.formatCommunity(b.parseCommunity('1:2')), '1:2');
  t.same(b.parseLargeCommunity('4294967295:0:1'), [4294967295, 0, 1]);
  t.throws(() => b.parseLargeCommunity('4294967296:0:1'));
  t.throws(() => b.parseLargeCommunity('1:2'));
  t.equal(b.formatLargeCommunity([1, 2, 3]), '1:2:3');
});

t.test('builders: RFC default flags and validation', async (t) => {
  t.equal(b.origin('IGP').flags, 0x40);
  t.equal(b.med(1).flags, 0x80);
  t.equal(b.communities([1]).flags, 0xc0);
  t.equal(b.mpUnreach('ipv6-unicast', []).flags, 0x80);
  t.same(b.nextHop('192.000.2.1'.replace('000', '0')), { type: 'NEXT_HOP', flags: 0x40, nextHop: '192.0.2.1' });
  t.same(b.mpReach('ipv6-unicast', ['2001:DB8::1'], ['2001:db8::1/32']).nlri, [{ prefix: '2001:db8::/32' }], 'canonical prefixes');
  t.throws(() => b.nextHop('2001:db8::1'));
  t.throws(() => b.med(-1));
  t.throws(() => b.localPref(2 ** 32));
  t.throws(() => b.communities([]));
  t.throws(() => b.mpReach('ipv6-unicast', ['2001:db8::1'], ['10.0.0.0/8']));
  t.throws(() => b.mpReach('ipv6-unicast', ['192.0.2.1', 'fe80::1'], []));
  t.throws(() => b.asPath([{ type: 2, asns: [] }]));
  t.throws(() => b.extendedCommunities(['0002']));
});

// -------------------------------------------------------------------------------------------------------------
// JSON view

t.test('attributesToJson / updateToJson: documented field names', async (t) => {
  const attrs: PathAttribute[] = [
    b.origin('EGP'),
    b.asPath([{ type: 2, asns: [1, 2] }, { type: 1, asns: [3, 4] }]),
    b.nextHop('192.0.2.1'),
    b.med(5),
    b.localPref(100),
    b.atomicAggregate(),
    b.aggregator(65000, '192.0.2.9'),
    b.communities(['65000:1', 'NO_EXPORT']),
    { type: 'ORIGINATOR_ID', flags: 0x80, originatorId: '10.0.0.1' },
    { type: 'CLUSTER_LIST', flags: 0x80, clusterIds: ['10.0.0.2'] },
    b.mpReach('ipv6-unicast', ['2001:db8::1', 'fe80::1'], [{ prefix: '2001:db8::/32', pathId: 3 }]),
    b.mpUnreach('ipv6-unicast', ['2001:db8:1::/48']),
    b.extendedCommunities([b.routeTarget(65000, 7), 'ff00000000000001']),
    { type: 'AS4_PATH', flags: 0xc0, segments: [{ type: 2, asns: [70000] }] },
    { type: 'AS4_AGGREGATOR', flags: 0xc0, asNumber: 70000, address: '192.0.2.9' },
    b.largeCommunities(['1:2:3']),
    { type: 'UNKNOWN', flags: 0xe0, typeCode: 99, value: Buffer.from('0a0b', 'hex') },
  ];
  t.same(attributesToJson(attrs), {
    origin: 'EGP',
    asPath: [
      { type: 'AS_SEQUENCE', asns: [1, 2] },
      { type: 'AS_SET', asns: [3, 4] },
    ],
    asPathString: '1 2 {3,4}',
    nextHop: '192.0.2.1',
    med: 5,
    localPref: 100,
    atomicAggregate: true,
    aggregator: { asNumber: 65000, address: '192.0.2.9' },
    communities: ['65000:1', '65535:65281'],
    originatorId: '10.0.0.1',
    clusterList: ['10.0.0.2'],
    mpReach: { afi: 2, safi: 1, nextHops: ['2001:db8::1', 'fe80::1'], nlri: ['2001:db8::/32'], nlriPathIds: [3] },
    mpUnreach: { afi: 2, safi: 1, withdrawnRoutes: ['2001:db8:1::/48'] },
    extendedCommunities: [{ type: 0, subtype: 2, kind: 'route-target', transitive: true, value: '65000:7' }, 'ff00000000000001'],
    as4Path: [{ type: 'AS_SEQUENCE', asns: [70000] }],
    as4PathString: '70000',
    as4Aggregator: { asNumber: 70000, address: '192.0.2.9' },
    largeCommunities: ['1:2:3'],
    unknownAttributes: [{ typeCode: 99, flags: 0xe0, value: '0a0b' }],
  });
  t.same(updateToJson(b.update({ withdrawnRoutes: [{ prefix: '10.0.0.0/8', pathId: 1 }], nlri: ['10.1.0.0/16'] })), {
    withdrawnRoutes: ['10.0.0.0/8'],
    nlri: ['10.1.0.0/16'],
    withdrawnPathIds: [1],
  });
  t.same(updateToJson(b.endOfRib('ipv6-unicast')), {
    withdrawnRoutes: [],
    nlri: [],
    mpUnreach: { afi: 2, safi: 1, withdrawnRoutes: [] },
    endOfRib: 'ipv6-unicast',
  });
  t.same(JSON.parse(JSON.stringify(attributesToJson(attrs))), attributesToJson(attrs), 'plain JSON values only');
});

t.test('attributesJsonText / updateJsonText: the JSON view as text, in field order; repeated types: the first wins', async (t) => {
  const attrs: PathAttribute[] = [
    b.origin('IGP'),
    b.asPath([{ type: 2, asns: [65001, 65002] }, { type: 1, asns: [7, 8] }]),
    b.nextHop('192.0.2.1'),
    { type: 'UNKNOWN', flags: 0xc0, typeCode: 99, value: Buffer.from('01', 'hex') },
    b.communities(['65000:1']),
    b.communities(['65000:2']),
    b.med(0),
    { type: 'UNKNOWN', flags: 0xe0, typeCode: 98, value: Buffer.alloc(0) },
    b.origin('EGP'),
  ];
  t.equal(
    attributesJsonText(attrs),
    '{"origin":"IGP","asPath":[{"type":"AS_SEQUENCE","asns":[65001,65002]},{"type":"AS_SET","asns":[7,8]}],"asPathString":"65001 65002 {7,8}",' +
      '"nextHop":"192.0.2.1","communities":["65000:1"],"med":0,' +
      '"unknownAttributes":[{"typeCode":99,"flags":192,"value":"01"},{"typeCode":98,"flags":224,"value":""}]}',
  );
  t.equal(attributesJsonText([]), '{}', 'no attributes: an empty object');
  t.equal(updateJsonText(b.update({ nlri: [] })), '{"withdrawnRoutes":[],"nlri":[],"endOfRib":"ipv4-unicast"}');
  t.equal(
    updateJsonText(b.update({ withdrawnRoutes: [{ prefix: '10.0.0.0/8', pathId: 1 }], nlri: [{ prefix: '10.1.0.0/16', pathId: 2 }, '10.2.0.0/16'] })),
    '{"withdrawnRoutes":["10.0.0.0/8"],"nlri":["10.1.0.0/16","10.2.0.0/16"],"withdrawnPathIds":[1],"nlriPathIds":[2,0]}',
    'ADD-PATH ids; an entry without one counts as 0',
  );
  for (const text of [attributesJsonText(attrs), updateJsonText(b.endOfRib('ipv6-unicast'))]) {
    t.equal(JSON.stringify(JSON.parse(text)), text, 'exactly what JSON.stringify prints for the parsed view');
  }
  t.same(attributesToJson(attrs), JSON.parse(attributesJsonText(attrs)), 'the object view is the text parsed');
});
