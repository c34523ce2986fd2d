// The protocol clock runs apart from the control plane (issue 19), against a real BIRD 2 on loopback:
// - the Speaker in its own thread (bgp/speaker-thread/): the main thread blocked on purpose for 10 s, two sessions
//   (eBGP, iBGP) with hold time 3 s stay Established, BIRD keeps the routes, and a change handed over just before the
//   block still reaches BIRD; the same block with the Speaker on the main thread loses both sessions (the control
//   that shows the test can fail);
// - routes the encoder cannot send (an IPv6 next hop with a zone id) are held back alone and reported, in-process and
//   through the thread: the session stays up, every other route (IPv4 included) reaches BIRD, and fixing the next hop
//   sends the held-back ones.
import t from 'tap';
import { Bird, bgpProtocol, birdAvailable, freePort, loopbackPair, sinceMoved } from '../helpers/bird.ts';
import type { BirdProtocol } from '../helpers/bird.ts';
import { Speaker } from '../../bgp/speaker.ts';
import type { PeerConfig } from '../../bgp/speaker.ts';
import { SpeakerProxy } from '../../bgp/speaker-thread/proxy.ts';
import type { Route } from '../../bgp/rib/route.ts';
import { missingPrerequisite } from '../helpers/prereq.ts';

const r1: Route = { prefix: '192.0.2.1/32', family: 'ipv4-unicast', communities: [65001 * 65536 + 1] };
const r2: Route = { prefix: '2001:db8::1/128', family: 'ipv6-unicast' };
const r3: Route = { prefix: '198.51.100.0/24', family: 'ipv4-unicast' };

type AnySpeaker = Speaker | SpeakerProxy;
const start = (thread: boolean, id: string): AnySpeaker => (thread ? SpeakerProxy.start({ localAs: 65001, bgpIdentifier: id }) : new Speaker({ localAs: 65001, bgpIdentifier: id }));

/** Busy-loops the calling thread for `ms` (nothing else runs on it meanwhile). */
function blockMainThread(ms: number): void {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    /* blocked on purpose */
  }
}

/** BIRD with an eBGP and an iBGP session to us, both offering hold time 3 s. */
async function twoSessions(t: { teardown(fn: () => unknown): void }): Promise<{ bird: Bird; peers: PeerConfig[] }> {
  const a = loopbackPair();
  const ePort = await freePort(a.bird);
  const iPort = await freePort(a.third);
  const bird = await Bird.start(
    bgpProtocol({ name: 'heraldE', local: a.bird, localPort: ePort, localAs: 65000, neighbor: a.ours, neighborPort: 179, neighborAs: 65001, passive: true, holdTimeSec: 3 }) +
      bgpProtocol({ name: 'heraldI', local: a.third, localPort: iPort, localAs: 65001, neighbor: a.ours, neighborPort: 180, neighborAs: 65001, passive: true, holdTimeSec: 3, extra: '  multihop;' }),
  );
  t.teardown(() => bird.stop());
  const common = { localAddress: a.ours, nextHopIPv6: '2001:db8::ff', connectRetryTimeSec: 1, holdTimeSec: 3 };
  return { bird, peers: [{ name: 'ebgp', address: a.bird, port: ePort, peerAs: 65000, ...common }, { name: 'ibgp', address: a.third, port: iPort, peerAs: 65001, ...common }] };
}

const established = (ps: BirdProtocol[]): boolean => ps.filter((p) => p.name.startsWith('herald')).every((p) => p.bgpState === 'Established');

/** Sessions whose BIRD `since` moved between two `show protocols` (sinceMoved: a flap moves it by the hold time or more). */
function moved(before: BirdProtocol[], after: BirdProtocol[]): string[] {
  const was = new Map(before.map((p) => [p.name, p.since]));
  return after.filter((p) => p.name.startsWith('herald') && sinceMoved(was.get(p.name), p.since)).map((p) => `${p.name} ${was.get(p.name)} → ${p.since}`);
}

// Regression (CI, 2026-12-02): BIRD read the same unchanged session's since as 06:46:03.609, then 06:46:03.610.
t.test('sinceMoved: a millisecond of BIRD clock drift is no change; a flap, a missing or a malformed reading is', async (t) => {
  t.notOk(sinceMoved('06:46:03.609', '06:46:03.610'));
  t.notOk(sinceMoved('2026-12-02 06:46:03.609', '2026-12-02 06:46:03.609'));
  t.ok(sinceMoved('06:46:03.609', '06:46:06.720'), 'down and up again after a 3 s hold time');
  t.ok(sinceMoved('06:46:03.609', undefined));
  t.ok(sinceMoved('06:46:03.609', 'never'));
});

