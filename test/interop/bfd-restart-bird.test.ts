// A real `herald run` (standalone, static routes) with BFD at 100 ms × 3 and graceful restart, peering with a real
// BIRD 2 (multihop BFD on loopback, graceful restart on, route trace on: `debug { routes }` logs every route BIRD adds
// or removes, so a removal cannot slip between two polls). What a stop does to BFD and to the routes:
// - `bfd graceful`: a SIGTERM restart (standalone, not drained) sets BFD AdminDown before BGP ends; BIRD takes the
//   BFD down for a graceful restart, keeps the routes stale; Herald started again in the same stateDir brings BFD
//   Up and BGP back, and BIRD's trace shows no removal at any point;
// - a departure (`herald drain`, then SIGTERM), with `bfd graceful` and with `bfd on`: 65535:0, the withdrawals,
//   then BFD and BGP end;
// - `bfd graceful`, the trade-off: kill -STOP of Herald (a dead node) is detected in BFD time, yet BIRD keeps the
//   routes stale until Herald's graceful restart time runs out;
// - plain `bfd on`: the same SIGTERM restart drops the routes (BIRD 2.0.12 resets BGP on a neighbour's AdminDown,
//   docs/routers.md), recorded here so that the docs' claim is tested.
// kill -STOP detection is test/interop/bfd-bird.test.ts. One BFD daemon at a time on the host (test/helpers/bfd.ts).
import t from 'tap';
import type { Test } from 'tap';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { Bird, bgpProtocol, birdAvailable, freePort, loopbackPair } from '../helpers/bird.ts';
import { DaemonProcess } from '../helpers/daemon-process.ts';
import { hostBfdLock, parseBfdSessions } from '../helpers/bfd.ts';
import { skipUnless } from '../helpers/prereq.ts';
import { main } from '../../src/cli/main.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const PREFIXES = ['10.124.0.1/32', '10.124.0.2/32'];
const TOKEN = 'bfd-restart-token';
const skip = skipUnless({ bird2: birdAvailable() });
const T = { timeout: 240_000, skip };
t.setTimeout(720_000);

