// Admin API via fastify inject: every endpoint, every error path, token enforcement, OpenAPI.
import t from 'tap';
import type { Test } from 'tap';
import { buildAdminServer, openApiDocument, ROUTES } from '../../../src/admin/server.ts';
import { FakeView, HEALTH, PEERS, ROUTES as ROUTE_VIEWS, SERVICES } from './fake-view.ts';

const TOKEN = 's3cret-token';

async function setup(t: Test, token: string | null = TOKEN) {
  const view = new FakeView();
  const app = await buildAdminServer({ view, token: () => token ?? undefined });
  t.teardown(() => app.close());
  return { view, app };
}
const auth = { authorization: `Bearer ${TOKEN}` };

t.test('read endpoints', async (t) => {
  const { app, view } = await setup(t);
  let r = await app.inject({ url: '/healthz' });
  t.equal(r.statusCode, 200);
  t.same(r.json(), { ok: true });
  r = await app.inject({ url: '/readyz' });
  t.equal(r.statusCode, 200);
  view.ready = false;
  r = await app.inject({ url: '/readyz' });
  t.equal(r.statusCode, 503);
  t.same(r.json(), { ok: false, reasons: ['kubernetes source not synced'] });
  r = await app.inject({ url: '/api/v1/status' });
  t.equal(r.statusCode, 200);
  t.match(r.json(), { node: 'node-a', localAs: 64512, ready: false, peers: { configured: 2, established: 1 } });
  r = await app.inject({ url: '/api/v1/peers' });
  t.equal(r.statusCode, 200);
  t.same(r.json(), PEERS, 'peers round-trip through the response schema unchanged');
  r = await app.inject({ url: '/api/v1/peers/tor-b' });
  t.same(r.json(), PEERS[1]);
  r = await app.inject({ url: '/api/v1/routes' });
  t.same(r.json(), ROUTE_VIEWS, 'routes round-trip through the response schema unchanged (extended communities included)');
  t.same(r.json()[0].communities, ['64512:100']);
  r = await app.inject({ url: '/api/v1/routes?peer=tor-a&prefix=198.51.100.20/32' });
  t.same(r.json().map((x: { prefix: string }) => x.prefix), ['198.51.100.20/32']);
  r = await app.inject({ url: '/api/v1/services' });
  t.same(r.json(), SERVICES, 'services round-trip unchanged (steering attributes included)');
  r = await app.inject({ url: '/api/v1/services/shop/cart' });
  t.same(r.json(), SERVICES[1]);
  r = await app.inject({ url: '/api/v1/health' });
  t.same(r.json(), HEALTH);
  r = await app.inject({ url: '/metrics' });
  t.equal(r.statusCode, 200);
  t.match(r.headers['content-type'], /text\/plain/);
  t.match(r.body, /herald_up 1/);
});

t.test('/readyz lists refused input beside the reasons, without affecting readiness; the status carries it', async (t) => {
  const { app, view } = await setup(t);
  view.refused = [{ kind: 'file', name: '/m/web.yaml', line: 12, reason: 'document not usable' }, { kind: 'BGPPeer', name: 'tor-dup', reason: 'spec.peerAddress: already used' }];
  const r = await app.inject({ url: '/readyz' });
  t.equal(r.statusCode, 200);
  t.same(r.json(), { ok: true, reasons: [], refused: ['file /m/web.yaml:12: document not usable', 'BGPPeer tor-dup: spec.peerAddress: already used'] });
  t.same((await app.inject({ url: '/api/v1/status' })).json().refused, view.refused, 'the status round-trips through its schema');
});

