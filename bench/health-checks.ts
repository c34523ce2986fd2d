/**
 * Benchmark (not a test): N active kube-proxy service health checks against fake kube-proxy servers
 * on 127.0.0.x, measuring the checking process's event-loop delay and CPU over a window.
 *
 * The fake servers run in a child process (same script, `--servers-child`) so that their work is not
 * counted. Usage:
 *   npx node bench/health-checks.ts [--checks 10000] [--interval 5] [--duration 30] [--servers 100]
 *                                    [--concurrency 64] [--timeout 2]
 * Prints one JSON line of figures at the end (and a human summary before it).
 */
import { spawn } from 'node:child_process';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import os from 'node:os';
import readline from 'node:readline';
import { HealthManager } from '../src/health/manager.ts';
import { kubeProxyServiceCheck } from '../src/health/specs.ts';
import { startFakeKubeProxy } from '../test/helpers/fake-kube-proxy.ts';

const RESOLUTION_MS = 10;

function arg(name: string, def: number): number {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0) return def;
  const v = Number(process.argv[i + 1]);
  if (!Number.isFinite(v) || v <= 0) throw new Error(`--${name} needs a positive number`);
  return v;
}

async function serversChild(): Promise<void> {
  const n = arg('servers', 100);
  const servers: Array<Awaited<ReturnType<typeof startFakeKubeProxy>>> = [];
  for (let i = 0; i < n; i++) servers.push(await startFakeKubeProxy({ host: `127.0.0.${2 + (i % 250)}` }));
  process.stdout.write(`${JSON.stringify(servers.map((s) => ({ host: s.host, port: s.port })))}\n`);
  const stop = async () => {
    const total = servers.reduce((a, s) => a + s.requests, 0);
    await Promise.all(servers.map((s) => s.close()));
    process.stderr.write(`fake kube-proxy servers answered ${total} requests\n`);
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop());
  process.stdin.on('end', () => void stop()); // parent gone
  process.stdin.resume();
}

async function main(): Promise<void> {
  const checks = arg('checks', 10_000);
  const intervalSec = arg('interval', 5);
  const durationSec = arg('duration', 30);
  const concurrency = arg('concurrency', 64);
  const timeoutSec = arg('timeout', 2);
  const nServers = arg('servers', 100);

  const child = spawn(process.execPath, [process.argv[1] as string, '--servers-child', '--servers', String(nServers)], { stdio: ['pipe', 'pipe', 'inherit'] });
  const rl = readline.createInterface({ input: child.stdout });
  const first = await new Promise<string>((resolve, reject) => {
    rl.once('line', resolve);
    child.once('exit', (code) => reject(new Error(`server child exited with ${code}`)));
  });
  const servers = JSON.parse(first) as Array<{ host: string; port: number }>;

  const hm = new HealthManager({ maxConcurrent: concurrency });
  const specs = [];
  for (let i = 0; i < checks; i++) {
    const s = servers[i % servers.length] as { host: string; port: number };
    specs.push(kubeProxyServiceCheck({ gate: `vip-${i}`, nodeIP: s.host, healthCheckNodePort: s.port, timing: { intervalSec, timeoutSec, rise: 2, fall: 3 } }));
  }
  hm.setChecks(specs);
  const countProbes = () => {
    const s = hm.stats();
    return { probes: s.probesTotal, failures: s.probeFailuresTotal };
  };

  // Warm-up: one interval, so every check has started.
  await new Promise((r) => setTimeout(r, intervalSec * 1000 + 500));
  const h = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  const before = countProbes();
  const cpu0 = process.cpuUsage();
  const rss0 = process.memoryUsage().rss;
  const t0 = performance.now();
  let maxWaiting = 0;
  h.enable();
  const sampler = setInterval(() => {
    maxWaiting = Math.max(maxWaiting, hm.stats().waiting);
  }, 2000);
  await new Promise((r) => setTimeout(r, durationSec * 1000));
  h.disable();
  clearInterval(sampler);
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const rss1 = process.memoryUsage().rss;
  const after = countProbes();
  const st = hm.status();
  const up = hm.stats().up;
  const codes: Record<string, number> = {};
  for (const c of st.checks) if (c.lastFailure?.code) codes[c.lastFailure.code] = (codes[c.lastFailure.code] ?? 0) + 1;
  await hm.close();
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));

  // The histogram records the delay of a repeating timer of `resolution` ms; subtract it to get lag.
  const ms = (ns: number) => Math.round(Math.max(0, ns / 1e6 - RESOLUTION_MS) * 100) / 100;
  const probes = after.probes - before.probes;
  const fig = {
    node: process.version,
    checks,
    intervalSec,
    timeoutSec,
    concurrency,
    servers: servers.length,
    windowSec: Math.round(wallMs / 100) / 10,
    probesPerSec: Math.round((probes / wallMs) * 1000),
    expectedPerSec: Math.round(checks / intervalSec),
    failuresInWindow: after.failures - before.failures,
    checksUp: up,
    lastFailureCodes: codes,
    maxSemaphoreWaiting: maxWaiting,
    rssMiB: { start: Math.round(rss0 / 2 ** 20), end: Math.round(rss1 / 2 ** 20) },
    loadAverage1m: Math.round((os.loadavg()[0] ?? 0) * 10) / 10,
    cpuPercent: Math.round(((cpu.user + cpu.system) / 1000 / wallMs) * 1000) / 10,
    eventLoopDelayMs: { p50: ms(h.percentile(50)), p99: ms(h.percentile(99)), max: ms(h.max), mean: ms(h.mean) },
  };
  console.log(
    `${checks} checks every ${intervalSec} s (timeout ${timeoutSec} s, ${concurrency} concurrent): ${fig.probesPerSec} probes/s ` +
      `(expected ${fig.expectedPerSec}), CPU ${fig.cpuPercent} % of one core, event-loop delay p50 ${fig.eventLoopDelayMs.p50} ms, ` +
      `p99 ${fig.eventLoopDelayMs.p99} ms, max ${fig.eventLoopDelayMs.max} ms; ${up}/${checks} up, ${fig.failuresInWindow} failed probes in window`,
  );
  console.log(JSON.stringify(fig));
}

if (process.argv.includes('--servers-child')) await serversChild();
else await main();
