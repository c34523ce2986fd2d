/**
 * UPDATE vectors (test/fixtures/bgp/update-*.hex): four tests per valid vector (decode equals the object built
 * independently, encode equals the vector bytes, decode(encode(x)) equals x, decodeMessage on the whole message),
 * and for every error vector the exact RFC 4271 §6.3 NOTIFICATION {code, subcode, data} from validateUpdateStrict
 * plus the RFC 7606 outcome of decodeUpdate (thrown BgpError, treat-as-withdraw or attribute-discard).
 */
import t from 'tap';
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { BgpError } from '../../../bgp/errors.ts';
import { decodeMessage, decodeMessageDetailed } from '../../../bgp/codec/message.ts';
import { decodeUpdate, encodeUpdate, endOfRibFamily, validateUpdateStrict } from '../../../bgp/codec/update.ts';
import * as b from '../../../bgp/codec/build.ts';
import * as ec from '../../../bgp/codec/ext-communities.ts';
import type { CodecContext, PathAttribute, UpdateMessage } from '../../../bgp/codec/types.ts';
import { readHexFixture, toHex } from '../../helpers/hex.ts';
import { bytes, u16, u8 } from '../../helpers/wire.ts';

const dir = fileURLToPath(new URL('../../fixtures/bgp/', import.meta.url));

function ctxOf(directive: string | undefined): CodecContext {
  const d = directive ?? '';
  return {
    fourOctetAs: /\bas4\b/.test(d),
    extendedMessage: false,
    addPath: { ipv4: d.includes('addpath-ipv4'), ipv6: d.includes('addpath-ipv6') },
  };
}