/** BIRD (`bfd graceful` or `bfd on`) and one `herald run` that can be stopped and started again in its stateDir. */
async function setup(t: Test, bfd: 'graceful' | 'on', restartTimeSec = 120) {
  const addr = loopbackPair();
  const birdPort = await freePort(addr.bird);
  const adminPort = await freePort('127.0.0.1');
  const bird = await Bird.start(
    'protocol bfd {\n  multihop { interval 100 ms; multiplier 3; };\n  debug { states, events };\n}\n' +
      bgpProtocol({
        name: 'herald', local: addr.bird, localPort: birdPort, localAs: 65002, neighbor: addr.ours, neighborPort: 179, neighborAs: 65001, passive: true, holdTimeSec: 30, families: ['ipv4'], trace: true,
        extra: `  bfd ${bfd};\n  graceful restart on;\n  graceful restart time 120;`,
      }),
  );
  t.teardown(() => bird.stop());
  const proc = new DaemonProcess('bfd-restart');
  t.teardown(() => proc.stop(10_000));
  const config = {
    bgp: { localAs: 65001, routerId: '10.0.0.1' },
    peers: [
      {
        name: 'bird', address: addr.bird, port: birdPort, peerAs: 65002, localAddress: addr.ours, holdTime: 30, connectRetryTime: 1, ebgpMultihop: 2, families: ['ipv4-unicast'],
        gracefulRestart: { enabled: true, restartTime: restartTimeSec },
        gracefulShutdown: { enabled: true, waitTime: 3 },
        bfd: { enabled: true, transmitInterval: 100, receiveInterval: 100, detectMultiplier: 3 },
      },
    ],
    routes: PREFIXES.map((prefix) => ({ prefix })),
    admin: { address: '127.0.0.1', port: adminPort },
    stateDir: join(proc.dir, 'state'),
    logLevel: 'info',
  };
  const configPath = join(proc.dir, 'herald.yaml');
  writeFileSync(configPath, stringify(config));
  const api = `http://127.0.0.1:${adminPort}`;
  const spawn = (): void => proc.spawn(process.execPath, [join(ROOT, 'bin', 'herald.js'), 'run', '--config', configPath], { env: { ...process.env, HERALD_ADMIN_TOKEN: TOKEN } });
  t.teardown(() => {
    if (!t.passing()) t.comment(`herald stdout (tail):\n${proc.stdout.slice(-6000)}\nherald stderr (tail):\n${proc.stderr.slice(-2000)}\nBIRD log (tail):\n${bird.log().slice(-6000)}`);
  });

  const bfdSession = async () => parseBfdSessions(await bird.birdc('show bfd sessions')).find((s) => s.address === addr.ours);
  const present = async (): Promise<boolean> => {
    const rs = await bird.routes('table master4 protocol herald');
    return PREFIXES.every((p) => rs.some((r) => r.prefix === p));
  };
  /** Herald started (again): BFD Up at 100 ms in BIRD, BGP Established, every route in BIRD's table. */
  const up = async (what: string): Promise<void> => {
    spawn();
    await proc.waitFor(async () => (await fetch(`${api}/healthz`).catch(() => undefined))?.ok, `${what}: admin API up`, 120_000, 200);
    await bird.waitFor(async () => (await bfdSession())?.state === 'Up', `${what}: BIRD's BFD session Up`, 60_000);
    await bird.waitFor(async () => (await bird.protocol('herald'))?.bgpState === 'Established', `${what}: BGP Established`, 60_000);
    await bird.waitFor(present, `${what}: every route in BIRD`, 60_000);
  };
  const cli = async (...args: string[]) => {
    const out = { text: '', write(s: string) { this.text += s; return true; } };
    const err = { text: '', write(s: string) { this.text += s; return true; } };
    const code = await main([...args, '--api', api], { out, err, env: { HERALD_ADMIN_TOKEN: TOKEN } });
    return { code, out: out.text, err: err.text };
  };
  const removals = () => bird.routeTrace().filter((e) => e.protocol === 'herald' && e.action === 'removed' && PREFIXES.includes(e.prefix));
  return { addr, bird, proc, up, cli, bfdSession, present, removals };
}

if (!skip) await hostBfdLock(t, 300_000); // one wildcard-bound BFD daemon on the host at a time (test/helpers/bfd.ts)

