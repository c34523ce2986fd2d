/**
 * Extended communities (bgp/codec/ext-communities.ts): the typed view of every layout (RFC 4360 §3, RFC 5668 §2,
 * RFC 5701 §2), the named sub-types, link bandwidth (RFC 10005) with its float32 rounding and limits, the builders'
 * errors, the JSON forms, the RFC 7606 §7.14 / §7.15 outcomes of bad lengths and flags, and property round trips
 * (bytes → view → builder → the same bytes).
 */
import t from 'tap';
import fc from 'fast-check';
import * as b from '../../../bgp/codec/build.ts';
import * as ec from '../../../bgp/codec/ext-communities.ts';
import { attributesToJson, extendedCommunityToJson, ipv6ExtendedCommunityToJson } from '../../../bgp/codec/attributes-json.ts';
import { decodeUpdate, encodeUpdate, validateUpdateStrict } from '../../../bgp/codec/update.ts';
import type { CodecContext } from '../../../bgp/codec/types.ts';
import { hex, toHex } from '../../helpers/hex.ts';
import { bytes, u16 } from '../../helpers/wire.ts';

const AS4: CodecContext = { fourOctetAs: true, extendedMessage: false, addPath: {} };
const raw = (h: string) => ec.extendedCommunityFromBytes(Buffer.from(h, 'hex'));
const raw6 = (h: string) => ec.ipv6ExtendedCommunityFromBytes(Buffer.from(h, 'hex'));

t.test('views of each RFC 4360 / RFC 5668 layout', async (t) => {
  t.same(ec.extendedCommunityView(raw('0002fde800000064')), { layout: 'two-octet-as', transitive: true, subtype: 2, globalAdministrator: 65000, localAdministrator: 100 });
  t.same(ec.extendedCommunityView(raw('4003fde8ffffffff')), { layout: 'two-octet-as', transitive: false, subtype: 3, globalAdministrator: 65000, localAdministrator: 4294967295 });
  t.same(ec.extendedCommunityView(raw('0103c00002010007')), { layout: 'ipv4-address', transitive: true, subtype: 3, globalAdministrator: '192.0.2.1', localAdministrator: 7 });
  t.same(ec.extendedCommunityView(raw('0202fa56ea000005')), { layout: 'four-octet-as', transitive: true, subtype: 2, globalAdministrator: 4200000000, localAdministrator: 5 });
  const o = ec.extendedCommunityView(raw('4300000000000002'));
  t.same({ ...o, value: o.layout === 'opaque' ? toHex(o.value) : '' }, { layout: 'opaque', transitive: false, subtype: 0, value: '000000000002' });
  // EVPN (0x06), flowspec redirect (0x80, IANA bit): laid out as 'other' with the 7 octets after Type.
  const evpn = ec.extendedCommunityView(raw('0600000000000a0b'));
  t.same({ ...evpn, value: evpn.layout === 'other' ? toHex(evpn.value) : '' }, { layout: 'other', transitive: true, type: 6, value: '00000000000a0b' });
  t.equal(ec.extendedCommunityView(raw('8008fde800000001')).layout, 'other', 'the IANA authority bit is another registry');
});

t.test('named sub-types: route target, route origin, link bandwidth', async (t) => {
  const rows: [string, ec.ExtCommunityKind | undefined][] = [
    ['0002fde800000064', 'route-target'],
    ['4002fde800000064', 'route-target'],
    ['0102c00002010007', 'route-target'],
    ['0203fa56ea000005', 'route-origin'],
    ['4004fde947f42400', 'link-bandwidth'],
    ['0004fde947f42400', 'link-bandwidth'],
    ['0104c00002010007', undefined], // 0x04 on the IPv4 layout is not link bandwidth
    ['0204fa56ea000005', undefined], // nor on the four-octet AS layout (IANA: "Generic (deprecated)")
    ['0302000000000000', undefined], // opaque 0x02 is not a route target
    ['8002fde800000064', undefined],
    ['0005fde800000064', undefined],
  ];
  for (const [h, kind] of rows) t.equal(ec.extendedCommunityKind(raw(h)), kind, h);
  t.equal(ec.ipv6ExtendedCommunityKind(raw6('000220010db80000000000000000000000010064')), 'route-target');
  t.equal(ec.ipv6ExtendedCommunityKind(raw6('400320010db80000000000000000000000010064')), 'route-origin');
  t.equal(ec.ipv6ExtendedCommunityKind(raw6('000b20010db80000000000000000000000010064')), undefined, 'VRF route import (RFC 6515) is not named');
  t.equal(ec.ipv6ExtendedCommunityKind(raw6('010220010db80000000000000000000000010064')), undefined, 'type 0x01 is not RFC 5701');
});

