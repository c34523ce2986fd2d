// The metrics-only listener through fastify inject: GET/HEAD /metrics, 404 elsewhere, 405 for other methods, 500 when
// the exposition fails (over HTTP on a node address: test/src/daemon/run.test.ts).
import t from 'tap';
import { buildMetricsServer } from '../../../src/metrics/server.ts';
import { HeraldMetrics } from '../../../src/metrics/metrics.ts';

t.test('serves the registry on /metrics and nothing else', async (t) => {
  const m = new HeraldMetrics({ version: '1.2.3', defaultMetrics: false });
  const app = await buildMetricsServer({ text: () => m.text() });
  t.teardown(() => app.close());
  const ok = await app.inject({ method: 'GET', url: '/metrics' });
  t.equal(ok.statusCode, 200);
  t.match(ok.headers['content-type'], /^text\/plain; version=0\.0\.4/);
  t.match(ok.body, /^herald_build_info\{version="1\.2\.3"\} 1$/m);
  t.equal((await app.inject({ method: 'GET', url: '/metrics?x=1' })).statusCode, 200, 'a query string is ignored');
  t.equal((await app.inject({ method: 'HEAD', url: '/metrics' })).statusCode, 200);
  const missing = await app.inject({ method: 'GET', url: '/api/v1/status' });
  t.equal(missing.statusCode, 404);
  t.same(missing.json(), { statusCode: 404, error: 'Not Found', message: 'no such endpoint: GET /api/v1/status (this listener serves only GET /metrics; the admin API is on its own address, docs/admin-api.md)' });
  const post = await app.inject({ method: 'POST', url: '/metrics', payload: {} });
  t.equal(post.statusCode, 405);
  t.equal(post.headers['allow'], 'GET, HEAD');
});

t.test('a failing exposition answers 500 with the cause', async (t) => {
  const app = await buildMetricsServer({ text: () => Promise.reject(new Error('collector threw')) });
  t.teardown(() => app.close());
  const r = await app.inject({ method: 'GET', url: '/metrics' });
  t.equal(r.statusCode, 500);
  t.same(r.json(), { statusCode: 500, error: 'Internal Server Error', message: 'cannot produce the metrics: collector threw' });
});

// Issue 35 N5: the listener is reachable from the network and shares the main thread with the health checks.
t.test('the exposition is rendered at most once per interval; concurrent scrapes share one render', async (t) => {
  let now = 0;
  let renders = 0;
  const app = await buildMetricsServer({
    text: async () => ({ contentType: 'text/plain; version=0.0.4', body: `render ${++renders}\n` }),
    now: () => now,
    ratePerSec: 1000,
    burst: 1000,
  });
  t.teardown(() => app.close());
  const bodies = await Promise.all(Array.from({ length: 20 }, () => app.inject({ method: 'GET', url: '/metrics' }).then((r) => r.body)));
  t.same(new Set(bodies), new Set(['render 1\n']), '20 concurrent scrapes: one render');
  now = 999;
  t.equal((await app.inject({ method: 'GET', url: '/metrics' })).body, 'render 1\n', 'within the interval: the cached text');
  now = 1000;
  t.equal((await app.inject({ method: 'GET', url: '/metrics' })).body, 'render 2\n', 'after it: rendered again');
  t.equal(renders, 2);
});

t.test('a failed render is not cached', async (t) => {
  let fail = true;
  const app = await buildMetricsServer({ text: async () => (fail ? Promise.reject(new Error('boom')) : { contentType: 'text/plain', body: 'ok\n' }), now: () => 0 });
  t.teardown(() => app.close());
  t.equal((await app.inject({ method: 'GET', url: '/metrics' })).statusCode, 500);
  fail = false;
  t.equal((await app.inject({ method: 'GET', url: '/metrics' })).body, 'ok\n');
});

t.test('requests beyond the rate are 429 with Retry-After, counted', async (t) => {
  let now = 0;
  const refused: string[] = [];
  const app = await buildMetricsServer({ text: async () => ({ contentType: 'text/plain', body: 'x\n' }), now: () => now, ratePerSec: 10, burst: 20, onRefused: (r) => refused.push(r) });
  t.teardown(() => app.close());
  const codes: number[] = [];
  for (let i = 0; i < 25; i++) codes.push((await app.inject({ method: 'GET', url: i % 2 ? '/metrics' : '/nope' })).statusCode);
  t.equal(codes.filter((c) => c === 429).length, 5, 'the burst of 20 is served (404s count too), 5 refused');
  const r = await app.inject({ method: 'GET', url: '/metrics' });
  t.equal(r.statusCode, 429);
  t.equal(r.headers['retry-after'], '1');
  t.match(r.json(), { statusCode: 429, error: 'Too Many Requests', message: /too many requests/ });
  now = 200;
  t.equal((await app.inject({ method: 'GET', url: '/metrics' })).statusCode, 200, '0.2 s later: two more');
  t.same(refused, Array(6).fill('rate'));
});

