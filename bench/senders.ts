/**
 * bench/senders.ts — BIRD 2 and FRR 8.4 as senders of the same table Herald sends, into the same receiver (a BIRD 2
 * on loopback, polled with `birdc show route count`), for the side-by-side rows of bench/daemon.ts (issue 34), and the
 * raw replay floor of any set of /32 prefixes.
 *
 * - BIRD as a sender: N static /32 routes (`route P unreachable;` in a `protocol static`) exported over eBGP to the
 *   receiver. Bursts are what an operator does with BIRD: rewrite its configuration without the routes (or with them
 *   again) and `birdc configure`, timed from the write until the receiver holds 0 (or N) routes.
 * - FRR as a sender: N `network P` statements (FRR runs without zebra here: ../shared/design/peers-on-one-machine.md),
 *   an outbound route-map per neighbour. FRR's own configuration reload (frr-reload.py) would send 100,000 `no
 *   network` lines through vtysh one by one; its fastest equivalent of "reload without the routes" is the outbound
 *   policy: the withdraw burst switches the neighbour to a deny-all route-map, the announce burst back to permit-all,
 *   one vtysh command each, timed from the command until the receiver holds 0 (or N) routes.
 * - table at session start (both): from the receiver's "BGP session established" log line until it holds N routes;
 *   peak RSS: VmHWM of the sender process.
 *
 * `benchRawPrefixes` replays Herald's own UPDATE bytes (packed beforehand by an Adj-RIB-Out) for an arbitrary list of
 * /32 prefixes: the floor of a withdraw burst of exactly those routes (bench/daemon.ts, the kube-proxy /healthz row).
 * Not a test: prints nothing itself, asserts nothing. Stops every process it started, by PID.
 */
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect } from 'node:net';
import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { AdjRibOut } from '../bgp/rib/adj-rib-out.ts';
import { RouteTable } from '../bgp/rib/route-table.ts';
import type { Route } from '../bgp/rib/route.ts';
import { Bird, bgpProtocol, freePort } from '../test/helpers/bird.ts';
import { BGPD, frrAvailable } from '../test/helpers/frr.ts';
import { DaemonProcess, run, sleep } from '../test/helpers/daemon-process.ts';
import { keepalive } from '../test/helpers/wire.ts';
import { establishedAt, NlriCounter, pair, pollUntil, TIMEFORMAT, trivialOpen, vmHwmMiB } from './peers.ts';
import type { Result } from './peers.ts';

export { frrAvailable };

const BASE = 0x0a000000; // 10.0.0.0, as bench/config-gen.ts and bench/peers.ts

/** The dotted quad of 10.0.0.0 + i. */
function prefixOf(i: number): string {
  const v = (BASE + i) >>> 0;
  return `${v >>> 24}.${(v >>> 16) & 255}.${(v >>> 8) & 255}.${v & 255}/32`;
}

/** The receiving BIRD of one sender: passive, eBGP from AS 65001 at `sender`, IPv4 only, session states logged. */
function receiver(a: { bird: string; sender: string }, birdPort: number, senderPort: number): Promise<Bird> {
  return Bird.start(
    TIMEFORMAT +
      bgpProtocol({ name: 'sender', local: a.bird, localPort: birdPort, localAs: 65000, neighbor: a.sender, neighborPort: senderPort, neighborAs: 65001, passive: true, families: ['ipv4'], extra: '  debug { states, events };' }),
  );
}

/** Receiver's table from the session's start, then the bursts `withdraw` and `announce` each timed from its call. */
async function measure(recv: Bird, n: number, withdraw: () => Promise<void>, announce: () => Promise<void>, senderPid: () => number | undefined): Promise<Result> {
  const full = await pollUntil(recv, (c) => c === n, 300_000);
  const est = establishedAt(recv, 'sender');
  if (est === undefined) throw new Error('no established line in the receiver log');
  const connectSec = (full - est) / 1000;
  await sleep(500);
  let t0 = performance.timeOrigin + performance.now();
  await withdraw();
  const withdrawSec = ((await pollUntil(recv, (c) => c === 0, 300_000)) - t0) / 1000;
  await sleep(500);
  t0 = performance.timeOrigin + performance.now();
  await announce();
  const announceSec = ((await pollUntil(recv, (c) => c === n, 300_000)) - t0) / 1000;
  return { connectSec, withdrawSec, announceSec, peakRssMiB: vmHwmMiB(senderPid()) };
}

/** BIRD 2 as the sender of `n` static /32 (see the module comment). */
export async function benchBird(n: number): Promise<Result> {
  const a = pair();
  const birdPort = await freePort(a.bird);
  const senderPort = await freePort(a.sender);
  const recv = await receiver(a, birdPort, senderPort);
  let sender: Bird | undefined;
  try {
    const body = (routes: number): string => {
      const lines = ['protocol static statics {', '  ipv4;'];
      for (let i = 0; i < routes; i++) lines.push(`  route ${prefixOf(i)} unreachable;`);
      lines.push('}');
      return `${lines.join('\n')}\n${bgpProtocol({ name: 'receiver', local: a.sender, localPort: senderPort, localAs: 65001, neighbor: a.bird, neighborPort: birdPort, neighborAs: 65000, families: ['ipv4'], channelBody: 'import none; export all;' })}`;
    };
    sender = await Bird.start(body(n), { startTimeoutMs: 120_000 });
    const s = sender;
    return await measure(
      recv,
      n,
      async () => s.reconfigure(body(0)),
      async () => s.reconfigure(body(n)),
      () => s.pid,
    );
  } finally {
    await sender?.stop();
    await recv.stop();
  }
}