t.test('404s are JSON', async (t) => {
  const { app } = await setup(t);
  for (const url of ['/nope', '/api/v1/peers/zz', '/api/v1/services/a/b', '/api/v1/routes?peer=zz']) {
    const r = await app.inject({ url });
    t.equal(r.statusCode, 404, url);
    t.match(r.headers['content-type'], /application\/json/);
    t.match(r.json(), { statusCode: 404, error: 'Not Found', message: /./ }, url);
  }
  const r = await app.inject({ method: 'POST', url: '/api/v1/peers/zz/reset', headers: auth, payload: {} });
  t.equal(r.statusCode, 404);
  t.match(r.json().message, /no peer named "zz"/);
  const d = await app.inject({ method: 'DELETE', url: '/api/v1/nope' });
  t.equal(d.statusCode, 404);
});

t.test('wrong method on a known path is 405 with Allow', async (t) => {
  const { app, view } = await setup(t);
  let r = await app.inject({ method: 'DELETE', url: '/api/v1/peers' });
  t.equal(r.statusCode, 405);
  t.equal(r.headers['allow'], 'GET, HEAD');
  t.match(r.json(), { statusCode: 405, error: 'Method Not Allowed', message: /DELETE not allowed on \/api\/v1\/peers/ });
  r = await app.inject({ method: 'GET', url: '/api/v1/drain' });
  t.equal(r.statusCode, 405);
  t.equal(r.headers['allow'], 'POST');
  r = await app.inject({ method: 'PUT', url: '/api/v1/peers/tor-a/reset', headers: auth });
  t.equal(r.statusCode, 405);
  t.equal(r.headers['allow'], 'POST');
  t.same(view.actions, []);
});

t.test('routes ?prefix= must be an address or a CIDR prefix', async (t) => {
  const { app } = await setup(t);
  // fe80::1%eth0/64 (issue 35: answered 200 [] before): no route has a zone id.
  for (const bad of ['garbage', '10.1.0.0/24/5', '10.1.0.0/33', '10.1.0.0/x', '10.1.0.0/', '2001:db8::/129', '', 'fe80::1%eth0/64', 'fe80::1%eth0']) {
    const r = await app.inject({ url: `/api/v1/routes?prefix=${encodeURIComponent(bad)}` });
    t.equal(r.statusCode, 400, `"${bad}"`);
    t.match(r.json(), { statusCode: 400, error: 'Bad Request', message: /invalid prefix filter/ }, bad);
  }
  for (const good of ['198.51.100.20/32', '198.51.100.20', '0.0.0.0/0', '2001:db8::/32', '2001:db8::1']) {
    const r = await app.inject({ url: `/api/v1/routes?prefix=${encodeURIComponent(good)}` });
    t.equal(r.statusCode, 200, good);
  }
});

t.test('soft reset of a peer that is not Established is 409', async (t) => {
  const { app, view } = await setup(t);
  let r = await app.inject({ method: 'POST', url: '/api/v1/peers/tor-b/reset', headers: auth, payload: { soft: true } });
  t.equal(r.statusCode, 409);
  t.match(r.json(), { statusCode: 409, error: 'Conflict', message: /tor-b is Active, not Established/ });
  t.same(view.actions, [], 'nothing was done');
  r = await app.inject({ method: 'POST', url: '/api/v1/peers/tor-b/reset', headers: auth, payload: { soft: false } });
  t.equal(r.statusCode, 200, 'a hard reset of a down peer is fine');
  t.same(view.actions, ['reset tor-b hard']);
});

t.test('non-object JSON bodies are 400; too-large bodies are 413 with a message', async (t) => {
  const { app, view } = await setup(t);
  for (const payload of ['null', '[]', '"x"', '3', 'true']) {
    const r = await app.inject({ method: 'POST', url: '/api/v1/peers/tor-a/reset', headers: { ...auth, 'content-type': 'application/json' }, payload });
    t.equal(r.statusCode, 400, payload);
    t.match(r.json().message, /body must be a JSON object/, payload);
  }
  t.same(view.actions, []);
  const r = await app.inject({ method: 'POST', url: '/api/v1/drain', headers: { ...auth, 'content-type': 'application/json' }, payload: JSON.stringify({ pad: 'x'.repeat(70000) }) });
  t.equal(r.statusCode, 413);
  t.match(r.json(), { statusCode: 413, error: 'Payload Too Large', message: /request body too large: the limit is 65536 bytes/ });
  t.same(view.actions, []);
});

