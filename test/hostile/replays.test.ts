// Issue 35 N4, N6 and N10, replayed against `herald run` as the DaemonSet runs it (deploy/herald, 320 MiB; harness.ts):
// - N4: a peer's `password.file` or `admin.tokenFile` that is a FIFO, /dev/zero or a directory hung the main thread
//   or filled the memory; now `herald run` refuses it at once, naming the file and the fix, and a reload naming one
//   leaves the running peers alone;
// - N6: one forged BFD Down packet from the router's address reset the BGP session; now packets whose
//   discriminators do not match the session (Your Discriminator zero or unknown, My Discriminator not the router's;
//   sent with TTL 254 from another port of the router's address) are discarded and counted, and BIRD's BFD and BGP
//   sessions never move;
// - N10: two peers at one address both with BFD: `herald config check` and `herald run` refuse it naming both.
import t from 'tap';
import { execFileSync, spawnSync } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { stringify } from 'yaml';
import { encodeControlPacket } from '../../bgp/bfd/packet.ts';
import type { BfdState } from '../../bgp/bfd/packet.ts';
import { ROOT } from '../e2e/harness.ts';
import { hostBfdLock, parseBfdSessions } from '../helpers/bfd.ts';
import { birdAvailable, sinceMoved } from '../helpers/bird.ts';
import { skipUnless } from '../helpers/prereq.ts';
import { sleep, startHostileHerald } from './harness.ts';
import type { HostileHerald } from './harness.ts';

t.setTimeout(400_000);

