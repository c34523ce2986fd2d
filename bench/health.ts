/**
 * bench/health.ts — benchmark (not a test): how fast a failing kube-proxy health check withdraws a Service VIP.
 *
 * One `herald run` child (bin/herald.js, standalone manifests source with `kubeProxy.enabled: true`) announces a
 * LoadBalancer Service (externalTrafficPolicy Local, healthCheckNodePort) to a recording BGP peer
 * (bench/recording-peer.ts) in this process. A small kube-proxy-like health server, also in this process, answers
 * 200 `{localEndpoints: 1}` or 503 `{localEndpoints: 0}` and timestamps every answer it sends. Each flip:
 * wait a random 0–1 interval, switch the server to 503 (t_switch), wait for the withdrawal UPDATE (t_withdraw,
 * stamped when its TCP chunk arrived), switch back to 200 and wait for the re-announcement.
 *
 * All timestamps are `process.hrtime.bigint()` in this process. Printed per flip set:
 * - switch → withdrawal: what a router sees (≈ up to one interval until the next probe + (fall − 1) intervals);
 * - Herald's own part: the `fall`-th 503 answer written (the answer that brings the check down) → withdrawal UPDATE
 *   received: response parsing, rise/fall, reconcile, UPDATE encode/send, loopback;
 * Damping and hold-down are off in this bench (every flip must withdraw); rise 2 only delays the re-announcement.
 *
 * Then the cost of 10,000 active checks: runs bench/health-checks.ts (event-loop lag and CPU) as a child.
 *
 * Usage: npm run bench:health   (env: FLIPS=200, INTERVAL=1, FALL=2, LOAD_CHECKS=10000, LOAD_INTERVAL=5,
 *                                LOAD_DURATION=30; LOAD_CHECKS=0 skips the second part)
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type net from 'node:net';
import os from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { RecordingPeer } from './recording-peer.ts';
import type { RecordedUpdate } from './recording-peer.ts';
import { DaemonProcess } from '../test/helpers/daemon-process.ts';
import { freePort } from '../test/helpers/bird.ts';
import { node, service, slice } from '../test/helpers/k8s-objects.ts';

const ROOT = join(import.meta.dirname, '..');
const VIP = '198.51.100.40';
const PREFIX = `${VIP}/32`;
const NODE_IP = '127.0.77.1';
const PEER_IP = '127.0.77.100';

function envNum(name: string, def: number): number {
  const v = process.env[name];
  if (v === undefined || v === '') return def;
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0) throw new Error(`${name} must be a non-negative number, got ${v}`);
  return n;
}

/** kube-proxy-like Service health server: 200/503 switch; every answer's write time (hrtime ns) is kept. */
async function healthServer(host: string): Promise<{ port: number; setOk(ok: boolean): void; answers503: bigint[]; close(): Promise<void> }> {
  let ok = true;
  const answers503: bigint[] = [];
  const sockets = new Set<net.Socket>();
  const server = http.createServer((req, res) => {
    if ((req.url ?? '').startsWith('/healthz')) {
      // kube-proxy's node health (kubeProxy.healthzPort, same port here): always healthy.
      res.writeHead(200, { 'content-type': 'application/json', connection: 'close' });
      res.end(JSON.stringify({ nodeEligible: true }));
      return;
    }
    const body = JSON.stringify({ service: { namespace: 'default', name: 'web' }, localEndpoints: ok ? 1 : 0, serviceProxyHealthy: true });
    const was = ok;
    res.writeHead(ok ? 200 : 503, { 'content-type': 'application/json', connection: 'close' });
    res.end(body, () => {
      if (!was) answers503.push(process.hrtime.bigint());
    });
  });
  server.on('connection', (s: net.Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host, port: 0 }, () => resolve());
  });
  return {
    port: (server.address() as net.AddressInfo).port,
    setOk: (v) => void (ok = v),
    answers503,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

function pct(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] as number;
}

