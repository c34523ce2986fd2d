/**
 * bench/convergence-stages.ts — where the time of one readiness flip goes (`node bench/convergence-stages.ts`).
 * Not a test: prints figures, asserts nothing.
 *
 * The same cluster and flips as bench/convergence.ts, but Herald runs IN THIS PROCESS: the real Daemon with the
 * real KubernetesSource (Herald's informers, src/k8s/informer.ts, over HTTP to the fake apiserver), HealthManager, Controller and
 * Speaker, peering with the recording peer. Sharing one event loop with the fake apiserver and the peer adds their
 * (small) work to the figures, but lets every stage be timestamped with one clock:
 *
 *   A  apiserver writes the watch event → KubernetesSource emits 'change' (HTTP chunk, JSON parse, informer,
 *      object store)
 *   B  'change' → the speaker is called (Controller workqueue, decision, merge, emit; Daemon.reconcile up to the
 *      speaker)
 *   C  the speaker call itself: Speaker.updateRoutes (the daemon's incremental path) or Speaker.setRoutes (a full
 *      recompute)
 *   D  that call returned → the UPDATE's TCP chunk at the recording peer (Adj-RIB-Out, packer, session pump, socket)
 *
 * Environment: SERVICES (default 10000), NODES (default 50), FLIPS (default 1000). With `node --expose-gc` the
 * heap figures are taken after a full GC (a growing figure means something is retained per flip).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { hostname, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { Speaker } from '../bgp/speaker.ts';
import type { Route } from '../bgp/rib/route.ts';
import { resolveIdentity, validateConfig } from '../src/config/load.ts';
import { Daemon } from '../src/daemon/daemon.ts';
import type { SpeakerLike } from '../src/daemon/speaker-like.ts';
import { HealthManager } from '../src/health/manager.ts';
import { probeCheck } from '../src/health/probe.ts';
import { flapControlFromConfig } from '../src/health/specs.ts';
import { loadKubeConfig } from '../src/k8s/client.ts';
import { HeraldMetrics } from '../src/metrics/metrics.ts';
import { KubernetesSource } from '../src/sources/kubernetes.ts';
import { FakeApiServer } from '../test/helpers/fake-apiserver.ts';
import { startFakeKubeProxy } from '../test/helpers/fake-kube-proxy.ts';
import { slice } from '../test/helpers/k8s-objects.ts';
import { benchHeraldConfig, endpoints, FLIPS, OURS, pct, populate, svcName, vipOf, writeKubeconfig } from './convergence.ts';
import { RecordingPeer } from './recording-peer.ts';
import type { RecordedUpdate } from './recording-peer.ts';

const BLOCK = `127.${100 + ((process.pid + 7) % 150)}.${(process.pid >> 8) & 0xff}.`;
const NODE_IP = `${BLOCK}1`;
const PEER_IP = `${BLOCK}2`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const now = () => process.hrtime.bigint();
/** V8 heap in use, MiB, after a full GC when run with --expose-gc (else without one). */
function heapMiB(): number {
  (globalThis as { gc?: () => void }).gc?.();
  return process.memoryUsage().heapUsed / 2 ** 20;
}

