// Issue 19 at the daemon level, against real BIRD: `herald run` (a child process, manifests source) whose main event
// loop is blocked on purpose for 10 s (the test hook HERALD_TEST_BLOCK_MS: SIGUSR2 busy-loops the main thread) with
// hold time 3 s. The BGP session lives in the speaker thread: it stays Established (same "since" in BIRD, no error),
// BIRD keeps the VIP and the static route, and the admin API, which runs on the blocked main thread, answers only
// once the block is over (the proof that the main thread really was blocked).
import t from 'tap';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { Bird, bgpProtocol, birdAvailable, freePort, sinceMoved } from '../helpers/bird.ts';
import { DaemonProcess } from '../helpers/daemon-process.ts';
import { node, service, slice } from '../helpers/k8s-objects.ts';
import { loopbackBlock, pathsFor, ROOT, sleep, waitHeraldUp } from '../e2e/harness.ts';
import { missingPrerequisite } from '../helpers/prereq.ts';

const VIP = '198.51.100.40';
const STATIC = '203.0.113.0/24';
const HERALD_AS = 65000;
const BIRD_AS = 65100;
const BLOCK_MS = 10_000;

if (!missingPrerequisite({ bird2: birdAvailable() })) {
  t.test('herald run: a 10 s block of the main event loop leaves the hold-time-3 s session Established and the routes in BIRD', { timeout: 180_000 }, async (t) => {
    const block = loopbackBlock();
    const nodeIp = `${block}1`;
    const birdIp = `${block}100`;
    const birdPort = await freePort(birdIp);
    const proc = new DaemonProcess('main-block');
    t.teardown(() => proc.stop(5000));
    const manifests = join(proc.dir, 'manifests');
    mkdirSync(manifests);
    writeFileSync(join(manifests, 'web.yaml'), [node('node-a'), service('web', { etp: 'Local', lbIPs: [VIP] }), slice('web-1', 'web', [['10.2.0.1', 'node-a', { ready: true }]])].map((o) => stringify(o)).join('---\n'));
    const bird = await Bird.start(bgpProtocol({ name: 'herald', local: birdIp, localPort: birdPort, localAs: BIRD_AS, neighbor: nodeIp, neighborPort: 179, neighborAs: HERALD_AS, passive: true, holdTimeSec: 3, families: ['ipv4'] }));
    t.teardown(() => bird.stop());
    const adminPort = await freePort('127.0.0.1');
    const configPath = join(proc.dir, 'herald.yaml');
    writeFileSync(
      configPath,
      stringify({
        bgp: { localAs: HERALD_AS },
        allowedPrefixes: [`${VIP}/32`],
        peers: [{ name: 'bird', address: birdIp, port: birdPort, peerAs: BIRD_AS, localAddress: nodeIp, holdTime: 3, connectRetryTime: 1, ebgpMultihop: 2, families: ['ipv4-unicast'] }],
        routes: [{ prefix: STATIC }],
        source: { manifests },
        flapControl: { holdDown: 0, penalty: 0 },
        admin: { address: '127.0.0.1', port: adminPort },
        stateDir: join(proc.dir, 'state'),
      }),
    );
    proc.spawn(process.execPath, [join(ROOT, 'bin', 'herald.js'), 'run', '--config', configPath, '--node-name', 'node-a', '--node-ip', nodeIp], { env: { ...process.env, HERALD_TEST_BLOCK_MS: String(BLOCK_MS) } });
    await waitHeraldUp({ proc, adminPort });
    const up = await bird.waitFor(async () => {
      const p = await bird.protocol('herald');
      return p?.bgpState === 'Established' ? p : undefined;
    }, 'Established', 60_000);
    await bird.waitFor(async () => (await pathsFor(bird, `${VIP}/32`)).length > 0 && (await pathsFor(bird, STATIC)).length > 0, 'VIP and static route in BIRD', 60_000);

    proc.child?.kill('SIGUSR2');
    await proc.waitFor(() => proc.stdout.includes('main event loop blocked on purpose'), 'the block to start', 10_000, 20);
    const asked = Date.now();
    const answer = fetch(`http://127.0.0.1:${adminPort}/healthz`, { signal: AbortSignal.timeout(60_000) }).then(() => Date.now());
    // meanwhile, from BIRD's side: the session holds, for longer than three hold times
    await sleep(BLOCK_MS - 1000);
    const during = await bird.protocol('herald');
    t.equal(during?.bgpState, 'Established', 'Established while the main loop is blocked');
    const answeredAfterMs = (await answer) - asked;
    t.ok(answeredAfterMs >= 5000, `the admin API (main thread) answered only after the block (${answeredAfterMs} ms)`);

    const after = await bird.protocol('herald');
    t.equal(after?.bgpState, 'Established', 'Established after the block');
    t.notOk(sinceMoved(up.since, after?.since), `the session never went down (since ${up.since} → ${after?.since})`);
    t.equal(after?.lastError, undefined, 'BIRD saw no error');
    t.notMatch(bird.log(), /Hold timer expired/);
    t.same(await pathsFor(bird, `${VIP}/32`), ['herald'], 'BIRD kept the VIP');
    t.same(await pathsFor(bird, STATIC), ['herald'], 'BIRD kept the static route');
    t.match(proc.stdout, /main event loop unblocked/, 'the hook logged the end of the block');
  });
}
