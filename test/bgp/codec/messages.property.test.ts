/**
 * fast-check properties of the message codec:
 * - arbitrary valid OPEN / NOTIFICATION / ROUTE-REFRESH / KEEPALIVE round-trip: decode(encode(m)) == m, and the
 *   bytes re-encode identically;
 * - arbitrary bytes fed to the framer or the decoder (raw, header-shaped, and mutated real-looking OPENs) either
 *   decode or throw BgpError — never anything else; whatever decodes re-encodes to bytes that decode the same.
 */
import t from 'tap';
import fc from 'fast-check';
import { BgpError } from '../../../bgp/errors.ts';
import { decodeMessage, encodeMessage } from '../../../bgp/codec/message.ts';
import { decodeOpen } from '../../../bgp/codec/open.ts';
import { decodeRouteRefresh } from '../../../bgp/codec/route-refresh.ts';
import { decodeCapabilities } from '../../../bgp/codec/capabilities.ts';
import { decodeNotification, notificationMessage } from '../../../bgp/codec/notification.ts';
import { DEFAULT_CONTEXT } from '../../../bgp/codec/types.ts';
import type { BgpMessage, Capability, CodecContext, OpenMessage } from '../../../bgp/codec/types.ts';
import { MessageFramer } from '../../../bgp/wire/framer.ts';
import * as w from '../../helpers/wire.ts';

const ctx = DEFAULT_CONTEXT;
const NUM_RUNS = 400;
const KNOWN_CODES = new Set([1, 2, 6, 64, 65, 69, 70, 73, 128]);

const u16 = fc.integer({ min: 0, max: 0xffff });
const u8 = fc.integer({ min: 0, max: 0xff });
const text = fc.string({ unit: 'grapheme', maxLength: 24 }).filter((s) => Buffer.byteLength(s) <= 255);

const capArb: fc.Arbitrary<Capability> = fc.oneof(
  fc.record({ type: fc.constant('Multiprotocol' as const), afi: u16, safi: u8 }),
  fc.constant({ type: 'RouteRefresh' as const }),
  fc.constant({ type: 'RouteRefreshCisco' as const }),
  fc.constant({ type: 'EnhancedRouteRefresh' as const }),
  fc.constant({ type: 'ExtendedMessage' as const }),
  fc.record({ type: fc.constant('FourOctetAs' as const), asNumber: fc.integer({ min: 1, max: 0xffffffff }) }),
  fc.record({
    type: fc.constant('GracefulRestart' as const),
    restarting: fc.boolean(),
    notification: fc.boolean(),
    restartTimeSec: fc.integer({ min: 0, max: 4095 }),
    families: fc.array(fc.record({ afi: u16, safi: u8, forwardingPreserved: fc.boolean() }), { maxLength: 5 }),
  }),
  fc.record({
    type: fc.constant('AddPath' as const),
    families: fc.array(fc.record({ afi: u16, safi: u8, sendReceive: fc.constantFrom(1 as const, 2 as const, 3 as const) }), {
      minLength: 1,
      maxLength: 5,
    }),
  }),
  fc.record({ type: fc.constant('Fqdn' as const), hostname: text, domainName: text }),
  fc.record({
    type: fc.constant('Unknown' as const),
    code: u8.filter((c) => !KNOWN_CODES.has(c)),
    value: fc.uint8Array({ maxLength: 40 }).map((a) => Buffer.from(a)),
  }),
);

const openArb: fc.Arbitrary<OpenMessage> = fc
  .record({
    myAutonomousSystem: fc.integer({ min: 1, max: 0xffff }),
    holdTime: fc.oneof(fc.constant(0), fc.integer({ min: 3, max: 0xffff })),
    id: fc.integer({ min: 1, max: 0xffffffff }),
    capabilities: fc.array(capArb, { maxLength: 20 }),
    perCapability: fc.boolean(),
    extended: fc.boolean(),
  })
  .map(({ myAutonomousSystem, holdTime, id, capabilities, perCapability, extended }) => {
    const m: OpenMessage = {
      type: 'OPEN',
      version: 4,
      myAutonomousSystem,
      holdTime,
      bgpIdentifier: `${id >>> 24}.${(id >>> 16) & 255}.${(id >>> 8) & 255}.${id & 255}`,
      capabilities,
      ...(perCapability && capabilities.length >= 2 ? { parameterLayout: 'perCapability' as const } : {}),
      ...(extended ? { extendedOptionalParameters: true } : {}),
    };
    return m;
  })
  .filter((m) => {
    try {
      encodeMessage(m, ctx); // drop the rare draw over 4096 octets or with a capability value over 255
      return true;
    } catch {
      return false;
    }
  });

