/**
 * fast-check properties of the UPDATE codec (architecture guide 6.5.4):
 * - arbitrary valid UPDATEs (any negotiated context) round-trip: decode(encode(m)) deep-equals m, and the bytes
 *   re-encode byte for byte (encode(decode(b)) == b);
 * - arbitrary bytes, and valid UPDATEs with corrupted, truncated or spliced bytes, make decodeUpdate,
 *   decodePathAttributes and decodeMessage either return or throw BgpError — never TypeError/RangeError —
 *   and validateUpdateStrict never throws;
 * - whatever decodeUpdate accepts is a fixed point: decode(encode(decode(b))) equals decode(b);
 * - the JSON text of any UPDATE (messageJsonText, written without objects) is exactly what JSON.stringify prints for
 *   its parsed view, and holds the message's prefixes.
 */
import t from 'tap';
import fc from 'fast-check';
import { BgpError } from '../../../bgp/errors.ts';
import { decodePathAttributes } from '../../../bgp/codec/attributes.ts';
import * as b from '../../../bgp/codec/build.ts';
import { messageJsonText } from '../../../bgp/codec/json.ts';
import { decodeMessage } from '../../../bgp/codec/message.ts';
import { canonicalPrefix, formatIPv4, formatIPv6 } from '../../../bgp/codec/nlri.ts';
import type { AsPathSegment, CodecContext, NlriEntry, PathAttribute, UpdateMessage } from '../../../bgp/codec/types.ts';
import { decodeUpdate, encodeUpdate, validateUpdateStrict } from '../../../bgp/codec/update.ts';
import { message } from '../../helpers/wire.ts';

const ctxArb: fc.Arbitrary<CodecContext> = fc
  .record({ as4: fc.boolean(), ap4: fc.boolean(), ap6: fc.boolean() })
  .map(({ as4, ap4, ap6 }) => ({ fourOctetAs: as4, extendedMessage: true, addPath: { ipv4: ap4, ipv6: ap6 } }));

const u32 = fc.integer({ min: 0, max: 0xffffffff });
/** AS numbers: never 0, which RFC 7607 §2 makes malformed in AS_PATH, AS4_PATH, AGGREGATOR and AS4_AGGREGATOR. */
const as32 = fc.integer({ min: 1, max: 0xffffffff });
const ipv4 = fc.uint8Array({ minLength: 4, maxLength: 4 }).map((a) => formatIPv4(a, 0));
const ipv6 = fc
  .array(fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 0xffff })), { minLength: 8, maxLength: 8 })
  .map((g) => {
    const buf = Buffer.alloc(16);
    g.forEach((v, i) => buf.writeUInt16BE(v, 2 * i));
    return formatIPv6(buf, 0);
  });
const v4prefix = fc.tuple(ipv4, fc.integer({ min: 0, max: 32 })).map(([a, l]) => canonicalPrefix(`${a}/${l}`));
const v6prefix = fc.tuple(ipv6, fc.integer({ min: 0, max: 128 })).map(([a, l]) => canonicalPrefix(`${a}/${l}`));

function entries(prefix: fc.Arbitrary<string>, addPath: boolean, max: number): fc.Arbitrary<NlriEntry[]> {
  return fc.array(addPath ? fc.record({ prefix, pathId: u32 }) : prefix.map((p) => ({ prefix: p })), { maxLength: max });
}

/** Sometimes set the Extended Length bit on a short value: received attributes keep it. */
function maybeExt<A extends PathAttribute>(a: fc.Arbitrary<A>): fc.Arbitrary<A> {
  return fc.tuple(a, fc.boolean()).map(([attr, e]) => (e ? { ...attr, flags: attr.flags | 0x10 } : attr));
}

