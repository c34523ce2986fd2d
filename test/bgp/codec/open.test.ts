/**
 * OPEN semantics: validateOpen (RFC 4271 §6.2 Bad Peer AS, RFC 6286 §2.2 Bad BGP Identifier, RFC 5492 §5
 * Unsupported Capability), negotiate (RFC 4271 §4.2 hold time, RFC 4760 §8 families, RFC 6793, RFC 8654, RFC 7911),
 * codecContextFor, buildOpen, encoder limits (plain Error, not BgpError) and the JSON form.
 */
import t from 'tap';
import { BgpError } from '../../../bgp/errors.ts';
import { decodeMessage, encodeMessage } from '../../../bgp/codec/message.ts';
import { buildOpen, codecContextFor, hasCapabilityCode, negotiate, openAs, validateOpen } from '../../../bgp/codec/open.ts';
import { KEEPALIVE, keepaliveMessage } from '../../../bgp/codec/keepalive.ts';
import { messageToJson } from '../../../bgp/codec/json.ts';
import { notificationFromError, notificationMessage } from '../../../bgp/codec/notification.ts';
import { DEFAULT_CONTEXT } from '../../../bgp/codec/types.ts';
import type { Capability, OpenMessage } from '../../../bgp/codec/types.ts';
import * as w from '../../helpers/wire.ts';

const ctx = DEFAULT_CONTEXT;
const mp4: Capability = { type: 'Multiprotocol', afi: 1, safi: 1 };
const mp6: Capability = { type: 'Multiprotocol', afi: 2, safi: 1 };

function open(caps: Capability[], over: Partial<OpenMessage> = {}): OpenMessage {
  return { type: 'OPEN', version: 4, myAutonomousSystem: 65001, holdTime: 90, bgpIdentifier: '10.0.0.2', capabilities: caps, ...over };
}

function err(fn: () => unknown): { code: number; subcode: number; data: string } | string {
  try {
    fn();
    return 'no error';
  } catch (e) {
    return e instanceof BgpError ? { code: e.code, subcode: e.subcode, data: e.data.toString('hex') } : `other: ${String(e)}`;
  }
}

t.test('RFC 4271 6.2: peer AS mismatch → 2/2 with the 2-octet AS field', async (t) => {
  t.same(err(() => validateOpen(open([]), { peerAs: 65002 })), { code: 2, subcode: 2, data: 'fde9' });
  t.equal(err(() => validateOpen(open([]), { peerAs: 65001 })), 'no error');
  // RFC 6793: the real AS comes from the capability; the field holds AS_TRANS.
  const as4 = open([{ type: 'FourOctetAs', asNumber: 4200000001 }], { myAutonomousSystem: 23456 });
  t.equal(openAs(as4), 4200000001);
  t.equal(err(() => validateOpen(as4, { peerAs: 4200000001 })), 'no error');
  t.same(err(() => validateOpen(as4, { peerAs: 23456 })), { code: 2, subcode: 2, data: '5ba0' });
});

t.test('RFC 6286 2.2: our own BGP Identifier → 2/3 on iBGP (and by default), allowed on eBGP', async (t) => {
  const o = open([], { bgpIdentifier: '10.0.0.1' });
  t.same(err(() => validateOpen(o, { localBgpIdentifier: '10.0.0.1', isIbgp: true })), { code: 2, subcode: 3, data: '0a000001' });
  t.same(err(() => validateOpen(o, { localBgpIdentifier: '10.0.0.1' })), { code: 2, subcode: 3, data: '0a000001' });
  t.equal(err(() => validateOpen(o, { localBgpIdentifier: '10.0.0.1', isIbgp: false })), 'no error');
  t.equal(err(() => validateOpen(o, { localBgpIdentifier: '10.0.0.9', isIbgp: true })), 'no error');
});

t.test('RFC 5492 5: a required capability missing → 2/7 with the missing tuples as data', async (t) => {
  const o = open([mp4]);
  t.same(err(() => validateOpen(o, { requiredCapabilities: [mp6, { type: 'FourOctetAs', asNumber: 65000 }] })), {
    code: 2,
    subcode: 7,
    data: w.bytes(w.capability(1, w.u16(2), [0, 1]), w.capability(65, w.u32(65000))).toString('hex'),
  });
  t.equal(err(() => validateOpen(o, { requiredCapabilities: [mp4] })), 'no error');
});

