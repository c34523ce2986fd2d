/**
 * bench/config.ts — the cost of a big static configuration, measured as users run Herald (`node bench/config.ts`).
 *
 * Rows, for a config of N static IPv4 /32 routes written by bench/config-gen.ts (2.6 MiB at N = 100,000):
 * - load: `loadConfigFile` in this process (read + YAML + schema + cross-field checks): wall and CPU ms, median of RUNS;
 * - reload: the same file through a `ConfigFile` a second time (unchanged content: read and hashed, not parsed);
 * - check: `herald config check FILE` as a whole process under `/usr/bin/time -v`: wall seconds and peak RSS;
 * - run: `herald run --config FILE` as a whole process peering with a private BIRD 2 on loopback: seconds from the
 *   spawn until `birdc show route count` reports N, peak RSS (VmHWM) at that moment, CPU seconds of the process;
 *   then SIGHUP with the file unchanged: the VmHWM and CPU it adds, and the time until the log says so.
 * Environment: N (default 100000), RUNS (default 3), ROWS (default "load,reload,check,run"). Needs bird2 for `run`
 * (skipped with a note otherwise). Not a test: prints figures, asserts nothing. Cleans up its processes by PID.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { ConfigFile, loadConfigFile } from '../src/config/load.ts';
import { Bird, bgpProtocol, birdAvailable, freePort } from '../test/helpers/bird.ts';
import { bigConfigText } from './config-gen.ts';

const N = Number(process.env.N ?? 100_000);
const RUNS = Number(process.env.RUNS ?? 3);
const ROWS = (process.env.ROWS ?? 'load,reload,check,run').split(',').map((s) => s.trim());
const ROOT = join(import.meta.dirname, '..');
const HERALD = join(ROOT, 'bin', 'herald.js');

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
const cpuMs = (): number => {
  const c = process.cpuUsage();
  return (c.user + c.system) / 1000;
};

function procStatus(pid: number, field: string): number {
  try {
    const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

function procCpuSec(pid: number): number {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    return (Number(f[11]) + Number(f[12])) / 100; // utime + stime in clock ticks (USER_HZ 100)
  } catch {
    return NaN;
  }
}

async function rowLoad(file: string): Promise<void> {
  const wall: number[] = [];
  const cpu: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    const c0 = cpuMs();
    const cfg = await loadConfigFile(file);
    cpu.push(cpuMs() - c0);
    wall.push(performance.now() - t0);
    if (cfg.routes.length !== N) throw new Error(`expected ${N} routes, got ${cfg.routes.length}`);
  }
  console.log(`load      N=${N}: wall ${median(wall).toFixed(0)} ms, cpu ${median(cpu).toFixed(0)} ms (median of ${RUNS}; rss now ${(process.memoryUsage().rss / 1048576).toFixed(0)} MiB)`);
}

async function rowReload(file: string): Promise<void> {
  const cf = new ConfigFile(file);
  await cf.load();
  const wall: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    const r = await cf.reload();
    wall.push(performance.now() - t0);
    if (r !== undefined) throw new Error('expected an unchanged file to be a no-op');
  }
  console.log(`reload    N=${N} unchanged: wall ${median(wall).toFixed(1)} ms (median of ${RUNS}; read + SHA-256, no parse)`);
}

function rowCheck(file: string): void {
  const wall: number[] = [];
  const rss: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const r = spawnSync('/usr/bin/time', ['-v', process.execPath, HERALD, 'config', 'check', file], { encoding: 'utf8', timeout: 120_000 });
    const m = /Maximum resident set size \(kbytes\): (\d+)/.exec(r.stderr);
    const e = /Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (?:(\d+):)?(\d+):([\d.]+)/.exec(r.stderr);
    if (r.status !== 0 || !m || !e) throw new Error(`config check failed: ${r.stdout}${r.stderr}`);
    rss.push(Number(m[1]) / 1024);
    wall.push(Number(e[1] ?? 0) * 3600 + Number(e[2]) * 60 + Number(e[3]));
  }
  console.log(`check     N=${N}: \`herald config check\` wall ${median(wall).toFixed(2)} s, peak RSS ${median(rss).toFixed(0)} MiB (median of ${RUNS}, /usr/bin/time -v)`);
}

async function birdCount(bird: Bird): Promise<number> {
  const m = /(\d+) of \d+ routes for \d+ networks in table master4/.exec(await bird.birdc('show route count'));
  return m ? Number(m[1]) : 0;
}

async function runOnce(): Promise<{ holdSec: number; hwm: number; cpu: number; reloadHwm: number; reloadCpu: number; reloadSec: number }> {
  const b = 200 + (process.pid % 50);
  const addr = { bird: `127.${b}.77.2`, herald: `127.${b}.77.1` };
  const birdPort = await freePort(addr.bird);
  const bird = await Bird.start(bgpProtocol({ name: 'herald', local: addr.bird, localPort: birdPort, localAs: 65001, neighbor: addr.herald, neighborPort: 179, neighborAs: 65000, passive: true, families: ['ipv4'] }));
  const dir = mkdtempSync(join(tmpdir(), 'herald-bench-config-'));
  const file = join(dir, 'herald.yaml');
  writeFileSync(file, bigConfigText(N, { peer: addr.bird, peerPort: birdPort, peerAs: 65001, localAs: 65000, localAddress: addr.herald, stateDir: join(dir, 'state') }));
  let out = '';
  const t0 = performance.now();
  const child = spawn(process.execPath, [HERALD, 'run', '--config', file], { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const pid = child.pid as number;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    const deadline = Date.now() + 180_000;
    while ((await birdCount(bird)) !== N) {
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`BIRD never held ${N} routes: ${out.slice(-2000)}`);
    }
    const holdSec = (performance.now() - t0) / 1000;
    const hwm = procStatus(pid, 'VmHWM');
    const cpu = procCpuSec(pid);
    const logLen = out.length;
    const r0 = performance.now();
    process.kill(pid, 'SIGHUP');
    while (!/configuration (reloaded|unchanged)|reload skipped/.test(out.slice(logLen))) {
      if (performance.now() - r0 > 120_000) throw new Error(`no reload line: ${out.slice(-2000)}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    const reloadSec = (performance.now() - r0) / 1000;
    return { holdSec, hwm, cpu, reloadHwm: procStatus(pid, 'VmHWM') - hwm, reloadCpu: procCpuSec(pid) - cpu, reloadSec };
  } finally {
    if (child.exitCode === null) child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
    await bird.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function rowRun(): Promise<void> {
  if (!birdAvailable()) {
    console.log('run       skipped: bird2 is not installed');
    return;
  }
  const rows: Awaited<ReturnType<typeof runOnce>>[] = [];
  for (let i = 0; i < RUNS; i++) rows.push(await runOnce());
  const m = (k: keyof (typeof rows)[number]) => median(rows.map((r) => r[k]));
  console.log(`run       N=${N}: \`herald run\` start → BIRD holds all ${m('holdSec').toFixed(2)} s, peak RSS (VmHWM) ${m('hwm').toFixed(0)} MiB, CPU ${m('cpu').toFixed(2)} s (median of ${RUNS})`);
  console.log(`run       SIGHUP, file unchanged: ${m('reloadSec').toFixed(2)} s until logged, +${m('reloadHwm').toFixed(0)} MiB VmHWM, +${m('reloadCpu').toFixed(2)} s CPU`);
}

const dir = mkdtempSync(join(tmpdir(), 'herald-bench-config-'));
try {
  const file = join(dir, 'routes.yaml');
  writeFileSync(file, bigConfigText(N));
  if (ROWS.includes('load')) await rowLoad(file);
  if (ROWS.includes('reload')) await rowReload(file);
  if (ROWS.includes('check')) rowCheck(file);
  if (ROWS.includes('run')) await rowRun();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