/** Expected decodings, written from the fixture comments with the builders (RFC default flags). */
const expected: Record<string, UpdateMessage> = {
  'update-ipv4-basic': b.update({
    withdrawnRoutes: ['172.16.0.0/12'],
    pathAttributes: [
      b.origin('IGP'),
      b.asSequence([65001, 65002]),
      b.nextHop('192.0.2.1'),
      b.med(100),
      b.localPref(200),
      b.communities(['65001:100', 'NO_EXPORT']),
    ],
    nlri: ['10.0.0.0/8', '192.168.1.0/24'],
  }),
  'update-as4': b.update({
    pathAttributes: [
      b.origin('INCOMPLETE'),
      b.asPath([
        { type: 2, asns: [65536, 4294967294] },
        { type: 1, asns: [1, 2] },
      ]),
      b.nextHop('198.51.100.1'),
      b.atomicAggregate(),
      b.aggregator(65536, '198.51.100.2'),
      b.largeCommunities(['4294967295:4294967295:4294967295', [65536, 1, 2]]),
    ],
    nlri: ['203.0.113.0/24'],
  }),
  'update-as4-path': b.update({
    pathAttributes: [
      b.origin('IGP'),
      b.asSequence([23456, 65001, 23456]),
      b.nextHop('192.0.2.1'),
      b.aggregator(23456, '192.0.2.2'),
      { type: 'AS4_PATH', flags: 0xc0, segments: [{ type: 2, asns: [200000, 65001, 200001] }] },
      { type: 'AS4_AGGREGATOR', flags: 0xc0, asNumber: 200001, address: '192.0.2.2' },
    ],
    nlri: ['10.1.0.0/16'],
  }),
  'update-ipv6-mp': b.update({
    pathAttributes: [
      b.origin('IGP'),
      b.asSequence([65000]),
      b.extendedCommunities([b.routeTarget(65000, 100)]),
      b.mpReach('ipv6-unicast', ['2001:db8::1', 'fe80::1'], ['2001:db8::/32', '2001:db8:1::/48', '2001:db8:ff:8000::/49']),
    ],
  }),
  'update-ext-communities': b.update({
    pathAttributes: [
      b.origin('IGP'),
      b.asSequence([65001]),
      b.nextHop('198.51.100.1'),
      b.extendedCommunities([
        ec.twoOctetAsSpecific(ec.ExtCommunitySubtype.RouteTarget, 65000, 100),
        ec.ipv4AddressSpecific(ec.ExtCommunitySubtype.RouteOrigin, '192.0.2.1', 7),
        ec.fourOctetAsSpecific(ec.ExtCommunitySubtype.RouteTarget, 4200000000, 5),
        ec.opaque(0x00, Buffer.from('000000000002', 'hex'), false),
        ec.linkBandwidth(65001, 125_000, false),
        ec.linkBandwidth(65001, 125_000_000),
      ]),
    ],
    nlri: ['192.0.2.100/32'],
  }),
  'update-ipv6-ext-communities': b.update({
    pathAttributes: [
      b.origin('IGP'),
      b.asSequence([65001]),
      b.mpReach('ipv6-unicast', ['2001:db8::ff'], ['2001:db8::10/128']),
      b.ipv6ExtendedCommunities([
        ec.ipv6AddressSpecific(ec.ExtCommunitySubtype.RouteTarget, '2001:db8::1', 100),
        ec.ipv6AddressSpecific(ec.ExtCommunitySubtype.RouteOrigin, '2001:db8::2', 7, false),
      ]),
    ],
  }),
  'update-ipv6-withdraw': b.update({
    pathAttributes: [b.mpUnreach('ipv6-unicast', ['2001:db8:0:1::/64', '2001:db8::99/128', '::/0'])],
  }),
  'update-eor-ipv6': b.endOfRib('ipv6-unicast'),
  'update-eor-ipv4': b.endOfRib('ipv4-unicast'),
  'update-addpath': b.update({
    withdrawnRoutes: [{ prefix: '192.0.2.0/24', pathId: 7 }],
    pathAttributes: [
      b.origin('IGP'),
      b.asSequence([]),
      b.nextHop('10.0.0.1'),
      b.localPref(100),
      b.mpReach('ipv6-unicast', ['2001:db8::2'], [{ prefix: '2001:db8::/32', pathId: 1 }]),
    ],
    nlri: [
      { prefix: '193.0.2.1/32', pathId: 1 },
      { prefix: '193.0.2.1/32', pathId: 2 },
    ],
  }),
  'update-rr': b.update({
    pathAttributes: [
      b.origin('EGP'),
      { ...b.asSequence([65000]), flags: 0x50 },
      b.nextHop('10.0.0.2'),
      { type: 'ORIGINATOR_ID', flags: 0x80, originatorId: '10.0.0.254' },
      { type: 'CLUSTER_LIST', flags: 0x80, clusterIds: ['1.1.1.1', '2.2.2.2'] },
      { type: 'UNKNOWN', flags: 0xe0, typeCode: 99, value: Buffer.from('aabbcc', 'hex') },
    ],
    nlri: ['10.40.0.0/14'],
  }),
  'update-other-family': b.update({
    pathAttributes: [
      b.origin('IGP'),
      b.asSequence([]),
      {
        type: 'MP_REACH_NLRI',
        flags: 0x80,
        afi: 1,
        safi: 128,
        nextHops: [],
        nlri: [],
        raw: Buffer.from('0001800c0000000000000000c0a80001007004e2c100000064000000640a0000', 'hex'),
      },
    ],
  }),
  'update-confed': b.update({
    pathAttributes: [
      b.origin('IGP'),
      b.asPath([
        { type: 3, asns: [64512, 64513] },
        { type: 4, asns: [64514] },
        { type: 2, asns: [1, 2, 3] },
      ]),
      b.nextHop('192.0.2.1'),
    ],
    nlri: ['0.0.0.0/0'],
  }),
};

const files = readdirSync(dir)
  .filter((f) => f.startsWith('update-') && f.endsWith('.hex'))
  .sort();
const valid = files.filter((f) => !f.startsWith('update-err-'));
const errors = files.filter((f) => f.startsWith('update-err-'));

t.test('fixtures found', async (t) => {
  t.equal(valid.length, 13, 'valid UPDATE vectors');
  t.equal(errors.length, 22, 'error UPDATE vectors');
  t.same(valid.map((f) => f.replace(/\.hex$/, '')).sort(), Object.keys(expected).sort(), 'every valid vector has an expected object');
});

