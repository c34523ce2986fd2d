// Speaker over real loopback TCP with the real session layer, against a scripted raw peer that speaks just enough
// BGP (OPEN, KEEPALIVE, ROUTE-REFRESH) and decodes every UPDATE we send with the codec.
import t from 'tap';
import net from 'node:net';
import { Speaker } from '../../bgp/speaker.ts';
import { buildOpen } from '../../bgp/codec/open.ts';
import { decodeMessage, encodeMessage } from '../../bgp/codec/message.ts';
import { MessageFramer } from '../../bgp/wire/framer.ts';
import type { BgpMessage, CodecContext, UpdateMessage } from '../../bgp/codec/types.ts';

const CTX: CodecContext = { fourOctetAs: true, extendedMessage: true, addPath: {} };

/** A passive scripted peer on 127.0.0.x: answers OPEN with its own OPEN + KEEPALIVE, records what it receives. */
async function scriptedPeer(address: string, opts: { as: number; extendedMessage: boolean; v6: boolean }) {
  const received: BgpMessage[] = [];
  const sizes: number[] = [];
  let sock: net.Socket | undefined;
  let waiters: (() => void)[] = [];
  const server = net.createServer((s) => {
    sock = s;
    const framer = new MessageFramer();
    framer.maxLength = 65535;
    s.on('data', (chunk) => {
      for (const m of framer.push(chunk)) {
        const msg = decodeMessage(Buffer.from(m), CTX);
        received.push(msg);
        sizes.push(m.length);
        if (msg.type === 'OPEN') {
          const caps = [
            { type: 'Multiprotocol' as const, afi: 1, safi: 1 },
            ...(opts.v6 ? [{ type: 'Multiprotocol' as const, afi: 2, safi: 1 }] : []),
            { type: 'RouteRefresh' as const },
            { type: 'FourOctetAs' as const, asNumber: opts.as },
            ...(opts.extendedMessage ? [{ type: 'ExtendedMessage' as const }] : []),
          ];
          s.write(encodeMessage(buildOpen({ localAs: opts.as, holdTimeSec: 90, bgpIdentifier: '10.9.9.9', capabilities: caps }), CTX));
          s.write(encodeMessage({ type: 'KEEPALIVE' }, CTX));
        }
        for (const w of waiters) w();
      }
    });
    s.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, address, resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    port,
    received,
    sizes,
    updates: () => received.filter((m): m is UpdateMessage => m.type === 'UPDATE'),
    send: (m: BgpMessage) => sock?.write(encodeMessage(m, CTX)),
    until: (pred: () => boolean, what: string, ms = 20_000) =>
      new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`timed out: ${what}`)), ms);
        const check = () => {
          if (pred()) {
            clearTimeout(timer);
            waiters = waiters.filter((w) => w !== check);
            resolve();
          }
        };
        waiters.push(check);
        check();
      }),
    close: () =>
      new Promise<void>((resolve) => {
        sock?.destroy();
        server.close(() => resolve());
      }),
  };
}

function announced(us: UpdateMessage[]): Set<string> {
  const s = new Set<string>();
  for (const u of us) {
    for (const e of u.nlri) s.add(e.prefix);
    for (const a of u.pathAttributes) if (a.type === 'MP_REACH_NLRI') for (const e of a.nlri) s.add(e.prefix);
  }
  return s;
}

