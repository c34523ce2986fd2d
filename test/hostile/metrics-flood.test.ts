// Issue 35 N5: the unauthenticated metrics port could move routes. 100 connections pipelining GET /metrics lagged the
// main thread 5 s, health probes timed out and a VIP was withdrawn for ~8 s; 20,000 idle connections took RSS to
// 341 MB. Here the same flood (plus reconnects and idle connections) hits `herald run` as the DaemonSet runs it, while
// a static route is gated by a health check probing every second (timeout 0.9 s, fall 2): BIRD keeps the route
// throughout, no probe fails, and the refusals are counted. (No assertion on latency: this machine is shared.)
import t from 'tap';
import { connect, createServer } from 'node:net';
import type { Socket } from 'node:net';
import { freePort } from '../helpers/bird.ts';
import { skipUnless } from '../helpers/prereq.ts';
import { birdAvailable } from '../helpers/bird.ts';
import { sleep, startHostileHerald } from './harness.ts';

t.setTimeout(240_000);
const PREFIX = '198.51.100.40/32';

t.test('a scrape flood on the metrics port moves no route', { skip: skipUnless({ bird2: birdAvailable() }) }, async (t) => {
  const target = createServer((s) => s.on('error', () => undefined));
  await new Promise<void>((r) => target.listen(0, '127.0.0.1', r));
  t.teardown(() => target.close());
  const targetPort = (target.address() as { port: number }).port;
  const metricsPort = await freePort('127.0.0.1');
  const h = await startHostileHerald(t, {
    bird: true,
    config: ({ nodeIp }) => ({
      metrics: { address: nodeIp, port: metricsPort },
      healthChecks: { interval: 1, timeout: 0.9, fall: 2, rise: 1 },
      routes: [{ prefix: PREFIX, healthCheck: { kind: 'tcp', host: '127.0.0.1', port: targetPort } }],
    }),
  });
  await h.waitFor(() => h.birdHas(PREFIX), 'the gated static route in BIRD');

  const deadline = Date.now() + 8000;
  const sockets = new Set<Socket>();
  let responses = 0;
  const request = 'GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n'.repeat(100);
  const client = (): void => {
    if (Date.now() > deadline) return;
    const s = connect(metricsPort, h.nodeIp);
    sockets.add(s);
    s.on('connect', () => s.write(request));
    s.on('data', (d: Buffer) => {
      responses += d.toString('latin1').split('HTTP/1.1 ').length - 1;
      if (Date.now() < deadline && s.writable) s.write(request);
    });
    s.on('error', () => undefined);
    s.on('close', () => {
      sockets.delete(s);
      setImmediate(client);
    });
  };
  for (let i = 0; i < 100; i++) client();
  // and idle connections that never send a request
  const idle: Socket[] = [];
  for (let i = 0; i < 300; i++) {
    const s = connect(metricsPort, h.nodeIp);
    s.on('error', () => undefined);
    idle.push(s);
  }
  t.teardown(() => {
    for (const s of [...sockets, ...idle]) s.destroy();
  });

  let samples = 0;
  let missing = 0;
  let slowest = 0;
  while (Date.now() < deadline) {
    const t0 = performance.now();
    await h.healthy();
    slowest = Math.max(slowest, performance.now() - t0);
    if (!(await h.birdHas(PREFIX))) missing++;
    samples++;
    await sleep(200);
  }
  for (const s of [...sockets, ...idle]) s.destroy();
  t.comment(`${responses} responses during the flood; /healthz at most ${slowest.toFixed(0)} ms; ${samples} samples of BIRD`);
  t.equal(missing, 0, `BIRD held the route in each of ${samples} samples during the flood`);
  const health = (await h.get<{ gate: string; state: string; consecutiveFailures?: number }[]>('/api/v1/health')).body.find((c) => c.gate === `route:${PREFIX}`);
  t.equal(health?.state, 'up', 'the gating check stayed up');
  const metrics = await h.metrics();
  t.notMatch(metrics, /^herald_health_check_results_total\{result="(?!ok)[^"]*"\} [1-9]/m, 'no probe failed or timed out');
  t.match(metrics, /^herald_health_check_results_total\{result="ok"\} [1-9]/m, 'probes ran');
  t.match(metrics, /^herald_metrics_refused_total\{reason="rate"\} [1-9]/m, 'scrapes over the rate were refused and counted');
  t.match(metrics, /^herald_metrics_refused_total\{reason="connections"\} [1-9]/m, 'connections over the cap were refused and counted');
  const flaps = h.logLines().filter((l) => /withdraw/i.test(String(l['msg'])) && JSON.stringify(l).includes(PREFIX));
  t.same(flaps, [], 'no withdrawal logged');
  h.assertContained(t, 'after the flood');
});
