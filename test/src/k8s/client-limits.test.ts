// What Herald's Kubernetes client gives operators, as client-go does: a User-Agent naming Herald, its version and role,
// a client-side token bucket, 429/Retry-After waited out, and TCP keepalive (src/k8s/client.ts, src/k8s/rate-limit.ts).
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { ApiError, KubeClient, MAX_RETRY_AFTER_SEC, TCP_KEEPALIVE, heraldUserAgent, requestKind, retryAfterMs } from '../../../src/k8s/client.ts';
import { DEFAULT_LIMITS, TokenBucket } from '../../../src/k8s/rate-limit.ts';
import { FakeApiServer } from '../../helpers/fake-apiserver.ts';
import { service } from '../../helpers/k8s-objects.ts';
import { waitFor } from '../../helpers/k8s-wait.ts';

t.test('token bucket: a burst at once, then qps a second, in order; an aborted wait gives its token back', async (tt) => {
  const b = new TokenBucket({ qps: 5, burst: 2 }, 0);
  tt.strictSame([b.reserve(0), b.reserve(0)], [0, 0], 'the burst goes at once');
  tt.equal(b.reserve(0), 200, 'the third waits one refill (1/5 s)');
  tt.equal(b.reserve(0), 400, 'the fourth waits behind it');
  b.cancel();
  tt.equal(b.reserve(0), 400, 'a cancelled reservation frees its place');
  tt.equal(b.reserve(10_000), 0, 'refilled after a quiet while');
  tt.equal(b.reserve(10_000), 0, 'up to the burst');
  tt.equal(b.reserve(10_000), 200);
  const none = new TokenBucket({ qps: 0, burst: 1 }, 0);
  tt.strictSame([none.reserve(0), none.reserve(0), none.reserve(0)], [0, 0, 0], 'qps 0: no limit');
  tt.strictSame(DEFAULT_LIMITS.speaker, { qps: 5, burst: 10 }, "the speaker's default is client-go's");
});

t.test('Retry-After: whole seconds on 429 and 5xx, capped; nothing else', async (tt) => {
  tt.equal(retryAfterMs(429, '3'), 3000);
  tt.equal(retryAfterMs(503, '1'), 1000);
  tt.equal(retryAfterMs(429, undefined), undefined, 'a 429 without Retry-After is an error for the caller');
  tt.equal(retryAfterMs(409, '1'), undefined, 'only 429 and 5xx');
  tt.equal(retryAfterMs(429, 'Wed, 21 Oct 2015 07:28:00 GMT'), undefined, 'an HTTP date is not read (client-go neither)');
  tt.equal(retryAfterMs(429, '100000'), MAX_RETRY_AFTER_SEC * 1000, 'capped');
});

t.test('requestKind: verbs and resources as audit logs name them', async (tt) => {
  tt.strictSame(requestKind('GET', '/api/v1/services', false), { verb: 'list', resource: 'services' });
  tt.strictSame(requestKind('GET', '/api/v1/services', true), { verb: 'watch', resource: 'services' });
  tt.strictSame(requestKind('GET', '/api/v1/nodes/n1', false), { verb: 'get', resource: 'nodes' });
  tt.strictSame(requestKind('PATCH', '/apis/herald.io/v1alpha1/namespaces/h/bgpnodestatuses/n1/status', false), { verb: 'patch', resource: 'bgpnodestatuses/status' });
  tt.strictSame(requestKind('POST', '/api/v1/namespaces/default/events', false), { verb: 'create', resource: 'events' });
  tt.strictSame(requestKind('GET', '/api/v1/namespaces/h/pods/herald-x/proxy/api/v1/peers', false), { verb: 'get', resource: 'pods/proxy' });
});

t.test('every request carries the User-Agent herald/<version> (<role>)', async (tt) => {
  const api = new FakeApiServer();
  await api.start();
  tt.teardown(() => api.stop());
  const kc = new KubeClient({ server: api.url }, { role: 'controller', version: '1.2.3' });
  tt.teardown(() => kc.close());
  tt.equal(kc.userAgent, 'herald/1.2.3 (controller)');
  tt.equal(heraldUserAgent('0.1.0', 'speaker'), 'herald/0.1.0 (speaker)');
  await kc.request('GET', '/api/v1/services');
  const ac = new AbortController();
  const watching = kc.watch('/api/v1/services', { inactivityMs: 5000, signal: ac.signal }, () => undefined).catch(() => undefined);
  await waitFor(() => api.watchCount() === 1, 'watching');
  ac.abort();
  await watching;
  tt.strictSame(api.requests.map((r) => r.userAgent), ['herald/1.2.3 (controller)', 'herald/1.2.3 (controller)']);
});