t.test('link bandwidth (RFC 10005): layout, float32 bytes/s, AS_TRANS, both transitivities', async (t) => {
  const nt = ec.linkBandwidth(65001, 125_000, false);
  t.equal(toHex(nt.value), '4004fde947f42400', 'non-transitive 0x40/0x04, AS 65001, 125000 as IEEE 754 single');
  t.same(ec.linkBandwidthOf(nt), { asNumber: 65001, bytesPerSecond: 125_000, transitive: false });
  const tr = ec.linkBandwidth(65001, 125_000_000);
  t.equal(toHex(tr.value), '0004fde94cee6b28', 'transitive by default: 0x00/0x04');
  t.same(ec.linkBandwidthOf(tr), { asNumber: 65001, bytesPerSecond: 125_000_000, transitive: true });
  t.equal(toHex(ec.linkBandwidth(4200000000, 1).value).slice(0, 8), '00045ba0', 'a four-octet AS is written as AS_TRANS 23456');
  t.equal(ec.linkBandwidthOf(ec.linkBandwidth(1, 16_777_217))?.bytesPerSecond, 16_777_216, 'rounded to the nearest float32');
  t.equal(ec.linkBandwidthOf(ec.linkBandwidth(1, 0.1))?.bytesPerSecond, Math.fround(0.1));
  t.equal(toHex(ec.linkBandwidth(1, -0).value), '0004000100000000', '-0 is written as +0');
  t.equal(ec.linkBandwidthOf(ec.linkBandwidth(1, 3.4028234663852886e38))?.bytesPerSecond, 3.4028234663852886e38, 'the largest float32');
  t.throws(() => ec.linkBandwidth(1, 3.5e38), /exceeds the largest IEEE 754/);
  t.throws(() => ec.linkBandwidth(1, -1), /finite number of bytes per second >= 0/);
  t.throws(() => ec.linkBandwidth(1, Number.NaN), /finite/);
  t.throws(() => ec.linkBandwidth(1, Number.POSITIVE_INFINITY), /finite/);
  t.throws(() => ec.linkBandwidth(-1, 1), /link bandwidth AS/);
  t.equal(ec.linkBandwidthOf(raw('0002fde800000064')), undefined, 'a route target is not a link bandwidth');
  t.equal(ec.linkBandwidthOf(raw('0104c00002010007')), undefined);
  t.ok(Number.isNaN(ec.linkBandwidthOf(raw('4004fde97fc00000'))?.bytesPerSecond), 'a NaN from a peer is read as it is');
});

t.test('builders reject out-of-range fields with a plain Error', async (t) => {
  t.throws(() => ec.twoOctetAsSpecific(2, 65536, 1), /Global Administrator must be an integer in 0\.\.65535/);
  t.throws(() => ec.twoOctetAsSpecific(2, 1, 2 ** 32), /Local Administrator must be an integer in 0\.\.4294967295/);
  t.throws(() => ec.twoOctetAsSpecific(256, 1, 1), /sub-type/);
  t.throws(() => ec.fourOctetAsSpecific(2, 2 ** 32, 1), /0\.\.4294967295/);
  t.throws(() => ec.fourOctetAsSpecific(2, 1, 65536), /Local Administrator must be an integer in 0\.\.65535/);
  t.throws(() => ec.ipv4AddressSpecific(2, '192.0.2.256', 1));
  t.throws(() => ec.ipv4AddressSpecific(2, '192.0.2.1', 1.5), /integer/);
  t.throws(() => ec.ipv6AddressSpecific(2, '2001:db8::g', 1));
  t.throws(() => ec.opaque(0, Buffer.alloc(5)), /6 octets/);
  t.throws(() => ec.extendedCommunityFromBytes(Buffer.alloc(7)), /8 octets/);
  t.throws(() => ec.ipv6ExtendedCommunityFromBytes(Buffer.alloc(8)), /20 octets/);
  t.throws(() => b.extendedCommunities(['0002']), /16 hex digits/);
  t.throws(() => b.ipv6ExtendedCommunities([]), /at least one/);
  t.throws(() => b.ipv6ExtendedCommunities(['00']), /40 hex digits/);
  t.equal(toHex(ec.ipv4AddressSpecific(3, '192.0.2.1', 7, false).value), '4103c00002010007');
  t.equal(toHex(ec.fourOctetAsSpecific(2, 4200000000, 5, false).value), '4202fa56ea000005');
  t.equal(toHex(ec.ipv6AddressSpecific(2, '2001:db8::1', 100, false).value), '400220010db80000000000000000000000010064');
  t.equal(toHex(b.routeTarget(65000, 100)), '0002fde800000064', 'build.routeTarget is the two-octet AS route target');
});