/** FRR's bgpd as the sender of `n` /32 `network` statements (see the module comment). */
export async function benchFrr(n: number): Promise<Result> {
  const a = pair();
  const birdPort = await freePort(a.bird);
  const senderPort = await freePort(a.sender);
  const recv = await receiver(a, birdPort, senderPort);
  const proc = new DaemonProcess('bench-frr');
  try {
    const dir = proc.dir;
    const conf = [
      'frr defaults traditional',
      'hostname herald-bench-sender',
      `log file ${join(dir, 'bgpd.log')}`,
      '!',
      'route-map ALL permit 10',
      'route-map NONE deny 10',
      '!',
      'router bgp 65001',
      ' bgp router-id 10.254.5.1',
      ' no bgp ebgp-requires-policy',
      ' no bgp network import-check',
      ` neighbor ${a.bird} remote-as 65000`,
      ` neighbor ${a.bird} port ${birdPort}`,
      ` neighbor ${a.bird} ebgp-multihop 255`,
      ` neighbor ${a.bird} update-source ${a.sender}`,
      ' address-family ipv4 unicast',
      ...Array.from({ length: n }, (_, i) => `  network ${prefixOf(i)}`),
      `  neighbor ${a.bird} activate`,
      `  neighbor ${a.bird} route-map ALL out`,
      ' exit-address-family',
      '!',
      '',
    ].join('\n');
    const confPath = join(dir, 'bgpd.conf');
    writeFileSync(confPath, conf);
    proc.spawn(BGPD, ['-f', confPath, '-i', join(dir, 'bgpd.pid'), '-z', join(dir, 'zserv.api'), '--vty_socket', dir, '-Z', '-S', '-P', '0', '-p', String(senderPort), '-l', a.sender]);
    const vtysh = (...cmds: string[]): Promise<string> => run('vtysh', ['--vty_socket', dir, '-d', 'bgpd', ...cmds.flatMap((c) => ['-c', c])], 60_000);
    await proc.waitFor(async () => (await vtysh('show bgp summary json')).includes('{'), 'bgpd vty', 120_000, 200);
    const policy = (map: string) => vtysh('configure terminal', 'router bgp 65001', 'address-family ipv4 unicast', `neighbor ${a.bird} route-map ${map} out`);
    return await measure(
      recv,
      n,
      async () => void (await policy('NONE')),
      async () => void (await policy('ALL')),
      () => proc.child?.pid,
    );
  } finally {
    await proc.stop();
    await recv.stop();
  }
}

/**
 * The raw replay floor of one burst of the given IPv4 /32 `prefixes`: a trivial sender gives the receiver Herald's
 * UPDATE bytes for them (packed by an Adj-RIB-Out toward a 4096-octet session) in one write at session start, then
 * withdraws them in one write, then announces them again in one write. Returns the three times, as `Result`.
 */
export async function benchRawPrefixes(prefixes: readonly string[]): Promise<Result & { packMs: number }> {
  const a = pair();
  const birdPort = await freePort(a.bird);
  const table = new RouteTable();
  const rib = new AdjRibOut(table);
  const routes: Route[] = prefixes.map((prefix) => ({ prefix, family: 'ipv4-unicast' }));
  rib.setDesired(table.replace(routes));
  const drain = (): Buffer => {
    const out: Buffer[] = [];
    for (let m = rib.nextMessage(4096); m !== undefined; m = rib.nextMessage(4096)) out.push(m);
    return Buffer.concat(out);
  };
  const t = performance.now();
  rib.start({ name: 'raw', localAs: 65001, peerAs: 65000, fourOctetAs: true, families: new Set(['ipv4-unicast']), localAddress: a.sender });
  const announce = drain();
  const packMs = performance.now() - t;
  rib.setDesired(table.replace([]));
  const withdraw = drain();
  const recv = await receiver(a, birdPort, 179);
  let s: Socket | undefined;
  let ka: NodeJS.Timeout | undefined;
  try {
    s = connect({ host: a.bird, port: birdPort, localAddress: a.sender });
    const sock = s;
    sock.on('error', () => {});
    sock.setNoDelay(true);
    await new Promise<void>((r) => sock.once('connect', r));
    sock.write(trivialOpen(65001, '10.254.6.1'));
    const counter = new NlriCounter();
    await new Promise<void>((resolve) => {
      const onData = (d: Buffer): void => {
        if (!counter.push(d).includes(1)) return; // BIRD's OPEN
        sock.off('data', onData);
        sock.write(Buffer.concat([keepalive(), announce]));
        resolve();
      };
      sock.on('data', onData);
    });
    ka = setInterval(() => sock.write(keepalive()), 30_000);
    const r = await measure(
      recv,
      prefixes.length,
      async () => void sock.write(withdraw),
      async () => void sock.write(announce),
      () => undefined,
    );
    return { ...r, packMs };
  } finally {
    if (ka) clearInterval(ka);
    s?.destroy();
    await recv.stop();
  }
}

/** The BIRD and FRR versions installed, for the report ("BIRD 2.0.12, FRR 8.4.4"). */
export function senderVersions(): string {
  const v = (cmd: string, args: string[]): string => {
    const r = spawnSync(cmd, args, { encoding: 'utf8', timeout: 10_000 });
    return /\d+\.\d+(\.\d+)?/.exec(`${r.stdout ?? ''} ${r.stderr ?? ''}`)?.[0] ?? '?';
  };
  return `BIRD ${v('bird', ['--version'])}, FRR ${frrAvailable() ? v(BGPD, ['--version']) : 'not installed'}`;
}