function summary(name: string, ms: number[]): string {
  const s = [...ms].sort((a, b) => a - b);
  const mean = s.reduce((a, b) => a + b, 0) / (s.length || 1);
  return `${name.padEnd(44)} n=${s.length}  p50 ${pct(s, 50).toFixed(1)}  p90 ${pct(s, 90).toFixed(1)}  p99 ${pct(s, 99).toFixed(1)}  max ${(s[s.length - 1] ?? NaN).toFixed(1)}  mean ${mean.toFixed(1)} ms`;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

async function flips(): Promise<void> {
  const nFlips = envNum('FLIPS', 200);
  const intervalSec = envNum('INTERVAL', 1);
  const fall = envNum('FALL', 2);
  const rise = 2;
  const hs = await healthServer(NODE_IP);
  const peer = await RecordingPeer.start({ host: PEER_IP, localAs: 65100, bgpIdentifier: '10.255.255.2', holdTimeSec: 90 });
  const proc = new DaemonProcess('bench-health');
  const stop = async () => {
    await proc.stop(5000);
    await peer.close();
    await hs.close();
  };
  try {
    const dir = mkdtempSync(join(os.tmpdir(), 'herald-bench-health-'));
    const manifests = join(dir, 'manifests');
    mkdirSync(manifests);
    const svc = service('web', { etp: 'Local', lbIPs: [VIP] });
    svc.spec!.healthCheckNodePort = hs.port;
    writeFileSync(
      join(manifests, 'web.yaml'),
      [node('node-a'), svc, slice('web-1', 'web', [['10.4.0.1', 'node-a', { ready: true }]])].map((d) => stringify(d)).join('---\n'),
    );
    const adminPort = await freePort('127.0.0.1');
    const config = {
      bgp: { localAs: 65000 },
      peers: [{ name: 'rec', address: PEER_IP, port: peer.port, peerAs: 65100, localAddress: NODE_IP, holdTime: 90, connectRetryTime: 1, ebgpMultihop: 2, families: ['ipv4-unicast'] }],
      source: { manifests },
      // The node check (/healthz) goes to the same server, which always answers 200 there.
      kubeProxy: { enabled: true, healthzPort: hs.port, checkServices: true },
      allowedPrefixes: [`${VIP}/32`],
      healthChecks: { interval: intervalSec, timeout: Math.min(0.5, intervalSec), rise, fall },
      flapControl: { holdDown: 0, penalty: 0 },
      admin: { address: '127.0.0.1', port: adminPort },
      stateDir: join(proc.dir, 'state'),
      logLevel: 'warn',
    };
    const configPath = join(dir, 'herald.yaml');
    writeFileSync(configPath, stringify(config));
    proc.spawn(process.execPath, [join(ROOT, 'bin', 'herald.js'), 'run', '--config', configPath, '--node-name', 'node-a', '--node-ip', NODE_IP]);

    const waitUpdate = (pred: (u: RecordedUpdate) => boolean, what: string, timeoutMs: number) =>
      new Promise<RecordedUpdate>((resolve, reject) => {
        const timer = setTimeout(() => {
          peer.off('update', on);
          reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}; herald stderr: ${proc.stderr.slice(-1500)}`));
        }, timeoutMs);
        const on = (u: RecordedUpdate) => {
          if (!pred(u)) return;
          clearTimeout(timer);
          peer.off('update', on);
          resolve(u);
        };
        peer.on('update', on);
      });
    const announced = (u: RecordedUpdate) => u.announced.includes(PREFIX);
    const withdrawn = (u: RecordedUpdate) => u.withdrawn.includes(PREFIX);
    if (!peer.updates.some(announced)) await waitUpdate(announced, 'the first announcement', 120_000);
    rmSync(dir, { recursive: true, force: true });
    console.log(`herald up, ${PREFIX} announced; ${nFlips} flips, interval ${intervalSec} s, fall ${fall}, rise ${rise}, damping and hold-down off`);

    const total: number[] = [];
    const own: number[] = [];
    const back: number[] = [];
    const tStart = Date.now();
    for (let i = 0; i < nFlips; i++) {
      await sleep(Math.random() * intervalSec * 1000);
      const gone = waitUpdate(withdrawn, `withdrawal ${i + 1}`, 30_000 + intervalSec * fall * 3000);
      hs.answers503.length = 0;
      const tSwitch = process.hrtime.bigint();
      hs.setOk(false);
      const w = await gone;
      total.push(Number(w.atNs - tSwitch) / 1e6);
      const fallth = hs.answers503[fall - 1];
      if (fallth !== undefined && fallth <= w.atNs) own.push(Number(w.atNs - fallth) / 1e6);
      const again = waitUpdate(announced, `re-announcement ${i + 1}`, 30_000 + intervalSec * rise * 3000);
      const tOk = process.hrtime.bigint();
      hs.setOk(true);
      const a = await again;
      back.push(Number(a.atNs - tOk) / 1e6);
      if ((i + 1) % 25 === 0) console.log(`  ${i + 1}/${nFlips} flips (${((Date.now() - tStart) / 1000).toFixed(0)} s)`);
    }
    console.log('');
    console.log(summary('503 → withdrawal UPDATE (what a router sees)', total));
    console.log(summary(`Herald's own: ${fall}${fall === 2 ? 'nd' : 'th'} 503 answer → withdrawal UPDATE`, own));
    console.log(summary(`200 → re-announcement UPDATE (rise ${rise})`, back));
    console.log(`expected switch → withdrawal: U(0, 1)·interval + ${fall - 1}·interval (±10 % jitter) ≈ ${((fall - 0.5) * intervalSec).toFixed(1)} s mean`);
    console.log(JSON.stringify({ bench: 'health-flips', flips: nFlips, intervalSec, fall, rise, totalMs: { p50: pct([...total].sort((a, b) => a - b), 50), p99: pct([...total].sort((a, b) => a - b), 99) }, heraldOwnMs: { n: own.length, p50: pct([...own].sort((a, b) => a - b), 50), p99: pct([...own].sort((a, b) => a - b), 99) } }));
  } finally {
    await stop();
  }
}

async function load(): Promise<void> {
  const checks = envNum('LOAD_CHECKS', 10_000);
  if (checks === 0) return;
  const args = ['bench/health-checks.ts', '--checks', String(checks), '--interval', String(envNum('LOAD_INTERVAL', 5)), '--duration', String(envNum('LOAD_DURATION', 30))];
  console.log(`\n${checks} active checks: node ${args.join(' ')}`);
  const child = spawn(process.execPath, args, { cwd: ROOT, stdio: 'inherit' });
  const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
  if (code !== 0) throw new Error(`bench/health-checks.ts exited with ${code}`);
}

console.log(`loadavg ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}, ${os.cpus().length} CPUs, node ${process.version}`);
await flips();
await load();
console.log(`loadavg at the end ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