t.test('connections beyond the cap are closed at once; an idle connection is closed', async (t) => {
  const { connect } = await import('node:net');
  const refused: string[] = [];
  const app = await buildMetricsServer({ text: async () => ({ contentType: 'text/plain', body: 'x\n' }), maxConnections: 3, idleTimeoutMs: 300, onRefused: (r) => refused.push(r) });
  t.teardown(() => app.close());
  await app.listen({ host: '127.0.0.1', port: 0 });
  const port = (app.server.address() as { port: number }).port;
  const open = (): Promise<{ closedAfterMs: Promise<number> }> =>
    new Promise((resolve, reject) => {
      const t0 = performance.now();
      const s = connect(port, '127.0.0.1', () => resolve({ closedAfterMs: new Promise((r) => s.on('close', () => r(performance.now() - t0))) }));
      s.on('error', reject);
    });
  const held = [await open(), await open(), await open()];
  const fourth = await open();
  t.ok((await fourth.closedAfterMs) < 250, 'the fourth connection is closed at once');
  t.same(refused, ['connections']);
  const idle = await Promise.all(held.map((h) => h.closedAfterMs));
  t.ok(idle.every((ms) => ms >= 250 && ms < 5000), `idle connections closed after the idle timeout (${idle.map((x) => Math.round(x)).join(', ')} ms)`);
});

t.test("with views: the node's peers and Services read-only beside the metrics (what --all-nodes asks through the pod proxy), rendered at most once per interval", async (t) => {
  let now = 0;
  let reads = 0;
  let serviceReads = 0;
  const services = [{ service: 'default/web', vips: [], reasons: [] }];
  const app = await buildMetricsServer({
    text: async () => ({ contentType: 'text/plain', body: 'x\n' }),
    now: () => now,
    views: {
      peers: () => {
        reads++;
        return [{ name: 'tor', state: 'Established' }];
      },
      services: () => {
        serviceReads++;
        return services;
      },
    },
  });
  t.teardown(() => app.close());
  const peers = await app.inject({ method: 'GET', url: '/api/v1/peers' });
  t.equal(peers.statusCode, 200);
  t.match(peers.headers['content-type'], /^application\/json/);
  t.same(peers.json(), [{ name: 'tor', state: 'Established' }]);
  await app.inject({ method: 'GET', url: '/api/v1/peers' });
  t.equal(reads, 1, 'a second ask within the interval is served from the same render');
  now = 2000;
  await app.inject({ method: 'GET', url: '/api/v1/peers' });
  t.equal(reads, 2);
  t.same((await app.inject({ method: 'GET', url: '/api/v1/services' })).json(), services);
  t.same((await app.inject({ method: 'GET', url: '/api/v1/services/default/web' })).json(), services[0]);
  const missing = await app.inject({ method: 'GET', url: '/api/v1/services/default/none' });
  t.equal(missing.statusCode, 404);
  t.match(missing.json(), { statusCode: 404, message: /no Service default\/none/ });
  t.equal(serviceReads, 1, 'the list and each single Service within the interval come from one render of the Services');
  now = 4000;
  await app.inject({ method: 'GET', url: '/api/v1/services/default/web' });
  t.equal(serviceReads, 2, 'rendered again once the interval has passed');
  const post = await app.inject({ method: 'POST', url: '/api/v1/peers' });
  t.equal(post.statusCode, 405, 'read-only: no other method');
  t.equal((await app.inject({ method: 'POST', url: '/api/v1/peers/tor/reset' })).statusCode, 404, 'nothing of the admin API beyond the views');
  t.equal((await app.inject({ method: 'GET', url: '/api/v1/routes' })).statusCode, 404);
  const bare = await buildMetricsServer({ text: async () => ({ contentType: 'text/plain', body: 'x\n' }) });
  t.teardown(() => bare.close());
  t.equal((await bare.inject({ method: 'GET', url: '/api/v1/peers' })).statusCode, 404, 'without views: the metrics only');
});
