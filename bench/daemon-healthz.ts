/**
 * bench/daemon-healthz.ts — the kube-proxy /healthz row of bench/daemon.ts (ROWS=healthz, issue 34): the burst a node
 * meets when its kube-proxy's node health check fails while it announces many externalTrafficPolicy Local VIPs.
 *
 * - The fake apiserver holds `nodes` Nodes and `services` LoadBalancer Services (externalTrafficPolicy Local), each
 *   with one EndpointSlice whose endpoints include a ready one on node-00, all in the shape a kube-apiserver serves
 *   them; `herald run` runs as node-00 with the Kubernetes source, peering with BIRD 2, and announces every VIP.
 * - A kube-proxy stand-in in this process serves node-00's `/healthz` (kube-proxy's port 10256) and notes when each
 *   answer is written; per-Service checks are off (`kubeProxy.checkServices: false`), and `fall: 1`, so the first 503
 *   is the failed check.
 * - Withdraw burst: /healthz answers 503; from the moment the first 503 answer is written until BIRD holds no route
 *   (`birdc` polled back to back from that moment). Announce burst: /healthz answers 200 again (`rise: 1`); from the
 *   first 200 answer until BIRD holds every VIP again. The CPU seconds of each of Herald's threads over each burst.
 * - In the same run, the raw replay floor of the same UPDATEs (bench/senders.ts `benchRawPrefixes`: Herald's UPDATE
 *   bytes for exactly those VIPs, written by a trivial sender in one write each) and the ratios Herald ÷ floor.
 * Not a test: prints figures, asserts nothing. Stops every process it started, by PID.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { Socket } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { stringify } from 'yaml';
import { FakeApiServer } from '../test/helpers/fake-apiserver.ts';
import { Bird, bgpProtocol, freePort } from '../test/helpers/bird.ts';
import { node, servedNode, servedService, servedSlice, service, slice } from '../test/helpers/k8s-objects.ts';
import { cpuSec, nodeName, OURS, rssMiB, svcName, vipOf, writeKubeconfig } from './convergence.ts';
import { established, until } from './daemon-static.ts';
import { spawnHerald, threadCpu, threadDelta } from './herald-process.ts';
import type { HeraldProcess } from './herald-process.ts';
import { TIMEFORMAT } from './peers.ts';
import { benchRawPrefixes } from './senders.ts';

const load = (): string => loadavg().map((l) => l.toFixed(1)).join(' ');

/** A kube-proxy `/healthz` stand-in that notes when the first answer of the current mode was written. */
async function healthz(host: string): Promise<{ port: number; set(ok: boolean): Promise<number>; close(): Promise<void> }> {
  let ok = true;
  let waiter: ((at: number) => void) | undefined;
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    const answerOk = ok;
    const now = new Date().toISOString();
    res.writeHead(answerOk ? 200 : 503, { 'content-type': 'application/json', connection: 'close' });
    res.on('finish', () => {
      if (answerOk === ok && waiter !== undefined) {
        const w = waiter;
        waiter = undefined;
        w(performance.now());
      }
    });
    res.end(JSON.stringify({ lastUpdated: now, currentTime: now, nodeEligible: true }));
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, host, r));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    port,
    /** Switches the answers; resolves with performance.now() when the first answer of the new kind was written. */
    set: (next) =>
      new Promise<number>((resolve) => {
        ok = next;
        waiter = resolve;
      }),
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/** Runs the row (see the module comment) and prints it. */
export async function healthzRow(o: { services: number; nodes: number; address: string }): Promise<void> {
  const nodeIp = `${o.address}.1`;
  const birdIp = `${o.address}.2`;
  const dir = mkdtempSync(join(tmpdir(), 'herald-bench-healthz-'));
  const api = new FakeApiServer();
  await api.start();
  const proxy = await healthz(nodeIp);
  const birdPort = await freePort(birdIp);
  const bird = await Bird.start(TIMEFORMAT + bgpProtocol({ name: 'herald', local: birdIp, localPort: birdPort, localAs: 65001, neighbor: nodeIp, neighborPort: 179, neighborAs: 65000, passive: true, families: ['ipv4'], extra: '  debug { states, events };' }));
  let h: HeraldProcess | undefined;
  const vips: string[] = [];
  try {
    for (let n = 0; n < o.nodes; n++) api.upsert('nodes', servedNode(node(nodeName(n)), `192.0.2.${n + 1}`));
    for (let i = 0; i < o.services; i++) {
      vips.push(`${vipOf(i)}/32`);
      api.upsert('services', servedService(service(svcName(i), { etp: 'Local', lbIPs: [vipOf(i)], clusterIPs: ['10.96.0.10'] }), i));
      const other = nodeName(1 + (i % (o.nodes - 1)));
      const eps = slice(`${svcName(i)}-1`, svcName(i), [
        [`10.100.${(i >> 8) & 255}.${i & 255}`, OURS],
        [`10.101.${(i >> 8) & 255}.${i & 255}`, other],
      ]);
      api.upsert('endpointslices', servedSlice(eps, i), 'discovery.k8s.io');
    }
    const kubeconfig = join(dir, 'kubeconfig.yaml');
    writeKubeconfig(kubeconfig, api.url);
    const config = join(dir, 'herald.yaml');
    writeFileSync(
      config,
      stringify({
        bgp: { localAs: 65000 },
        peers: [{ name: 'bird', address: birdIp, port: birdPort, peerAs: 65001, localAddress: nodeIp, holdTime: 90, connectRetryTime: 1, ebgpMultihop: 2, families: ['ipv4-unicast'] }],
        source: { kubernetes: { kubeconfig } },
        kubeProxy: { healthzPort: proxy.port, checkServices: false },
        allowedPrefixes: ['10.200.0.0/16'],
        healthChecks: { interval: 1, timeout: 0.5, rise: 1, fall: 1 },
        flapControl: { holdDown: 0, penalty: 0 },
        admin: { address: '127.0.0.1', port: await freePort('127.0.0.1') },
        stateDir: join(dir, 'state'),
        logLevel: 'warn',
      }),
    );
    const t0 = performance.now();
    h = spawnHerald(['--config', config, '--node-name', OURS, '--node-ip', nodeIp]);
    await established(bird, 'herald', h);
    const all = await until(bird, o.services, h);
    const startSec = (all - t0) / 1000;
    const sync = { ...rssMiB(h.pid), cpu: cpuSec(h.pid) };
    await new Promise((r) => setTimeout(r, 2000));
    const burst = async (ok: boolean, want: number): Promise<[number, string]> => {
      const c0 = threadCpu(h!.pid);
      const at = await proxy.set(ok);
      const sec = ((await until(bird, want, h!)) - at) / 1000;
      return [sec, threadDelta(c0, threadCpu(h!.pid))];
    };
    const [withdrawSec, withdrawCpu] = await burst(false, 0);
    await new Promise((r) => setTimeout(r, 2000));
    const [announceSec, announceCpu] = await burst(true, o.services);
    const end = rssMiB(h.pid);
    await h.stop();
    h = undefined;
    const raw = await benchRawPrefixes(vips);
    console.log(
      `\nhealthz: \`herald run\` as node-00, ${o.services} Local Services with a ready endpoint on it, ${o.nodes} nodes: start → BIRD holds all ${startSec.toFixed(2)} s (CPU ${sync.cpu.toFixed(2)} s, VmHWM ${sync.hwm.toFixed(0)} MiB); /healthz 503 → BIRD holds none ${withdrawSec.toFixed(3)} s (CPU s: ${withdrawCpu}); 200 → BIRD holds all ${announceSec.toFixed(3)} s (CPU s: ${announceCpu}); VmHWM at the end ${end.hwm.toFixed(0)} MiB; raw floor: withdraw ${raw.withdrawSec.toFixed(3)} s, announce ${raw.announceSec.toFixed(3)} s; load ${load()}`,
    );
    console.log(`\nkube-proxy /healthz fails with ${o.services} Local VIPs announced: time from the answer that fails the check to BIRD's table (ratio = Herald ÷ raw floor of the same UPDATEs); load ${load()}\n`);
    console.log('| burst | herald run | raw replay floor | ratio |');
    console.log('|---|---|---|---|');
    console.log(`| /healthz 503 → every VIP withdrawn | ${withdrawSec.toFixed(3)} s | ${raw.withdrawSec.toFixed(3)} s | ${(withdrawSec / raw.withdrawSec).toFixed(2)}× |`);
    console.log(`| /healthz 200 again → every VIP announced | ${announceSec.toFixed(3)} s | ${raw.announceSec.toFixed(3)} s | ${(announceSec / raw.announceSec).toFixed(2)}× |`);
  } finally {
    await h?.stop();
    await bird.stop();
    await proxy.close();
    await api.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