/** The canonical object decode returns for `m`: the RFC 9072 flag appears when the encoder needed the form. */
function canonicalOpen(m: OpenMessage, bytes: Buffer): OpenMessage {
  const usedExtended = bytes[28] === 255 && bytes[29] === 255;
  const { extendedOptionalParameters: _ignored, ...rest } = m;
  return usedExtended ? { ...rest, extendedOptionalParameters: true } : rest;
}

t.test('arbitrary valid OPENs round-trip', async (t) => {
  fc.assert(
    fc.property(openArb, (m) => {
      const bytes = encodeMessage(m, ctx);
      const back = decodeMessage(bytes, ctx);
      t.same(back, canonicalOpen(m, bytes));
      return encodeMessage(back, ctx).equals(bytes);
    }),
    { numRuns: NUM_RUNS },
  );
});

const notificationArb: fc.Arbitrary<BgpMessage> = fc.oneof(
  fc
    .record({ code: u8, subcode: u8, data: fc.uint8Array({ maxLength: 100 }) })
    .map(({ code, subcode, data }) => notificationMessage(code, subcode, { data: Buffer.from(data) })),
  fc
    .record({ subcode: fc.constantFrom(2, 4), text: fc.string({ unit: 'grapheme', maxLength: 300 }) })
    .map(({ subcode, text }) => notificationMessage(6, subcode, { shutdownCommunication: text })),
);

const routeRefreshArb: fc.Arbitrary<BgpMessage> = fc
  .record({ afi: u16, subtype: u8, safi: u8, extra: fc.uint8Array({ maxLength: 60 }) })
  .map(({ afi, subtype, safi, extra }) =>
    extra.length === 0 || subtype === 1 || subtype === 2
      ? { type: 'ROUTE-REFRESH' as const, afi, subtype, safi }
      : { type: 'ROUTE-REFRESH' as const, afi, subtype, safi, extra: Buffer.from(extra) },
  );

t.test('arbitrary valid NOTIFICATION / ROUTE-REFRESH / KEEPALIVE round-trip', async (t) => {
  fc.assert(
    fc.property(fc.oneof(notificationArb, routeRefreshArb, fc.constant({ type: 'KEEPALIVE' } as BgpMessage)), (m) => {
      const bytes = encodeMessage(m, ctx);
      t.same(decodeMessage(bytes, ctx), m);
      return encodeMessage(decodeMessage(bytes, ctx), ctx).equals(bytes);
    }),
    { numRuns: NUM_RUNS },
  );
});

t.test('shutdown communications longer than 255 octets are truncated at a character boundary', async (t) => {
  const m = notificationMessage(6, 2, { shutdownCommunication: 'é'.repeat(200) });
  t.equal(m.data[0], 254, '127 two-octet characters fit');
  t.equal(m.type === 'NOTIFICATION' && m.shutdownCommunication, 'é'.repeat(127));
});

/**
 * Runs `fn`; returns undefined if it returned or threw a deliberate BgpError, else the problem. decodeMessage turns any
 * foreign exception into a BgpError "internal decoder error" as defence in depth; that counts as a bug here.
 */
function foreign(fn: () => void): unknown {
  try {
    fn();
    return undefined;
  } catch (e) {
    if (!(e instanceof BgpError)) return e;
    return e.message.includes('internal decoder error') ? e : undefined;
  }
}