// Issue 35: a bad body was answered 400 before a missing token's 401 (the body was parsed first), and a text/plain
// body 400 instead of 415.
t.test('the token is checked before the body is read; another content type is 415', async (t) => {
  const { app, view } = await setup(t);
  for (const [payload, type] of [['{nope', 'application/json'], ['null', 'application/json'], ['soft=true', 'text/plain'], ['x'.repeat(70000), 'application/json']] as const) {
    const r = await app.inject({ method: 'POST', url: '/api/v1/peers/tor-a/reset', headers: { 'content-type': type }, payload });
    t.equal(r.statusCode, 401, `${type} ${payload.slice(0, 10)} without a token: 401, not a body error`);
    t.match(r.json(), { statusCode: 401, message: /missing bearer token/ });
  }
  for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/yaml']) {
    const r = await app.inject({ method: 'POST', url: '/api/v1/drain', headers: { ...auth, 'content-type': type }, payload: 'reason: x' });
    t.equal(r.statusCode, 415, type);
    t.same(r.json(), { statusCode: 415, error: 'Unsupported Media Type', message: `content type "${type}" is not accepted: send a JSON object with content-type application/json, or no body` });
  }
  t.same(view.actions, [], 'nothing was done');
  const doc = openApiDocument() as { paths: Record<string, Record<string, { responses: Record<string, unknown> }>> };
  t.ok(doc.paths['/api/v1/drain']?.['post']?.responses['415'], 'the OpenAPI document lists 415');
});

t.test('mutating endpoints need the token', async (t) => {
  const { app, view } = await setup(t);
  const posts = ['/api/v1/peers/tor-a/reset', '/api/v1/drain', '/api/v1/undrain'];
  for (const url of posts) {
    let r = await app.inject({ method: 'POST', url, payload: {} });
    t.equal(r.statusCode, 401, `${url} without token`);
    t.match(r.json(), { statusCode: 401, error: 'Unauthorized', message: /missing bearer token/ });
    r = await app.inject({ method: 'POST', url, payload: {}, headers: { authorization: 'Bearer wrong' } });
    t.equal(r.statusCode, 401, `${url} wrong token`);
    t.match(r.json().message, /invalid bearer token/);
    r = await app.inject({ method: 'POST', url, payload: {}, headers: { authorization: `Basic ${TOKEN}` } });
    t.equal(r.statusCode, 401, `${url} wrong scheme`);
  }
  t.same(view.actions, [], 'no action ran without a valid token');
  let r = await app.inject({ method: 'POST', url: '/api/v1/peers/tor-a/reset', headers: auth, payload: { soft: true } });
  t.equal(r.statusCode, 200);
  t.same(r.json(), { ok: true, message: 'soft reset of tor-a' });
  r = await app.inject({ method: 'POST', url: '/api/v1/peers/tor-b/reset', headers: auth });
  t.equal(r.statusCode, 200, 'no body = hard reset');
  r = await app.inject({ method: 'POST', url: '/api/v1/drain', headers: auth, payload: {} });
  t.equal(r.statusCode, 200);
  r = await app.inject({ method: 'POST', url: '/api/v1/undrain', headers: { ...auth, 'content-type': 'application/json' }, payload: '' });
  t.equal(r.statusCode, 200);
  t.same(view.actions, ['reset tor-a soft', 'reset tor-b hard', 'drain', 'undrain']);
});

t.test('no token configured: mutations disabled with a clear message', async (t) => {
  const { app, view } = await setup(t, null);
  const r = await app.inject({ method: 'POST', url: '/api/v1/drain', headers: auth, payload: {} });
  t.equal(r.statusCode, 401);
  t.match(r.json().message, /no admin token configured/);
  t.same(view.actions, []);
});

