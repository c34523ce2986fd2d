/**
 * bench/daemon-static.ts — the static rows of bench/daemon.ts (ROWS=static): `herald run --config` with N static
 * IPv4 /32 routes (bench/config-gen.ts) peering with BIRD 2, measured as a whole process, side by side in the same run
 * with the same table sent by BIRD 2, FRR 8.4, GoBGP 3 and the raw replay floor into the same kind of receiver
 * (bench/senders.ts, bench/peers.ts), and the issue 34 targets marked met or not.
 *
 * Herald's figures:
 * - start → BIRD holds all N (seconds from the spawn), VmHWM and CPU seconds of the process at that moment; `birdc` is
 *   polled back to back from the moment BIRD logs the session up (before, BIRD's log is read every 5 ms), so that the
 *   polls (a process each) do not compete with Herald's start-up for the CPU;
 * - table resend at session start: from BIRD's "BGP session established" log line to N routes in BIRD;
 * - withdraw and announce bursts by reload: the file rewritten with no routes, SIGHUP, until BIRD holds 0; then the
 *   full file again, SIGHUP, until BIRD holds N (as `birdc configure` after a rewrite is for BIRD); the CPU seconds
 *   of each of Herald's threads over each burst;
 * - table resend after the peer restarts: `birdc restart herald` `restarts` times, a second apart, each from BIRD's
 *   next "BGP session established" line to N routes in BIRD;
 * - VmHWM at the end: after the bursts (the peak including them).
 * Not a test: prints figures, asserts nothing. Stops every process it started, by PID.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Bird, bgpProtocol, freePort } from '../test/helpers/bird.ts';
import { gobgpAvailable } from '../test/helpers/gobgp.ts';
import { bigConfigText } from './config-gen.ts';
import { cpuSec, rssMiB } from './convergence.ts';
import { mono, spawnHerald, threadCpu, threadDelta } from './herald-process.ts';
import type { HeraldProcess } from './herald-process.ts';
import { benchGobgp, establishedAt, establishedTimes, TIMEFORMAT } from './peers.ts';
import type { Result } from './peers.ts';
import { benchBird, benchFrr, benchRawPrefixes, frrAvailable, senderVersions } from './senders.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const load = (): string => loadavg().map((l) => l.toFixed(1)).join(' ');
const mark = (ok: boolean): string => (ok ? 'met' : 'NOT met');

/** BIRD's route count of master4. */
export async function birdCount(bird: Bird): Promise<number> {
  const m = /(\d+) of \d+ routes for \d+ networks in table master4/.exec(await bird.birdc('show route count'));
  return m ? Number(m[1]) : 0;
}

/** Waits, reading BIRD's log every 5 ms, until its session `name` is up. */
export async function established(bird: Bird, name: string, h: HeraldProcess): Promise<void> {
  const deadline = Date.now() + 300_000;
  while (establishedAt(bird, name) === undefined) {
    if (!h.alive() || Date.now() > deadline) throw new Error(`BIRD never established the session: ${h.out().slice(-2000)}`);
    await sleep(5);
  }
}

/** Polls BIRD back to back until it holds `n` routes; returns performance.now() of that poll. */
export async function until(bird: Bird, n: number, h: HeraldProcess): Promise<number> {
  const deadline = Date.now() + 300_000;
  while ((await birdCount(bird)) !== n) {
    if (!h.alive() || Date.now() > deadline) throw new Error(`BIRD never held ${n} routes: ${h.out().slice(-2000)}`);
  }
  return performance.now();
}

/** Herald's figures (see the module comment). */
export interface StaticRow {
  startSec: number;
  hwm: number;
  cpu: number;
  resendSec: number;
  withdrawSec: number;
  announceSec: number;
  /** CPU seconds per thread over each burst ("MainThread 0.12, WorkerThread 0.05, ..."). */
  withdrawCpu: string;
  announceCpu: string;
  hwmEnd: number;
  /** Table resend after each `birdc restart herald` (s). */
  restartSec: number[];
}

/** The dotted quads of the N routes of bench/config-gen.ts, as /32 prefixes. */
export function configPrefixes(n: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const v = (0x0a000000 + i) >>> 0;
    out.push(`${v >>> 24}.${(v >>> 16) & 255}.${(v >>> 8) & 255}.${v & 255}/32`);
  }
  return out;
}

