// Speaker stop modes against GoBGP 3.10 with RFC 8538 (graceful restart helper with notification-enabled), watched
// through `gobgp monitor global rib -j` (every best-path change, withdrawals included, so none slips between polls):
// - restart: the N bit negotiated both ways, Cease 6/4 (no Hard Reset); GoBGP keeps our routes stale ("peer graceful
//   restart"), the returning Speaker refreshes them with End-of-RIB: no withdrawal in the stream at any point;
// - departure: 65535:0, then the withdrawals, then Cease / Hard Reset ("Reason=hard-reset").
import t from 'tap';
import { freePort, loopbackPair } from '../helpers/bird.ts';
import { Gobgp, gobgpAvailable } from '../helpers/gobgp.ts';
import type { Route } from '../../bgp/rib/route.ts';
import { SpeakerChild } from '../helpers/speaker-child.ts';
import type { ChildConfig } from '../helpers/speaker-child.ts';
import { missingPrerequisite } from '../helpers/prereq.ts';

if (!missingPrerequisite({ gobgpd: gobgpAvailable() })) {
  t.setTimeout(180_000);
  const routes: Route[] = [
    { prefix: '192.0.2.1/32', family: 'ipv4-unicast' },
    { prefix: '192.0.2.2/32', family: 'ipv4-unicast' },
  ];
  const GRACEFUL_SHUTDOWN = 0xffff0000;

  t.test('GoBGP with RFC 8538: a restart keeps the routes (Cease with N), a departure drains and ends with Hard Reset', async (t) => {
    const a = loopbackPair();
    const port = await freePort(a.bird);
    const g = await Gobgp.start({ local: a.bird, port, as: 65000, neighbor: a.ours, neighborAs: 65001, gracefulRestart: true, notification: true, families: ['ipv4-unicast'] });
    t.teardown(() => g.stop());
    const monitor = g.monitorRib();
    t.teardown(() => monitor.stop());
    const cfg = (restarting: boolean): ChildConfig => ({
      speaker: { localAs: 65001, bgpIdentifier: '10.1.3.2', gracefulRestart: { restarting } },
      // GoBGP treats a loopback NEXT_HOP as invalid: a routable one for this peer
      peers: [{ name: 'gobgp', address: a.bird, port, peerAs: 65000, localAddress: a.ours, nextHopIPv4: '198.51.100.1', connectRetryTimeSec: 1, families: ['ipv4-unicast'], gracefulRestart: { restartTimeSec: 60 } }],
      routes,
      markInitialSyncDone: true,
    });
    const log = (): string => g.proc.stdout + g.proc.stderr;
    const both = async (stale?: boolean): Promise<boolean> => {
      const rs = JSON.parse((await g.cli(['global', 'rib', '-a', 'ipv4', '-j'])) || '{}') as Record<string, { stale?: boolean }[]>;
      return routes.every((r) => rs[r.prefix]?.some((p) => stale === undefined || (p.stale === true) === stale));
    };

    const first = await SpeakerChild.start(cfg(false));
    t.teardown(() => first.stop());
    await g.proc.waitFor(() => both(), 'routes in GoBGP');
    const neighbor = await g.cli(['neighbor', a.ours]);
    t.match(neighbor, /Local: restart time \d+ sec, notification flag set/, 'GoBGP set N');
    t.match(neighbor, /Remote: restart time 60 sec, notification flag set/, 'GoBGP saw our N bit');

    t.same(await first.command({ cmd: 'stop', mode: 'restart', message: 'herald restarting' }), { mode: 'restart', peers: [{ peer: 'gobgp', ending: 'ceaseKeepingRoutes' }] });
    await g.proc.waitFor(() => /peer graceful restart/.test(log()), 'GoBGP helps our graceful restart');
    t.match(log(), /received notification.*Code=6.*Subcode=4/, 'Cease 6/4 received');
    t.notMatch(log(), /hard-reset/, 'no Hard Reset on a restart');
    t.ok(await both(true), 'routes kept, marked stale');

    const second = await SpeakerChild.start(cfg(true));
    t.teardown(() => second.stop());
    await second.waitEvent((e) => e.event === 'endOfRibSent', 'End-of-RIB from the returning Speaker');
    await g.proc.waitFor(() => both(false), 'routes refreshed, no longer stale');
    t.same(monitor.events.filter((e) => e.withdrawal), [], 'no withdrawal at any point of the restart');

    const stopped = second.command({ cmd: 'stop', mode: 'departure', message: 'node leaving', waitTimeSec: 2 });
    await g.proc.waitFor(() => routes.every((r) => monitor.events.some((e) => e.prefix === r.prefix && !e.withdrawal && e.communities.includes(GRACEFUL_SHUTDOWN))), '65535:0 on every route');
    t.same(await stopped, { mode: 'departure', peers: [{ peer: 'gobgp', ending: 'hardReset' }] });
    await g.proc.waitFor(() => /Peer Down.*Reason=hard-reset/.test(log()), 'GoBGP took the Hard Reset');
    // The monitor stream is its own process: its lines may come after GoBGP's log line.
    await g.proc.waitFor(() => routes.every((r) => monitor.events.some((e) => e.prefix === r.prefix && e.withdrawal)), 'the withdrawals in the monitor stream');
    const firstGs = monitor.events.findIndex((e) => e.communities.includes(GRACEFUL_SHUTDOWN));
    const withdrawals = monitor.events.map((e, i) => ({ ...e, i })).filter((e) => e.withdrawal);
    t.same(withdrawals.map((e) => e.prefix).sort(), routes.map((r) => r.prefix).sort(), 'each route withdrawn once');
    t.ok(withdrawals.every((e) => e.i > firstGs), 'withdrawn only after 65535:0');
    t.match(log(), /received notification.*Code=6.*Data="\[6 2 12 /, 'Hard Reset data: the inner Cease 6/2 and its text (RFC 8538 §3.1)');
  });
}