function attrsArb(ctx: CodecContext): fc.Arbitrary<PathAttribute[]> {
  const asn = ctx.fourOctetAs ? as32 : fc.integer({ min: 1, max: 0xffff });
  const segment: fc.Arbitrary<AsPathSegment> = fc.record({
    type: fc.constantFrom(1, 2, 3, 4) as fc.Arbitrary<1 | 2 | 3 | 4>,
    asns: fc.array(asn, { minLength: 1, maxLength: 12 }),
  });
  const seg4: fc.Arbitrary<AsPathSegment> = fc.record({
    type: fc.constantFrom(1, 2) as fc.Arbitrary<1 | 2>,
    asns: fc.array(as32, { minLength: 1, maxLength: 6 }),
  });
  const otherFamilyRaw = fc
    .tuple(fc.integer({ min: 3, max: 0xffff }), fc.integer({ min: 0, max: 255 }), fc.uint8Array({ maxLength: 24 }), fc.uint8Array({ maxLength: 30 }))
    .map(([afi, safi, nh, rest]) => Buffer.concat([Buffer.from([afi >> 8, afi & 0xff, safi, nh.length]), nh, Buffer.from([0]), rest]));
  const pool: fc.Arbitrary<PathAttribute>[] = [
    maybeExt(fc.constantFrom(0, 1, 2).map((o) => b.origin(o as 0 | 1 | 2))),
    maybeExt(fc.array(segment, { maxLength: 4 }).map((s) => b.asPath(s))),
    maybeExt(ipv4.filter((a) => a !== '0.0.0.0' && a !== '255.255.255.255' && !/^2(2[4-9]|3\d)\./.test(a)).map(b.nextHop)),
    maybeExt(u32.map(b.med)),
    maybeExt(u32.map(b.localPref)),
    fc.constant(b.atomicAggregate()),
    maybeExt(fc.tuple(asn, ipv4).map(([a, ip]) => b.aggregator(a, ip))),
    maybeExt(fc.array(u32, { minLength: 1, maxLength: 10 }).map((c) => b.communities(c))),
    fc.constant<PathAttribute>({ type: 'ORIGINATOR_ID', flags: 0x80, originatorId: '10.0.0.1' }),
    fc.array(ipv4, { minLength: 1, maxLength: 4 }).map((ids): PathAttribute => ({ type: 'CLUSTER_LIST', flags: 0x80, clusterIds: ids })),
    fc.oneof(
      fc.tuple(fc.array(ipv6, { minLength: 1, maxLength: 2 }), entries(v6prefix, ctx.addPath.ipv6 === true, 8)).map(([nh, n]) => b.mpReach('ipv6-unicast', nh, n)),
      fc.tuple(ipv4, entries(v4prefix, ctx.addPath.ipv4 === true, 8)).map(([nh, n]) => b.mpReach('ipv4-unicast', [nh], n)),
      otherFamilyRaw.map((raw): PathAttribute => ({ type: 'MP_REACH_NLRI', flags: 0x80, afi: raw.readUInt16BE(0), safi: raw[2] as number, nextHops: [], nlri: [], raw })),
    ),
    fc.oneof(
      entries(v6prefix, ctx.addPath.ipv6 === true, 8).map((n) => b.mpUnreach('ipv6-unicast', n)),
      entries(v4prefix, ctx.addPath.ipv4 === true, 8).map((n) => b.mpUnreach('ipv4-unicast', n)),
    ),
    fc.array(fc.uint8Array({ minLength: 8, maxLength: 8 }), { minLength: 1, maxLength: 4 }).map((l) => b.extendedCommunities(l.map((x) => Buffer.from(x)))),
    fc.array(fc.uint8Array({ minLength: 20, maxLength: 20 }), { minLength: 1, maxLength: 4 }).map((l) => b.ipv6ExtendedCommunities(l.map((x) => Buffer.from(x)))),
    fc.array(fc.tuple(u32, u32, u32), { minLength: 1, maxLength: 4 }).map((l) => b.largeCommunities(l)),
    // AS4_PATH / AS4_AGGREGATOR only on 2-octet sessions: on a 4-octet session RFC 6793 §3 discards them.
    ...(ctx.fourOctetAs
      ? []
      : [
          fc.array(seg4, { maxLength: 3 }).map((s): PathAttribute => ({ type: 'AS4_PATH', flags: 0xc0, segments: s })),
          fc.tuple(as32, ipv4).map(([a, ip]): PathAttribute => ({ type: 'AS4_AGGREGATOR', flags: 0xc0, asNumber: a, address: ip })),
        ]),
    fc
      .tuple(fc.integer({ min: 19, max: 255 }).filter((c) => c !== 25 && c !== 32), fc.constantFrom(0x80, 0xc0, 0xe0, 0x90, 0xd0), fc.uint8Array({ maxLength: 40 }))
      .map(([code, flags, v]): PathAttribute => ({ type: 'UNKNOWN', flags, typeCode: code, value: Buffer.from(v) })),
  ];
  // One attribute per type, in any order (RFC 7606 §3 g discards repeats, so round trips need distinct types).
  return fc.tuple(...pool).chain((all) => fc.shuffledSubarray(all));
}

