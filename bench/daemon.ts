/**
 * bench/daemon.ts — what the real daemon costs, measured as users run it (`npm run bench:daemon`): ONE `herald run`
 * process (bin/herald.js, the CLI), figures read from /proc of that process. Not a test: prints figures, asserts
 * nothing. Cleans up every process it started, by PID.
 *
 * Kubernetes rows (ROWS contains "k8s"), for each SIZES entry S (default 100, 1000, 10000):
 * - the fake apiserver (test/helpers/fake-apiserver.ts, in this process) holds NODES Nodes and S LoadBalancer
 *   Services with externalTrafficPolicy Local, one EndpointSlice each (3 ready endpoints on 3 nodes), all in the shape
 *   a kube-apiserver serves them (managedFields, last-applied and Helm annotations, Pod references, Node images:
 *   `servedService`/`servedSlice`/`servedNode` of test/helpers/k8s-objects.ts), so the process parses what it would
 *   parse in a cluster;
 * - Herald runs as node-00 with the Kubernetes source through a kubeconfig, peering with a recording peer
 *   (bench/recording-peer.ts) on loopback;
 * - start-up = seconds from the spawn until every VIP node-00 may announce has arrived at the peer;
 *   RSS after sync = VmRSS 2 s later, and VmHWM (peak) at that moment; CPU = utime+stime of the process;
 * - then FLIPS readiness flips of node-00's endpoints, each awaited at the peer: CPU per event (CPU over the flips ÷
 *   FLIPS), VmRSS and VmHWM at the end, growth = end VmRSS over VmRSS after sync.
 *
 * Static rows (ROWS contains "static"): a config file with N static /32 routes (bench/config-gen.ts), BIRD 2 as the
 * peer:
 * - start → BIRD holds all N (seconds from the spawn), VmHWM and CPU seconds of the process at that moment; `birdc`
 *   is polled back to back from the moment BIRD logs the session up (before, BIRD's log is read every 5 ms), so that
 *   the polls (a process each) do not compete with Herald's start-up for the CPU;
 * - table resend at session start: from BIRD's "BGP session established" log line to N routes in BIRD;
 * - burst withdraw and announce by reload: the file rewritten with no routes, SIGHUP, until BIRD holds 0; then the
 *   full file again, SIGHUP, until BIRD holds N;
 * - table resend after the peer restarts: `birdc restart herald` RESTARTS times, a second apart, each from BIRD's
 *   next "BGP session established" line to N routes in BIRD (the first follows the reload bursts: a changed desired
 *   set, packed again while the session was down; the others an unchanged one, bgp/rib/packed-table.ts);
 * - in the same run, the same table sent to BIRD by the raw replay floor (Herald's UPDATE bytes written by a trivial
 *   sender) and by GoBGP (bench/peers.ts `benchRaw`/`benchGobgp`), and the ratios Herald ÷ sender.
 * The in-process breakdown rows stay in bench/peers.ts (speaker only), bench/config.ts (config load) and
 * bench/convergence.ts (flip latency).
 *
 * Environment: ROWS (default "k8s,static"), SIZES (default "100,1000,10000"), NODES (default 50), FLIPS (default
 * 5000), N (default 100000), RESTARTS (default 3), SENDERS (default "raw,gobgp"; "" for none), MEMORY_LIMIT_MIB (the
 * container limit bin/herald.js sizes V8 from; default the DaemonSet's), NODE_ARGS (more node flags, through
 * NODE_OPTIONS: e.g. "--heap-prof --heap-prof-dir=DIR"), COMPILE_CACHE ("image", the default: Node's module compile
 * cache in a fresh directory filled by deploy/warm-compile-cache.js, as the container image has it; "cold": no
 * compile cache, as a process whose cache holds none of Herald's modules). Needs bird2 (and gobgpd) for the static
 * rows. HEAP_SNAPSHOTS=DIR: the Kubernetes rows write a V8 heap snapshot of Herald after sync and after the flips into
 * DIR (through node's --heapsnapshot-signal=SIGPWR, sent only to the process this bench started; the figures of
 * such a run are not comparable: a snapshot costs heap and time).
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { stringify } from 'yaml';
import { FakeApiServer } from '../test/helpers/fake-apiserver.ts';
import { startFakeKubeProxy } from '../test/helpers/fake-kube-proxy.ts';
import { node, servedNode, servedService, servedSlice, service, slice } from '../test/helpers/k8s-objects.ts';
import { Bird, bgpProtocol, birdAvailable, freePort } from '../test/helpers/bird.ts';
import { gobgpAvailable } from '../test/helpers/gobgp.ts';
import { bigConfigText } from './config-gen.ts';
import { benchHeraldConfig, cpuSec, endpoints, nodeName, nodesOf, OURS, rssMiB, svcName, vipOf, writeKubeconfig } from './convergence.ts';
import { benchGobgp, benchRaw, establishedAt, establishedTimes, TIMEFORMAT } from './peers.ts';
import type { Result } from './peers.ts';
import { RecordingPeer } from './recording-peer.ts';
import type { RecordedUpdate } from './recording-peer.ts';

const ROWS = (process.env.ROWS ?? 'k8s,static').split(',').map((s) => s.trim());
const SIZES = (process.env.SIZES ?? '100,1000,10000').split(',').map(Number);
const NODES = Number(process.env.NODES ?? 50);
const FLIPS = Number(process.env.FLIPS ?? 5000);
const N = Number(process.env.N ?? 100_000);
const RESTARTS = Number(process.env.RESTARTS ?? 3);
const SENDERS = (process.env.SENDERS ?? 'raw,gobgp').split(',').map((s) => s.trim()).filter(Boolean);
const ROOT = join(import.meta.dirname, '..');
/**
 * The memory limit Herald runs under, MiB: MEMORY_LIMIT_MIB, else the DaemonSet's limits.memory
 * (deploy/kubernetes/daemonset.yaml). bin/herald.js sizes V8's old generation from it (bin/node-settings.js).
 */
