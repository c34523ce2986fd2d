/**
 * bench/peers.ts — how fast BIRD 2 learns N IPv4 /32 routes from Herald, GoBGP and ExaBGP (`npm run bench:peers`).
 *
 * For each sender, on loopback, with BIRD as the receiver:
 * - connect:  the sender holds N routes before the session exists; seconds from BIRD's "BGP session established"
 *             log line until `birdc show route count` reports N;
 * - withdraw: seconds from the sender's withdraw-all command until BIRD reports 0 routes;
 * - announce: seconds from the sender's announce-all command until BIRD reports N;
 * - peak RSS of the sender process (Herald: getrusage maxRSS of the child speaker; others: VmHWM).
 * BIRD is polled with back-to-back `birdc show route count` calls (a few ms each), so small figures carry a few ms
 * of polling error. Targets for Herald: connect ≤ 0.05 s, bursts ≤ 0.1 s, peak RSS ≤ 100 MiB.
 *
 * Environment: N (default 100000), SENDERS (default "herald,gobgp,exabgp"), RUNS (default 1; the median is printed).
 * Not a test: prints a table, asserts nothing. Needs bird2, gobgpd and exabgp installed (missing ones are skipped).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Bird, bgpProtocol, birdAvailable, freePort } from '../test/helpers/bird.ts';
import { Gobgp, gobgpAvailable } from '../test/helpers/gobgp.ts';
import { Exabgp, exabgpAvailable } from '../test/helpers/exabgp.ts';
import { SpeakerChild } from '../test/helpers/speaker-child.ts';
import { sleep } from '../test/helpers/daemon-process.ts';

const N = Number(process.env.N ?? 100_000);
const RUNS = Number(process.env.RUNS ?? 1);
const SENDERS = (process.env.SENDERS ?? 'herald,gobgp,exabgp').split(',').map((s) => s.trim());
const BASE = 0x0a000000; // 10.0.0.0

const wall = (): number => performance.timeOrigin + performance.now();

interface Result {
  connectSec: number;
  withdrawSec: number;
  announceSec: number;
  peakRssMiB: number;
  /** Herald only: CPU seconds the speaker process spent in each phase (load-independent). */
  cpu?: { connect: number; withdraw: number; announce: number };
}

function prefixOf(i: number): string {
  const v = (BASE + i) >>> 0;
  return `${v >>> 24}.${(v >>> 16) & 255}.${(v >>> 8) & 255}.${v & 255}`;
}

/** BIRD route count of master4 (from `show route count`). */
async function birdCount(bird: Bird): Promise<number> {
  const out = await bird.birdc('show route count');
  const m = /(\d+) of \d+ routes for \d+ networks in table master4/.exec(out);
  return m ? Number(m[1]) : 0;
}

/** Polls BIRD back to back until `pred(count)`; returns the wall time (ms) of the poll that saw it. */
async function pollUntil(bird: Bird, pred: (n: number) => boolean, timeoutMs: number): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  let last = -1;
  while (Date.now() < deadline) {
    last = await birdCount(bird);
    if (pred(last)) return wall();
  }
  throw new Error(`BIRD did not reach the expected count (last ${last}) within ${timeoutMs} ms`);
}

/** Wall time (ms) of BIRD's "BGP session established" log line for protocol `name` (timeformat with µs). */
function establishedAt(bird: Bird, name: string): number | undefined {
  const lines = readFileSync(bird.logPath, 'utf8').split('\n');
  for (const l of lines) {
    if (!l.includes(`${name}: BGP session established`)) continue;
    const m = /^(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d)\.(\d+)/.exec(l);
    // BIRD logs local time, as Date.parse reads a timestamp without a zone
    if (m) return Date.parse(`${m[1]}T${m[2]}`) + Number(`0.${m[3]}`) * 1000;
  }
  return undefined;
}

