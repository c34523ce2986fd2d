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
 * Static rows (ROWS contains "static", bench/daemon-static.ts): a config file with N static /32 routes, BIRD 2 as the
 * peer: start → BIRD holds all, the table at session start, withdraw and announce bursts by rewriting the file and
 * SIGHUP (CPU per thread of each), the resend after BIRD restarts the session (RESTARTS times), peak RSS at start and
 * after the bursts; in the same run the same table sent by the SENDERS (raw replay floor, BIRD 2 with `birdc
 * configure`, FRR 8.4, GoBGP: bench/senders.ts, bench/peers.ts) and the ratios Herald ÷ sender, and the issue 34
 * targets marked met or not.
 *
 * kube-proxy /healthz row (ROWS contains "healthz", bench/daemon-healthz.ts): HEALTHZ_SERVICES Local Services all
 * with a ready endpoint on node-00, BIRD 2 as the peer; node-00's /healthz fails (fall 1): time from the failing
 * answer until BIRD holds no VIP, and back, against the raw replay floor of the same UPDATEs.
 * The in-process breakdown rows stay in bench/peers.ts (speaker only), bench/config.ts (config load) and
 * bench/convergence.ts (flip latency).
 *
 * Environment: ROWS (default "k8s,static"; also "healthz"), SIZES (default "100,1000,10000"), NODES (default 50),
 * FLIPS (default 5000), N (default 100000), RESTARTS (default 3), SENDERS (default "raw,bird,frr"; "gobgp" too; ""
 * for none), HEALTHZ_SERVICES (default 10000), PROFILE_WINDOWS=1 (print each burst's CLOCK_MONOTONIC window, to read a
 * `--cpu-prof` profile of it), MEMORY_LIMIT_MIB (the
 * container limit bin/herald.js sizes V8 from; default the DaemonSet's), NODE_ARGS (more node flags, through
 * NODE_OPTIONS: e.g. "--heap-prof --heap-prof-dir=DIR"), COMPILE_CACHE ("image", the default: Node's module compile
 * cache in a fresh directory filled by deploy/warm-compile-cache.js, as the container image has it; "cold": no
 * compile cache, as a process whose cache holds none of Herald's modules). Needs bird2 (and frr, gobgpd) for the
 * static and healthz rows. HEAP_SNAPSHOTS=DIR: the Kubernetes rows write a V8 heap snapshot of Herald after sync and after the flips into
 * DIR (through node's --heapsnapshot-signal=SIGPWR, sent only to the process this bench started; the figures of
 * such a run are not comparable: a snapshot costs heap and time).
 */
import { mkdtempSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { stringify } from 'yaml';
import { FakeApiServer } from '../test/helpers/fake-apiserver.ts';
import { startFakeKubeProxy } from '../test/helpers/fake-kube-proxy.ts';
import { node, servedNode, servedService, servedSlice, service, slice } from '../test/helpers/k8s-objects.ts';
import { birdAvailable, freePort } from '../test/helpers/bird.ts';
import { benchHeraldConfig, cpuSec, endpoints, nodeName, nodesOf, OURS, rssMiB, svcName, vipOf, writeKubeconfig } from './convergence.ts';
import { healthzRow } from './daemon-healthz.ts';
import { staticRows } from './daemon-static.ts';
import { COMPILE_CACHE, HEAP_SNAPSHOTS, LIMIT_MIB, NODE_ARGS, spawnHerald } from './herald-process.ts';
import { RecordingPeer } from './recording-peer.ts';
import type { RecordedUpdate } from './recording-peer.ts';

const ROWS = (process.env.ROWS ?? 'k8s,static').split(',').map((s) => s.trim());
const SIZES = (process.env.SIZES ?? '100,1000,10000').split(',').map(Number);
const NODES = Number(process.env.NODES ?? 50);
const FLIPS = Number(process.env.FLIPS ?? 5000);
const N = Number(process.env.N ?? 100_000);
const RESTARTS = Number(process.env.RESTARTS ?? 3);
const SENDERS = (process.env.SENDERS ?? 'raw,bird,frr').split(',').map((s) => s.trim()).filter(Boolean);
const HEALTHZ_SERVICES = Number(process.env.HEALTHZ_SERVICES ?? 10_000);
const B = 150 + (process.pid % 50);


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
      if (r.services <= 100) console.log(`target ≤ 100 Services peak RSS ≤ 90 MiB: ${mark(r.hwmEnd <= 90)} (VmHWM ${r.hwmSync.toFixed(0)} MiB after sync, ${r.hwmEnd.toFixed(0)} MiB after the flips)`);
      if (r.services >= 10_000) {
        console.log(`target 10,000 Services ≤ 150 MiB after sync: ${mark(r.hwmSync <= 150)} (VmHWM ${r.hwmSync.toFixed(0)} MiB, VmRSS ${r.rssSync.toFixed(0)} MiB)`);
        console.log(`target ≤ 5 % growth over ${FLIPS} flips: ${mark(growth <= 5)} (${growth.toFixed(1)} % VmRSS; VmHWM ${r.hwmSync.toFixed(0)} → ${r.hwmEnd.toFixed(0)} MiB)`);
      }
    }
  }
  if (ROWS.includes('static')) {
    if (!birdAvailable()) console.log('static rows skipped: bird2 is not installed');
    else await staticRows({ n: N, restarts: RESTARTS, senders: SENDERS, address: `127.${B}.250` });
  }
  if (ROWS.includes('healthz')) {
    if (!birdAvailable()) console.log('healthz row skipped: bird2 is not installed');
    else await healthzRow({ services: HEALTHZ_SERVICES, nodes: NODES, address: `127.${B}.251` });
  }
}

await main();