/** A temp dir of fixtures, removed when `t` ends. */
function fixtures(t: { teardown(fn: () => unknown): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'herald-replays-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Waits (bounded) for a daemon expected to refuse its configuration to exit; its exit code and stderr. */
async function refusal(h: HostileHerald): Promise<{ code: number | null; stderr: string }> {
  for (let i = 0; i < 600 && h.proc.alive; i++) await sleep(100);
  return { code: h.proc.alive ? null : (h.proc.child?.exitCode ?? null), stderr: h.proc.stderr };
}

const REGULAR_ONLY = /not a regular file \(Herald reads only regular files; a symlink to one, e\.g\. a mounted ConfigMap or Secret, is fine\)/;

t.test('N4: secret files that are a FIFO, /dev/zero or a directory: herald run refuses them at once, naming the file and the fix', async (t) => {
  const fx = fixtures(t);
  execFileSync('mkfifo', [join(fx, 'fifo')]);
  mkdirSync(join(fx, 'dir'));
  const cases: { what: string; file: string; kind: string }[] = [
    { what: 'a FIFO', file: join(fx, 'fifo'), kind: 'a FIFO (named pipe)' },
    { what: '/dev/zero', file: '/dev/zero', kind: 'a character device' },
    { what: 'a directory', file: join(fx, 'dir'), kind: 'a directory' },
  ];
  for (const c of cases) {
    // A peer's password.file: the node cannot run that peer as configured, so `herald run` does not start.
    const h = await startHostileHerald(t, { noWait: true, config: { peers: [{ name: 'tor', address: '192.0.2.1', peerAs: 65200, password: { file: c.file } }] } });
    const r = await refusal(h);
    t.not(r.code, null, `password.file ${c.what}: herald run did not hang: it exited`);
    t.not(r.code, 0, `password.file ${c.what}: with a failure status (${r.code})`);
    t.ok(r.stderr.includes(`peers[0].password.file: cannot read ${c.file}: ${c.kind}, `) && REGULAR_ONLY.test(r.stderr), `password.file ${c.what}: the error names the field, the file, what it is and the fix`, { stderr: r.stderr.slice(-1500) });
    t.ok(h.peakRssMib() < 320, `password.file ${c.what}: RSS peaked at ${h.peakRssMib().toFixed(0)} MiB, under the pod's 320 MiB`);

    // admin.tokenFile: the daemon runs with its mutating endpoints disabled, and says why.
    const a = await startHostileHerald(t, { config: ({ adminPort }) => ({ admin: { address: '127.0.0.1', port: adminPort, tokenFile: c.file } }) });
    t.ok(await a.healthy(), `admin.tokenFile ${c.what}: herald run started and answers /healthz`);
    const warned = a.logLines().find((l) => l['msg'] === 'cannot read admin token file: mutating endpoints disabled');
    t.match(warned, { file: c.file, err: new RegExp(`^${c.kind.replace(/[()]/g, '\\$&')}, ${REGULAR_ONLY.source}`) }, `admin.tokenFile ${c.what}: the log names the file, what it is and the fix`);
    const reset = await fetch(`http://127.0.0.1:${a.adminPort}/api/v1/peers/tor/reset`, { method: 'POST', headers: { authorization: 'Bearer x' }, signal: AbortSignal.timeout(10_000) });
    t.equal(reset.status, 401, `admin.tokenFile ${c.what}: a mutating call is refused (401), not served without a token`);
    a.assertContained(t, `admin.tokenFile ${c.what}`);
    await a.proc.stop(5000);
  }
});

t.test('N4: a reload naming a FIFO as a new peer\'s password.file is refused; the running peer never moves', { skip: skipUnless({ bird2: birdAvailable() }) }, async (t) => {
  const fx = fixtures(t);
  execFileSync('mkfifo', [join(fx, 'fifo')]);
  const h = await startHostileHerald(t, { bird: true, config: { routes: [{ prefix: '198.51.100.60/32' }] } });
  await h.waitFor(() => h.birdHas('198.51.100.60/32'), 'the route in BIRD');
  const { since } = await h.session();
  const peers = [...(h.baseConfig['peers'] as unknown[]), { name: 'tor', address: '192.0.2.1', peerAs: 65200, password: { file: join(fx, 'fifo') } }];
  await h.reload({ ...h.baseConfig, peers, routes: [{ prefix: '198.51.100.60/32' }, { prefix: '198.51.100.61/32' }] });
  const last = await h.waitFor(async () => {
    const r = (await h.get<{ lastReload?: { ok: boolean; errors?: string[] } }>('/api/v1/status')).body.lastReload;
    return r?.ok === false ? r : undefined;
  }, 'the reload refused', 60_000);
  t.match(last.errors?.join('\n'), new RegExp(`peers\\[1\\]\\.password\\.file: cannot read ${join(fx, 'fifo').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: a FIFO \\(named pipe\\), ${REGULAR_ONLY.source}`), 'the reload error names the file, what it is and the fix');
  t.ok(await h.healthy(), 'the daemon answers /healthz (its main thread is not blocked on the FIFO)');
  t.ok(await h.birdHas('198.51.100.60/32'), "the running configuration's route is still in BIRD");
  t.notOk(await h.birdHas('198.51.100.61/32'), 'and nothing of the refused one');
  const s = await h.session();
  t.equal(s.state, 'Established', 'the BIRD session stays Established');
  t.notOk(sinceMoved(since, s.since), `and never flapped (since ${since} → ${s.since})`);
  h.assertContained(t, 'after the refused reload');
});

t.test('N6: forged BFD packets from the router\'s address never take the BFD or BGP session down; they are counted', { skip: skipUnless({ bird2: birdAvailable() }) }, async (t) => {
  await hostBfdLock(t, 200_000); // one wildcard-bound BFD daemon on the host at a time (test/helpers/bfd.ts)
  // 300 ms × 5 both ways: a loaded 2-core machine must not flap the session by itself.
  const h = await startHostileHerald(t, {
    bird: { protocols: 'protocol bfd {\n  multihop { interval 300 ms; multiplier 5; };\n}\n', extra: '  bfd on;', holdTimeSec: 30, peer: { bfd: { enabled: true, transmitInterval: 300, receiveInterval: 300, detectMultiplier: 5 } } },
    config: { routes: [{ prefix: '198.51.100.70/32' }] },
  });
  const bird = h.bird;
  if (bird === undefined) throw new Error('no BIRD');
  type BfdView = { state: string; localDiscriminator: number; remoteDiscriminator: number; stateChanges: number; discards: Record<string, number> };
  const ours = async () => (await h.get<{ bfd?: BfdView }>('/api/v1/peers/bird')).body.bfd;
  const theirs = async () => parseBfdSessions(await bird.birdc('show bfd sessions')).find((s) => s.address === h.nodeIp);
  await h.waitFor(async () => (await theirs())?.state === 'Up' || undefined, "BIRD's BFD session Up", 60_000);
  const before = await h.waitFor(async () => {
    const b = await ours();
    return b?.state === 'Up' && b.remoteDiscriminator !== 0 ? b : undefined;
  }, "Herald's BFD session Up", 60_000);
  await h.waitFor(() => h.birdHas('198.51.100.70/32'), 'the route in BIRD');
  const birdBfdSince = (await theirs())?.since;
  const { since: bgpSince } = await h.session();

  // The forger: the router's address (another port), TTL 254, aimed at Herald's multihop BFD port (RFC 5883).
  const sock = createSocket('udp4');
  t.teardown(() => sock.close());
  await new Promise<void>((resolve) => sock.bind(0, h.birdIp, resolve));
  sock.setTTL(254);
  const other = createSocket('udp4');
  t.teardown(() => other.close());
  const otherIp = h.birdIp.replace(/\.100$/, '.101');
  await new Promise<void>((resolve) => other.bind(0, otherIp, resolve));
  other.setTTL(254);
  const forged = (state: BfdState, myDiscriminator: number, yourDiscriminator: number) =>
    encodeControlPacket({ diag: 1, state, poll: false, final: false, controlPlaneIndependent: false, demand: false, detectMult: 3, myDiscriminator, yourDiscriminator, desiredMinTxIntervalUs: 1_000_000, requiredMinRxIntervalUs: 1_000_000, requiredMinEchoRxIntervalUs: 0 });
  /** The packet with My Discriminator 0 (which the encoder refuses to write). */
  const zeroMy = (buf: Buffer): Buffer => {
    buf.writeUInt32BE(0, 4);
    return buf;
  };
  const wrongMy = (before.remoteDiscriminator ^ 0x5a5a5a5a) >>> 0;
  const packets: { what: string; from: typeof sock; buf: Buffer }[] = [
    { what: 'Down, Your Discriminator 0, another My Discriminator', from: sock, buf: forged('Down', wrongMy, 0) },
    { what: 'AdminDown, Your Discriminator 0, My Discriminator 0', from: sock, buf: zeroMy(forged('AdminDown', 1, 0)) },
    { what: "Up, Your Discriminator 0, the router's My Discriminator", from: sock, buf: forged('Up', before.remoteDiscriminator, 0) },
    { what: "Down, Herald's Your Discriminator, another My Discriminator", from: sock, buf: forged('Down', wrongMy, before.localDiscriminator) },
    { what: 'Down, an unknown Your Discriminator', from: sock, buf: forged('Down', before.remoteDiscriminator, ((before.localDiscriminator ^ 0x00ff00ff) >>> 0) || 1) },
    { what: "Down, Herald's Your Discriminator and the router's My Discriminator, from another address", from: other, buf: forged('Down', before.remoteDiscriminator, before.localDiscriminator) },
  ];
  const ROUNDS = 10;
  for (let i = 0; i < ROUNDS; i++) {
    for (const p of packets) await new Promise<void>((resolve, reject) => p.from.send(p.buf, 4784, h.nodeIp, (err) => (err ? reject(err) : resolve())));
    await sleep(100);
  }
  // Counted: every forged packet is meant for this session (by discriminator or by source address).
  const want: Record<string, number> = { remoteDiscriminator: 2 * ROUNDS, myDiscriminator: ROUNDS, yourDiscriminator: ROUNDS, noSession: ROUNDS, wrongSource: ROUNDS };
  const enough = (d: Record<string, number> | undefined) => Object.entries(want).every(([k, n]) => (d?.[k] ?? 0) >= n);
  const after = await h
    .waitFor(async () => {
      const b = await ours();
      return enough(b?.discards) ? b : undefined;
    }, 'the forged packets counted as discards', 60_000)
    .catch(async () => ours());
  t.ok((after?.discards['remoteDiscriminator'] ?? 0) >= 2 * ROUNDS, `bfd.discards.remoteDiscriminator counts the ${2 * ROUNDS} packets with another My Discriminator`, { discards: after?.discards });
  t.ok((after?.discards['myDiscriminator'] ?? 0) >= ROUNDS && (after?.discards['yourDiscriminator'] ?? 0) >= ROUNDS, `bfd.discards.myDiscriminator and yourDiscriminator count the ${ROUNDS} each with a zero My Discriminator, or a zero Your Discriminator in state Up`, { discards: after?.discards });
  t.ok((after?.discards['noSession'] ?? 0) >= ROUNDS, `bfd.discards.noSession counts the ${ROUNDS} with an unknown Your Discriminator`, { discards: after?.discards });
  t.ok((after?.discards['wrongSource'] ?? 0) >= ROUNDS, `bfd.discards.wrongSource counts the ${ROUNDS} from another address`, { discards: after?.discards });
  const text = await h.metrics();
  const value = (reason: string) => Number(new RegExp(`^herald_bfd_packets_discarded_total\\{(?=[^}]*peer="bird")(?=[^}]*reason="${reason}")[^}]*\\} (\\d+)`, 'm').exec(text)?.[1] ?? 0);
  t.ok(value('remoteDiscriminator') >= 2 * ROUNDS, `herald_bfd_packets_discarded_total{peer="bird",reason="remoteDiscriminator"} = ${value('remoteDiscriminator')}`);
  t.ok(value('noSession') >= ROUNDS && value('wrongSource') >= ROUNDS, `and noSession (${value('noSession')}), wrongSource (${value('wrongSource')})`);

  // Nothing moved: one Detection Time more (1.5 s) for a Down to have shown.
  await sleep(3000);
  const end = await ours();
  t.equal(end?.state, 'Up', "Herald's BFD session is Up");
  t.equal(end?.stateChanges, before.stateChanges, `and never changed state (${before.stateChanges} → ${end?.stateChanges})`);
  t.equal(end?.remoteDiscriminator, before.remoteDiscriminator, "it still knows the router's discriminator");
  const b = await theirs();
  t.equal(b?.state, 'Up', "BIRD's BFD session is Up");
  t.notOk(sinceMoved(birdBfdSince, b?.since), `and never left Up (since ${birdBfdSince} → ${b?.since})`);
  const s = await h.session();
  t.equal(s.state, 'Established', 'the BGP session is Established');
  t.notOk(sinceMoved(bgpSince, s.since), `and never reset (since ${bgpSince} → ${s.since})`);
  t.ok(await h.birdHas('198.51.100.70/32'), 'the route is still in BIRD');
  const downs = h.logLines().filter((l) => l['msg'] === 'session down');
  t.same(downs, [], 'Herald logged no session down');
  h.assertContained(t, 'after the forged packets');
});

t.test('N10: two peers at one address both with BFD: herald config check and herald run refuse it, naming both', async (t) => {
  const fx = fixtures(t);
  const peers = [
    { name: 'tor-a', address: '192.0.2.1', peerAs: 65200, bfd: { enabled: true } },
    { name: 'tor-b', address: '192.0.2.1', port: 1179, peerAs: 65200, bfd: { enabled: true } },
  ];
  const file = join(fx, 'herald.yaml');
  writeFileSync(file, stringify({ bgp: { localAs: 65000, routerId: '10.0.0.1' }, peers }));
  const check = spawnSync('sh', [join(ROOT, 'deploy', 'herald'), 'config', 'check', file], {
    env: { ...process.env, PATH: `${dirname(process.execPath)}:${process.env['PATH'] ?? ''}`, HERALD_HOME: ROOT, HERALD_MEMORY_LIMIT_MIB: '320' },
    encoding: 'utf8',
    timeout: 120_000,
  });
  const said = /peers\[1\]\.bfd\.enabled: a second single-hop BFD session to 192\.0\.2\.1 \(also peers\[0\]\) on the same nodes: .*enable BFD on one of them/;
  t.not(check.status, 0, `herald config check: refused (exit ${check.status})`, { stdout: check.stdout, stderr: check.stderr });
  t.match(check.stderr + check.stdout, said, 'naming both peers and the fix');
  const h = await startHostileHerald(t, { noWait: true, config: { peers } });
  const r = await refusal(h);
  t.not(r.code, null, 'herald run: exited');
  t.not(r.code, 0, `with a failure status (${r.code})`);
  t.match(r.stderr, said, 'naming both peers and the fix', { stderr: r.stderr.slice(-1500) });
});
