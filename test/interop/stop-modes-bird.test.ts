// Speaker stop modes against a real BIRD 2.0.12 (docs/decisions.md "Stop modes"), BIRD's route trace on
// (`debug { routes }`: every route it adds or removes is logged, so a removal cannot slip between two polls).
// BIRD 2.0 has no RFC 8538 support: graceful restart without the N bit.
// - restart toward a GR helper: the connection ends without a NOTIFICATION, BIRD keeps the routes stale, the
//   returning Speaker (R bit) re-announces and sends End-of-RIB: no removal in the trace at any point;
// - restart toward a BIRD without graceful restart: Cease 6/2 with our text, the routes go;
// - departure (iBGP): 65535:0 and LOCAL_PREF 0, then the removal, then Cease 6/2 with our text, in that order.
import t from 'tap';
import type { Test } from 'tap';
import { Bird, bgpProtocol, birdAvailable, freePort, loopbackPair } from '../helpers/bird.ts';
import type { Route } from '../../bgp/rib/route.ts';
import { SpeakerChild } from '../helpers/speaker-child.ts';
import type { ChildConfig } from '../helpers/speaker-child.ts';
import { missingPrerequisite } from '../helpers/prereq.ts';

if (!missingPrerequisite({ bird2: birdAvailable() })) {
  t.setTimeout(180_000);
  const routes: Route[] = [
    { prefix: '192.0.2.1/32', family: 'ipv4-unicast' },
    { prefix: '192.0.2.2/32', family: 'ipv4-unicast' },
  ];
  const prefixes = routes.map((r) => r.prefix);

  async function start(t: Test, opts: { gracefulRestart: boolean; ibgp?: boolean }) {
    const a = loopbackPair();
    const port = await freePort(a.bird);
    const localAs = opts.ibgp ? 65001 : 65000;
    const bird = await Bird.start(
      bgpProtocol({
        name: 'herald', local: a.bird, localPort: port, localAs, neighbor: a.ours, neighborPort: 179, neighborAs: 65001, passive: true, trace: true,
        // BIRD's default is `graceful restart aware` (a helper): a BIRD without it needs `off`
        extra: [opts.gracefulRestart ? '  graceful restart on;\n  graceful restart time 60;' : '  graceful restart off;', opts.ibgp ? '  multihop;' : ''].join('\n'),
      }),
    );
    t.teardown(() => bird.stop());
    const cfg = (restarting: boolean): ChildConfig => ({
      speaker: { localAs: 65001, bgpIdentifier: '10.1.3.1', gracefulRestart: { restarting } },
      peers: [{ name: 'bird', address: a.bird, port, peerAs: localAs, localAddress: a.ours, connectRetryTimeSec: 1, families: ['ipv4-unicast'], gracefulRestart: { restartTimeSec: 60 } }],
      routes,
      markInitialSyncDone: true,
    });
    const present = async (): Promise<boolean> => {
      const rs = await bird.routes('table master4 protocol herald');
      return prefixes.every((p) => rs.some((r) => r.prefix === p));
    };
    const child = async (restarting: boolean): Promise<SpeakerChild> => {
      const c = await SpeakerChild.start(cfg(restarting));
      t.teardown(() => c.stop());
      return c;
    };
    return { bird, present, child };
  }

  const removals = (bird: Bird) => bird.routeTrace().filter((e) => e.protocol === 'herald' && e.action === 'removed' && prefixes.includes(e.prefix));

  t.test('restart toward a graceful restart helper: closed without NOTIFICATION, routes kept stale, back with End-of-RIB, never removed', async (t) => {
    const { bird, present, child } = await start(t, { gracefulRestart: true });
    const first = await child(false);
    await bird.waitFor(present, 'routes from the first Speaker');
    const outcome = await first.command({ cmd: 'stop', mode: 'restart', message: 'herald restarting' });
    t.same(outcome, { mode: 'restart', peers: [{ peer: 'bird', ending: 'closedWithoutNotification' }] });
    await first.exit;
    const p = await bird.waitFor(async () => {
      const pr = await bird.protocol('herald');
      return pr?.bgpState !== 'Established' ? pr : undefined;
    }, 'BIRD noticed the session end');
    t.match(p.raw, /Neighbor graceful restart active/, 'BIRD is helping our graceful restart');
    t.notMatch(bird.log(), /Received: /, 'no NOTIFICATION reached BIRD');
    t.ok(await present(), 'routes kept (stale)');

    const second = await child(true);
    await second.waitEvent((e) => e.event === 'endOfRibSent', 'End-of-RIB from the returning Speaker');
    await bird.waitFor(async () => /Neighbor graceful restart done/.test(bird.log()), 'BIRD ended the graceful restart');
    t.ok(await present(), 'same routes after the restart');
    t.same(removals(bird), [], 'the route trace shows no removal of any route at any point');
  });

  t.test('restart toward a BIRD without graceful restart: Cease 6/2 with our text, the routes go', async (t) => {
    const { bird, present, child } = await start(t, { gracefulRestart: false });
    const first = await child(false);
    await bird.waitFor(present, 'routes');
    const outcome = await first.command({ cmd: 'stop', mode: 'restart', message: 'herald restarting' });
    t.same(outcome, { mode: 'restart', peers: [{ peer: 'bird', ending: 'cease' }] });
    const p = await bird.waitFor(async () => {
      const pr = await bird.protocol('herald');
      return pr?.message !== undefined ? pr : undefined;
    }, 'BIRD shows our shutdown message');
    t.match(p.lastError ?? '', /Administrative shutdown/);
    t.equal(p.message, 'herald restarting');
    await bird.waitFor(async () => !(await present()), 'routes flushed');
  });

  t.test('departure (iBGP): 65535:0 with LOCAL_PREF 0, then every route removed, then Cease 6/2 with our text', async (t) => {
    const { bird, present, child } = await start(t, { gracefulRestart: true, ibgp: true });
    const speaker = await child(false);
    await bird.waitFor(present, 'routes');
    const stopped = speaker.command({ cmd: 'stop', mode: 'departure', message: 'node leaving', waitTimeSec: 3 });
    const gs = await bird.waitFor(async () => {
      const rs = await bird.routes('table master4 protocol herald');
      return rs.length === prefixes.length && rs.every((r) => r.communities.includes('65535:0')) ? rs : undefined;
    }, 'GRACEFUL_SHUTDOWN on every route');
    t.ok(gs.every((r) => r.localPref === 0), 'LOCAL_PREF 0 toward iBGP');
    t.same(await stopped, { mode: 'departure', peers: [{ peer: 'bird', ending: 'cease' }] }, 'no N bit with BIRD: a plain Cease');
    const p = await bird.waitFor(async () => {
      const pr = await bird.protocol('herald');
      return pr?.message !== undefined ? pr : undefined;
    }, 'BIRD shows our shutdown message');
    t.equal(p.message, 'node leaving');
    t.notMatch(p.raw, /graceful restart active/, 'no graceful restart after a Cease without N');
    const log = bird.log();
    const lastRemoval = Math.max(...removals(bird).map((e) => log.indexOf(e.line)));
    t.equal(removals(bird).length, prefixes.length, 'each route removed once');
    t.ok(lastRemoval >= 0 && lastRemoval < log.indexOf('Received: Administrative shutdown'), 'the withdrawals came before the Cease');
  });
}
