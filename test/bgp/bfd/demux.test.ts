// BfdEngine demultiplexing (RFC 5880 §6.8.6) and the received-TTL check failing closed (RFC 5881 §5), on a
// FakeClock with an in-memory transport: the test plays the router, packet by packet (issue 35 N6 and the TTL
// filter). Each guard has a case that goes red when the guard is removed.
import t from 'tap';
import { FakeClock } from '../../../bgp/clock.ts';
import { BfdEngine } from '../../../bgp/bfd/engine.ts';
import type { BfdChange, BfdPeerConfig, BfdSessionInfo } from '../../../bgp/bfd/engine.ts';
import { decodeControlPacket, encodeControlPacket } from '../../../bgp/bfd/packet.ts';
import type { BfdState, ControlPacket } from '../../../bgp/bfd/packet.ts';
import { maxTtlRules } from '../../../bgp/bfd/udp.ts';
import type { BfdTransport, TtlCheck, TtlRule, UdpEndpoint } from '../../../bgp/bfd/udp.ts';

/** An in-memory transport: receivers by "address port", what each session sent, the TTL rules asked for. */
function memoryTransport(ttlResult: (rules: readonly TtlRule[]) => TtlCheck = (rules) => (rules.length > 0 ? { kind: 'kernel' } : { kind: 'none' })) {
  const receivers = new Map<string, (packet: Buffer, from: UdpEndpoint) => void>();
  const sent = new Map<string, ControlPacket[]>();
  const rules = new Map<string, readonly TtlRule[]>();
  const transport: BfdTransport = {
    async openReceiver(at, onMessage) {
      const key = `${at.address} ${at.port}`;
      receivers.set(key, onMessage);
      return {
        local: at,
        setTtlRules: (r) => {
          rules.set(key, r);
          return ttlResult(r);
        },
        droppedByKernel: () => 0,
        close: async () => void receivers.delete(key),
      };
    },
    async openSender(o) {
      const list: ControlPacket[] = [];
      sent.set(o.remote.address, list);
      return {
        local: { address: o.localAddress ?? '0.0.0.0', port: 49152 },
        send: (b) => {
          const d = decodeControlPacket(b);
          if (d.ok) list.push(d.packet);
        },
        close: async () => undefined,
      };
    },
  };
  /** Delivers one packet from `from` to the receiver on `at` (default: the single-hop wildcard). */
  const deliver = (from: string, p: Partial<ControlPacket> & { state: BfdState; myDiscriminator: number; yourDiscriminator: number }, at = '0.0.0.0 3784'): void => {
    const packet = encodeControlPacket({ diag: 0, poll: false, final: false, controlPlaneIndependent: false, demand: false, detectMult: 3, desiredMinTxIntervalUs: 100_000, requiredMinRxIntervalUs: 100_000, requiredMinEchoRxIntervalUs: 0, ...p });
    const r = receivers.get(at);
    if (!r) throw new Error(`no receiver on ${at}`);
    r(packet, { address: from, port: 49200 });
  };
  return { transport, deliver, sent, rules, receivers };
}

const ROUTER = '192.0.2.1';
const cfg = (remoteAddress: string, extra: Partial<BfdPeerConfig> = {}): BfdPeerConfig => ({ remoteAddress, multihop: false, transmitIntervalMs: 100, receiveIntervalMs: 100, detectMultiplier: 3, passive: false, ...extra });

async function setup(ttlResult?: (rules: readonly TtlRule[]) => TtlCheck) {
  const clock = new FakeClock(1_000_000);
  const mem = memoryTransport(ttlResult);
  const updates: { id: string; change: BfdChange; info: BfdSessionInfo }[] = [];
  const errors: string[] = [];
  const engine = new BfdEngine({ clock, transport: mem.transport, random: () => 0.5, onUpdate: (id, change, info) => updates.push({ id, change, info }), onError: (_id, m) => errors.push(m) });
  return { clock, engine, updates, errors, ...mem };
}

/** Brings session `id` to `address` Up by the three-way handshake, the test playing the router with discriminator `R`. */
async function up(s: Awaited<ReturnType<typeof setup>>, id: string, address: string, R: number): Promise<number> {
  await s.engine.add(id, cfg(address));
  const L = s.engine.info(id)?.localDiscriminator ?? 0;
  s.deliver(address, { state: 'Down', myDiscriminator: R, yourDiscriminator: 0 });
  s.deliver(address, { state: 'Up', myDiscriminator: R, yourDiscriminator: L });
  return L;
}

