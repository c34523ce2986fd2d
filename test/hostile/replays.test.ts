// Issue 35 N4, N6 and N10, replayed against `herald run` as the DaemonSet runs it (deploy/herald, 320 MiB; harness.ts):
// - N4: a peer's `password.file` or `admin.tokenFile` that is a FIFO, /dev/zero or a directory hung the main thread
//   or filled the memory; now `herald run` refuses it at once, naming the file and the fix, and a reload naming one
//   leaves the running peers alone;
// - N6: one forged BFD Down packet from the router's address reset the BGP session; now packets whose
//   discriminators do not match the session (Your Discriminator zero or unknown, My Discriminator not the router's;
//   sent with TTL 254 from another port of the router's address) are discarded and counted, and BIRD's BFD and BGP
//   sessions never move;
// - N10: two peers at one address both with BFD: `herald config check` and `herald run` refuse it naming both;
// - N7: an advertisement's communities plus a Service's annotation communities beyond one UPDATE's 3,800 octets were
//   trimmed silently; now the Service's are not sent, BIRD gets the advertisement's whole (NO_EXPORT included), the
//   admin API lists what is not sent in `withheld` and an AttributeNotSent reason, and other VIPs keep theirs;
// - N8: `herald.io/health-check-interval: "0.0000001"` (and a timeout, rise or fall past their floors, a timeout
//   longer than the interval) on a manifest's Service is refused with the annotation and the floor in the VIP's reason,
//   the VIP is not announced, and the HTTP server the check would target gets no flood (it is a loopback endpoint,
//   which Herald never probes either: test/src/health/specs.test.ts; the reasons and the empty health list are the
//   floors' evidence, the count a bound on the whole).
import t from 'tap';
import { createServer } from 'node:http';
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
import { birdAvailable, freePort, parseRoutes, sinceMoved } from '../helpers/bird.ts';
import { node, service, slice } from '../helpers/k8s-objects.ts';
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

/** Manifest text: the objects as YAML documents. */
const manifest = (objects: unknown[]): string => objects.map((o) => stringify(o)).join('---\n');

type VipView = { address: string; reasons: { code: string; message: string }[]; attributes?: { prefix: string; communities?: string[]; largeCommunities?: string[]; withheld?: string[] }[] };
type ServiceView = { service: string; vips: VipView[] };