for (const file of valid) {
  const fx = readHexFixture(dir + file);
  const ctx = ctxOf(fx.directives.ctx);
  const body = fx.bytes.subarray(19);
  const want = expected[fx.name] as UpdateMessage;
  t.test(`${fx.name}: RFC 4271 §4.3 quad`, async (t) => {
    const r = decodeUpdate(body, ctx);
    t.same(r.message, want, 'decode equals the object');
    t.equal(r.treatAsWithdraw, false, 'no treat-as-withdraw');
    t.same(r.problems, [], 'no problems');
    t.equal(validateUpdateStrict(body, ctx), undefined, 'strict RFC 4271 validation passes');
    t.equal(toHex(encodeUpdate(want, ctx)), toHex(body), 'encode equals the vector');
    t.same(decodeUpdate(encodeUpdate(r.message, ctx), ctx).message, r.message, 'decode(encode(x)) equals x');
    t.same(decodeMessage(fx.bytes, ctx), want, 'decodeMessage on the whole message');
  });
}

function parseError(d: string): { subcode: number; data: string } {
  const m = /^3\/(\d+)\s*([0-9a-f]*)$/.exec(d.trim());
  if (!m) throw new Error(`bad error directive ${d}`);
  return { subcode: Number(m[1]), data: m[2] ?? '' };
}

for (const file of errors) {
  const fx = readHexFixture(dir + file);
  const ctx = ctxOf(fx.directives.ctx);
  const body = fx.bytes.subarray(19);
  const strict = parseError(fx.directives.strict ?? '');
  const outcome = fx.directives.outcome ?? '';
  t.test(`${fx.name}: RFC 4271 §6.3 → 3/${strict.subcode}; RFC 7606 ${outcome}`, async (t) => {
    const e = validateUpdateStrict(body, ctx);
    t.ok(e instanceof BgpError, 'strict validation returns a BgpError');
    t.same({ code: e?.code, subcode: e?.subcode, data: e ? toHex(e.data) : '' }, { code: 3, subcode: strict.subcode, data: strict.data });
    if (outcome.startsWith('fatal')) {
      const f = parseError(outcome.slice('fatal'.length));
      try {
        decodeUpdate(body, ctx);
        t.fail('decodeUpdate should throw');
      } catch (err) {
        t.ok(err instanceof BgpError, 'throws BgpError');
        const be = err as BgpError;
        t.same({ code: be.code, subcode: be.subcode, data: toHex(be.data) }, { code: 3, subcode: f.subcode, data: f.data });
      }
      t.throws(() => decodeMessageDetailed(fx.bytes, ctx), { code: 3, subcode: f.subcode }, 'decodeMessage throws the same');
    } else {
      const r = decodeUpdate(body, ctx);
      t.ok(r.problems.length > 0, 'problems reported');
      if (outcome === 'treat-as-withdraw') {
        t.equal(r.treatAsWithdraw, true, 'treat-as-withdraw');
        t.ok(r.message.nlri.length > 0, 'the NLRI are still reported (to be withdrawn)');
      } else {
        const m = /^discard (\d+)$/.exec(outcome);
        t.ok(m, 'discard directive');
        t.equal(r.treatAsWithdraw, false, 'not withdrawn');
        t.same(r.discardedAttributes, [Number(m?.[1])], 'discarded attribute type');
        const codes = r.message.pathAttributes.map((a) => a.type);
        t.same(codes.filter((c) => c === 'ORIGIN').length <= 1, true, 'at most one ORIGIN kept');
        t.notOk(codes.includes('AGGREGATOR'), 'a malformed AGGREGATOR is dropped');
      }
      const d = decodeMessageDetailed(fx.bytes, ctx);
      t.equal(d.update?.treatAsWithdraw, r.treatAsWithdraw, 'decodeMessageDetailed reports the same outcome');
    }
  });
}

t.test('RFC 7606 §3 g: the first of repeated attributes wins', async (t) => {
  const fx = readHexFixture(`${dir}update-err-duplicate.hex`);
  const r = decodeUpdate(fx.bytes.subarray(19), ctxOf('as2'));
  t.same(r.message.pathAttributes[0], b.origin('IGP'));
  t.equal(r.message.pathAttributes.length, 3);
});

