// Route-level interop with a real BIRD 2 on loopback: eBGP and iBGP, IPv4 and IPv6 (over an IPv4 session with an
// explicit IPv6 next hop), attributes as BIRD sees them, withdraw, ROUTE-REFRESH from `birdc reload in`, graceful
// shutdown (a departure: 65535:0, the withdrawal, then Cease 6/2 with our text), and graceful restart (kill -9 of a Herald child process, BIRD keeps
// the routes stale, the restarted Herald with the R bit re-announces, no withdraw in between).
import t from 'tap';
import { Bird, bgpProtocol, birdAvailable, freePort, loopbackPair } from '../helpers/bird.ts';
import type { BirdRoute } from '../helpers/bird.ts';
import { Speaker } from '../../bgp/speaker.ts';
import type { Route } from '../../bgp/rib/route.ts';
import { SpeakerChild } from '../helpers/speaker-child.ts';
import { missingPrerequisite } from '../helpers/prereq.ts';

if (!missingPrerequisite({ bird2: birdAvailable() })) {
  t.setTimeout(180_000);

  const r1: Route = {
    prefix: '192.0.2.1/32',
    family: 'ipv4-unicast',
    communities: [65001 * 65536 + 100],
    largeCommunities: [[65001, 1, 2]],
    med: 50,
    localPref: 300,
  };
  const r2: Route = { prefix: '2001:db8::1/128', family: 'ipv6-unicast' };
  const r3: Route = { prefix: '198.51.100.0/24', family: 'ipv4-unicast' };

  const byPrefix = (routes: BirdRoute[], p: string): BirdRoute | undefined => routes.find((r) => r.prefix === p);

  t.test('eBGP and iBGP, IPv4 and IPv6, attributes, withdraw, route refresh, graceful shutdown', async (t) => {
    const a = loopbackPair();
    const ePort = await freePort(a.bird);
    const iPort = await freePort(a.third);
    const bird = await Bird.start(
      bgpProtocol({ name: 'heraldE', local: a.bird, localPort: ePort, localAs: 65000, neighbor: a.ours, neighborPort: 179, neighborAs: 65001, passive: true }) +
        // iBGP over loopback: BIRD waits for a directly connected neighbour unless told multihop. BIRD locks
        // (neighbour address, port): a second protocol to the same neighbour needs another (unused, passive) port.
        bgpProtocol({ name: 'heraldI', local: a.third, localPort: iPort, localAs: 65001, neighbor: a.ours, neighborPort: 180, neighborAs: 65001, passive: true, extra: '  multihop;' }),
    );
    t.teardown(() => bird.stop());
    const speaker = new Speaker({ localAs: 65001, bgpIdentifier: '10.1.1.1' });
    const events: { peer: string; family?: string; kind?: string }[] = [];
    speaker.on('routeRefresh', (e: { peer: string; family: string }) => events.push({ ...e, kind: 'routeRefresh' }));
    speaker.on('updateSent', (e: { peer: string; kind: string; family: string }) => events.push(e));
    t.teardown(() => speaker.stop({ mode: 'departure', waitTimeSec: 0 }));
    speaker.setRoutes([r1, r2]);
    speaker.markInitialSyncDone();
    const common = { localAddress: a.ours, nextHopIPv6: '2001:db8::ff', connectRetryTimeSec: 1, holdTimeSec: 30 };
    speaker.addPeer({ name: 'ebgp', address: a.bird, port: ePort, peerAs: 65000, ...common });
    speaker.addPeer({ name: 'ibgp', address: a.third, port: iPort, peerAs: 65001, ...common });

    const v4 = await bird.waitFor(async () => {
      const rs = await bird.routes('table master4');
      return rs.filter((r) => r.prefix === '192.0.2.1/32').length === 2 ? rs : undefined;
    }, 'IPv4 route from both sessions');
    const e4 = v4.find((r) => r.protocol === 'heraldE')!;
    const i4 = v4.find((r) => r.protocol === 'heraldI')!;
    t.same(e4.bgpPath, [65001], 'eBGP: our AS prepended');
    t.same(i4.bgpPath, [], 'iBGP: empty AS_PATH');
    t.same(e4.communities, ['65001:100']);
    t.same(e4.largeCommunities, ['65001:1:2']);
    t.equal(e4.med, 50);
    t.equal(i4.med, 50);
    t.equal(i4.localPref, 300, 'LOCAL_PREF sent toward iBGP');
    t.not(e4.localPref, 300, 'LOCAL_PREF not sent toward eBGP (BIRD shows its own default)');
    t.same(e4.bgpNextHop, [a.ours], 'next hop = session local address');
    t.equal(e4.origin, 'IGP');

    const v6 = await bird.waitFor(async () => {
      const rs = await bird.routes('table master6');
      return rs.filter((r) => r.prefix === '2001:db8::1/128').length === 2 ? rs : undefined;
    }, 'IPv6 route over the IPv4 sessions');
    t.same(byPrefix(v6, '2001:db8::1/128')!.bgpNextHop[0], '2001:db8::ff', 'configured IPv6 next hop');

    await bird.waitFor(async () => events.filter((e) => e.kind === 'endOfRib').length >= 4, 'End-of-RIB sent for both families to both peers');

    // announce one more, withdraw one
    speaker.setRoutes([r2, r3]);
    await bird.waitFor(async () => {
      const rs = await bird.routes('table master4');
      return !rs.some((r) => r.prefix === '192.0.2.1/32') && rs.filter((r) => r.prefix === '198.51.100.0/24').length === 2;
    }, 'withdraw of 192.0.2.1/32 and announce of 198.51.100.0/24');
    t.pass('withdraw and announce seen in BIRD');

    // BIRD's `reload in` sends us ROUTE-REFRESH; we resend the family
    const before = events.length;
    await bird.birdc('reload in heraldE');
    await bird.waitFor(async () => events.slice(before).some((e) => e.kind === 'routeRefresh' && e.peer === 'ebgp'), 'ROUTE-REFRESH received');
    await bird.waitFor(async () => events.slice(before).some((e) => e.kind === 'announce' && e.peer === 'ebgp'), 'routes re-sent after refresh');
    t.ok((await bird.routes('table master4')).some((r) => r.prefix === '198.51.100.0/24' && r.protocol === 'heraldE'), 'routes still there after refresh');

    const st = speaker.peers();
    t.same(st.map((p) => p.state), ['Established', 'Established']);
    t.equal(st[0]!.prefixesAdvertised, 2);
    t.ok((st[0]!.messagesSent['UPDATE'] ?? st[0]!.messagesSent['2'] ?? 0) > 0, 'UPDATE counter');

    // a departure: 65535:0 seen in BIRD during the wait, then the withdrawal and Cease 6/2 with our text
    const done = speaker.stop({ mode: 'departure', message: 'herald maintenance', waitTimeSec: 3 });
    const gs = await bird.waitFor(async () => {
      const rs = await bird.routes('table master4');
      const r = rs.find((x) => x.prefix === '198.51.100.0/24' && x.protocol === 'heraldE');
      return r?.communities.includes('65535:0') ? rs : undefined;
    }, 'GRACEFUL_SHUTDOWN community');
    t.equal(gs.find((x) => x.prefix === '198.51.100.0/24' && x.protocol === 'heraldI')?.localPref, 0, 'iBGP: LOCAL_PREF 0');
    await done;
    const p = await bird.waitFor(async () => {
      const pr = await bird.protocol('heraldE');
      return pr?.message !== undefined ? pr : undefined;
    }, 'BIRD sees the shutdown message');
    t.match(p.lastError ?? p.info, /Administrative shutdown/);
    t.equal(p.message, 'herald maintenance');
  });

  t.test('graceful restart: kill -9, BIRD keeps stale routes, restart with R bit, same routes, no withdraw', async (t) => {
    const a = loopbackPair();
    const port = await freePort(a.bird);
    const bird = await Bird.start(
      bgpProtocol({
        name: 'herald',
        local: a.bird,
        localPort: port,
        localAs: 65000,
        neighbor: a.ours,
        neighborPort: 179,
        neighborAs: 65001,
        passive: true,
        extra: '  graceful restart on;\n  graceful restart time 60;',
      }),
    );
    t.teardown(() => bird.stop());
    const cfg = (restarting: boolean) => ({
      speaker: { localAs: 65001, bgpIdentifier: '10.1.1.2', gracefulRestart: { restarting } },
      peers: [{ name: 'bird', address: a.bird, port, peerAs: 65000, localAddress: a.ours, nextHopIPv6: '2001:db8::ff', connectRetryTimeSec: 1, gracefulRestart: { restartTimeSec: 60 } }],
      routes: [r1, r2, r3],
      markInitialSyncDone: true,
    });
    const first = await SpeakerChild.start(cfg(false));
    t.teardown(() => first.stop());
    const want = ['192.0.2.1/32', '198.51.100.0/24'];
    const has = async (): Promise<boolean> => {
      const rs = await bird.routes('table master4 protocol herald');
      return want.every((p) => rs.some((r) => r.prefix === p));
    };
    await bird.waitFor(has, 'routes from the first Herald');
    const pr = await bird.protocol('herald');
    t.ok(pr?.neighborCapabilities.some((c) => /Graceful restart/i.test(c)), 'BIRD saw our graceful restart capability');

    // watch BIRD's table the whole time: a withdraw in between would show as a missing route
    let missing = 0;
    const missingOutputs: string[] = [];
    let watching = true;
    const watcher = (async () => {
      while (watching) {
        const out = await bird.birdc('show route all table master4 protocol herald').catch(() => undefined);
        // birdc occasionally returns nothing at all (not even its banner): not a sample
        if (out !== undefined && out.includes('ready.') && !want.every((p) => out.includes(p))) {
          missing++;
          missingOutputs.push(out);
        }
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    first.kill('SIGKILL');
    await first.exit;
    await bird.waitFor(async () => (await bird.protocol('herald'))?.bgpState !== 'Established', 'BIRD noticed the session loss');
    t.ok(await has(), 'routes kept (stale) after kill -9');
    t.match((await bird.protocol('herald'))?.raw ?? '', /Neighbor graceful restart active/, 'BIRD is in graceful restart for us');

    const second = await SpeakerChild.start(cfg(true));
    t.teardown(() => second.stop());
    await bird.waitFor(async () => (await bird.protocol('herald'))?.bgpState === 'Established', 'restarted session Established');
    await second.waitEvent((e) => e.event === 'endOfRibSent', 'End-of-RIB sent by the restarted Herald');
    // birdc sometimes answers nothing while the watcher above polls it too (CI once read no protocol here): poll
    const p2 = await bird.waitFor(() => bird.protocol('herald'), 'BIRD shows the protocol');
    t.ok(p2.neighborCapabilities.includes('Restart recovery'), 'R bit (Restart recovery) in the restarted OPEN');
    t.match(p2.channels['ipv4']?.['Import withdraws'] ?? '', /^0\s/, 'BIRD counted no withdraw');
    await new Promise((r) => setTimeout(r, 500));
    watching = false;
    await watcher;
    t.equal(missing, 0, 'no withdraw seen in between', { missingOutputs });
    const rs = await bird.routes('table master4 protocol herald');
    t.same(rs.map((r) => r.prefix).sort(), [...want].sort(), 'same routes after the restart');
    t.notOk(rs.some((r) => /stale/i.test(JSON.stringify(r.attrs))), 'no stale marks left');
  });
}