t.test('bfd graceful: a SIGTERM restart sets BFD AdminDown, BIRD keeps the routes, Herald comes back in the same stateDir: no removal', T, async (t) => {
  const { addr, bird, proc, up, bfdSession, present, removals } = await setup(t, 'graceful');
  await up('first start');
  await bird.waitFor(async () => (await bfdSession())?.intervalSec === 0.1, 'BIRD at 100 ms', 20_000);
  const logFrom = bird.log().length;
  const outFrom = proc.stdout.length;

  await proc.kill('SIGTERM', 30_000);
  const stopLog = proc.stdout.slice(outFrom);
  t.match(stopLog, /stopping \(SIGTERM\): restart: not drained \(standalone/, 'the stop is a restart, logged with why');
  // BIRD acts on the AdminDown at once (bfd graceful: it closes the connection itself, keeping our routes), so the
  // Speaker usually finds the session gone already (notEstablished); either way no NOTIFICATION is sent.
  t.match(stopLog, /BGP sessions ended \(restart\): bird (closedWithoutNotification|notEstablished)/, 'BGP ended without a NOTIFICATION from Herald');
  t.notMatch(stopLog, /BFD down: forwarding path/, 'Herald itself saw no BFD failure');
  const bfdLog = () => bird.log().slice(logFrom);
  await bird.waitFor(async () => /BFD session down/.test(bfdLog()) || undefined, "BIRD's BGP protocol notices the BFD down", 10_000);
  t.notMatch(bfdLog(), /Received: /, 'no NOTIFICATION reached BIRD');
  if (process.env['HERALD_TEST_DUMP']) t.comment(`BIRD log of the stop:\n${bfdLog()}`);
  const s = await bfdSession();
  t.not(s?.state, 'Up', `BIRD's BFD session left Up (${s?.state})`);
  t.match(stopLog, /"from":"Up","to":"AdminDown","diagnostic":"Administratively Down"[^\n]*"msg":"BFD state change"/, 'Herald set its BFD session AdminDown (diagnostic Administratively Down)');
  const bfdDown = bfdLog().search(new RegExp(`Session to ${addr.ours.replace(/\./g, '\\.')} changed state from Up to Down`));
  t.ok(bfdDown >= 0, "BIRD's BFD log: Up → Down");
  t.ok(bfdDown < bfdLog().indexOf('BGP session closed'), "BIRD's BFD session went Down before its BGP session closed");
  const away = await bird.protocol('herald');
  t.match(away?.raw ?? '', /Neighbor graceful restart active/, 'BIRD runs a graceful restart for us (bfd graceful)');
  t.ok(await present(), 'the routes are kept (stale) while Herald is away');
  t.same(removals(), [], 'no removal while Herald is away');

  await up('restart in the same stateDir');
  t.match(bird.log().slice(logFrom), new RegExp(`Session to ${addr.ours.replace(/\./g, '\\.')} changed state from \\w+ to Up`), "BIRD's BFD log: back Up");
  await bird.waitFor(async () => /Neighbor graceful restart done/.test(bird.log().slice(logFrom)) || undefined, 'BIRD ends the graceful restart (our End-of-RIB)', 60_000);
  t.ok(await present(), 'every route after the restart');
  t.ok(bird.routeTrace().filter((e) => e.protocol === 'herald' && PREFIXES.includes(e.prefix)).length >= PREFIXES.length, 'the trace holds our routes (fixture check: the trace is on)');
  t.same(removals(), [], "BIRD's route trace: no removal of Herald's routes at any point");
});

for (const mode of ['graceful', 'on'] as const) t.test(`bfd ${mode}: a departure (herald drain, then SIGTERM): 65535:0, the withdrawals, then BFD and BGP end`, T, async (t) => {
  const { bird, proc, up, cli, bfdSession, present, removals } = await setup(t, mode);
  await up('start');
  const logFrom = bird.log().length;
  const drained = await cli('drain', '--reason', 'bfd-restart test');
  t.equal(drained.code, 0, `herald drain: ${drained.out}${drained.err}`);
  t.ok(
    await bird.waitFor(
      async () => {
        const rs = await bird.routes('table master4 protocol herald');
        return rs.length === PREFIXES.length && rs.every((r) => r.communities.includes('65535:0'));
      },
      'GRACEFUL_SHUTDOWN (65535:0) on every route during the wait',
      3_000,
      50,
    ),
    'BIRD sees 65535:0 on every route first',
  );
  await bird.waitFor(async () => (await bird.routes('table master4 protocol herald')).length === 0, 'the routes withdrawn after the wait', 20_000);
  t.equal((await bfdSession())?.state, 'Up', 'BFD still Up after the withdrawals');
  t.equal((await bird.protocol('herald'))?.bgpState, 'Established', 'BGP still Established after the withdrawals');

  const outFrom = proc.stdout.length;
  await proc.kill('SIGTERM', 30_000);
  const stopLog = proc.stdout.slice(outFrom);
  t.match(stopLog, /stopping \(SIGTERM\): departure: the node is drained/, 'the stop is a departure, logged with why');
  await bird.waitFor(async () => (await bird.protocol('herald'))?.bgpState !== 'Established' || undefined, 'BIRD sees the session end', 10_000);
  const log = bird.log().slice(logFrom);
  if (process.env['HERALD_TEST_DUMP']) t.comment(`BIRD log of the departure:\n${log}\nherald:\n${proc.stdout.slice(outFrom)}`);
  const end = log.search(/BFD session down|Received: /);
  t.ok(end >= 0, `BIRD logs how the session ended (${/BFD session down|Received: [^\n]*/.exec(log)?.[0]})`);
  const removed = removals().filter((e) => log.includes(e.line));
  t.equal(removed.length, PREFIXES.length, 'each route removed once');
  t.ok(removed.every((e) => log.indexOf(e.line) < end), 'every removal precedes the end of BFD and BGP');
  t.notOk(await present(), 'nothing kept stale');
  // BIRD acts on the AdminDown that follows the withdrawals before our Cease arrives: with bfd graceful it takes it
  // for a graceful restart too (nothing left to keep), with bfd on it stops the session.
  t.match(log, /BFD session down/, 'BIRD ends the session on our AdminDown');
  if (mode === 'graceful') t.match(log, /Neighbor graceful restart detected/, 'BIRD: a graceful restart with no routes to keep');
  else t.notMatch(log, /Neighbor graceful restart detected/, 'BIRD: no graceful restart');
});

t.test('bfd on (BIRD 2.0.12): the same SIGTERM restart drops the routes ("BFD session down"), as docs/routers.md says', T, async (t) => {
  const { bird, proc, up, present, removals } = await setup(t, 'on');
  await up('first start');
  const logFrom = bird.log().length;
  const outFrom = proc.stdout.length;
  await proc.kill('SIGTERM', 30_000);
  t.match(proc.stdout.slice(outFrom), /stopping \(SIGTERM\): restart: /, 'the stop is a restart');
  await bird.waitFor(async () => removals().length >= PREFIXES.length || undefined, "BIRD removes Herald's routes", 15_000).catch(() => undefined);
  const log = bird.log().slice(logFrom);
  t.match(log, /BFD session down/, 'BIRD reset BGP on our BFD AdminDown');
  t.equal(removals().length, PREFIXES.length, `BIRD 2.0.12 removed every route on a restart with plain "bfd on"; if this fails, BIRD honours RFC 5882 §3.2 now: update docs/routers.md and docs/sessions.md`);
  t.notOk(await present(), 'no route kept');
  await up('restart in the same stateDir');
  t.ok(await present(), 'the routes come back with the session');
});

t.test('bfd graceful, the trade-off: kill -STOP is detected by BFD, yet BIRD keeps the routes stale until the restart time (8 s) ends', T, async (t) => {
  const RESTART_TIME_SEC = 8;
  const { bird, proc, up, bfdSession, present, removals } = await setup(t, 'graceful', RESTART_TIME_SEC);
  await up('start');
  await bird.waitFor(async () => (await bfdSession())?.timeoutSec === 0.3, 'negotiated 100 ms × 3', 20_000);
  const logFrom = bird.log().length;
  const pid = proc.child?.pid;
  if (pid === undefined) throw new Error('no herald pid');
  process.kill(pid, 'SIGSTOP');
  try {
    await bird.waitFor(async () => ((await bfdSession())?.state !== 'Up' && /BFD session down/.test(bird.log().slice(logFrom))) || undefined, 'BIRD detects the stopped Herald by BFD', 10_000, 20);
    t.match(bird.log().slice(logFrom), /Neighbor graceful restart detected/, 'BIRD takes the BFD down for a graceful restart');
    const detected = Date.now();
    await new Promise((r) => setTimeout(r, 2000));
    t.ok(await present(), "2 s after BFD detected the dead node (Detection Time 0.3 s), BIRD still holds its routes (stale): no fast failover");
    t.same(removals(), [], 'nothing removed yet');
    await bird.waitFor(async () => removals().length === PREFIXES.length || undefined, 'BIRD removes the stale routes when the restart time ends', (RESTART_TIME_SEC + 30) * 1000);
    t.comment(`routes removed ${Date.now() - detected} ms after BIRD's BFD detection (restart time ${RESTART_TIME_SEC} s)`);
    const log = bird.log().slice(logFrom);
    t.match(log, /graceful restart timeout/i, `BIRD says why: ${/[^\n]*graceful restart timeout[^\n]*/i.exec(log)?.[0]}`);
    t.notOk(await present(), 'the routes are gone');
  } finally {
    process.kill(pid, 'SIGCONT');
  }
});