t.test('20,000 routes over loopback: packed, ≤ max length, End-of-RIB, route refresh, withdraw, Cease on shutdown', async (t) => {
  const peer = await scriptedPeer('127.0.0.3', { as: 65002, extendedMessage: false, v6: true });
  t.teardown(() => peer.close());
  const speaker = new Speaker({ localAs: 65001, bgpIdentifier: '10.0.0.1' });
  t.teardown(() => speaker.stop({ mode: 'departure', waitTimeSec: 0 }));
  const routes = [];
  for (let i = 0; i < 20_000; i++) routes.push({ prefix: `10.1.${i >> 8}.${i & 255}/32`, family: 'ipv4-unicast' as const });
  routes.push({ prefix: '2001:db8::/64', family: 'ipv6-unicast' as const });
  speaker.setRoutes(routes);
  speaker.addPeer({ name: 'raw', address: '127.0.0.3', port: peer.port, peerAs: 65002, localAddress: '127.0.0.2', nextHopIPv6: '2001:db8::2', connectRetryTimeSec: 1 });
  await peer.until(() => announced(peer.updates()).size === 20_001, 'all routes');
  t.ok(peer.sizes.every((n) => n <= 4096), 'every message ≤ 4096 octets');
  const us = peer.updates();
  t.ok(us.length <= Math.ceil(20_000 / 810) + 1, `packed: ${us.length} UPDATEs`);
  const nh = us[0]!.pathAttributes.find((a) => a.type === 'NEXT_HOP');
  t.same(nh?.type === 'NEXT_HOP' && nh.nextHop, '127.0.0.2', 'next hop = our session address');
  const asPath = us[0]!.pathAttributes.find((a) => a.type === 'AS_PATH');
  t.same(asPath?.type === 'AS_PATH' && asPath.segments, [{ type: 2, asns: [65001] }]);
  t.notOk(us.some((u) => u.pathAttributes.length === 0), 'no End-of-RIB before markInitialSyncDone');
  speaker.markInitialSyncDone();
  await peer.until(() => peer.updates().filter((u) => u.nlri.length === 0 && u.withdrawnRoutes.length === 0 && (u.pathAttributes.length === 0 || (u.pathAttributes.length === 1 && u.pathAttributes[0]!.type === 'MP_UNREACH_NLRI'))).length === 2, 'End-of-RIB for both families');
  t.pass('End-of-RIB for IPv4 and IPv6');

  const n0 = peer.updates().length;
  peer.send({ type: 'ROUTE-REFRESH', afi: 2, safi: 1, subtype: 0 });
  await peer.until(() => announced(peer.updates().slice(n0)).has('2001:db8::/64'), 'IPv6 resent after ROUTE-REFRESH');
  t.notOk(announced(peer.updates().slice(n0)).has('10.1.0.0/32'), 'IPv4 not resent');

  const n1 = peer.updates().length;
  speaker.setRoutes(routes.slice(10));
  await peer.until(() => peer.updates().slice(n1).some((u) => u.withdrawnRoutes.length === 10), 'withdraw of 10 routes');
  const st = speaker.peers()[0]!;
  t.equal(st.state, 'Established');
  t.equal(st.prefixesAdvertised, 20_001 - 10);
  t.equal(st.negotiated?.extendedMessage, false);

  await speaker.stop({ mode: 'restart', message: 'bye' });
  await peer.until(() => peer.received.some((m) => m.type === 'NOTIFICATION'), 'NOTIFICATION');
  const n = peer.received.find((m) => m.type === 'NOTIFICATION');
  t.same(n?.type === 'NOTIFICATION' && [n.errorCode, n.errorSubcode, n.shutdownCommunication], [6, 2, 'bye'], 'a restart toward a peer without graceful restart: Cease 6/2 with the RFC 9003 text');
});

t.test('extended message: UPDATEs up to 65535 octets', async (t) => {
  const peer = await scriptedPeer('127.0.0.4', { as: 65002, extendedMessage: true, v6: false });
  t.teardown(() => peer.close());
  const speaker = new Speaker({ localAs: 65001, bgpIdentifier: '10.0.0.1' });
  t.teardown(() => speaker.stop({ mode: 'departure', waitTimeSec: 0 }));
  const routes = [];
  for (let i = 0; i < 30_000; i++) routes.push({ prefix: `10.2.${i >> 8}.${i & 255}/32`, family: 'ipv4-unicast' as const });
  speaker.setRoutes(routes);
  speaker.addPeer({ name: 'raw', address: '127.0.0.4', port: peer.port, peerAs: 65002, localAddress: '127.0.0.2', connectRetryTimeSec: 1 });
  await peer.until(() => announced(peer.updates()).size === 30_000, 'all routes');
  t.ok(Math.max(...peer.sizes) > 4096, 'larger than 4096');
  t.ok(peer.sizes.every((n) => n <= 65535), '≤ 65535');
  t.equal(peer.updates().length, 3, '30,000 /32 in 3 UPDATEs');
});