t.test('N6: a spoofed Down with Your Discriminator 0 from the router\'s address never takes the session Down', async (t) => {
  const s = await setup();
  const R = 0x1234;
  const L = await up(s, 'r', ROUTER, R);
  t.equal(s.engine.info('r')?.state, 'Up');
  // Issue 35 N6: "Down, Your Discriminator 0, any My Discriminator, from the router's address" reset BGP.
  s.deliver(ROUTER, { state: 'Down', myDiscriminator: 0x9999, yourDiscriminator: 0 });
  t.equal(s.engine.info('r')?.state, 'Up', 'a packet whose My Discriminator is not bfd.RemoteDiscr changes nothing');
  t.same(s.engine.info('r')?.discards, { remoteDiscriminator: 1 });
  t.match(s.engine.info('r')?.lastDiscard, { reason: 'remoteDiscriminator', message: /My Discriminator 39321 is not the peer's 4660/ });
  // the same with our discriminator as Your Discriminator: still not the peer's My Discriminator
  s.deliver(ROUTER, { state: 'Down', myDiscriminator: 0x9999, yourDiscriminator: L });
  t.equal(s.engine.info('r')?.state, 'Up');
  t.equal(s.engine.info('r')?.discards.remoteDiscriminator, 2);
  // from another address, for our discriminator and with the right My Discriminator: wrong source
  s.deliver('192.0.2.66', { state: 'Down', myDiscriminator: R, yourDiscriminator: L });
  t.equal(s.engine.info('r')?.state, 'Up');
  t.equal(s.engine.info('r')?.discards.wrongSource, 1, 'counted on the session it claimed');
  // an unknown Your Discriminator from the router: no session, counted on the router's session
  s.deliver(ROUTER, { state: 'Down', myDiscriminator: R, yourDiscriminator: L + 1 });
  t.equal(s.engine.info('r')?.discards.noSession, 1);
  t.equal(s.engine.info('r')?.state, 'Up');
  t.same(s.engine.discards, { remoteDiscriminator: 2, wrongSource: 1, noSession: 1 }, 'and for the engine');
  // the router itself says Down (its Detection Time expired: Your Discriminator 0, its own My Discriminator): heard
  s.deliver(ROUTER, { state: 'Down', myDiscriminator: R, yourDiscriminator: 0 });
  t.equal(s.engine.info('r')?.state, 'Down', 'the peer\'s own Down is heard');
  t.equal(s.engine.info('r')?.localDiag, 3);
  await s.engine.close();
});

t.test('a router that restarts with a new discriminator is heard again after one Detection Time (RFC 5880 §6.8.1)', async (t) => {
  const s = await setup();
  await up(s, 'r', ROUTER, 0x1111);
  s.deliver(ROUTER, { state: 'AdminDown', myDiscriminator: 0x1111, yourDiscriminator: 0 }); // going away on purpose
  t.equal(s.engine.info('r')?.state, 'Down');
  t.equal(s.engine.info('r')?.remoteDiscriminator, 0x1111);
  // it comes back with a new discriminator: while the old one is known, refused
  s.deliver(ROUTER, { state: 'Down', myDiscriminator: 0x2222, yourDiscriminator: 0 });
  t.equal(s.engine.info('r')?.state, 'Down');
  t.equal(s.engine.info('r')?.discards.remoteDiscriminator, 1);
  // a Detection Time (3 × 100 ms) without a packet of the old one: bfd.RemoteDiscr forgotten, in Down too
  s.clock.advance(301);
  t.equal(s.engine.info('r')?.remoteDiscriminator, 0, 'bfd.RemoteDiscr reset in Down');
  s.deliver(ROUTER, { state: 'Down', myDiscriminator: 0x2222, yourDiscriminator: 0 });
  t.equal(s.engine.info('r')?.state, 'Init', 'the restarted router is heard');
  t.equal(s.engine.info('r')?.remoteDiscriminator, 0x2222);
  await s.engine.close();
});

t.test('discards meant for a session are visible: the router\'s authentication, with notices at most once a second', async (t) => {
  const s = await setup();
  await s.engine.add('r', cfg(ROUTER));
  const L = s.engine.info('r')?.localDiscriminator ?? 0;
  const before = s.updates.length;
  // a router configured with BFD authentication (A bit, Simple Password section)
  const auth = encodeControlPacket({ diag: 0, state: 'Down', poll: false, final: false, controlPlaneIndependent: false, demand: false, detectMult: 3, myDiscriminator: 7, yourDiscriminator: 0, desiredMinTxIntervalUs: 1_000_000, requiredMinRxIntervalUs: 100_000, requiredMinEchoRxIntervalUs: 0 });
  const withAuth = Buffer.concat([auth, Buffer.from([1, 6, 1, 0x61, 0x62, 0x63])]);
  withAuth[1] = (withAuth[1] ?? 0) | 0x04;
  withAuth[3] = withAuth.length;
  const receive = s.receivers.get('0.0.0.0 3784');
  for (let i = 0; i < 100; i++) receive?.(withAuth, { address: ROUTER, port: 49200 });
  const info = s.engine.info('r');
  t.equal(info?.state, 'Down');
  t.same(info?.discards, { authentication: 100 });
  t.match(info?.lastDiscard, { reason: 'authentication', message: /configure the peer without BFD authentication/ });
  const notices = () => s.updates.slice(before).filter((u) => u.change.kind === 'discards');
  t.equal(notices().length, 1, 'one notice at once, not one per packet');
  s.clock.advance(1000);
  t.equal(notices().length, 2, 'then one for the rest after a second');
  t.same(notices()[1]?.info.discards, { authentication: 100 });
  s.clock.advance(5000);
  t.equal(notices().length, 2, 'and none while nothing more is discarded');
  t.ok(L > 0);
  await s.engine.close();
});

t.test('single-hop: when the kernel cannot check the received TTL, the session\'s packets are discarded (fail closed)', async (t) => {
  const s = await setup((rules) => (rules.length > 0 ? { kind: 'unavailable', reason: 'SO_ATTACH_FILTER: Operation not permitted' } : { kind: 'none' }));
  await s.engine.add('r', cfg(ROUTER));
  t.same(s.rules.get('0.0.0.0 3784'), [{ minTtl: 255 }]);
  s.deliver(ROUTER, { state: 'Down', myDiscriminator: 5, yourDiscriminator: 0 });
  const info = s.engine.info('r');
  t.equal(info?.state, 'Down', 'nothing it cannot check reaches the session');
  t.equal(info?.ttlCheck, 'unavailable');
  t.match(info?.ttlCheckReason, /cannot be checked on 0\.0\.0\.0 3784: SO_ATTACH_FILTER: Operation not permitted; this session's packets are discarded/);
  t.same(info?.discards, { ttlUnchecked: 1 });
  t.match(s.errors, [/the packets of its sessions are discarded \(fail closed\)/]);
  await s.engine.close();
});

t.test('multihop: more sources with minimumTtl than one filter holds: the ones left out fail closed, with the reason', async (t) => {
  const s = await setup();
  const max = maxTtlRules(4);
  t.equal(max, 682, 'IPv4: 682 sources per filter');
  t.equal(maxTtlRules(6), 341, 'IPv6: 341');
  const address = (i: number) => `10.${(i >> 8) & 255}.${i & 255}.1`;
  for (let i = 0; i <= max; i++) await s.engine.add(`p${i}`, cfg(address(i), { multihop: true, minimumTtl: 250 }));
  t.equal(s.rules.get('0.0.0.0 4784')?.length, max, 'the filter holds what fits');
  t.equal(s.engine.info('p0')?.ttlCheck, 'kernel');
  const last = s.engine.info(`p${max}`);
  t.equal(last?.ttlCheck, 'unavailable');
  t.match(last?.ttlCheckReason, /holds 682 multihop sources with minimumTtl and 683 need one; this session's packets are discarded/);
  s.deliver(address(max), { state: 'Down', myDiscriminator: 5, yourDiscriminator: 0 }, '0.0.0.0 4784');
  t.equal(s.engine.info(`p${max}`)?.state, 'Down', 'an unchecked source never moves its session');
  t.same(s.engine.info(`p${max}`)?.discards, { ttlUnchecked: 1 });
  s.deliver(address(0), { state: 'Down', myDiscriminator: 5, yourDiscriminator: 0 }, '0.0.0.0 4784');
  t.equal(s.engine.info('p0')?.state, 'Init', 'a checked source is heard');
  // one session leaves: the last one fits now, and is heard
  await s.engine.remove('p1');
  t.equal(s.engine.info(`p${max}`)?.ttlCheck, 'kernel');
  s.deliver(address(max), { state: 'Down', myDiscriminator: 5, yourDiscriminator: 0 }, '0.0.0.0 4784');
  t.equal(s.engine.info(`p${max}`)?.state, 'Init');
  // a multihop session without minimumTtl needs no check
  await s.engine.add('free', cfg('10.200.0.1', { multihop: true }));
  t.equal(s.engine.info('free')?.ttlCheck, 'none');
  await s.engine.close();
});