t.test('bad bodies and queries are 400 with the reason', async (t) => {
  const { app, view } = await setup(t);
  let r = await app.inject({ method: 'POST', url: '/api/v1/peers/tor-a/reset', headers: auth, payload: { soft: 'yes' } });
  t.equal(r.statusCode, 400);
  t.match(r.json(), { statusCode: 400, error: 'Bad Request', message: /soft.*boolean/ });
  r = await app.inject({ method: 'POST', url: '/api/v1/peers/tor-a/reset', headers: auth, payload: { hard: true } });
  t.equal(r.statusCode, 400);
  t.match(r.json().message, /additional properties/);
  r = await app.inject({ method: 'POST', url: '/api/v1/drain', headers: { ...auth, 'content-type': 'application/json' }, payload: '{nope' });
  t.equal(r.statusCode, 400);
  t.match(r.json().message, /not valid JSON/);
  r = await app.inject({ url: '/api/v1/routes?color=red' });
  t.equal(r.statusCode, 400);
  t.match(r.json().message, /querystring/);
  t.same(view.actions, []);
});

t.test('OpenAPI document covers every route', async (t) => {
  const { app } = await setup(t);
  const r = await app.inject({ url: '/openapi.json' });
  t.equal(r.statusCode, 200);
  const doc = r.json();
  t.equal(doc.openapi, '3.1.0');
  t.same(doc, JSON.parse(JSON.stringify(openApiDocument())));
  for (const route of ROUTES) {
    const p = route.url.replace(/:([A-Za-z]+)/g, '{$1}');
    const op = doc.paths[p]?.[route.method.toLowerCase()];
    t.ok(op, `${route.method} ${route.url} documented`);
    if (route.mutating) t.same(op.security, [{ bearer: [] }], `${route.url} marked as needing the token`);
  }
  t.ok(doc.paths['/api/v1/peers/{name}/reset'].post.responses['401']);
  t.equal(doc.paths['/api/v1/peers/{name}'].get.parameters[0].name, 'name');
});

t.test('no per-request log lines and no fastify deprecation warning (FSTDEP023) at build', async (t) => {
  const warnings: string[] = [];
  const onWarning = (w: Error & { code?: string }) => warnings.push(`${w.name} ${w.code ?? ''}`);
  process.on('warning', onWarning);
  t.teardown(() => {
    process.off('warning', onWarning);
  });
  const lines: string[] = [];
  const { pino } = await import('pino');
  const logger = pino({ level: 'trace' }, { write: (s: string) => void lines.push(s) });
  const app = await buildAdminServer({ view: new FakeView(), token: () => TOKEN, logger });
  t.teardown(() => app.close());
  await app.ready();
  t.equal((await app.inject({ url: '/healthz' })).statusCode, 200);
  t.equal((await app.inject({ url: '/nope' })).statusCode, 404);
  await new Promise((r) => setImmediate(r)); // process warnings are emitted on the next tick
  t.same(warnings.filter((w) => /FSTDEP/.test(w)), [], 'no deprecation warning');
  t.same(lines.map((l) => JSON.parse(l).msg).filter((m) => /incoming request|request completed/.test(m)), [], 'no request log lines');
});

t.test('service reasons keep their health causes through the response schema', async (t) => {
  const view = new FakeView();
  const cause = { code: 'Suppressed', message: 'flapping: suppressed after 3 withdrawals', since: '2026-11-29T21:00:00.000Z', until: '2026-11-29T21:05:00.000Z' };
  view.services = () => [{ service: 'shop/api', vips: [{ address: '198.51.100.40', kind: 'loadBalancer', announced: false, reasons: [{ code: 'HealthCheckFailing', message: 'flapping: suppressed', causes: [cause] }] }], reasons: [] }];
  const app = await buildAdminServer({ view, token: () => undefined });
  t.teardown(() => app.close());
  const r = await app.inject({ url: '/api/v1/services/shop/api' });
  t.equal(r.statusCode, 200);
  t.same(r.json().vips[0].reasons[0].causes, [cause]);
});
