// Speaker stop modes against FRR 8.4 bgpd with `bgp graceful-restart notification` (RFC 8538; FRR is a graceful
// restart helper by default), read from bgpd's own log (`debug bgp updates in`, neighbor events):
// - restart: Cease 6/4 with N, FRR keeps our routes stale; when the returning Speaker re-announces them FRR logs
//   "duplicate ignored" (the stale path was still there) and never "withdrawn";
// - departure: 65535:0 (graceful-shutdown), then the withdrawals, then "NOTIFICATION(Hard Reset) ... 6/2" with our text.
import t from 'tap';
import { freePort, loopbackPair } from '../helpers/bird.ts';
import { Frr, frrAvailable } from '../helpers/frr.ts';
import type { Route } from '../../bgp/rib/route.ts';
import { SpeakerChild } from '../helpers/speaker-child.ts';
import type { ChildConfig } from '../helpers/speaker-child.ts';
import { missingPrerequisite } from '../helpers/prereq.ts';

if (!missingPrerequisite({ frr: frrAvailable() })) {
  t.setTimeout(180_000);
  const routes: Route[] = [
    { prefix: '192.0.2.1/32', family: 'ipv4-unicast' },
    { prefix: '192.0.2.2/32', family: 'ipv4-unicast' },
  ];

  t.test('FRR with RFC 8538: a restart keeps the routes stale, a departure drains and ends with Hard Reset', async (t) => {
    const a = loopbackPair();
    const port = await freePort(a.bird);
    const f = await Frr.start({
      local: a.bird, port, as: 65000, neighbor: a.ours, neighborAs: 65001, ipv6: false,
      extra: ' bgp graceful-restart notification',
      debug: ['debug bgp updates in', 'debug bgp neighbor-events'],
    });
    t.teardown(() => f.stop());
    const cfg = (restarting: boolean): ChildConfig => ({
      speaker: { localAs: 65001, bgpIdentifier: '10.1.3.3', gracefulRestart: { restarting } },
      peers: [{ name: 'frr', address: a.bird, port, peerAs: 65000, localAddress: a.ours, nextHopIPv4: '198.51.100.1', connectRetryTimeSec: 1, families: ['ipv4-unicast'], gracefulRestart: { restartTimeSec: 60 } }],
      routes,
      markInitialSyncDone: true,
    });
    const lines = (re: RegExp): string[] => f.log().split('\n').filter((l) => re.test(l));
    const withdrawn = (): string[] => lines(/rcvd UPDATE about 192\.0\.2\.\d+\/32 IPv4 unicast -- withdrawn/);
    // `show bgp ipv4 unicast`: a stale path's status starts with S ("S>")
    const stale = async (): Promise<number> => (await f.vtysh('show bgp ipv4 unicast')).split('\n').filter((l) => /^S\S*\s+192\.0\.2\.\d+\/32/.test(l)).length;

    const first = await SpeakerChild.start(cfg(false));
    t.teardown(() => first.stop());
    await f.proc.waitFor(async () => (await f.count()) === routes.length, 'routes in FRR');
    const gr = (await f.neighbor())?.['gracefulRestartInfo'] as { nBit?: boolean } | undefined;
    t.equal(gr?.nBit, true, 'FRR saw our N bit');

    t.same(await first.command({ cmd: 'stop', mode: 'restart', message: 'herald restarting' }), { mode: 'restart', peers: [{ peer: 'frr', ending: 'ceaseKeepingRoutes' }] });
    await f.proc.waitFor(() => lines(/%NOTIFICATION: received from neighbor .* 6\/4 \(Cease\/Administrative Reset\) "herald restarting"/).length === 1, 'FRR got Cease 6/4 with our text');
    await f.proc.waitFor(async () => (await stale()) === routes.length, 'routes kept, marked stale');

    const second = await SpeakerChild.start(cfg(true));
    t.teardown(() => second.stop());
    await second.waitEvent((e) => e.event === 'endOfRibSent', 'End-of-RIB from the returning Speaker');
    await f.proc.waitFor(() => lines(/rcvd 192\.0\.2\.\d+\/32 IPv4 unicast\.\.\.duplicate ignored/).length === routes.length, 're-announced routes found in place');
    await f.proc.waitFor(async () => (await stale()) === 0 && (await f.count()) === routes.length, 'the routes, no stale mark left');
    t.same(withdrawn(), [], 'no withdrawal during the restart');

    const stopped = second.command({ cmd: 'stop', mode: 'departure', message: 'node leaving', waitTimeSec: 2 });
    await f.proc.waitFor(async () => (await f.routes('ipv4')).filter((r) => r.communities.includes('graceful-shutdown')).length === routes.length, '65535:0 on every route');
    t.same(await stopped, { mode: 'departure', peers: [{ peer: 'frr', ending: 'hardReset' }] });
    await f.proc.waitFor(() => lines(/%NOTIFICATION\(Hard Reset\): received from neighbor .* 6\/2 \(Cease\/Administrative Shutdown\) "node leaving"/).length === 1, 'FRR decoded the Hard Reset with the inner 6/2 and our text');
    const log = f.log();
    t.equal(withdrawn().length, routes.length, 'each route withdrawn once');
    t.ok(withdrawn().every((l) => log.indexOf(l) < log.indexOf('NOTIFICATION(Hard Reset)')), 'the withdrawals came before the Hard Reset');
  });
}
