// Route-level interop with FRR 8.4 bgpd (standalone, passive on loopback, Herald dials): establish, our routes arrive with
// the right attributes (AS_PATH, NEXT_HOP, MED, communities, large communities; IPv6 via MP_REACH_NLRI), withdraw.
import t from 'tap';
import { freePort, loopbackPair } from '../helpers/bird.ts';
import { Frr, frrAvailable } from '../helpers/frr.ts';
import { Speaker } from '../../bgp/speaker.ts';
import type { Route } from '../../bgp/rib/route.ts';
import { missingPrerequisite } from '../helpers/prereq.ts';

if (!missingPrerequisite({ frr: frrAvailable() })) {
  t.setTimeout(120_000);
  t.test('FRR receives our routes with their attributes, then the withdraw', async (t) => {
    const a = loopbackPair();
    const port = await freePort(a.bird);
    const g = await Frr.start({ local: a.bird, port, as: 65000, neighbor: a.ours, neighborAs: 65001 });
    t.teardown(() => g.stop());
    const speaker = new Speaker({ localAs: 65001, bgpIdentifier: '10.1.2.1' });
    t.teardown(() => speaker.stop({ mode: 'departure', waitTimeSec: 0 }));
    const r1: Route = { prefix: '192.0.2.1/32', family: 'ipv4-unicast', communities: [65001 * 65536 + 100], largeCommunities: [[65001, 1, 2]], med: 50 };
    const r2: Route = { prefix: '2001:db8::1/128', family: 'ipv6-unicast' };
    speaker.setRoutes([r1, r2]);
    // FRR rejects a 127/8 NEXT_HOP as martian (NOTIFICATION 3/8): configure a routable one for this peer
    speaker.addPeer({ name: 'frr', address: a.bird, port, peerAs: 65000, localAddress: a.ours, nextHopIPv4: '198.51.100.1', nextHopIPv6: '2001:db8::ff', connectRetryTimeSec: 1 });
    const v4 = await g.proc.waitFor(async () => {
      const rs = await g.routes('ipv4');
      return rs.length === 1 ? rs : undefined;
    }, 'IPv4 route in FRR');
    t.equal(v4[0]!.prefix, '192.0.2.1/32');
    t.equal(v4[0]!.asPath, '65001', 'AS_PATH');
    t.equal(v4[0]!.nextHop, '198.51.100.1', 'NEXT_HOP = the peer-configured next hop');
    t.equal(v4[0]!.med, 50, 'MED');
    t.same(v4[0]!.communities, ['65001:100'], 'communities');
    t.same(v4[0]!.largeCommunities, ['65001:1:2'], 'large communities');
    t.equal(v4[0]!.origin, 'IGP', 'ORIGIN IGP');
    const v6 = await g.proc.waitFor(async () => {
      const rs = await g.routes('ipv6');
      return rs.length === 1 ? rs : undefined;
    }, 'IPv6 route in FRR');
    t.equal(v6[0]!.prefix, '2001:db8::1/128');
    t.equal(v6[0]!.nextHop, '2001:db8::ff', 'MP_REACH_NLRI next hop');
    t.equal(await g.neighborState(), 'Established');
    speaker.setRoutes([r2]);
    await g.proc.waitFor(async () => (await g.routes('ipv4')).length === 0, 'IPv4 withdraw in FRR');
    t.equal((await g.routes('ipv6')).length, 1, 'IPv6 route kept');
  });
}