t.test('JSON forms (docs/codec.md)', async (t) => {
  t.same(extendedCommunityToJson(raw('0002fde800000064')), { type: 0, subtype: 2, kind: 'route-target', transitive: true, value: '65000:100' });
  t.same(extendedCommunityToJson(raw('0103c00002010007')), { type: 1, subtype: 3, kind: 'route-origin', transitive: true, value: '192.0.2.1:7' });
  t.same(extendedCommunityToJson(raw('4202fa56ea000005')), { type: 0x42, subtype: 2, kind: 'route-target', transitive: false, value: '4200000000:5' });
  t.same(extendedCommunityToJson(raw('4004fde947f42400')), {
    type: 0x40,
    subtype: 4,
    kind: 'link-bandwidth',
    transitive: false,
    value: '65001:125000',
    asNumber: 65001,
    bytesPerSecond: 125000,
  });
  t.equal(extendedCommunityToJson(raw('4300000000000002')), '4300000000000002', 'unnamed: 16 hex digits');
  t.equal(extendedCommunityToJson(raw('8008fde800000001')), '8008fde800000001');
  t.same(ipv6ExtendedCommunityToJson(raw6('000220010db80000000000000000000000010064')), {
    type: 0,
    subtype: 2,
    kind: 'route-target',
    transitive: true,
    value: '[2001:db8::1]:100',
  });
  t.equal(ipv6ExtendedCommunityToJson(raw6('000b20010db80000000000000000000000010064')), '000b20010db80000000000000000000000010064');
  t.same(attributesToJson([b.ipv6ExtendedCommunities([ec.ipv6AddressSpecific(3, '2001:db8::2', 7, false)])]), {
    ipv6ExtendedCommunities: [{ type: 0x40, subtype: 3, kind: 'route-origin', transitive: false, value: '[2001:db8::2]:7' }],
  });
});

/** An IPv4 UPDATE body: ORIGIN, AS_PATH 65000 (4-octet), NEXT_HOP, `extra`, NLRI 198.51.100.0/24. */
function body(extra: Buffer): Buffer {
  const attrs = bytes([0x40, 1, 1, 0], [0x40, 2, 6, 2, 1, 0, 0, 0xfd, 0xe8], [0x40, 3, 4, 192, 0, 2, 1], extra);
  return bytes(u16(0), u16(attrs.length), attrs, [24, 198, 51, 100]);
}

t.test('RFC 7606 §7.14 / §7.15: a zero length is malformed too (treat-as-withdraw, kept raw)', async (t) => {
  for (const [name, attr] of [
    ['EXTENDED_COMMUNITIES', hex`c0 10 00`],
    ['IPV6_ADDRESS_SPECIFIC_EXTENDED_COMMUNITY', hex`c0 19 00`],
  ] as const) {
    const m = body(attr);
    const r = decodeUpdate(m, AS4);
    t.equal(r.treatAsWithdraw, true, `${name}: treat-as-withdraw`);
    t.match(r.problems[0], new RegExp(`${name} length 0, expected a non-zero multiple`));
    t.same(r.message.pathAttributes[3], { type: 'UNKNOWN', flags: 0xc0, typeCode: attr[1], value: Buffer.alloc(0) }, 'kept raw');
    t.equal(toHex(encodeUpdate(r.message, AS4)), toHex(m), 're-encodes exactly');
    t.match(validateUpdateStrict(m, AS4), { code: 3, subcode: 5 }, 'strict: Attribute Length Error');
  }
});