function vmHwmMiB(pid: number | undefined): number {
  if (pid === undefined) return NaN;
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

const TIMEFORMAT = 'timeformat log "%F %T.%6f";\n';
let pairN = 0;
function pair(): { bird: string; sender: string } {
  pairN++;
  const b = 200 + (process.pid % 50);
  return { bird: `127.${b}.${pairN}.2`, sender: `127.${b}.${pairN}.1` };
}

async function benchHerald(): Promise<Result> {
  const a = pair();
  const birdPort = await freePort(a.bird);
  const bird = await Bird.start(
    TIMEFORMAT +
      bgpProtocol({ name: 'sender', local: a.bird, localPort: birdPort, localAs: 65000, neighbor: a.sender, neighborPort: 179, neighborAs: 65001, passive: true, families: ['ipv4'], extra: '  debug { states, events };' }),
  );
  let child: SpeakerChild | undefined;
  try {
    child = await SpeakerChild.start({
      speaker: { localAs: 65001, bgpIdentifier: '10.254.1.1' },
      peers: [{ name: 'bird', address: a.bird, port: birdPort, peerAs: 65000, localAddress: a.sender, families: ['ipv4-unicast'], connectRetryTimeSec: 1 }],
      generate: { count: N, base: '10.0.0.0' },
      markInitialSyncDone: true,
    });
    const cpu = async (): Promise<number> => ((await child!.command({ cmd: 'cpu' })) as number) / 1000;
    const est0 = await child.waitEvent((e) => e.event === 'peerState' && e.to === 'Established', 'Established', 60_000);
    const cpu0 = (est0.cpuMs as number) / 1000;
    const full = await pollUntil(bird, (n) => n === N, 120_000);
    const cpu1 = await cpu();
    const est = establishedAt(bird, 'sender');
    if (est === undefined) throw new Error('no established line in the BIRD log');
    const connectSec = (full - est) / 1000;
    await sleep(500);
    let t0 = wall();
    void child.command({ cmd: 'setRoutes', routes: [] });
    const empty = await pollUntil(bird, (n) => n === 0, 120_000);
    const withdrawSec = (empty - t0) / 1000;
    const cpu2 = await cpu();
    await sleep(500);
    const cpu3 = await cpu();
    t0 = wall();
    void child.command({ cmd: 'generate', count: N, base: '10.0.0.0' });
    const again = await pollUntil(bird, (n) => n === N, 120_000);
    const announceSec = (again - t0) / 1000;
    const cpu4 = await cpu();
    const rss = (await child.command({ cmd: 'rss' })) as { maxRssBytes: number };
    return {
      connectSec,
      withdrawSec,
      announceSec,
      peakRssMiB: rss.maxRssBytes / 1048576,
      cpu: { connect: cpu1 - cpu0, withdraw: cpu2 - cpu1, announce: cpu4 - cpu3 },
    };
  } finally {
    await child?.stop();
    await bird.stop();
  }
}

/** An MRT TABLE_DUMP_V2 file (RFC 6396 §4.3) of `count` /32 routes with ORIGIN IGP, empty AS_PATH, NEXT_HOP `nh`. */
function writeMrt(path: string, count: number, nh: string, pad: number): void {
  const chunks: Buffer[] = [];
  const header = (subtype: number, body: Buffer): Buffer => {
    const h = Buffer.alloc(12);
    h.writeUInt32BE(Math.floor(Date.now() / 1000), 0);
    h.writeUInt16BE(13, 4);
    h.writeUInt16BE(subtype, 6);
    h.writeUInt32BE(body.length, 8);
    return Buffer.concat([h, body]);
  };
  const nhBytes = Buffer.from(nh.split('.').map(Number));
  // PEER_INDEX_TABLE: collector id, view name length 0, 1 peer (type 2 = IPv4 address, 4-octet AS)
  const pit = Buffer.concat([Buffer.from([10, 254, 2, 1, 0, 0, 0, 1, 2]), Buffer.from([10, 254, 2, 1]), nhBytes, Buffer.from([0, 0, 0xfd, 0xe9])]);
  chunks.push(header(1, pit));
  const attrs = Buffer.concat([Buffer.from([0x40, 1, 1, 0, 0x40, 2, 0, 0x40, 3, 4]), nhBytes]);
  const rib = (seq: number, i: number): Buffer => {
    const v = (BASE + i) >>> 0;
    const b = Buffer.alloc(4 + 1 + 4 + 2 + 2 + 4 + 2);
    b.writeUInt32BE(seq, 0);
    b[4] = 32;
    b.writeUInt32BE(v, 5);
    b.writeUInt16BE(1, 9);
    b.writeUInt16BE(0, 11);
    b.writeUInt32BE(Math.floor(Date.now() / 1000), 13);
    b.writeUInt16BE(attrs.length, 17);
    return header(2, Buffer.concat([b, attrs]));
  };
  for (let i = 0; i < count; i++) chunks.push(rib(i, i));
  // GoBGP 3.10's `mrt inject` drops the last ~1000 paths (stream not closed): repeat the last record `pad` times
  for (let k = 0; k < pad; k++) chunks.push(rib(count + k, count - 1));
  writeFileSync(path, Buffer.concat(chunks));
}

async function benchGobgp(): Promise<Result> {
  const a = pair();
  const gPort = await freePort(a.sender);
  const birdPort = await freePort(a.bird);
  const g = await Gobgp.start({ local: a.sender, port: gPort, as: 65001, neighbor: a.bird, neighborAs: 65000, families: ['ipv4-unicast'], routerId: '10.254.2.1' });
  let bird: Bird | undefined;
  try {
    const mrt = join(g.proc.dir, 'routes.mrt');
    writeMrt(mrt, N, a.sender, 2048);
    await g.cli(['mrt', 'inject', 'global', mrt], 600_000);
    await g.proc.waitFor(async () => (await g.count('ipv4')) === N, 'GoBGP holds N routes', 120_000, 200);
    bird = await Bird.start(
      TIMEFORMAT + bgpProtocol({ name: 'sender', local: a.bird, localPort: birdPort, localAs: 65000, neighbor: a.sender, neighborPort: gPort, neighborAs: 65001, families: ['ipv4'], extra: '  debug { states, events };' }),
    );
    const b = bird;
    const full = await pollUntil(b, (n) => n === N, 300_000);
    const est = establishedAt(b, 'sender');
    if (est === undefined) throw new Error('no established line in the BIRD log');
    const connectSec = (full - est) / 1000;
    await sleep(500);
    let t0 = wall();
    const del = g.cli(['global', 'rib', '-a', 'ipv4', 'del', 'all'], 300_000);
    const empty = await pollUntil(b, (n) => n === 0, 300_000);
    await del;
    const withdrawSec = (empty - t0) / 1000;
    await sleep(500);
    t0 = wall();
    const inj = g.cli(['mrt', 'inject', 'global', mrt], 600_000);
    const again = await pollUntil(b, (n) => n === N, 300_000);
    await inj;
    const announceSec = (again - t0) / 1000;
    return { connectSec, withdrawSec, announceSec, peakRssMiB: vmHwmMiB(g.pid) };
  } finally {
    await bird?.stop();
    await g.stop();
  }
}

async function benchExabgp(): Promise<Result> {
  const a = pair();
  const xPort = await freePort(a.sender);
  const birdPort = await freePort(a.bird);
  const statics: { prefix: string; nextHop: string }[] = [];
  for (let i = 0; i < N; i++) statics.push({ prefix: `${prefixOf(i)}/32`, nextHop: a.sender });
  const x = await Exabgp.start({ local: a.sender, port: xPort, as: 65001, neighbor: a.bird, neighborAs: 65000, families: ['ipv4'], staticRoutes: statics, commands: true, routerId: '10.254.3.1' });
  let bird: Bird | undefined;
  try {
    bird = await Bird.start(
      TIMEFORMAT + bgpProtocol({ name: 'sender', local: a.bird, localPort: birdPort, localAs: 65000, neighbor: a.sender, neighborPort: xPort, neighborAs: 65001, families: ['ipv4'], extra: '  debug { states, events };' }),
    );
    const b = bird;
    const full = await pollUntil(b, (n) => n === N, 600_000);
    const est = establishedAt(b, 'sender');
    if (est === undefined) throw new Error('no established line in the BIRD log');
    const connectSec = (full - est) / 1000;
    await sleep(500);
    const lines = (verb: string): string[] => {
      const out: string[] = [];
      for (let i = 0; i < N; i += 500) {
        const ps: string[] = [];
        for (let k = i; k < Math.min(N, i + 500); k++) ps.push(`${prefixOf(k)}/32`);
        out.push(`${verb} attributes next-hop ${a.sender} nlri ${ps.join(' ')}`);
      }
      return out;
    };
    let t0 = wall();
    x.command(lines('withdraw').join('\n'));
    const empty = await pollUntil(b, (n) => n === 0, 600_000);
    const withdrawSec = (empty - t0) / 1000;
    await sleep(500);
    t0 = wall();
    x.command(lines('announce').join('\n'));
    const again = await pollUntil(b, (n) => n === N, 600_000);
    const announceSec = (again - t0) / 1000;
    return { connectSec, withdrawSec, announceSec, peakRssMiB: vmHwmMiB(x.pid) };
  } finally {
    await bird?.stop();
    await x.stop();
  }
}

function median(xs: number[]): number {
  const s = [...xs].sort((p, q) => p - q);
  return s[Math.floor(s.length / 2)]!;
}

async function main(): Promise<void> {
  if (!birdAvailable()) {
    console.log('bird2 not installed: nothing to measure');
    return;
  }
  const runners: Record<string, { ok: () => boolean; run: () => Promise<Result> }> = {
    herald: { ok: () => true, run: benchHerald },
    gobgp: { ok: gobgpAvailable, run: benchGobgp },
    exabgp: { ok: exabgpAvailable, run: benchExabgp },
  };
  const results = new Map<string, Result>();
  for (const name of SENDERS) {
    const r = runners[name];
    if (r === undefined) throw new Error(`unknown sender ${name}`);
    if (!r.ok()) {
      console.log(`${name}: not installed, skipped`);
      continue;
    }
    const runs: Result[] = [];
    for (let i = 0; i < RUNS; i++) {
      const res = await r.run();
      const cpuText = res.cpu ? ` (Herald CPU: connect ${res.cpu.connect.toFixed(3)} s, withdraw ${res.cpu.withdraw.toFixed(3)} s, announce ${res.cpu.announce.toFixed(3)} s incl. building the ${N} routes)` : '';
      console.log(`${name} run ${i + 1}: connect ${res.connectSec.toFixed(3)} s, withdraw ${res.withdrawSec.toFixed(3)} s, announce ${res.announceSec.toFixed(3)} s, peak RSS ${res.peakRssMiB.toFixed(0)} MiB${cpuText}`);
      runs.push(res);
    }
    results.set(name, {
      connectSec: median(runs.map((x) => x.connectSec)),
      withdrawSec: median(runs.map((x) => x.withdrawSec)),
      announceSec: median(runs.map((x) => x.announceSec)),
      peakRssMiB: median(runs.map((x) => x.peakRssMiB)),
      ...(runs[0]?.cpu ? { cpu: { connect: median(runs.map((x) => x.cpu!.connect)), withdraw: median(runs.map((x) => x.cpu!.withdraw)), announce: median(runs.map((x) => x.cpu!.announce)) } } : {}),
    });
  }
  const h = results.get('herald');
  const ratio = (v: number, hv: number | undefined): string => (hv === undefined || hv <= 0 ? '' : ` (${(v / hv).toFixed(1)}x)`);
  const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  console.log(`\nBIRD 2 receiving ${N} IPv4 /32 on loopback, median of ${RUNS} (ratio = sender / Herald); load average ${load}\n`);
  console.log('| sender | connect (s) | announce burst (s) | withdraw burst (s) | peak RSS (MiB) |');
  console.log('|---|---|---|---|---|');
  for (const [name, r] of results) {
    console.log(
      `| ${name} | ${r.connectSec.toFixed(3)}${ratio(r.connectSec, h?.connectSec)} | ${r.announceSec.toFixed(3)}${ratio(r.announceSec, h?.announceSec)} | ${r.withdrawSec.toFixed(3)}${ratio(r.withdrawSec, h?.withdrawSec)} | ${r.peakRssMiB.toFixed(0)}${ratio(r.peakRssMiB, h?.peakRssMiB)} |`,
    );
  }
  if (h !== undefined) {
    console.log(`\nHerald targets: connect ≤ 0.05 s ${h.connectSec <= 0.05 ? 'met' : 'MISSED'}, bursts ≤ 0.1 s ${h.announceSec <= 0.1 && h.withdrawSec <= 0.1 ? 'met' : 'MISSED'}, peak RSS ≤ 100 MiB ${h.peakRssMiB <= 100 ? 'met' : 'MISSED'}`);
  }
}

await main();