const local = buildOpen({
  localAs: 4200000000,
  holdTimeSec: 90,
  bgpIdentifier: '10.0.0.1',
  capabilities: [
    mp4,
    mp6,
    { type: 'RouteRefresh' },
    { type: 'EnhancedRouteRefresh' },
    { type: 'ExtendedMessage' },
    { type: 'FourOctetAs', asNumber: 4200000000 },
    { type: 'AddPath', families: [{ afi: 1, safi: 1, sendReceive: 2 }, { afi: 2, safi: 1, sendReceive: 3 }] },
  ],
});

t.test('buildOpen puts AS_TRANS in the 2-octet field for a 4-octet AS (RFC 6793 4.1)', async (t) => {
  t.equal(local.myAutonomousSystem, 23456);
  t.equal(buildOpen({ localAs: 65000, holdTimeSec: 3, bgpIdentifier: '1.1.1.1', capabilities: [] }).myAutonomousSystem, 65000);
  t.ok(hasCapabilityCode(local, 65) && !hasCapabilityCode(local, 64));
});

t.test('negotiate: a full-featured peer', async (t) => {
  const remote = open(
    [
      mp6,
      mp4,
      { type: 'Multiprotocol', afi: 1, safi: 128 },
      { type: 'RouteRefreshCisco' },
      { type: 'EnhancedRouteRefresh' },
      { type: 'ExtendedMessage' },
      { type: 'FourOctetAs', asNumber: 65001 },
      { type: 'GracefulRestart', restarting: false, notification: true, restartTimeSec: 120, families: [] },
      { type: 'AddPath', families: [{ afi: 1, safi: 1, sendReceive: 3 }, { afi: 2, safi: 1, sendReceive: 1 }] },
    ],
    { holdTime: 30 },
  );
  const n = negotiate(local, remote, 90);
  t.same(n, {
    holdTimeSec: 30,
    keepaliveTimeSec: 10,
    fourOctetAs: true,
    peerAs: 65001,
    extendedMessage: true,
    families: ['ipv4-unicast', 'ipv6-unicast'],
    routeRefresh: true,
    enhancedRouteRefresh: true,
    gracefulRestart: { type: 'GracefulRestart', restarting: false, notification: true, restartTimeSec: 120, families: [] },
    // We send on v4 (we: send, peer: both) and v6 (we: both, peer: receive); we receive on none.
    addPath: { send: { ipv4: true, ipv6: true }, receive: {} },
    gracefulRestartMode: 'none',
  });
  t.same(codecContextFor(n, 'send'), { fourOctetAs: true, extendedMessage: true, addPath: { ipv4: true, ipv6: true } });
  t.same(codecContextFor(n, 'receive'), { fourOctetAs: true, extendedMessage: true, addPath: {} });
});

t.test('negotiate: a minimal peer (no capabilities) → IPv4 unicast only (RFC 4760 8), 2-octet AS', async (t) => {
  const n = negotiate(local, open([], { holdTime: 0 }), 90);
  t.same(n, {
    holdTimeSec: 0,
    keepaliveTimeSec: 0,
    fourOctetAs: false,
    peerAs: 65001,
    extendedMessage: false,
    families: ['ipv4-unicast'],
    routeRefresh: false,
    enhancedRouteRefresh: false,
    addPath: { send: {}, receive: {} },
    gracefulRestartMode: 'none',
  });
});

t.test('negotiate: graceful restart mode from both OPENs (RFC 4724 §3, RFC 8538 §2: N counts only when both set it)', async (t) => {
  const gr = (notification: boolean) => ({ type: 'GracefulRestart' as const, restarting: false, notification, restartTimeSec: 120, families: [] });
  const rows: [string, ReturnType<typeof gr> | undefined, ReturnType<typeof gr> | undefined, string][] = [
    ['neither', undefined, undefined, 'none'],
    ['only the peer', undefined, gr(true), 'none'],
    ['only us', gr(true), undefined, 'none'],
    ['both, no N', gr(false), gr(false), 'restart'],
    ['both, N on our side only', gr(true), gr(false), 'restart'],
    ['both, N on the peer only', gr(false), gr(true), 'restart'],
    ['both with N', gr(true), gr(true), 'notification'],
  ];
  for (const [what, ours, theirs, mode] of rows) {
    const n = negotiate(open(ours ? [mp4, ours] : [mp4]), open(theirs ? [mp4, theirs] : [mp4]), 90);
    t.equal(n.gracefulRestartMode, mode, what);
  }
});

