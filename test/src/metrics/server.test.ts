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