t.test('RFC 7606: malformed treat-as-withdraw attributes are kept raw (nothing lost), and re-encode exactly', async (t) => {
  const fx = readHexFixture(`${dir}update-err-origin-value.hex`);
  const body = fx.bytes.subarray(19);
  const r = decodeUpdate(body, ctxOf('as2'));
  t.same(r.message.pathAttributes[0], { type: 'UNKNOWN', flags: 0x40, typeCode: 1, value: Buffer.from([3]) });
  t.equal(toHex(encodeUpdate(r.message, ctxOf('as2'))), toHex(body));
});

t.test('RFC 7606 §3 d: missing attributes do not matter without NLRI', async (t) => {
  const body = bytes(u16(4), [0x18, 10, 0, 0], u16(0));
  const r = decodeUpdate(body, ctxOf('as2'));
  t.equal(r.treatAsWithdraw, false);
  t.same(r.message.withdrawnRoutes, [{ prefix: '10.0.0.0/24' }]);
  t.equal(validateUpdateStrict(body, ctxOf('as2')), undefined);
});

t.test('RFC 4760 §3: MP_REACH_NLRI needs ORIGIN and AS_PATH but not NEXT_HOP', async (t) => {
  const ctx = ctxOf('as4');
  const ok = encodeUpdate(b.update({ pathAttributes: [b.origin('IGP'), b.asSequence([1]), b.mpReach('ipv6-unicast', ['2001:db8::1'], ['2001:db8::/48'])] }), ctx);
  t.equal(validateUpdateStrict(ok, ctx), undefined);
  t.equal(decodeUpdate(ok, ctx).treatAsWithdraw, false);
  const missing = encodeUpdate(b.update({ pathAttributes: [b.asSequence([1]), b.mpReach('ipv6-unicast', ['2001:db8::1'], ['2001:db8::/48'])] }), ctx);
  const e = validateUpdateStrict(missing, ctx);
  t.same({ subcode: e?.subcode, data: e ? toHex(e.data) : '' }, { subcode: 3, data: '01' });
  t.equal(decodeUpdate(missing, ctx).treatAsWithdraw, true);
});

t.test('RFC 4271 §6.3: withdrawn routes with a bad prefix → 3/10', async (t) => {
  const body = bytes(u16(2), [0x21, 10], u16(0));
  t.throws(() => decodeUpdate(body, ctxOf('as2')), { code: 3, subcode: 10 });
  t.match(validateUpdateStrict(body, ctxOf('as2')), { code: 3, subcode: 10 });
});

t.test('UPDATE body shorter than 4 octets → 3/1', async (t) => {
  for (const body of [Buffer.alloc(0), Buffer.from([0]), Buffer.from([0, 0, 0])]) {
    t.throws(() => decodeUpdate(body, ctxOf('as2')), { code: 3, subcode: 1 });
  }
});

t.test('RFC 7606 §3 c: a flags error on ATOMIC_AGGREGATE discards it', async (t) => {
  const attrs = bytes([0x40, 1, 1, 0], [0x40, 2, 0], [0x40, 3, 4, 10, 0, 0, 1], [0xc0, 6, 0]);
  const body = bytes(u16(0), u16(attrs.length), attrs, [8, 10]);
  const r = decodeUpdate(body, ctxOf('as2'));
  t.same(r.discardedAttributes, [6]);
  t.equal(r.treatAsWithdraw, false);
  t.notOk(r.message.pathAttributes.some((a) => a.type === 'ATOMIC_AGGREGATE' || a.type === 'UNKNOWN'));
  const e = validateUpdateStrict(body, ctxOf('as2'));
  t.same({ subcode: e?.subcode, data: e ? toHex(e.data) : '' }, { subcode: 4, data: 'c00600' });
});

t.test('RFC 7606 §7.11: MP_UNREACH_NLRI with wrong flags → session reset 3/4 with the attribute', async (t) => {
  const attr = bytes([0x40, 15, 3], u16(2), u8(1));
  const body = bytes(u16(0), u16(attr.length), attr);
  t.throws(() => decodeUpdate(body, ctxOf('as4')), { code: 3, subcode: 4, data: attr });
});