t.test('negotiate: families are the intersection; a v6-only peer has no IPv4', async (t) => {
  t.same(negotiate(local, open([mp6]), 90).families, ['ipv6-unicast']);
  t.same(negotiate(open([]), open([mp6]), 90).families, [], 'we (no MP = IPv4 only) and a v6-only peer share nothing');
  t.equal(negotiate(local, open([]), 10).holdTimeSec, 10, 'local hold time smaller');
  t.equal(negotiate(local, open([]), 10).keepaliveTimeSec, 3);
});

t.test('encodeMessage: oversize is a plain Error (a local bug), never a BgpError', async (t) => {
  const big = notificationMessage(6, 3, { data: Buffer.alloc(4096 - 20) });
  try {
    encodeMessage(big, ctx);
    t.fail('no error');
  } catch (e) {
    t.ok(e instanceof Error && !(e instanceof BgpError), String(e));
  }
  t.equal(encodeMessage(big, { ...ctx, extendedMessage: true }).length, 4097, 'fits with extended message');
  const bigOpen = open(Array.from({ length: 300 }, () => ({ type: 'Unknown', code: 200, value: Buffer.alloc(20) }) as Capability));
  t.throws(() => encodeMessage(bigOpen, { ...ctx, extendedMessage: true }), /exceeds the maximum message length 4096/, 'OPEN ≤ 4096 always');
  t.throws(() => encodeMessage(open([], { bgpIdentifier: '10.0.0' }), ctx), RangeError, 'bad identifier string');
  t.throws(() => encodeMessage(open([{ type: 'GracefulRestart', restarting: false, notification: false, restartTimeSec: 4096, families: [] }]), ctx), RangeError);
});

t.test('RFC 9072: the encoder switches to the extended form when parameters exceed 255 octets', async (t) => {
  const caps = Array.from({ length: 30 }, (_, i) => ({ type: 'Unknown', code: 200, value: Buffer.alloc(10, i) }) as Capability);
  const bytes = encodeMessage(open(caps), ctx);
  t.equal(bytes[28], 255);
  t.equal(bytes[29], 255);
  t.equal(bytes.readUInt16BE(30), 3 + 30 * 12);
  t.same(decodeMessage(bytes, ctx), { ...open(caps), extendedOptionalParameters: true });
});

t.test('KEEPALIVE constant', async (t) => {
  t.equal(keepaliveMessage().toString('hex'), w.keepalive().toString('hex'));
  t.equal(keepaliveMessage(), keepaliveMessage(), 'one shared Buffer');
  t.same(decodeMessage(keepaliveMessage(), ctx), KEEPALIVE);
  t.equal(encodeMessage(KEEPALIVE, ctx).toString('hex'), w.keepalive().toString('hex'));
});

t.test('notificationFromError carries code, subcode and data', async (t) => {
  const n = notificationFromError(BgpError.unacceptableHoldTime(2));
  t.same(n, { type: 'NOTIFICATION', errorCode: 2, errorSubcode: 6, data: Buffer.from('0002', 'hex') });
  t.equal(encodeMessage(n, ctx).toString('hex'), w.notification(2, 6, w.u16(2)).toString('hex'));
  const c = notificationFromError(BgpError.cease(2, { shutdownCommunication: 'bye' }));
  t.equal(c.type === 'NOTIFICATION' && c.shutdownCommunication, 'bye');
});

