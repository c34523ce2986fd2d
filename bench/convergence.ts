/**
 * bench/convergence.ts — how fast one Herald turns an EndpointSlice readiness change into a BGP UPDATE
 * (`npm run bench:convergence`). Not a test: prints figures, asserts nothing.
 *
 * Setup, all on loopback:
 * - the fake apiserver (test/helpers/fake-apiserver.ts, in this process) holds NODES Nodes and SERVICES LoadBalancer
 *   Services with externalTrafficPolicy Local, each with one EndpointSlice of 3 ready endpoints on 3 distinct nodes
 *   (service i on nodes i, i+17, i+33 mod NODES), so this node hosts endpoints of 3 × SERVICES / NODES Services;
 * - ONE `herald run` child process (the real CLI, Kubernetes source through a kubeconfig, Herald's own
 *   informers, src/k8s/informer.ts) as node-00 on its own 127.x node IP, with a fake kube-proxy /healthz on that IP (per-Service
 *   kube-proxy checks off: `kubeProxy.checkServices: false`, so a flip is not gated by a probe interval);
 * - a recording BGP peer (bench/recording-peer.ts, in this process) that Herald dials; it timestamps each UPDATE.
 *
 * Measurement: after the initial table has arrived, FLIPS single-endpoint readiness flips of node-00's endpoints,
 * one at a time (first unready → withdrawal, then ready again → announcement, cycling through node-00's Services).
 * Latency of one flip = from `process.hrtime.bigint()` just before the fake apiserver writes the watch event
 * (`upsert` writes it to the open watch streams synchronously) to the arrival at the recording peer of the TCP
 * chunk completing the UPDATE that carries the VIP. Both clocks are CLOCK_MONOTONIC of this machine.
 * CPU per event = Herald's utime+stime (/proc/PID/stat) over the flip phase ÷ FLIPS. RSS = VmRSS/VmHWM of Herald.
 *
 * Environment: SERVICES (default 10000), NODES (default 50), FLIPS (default 1000); PROFILE=DIR runs Herald with
 * `--cpu-prof --cpu-prof-dir=DIR` (a .cpuprofile of its whole life, written when it exits). Target: p99 ≤ 10 ms.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { FakeApiServer } from '../test/helpers/fake-apiserver.ts';
import { startFakeKubeProxy } from '../test/helpers/fake-kube-proxy.ts';
import { node, service, slice } from '../test/helpers/k8s-objects.ts';
import type { EpSpec } from '../test/helpers/k8s-objects.ts';
import { DaemonProcess } from '../test/helpers/daemon-process.ts';
import { freePort } from '../test/helpers/bird.ts';
import { RecordingPeer } from './recording-peer.ts';
import type { RecordedUpdate } from './recording-peer.ts';

export const SERVICES = Number(process.env.SERVICES ?? 10_000);
export const NODES = Number(process.env.NODES ?? 50);
export const FLIPS = Number(process.env.FLIPS ?? 1000);
const ROOT = join(import.meta.dirname, '..');
const HERALD_AS = 65000;
const PEER_AS = 65001;
const BLOCK = `127.${100 + (process.pid % 150)}.${(process.pid >> 8) & 0xff}.`;
const NODE_IP = `${BLOCK}1`;
const PEER_IP = `${BLOCK}2`;
export const OURS = 'node-00';

/** Node name of node number n: node-00 … node-49. */
export const nodeName = (n: number): string => `node-${String(n).padStart(2, '0')}`;
/** Service name of Service number i. */
export const svcName = (i: number): string => `svc-${String(i).padStart(5, '0')}`;
/** LoadBalancer VIP of Service number i: 10.200.0.0 + i. */
export function vipOf(i: number): string {
  const v = (0x0ac80000 + i) >>> 0; // 10.200.0.0 + i
  return `${v >>> 24}.${(v >>> 16) & 255}.${(v >>> 8) & 255}.${v & 255}`;
}
/** The 3 distinct node numbers hosting Service i's endpoints. */
export function nodesOf(i: number): number[] {
  return [i % NODES, (i + 17) % NODES, (i + 33) % NODES];
}
/** Service i's endpoints: ready, except node-00's which is ready iff `oursReady`. */
export function endpoints(i: number, oursReady: boolean): EpSpec[] {
  return nodesOf(i).map((n, k) => [`10.${100 + k}.${(i >> 8) & 255}.${i & 255}`, nodeName(n), { ready: nodeName(n) === OURS ? oursReady : true }]);
}