if (!missingPrerequisite({ bird2: birdAvailable() })) {
  t.setTimeout(240_000);

  t.test('Speaker in its thread: a 10 s block of the main thread leaves both hold-time-3 s sessions Established and the routes in BIRD', async (t) => {
    const { bird, peers } = await twoSessions(t);
    const speaker = start(true, '10.1.1.1');
    t.teardown(() => speaker.stop({ mode: 'departure', waitTimeSec: 0 }));
    const downs: string[] = [];
    speaker.on('peerState', (e: { peer: string; from: string; to: string }) => e.from === 'Established' && downs.push(`${e.peer} ${e.to}`));
    speaker.setRoutes([r1, r2]);
    speaker.markInitialSyncDone();
    for (const p of peers) speaker.addPeer(p);
    await bird.waitFor(async () => established(await bird.protocols()), 'both sessions Established');
    await bird.waitFor(async () => (await bird.routes('table master4')).filter((r) => r.prefix === r1.prefix).length === 2, 'r1 from both sessions');
    const before = await bird.protocols();

    speaker.updateRoutes([r3]); // handed over just before the block: the speaker thread sends it meanwhile
    blockMainThread(10_000);

    const after = await bird.protocols();
    t.ok(established(after), 'both sessions still Established');
    t.same(moved(before, after), [], 'neither session went down and up again');
    t.same(after.filter((p) => p.lastError !== undefined).map((p) => `${p.name}: ${p.lastError}`), [], 'BIRD saw no error');
    t.notMatch(bird.log(), /Hold timer expired/, 'no hold timer expired in BIRD');
    const v4 = await bird.routes('table master4');
    t.equal(v4.filter((r) => r.prefix === r1.prefix).length, 2, 'BIRD kept r1 from both sessions');
    t.equal(v4.filter((r) => r.prefix === r3.prefix).length, 2, 'the change handed over before the block reached BIRD');
    t.equal((await bird.routes('table master6')).filter((r) => r.prefix === r2.prefix).length, 2, 'BIRD kept the IPv6 route');
    // the events the thread sent meanwhile arrive once the main thread runs again
    await new Promise((r) => setTimeout(r, 1500));
    t.same(downs, [], 'no session left Established');
    t.same(speaker.peers().map((p) => p.state), ['Established', 'Established']);
  });

  t.test('control: the same block with the Speaker on the main thread loses both sessions', async (t) => {
    const { bird, peers } = await twoSessions(t);
    const speaker = start(false, '10.1.1.2');
    t.teardown(() => speaker.stop({ mode: 'departure', waitTimeSec: 0 }));
    speaker.setRoutes([r1]);
    speaker.markInitialSyncDone();
    for (const p of peers) speaker.addPeer(p);
    await bird.waitFor(async () => established(await bird.protocols()), 'both sessions Established');
    blockMainThread(10_000);
    const after = await bird.protocols();
    t.same(after.filter((p) => p.name.startsWith('herald')).map((p) => p.lastError), ['BGP Error: Hold timer expired', 'BGP Error: Hold timer expired'], 'BIRD timed out both sessions');
  });

  for (const thread of [false, true]) {
    t.test(`${thread ? 'Speaker in its thread' : 'in-process Speaker'}: an IPv6 next hop with a zone id holds back only its routes, says why, and the session stays up`, async (t) => {
      const a = loopbackPair();
      const port = await freePort(a.bird);
      const bird = await Bird.start(bgpProtocol({ name: 'herald', local: a.bird, localPort: port, localAs: 65000, neighbor: a.ours, neighborPort: 179, neighborAs: 65001, passive: true }));
      t.teardown(() => bird.stop());
      const speaker = start(thread, thread ? '10.1.1.3' : '10.1.1.4');
      t.teardown(() => speaker.stop({ mode: 'departure', waitTimeSec: 0 }));
      const unsent: { peer: string; reason: string; example: string }[] = [];
      speaker.on('unsentRoutes', (e: { peer: string; reason: string; example: string }) => unsent.push(e));
      const states: string[] = [];
      speaker.on('peerState', (e: { to: string }) => states.push(e.to));
      const own: Route = { prefix: '2001:db8::2/128', family: 'ipv6-unicast', nextHop: '2001:db8::99' };
      speaker.setRoutes([r1, r3, r2, own]);
      speaker.markInitialSyncDone();
      const cfg: PeerConfig = { name: 'bird', address: a.bird, port, peerAs: 65000, localAddress: a.ours, nextHopIPv6: 'fe80::1%eth0', connectRetryTimeSec: 1, holdTimeSec: 30 };
      speaker.addPeer(cfg);

      await bird.waitFor(async () => (await bird.routes('table master4')).length === 2, 'both IPv4 routes in BIRD');
      await bird.waitFor(async () => (await bird.routes('table master6')).some((r) => r.prefix === own.prefix), 'the IPv6 route with its own next hop in BIRD');
      const reason = 'ipv6-unicast next hop "fe80::1%eth0" cannot be encoded: not an IPv6 address: "fe80::1%eth0"';
      const status = async () => {
        for (let i = 0; i < 50; i++) {
          const u = speaker.peers()[0]?.unsentRoutes;
          if (u !== undefined) return u;
          await new Promise((r) => setTimeout(r, 100));
        }
        return undefined;
      };
      t.same(await status(), [{ reason, prefixes: 1, example: r2.prefix }], 'the peer status says which routes are held back and why');
      t.same(unsent, [{ peer: 'bird', reason, example: r2.prefix }], 'reported once');
      await new Promise((r) => setTimeout(r, 3000)); // the failure looped every second: it would show by now
      const p = await bird.protocol('herald');
      t.equal(p?.bgpState, 'Established');
      t.equal(p?.lastError, undefined, 'BIRD saw no NOTIFICATION');
      t.same(states.filter((s) => s === 'Established').length, 1, 'one session, never reset');
      t.notOk((await bird.routes('table master6')).some((r) => r.prefix === r2.prefix), 'the held-back route is not in BIRD');

      speaker.updatePeer({ ...cfg, nextHopIPv6: '2001:db8::ff' });
      const v6 = await bird.waitFor(async () => {
        const rs = await bird.routes('table master6');
        return rs.some((r) => r.prefix === r2.prefix) ? rs : undefined;
      }, 'the held-back route once the next hop is fixed');
      t.same(v6.find((r) => r.prefix === r2.prefix)?.bgpNextHop[0], '2001:db8::ff');
      await bird.waitFor(async () => speaker.peers()[0]?.unsentRoutes === undefined, 'nothing held back any more');
      t.equal(states.filter((s) => s === 'Established').length, 1, 'still the same session');
    });
  }
}
