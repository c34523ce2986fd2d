// Route-level interop with ExaBGP 4.2 (passive on loopback, Herald dials; ExaBGP hands every UPDATE it decodes to an
// API process as JSON): establish, our routes arrive with the right attributes, withdraw.
import t from 'tap';
import { freePort, loopbackPair } from '../helpers/bird.ts';
import { Exabgp, exabgpAvailable } from '../helpers/exabgp.ts';
import { Speaker } from '../../bgp/speaker.ts';
import type { Route } from '../../bgp/rib/route.ts';
import { missingPrerequisite } from '../helpers/prereq.ts';

if (!missingPrerequisite({ exabgp: exabgpAvailable() })) {
  t.setTimeout(150_000);
  t.test('ExaBGP receives our routes with their attributes, then the withdraw', async (t) => {
    const a = loopbackPair();
    const port = await freePort(a.bird);
    const x = await Exabgp.start({ local: a.bird, port, as: 65000, neighbor: a.ours, neighborAs: 65001 });
    t.teardown(() => x.stop());
    const speaker = new Speaker({ localAs: 65001, bgpIdentifier: '10.1.2.3' });
    t.teardown(() => speaker.stop({ mode: 'departure', waitTimeSec: 0 }));
    const r1: Route = { prefix: '192.0.2.1/32', family: 'ipv4-unicast', communities: [65001 * 65536 + 100], largeCommunities: [[65001, 1, 2]], med: 50 };
    const r2: Route = { prefix: '2001:db8::1/128', family: 'ipv6-unicast' };
    speaker.setRoutes([r1, r2]);
    speaker.addPeer({ name: 'exabgp', address: a.bird, port, peerAs: 65000, localAddress: a.ours, nextHopIPv6: '2001:db8::ff', connectRetryTimeSec: 1 });
    const table = await x.proc.waitFor(() => {
      const tb = x.table();
      return tb.size === 2 ? tb : undefined;
    }, 'both routes in ExaBGP', 60_000);
    const v4 = table.get('ipv4 unicast 192.0.2.1/32');
    t.ok(v4, 'IPv4 route');
    t.equal(v4?.nextHop, a.ours, 'NEXT_HOP = our session address');
    t.same(v4?.attributes['as-path'], [65001], 'AS_PATH');
    t.equal(v4?.attributes['med'], 50, 'MED');
    t.equal(v4?.attributes['origin'], 'igp', 'ORIGIN');
    t.same(v4?.attributes['community'], [[65001, 100]], 'communities');
    t.same(v4?.attributes['large-community'], [[65001, 1, 2]], 'large communities');
    t.notOk('local-preference' in (v4?.attributes ?? {}), 'no LOCAL_PREF toward eBGP');
    const v6 = table.get('ipv6 unicast 2001:db8::1/128');
    t.equal(v6?.nextHop, '2001:db8::ff', 'IPv6 via MP_REACH_NLRI with the configured next hop');
    speaker.setRoutes([r2]);
    await x.proc.waitFor(() => !x.table().has('ipv4 unicast 192.0.2.1/32'), 'withdraw in ExaBGP', 30_000);
    t.ok(x.table().has('ipv6 unicast 2001:db8::1/128'), 'IPv6 route kept');
  });
}