/** utime+stime of a process, seconds (/proc/PID/stat fields 14 and 15, in clock ticks of 1/100 s). */
export function cpuSec(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
}
/** VmRSS and VmHWM of a process, MiB. */
export function rssMiB(pid: number): { rss: number; hwm: number } {
  const st = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (k: string) => Number(new RegExp(`${k}:\\s+(\\d+) kB`).exec(st)?.[1] ?? 0);
  return { rss: kb('VmRSS') / 1024, hwm: kb('VmHWM') / 1024 };
}
/** The p-th percentile (nearest rank) of ascending `sorted`. */
export function pct(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Fills the fake apiserver: NODES Nodes, SERVICES Local LoadBalancer Services, one EndpointSlice each.
 * @returns the numbers of the Services with an endpoint on node-00
 */
export function populate(api: FakeApiServer): number[] {
  for (let n = 0; n < NODES; n++) api.upsert('nodes', node(nodeName(n)));
  const ours: number[] = [];
  for (let i = 0; i < SERVICES; i++) {
    api.upsert('services', service(svcName(i), { etp: 'Local', lbIPs: [vipOf(i)], clusterIPs: ['10.96.0.10'] }));
    api.upsert('endpointslices', slice(`${svcName(i)}-1`, svcName(i), endpoints(i, true)), 'discovery.k8s.io');
    if (nodesOf(i).includes(0)) ours.push(i);
  }
  return ours;
}

/** Writes a kubeconfig for the fake apiserver at `url` (plain http, no credentials). */
export function writeKubeconfig(path: string, url: string): void {
  writeFileSync(
    path,
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'fake', cluster: { server: url, 'insecure-skip-tls-verify': true } }],
      users: [{ name: 'bench', user: {} }],
      contexts: [{ name: 'fake', context: { cluster: 'fake', user: 'bench' } }],
      'current-context': 'fake',
    }),
  );
}

/**
 * The Herald config of the Kubernetes benches: one recording peer, the Kubernetes source through `kubeconfig`, the
 * fake kube-proxy's /healthz, per-Service kube-proxy checks and flap control off (nothing gates a flip).
 */