const LIMIT_MIB = process.env.MEMORY_LIMIT_MIB ?? /limits:\s*\n\s*memory: (\d+)Mi/.exec(readFileSync(join(ROOT, 'deploy', 'kubernetes', 'daemonset.yaml'), 'utf8'))?.[1] ?? '';
/** Extra node flags (NODE_ARGS), after those bin/herald.js sets. */
const HEAP_SNAPSHOTS = process.env.HEAP_SNAPSHOTS ?? '';
const NODE_ARGS = `${process.env.NODE_ARGS ?? ''}${HEAP_SNAPSHOTS !== '' ? ` --heapsnapshot-signal=SIGPWR --diagnostic-dir=${HEAP_SNAPSHOTS}` : ''}`.trim();
const B = 150 + (process.pid % 50);
const COMPILE_CACHE = process.env.COMPILE_CACHE ?? 'image';
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

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** With HEAP_SNAPSHOTS: one heap snapshot of the Herald at `pid`, renamed to `name`; waits until it is written. */
async function heapSnapshot(pid: number, name: string): Promise<void> {
  if (HEAP_SNAPSHOTS === '') return;
  const before = new Set(readdirSync(HEAP_SNAPSHOTS));
  process.kill(pid, 'SIGPWR');
  const deadline = Date.now() + 120_000;
  for (;;) {
    const file = readdirSync(HEAP_SNAPSHOTS).find((f) => !before.has(f) && f.endsWith('.heapsnapshot'));
    if (file !== undefined) {
      let size = -1;
      while (size !== statSync(join(HEAP_SNAPSHOTS, file)).size) {
        size = statSync(join(HEAP_SNAPSHOTS, file)).size;
        await sleep(1000);
      }
      renameSync(join(HEAP_SNAPSHOTS, file), join(HEAP_SNAPSHOTS, name));
      return;
    }
    if (Date.now() > deadline) throw new Error(`no heap snapshot of ${pid} in ${HEAP_SNAPSHOTS}`);
    await sleep(200);
  }
}
const sliceOf = (i: number, ready: boolean) => servedSlice(slice(`${svcName(i)}-1`, svcName(i), endpoints(i, ready)), i);

