/**
 * bench/bfd.ts — benchmark (not a test): BFD detection time and CPU cost.
 *
 * 1. Detection time. A real BIRD 2 (`protocol bfd`, `bfd on` on its BGP session, multihop on loopback) learns one
 *    route from a Herald Speaker child (test/helpers/speaker-child.ts) with BFD at INTERVAL ms × 3. Each run:
 *    SIGSTOP the child (t0, wall clock), read BIRD's own trace for the time it removed the route (BIRD logs with
 *    millisecond wall-clock stamps; no polling error), SIGCONT, wait until BFD, BGP and the route are back.
 *    Printed per interval: p50 / p99 / max of t0 → route removed, against the 3 × interval bound and the 90 s
 *    hold time. Runs at 100 ms and 300 ms (RUNS each).
 * 2. CPU per session. A child process runs the BFD worker (bgp/bfd/handle.ts) with SESSIONS sessions at 50 ms × 3
 *    to SESSIONS multihop neighbours of one BIRD (distinct loopback addresses, since BIRD keys sessions by our
 *    address). Once all are Up at 50 ms, the child's CPU time (process.cpuUsage: every thread) over DURATION s.
 *    Printed: % of one core in total and per session, µs of CPU per packet (sent + received).
 *
 * Takes the host BFD lock of test/helpers/bfd.ts (one wildcard-bound BFD daemon at a time).
 *
 * Usage: node bench/bfd.ts   (env: RUNS=50, INTERVALS=100,300, SESSIONS=32, DURATION=30; RUNS=0 or SESSIONS=0
 *        skips a part; PROFILE=DIR writes the CPU child's .cpuprofile files, one per thread). Needs bird2. Run alone on the machine: BIRD's BFD sockets bind the wildcard address.
 */
import { spawn } from 'node:child_process';
import os from 'node:os';
import { createInterface } from 'node:readline';
import { Bird, bgpProtocol, freePort, loopbackPair } from '../test/helpers/bird.ts';
import { hostBfdLock, parseBfdSessions } from '../test/helpers/bfd.ts';
import { SpeakerChild } from '../test/helpers/speaker-child.ts';
import { BfdHandle } from '../bgp/bfd/handle.ts';
import type { BfdPeerConfig } from '../bgp/bfd/engine.ts';

const RUNS = Number(process.env['RUNS'] ?? 50);
const INTERVALS = (process.env['INTERVALS'] ?? '100,300').split(',').map(Number);
const SESSIONS = Number(process.env['SESSIONS'] ?? 32);
const DURATION = Number(process.env['DURATION'] ?? 30);
const PREFIX = '10.125.0.0/24';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

/** Wall-clock ms of the first BIRD log line after `fromLine` matching `re` ("YYYY-MM-DD HH:MM:SS.mmm", local time). */
function logTime(bird: Bird, fromLine: number, re: RegExp): number | undefined {
  const lines = bird.log().split('\n').slice(fromLine);
  const line = lines.find((l) => re.test(l));
  const m = line && /^(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d\.\d{3})/.exec(line);
  return m ? new Date(`${m[1]}T${m[2]}`).getTime() : undefined;
}

async function detection(intervalMs: number): Promise<void> {
  const addr = loopbackPair();
  const birdPort = await freePort(addr.bird);
  const bird = await Bird.start(
    `protocol bfd {\n  multihop { interval ${intervalMs} ms; multiplier 3; };\n}\n` +
      bgpProtocol({
        name: 'herald', local: addr.bird, localPort: birdPort, localAs: 65002, neighbor: addr.ours, neighborPort: 179, neighborAs: 65001, passive: true, families: ['ipv4'],
        extra: '  bfd on;\n  error wait time 1, 1;\n  debug { states, routes, events };',
      }),
  );
  const child = await SpeakerChild.start({
    speaker: { localAs: 65001, bgpIdentifier: '10.0.0.1' },
    peers: [{ name: 'bird', address: addr.bird, port: birdPort, peerAs: 65002, localAddress: addr.ours, connectRetryTimeSec: 1, families: ['ipv4-unicast'], bfd: { transmitIntervalMs: intervalMs, receiveIntervalMs: intervalMs, detectMultiplier: 3, multihop: true } }],
    routes: [{ prefix: PREFIX, family: 'ipv4-unicast' }],
    markInitialSyncDone: true,
  });
  const pid = child.pid;
  if (pid === undefined) throw new Error('no child pid');
  const ready = async () => {
    const s = parseBfdSessions(await bird.birdc('show bfd sessions')).find((x) => x.address === addr.ours);
    if (s?.state !== 'Up' || Math.abs(s.timeoutSec - (3 * intervalMs) / 1000) > 0.0005) return false;
    const p = await bird.protocol('herald');
    return p?.bgpState === 'Established' && (await bird.routes('protocol herald')).some((r) => r.prefix === PREFIX);
  };
  const samples: number[] = [];
  try {
    for (let run = 0; run < RUNS; run++) {
      await bird.waitFor(ready, 'BFD Up at the interval, BGP Established, route present', 60_000, 50);
      await sleep(200 + Math.random() * intervalMs); // a random phase against both sides' timers
      const fromLine = bird.log().split('\n').length - 1;
      const t0 = Date.now();
      process.kill(pid, 'SIGSTOP');
      try {
        await bird.waitFor(async () => logTime(bird, fromLine, new RegExp(`removed .*${PREFIX.replace(/[./]/g, '\\$&')}`)), 'BIRD removing the route', 30_000, 20);
      } finally {
        process.kill(pid, 'SIGCONT');
      }
      const removedAt = logTime(bird, fromLine, new RegExp(`removed .*${PREFIX.replace(/[./]/g, '\\$&')}`)) ?? NaN;
      samples.push(removedAt - t0);
    }
  } finally {
    child.kill('SIGKILL');
    await bird.stop();
  }
  samples.sort((a, b) => a - b);
  const f = (v: number) => `${v.toFixed(0)} ms`;
  console.log(
    `detection ${intervalMs} ms × 3 (bound ${3 * intervalMs} ms, hold time 90 s), ${samples.length} runs: SIGSTOP → BIRD removed the route ` +
      `p50 ${f(percentile(samples, 50))}, p99 ${f(percentile(samples, 99))}, min ${f(samples[0] ?? NaN)}, max ${f(samples.at(-1) ?? NaN)}`,
  );
}