async function main(): Promise<void> {
  console.log(`load average ${loadavg().map((l) => l.toFixed(1)).join(' ')} at start; Node ${process.version}`);
  const dir = mkdtempSync(join(tmpdir(), 'herald-bench-stages-'));
  const api = new FakeApiServer();
  await api.start();
  const kubeProxy = await startFakeKubeProxy({ host: NODE_IP });
  const peer = await RecordingPeer.start({ host: PEER_IP, localAs: 65001, bgpIdentifier: '10.255.0.2' });
  const ours = populate(api);
  const kubeconfig = join(dir, 'kubeconfig.yaml');
  writeKubeconfig(kubeconfig, api.url);
  const v = validateConfig(benchHeraldConfig({ peerIp: PEER_IP, peerPort: peer.port, nodeIp: NODE_IP, kubeconfig, healthzPort: kubeProxy.port, adminPort: 0, stateDir: join(dir, 'state') }));
  if (!v.ok) throw new Error(`bench config invalid: ${JSON.stringify(v.errors)}`);
  const config = v.config;
  const identity = resolveIdentity(config, { nodeName: OURS, nodeIp: NODE_IP, env: {} }, hostname());
  const health = new HealthManager({ flapControl: flapControlFromConfig(config.flapControl), probe: (spec, signal) => probeCheck(spec, signal) });
  const source = new KubernetesSource({ kc: loadKubeConfig(kubeconfig).kc, nodeName: OURS });

  // Stage timestamps of the flip in flight.
  const st = { change: 0n, setIn: 0n, setOut: 0n };
  let armed = false;
  source.on('change', (keys: string[]) => {
    if (armed && st.change === 0n && keys.length > 0) st.change = now();
  });
  const daemon = new Daemon(config, identity, {
    createSpeaker: (o) => {
      const s = new Speaker(o);
      const stamp = (call: () => void) => {
        const t = now();
        call();
        if (armed && st.change !== 0n && st.setIn === 0n) {
          st.setIn = t;
          st.setOut = now();
        }
      };
      const origSet = s.setRoutes.bind(s);
      s.setRoutes = (routes: readonly Route[] | ReadonlyMap<string, Route>) => stamp(() => origSet(routes));
      const origUpdate = s.updateRoutes.bind(s);
      s.updateRoutes = (changed: Iterable<Route>, removed?: Iterable<string>) => stamp(() => origUpdate(changed, removed));
      return s satisfies SpeakerLike;
    },
    health,
    source,
    logger: pino({ level: 'warn' }),
    metrics: new HeraldMetrics({ version: 'bench', defaultMetrics: false }),
    version: 'bench',
    restarting: false,
  });
  const announced = new Set<string>();
  const waiters = new Map<string, { kind: 'announce' | 'withdraw'; resolve: (atNs: bigint) => void }>();
  peer.on('update', (u: RecordedUpdate) => {
    for (const [list, kind] of [
      [u.withdrawn, 'withdraw'],
      [u.announced, 'announce'],
    ] as const) {
      for (const p of list) {
        if (kind === 'withdraw') announced.delete(p);
        else announced.add(p);
        const w = waiters.get(p);
        if (w?.kind === kind) {
          waiters.delete(p);
          w.resolve(u.atNs);
        }
      }
    }
  });
  try {
    await daemon.start();
    const deadline = Date.now() + 300_000;
    while (announced.size < ours.length) {
      if (Date.now() > deadline) throw new Error(`only ${announced.size} of ${ours.length} VIPs announced`);
      await sleep(50);
    }
    await sleep(2000);
    const stages = { A: [] as number[], B: [] as number[], C: [] as number[], D: [] as number[], total: [] as number[] };
    const ready = new Map<number, boolean>(ours.map((i) => [i, true]));
    const heap0 = heapMiB();
    const cpu0 = process.cpuUsage();
    let lost = 0;
    for (let k = 0; k < FLIPS; k++) {
      const i = ours[k % ours.length]!;
      const r = !ready.get(i);
      ready.set(i, r);
      const prefix = `${vipOf(i)}/32`;
      const got = new Promise<bigint | undefined>((resolve) => {
        const timer = setTimeout(() => {
          waiters.delete(prefix);
          resolve(undefined);
        }, 5000);
        waiters.set(prefix, { kind: r ? 'announce' : 'withdraw', resolve: (ns) => (clearTimeout(timer), resolve(ns)) });
      });
      st.change = st.setIn = st.setOut = 0n;
      armed = true;
      const t0 = now();
      api.upsert('endpointslices', slice(`${svcName(i)}-1`, svcName(i), endpoints(i, r)), 'discovery.k8s.io');
      const tPeer = await got;
      armed = false;
      if (tPeer === undefined || st.change === 0n || st.setIn === 0n) {
        lost++;
        continue;
      }
      const ms = (a: bigint, b: bigint) => Number(b - a) / 1e6;
      stages.A.push(ms(t0, st.change));
      stages.B.push(ms(st.change, st.setIn));
      stages.C.push(ms(st.setIn, st.setOut));
      stages.D.push(ms(st.setOut, tPeer));
      stages.total.push(ms(t0, tPeer));
      await sleep(1);
    }
    const cpu = process.cpuUsage(cpu0);
    const heap1 = heapMiB();
    console.log(`${FLIPS} flips, ${stages.total.length} measured, ${lost} lost; ${ours.length} VIPs on ${OURS}`);
    console.log('stage                                   p50      p90      p99      max   (ms)');
    const names: Record<keyof typeof stages, string> = {
      A: 'A apiserver write → source change',
      B: 'B source change → speaker call',
      C: 'C updateRoutes/setRoutes',
      D: 'D speaker call done → UPDATE at peer',
      total: 'total',
    };
    for (const key of Object.keys(stages) as (keyof typeof stages)[]) {
      const s = stages[key].sort((a, b) => a - b);
      const f = (x: number) => x.toFixed(2).padStart(8);
      console.log(`${names[key].padEnd(38)}${f(pct(s, 50))} ${f(pct(s, 90))} ${f(pct(s, 99))} ${f(s[s.length - 1] ?? NaN)}`);
    }
    console.log(`CPU of this whole process (Herald + fake apiserver + peer): ${((cpu.user + cpu.system) / 1000 / FLIPS).toFixed(2)} ms per flip`);
    console.log(`V8 heap in use${typeof (globalThis as { gc?: unknown }).gc === 'function' ? ' after full GC' : ' (run with --expose-gc for after-GC figures)'}: ${heap0.toFixed(1)} MiB before the flips, ${heap1.toFixed(1)} MiB after`);
    console.log(`load average at the end: ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  } finally {
    await daemon.shutdown('bench done');
    await peer.close();
    await kubeProxy.close();
    await api.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