function decodeAll(bytes: Buffer, c: CodecContext, maxLength?: number): void {
  const f = new MessageFramer();
  if (maxLength) f.maxLength = maxLength;
  for (const m of f.push(bytes)) {
    const msg = decodeMessage(m, c);
    // Whatever decodes must re-encode to something that decodes to the same object.
    if (msg.type !== 'UPDATE') {
      const again = decodeMessage(encodeMessage(msg, c), c);
      if (JSON.stringify(again) !== JSON.stringify(msg)) throw new Error(`re-encode changed ${JSON.stringify(msg)}`);
    }
  }
}

const contexts: CodecContext[] = [
  DEFAULT_CONTEXT,
  { fourOctetAs: true, extendedMessage: true, addPath: { ipv4: true, ipv6: true } },
];

const headerShaped = fc
  .record({ type: fc.integer({ min: 0, max: 7 }), body: fc.uint8Array({ maxLength: 120 }), lengthDelta: fc.constantFrom(0, 0, 0, -1, 1) })
  .map(({ type, body, lengthDelta }) => {
    const b = w.message(type, Buffer.from(body));
    b.writeUInt16BE(Math.max(0, Math.min(0xffff, b.length + lengthDelta)), 16);
    return b;
  });

const baseOpen = w.open({
  as: 65000,
  holdTime: 90,
  id: '10.0.0.1',
  params: [
    w.param(2, w.capability(1, w.u16(1), [0, 1]), w.capability(64, [0x80, 0x78], w.u16(1), [1, 0x80]), w.capability(69, w.u16(1), [1, 3])),
    w.param(2, w.capability(73, [1, 0x61, 1, 0x62]), w.capability(65, w.u32(65000))),
  ],
});
const mutatedOpen = fc
  .array(fc.record({ at: fc.integer({ min: 19, max: baseOpen.length - 1 }), v: u8 }), { minLength: 1, maxLength: 4 })
  .map((muts) => {
    const b = Buffer.from(baseOpen);
    for (const { at, v } of muts) b[at] = v;
    return b;
  });

t.test('arbitrary bytes to the framer and decoder throw only BgpError', async (t) => {
  for (const c of contexts) {
    fc.assert(
      fc.property(fc.oneof(fc.uint8Array({ maxLength: 200 }).map((a) => Buffer.from(a)), headerShaped, mutatedOpen), (bytes) => {
        const e1 = foreign(() => decodeMessage(bytes, c));
        const e2 = foreign(() => decodeAll(bytes, c, c.extendedMessage ? 65535 : undefined));
        if (e1 !== undefined) throw e1;
        if (e2 !== undefined) throw e2;
      }),
      { numRuns: 1500 },
    );
  }
  t.pass('no foreign exception');
});

t.test('mutated OPENs: some decode, some fail — both paths are exercised', async (t) => {
  let ok = 0;
  let failed = 0;
  fc.assert(
    fc.property(mutatedOpen, (bytes) => {
      try {
        decodeMessage(bytes, ctx);
        ok++;
      } catch (e) {
        if (!(e instanceof BgpError)) throw e;
        failed++;
      }
    }),
    { numRuns: 500 },
  );
  t.ok(ok > 20 && failed > 20, `decoded ${ok}, rejected ${failed}`);
});

t.test('per-message decoders called directly on arbitrary bodies throw only BgpError', async (t) => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 80 }).map((a) => Buffer.from(a)), (body) => {
      for (const fn of [
        () => decodeOpen(body),
        () => decodeOpen(Buffer.concat([Buffer.from([4, 0, 1, 0, 90, 1, 1, 1, 1, body.length]), body])),
        () => decodeOpen(Buffer.concat([Buffer.from([4, 0, 1, 0, 90, 1, 1, 1, 1, 255, 255, 0, body.length]), body])),
        () => decodeNotification(body),
        () => decodeRouteRefresh(Buffer.concat([w.message(5), body])),
        () => decodeCapabilities(body, 0, body.length, []),
      ]) {
        const e = foreign(fn);
        if (e !== undefined) throw e;
      }
    }),
    { numRuns: 2000 },
  );
  t.pass('no foreign exception');
});