t.test('RFC 7606 §3 c: the IPv6 attribute with non-transitive flags is malformed (treat-as-withdraw); strict 3/4', async (t) => {
  const attr = hex`80 19 14 0002 20010db8000000000000000000000001 0064`;
  const m = body(attr);
  t.equal(decodeUpdate(m, AS4).treatAsWithdraw, true);
  const e = validateUpdateStrict(m, AS4);
  t.same({ code: e?.code, subcode: e?.subcode, data: e ? toHex(e.data) : '' }, { code: 3, subcode: 4, data: toHex(attr) });
});

t.test('property: bytes → view → builder gives the same 8 octets, for every laid-out type', async (t) => {
  let checked = 0;
  let other = 0;
  fc.assert(
    fc.property(fc.uint8Array({ minLength: 8, maxLength: 8 }), (bs) => {
      const c = ec.extendedCommunityFromBytes(bs);
      const v = ec.extendedCommunityView(c);
      let rebuilt: Buffer;
      if (v.layout === 'two-octet-as') rebuilt = ec.twoOctetAsSpecific(v.subtype, v.globalAdministrator, v.localAdministrator, v.transitive).value;
      else if (v.layout === 'four-octet-as') rebuilt = ec.fourOctetAsSpecific(v.subtype, v.globalAdministrator, v.localAdministrator, v.transitive).value;
      else if (v.layout === 'ipv4-address') rebuilt = ec.ipv4AddressSpecific(v.subtype, v.globalAdministrator, v.localAdministrator, v.transitive).value;
      else if (v.layout === 'opaque') rebuilt = ec.opaque(v.subtype, v.value, v.transitive).value;
      else rebuilt = Buffer.concat([Buffer.from([v.type]), v.value]);
      if (!rebuilt.equals(c.value)) throw new Error(`${toHex(c.value)} rebuilt as ${toHex(rebuilt)}`);
      const type = bs[0] as number;
      if ((v.layout === 'other') !== ((type & 0x80) !== 0 || (type & 0x3f) > 3)) throw new Error(`${toHex(c.value)}: layout ${v.layout}`);
      if (v.layout === 'other') other++;
      checked++;
    }),
    { numRuns: 2000 },
  );
  t.equal(checked, 2000, 'random communities re-built byte for byte');
  t.ok(other > 0 && other < 2000, 'both laid-out and other types were drawn');
});

t.test('property: IPv6 address specific bytes → view → builder gives the same 20 octets (types 0x00 / 0x40)', async (t) => {
  let checked = 0;
  fc.assert(
    fc.property(fc.constantFrom(0x00, 0x40), fc.uint8Array({ minLength: 19, maxLength: 19 }), (type, rest) => {
      const c = ec.ipv6ExtendedCommunityFromBytes(Buffer.concat([Buffer.from([type]), rest]));
      const v = ec.ipv6ExtendedCommunityView(c);
      const rebuilt = ec.ipv6AddressSpecific(v.subtype, v.globalAdministrator, v.localAdministrator, v.transitive).value;
      if (!rebuilt.equals(c.value)) throw new Error(`${toHex(c.value)} rebuilt as ${toHex(rebuilt)}`);
      checked++;
    }),
    { numRuns: 1000 },
  );
  t.equal(checked, 1000, 'random IPv6 communities re-built byte for byte');
});

t.test('property: link bandwidth keeps Math.fround(bytes/s) and the AS (AS_TRANS above 65535)', async (t) => {
  let checked = 0;
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 0xffffffff }), fc.double({ min: 0, max: 3.4e38, noNaN: true }), fc.boolean(), (as, bw, transitive) => {
      const lb = ec.linkBandwidthOf(ec.linkBandwidth(as, bw, transitive));
      t.same(lb, { asNumber: as > 0xffff ? 23456 : as, bytesPerSecond: Math.fround(bw) === 0 ? 0 : Math.fround(bw), transitive });
      checked++;
    }),
    { numRuns: 500 },
  );
  t.equal(checked, 500, 'random link bandwidths');
});