t.test('RFC 6793: AS4_PATH malformed → attribute-discard (RFC 7606), 3/9 strict', async (t) => {
  const as4 = bytes([0xc0, 17, 4, 2, 1, 0, 1]); // claims 1 four-octet AS, has 2 octets
  const attrs = bytes([0x40, 1, 1, 0], [0x40, 2, 4, 2, 1, 0x5b, 0xa0], [0x40, 3, 4, 10, 0, 0, 1], as4);
  const body = bytes(u16(0), u16(attrs.length), attrs, [8, 10]);
  const r = decodeUpdate(body, ctxOf('as2'));
  t.same(r.discardedAttributes, [17]);
  t.equal(r.treatAsWithdraw, false);
  const e = validateUpdateStrict(body, ctxOf('as2'));
  t.same({ subcode: e?.subcode, data: e ? toHex(e.data) : '' }, { subcode: 9, data: toHex(as4) });
});

t.test('RFC 4724 §2: endOfRibFamily', async (t) => {
  t.equal(endOfRibFamily(b.endOfRib('ipv4-unicast')), 'ipv4-unicast');
  t.equal(endOfRibFamily(b.endOfRib('ipv6-unicast')), 'ipv6-unicast');
  const other: PathAttribute = { type: 'MP_UNREACH_NLRI', flags: 0x80, afi: 1, safi: 133, withdrawnRoutes: [], raw: Buffer.from('000185', 'hex') };
  t.equal(endOfRibFamily(b.update({ pathAttributes: [other] })), '1/133');
  t.equal(endOfRibFamily(b.update({ nlri: ['10.0.0.0/8'] })), undefined);
  t.equal(endOfRibFamily(b.update({ pathAttributes: [b.mpUnreach('ipv6-unicast', ['2001:db8::/32'])] })), undefined);
});

t.test('Extended Length: values over 255 octets get the flag; short values keep a received flag', async (t) => {
  const ctx = ctxOf('as4');
  const many = Array.from({ length: 100 }, (_, i) => `10.${i}.0.0/16`);
  const msg = b.update({ pathAttributes: [b.origin('IGP'), b.asSequence([1]), b.mpReach('ipv4-unicast', ['192.0.2.1'], many)] });
  const mp = msg.pathAttributes[2] as PathAttribute;
  t.equal(mp.flags, 0x90, 'builder sets Extended Length for a 309-octet value');
  const enc = encodeUpdate(msg, ctx);
  t.same(decodeUpdate(enc, ctx).message, msg);
  const forced = encodeUpdate(b.update({ pathAttributes: [{ ...b.asSequence(Array.from({ length: 100 }, (_, i) => i)), flags: 0x40 }] }), ctx);
  t.equal(forced[4], 0x50, 'encoder adds Extended Length when the value needs it');
});

t.test('2-octet session: 4-octet ASes encode as AS_TRANS (RFC 6793 §4.2.2)', async (t) => {
  const enc = encodeUpdate(b.update({ pathAttributes: [b.asSequence([65000, 200000]), b.aggregator(200000, '192.0.2.1')] }), ctxOf('as2'));
  const r = decodeUpdate(enc, ctxOf('as2'));
  t.same(r.message.pathAttributes, [b.asSequence([65000, 23456]), b.aggregator(23456, '192.0.2.1')]);
});

t.test('encodeUpdate rejects bad input with a plain Error (never BgpError)', async (t) => {
  const ctx = ctxOf('as2');
  t.throws(() => encodeUpdate({ type: 'UPDATE', withdrawnRoutes: [], pathAttributes: [], nlri: [{ prefix: '2001:db8::/32' }] }, ctx), /not ipv4-unicast/);
  t.throws(() => encodeUpdate({ type: 'UPDATE', withdrawnRoutes: [], pathAttributes: [], nlri: [{ prefix: '10.0.0.0/33' }] }, ctx), /prefix length/);
  t.throws(() => encodeUpdate({ type: 'UPDATE', withdrawnRoutes: [], pathAttributes: [{ type: 'MULTI_EXIT_DISC', flags: 0x80, med: -1 }], nlri: [] }, ctx), RangeError);
});