t.test('JSON form: stable RFC field names', async (t) => {
  const o = decodeMessage(
    w.open({
      as: 65000,
      holdTime: 90,
      id: '10.0.0.1',
      params: [
        w.param(
          2,
          w.capability(1, w.u16(2), [0, 1]),
          w.capability(64, [0x40, 0x78], w.u16(1), [1, 0x80]),
          w.capability(69, w.u16(1), [1, 2]),
          w.capability(201, [1, 2]),
        ),
      ],
    }),
    ctx,
  );
  t.same(messageToJson(o), {
    type: 'OPEN',
    version: 4,
    myAutonomousSystem: 65000,
    holdTime: 90,
    bgpIdentifier: '10.0.0.1',
    capabilities: [
      { code: 1, name: 'Multiprotocol Extensions', afi: 2, safi: 1, family: 'ipv6-unicast' },
      {
        code: 64,
        name: 'Graceful Restart',
        restarting: false,
        notification: true,
        restartTimeSec: 120,
        families: [{ afi: 1, safi: 1, family: 'ipv4-unicast', forwardingPreserved: true }],
      },
      { code: 69, name: 'ADD-PATH', families: [{ afi: 1, safi: 1, family: 'ipv4-unicast', sendReceive: 2, mode: 'send' }] },
      { code: 201, name: 'Unknown', value: '0102' },
    ],
  });
  t.same(messageToJson(decodeMessage(w.notification(6, 2, [2], Buffer.from('hi')), ctx)), {
    type: 'NOTIFICATION',
    errorCode: 6,
    errorSubcode: 2,
    errorName: 'Cease / Administrative Shutdown',
    data: '026869',
    shutdownCommunication: 'hi',
  });
  t.same(messageToJson(decodeMessage(w.routeRefresh(2, 1, 1), ctx)), {
    type: 'ROUTE-REFRESH',
    afi: 2,
    safi: 1,
    family: 'ipv6-unicast',
    subtype: 1,
    subtypeName: 'Beginning of Route Refresh',
  });
  t.same(messageToJson(KEEPALIVE), { type: 'KEEPALIVE' });
  const upd = messageToJson(decodeMessage(w.message(2, w.u16(0), w.u16(0)), ctx));
  t.same(upd, { type: 'UPDATE', withdrawnRoutes: [], nlri: [], endOfRib: 'ipv4-unicast' }, 'UPDATE delegates to updateToJson');
});

t.test('capability edge cases: ADD-PATH send/receive 0 is kept raw, GR reserved bits are ignored; FQDN overrun → 2/0', async (t) => {
  const ap = decodeMessage(w.open({ as: 1, holdTime: 90, id: '1.1.1.1', params: [w.param(2, w.capability(69, w.u16(1), [1, 0]))] }), ctx) as OpenMessage;
  t.same(ap.capabilities, [{ type: 'Unknown', code: 69, value: Buffer.from('00010100', 'hex') }]);
  // Bug fixed (RFC 4724 §3: reserved bits are ignored by the receiver): GR with reserved bits used to decode as
  // Unknown, hiding the peer's graceful restart from negotiate. It is now GracefulRestart, with `raw` for exactness.
  const grOpen = w.open({
    as: 1,
    holdTime: 90,
    id: '1.1.1.1',
    params: [w.param(2, w.capability(64, [0x90, 0x78], w.u16(1), [1, 0x81]))], // R + reserved 0x1 bit, 120 s; IPv4 F + reserved 0x01
  });
  const gr = decodeMessage(grOpen, ctx) as OpenMessage;
  t.same(gr.capabilities, [
    {
      type: 'GracefulRestart',
      restarting: true,
      notification: false,
      restartTimeSec: 120,
      families: [{ afi: 1, safi: 1, forwardingPreserved: true }],
      raw: Buffer.from('9078000101' + '81', 'hex'),
    },
  ]);
  t.equal(encodeMessage(gr, ctx).toString('hex'), grOpen.toString('hex'), 'the reserved bits re-encode exactly');
  const local = buildOpen({ localAs: 2, holdTimeSec: 90, bgpIdentifier: '2.2.2.2', capabilities: [] });
  t.equal(negotiate(local, gr, 90).gracefulRestart?.restartTimeSec, 120, 'negotiate sees the peer graceful restart');
  t.same(err(() => decodeMessage(w.open({ as: 1, holdTime: 90, id: '1.1.1.1', params: [w.param(2, w.capability(73, [5, 0x61]))] }), ctx)), {
    code: 2,
    subcode: 0,
    data: '',
  });
  t.same(err(() => decodeMessage(w.open({ as: 1, holdTime: 90, id: '1.1.1.1', params: [w.param(2, w.capability(64, [0]))] }), ctx)), {
    code: 2,
    subcode: 0,
    data: '',
  });
  t.same(err(() => decodeMessage(w.open({ as: 1, holdTime: 90, id: '1.1.1.1', params: [w.param(2, w.capability(2, [0]))] }), ctx)), {
    code: 2,
    subcode: 0,
    data: '',
  });
});

t.test('decodeMessage: buffer length must equal the Length field → 1/2', async (t) => {
  const ka = Buffer.concat([w.keepalive(), Buffer.from([0])]);
  t.same(err(() => decodeMessage(ka, ctx)), { code: 1, subcode: 2, data: '0013' });
  t.same(err(() => decodeMessage(Buffer.alloc(5, 0xff), ctx)), { code: 1, subcode: 2, data: '0005' });
});