t.test('429 with Retry-After is waited out and sent again (requests and watches); without it, the caller gets the 429', async (tt) => {
  const api = new FakeApiServer();
  await api.start();
  tt.teardown(() => api.stop());
  api.upsert('services', service('web', { lbIPs: ['192.0.2.1'] }));
  const seen: string[] = [];
  const waits: number[] = [];
  const kc = new KubeClient({ server: api.url }, { observer: { onResponse: (verb, resource, code) => seen.push(`${verb} ${resource} ${code}`), onRetryAfter: (ms) => waits.push(ms) } });
  tt.teardown(() => kc.close());
  api.tooManyRequests({ count: 2, retryAfterSec: 0 });
  const list = (await kc.request('GET', '/api/v1/services')) as { items: unknown[] };
  tt.equal(list.items.length, 1, 'the list went through after two 429s');
  tt.strictSame(seen, ['list services 429', 'list services 429', 'list services 200']);
  tt.strictSame(waits, [0, 0]);
  api.tooManyRequests({ count: 1, retryAfterSec: 1 });
  const t0 = Date.now();
  await kc.request('GET', '/api/v1/services');
  tt.ok(Date.now() - t0 >= 950, 'Retry-After: 1 waited about a second');
  // A watch is retried the same way.
  seen.length = 0;
  api.tooManyRequests({ count: 1, retryAfterSec: 0 });
  const ac = new AbortController();
  const events: string[] = [];
  const watching = kc.watch('/api/v1/services', { inactivityMs: 5000, signal: ac.signal }, (type) => events.push(type)).catch(() => undefined);
  await waitFor(() => events.length === 1, 'the watch opened after its 429');
  ac.abort();
  await watching;
  tt.strictSame(seen, ['watch services 429', 'watch services 200']);
  // Without Retry-After: the error, for the informer's backoff.
  api.tooManyRequests({ count: 1 });
  const err = await kc.request('GET', '/api/v1/services').catch((e: unknown) => e);
  tt.ok(err instanceof ApiError && err.code === 429, 'ApiError 429');
});

t.test('the client-side limit makes requests beyond the burst wait', async (tt) => {
  const api = new FakeApiServer();
  await api.start();
  tt.teardown(() => api.stop());
  const waits: number[] = [];
  const kc = new KubeClient({ server: api.url }, { limit: { qps: 20, burst: 2 }, observer: { onThrottled: (ms) => waits.push(ms) } });
  tt.teardown(() => kc.close());
  await Promise.all(Array.from({ length: 6 }, () => kc.request('GET', '/api/v1/services')));
  tt.ok(waits.length >= 3, `at least 3 of 6 requests waited (${waits.length})`);
  tt.ok(Math.max(...waits) >= 100, 'the last waited for several refills');
  const free = new KubeClient({ server: api.url }, { limit: { qps: 0 }, observer: { onThrottled: (ms) => waits.push(ms) } });
  tt.teardown(() => free.close());
  waits.length = 0;
  await Promise.all(Array.from({ length: 20 }, () => free.request('GET', '/api/v1/services')));
  tt.equal(waits.length, 0, 'qps 0: none waits');
});

t.test('connections to the apiserver use TCP keepalive (a watch on a dead connection ends within a minute)', { skip: process.platform !== 'linux' ? 'ss(8) is Linux' : false }, async (tt) => {
  const api = new FakeApiServer();
  await api.start();
  tt.teardown(() => api.stop());
  const kc = new KubeClient({ server: api.url });
  tt.teardown(() => kc.close());
  const ac = new AbortController();
  const watching = kc.watch('/api/v1/services', { inactivityMs: 60_000, signal: ac.signal }, () => undefined).catch(() => undefined);
  await waitFor(() => api.watchCount() === 1, 'watching');
  const port = new URL(api.url).port;
  const out = execFileSync('ss', ['-tno', 'state', 'established', `( dport = :${port} )`], { encoding: 'utf8' });
  ac.abort();
  await watching;
  const m = /timer:\(keepalive,(\d+)sec/.exec(out);
  tt.ok(m, `the watch's socket has a keepalive timer:\n${out}`);
  tt.ok(Number(m?.[1]) <= TCP_KEEPALIVE.idleMs / 1000, 'its first probe within the idle time');
});