t.test('N7: communities beyond one UPDATE are never trimmed silently: the Service\'s are withheld and said so; the advertisement\'s and other VIPs\' are sent', { skip: skipUnless({ bird2: birdAvailable() }) }, async (t) => {
  // 1 + 940 standard communities: 3,764 octets, within the 3,800 alone; a Service's 20 more (80 octets) and a large
  // one (12) do not fit beside them.
  const adCommunities = ['no-export', ...Array.from({ length: 940 }, (_, i) => `65001:${i + 1}`)];
  const svcCommunities = Array.from({ length: 20 }, (_, i) => `64512:${i + 1}`);
  const withNotes = (name: string, lbIP: string, annotations: Record<string, string>, endpoint: string) => {
    const s = service(name, { lbIPs: [lbIP], clusterIPs: [`10.96.0.${lbIP.split('.')[3]}`] });
    s.metadata = { ...s.metadata, annotations };
    return [s, slice(`${name}-1`, name, [[endpoint, 'node-a', { ready: true }]])];
  };
  const h = await startHostileHerald(t, {
    bird: true,
    manifests: {
      'node.yaml': manifest([node('node-a')]),
      'services.yaml': manifest([
        ...withNotes('crowded', '198.51.100.80', { 'herald.io/communities': svcCommunities.join(' '), 'herald.io/large-communities': '64512:1:1' }, '10.244.0.80'),
        ...withNotes('neighbour', '198.51.100.81', { 'herald.io/communities': '64512:7' }, '10.244.0.81'),
      ]),
    },
    config: {
      allowedPrefixes: ['198.51.100.0/24'],
      advertisements: [{ name: 'crowded-ad', addressKinds: ['loadBalancer'], communities: adCommunities, serviceAttributes: { communities: ['64512:0-65535'], largeCommunities: ['64512:1:0-100'] } }],
    },
  });
  const bird = h.bird;
  if (bird === undefined) throw new Error('no BIRD');
  const route = async (prefix: string) => parseRoutes(await bird.birdc(['show', 'route', 'all', 'table', 'master4'])).find((r) => r.prefix === prefix);
  const crowded = await h.waitFor(() => route('198.51.100.80/32'), 'the crowded VIP in BIRD');
  const neighbour = await h.waitFor(() => route('198.51.100.81/32'), 'the neighbour VIP in BIRD');
  // BIRD's `show route all` shortens a long community list; its filters see the whole one.
  const birdSees = async (prefix: string, condition: string) => (await bird.birdc(`show route where net = ${prefix} && ${condition}`)).includes(prefix);
  t.ok(crowded.protocol !== undefined && neighbour.protocol !== undefined, 'both VIPs reach BIRD');
  t.ok(await birdSees('198.51.100.80/32', '(65535,65281) ~ bgp_community'), "BIRD gets the advertisement's NO_EXPORT on the crowded VIP");
  t.ok(await birdSees('198.51.100.80/32', `bgp_community.len = ${adCommunities.length} && (65001,940) ~ bgp_community`), `and all ${adCommunities.length} of the advertisement's communities, the last included`);
  t.ok(await birdSees('198.51.100.80/32', 'bgp_community ~ [(65001,*)]'), 'the positive control: a filter on the route matches');
  t.notOk(await birdSees('198.51.100.80/32', 'bgp_community ~ [(64512,*)]'), "none of the Service's communities (withheld, not half-sent)");
  t.ok(await birdSees('198.51.100.80/32', 'bgp_large_community.len = 0'), "nor the Service's large community");
  t.ok(await birdSees('198.51.100.81/32', `(64512,7) ~ bgp_community && (65535,65281) ~ bgp_community && bgp_community.len = ${adCommunities.length + 1}`), "the other VIP carries its Service's community beside all the advertisement's");

  const views = (await h.get<ServiceView[]>('/api/v1/services')).body;
  const vip = (svc: string, address: string) => views.find((s) => s.service === `default/${svc}`)?.vips.find((v) => v.address === address);
  const c = vip('crowded', '198.51.100.80');
  const notSent = c?.reasons.filter((r) => r.code === 'AttributeNotSent') ?? [];
  t.equal(notSent.length, 1, 'the crowded VIP has one AttributeNotSent reason', { reasons: c?.reasons });
  t.match(notSent[0]?.message, new RegExp(`^the Services' communities \\(${svcCommunities.join(' ')} 64512:1:1\\) not sent on 198\\.51\\.100\\.80/32: with the advertisements' they exceed the 3800 octets of communities one UPDATE carries; the advertisements' are sent$`), 'naming what is not sent and why');
  const wire = c?.attributes?.find((a) => a.prefix === '198.51.100.80/32');
  t.same(wire?.withheld, notSent.map((r) => r.message), '`withheld` lists it on the prefix');
  t.notOk(wire?.communities?.some((x) => x.startsWith('64512:')), "and the communities it shows as sent hold none of the Service's");
  const n = vip('neighbour', '198.51.100.81');
  t.same(n?.reasons.filter((r) => r.code === 'AttributeNotSent'), [], 'the other VIP has nothing withheld');
  t.ok(n?.attributes?.find((a) => a.prefix === '198.51.100.81/32')?.communities?.includes('64512:7'), "and shows its Service's community as sent");
  const s = await h.session();
  t.equal(s.state, 'Established', 'the BGP session stays Established');
  h.assertContained(t, 'with communities beyond one UPDATE');
});