const updateArb: fc.Arbitrary<{ ctx: CodecContext; msg: UpdateMessage }> = ctxArb.chain((ctx) =>
  fc
    .record({
      withdrawn: entries(v4prefix, ctx.addPath.ipv4 === true, 10),
      attrs: attrsArb(ctx),
      nlri: entries(v4prefix, ctx.addPath.ipv4 === true, 10),
    })
    .map(({ withdrawn, attrs, nlri }) => ({ ctx, msg: { type: 'UPDATE' as const, withdrawnRoutes: withdrawn, pathAttributes: attrs, nlri } })),
);

function onlyBgpError(fn: () => unknown): void {
  try {
    fn();
  } catch (e) {
    if (!(e instanceof BgpError)) throw e;
  }
}

t.test('property: arbitrary valid UPDATEs round-trip (object and bytes)', async (t) => {
  let checked = 0;
  fc.assert(
    fc.property(updateArb, ({ ctx, msg }) => {
      const body = encodeUpdate(msg, ctx);
      const r = decodeUpdate(body, ctx);
      t.same(r.message, msg);
      if (!encodeUpdate(r.message, ctx).equals(body)) throw new Error('encode(decode(b)) != b');
      const whole = message(2, body);
      const viaMessage = decodeMessage(whole, ctx);
      if (viaMessage.type !== 'UPDATE' || viaMessage.pathAttributes.length !== msg.pathAttributes.length) throw new Error('decodeMessage differs');
      checked++;
    }),
    { numRuns: 400 },
  );
  t.equal(checked, 400, 'messages checked');
});

t.test('property: the JSON text of arbitrary UPDATEs is canonical JSON (what JSON.stringify prints of its view)', async (t) => {
  let checked = 0;
  fc.assert(
    fc.property(updateArb, ({ msg }) => {
      const text = messageJsonText(msg);
      const view = JSON.parse(text) as { type: string; nlri: string[]; withdrawnRoutes: string[] };
      if (JSON.stringify(view) !== text) throw new Error(`not canonical: ${text}`);
      if (view.type !== 'UPDATE' || view.nlri.join() !== msg.nlri.map((e) => e.prefix).join()) throw new Error(`nlri differ: ${text}`);
      if (view.withdrawnRoutes.join() !== msg.withdrawnRoutes.map((e) => e.prefix).join()) throw new Error(`withdrawn routes differ: ${text}`);
      checked++;
    }),
    { numRuns: 400 },
  );
  t.equal(checked, 400, 'messages checked');
});

t.test('property: arbitrary bytes → decodeUpdate returns or throws BgpError only', async (t) => {
  fc.assert(
    fc.property(ctxArb, fc.uint8Array({ maxLength: 300 }), (ctx, bytes) => {
      const buf = Buffer.from(bytes);
      onlyBgpError(() => decodeUpdate(buf, ctx));
      onlyBgpError(() => decodePathAttributes(buf, ctx));
      onlyBgpError(() => decodePathAttributes(buf, ctx, { mrtRibEntry: true }));
      const e = validateUpdateStrict(buf, ctx);
      if (e !== undefined && !(e instanceof BgpError)) throw new Error('strict returned a non-BgpError');
    }),
    { numRuns: 3000 },
  );
  t.pass('no exception other than BgpError');
});

t.test('property: corrupted valid UPDATEs → only BgpError; accepted bytes are a fixed point', async (t) => {
  let accepted = 0;
  const mutation = fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 4 });
  fc.assert(
    fc.property(updateArb, mutation, fc.nat(), fc.boolean(), ({ ctx, msg }, edits, cut, truncate) => {
      const body = Buffer.from(encodeUpdate(msg, ctx));
      for (const [pos, val] of edits) if (body.length > 0) body[pos % body.length] = val;
      const buf = truncate && body.length > 0 ? body.subarray(0, cut % body.length) : body;
      onlyBgpError(() => decodeUpdate(buf, ctx));
      onlyBgpError(() => decodeMessage(message(2, buf), ctx));
      const strict = validateUpdateStrict(buf, ctx);
      if (strict !== undefined && !(strict instanceof BgpError)) throw new Error('strict returned a non-BgpError');
      let first: UpdateMessage | undefined;
      try {
        first = decodeUpdate(buf, ctx).message;
      } catch (e) {
        if (!(e instanceof BgpError)) throw e;
      }
      if (first) {
        accepted++;
        const again = decodeUpdate(encodeUpdate(first, ctx), ctx).message;
        t.same(again, first);
      }
    }),
    { numRuns: 1500 },
  );
  t.ok(accepted > 0, `some corrupted messages were still accepted (${accepted})`);
});
