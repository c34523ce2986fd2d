// BFD interop with a real BIRD 2 (`protocol bfd` + `bfd on` on its BGP session), multihop on loopback (RFC 5883):
// Up at 100 ms × 3; the session stays Up through 500 ms and 2 s blocks of Herald's main event loop; AdminDown
// reaches BIRD (and BIRD 2.0 drops BGP on it regardless of RFC 5882 §3.2, recorded here); kill -STOP of Herald:
// BIRD drops the session and the route within a few intervals, far below the hold time; kill -CONT brings it back.
// One BFD daemon at a time: BIRD's BFD sockets bind the wildcard address, so two BFD-speaking daemons on one host
// take each other's packets; this file runs its tests in sequence and holds the host BFD lock (test/helpers/bfd.ts).
import t from 'tap';
import { Bird, bgpProtocol, birdAvailable, freePort, loopbackPair, sinceMoved } from '../helpers/bird.ts';
import { SpeakerChild } from '../helpers/speaker-child.ts';
import { hostBfdLock, parseBfdSessions, stopUntil } from '../helpers/bfd.ts';
import type { PeerConfig } from '../../bgp/speaker.ts';

if (!birdAvailable()) {
  t.comment('bird2 is not installed (apt-get install -y bird2): BFD interop tests cannot run');
  t.fail('bird2 missing');
}

const T = { timeout: 90_000 };
await hostBfdLock(t, 100_000); // one wildcard-bound BFD daemon on the host at a time (test/helpers/bfd.ts)
const PREFIX = '10.123.0.0/24';

async function setup(t: { teardown(fn: () => unknown): void }) {
  const addr = loopbackPair();
  const birdPort = await freePort(addr.bird);
  const bird = await Bird.start(
    'protocol bfd {\n  multihop { interval 100 ms; multiplier 3; };\n}\n' +
      bgpProtocol({ name: 'herald', local: addr.bird, localPort: birdPort, localAs: 65002, neighbor: addr.ours, neighborPort: 179, neighborAs: 65001, passive: true, families: ['ipv4'], extra: '  bfd on;' }),
  );
  t.teardown(() => bird.stop());
  const peer: PeerConfig = {
    name: 'bird',
    address: addr.bird,
    port: birdPort,
    peerAs: 65002,
    localAddress: addr.ours,
    connectRetryTimeSec: 2,
    families: ['ipv4-unicast'],
    bfd: { transmitIntervalMs: 100, receiveIntervalMs: 100, detectMultiplier: 3, multihop: true },
  };
  const child = await SpeakerChild.start({ speaker: { localAs: 65001, bgpIdentifier: '10.0.0.1' }, peers: [peer], routes: [{ prefix: PREFIX, family: 'ipv4-unicast' }], markInitialSyncDone: true });
  t.teardown(() => child.kill('SIGKILL'));
  const bfd = async () => parseBfdSessions(await bird.birdc('show bfd sessions')).find((s) => s.address === addr.ours);
  const routes = async () => (await bird.routes('protocol herald')).filter((r) => r.prefix === PREFIX);
  await bird.waitFor(async () => (await bfd())?.state === 'Up', 'BIRD BFD Up', 30_000);
  await bird.waitFor(async () => (await bird.protocol('herald'))?.bgpState === 'Established' && (await routes()).length === 1, 'BGP Established with the route', 30_000);
  return { addr, bird, child, bfd, routes };
}

type Peers = { name: string; state: string; bfd?: { state: string; detectionTimeMs: number; transmitIntervalMs: number; multihop: boolean; ttlCheck: string } }[];

t.test('multihop BFD Up at 100 ms × 3; stays Up through 500 ms and 2 s main-loop blocks', T, async (t) => {
  const { bird, child, bfd, routes } = await setup(t);
  await bird.waitFor(async () => (await bfd())?.intervalSec === 0.1, 'BIRD at 100 ms after the Poll Sequence', 10_000);
  const peers = (await child.command({ cmd: 'peers' })) as Peers;
  t.same(peers[0]?.bfd && { state: peers[0].bfd.state, multihop: peers[0].bfd.multihop, tx: peers[0].bfd.transmitIntervalMs, detect: peers[0].bfd.detectionTimeMs }, { state: 'Up', multihop: true, tx: 100, detect: 300 }, 'Herald: Up, 100 ms, Detection Time 300 ms');
  t.equal((await bfd())?.timeoutSec, 0.3, "BIRD's Detection Time for us: 0.3 s");
  const before = { bfd: (await bfd())?.since, bgp: (await bird.protocol('herald'))?.since };
  await child.command({ cmd: 'block', ms: 500 });
  await child.command({ cmd: 'block', ms: 2000 });
  await new Promise((r) => setTimeout(r, 300));
  const after = await bfd();
  t.equal(after?.state, 'Up', 'BIRD: BFD still Up');
  t.notOk(sinceMoved(before.bfd, after?.since), `never left Up (since ${before.bfd} → ${after?.since})`);
  const bgpAfter = (await bird.protocol('herald'))?.since;
  t.notOk(sinceMoved(before.bgp, bgpAfter), `BGP never reset (since ${before.bgp} → ${bgpAfter})`);
  t.equal((await routes()).length, 1, 'the route is still there');
  t.notOk(child.events.some((e) => e.event === 'bfdState' && e.to !== 'Up' && e.from === 'Up'), 'Herald saw no BFD change either');
});