t.test('N8: health-check timing below the floors on a manifest\'s Service is refused with the reason; no probe flood', { skip: skipUnless({ bird2: birdAvailable() }) }, async (t) => {
  const cases: { name: string; ip: string; annotations: Record<string, string>; said: RegExp }[] = [
    { name: 'interval', ip: '198.51.100.90', annotations: { 'herald.io/health-check-interval': '0.0000001' }, said: /herald\.io\/health-check-interval.*must be at least 1 s/ },
    { name: 'timeout', ip: '198.51.100.91', annotations: { 'herald.io/health-check-timeout': '0.0000001' }, said: /herald\.io\/health-check-timeout.*must be at least 0\.1 s/ },
    { name: 'longer', ip: '198.51.100.92', annotations: { 'herald.io/health-check-interval': '1', 'herald.io/health-check-timeout': '5' }, said: /herald\.io\/health-check-timeout.*timeout 5 s must not exceed the interval 1 s/ },
    { name: 'rise', ip: '198.51.100.93', annotations: { 'herald.io/health-check-rise': '0' }, said: /herald\.io\/health-check-rise.*must be an integer 1-100/ },
    { name: 'fall', ip: '198.51.100.94', annotations: { 'herald.io/health-check-fall': '100000' }, said: /herald\.io\/health-check-fall.*must be an integer 1-100/ },
  ];
  const h = await startHostileHerald(t, {
    bird: true,
    manifests: {},
    config: { allowedPrefixes: ['198.51.100.0/24'], advertisements: [{ name: 'all', addressKinds: ['loadBalancer'] }] },
  });
  // The HTTP server each check would target: its Service's endpoint, on this node's loopback block.
  const host = h.nodeIp.replace(/\.1$/, '.77');
  let requests = 0;
  const server = createServer((_req, res) => {
    requests++;
    res.end('ok');
  });
  const port = await freePort(host);
  await new Promise<void>((resolve) => server.listen(port, host, resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const objects: unknown[] = [];
  for (const c of cases) {
    const s = service(c.name, { lbIPs: [c.ip], clusterIPs: [`10.96.0.${c.ip.split('.')[3]}`] });
    s.metadata = { ...s.metadata, annotations: { 'herald.io/health-check-type': 'http', 'herald.io/health-check-port': String(port), 'herald.io/health-check-path': '/healthz', ...c.annotations } };
    objects.push(s, slice(`${c.name}-1`, c.name, [[host, 'node-a', { ready: true }]]));
  }
  // A Service without a check: the other VIP, announced.
  objects.push(service('plain', { lbIPs: ['198.51.100.99'], clusterIPs: ['10.96.0.99'] }), slice('plain-1', 'plain', [['10.244.0.99', 'node-a', { ready: true }]]));
  h.put('node.yaml', manifest([node('node-a')]));
  h.put('services.yaml', manifest(objects));
  await h.waitFor(() => h.birdHas('198.51.100.99/32'), 'the unchecked VIP in BIRD');
  const views = await h.waitFor(async () => {
    const v = (await h.get<ServiceView[]>('/api/v1/services')).body;
    return cases.every((c) => v.some((s) => s.service === `default/${c.name}`)) ? v : undefined;
  }, 'every Service listed');
  await sleep(5000); // 50,000,000 probes at the asked interval, had any check run
  t.ok(requests <= 20, `the HTTP server the checks target got ${requests} requests (no flood)`);
  for (const c of cases) {
    const why = JSON.stringify(views.find((s) => s.service === `default/${c.name}`)?.vips.find((v) => v.address === c.ip)?.reasons);
    t.match(why, c.said, `${c.name}: the VIP's reason names the annotation and its floor`);
    t.notOk(await h.birdHas(`${c.ip}/32`), `${c.name}: ${c.ip} is not announced (fail closed)`);
  }
  t.ok(await h.birdHas('198.51.100.99/32'), 'the VIP without a check is still announced');
  const health = (await h.get<{ target: string; intervalSec?: number }[]>('/api/v1/health')).body;
  t.notOk(health.some((x) => x.target.includes(`${host}:${port}`)), 'no check targets the server', { health });
  h.assertContained(t, 'with health-check timing below the floors');
});