/**
 * `herald run ARGS` as the container image starts it: through deploy/herald (which `exec`s node, and bin/herald.js
 * re-executes itself in place with its Node settings, so the PID is Herald's), with HERALD_MEMORY_LIMIT_MIB as the DaemonSet sets it. Output is kept (the last 200 kB) for errors.
 */
function spawnHerald(args: string[]): { pid: number; out: () => string; exited: Promise<void>; alive: () => boolean; stop: () => Promise<void> } {
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

interface K8sRow {
  services: number;
  ours: number;
  startSec: number;
  syncCpu: number;
  rssSync: number;
  hwmSync: number;
  cpuPerEventMs: number;
  lost: number;
  rssEnd: number;
  hwmEnd: number;
  /** V8 heap used / heap total / external, MiB, from the process's own /metrics (prom-client default metrics). */
  heapSync: string;
  heapEnd: string;
}

/** "used/total/external MiB" of the V8 heap of the Herald behind admin port `port`. */
async function heapOf(port: number): Promise<string> {
  try {
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    const v = (name: string) => Number(new RegExp(`^${name} (\\S+)`, 'm').exec(text)?.[1] ?? NaN) / 1048576;
    return `${v('nodejs_heap_size_used_bytes').toFixed(0)}/${v('nodejs_heap_size_total_bytes').toFixed(0)}/${v('nodejs_external_memory_bytes').toFixed(0)}`;
  } catch {
    return '?';
  }
}

/** GET /healthz and /readyz, as the DaemonSet's probes do every few seconds (deploy/kubernetes/daemonset.yaml). */
async function probe(port: number): Promise<void> {
  for (const path of ['/healthz', '/readyz']) await (await fetch(`http://127.0.0.1:${port}${path}`)).text();
}

async function k8sRow(services: number): Promise<K8sRow> {
  const dir = mkdtempSync(join(tmpdir(), 'herald-bench-daemon-'));
  const nodeIp = `127.${B}.${services % 200}.1`;
  const peerIp = `127.${B}.${services % 200}.2`;
  const api = new FakeApiServer();
  await api.start();
  const kubeProxy = await startFakeKubeProxy({ host: nodeIp });
  const peer = await RecordingPeer.start({ host: peerIp, localAs: 65001, bgpIdentifier: '10.255.0.2' });
  let herald: ReturnType<typeof spawnHerald> | undefined;
  try {
    for (let n = 0; n < NODES; n++) api.upsert('nodes', servedNode(node(nodeName(n)), `192.0.2.${n + 1}`));
    const ours: number[] = [];
    for (let i = 0; i < services; i++) {
      api.upsert('services', servedService(service(svcName(i), { etp: 'Local', lbIPs: [vipOf(i)], clusterIPs: ['10.96.0.10'] }), i));
      api.upsert('endpointslices', sliceOf(i, true), 'discovery.k8s.io');
      if (nodesOf(i).includes(0)) ours.push(i);
    }
    const kubeconfig = join(dir, 'kubeconfig.yaml');
    writeKubeconfig(kubeconfig, api.url);
    const config = join(dir, 'herald.yaml');
    const adminPort = await freePort('127.0.0.1');
    writeFileSync(config, stringify(benchHeraldConfig({ peerIp, peerPort: peer.port, nodeIp, kubeconfig, healthzPort: kubeProxy.port, adminPort, stateDir: join(dir, 'state') })));
    const announced = new Set<string>();
    const waiters = new Map<string, { announce: boolean; resolve: () => void }>();
    peer.on('update', (u: RecordedUpdate) => {
      for (const p of u.withdrawn) {
        announced.delete(p);
        if (waiters.get(p)?.announce === false) waiters.get(p)?.resolve();
      }
      for (const p of u.announced) {
        announced.add(p);
        if (waiters.get(p)?.announce === true) waiters.get(p)?.resolve();
      }
    });
    peer.on('error', (err: Error) => console.error(`recording peer: ${err.message}`));
    const t0 = performance.now();
    const h = spawnHerald(['--config', config, '--node-name', OURS, '--node-ip', nodeIp]);
    herald = h;
    const deadline = Date.now() + 600_000;
    while (announced.size < ours.length) {
      if (!h.alive() || Date.now() > deadline) throw new Error(`${ours.length} VIPs never announced (${announced.size}): ${h.out().slice(-2000)}`);
      await sleep(20);
    }
    const startSec = (performance.now() - t0) / 1000;
    const syncCpu = cpuSec(h.pid);
    await probe(adminPort);
    await sleep(2000);
    const sync = rssMiB(h.pid);
    const heapSync = await heapOf(adminPort);
    await heapSnapshot(h.pid, `k8s-${services}-sync.heapsnapshot`);

    const ready = new Map<number, boolean>(ours.map((i) => [i, true]));
    let lost = 0;
    const cpu0 = cpuSec(h.pid);
    for (let k = 0; k < FLIPS; k++) {
      const i = ours[k % ours.length]!;
      const r = !ready.get(i);
      ready.set(i, r);
      const prefix = `${vipOf(i)}/32`;
      const got = new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => {
          waiters.delete(prefix);
          resolve(false);
        }, 5000);
        waiters.set(prefix, {
          announce: r,
          resolve: () => {
            clearTimeout(timer);
            waiters.delete(prefix);
            resolve(true);
          },
        });
      });
      api.upsert('endpointslices', sliceOf(i, r), 'discovery.k8s.io');
      if (!(await got)) lost++;
    }
    const cpuPerEventMs = ((cpuSec(h.pid) - cpu0) / FLIPS) * 1000;
    await sleep(2000);
    const end = rssMiB(h.pid);
    const heapEnd = await heapOf(adminPort);
    await heapSnapshot(h.pid, `k8s-${services}-end.heapsnapshot`);
    return { services, ours: ours.length, startSec, syncCpu, rssSync: sync.rss, hwmSync: sync.hwm, cpuPerEventMs, lost, rssEnd: end.rss, hwmEnd: end.hwm, heapSync, heapEnd };
  } finally {
    await herald?.stop();
    await peer.close();
    await kubeProxy.close();
    await api.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `performance.now()` time `t` as CLOCK_MONOTONIC µs (the clock of V8's CPU profiles), for reading a profile's window. */
const monoOffsetUs = Number(process.hrtime.bigint() / 1000n) - performance.now() * 1000;
const mono = (t: number): string => (monoOffsetUs + t * 1000).toFixed(0);

/** CPU seconds (utime+stime) of each thread of process `pid`, keyed "name/tid". */
function threadCpu(pid: number): Map<string, number> {
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
function threadDelta(a: Map<string, number>, b: Map<string, number>): string {
  const parts: string[] = [];
  for (const [k, v] of b) {
    const d = v - (a.get(k) ?? 0);
    if (d >= 0.01) parts.push(`${k.slice(0, k.indexOf('/'))} ${d.toFixed(2)}`);
  }
  return parts.join(', ');
}

async function birdCount(bird: Bird): Promise<number> {
  const m = /(\d+) of \d+ routes for \d+ networks in table master4/.exec(await bird.birdc('show route count'));
  return m ? Number(m[1]) : 0;
}

/** Waits, reading BIRD's log every 5 ms, until its session with Herald is up. */
async function established(bird: Bird, alive: () => boolean, out: () => string): Promise<void> {
  const deadline = Date.now() + 300_000;
  while (establishedAt(bird, 'herald') === undefined) {
    if (!alive() || Date.now() > deadline) throw new Error(`BIRD never established the session: ${out().slice(-2000)}`);
    await sleep(5);
  }
}

/** Polls BIRD back to back until it holds `n` routes; returns performance.now() of that poll. */
async function until(bird: Bird, n: number, alive: () => boolean, out: () => string): Promise<number> {
  const deadline = Date.now() + 300_000;
  while ((await birdCount(bird)) !== n) {
    if (!alive() || Date.now() > deadline) throw new Error(`BIRD never held ${n} routes: ${out().slice(-2000)}`);
  }
  return performance.now();
}

interface StaticRow {
  startSec: number;
  hwm: number;
  cpu: number;
  resendSec: number;
  withdrawSec: number;
  announceSec: number;
  hwmEnd: number;
  /** Table resend after each `birdc restart herald` (s). */
  restartSec: number[];
}

async function staticRow(): Promise<StaticRow> {
  const addr = { bird: `127.${B}.250.2`, herald: `127.${B}.250.1` };
  const birdPort = await freePort(addr.bird);
  const bird = await Bird.start(TIMEFORMAT + bgpProtocol({ name: 'herald', local: addr.bird, localPort: birdPort, localAs: 65001, neighbor: addr.herald, neighborPort: 179, neighborAs: 65000, passive: true, families: ['ipv4'], extra: '  debug { states, events };' }));
  const dir = mkdtempSync(join(tmpdir(), 'herald-bench-daemon-'));
  const file = join(dir, 'herald.yaml');
  const text = (n: number) => {
    const t = bigConfigText(n, { peer: addr.bird, peerPort: birdPort, peerAs: 65001, localAs: 65000, localAddress: addr.herald, stateDir: join(dir, 'state') });
    return n === 0 ? t.replace(/routes:\n$/, 'routes: []\n') : t;
  };
  writeFileSync(file, text(N));
  let h: ReturnType<typeof spawnHerald> | undefined;
  try {
    const wall0 = performance.timeOrigin + performance.now();
    const t0 = performance.now();
    h = spawnHerald(['--config', file]);
    // BIRD's log says when the session is up; only then is birdc polled back to back: each poll is a process of its
    // own, and a start-up polled from the spawn on had those processes compete with Herald for the 2 cores.
    await established(bird, h.alive, h.out);
    const full = await until(bird, N, h.alive, h.out);
    const startSec = (full - t0) / 1000;
    const hwm = rssMiB(h.pid).hwm;
    const cpu = cpuSec(h.pid);
    const est = establishedAt(bird, 'herald');
    const resendSec = est === undefined ? NaN : (performance.timeOrigin + full - est) / 1000;
    if (est !== undefined && est < wall0) throw new Error('BIRD logged an older session');
    await sleep(500);
    // Herald also watches the file: the burst is timed from the write, the SIGHUP makes sure it is read.
    let c0 = threadCpu(h.pid);
    let r0 = performance.now();
    writeFileSync(file, text(0));
    process.kill(h.pid, 'SIGHUP');
    const withdrawSec = ((await until(bird, 0, h.alive, h.out)) - r0) / 1000;
    console.log(`withdraw burst: thread CPU s: ${threadDelta(c0, threadCpu(h.pid))}; monotonic µs ${mono(r0)}–${mono(performance.now())}`);
    await sleep(500);
    c0 = threadCpu(h.pid);
    r0 = performance.now();
    writeFileSync(file, text(N));
    process.kill(h.pid, 'SIGHUP');
    const announceSec = ((await until(bird, N, h.alive, h.out)) - r0) / 1000;
    console.log(`announce burst: thread CPU s: ${threadDelta(c0, threadCpu(h.pid))}; monotonic µs ${mono(r0)}–${mono(performance.now())}`);
    const hwmEnd = rssMiB(h.pid).hwm;
    const restartSec: number[] = [];
    for (let k = 0; k < RESTARTS; k++) {
      await sleep(1000);
      const before = establishedTimes(bird, 'herald').length;
      await bird.birdc('restart herald');
      const deadline = Date.now() + 60_000;
      while (establishedTimes(bird, 'herald').length <= before) {
        if (!h.alive() || Date.now() > deadline) throw new Error(`no new session after birdc restart: ${h.out().slice(-2000)}`);
        await sleep(5);
      }
      const again = await until(bird, N, h.alive, h.out);
      restartSec.push((performance.timeOrigin + again - (establishedTimes(bird, 'herald').at(-1) ?? NaN)) / 1000);
    }
    return { startSec, hwm, cpu, resendSec, withdrawSec, announceSec, hwmEnd, restartSec };
  } finally {
    await h?.stop();
    await bird.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

const mark = (ok: boolean): string => (ok ? 'met' : 'NOT met');
const load = (): string => loadavg().map((l) => l.toFixed(1)).join(' ');

async function main(): Promise<void> {
  console.log(`machine: ${availableParallelism()} CPUs, load average ${load()} at start; Node ${process.version}; herald run through deploy/herald with HERALD_MEMORY_LIMIT_MIB=${LIMIT_MIB}, compile cache ${COMPILE_CACHE === 'image' ? 'filled as in the image (deploy/warm-compile-cache.js)' : 'off (cold)'}${NODE_ARGS ? ` and NODE_OPTIONS ${NODE_ARGS}` : ''}`);
  if (ROWS.includes('k8s')) {
    const rows: K8sRow[] = [];
    for (const s of SIZES) {
      const r = await k8sRow(s);
      rows.push(r);
      console.log(`k8s ${s} Services: start-up ${r.startSec.toFixed(2)} s (CPU ${r.syncCpu.toFixed(2)} s), RSS after sync ${r.rssSync.toFixed(0)} MiB (VmHWM ${r.hwmSync.toFixed(0)}), ${FLIPS} flips: ${r.cpuPerEventMs.toFixed(2)} ms CPU per event, ${r.lost} lost, RSS ${r.rssEnd.toFixed(0)} MiB (VmHWM ${r.hwmEnd.toFixed(0)}); V8 heap used/total/external MiB ${r.heapSync} after sync, ${r.heapEnd} at the end; load ${load()}`);
    }
    console.log(`\n\`herald run\`, Kubernetes source (fake apiserver, served-shape objects), ${NODES} nodes, ${FLIPS} flips\n`);
    console.log('| Services | VIPs on node-00 | start-up (s) | CPU to sync (s) | RSS after sync (MiB) | VmHWM after sync (MiB) | CPU per event (ms) | RSS after flips (MiB) | growth | VmHWM end (MiB) |');
    console.log('|---|---|---|---|---|---|---|---|---|---|');
    for (const r of rows) {
      const growth = ((r.rssEnd / r.rssSync - 1) * 100).toFixed(1);
      console.log(`| ${r.services} | ${r.ours} | ${r.startSec.toFixed(2)} | ${r.syncCpu.toFixed(2)} | ${r.rssSync.toFixed(0)} | ${r.hwmSync.toFixed(0)} | ${r.cpuPerEventMs.toFixed(2)} | ${r.rssEnd.toFixed(0)} | ${growth} % | ${r.hwmEnd.toFixed(0)} |`);
    }
    for (const r of rows) {
      const growth = (r.rssEnd / r.rssSync - 1) * 100;
      if (r.services <= 100) console.log(`target small cluster (≤ 100 Services) peak ≤ 120 MiB: ${mark(r.hwmEnd <= 120)} (VmHWM ${r.hwmEnd.toFixed(0)} MiB)`);
      if (r.services >= 10_000) {
        console.log(`target 10,000 Services ≤ 200 MiB after sync: ${mark(r.hwmSync <= 200)} (VmHWM ${r.hwmSync.toFixed(0)} MiB, VmRSS ${r.rssSync.toFixed(0)} MiB)`);
        console.log(`target ≤ 10 % growth over ${FLIPS} flips: ${mark(growth <= 10)} (${growth.toFixed(1)} % VmRSS; VmHWM ${r.hwmSync.toFixed(0)} → ${r.hwmEnd.toFixed(0)} MiB)`);
      }
    }
  }
  if (ROWS.includes('static')) {
    if (!birdAvailable()) {
      console.log('static rows skipped: bird2 is not installed');
      return;
    }
    const r = await staticRow();
    console.log(`\nstatic: \`herald run --config\` with ${N} /32 routes → BIRD: start → BIRD holds all ${r.startSec.toFixed(2)} s, VmHWM ${r.hwm.toFixed(0)} MiB, CPU ${r.cpu.toFixed(2)} s; table resend at session start ${r.resendSec.toFixed(3)} s; reload bursts: withdraw ${r.withdrawSec.toFixed(2)} s, announce ${r.announceSec.toFixed(2)} s; VmHWM at the end ${r.hwmEnd.toFixed(0)} MiB; resend after BIRD restarts the session ${r.restartSec.map((x) => x.toFixed(3)).join(', ')} s; load ${load()}`);
    const others = new Map<string, Result>();
    for (const s of SENDERS) {
      if (s === 'gobgp' && !gobgpAvailable()) {
        console.log('gobgp: not installed, skipped');
        continue;
      }
      if (s !== 'raw' && s !== 'gobgp') throw new Error(`unknown sender ${s}`);
      const res = await (s === 'raw' ? benchRaw() : benchGobgp());
      others.set(s, res);
      console.log(`${s}: connect (table at session start) ${res.connectSec.toFixed(3)} s, announce burst ${res.announceSec.toFixed(3)} s, withdraw burst ${res.withdrawSec.toFixed(3)} s, peak RSS ${res.peakRssMiB.toFixed(0)} MiB`);
    }
    console.log(`\nBIRD 2 receiving ${N} /32 (ratio = Herald ÷ sender, same run)\n`);
    console.log('| sender | table at session start (s) | announce burst (s) | withdraw burst (s) | peak RSS (MiB) |');
    console.log('|---|---|---|---|---|');
    console.log(`| herald run (whole process, bursts by reload) | ${r.resendSec.toFixed(3)} | ${r.announceSec.toFixed(3)} | ${r.withdrawSec.toFixed(3)} | ${r.hwmEnd.toFixed(0)} |`);
    const restarts = r.restartSec.length > 0 ? ` (after BIRD restarts the session: ${r.restartSec.map((x) => x.toFixed(3)).join(', ')} s)` : '';
    const x = (a: number, b: number) => (b > 0 && Number.isFinite(a / b) ? ` (Herald ${(a / b).toFixed(1)}×)` : '');
    for (const [s, o] of others) console.log(`| ${s} | ${o.connectSec.toFixed(3)}${x(r.resendSec, o.connectSec)} | ${o.announceSec.toFixed(3)}${x(r.announceSec, o.announceSec)} | ${o.withdrawSec.toFixed(3)}${x(r.withdrawSec, o.withdrawSec)} | ${Number.isNaN(o.peakRssMiB) ? '–' : o.peakRssMiB.toFixed(0)} |`);
    console.log(`\ntarget 100k static routes peak ≤ 200 MiB: ${mark(r.hwm <= 200)} (VmHWM ${r.hwm.toFixed(0)} MiB at "BIRD holds all", ${r.hwmEnd.toFixed(0)} MiB after the reload bursts)`);
    console.log(`target BIRD holds all ≤ 2 s after process start: ${mark(r.startSec <= 2)} (${r.startSec.toFixed(2)} s)`);
    const raw = others.get('raw');
    if (raw !== undefined) {
      const worst = Math.max(r.resendSec, ...r.restartSec);
      console.log(`target table resend within 2× the raw replay floor: ${mark(worst <= 2 * raw.connectSec)} (first session ${r.resendSec.toFixed(3)} s${restarts}; raw ${raw.connectSec.toFixed(3)} s; worst ${(worst / raw.connectSec).toFixed(1)}×)`);
    }
  }
}

await main();