/** One `herald run` with `n` static routes to a BIRD on `address`.2 (Herald on `address`.1). */
export async function staticRow(n: number, restarts: number, address: string): Promise<StaticRow> {
  const addr = { bird: `${address}.2`, herald: `${address}.1` };
  const birdPort = await freePort(addr.bird);
  const bird = await Bird.start(TIMEFORMAT + bgpProtocol({ name: 'herald', local: addr.bird, localPort: birdPort, localAs: 65001, neighbor: addr.herald, neighborPort: 179, neighborAs: 65000, passive: true, families: ['ipv4'], extra: '  debug { states, events };' }));
  const dir = mkdtempSync(join(tmpdir(), 'herald-bench-daemon-'));
  const file = join(dir, 'herald.yaml');
  const text = (k: number) => {
    const t = bigConfigText(k, { peer: addr.bird, peerPort: birdPort, peerAs: 65001, localAs: 65000, localAddress: addr.herald, stateDir: join(dir, 'state') });
    return k === 0 ? t.replace(/routes:\n$/, 'routes: []\n') : t;
  };
  writeFileSync(file, text(n));
  let h: HeraldProcess | undefined;
  try {
    const wall0 = performance.timeOrigin + performance.now();
    const t0 = performance.now();
    h = spawnHerald(['--config', file]);
    // BIRD's log says when the session is up; only then is birdc polled back to back: each poll is a process of its
    // own, and a start-up polled from the spawn on had those processes compete with Herald for the 2 cores.
    await established(bird, 'herald', h);
    const full = await until(bird, n, h);
    const startSec = (full - t0) / 1000;
    const hwm = rssMiB(h.pid).hwm;
    const cpu = cpuSec(h.pid);
    const est = establishedAt(bird, 'herald');
    const resendSec = est === undefined ? NaN : (performance.timeOrigin + full - est) / 1000;
    if (est !== undefined && est < wall0) throw new Error('BIRD logged an older session');
    await sleep(500);
    // Herald also watches the file: the burst is timed from the write, the SIGHUP makes sure it is read.
    const burst = async (k: number, what: string): Promise<[number, string]> => {
      const c0 = threadCpu(h!.pid);
      const r0 = performance.now();
      writeFileSync(file, text(k));
      process.kill(h!.pid, 'SIGHUP');
      const sec = ((await until(bird, k, h!)) - r0) / 1000;
      const cpus = threadDelta(c0, threadCpu(h!.pid));
      if (process.env.PROFILE_WINDOWS) console.log(`${what} burst: CLOCK_MONOTONIC µs ${mono(r0)}–${mono(performance.now())} (for a --cpu-prof profile)`);
      return [sec, cpus];
    };
    const [withdrawSec, withdrawCpu] = await burst(0, 'withdraw');
    await sleep(500);
    const [announceSec, announceCpu] = await burst(n, 'announce');
    const hwmEnd = rssMiB(h.pid).hwm;
    const restartSec: number[] = [];
    for (let k = 0; k < restarts; k++) {
      await sleep(1000);
      const before = establishedTimes(bird, 'herald').length;
      await bird.birdc('restart herald');
      const deadline = Date.now() + 60_000;
      while (establishedTimes(bird, 'herald').length <= before) {
        if (!h.alive() || Date.now() > deadline) throw new Error(`no new session after birdc restart: ${h.out().slice(-2000)}`);
        await sleep(5);
      }
      const again = await until(bird, n, h);
      restartSec.push((performance.timeOrigin + again - (establishedTimes(bird, 'herald').at(-1) ?? NaN)) / 1000);
    }
    return { startSec, hwm, cpu, resendSec, withdrawSec, announceSec, withdrawCpu, announceCpu, hwmEnd, restartSec };
  } finally {
    await h?.stop();
    await bird.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** One sender of the comparison (bench/senders.ts, bench/peers.ts), or undefined when it is not installed. */
async function sender(name: string, n: number): Promise<Result | undefined> {
  switch (name) {
    case 'raw':
      return benchRawPrefixes(configPrefixes(n));
    case 'bird':
      return benchBird(n);
    case 'frr':
      return frrAvailable() ? benchFrr(n) : undefined;
    case 'gobgp':
      return gobgpAvailable() ? benchGobgp() : undefined;
    default:
      throw new Error(`unknown sender ${name} (raw, bird, frr, gobgp)`);
  }
}

/** Herald's static row and the senders' in one run; prints the table with ratios and the targets. */
export async function staticRows(o: { n: number; restarts: number; senders: readonly string[]; address: string }): Promise<void> {
  const r = await staticRow(o.n, o.restarts, o.address);
  console.log(
    `\nstatic: \`herald run --config\` with ${o.n} /32 routes → BIRD: start → BIRD holds all ${r.startSec.toFixed(2)} s, VmHWM ${r.hwm.toFixed(0)} MiB, CPU ${r.cpu.toFixed(2)} s; table resend at session start ${r.resendSec.toFixed(3)} s; reload bursts: withdraw ${r.withdrawSec.toFixed(3)} s (CPU s: ${r.withdrawCpu}), announce ${r.announceSec.toFixed(3)} s (CPU s: ${r.announceCpu}); VmHWM at the end ${r.hwmEnd.toFixed(0)} MiB; resend after BIRD restarts the session ${r.restartSec.map((x) => x.toFixed(3)).join(', ')} s; load ${load()}`,
  );
  const others = new Map<string, Result>();
  for (const s of o.senders) {
    const res = await sender(s, o.n);
    if (res === undefined) {
      console.log(`${s}: not installed, skipped`);
      continue;
    }
    others.set(s, res);
    console.log(`${s}: table at session start ${res.connectSec.toFixed(3)} s, withdraw burst ${res.withdrawSec.toFixed(3)} s, announce burst ${res.announceSec.toFixed(3)} s, peak RSS ${Number.isNaN(res.peakRssMiB) ? '–' : res.peakRssMiB.toFixed(0)} MiB; load ${load()}`);
  }
  console.log(`\nBIRD 2 receiving ${o.n} /32 on loopback, one run (${senderVersions()}; ratio = Herald ÷ sender); load ${load()}\n`);
  console.log('| sender | table at session start (s) | withdraw burst (s) | announce burst (s) | peak RSS (MiB) |');
  console.log('|---|---|---|---|---|');
  console.log(`| herald run (whole process, bursts by rewrite + SIGHUP) | ${r.resendSec.toFixed(3)} | ${r.withdrawSec.toFixed(3)} | ${r.announceSec.toFixed(3)} | ${r.hwm.toFixed(0)} at start, ${r.hwmEnd.toFixed(0)} after the bursts |`);
  const x = (a: number, b: number) => (b > 0 && Number.isFinite(a / b) ? ` (Herald ${(a / b).toFixed(2)}×)` : '');
  for (const [s, v] of others) {
    console.log(`| ${s} | ${v.connectSec.toFixed(3)}${x(r.resendSec, v.connectSec)} | ${v.withdrawSec.toFixed(3)}${x(r.withdrawSec, v.withdrawSec)} | ${v.announceSec.toFixed(3)}${x(r.announceSec, v.announceSec)} | ${Number.isNaN(v.peakRssMiB) ? '–' : v.peakRssMiB.toFixed(0)} |`);
  }
  console.log(`\ntarget 100k static routes peak RSS ≤ 120 MiB, the reload bursts included: ${mark(r.hwmEnd <= 120)} (VmHWM ${r.hwm.toFixed(0)} MiB at "BIRD holds all", ${r.hwmEnd.toFixed(0)} MiB after the bursts)`);
  console.log(`target BIRD holds all ≤ 1 s after process start: ${mark(r.startSec <= 1)} (${r.startSec.toFixed(2)} s, CPU ${r.cpu.toFixed(2)} s)`);
  const bird = others.get('bird');
  if (bird !== undefined) {
    console.log(`target withdraw burst ≤ 1.5× BIRD: ${mark(r.withdrawSec <= 1.5 * bird.withdrawSec)} (${r.withdrawSec.toFixed(3)} s against ${bird.withdrawSec.toFixed(3)} s: ${(r.withdrawSec / bird.withdrawSec).toFixed(2)}×)`);
    console.log(`target announce burst ≤ 1.5× BIRD: ${mark(r.announceSec <= 1.5 * bird.announceSec)} (${r.announceSec.toFixed(3)} s against ${bird.announceSec.toFixed(3)} s: ${(r.announceSec / bird.announceSec).toFixed(2)}×)`);
  }
  const raw = others.get('raw');
  if (raw !== undefined) {
    const worst = Math.max(r.resendSec, ...r.restartSec);
    const restarts = r.restartSec.length > 0 ? `; after BIRD restarts the session: ${r.restartSec.map((v) => v.toFixed(3)).join(', ')} s` : '';
    console.log(`target table at session start ≤ 1.5× the raw replay floor: ${mark(worst <= 1.5 * raw.connectSec)} (first session ${r.resendSec.toFixed(3)} s${restarts}; raw ${raw.connectSec.toFixed(3)} s; worst ${(worst / raw.connectSec).toFixed(2)}×)`);
  }
}