t.test('AdminDown: BIRD sees it; Herald keeps BGP; BIRD 2.0 resets BGP all the same (recorded); AdminUp: Up', T, async (t) => {
  const { bird, child, bfd, routes } = await setup(t);
  const bgpSince = (await bird.protocol('herald'))?.since;
  const from = child.events.length;
  await child.command({ cmd: 'bfdAdminDown' });
  await bird.waitFor(async () => (await bfd())?.state === 'Down', 'BIRD sees our AdminDown', 5000);
  const peers = (await child.command({ cmd: 'peers' })) as Peers;
  t.equal(peers[0]?.bfd?.state, 'AdminDown');
  const ours = child.events.slice(from).filter((e) => e.event === 'peerState' && (e.reason as { kind?: string; subcode?: number } | undefined)?.kind === 'notificationSent');
  t.same(ours, [], 'Herald never resets BGP for its own AdminDown');
  // RFC 5882 §3.2 says a neighbour's AdminDown is not a path failure; BIRD 2.0's bfd_request_notify flags any
  // Up → Down as "down" whatever the remote state, and BGP stops ("BFD session down"). docs/routers.md says so.
  await bird.waitFor(async () => sinceMoved(bgpSince, (await bird.protocol('herald'))?.since), 'BIRD reacts', 3000).catch(() => undefined);
  const proto = await bird.protocol('herald');
  t.ok(sinceMoved(bgpSince, proto?.since) && /BFD session down/.test(proto?.lastError ?? proto?.info ?? ''), `BIRD 2.0.12 reset BGP on our AdminDown (${proto?.lastError ?? proto?.info}); if this fails, BIRD honours RFC 5882 §3.2 now: update docs/routers.md and docs/sessions.md`);
  await child.command({ cmd: 'bfdAdminUp' });
  await bird.waitFor(async () => (await bfd())?.state === 'Up', 'BIRD BFD Up again', 10_000);
  await bird.waitFor(async () => (await bird.protocol('herald'))?.bgpState === 'Established' && (await routes()).length === 1, 'BGP and route back', 30_000);
});

t.test('kill -STOP of Herald: BIRD drops BGP and the route within a few intervals; kill -CONT: all back', T, async (t) => {
  const { bird, child, bfd, routes } = await setup(t);
  await bird.waitFor(async () => (await bfd())?.timeoutSec === 0.3, 'negotiated 100 ms × 3', 10_000);
  const hold = (await bird.protocol('herald'))?.holdTimer;
  const detectedMs = await stopUntil(bird, child.pid, async () => (await routes()).length === 0);
  t.ok(detectedMs < 2000, `route gone ${detectedMs} ms after SIGSTOP (3 × 100 ms + BIRD's processing and our polling; hold time ${hold})`);
  // birdc can answer between BIRD's route removal and its protocol state: poll briefly for the reason.
  const why = await bird
    .waitFor(async () => {
      const proto = await bird.protocol('herald');
      const text = proto?.lastError ?? proto?.info;
      return text !== undefined && /BFD/i.test(text) ? text : undefined;
    }, 'BIRD names BFD as the reason', 5_000, 50)
    .catch(async () => {
      const proto = await bird.protocol('herald');
      return `${proto?.lastError ?? proto?.info}`;
    });
  t.match(why, /BFD/i, `BIRD says why: ${why}`);
  await bird.waitFor(async () => (await bfd())?.state === 'Up', 'BFD Up after SIGCONT', 30_000);
  await bird.waitFor(async () => (await bird.protocol('herald'))?.bgpState === 'Established' && (await routes()).length === 1, 'BGP and route back', 30_000);
  const down = child.events.find((e) => e.event === 'bfdState' && e.from === 'Up' && e.to === 'Down');
  t.ok(down?.failure === true, `Herald: BFD failure after SIGCONT (${String(down?.diagnostic)})`);
});
