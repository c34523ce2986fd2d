/**
 * bench/herald-process.ts — one `herald run` process as users start it, for the benches that measure the whole
 * process (bench/daemon.ts and its rows): spawned through deploy/herald (`exec node bin/herald.js`, which re-executes
 * itself in place with the daemons' Node settings: the PID is Herald's), with HERALD_MEMORY_LIMIT_MIB as the DaemonSet
 * sets it and Node's compile cache filled as the image has it; and what /proc says of it per thread.
 *
 * Environment: MEMORY_LIMIT_MIB (default: the DaemonSet's limits.memory), NODE_ARGS (more node flags, through
 * NODE_OPTIONS), HEAP_SNAPSHOTS=DIR (adds --heapsnapshot-signal=SIGPWR), COMPILE_CACHE ("image", the default, or
 * "cold"). The compile cache directory is filled at import and removed at exit.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';

export const ROOT = join(import.meta.dirname, '..');
/**
 * The memory limit Herald runs under, MiB: MEMORY_LIMIT_MIB, else the DaemonSet's limits.memory
 * (deploy/kubernetes/daemonset.yaml). bin/herald.js sizes V8's old generation from it (bin/node-settings.js).
 */
export const LIMIT_MIB = process.env.MEMORY_LIMIT_MIB ?? /limits:\s*\n\s*memory: (\d+)Mi/.exec(readFileSync(join(ROOT, 'deploy', 'kubernetes', 'daemonset.yaml'), 'utf8'))?.[1] ?? '';
/** HEAP_SNAPSHOTS=DIR: heap snapshots of Herald on SIGPWR into DIR (bench/daemon.ts's Kubernetes rows send it). */
export const HEAP_SNAPSHOTS = process.env.HEAP_SNAPSHOTS ?? '';
/** Extra node flags (NODE_ARGS), after those bin/herald.js sets. */
export const NODE_ARGS = `${process.env.NODE_ARGS ?? ''}${HEAP_SNAPSHOTS !== '' ? ` --heapsnapshot-signal=SIGPWR --diagnostic-dir=${HEAP_SNAPSHOTS}` : ''}`.trim();
export const COMPILE_CACHE = process.env.COMPILE_CACHE ?? 'image';
if (COMPILE_CACHE !== 'image' && COMPILE_CACHE !== 'cold') throw new Error(`COMPILE_CACHE must be "image" or "cold", not ${COMPILE_CACHE}`);

/**
 * The compile cache Herald runs with: as the container image has it (scripts/image.sh), a directory filled by
 * deploy/warm-compile-cache.js before the first row; or none (COMPILE_CACHE=cold). Removed at exit.
 */
function compileCacheEnv(): Record<string, string> {
  if (COMPILE_CACHE === 'cold') return { NODE_DISABLE_COMPILE_CACHE: '1' };
  const dir = mkdtempSync(join(tmpdir(), 'herald-bench-compile-cache-'));
  // As the image fills it (herald warm-compile-cache): with the node flags `herald run` gets, and without.
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  execFileSync('sh', [join(ROOT, 'deploy', 'herald'), 'warm-compile-cache', dir], { stdio: 'ignore', timeout: 120_000, env: { ...process.env, HERALD_HOME: ROOT, PATH: `${dirname(process.execPath)}:${process.env['PATH'] ?? ''}` } });
  return { NODE_COMPILE_CACHE: dir };
}
const CACHE_ENV = compileCacheEnv();

/** A `herald run` process started by {@link spawnHerald}. */
export interface HeraldProcess {
  readonly pid: number;
  /** The last 200 kB of its output. */
  out(): string;
  readonly exited: Promise<void>;
  alive(): boolean;
  /** SIGTERM, then SIGKILL after 10 s; resolves once it is gone. */
  stop(): Promise<void>;
}

/**
 * `herald run ARGS` as the container image starts it: through deploy/herald (which `exec`s node, and bin/herald.js
 * re-executes itself in place with its Node settings, so the PID is Herald's), with HERALD_MEMORY_LIMIT_MIB as the DaemonSet sets it. Output is kept (the last 200 kB) for errors.
 */
export function spawnHerald(args: string[]): HeraldProcess {
  let out = '';
  const env = {
    ...process.env,
    HERALD_HOME: ROOT,
    PATH: `${dirname(process.execPath)}:${process.env['PATH'] ?? ''}`,
    HERALD_MEMORY_LIMIT_MIB: LIMIT_MIB,
    ...CACHE_ENV,
    ...(NODE_ARGS !== '' ? { NODE_OPTIONS: `${process.env['NODE_OPTIONS'] ?? ''} ${NODE_ARGS}`.trim() } : {}),
  };
  const child = spawn('sh', [join(ROOT, 'deploy', 'herald'), 'run', ...args], { stdio: ['ignore', 'pipe', 'pipe'], env });
  const keep = (d: Buffer) => {
    out = (out + d.toString()).slice(-200_000);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  if (child.pid === undefined) throw new Error('herald did not start');
  return {
    pid: child.pid,
    out: () => out,
    exited,
    alive: () => child.exitCode === null && child.signalCode === null,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** `performance.now()` time `t` as CLOCK_MONOTONIC µs (the clock of V8's CPU profiles), for reading a profile's window. */
const monoOffsetUs = Number(process.hrtime.bigint() / 1000n) - performance.now() * 1000;
export const mono = (t: number): string => (monoOffsetUs + t * 1000).toFixed(0);

/** CPU seconds (utime+stime) of each thread of process `pid`, keyed "name/tid". */
export function threadCpu(pid: number): Map<string, number> {
  const out = new Map<string, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.set(`${name}/${tid}`, (Number(f[11]) + Number(f[12])) / 100);
    } catch {
      // the thread ended
    }
  }
  return out;
}

/** "name 0.12 s, ..." of the threads that used at least 10 ms between `a` and `b`. */
export function threadDelta(a: Map<string, number>, b: Map<string, number>): string {
  const parts: string[] = [];
  for (const [k, v] of b) {
    const d = v - (a.get(k) ?? 0);
    if (d >= 0.01) parts.push(`${k.slice(0, k.indexOf('/'))} ${d.toFixed(2)}`);
  }
  return parts.join(', ');
}