// --- CPU: the child side ---

async function cpuChild(): Promise<void> {
  const cfgs = JSON.parse(process.argv[3] ?? '[]') as BfdPeerConfig[];
  const h = BfdHandle.start();
  for (const [i, c] of cfgs.entries()) await h.add(`s${i}`, c);
  const out = (o: unknown) => process.stdout.write(JSON.stringify(o) + '\n');
  out({ ready: true });
  const rl = createInterface({ input: process.stdin });
  rl.on('line', (line) => {
    void (async () => {
      const cmd = line.trim();
      if (cmd === 'status') {
        const s = await h.status();
        const u = process.cpuUsage();
        const sessions = Object.values(s.sessions);
        out({ cpuMs: (u.user + u.system) / 1000, up: sessions.filter((x) => x.state === 'Up' && x.transmitIntervalMs === 50).length, packets: sessions.reduce((n, x) => n + x.packetsSent + x.packetsReceived, 0) });
      } else if (cmd === 'exit') {
        await h.close();
        process.exit(0);
      }
    })();
  });
}

async function cpu(): Promise<void> {
  const n = SESSIONS;
  const p = (process.pid * 11) % 200;
  const ours = (i: number) => `127.201.${p}.${i + 1}`;
  const birds = (i: number) => `127.202.${p}.${i + 1}`;
  const neighbors = Array.from({ length: n }, (_, i) => `  neighbor ${ours(i)} local ${birds(i)} multihop on;`).join('\n');
  const bird = await Bird.start(`protocol bfd {\n  multihop { interval 50 ms; multiplier 3; };\n${neighbors}\n}\n`);
  const cfgs: BfdPeerConfig[] = Array.from({ length: n }, (_, i) => ({ remoteAddress: birds(i), localAddress: ours(i), multihop: true, transmitIntervalMs: 50, receiveIntervalMs: 50, detectMultiplier: 3, passive: false }));
  const child = spawn(process.execPath, [...(process.env['PROFILE'] ? ['--cpu-prof', `--cpu-prof-dir=${process.env['PROFILE']}`] : []), import.meta.filename, '--cpu-child', JSON.stringify(cfgs)], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines: Record<string, number | boolean>[] = [];
  createInterface({ input: child.stdout }).on('line', (l) => lines.push(JSON.parse(l) as Record<string, number | boolean>));
  const next = async (cmd?: string) => {
    const k = lines.length;
    if (cmd) child.stdin.write(cmd + '\n');
    for (let i = 0; i < 600 && lines.length === k; i++) await sleep(50);
    const v = lines[k];
    if (!v) throw new Error('cpu child did not answer');
    return v;
  };
  try {
    await next();
    const deadline = Date.now() + 60_000;
    let s = await next('status');
    while (s['up'] !== n && Date.now() < deadline) {
      await sleep(500);
      s = await next('status');
    }
    if (s['up'] !== n) throw new Error(`only ${String(s['up'])} of ${n} sessions Up at 50 ms`);
    await sleep(2000);
    const a = await next('status');
    const t0 = Date.now();
    await sleep(DURATION * 1000);
    const b = await next('status');
    const wallMs = Date.now() - t0;
    const cpuMs = Number(b['cpuMs']) - Number(a['cpuMs']);
    const packets = Number(b['packets']) - Number(a['packets']);
    const birdUp = parseBfdSessions(await bird.birdc('show bfd sessions')).filter((x) => x.state === 'Up').length;
    console.log(
      `CPU, ${n} sessions at 50 ms × 3 for ${(wallMs / 1000).toFixed(0)} s (Up at the end: Herald ${String(b['up'])}, BIRD ${birdUp}; load ${os.loadavg()[0]?.toFixed(1)}): ${((100 * cpuMs) / wallMs).toFixed(2)} % of one core in total, ` +
        `${((100 * cpuMs) / wallMs / n).toFixed(3)} % per session; ${packets} packets (${(packets / (wallMs / 1000)).toFixed(0)}/s), ${((1000 * cpuMs) / packets).toFixed(1)} µs CPU per packet (sent + received), process-wide incl. the idle main thread`,
    );
  } finally {
    child.stdin.write('exit\n');
    setTimeout(() => child.kill('SIGKILL'), 3000).unref();
    await bird.stop();
  }
}

if (process.argv[2] === '--cpu-child') {
  void cpuChild();
} else {
  await hostBfdLock({ teardown: () => undefined }); // released at exit
  if (RUNS > 0) for (const ms of INTERVALS) await detection(ms);
  if (SESSIONS > 0) await cpu();
  process.exit(0);
}