export function benchHeraldConfig(o: { peerIp: string; peerPort: number; nodeIp: string; kubeconfig: string; healthzPort: number; adminPort: number; stateDir: string }): object {
  return {
    bgp: { localAs: HERALD_AS },
    peers: [{ name: 'rec', address: o.peerIp, port: o.peerPort, peerAs: PEER_AS, localAddress: o.nodeIp, holdTime: 90, connectRetryTime: 1, ebgpMultihop: 2, families: ['ipv4-unicast'] }],
    source: { kubernetes: { kubeconfig: o.kubeconfig } },
    kubeProxy: { healthzPort: o.healthzPort, checkServices: false },
    // the VIPs (vipOf) are the operator's to announce (docs/security.md: none without pools or allowedPrefixes)
    allowedPrefixes: ['10.200.0.0/16'],
    healthChecks: { interval: 1, timeout: 0.5, rise: 1, fall: 3 },
    flapControl: { holdDown: 0, penalty: 0 },
    admin: { address: '127.0.0.1', port: o.adminPort },
    stateDir: o.stateDir,
    logLevel: 'warn',
  };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'herald-bench-conv-'));
  const api = new FakeApiServer();
  await api.start();
  const kubeProxy = await startFakeKubeProxy({ host: NODE_IP });
  const peer = await RecordingPeer.start({ host: PEER_IP, localAs: PEER_AS, bgpIdentifier: '10.255.0.2' });
  const herald = new DaemonProcess('bench-conv');
  const cleanup = async () => {
    await herald.stop(5000);
    await peer.close();
    await kubeProxy.close();
    await api.stop();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    // Population.
    const t0 = performance.now();
    const ours = populate(api);
    console.log(`machine: ${availableParallelism()} CPUs, load average ${loadavg().map((l) => l.toFixed(1)).join(' ')} at start; Node ${process.version}`);
    console.log(`population: ${NODES} nodes, ${SERVICES} Services × 3 endpoints (${ours.length} with an endpoint on ${OURS}) in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

    // Herald.
    const kubeconfig = join(dir, 'kubeconfig.yaml');
    writeKubeconfig(kubeconfig, api.url);
    const configPath = join(dir, 'herald.yaml');
    writeFileSync(configPath, stringify(benchHeraldConfig({ peerIp: PEER_IP, peerPort: peer.port, nodeIp: NODE_IP, kubeconfig, healthzPort: kubeProxy.port, adminPort: await freePort('127.0.0.1'), stateDir: join(dir, 'state') })));
    const tStart = performance.now();
    const profile = process.env.PROFILE ? [`--cpu-prof`, `--cpu-prof-dir=${process.env.PROFILE}`] : [];
    herald.spawn(process.execPath, [...profile, join(ROOT, 'bin', 'herald.js'), 'run', '--config', configPath, '--node-name', OURS, '--node-ip', NODE_IP]);
    const pid = herald.child?.pid;
    if (pid === undefined) throw new Error('herald did not start');

    // Initial table: every VIP of node-00 announced.
    const announced = new Set<string>();
    const waiters = new Map<string, { kind: 'announce' | 'withdraw'; resolve: (atNs: bigint) => void }>();
    peer.on('update', (u: RecordedUpdate) => {
      for (const p of u.withdrawn) {
        announced.delete(p);
        const w = waiters.get(p);
        if (w?.kind === 'withdraw') {
          waiters.delete(p);
          w.resolve(u.atNs);
        }
      }
      for (const p of u.announced) {
        announced.add(p);
        const w = waiters.get(p);
        if (w?.kind === 'announce') {
          waiters.delete(p);
          w.resolve(u.atNs);
        }
      }
    });
    peer.on('error', (err: Error) => console.error(`recording peer: ${err.message}`));
    await herald.waitFor(() => announced.size >= ours.length, `${ours.length} VIPs announced`, 300_000, 50);
    const initialSec = (performance.now() - tStart) / 1000;
    await sleep(2000); // let the start-up garbage settle
    const rssAfterSync = rssMiB(pid);
    console.log(`initial: ${announced.size} VIPs at the peer ${initialSec.toFixed(1)} s after spawn; Herald RSS ${rssAfterSync.rss.toFixed(0)} MiB`);

    // Flips.
    const latMs: number[] = [];
    let lost = 0;
    const oursReady = new Map<number, boolean>(ours.map((i) => [i, true]));
    const cpu0 = cpuSec(pid);
    const wall0 = performance.now();
    for (let k = 0; k < FLIPS; k++) {
      const i = ours[k % ours.length]!;
      const ready = !oursReady.get(i);
      oursReady.set(i, ready);
      const prefix = `${vipOf(i)}/32`;
      const got = new Promise<bigint | undefined>((resolve) => {
        const timer = setTimeout(() => {
          waiters.delete(prefix);
          resolve(undefined);
        }, 5000);
        waiters.set(prefix, {
          kind: ready ? 'announce' : 'withdraw',
          resolve: (ns) => {
            clearTimeout(timer);
            resolve(ns);
          },
        });
      });
      const sentNs = process.hrtime.bigint();
      api.upsert('endpointslices', slice(`${svcName(i)}-1`, svcName(i), endpoints(i, ready)), 'discovery.k8s.io');
      const atNs = await got;
      if (atNs === undefined) lost++;
      else latMs.push(Number(atNs - sentNs) / 1e6);
      await sleep(1);
    }
    const wallSec = (performance.now() - wall0) / 1000;
    const cpu = cpuSec(pid) - cpu0;
    const rssEnd = rssMiB(pid);
    latMs.sort((a, b) => a - b);
    const mean = latMs.reduce((a, b) => a + b, 0) / Math.max(1, latMs.length);
    console.log('');
    console.log(`flips: ${FLIPS} (${latMs.length} measured, ${lost} without an UPDATE within 5 s) in ${wallSec.toFixed(1)} s`);
    console.log(`watch event → UPDATE at the peer, ms: p50 ${pct(latMs, 50).toFixed(2)}  p90 ${pct(latMs, 90).toFixed(2)}  p99 ${pct(latMs, 99).toFixed(2)}  max ${(latMs[latMs.length - 1] ?? NaN).toFixed(2)}  mean ${mean.toFixed(2)}  (target p99 ≤ 10 ms)`);
    console.log(`Herald CPU: ${cpu.toFixed(2)} s over the flip phase = ${((cpu / FLIPS) * 1000).toFixed(2)} ms per event (utime+stime, 10 ms ticks)`);
    console.log(`load average at the end: ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
    console.log(`Herald RSS: ${rssAfterSync.rss.toFixed(0)} MiB after initial sync, ${rssEnd.rss.toFixed(0)} MiB at the end, peak (VmHWM) ${rssEnd.hwm.toFixed(0)} MiB`);
  } finally {
    await cleanup();
  }
}

if (import.meta.main) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  });
}
