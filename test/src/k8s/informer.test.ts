// KubernetesSource / SupervisedInformer driven by Herald's Kubernetes client (src/k8s/client.ts) against the fake apiserver.
import t from 'tap';
import type { Test } from 'tap';
import { KubeClient } from '../../../src/k8s/client.ts';
import { FakeApiServer } from '../../helpers/fake-apiserver.ts';
import { waitFor } from '../../helpers/k8s-wait.ts';
import { node, servedNode, servedService, servedSlice, service, slice, serviceCIDR } from '../../helpers/k8s-objects.ts';
import { KubernetesSource } from '../../../src/sources/kubernetes.ts';
import { LIST_PAGE_SIZE } from '../../../src/k8s/informer.ts';

function kubeConfig(url: string): KubeClient {
  return new KubeClient({ server: url, token: 't' });
}

async function setup(tt: Test, opts: { serviceCIDRs?: boolean; nodeName?: string; listTimeoutMs?: number } = {}) {
  const api = new FakeApiServer();
  await api.start();
  api.upsert('services', service('web', { lbIPs: ['192.0.2.1'] }));
  api.upsert('services', service('db', { ns: 'data', lbIPs: ['192.0.2.2'] }));
  api.upsert('endpointslices', slice('web-abc', 'web', [['10.0.0.1', 'n1']]), 'discovery.k8s.io');
  api.upsert('nodes', node('n1'));
  api.upsert('nodes', node('n2'));
  api.upsert('servicecidrs', serviceCIDR('kubernetes', ['10.96.0.0/12']), 'networking.k8s.io');
  const src = new KubernetesSource({
    kc: kubeConfig(api.url),
    initialBackoffMs: 20,
    maxBackoffMs: 200,
    watchTimeoutMs: 1500,
    ...opts,
  });
  const changes: string[] = [];
  src.on('change', (keys: string[]) => changes.push(...keys));
  src.on('error', () => {});
  tt.teardown(async () => {
    await src.stop();
    await api.stop();
  });
  return { api, src, changes };
}

t.test('initial sync fills the snapshot and sets synced', async (tt) => {
  const { src, api } = await setup(tt);
  tt.equal(src.synced(), false);
  let syncedEvents = 0;
  src.on('synced', () => syncedEvents++);
  await src.start();
  await waitFor(() => src.synced(), 'synced');
  const snap = src.snapshot();
  tt.strictSame([...snap.services()].map((s) => `${s.metadata?.namespace}/${s.metadata?.name}`).sort(), ['data/db', 'default/web']);
  tt.equal(snap.endpointSlicesFor('default/web').length, 1);
  tt.equal(snap.node('n1')?.metadata?.name, 'n1');
  tt.strictSame([...snap.serviceCIDRs()].map((c) => c.spec?.cidrs), [['10.96.0.0/12']]);
  tt.equal(syncedEvents, 1);
  tt.equal(api.count((r) => r.path === '/api/v1/services' && r.query.watch === undefined), 0, 'no LIST of services: the apiserver streams the list');
  tt.equal(api.count((r) => r.path === '/api/v1/services'), 1, 'one request for services: the streaming list goes on as the watch');
  const st = src.status();
  tt.equal(st.synced, true);
  tt.strictSame(st.resources.map((r) => [r.kind, r.synced, r.objects]), [['Service', true, 2], ['EndpointSlice', true, 1], ['Node', true, 2], ['ServiceCIDR', true, 1]]);
});

t.test('watch delivers add/update/delete as change keys', async (tt) => {
  const { src, api, changes } = await setup(tt);
  await src.start();
  await waitFor(() => src.synced() && api.watchCount() === 4, 'synced and 4 watches');
  changes.length = 0;
  api.upsert('endpointslices', slice('web-abc', 'web', [['10.0.0.1', 'n1', { ready: false }]]), 'discovery.k8s.io');
  await waitFor(() => changes.includes('service:default/web'), 'slice change key');
  tt.equal(src.snapshot().endpointSlicesFor('default/web')[0]?.endpoints?.[0]?.conditions?.ready, false);
  api.remove('services', 'data', 'db');
  await waitFor(() => changes.includes('service:data/db'), 'delete key');
  tt.equal(src.snapshot().service('data/db'), undefined);
  api.upsert('nodes', node('n1', { ready: 'False' }));
  await waitFor(() => changes.includes('node:n1'), 'node key');
  tt.equal(src.snapshot().node('n1')?.status?.conditions?.[0]?.status, 'False');
  // a slice relabelled to another service touches both services
  changes.length = 0;
  const moved = slice('web-abc', 'other', [['10.0.0.1', 'n1']]);
  api.upsert('endpointslices', moved, 'discovery.k8s.io');
  await waitFor(() => changes.includes('service:default/other'), 'new owner key');
  tt.ok(changes.includes('service:default/web'), 'old owner key too');
  tt.equal(src.snapshot().endpointSlicesFor('default/web').length, 0);
});

for (const mode of ['event', 'http'] as const) {
  t.test(`410 Expired (${mode}) makes the client relist; vanished objects are deleted`, async (tt) => {
    const { src, api, changes } = await setup(tt);
    api.expiredAs = mode;
    await src.start();
    await waitFor(() => src.synced() && api.watchCount('services') === 1, 'watching');
    api.hangWatches(); // the client misses what follows
    api.remove('services', 'data', 'db');
    api.upsert('services', service('new', { lbIPs: ['192.0.2.9'] }));
    api.compact();
    const listsBefore = api.count((r) => r.path === '/api/v1/services' && r.query.sendInitialEvents === 'true');
    api.closeWatches();
    await waitFor(() => src.snapshot().service('data/db') === undefined && src.snapshot().service('default/new') !== undefined, 'relist applied');
    tt.ok(api.count((r) => r.path === '/api/v1/services' && r.query.sendInitialEvents === 'true') > listsBefore, 'services relisted (streamed)');
    tt.ok(changes.includes('service:data/db'));
    tt.ok(src.snapshot().service('default/web'), 'unchanged object kept');
  });
}

for (const mode of ['refuse', '500'] as const) {
  t.test(`apiserver down (${mode}) keeps the cache; reconciled after it comes back`, async (tt) => {
    const { src, api } = await setup(tt);
    let restarts = 0;
    src.on('restart', () => restarts++);
    await src.start();
    await waitFor(() => src.synced() && api.watchCount() === 4, 'watching');
    await api.goDown(mode);
    if (mode === '500') api.closeWatches(true);
    await waitFor(() => restarts >= 4, 'informers restarted after errors');
    tt.equal(src.synced(), true, 'still synced during the outage');
    tt.equal([...src.snapshot().services()].length, 2, 'cache kept during the outage');
    tt.ok(src.status().resources.every((r) => r.errors > 0 && r.lastError !== ''), 'errors counted per informer');
    // changes happen while we cannot see them
    api.remove('services', 'default', 'web');
    api.upsert('nodes', node('n1', { networkUnavailable: 'True' }));
    await api.comeBack();
    await waitFor(() => src.snapshot().service('default/web') === undefined, 'deletion seen after recovery');
    await waitFor(() => src.snapshot().node('n1')?.status?.conditions?.length === 2, 'node update seen after recovery');
    tt.equal(src.snapshot().service('data/db')?.metadata?.name, 'db');
  });
}

t.test('hung watch: the client times out and re-watches from its RV', async (tt) => {
  const { src, api } = await setup(tt);
  await src.start();
  await waitFor(() => src.synced() && api.watchCount('services') === 1, 'watching');
  const watchesBefore = api.count((r) => r.path === '/api/v1/services' && r.query.watch === 'true');
  api.hangWatches();
  api.upsert('services', service('late', { lbIPs: ['192.0.2.7'] }));
  await waitFor(() => src.snapshot().service('default/late') !== undefined, 'missed event replayed after re-watch');
  tt.ok(api.count((r) => r.path === '/api/v1/services' && r.query.watch === 'true') > watchesBefore, 'a new watch was opened');
});

t.test('apiserver hangs every request: cache kept, recovery afterwards', async (tt) => {
  const { src, api } = await setup(tt);
  await src.start();
  await waitFor(() => src.synced() && api.watchCount() === 4, 'watching');
  await api.goDown('hang');
  api.upsert('services', service('during', { lbIPs: ['192.0.2.8'] }));
  await new Promise((r) => setTimeout(r, 300));
  tt.equal([...src.snapshot().services()].length, 2, 'cache unchanged while hung');
  await api.comeBack();
  await waitFor(() => src.snapshot().service('default/during') !== undefined, 'caught up after the hang');
});

t.test('ServiceCIDR not served: counts as synced, marked notServed', async (tt) => {
  const { src, api } = await setup(tt);
  api.unregisterResource('networking.k8s.io', 'v1', 'servicecidrs');
  await src.start();
  await waitFor(() => src.synced(), 'synced without ServiceCIDR');
  const r = src.status().resources.find((x) => x.kind === 'ServiceCIDR');
  tt.equal(r?.notServed, true);
  tt.equal([...src.snapshot().serviceCIDRs()].length, 0);
});

t.test('nodeName restricts the Node informer with a field selector', async (tt) => {
  const { src, api } = await setup(tt, { nodeName: 'n2' });
  await src.start();
  await waitFor(() => src.synced(), 'synced');
  tt.equal(src.snapshot().node('n1'), undefined);
  tt.ok(src.snapshot().node('n2'));
  tt.ok(api.requests.some((r) => r.path === '/api/v1/nodes' && r.query.fieldSelector === 'metadata.name=n2'));
});

t.test('list failure before the first sync: not synced, retried until it works', async (tt) => {
  const { src, api } = await setup(tt);
  await api.goDown('500');
  await src.start();
  await waitFor(() => src.status().resources.every((r) => r.errors >= 2), 'retried lists');
  tt.equal(src.synced(), false, 'nothing synced while the API fails');
  await api.comeBack();
  await waitFor(() => src.synced(), 'synced after recovery');
  tt.equal([...src.snapshot().services()].length, 2);
});

t.test('ServiceCIDR forbidden (RBAC): counts as synced so other routes are not held back', async (tt) => {
  const { src, api } = await setup(tt);
  api.failResource('servicecidrs', 403);
  await src.start();
  await waitFor(() => src.synced(), 'synced without ServiceCIDR');
  const r = src.status().resources.find((x) => x.kind === 'ServiceCIDR');
  tt.equal(r?.notServed, false);
  tt.match(r?.lastError, /Forbidden|403/);
  // a required resource that is forbidden keeps the source unsynced
  const { src: src2, api: api2 } = await setup(tt);
  api2.failResource('services', 403);
  await src2.start();
  await waitFor(() => (src2.status().resources.find((x) => x.kind === 'Service')?.errors ?? 0) >= 2, 'services retried');
  tt.equal(src2.synced(), false);
});

t.test('BOOKMARK advances the RV the client re-watches from', async (tt) => {
  const { src, api } = await setup(tt);
  await src.start();
  await waitFor(() => src.synced() && api.watchCount('nodes') === 1, 'watching');
  api.upsert('services', service('other', { lbIPs: ['192.0.2.5'] })); // bumps the global RV; the nodes watch sees nothing
  const bookmarkRv = api.resourceVersion;
  const lists = (): number => api.count((r) => r.path === '/api/v1/nodes' && r.query.watch === undefined);
  const watches = (): Array<string | undefined> => api.requests.filter((r) => r.path === '/api/v1/nodes' && r.query.watch === 'true').map((r) => r.query.resourceVersion);
  const before = lists();
  const n = watches().length;
  api.bookmark('nodes');
  api.closeWatches(); // a clean close: the client reads every line before reconnecting
  await waitFor(() => watches().length > n, 're-watched');
  tt.equal(watches()[n], bookmarkRv, 're-watch starts at the bookmarked RV');
  // compaction up to the bookmark does not force a relist
  api.compact();
  api.closeWatches();
  await waitFor(() => watches().length > n + 1, 're-watched again');
  api.upsert('nodes', node('n3'));
  await waitFor(() => src.snapshot().node('n3') !== undefined, 'event after re-watch');
  tt.equal(lists(), before, 'no relist');
});

t.test('outage with compaction: relist after recovery removes what vanished', async (tt) => {
  const { src, api, changes } = await setup(tt);
  await src.start();
  await waitFor(() => src.synced() && api.watchCount() === 4, 'watching');
  await api.goDown('refuse');
  api.remove('endpointslices', 'default', 'web-abc', 'discovery.k8s.io');
  api.compact();
  changes.length = 0;
  await api.comeBack();
  await waitFor(() => src.snapshot().endpointSlicesFor('default/web').length === 0, 'slice removed by relist');
  tt.ok(changes.includes('service:default/web'));
  tt.ok(src.status().resources.find((r) => r.kind === 'EndpointSlice')!.lists >= 2, 'endpointslices relisted');
});

t.test('stop() then start() resumes watching (no dead informer after the abort race)', async (tt) => {
  const { src, api } = await setup(tt);
  await src.start();
  await waitFor(() => src.synced() && api.watchCount() === 4, 'watching');
  await src.stop();
  await waitFor(() => api.watchCount() === 0, 'watches closed by stop');
  await src.start();
  api.upsert('services', service('z', { lbIPs: ['192.0.2.1'] }));
  await waitFor(() => src.snapshot().service('default/z') !== undefined, 'event after restart');
  await waitFor(() => api.watchCount() === 4, 'all four watching again');
  tt.pass('resumed');
});

t.test('a hung list times out and is retried', async (tt) => {
  const { src, api } = await setup(tt, { listTimeoutMs: 200 });
  await api.goDown('hang');
  await src.start();
  await waitFor(() => src.status().resources.every((r) => /timed out/.test(r.lastError)), 'list timeouts reported');
  tt.equal(src.synced(), false);
  await api.comeBack();
  await waitFor(() => src.synced(), 'synced after the apiserver answers again');
  tt.equal([...src.snapshot().services()].length, 2);
});

t.test('the cache holds trimmed objects as listed and watched: no managedFields, last-applied or Pod references', async (tt) => {
  const api = new FakeApiServer();
  await api.start();
  api.upsert('services', servedService(service('web', { etp: 'Local', lbIPs: ['192.0.2.1'] })));
  api.upsert('endpointslices', servedSlice(slice('web-abc', 'web', [['10.0.0.1', 'n1']])), 'discovery.k8s.io');
  api.upsert('nodes', servedNode(node('n1')));
  const src = new KubernetesSource({ kc: kubeConfig(api.url), serviceCIDRs: false, initialBackoffMs: 20, maxBackoffMs: 200, watchTimeoutMs: 1500 });
  src.on('error', () => {});
  tt.teardown(async () => {
    await src.stop();
    await api.stop();
  });
  await src.start();
  await waitFor(() => src.synced(), 'synced');
  const check = (what: string) => {
    const snap = src.snapshot();
    const svc = snap.service('default/web');
    tt.ok(svc, `${what}: the Service is cached`);
    tt.notOk('managedFields' in (svc?.metadata ?? {}), `${what}: no managedFields`);
    tt.strictSame(svc?.metadata?.annotations, undefined, `${what}: no foreign annotations (last-applied, Helm)`);
    tt.equal(svc?.spec?.healthCheckNodePort, 32000, `${what}: what Herald reads is there`);
    const ep = snap.endpointSlicesFor('default/web')[0]?.endpoints?.[0];
    tt.strictSame(ep && Object.keys(ep).sort(), ['addresses', 'conditions', 'nodeName'], `${what}: no targetRef or zone`);
    tt.notOk('images' in (snap.node('n1')?.status ?? {}), `${what}: no Node images`);
    // The snapshot is the cache: the informer compares against the same object.
    tt.equal(snap.service('default/web'), svc, `${what}: one copy`);
  };
  check('listed');
  const before = src.snapshot().service('default/web');
  api.upsert('services', servedService(service('web', { etp: 'Local', lbIPs: ['192.0.2.1'], labels: { tier: 'front' } })));
  await waitFor(() => src.snapshot().service('default/web')?.metadata?.labels?.['tier'] === 'front', 'watched update');
  tt.not(src.snapshot().service('default/web'), before, 'the update replaced the entry');
  check('watched');
});

t.test("a quiet resource's watch reopens (lastWatchConnectAtMs advances) while it works, and not while the apiserver is down", async (tt) => {
  const { src, api } = await setup(tt);
  await src.start();
  await waitFor(() => src.synced() && api.watchCount() === 4, 'watching');
  const connectOf = () => src.status().resources.find((r) => r.kind === 'Node')?.lastWatchConnectAtMs ?? 0;
  const eventOf = () => src.status().resources.find((r) => r.kind === 'Node')?.lastEventAtMs ?? 0;
  const first = connectOf();
  tt.ok(first > 0, 'the watch opened');
  // No Node changes: the client ends the watch after watchTimeoutMs without data (1.5 s here; by default never before
  // the server's timeout) and opens the next.
  await waitFor(() => connectOf() > first, 'a new watch stream opened');
  tt.ok(eventOf() < connectOf(), 'without any data');
  await api.goDown('500');
  const down = connectOf();
  await new Promise((r) => setTimeout(r, 2000)); // longer than watchTimeoutMs: a working watch would have reopened
  tt.equal(connectOf(), down, 'no watch opens while the apiserver answers 500');
  await api.comeBack();
  await waitFor(() => connectOf() > down, 'watching again');
});

t.test(`without streaming lists, the initial LIST is read from the watch cache in pages of ${LIST_PAGE_SIZE} (a served page is parsed whole before it is trimmed)`, async (tt) => {
  const { src, api } = await setup(tt);
  api.watchList = false;
  for (let i = 0; i < 2 * LIST_PAGE_SIZE + 5; i++) api.upsert('services', service(`s-${i}`, { lbIPs: [`198.51.${i >> 8}.${i & 255}`] }));
  await src.start();
  await waitFor(() => src.synced(), 'synced');
  tt.equal(api.count((r) => r.path === '/api/v1/services' && r.query.sendInitialEvents === 'true'), 1, 'the streaming list was tried once, and refused');
  const lists = api.requests.filter((r) => r.path === '/api/v1/services' && r.query.watch === undefined);
  tt.strictSame(lists.map((r) => r.query.limit), [String(LIST_PAGE_SIZE), String(LIST_PAGE_SIZE), String(LIST_PAGE_SIZE)], 'three pages for 2 pages and 7 Services');
  tt.strictSame(lists.map((r) => r.query.resourceVersion), ['0', undefined, undefined], 'the first page from the watch cache (resourceVersion=0); continued pages carry none');
  tt.equal([...src.snapshot().services()].length, 2 * LIST_PAGE_SIZE + 7, 'every Service in the cache');
  // After a 410, a LIST again (never another refused streaming attempt), from the last resourceVersion.
  await waitFor(() => api.watchCount('services') === 1, 'watching');
  api.upsert('services', service('s-late', { lbIPs: ['198.51.100.200'] }));
  await waitFor(() => src.snapshot().service('default/s-late') !== undefined, 'watched');
  const lastRv = src.snapshot().service('default/s-late')?.metadata?.resourceVersion;
  api.hangWatches(); // the client misses what follows, then its resourceVersion is compacted
  api.upsert('services', service('s-missed', { lbIPs: ['198.51.100.201'] }));
  api.compact();
  api.closeWatches();
  await waitFor(() => api.count((r) => r.path === '/api/v1/services' && r.query.watch === undefined) > 3, 'listed again');
  tt.equal(api.count((r) => r.path === '/api/v1/services' && r.query.sendInitialEvents === 'true'), 1, 'no second streaming attempt');
  const relist = api.requests.filter((r) => r.path === '/api/v1/services' && r.query.watch === undefined)[3];
  tt.equal(relist?.query.resourceVersion, lastRv, "the relist after a watch's 410 asks for the last resourceVersion (served by the watch cache)");
  await waitFor(() => src.snapshot().service('default/s-missed') !== undefined, 'the missed Service listed');
});

t.test('the streaming list: one request reads every object and goes on as the watch', async (tt) => {
  const { src, api } = await setup(tt, { serviceCIDRs: false });
  await src.start();
  await waitFor(() => src.synced() && api.watchCount() === 3, 'synced and watching');
  const services = api.requests.filter((r) => r.path === '/api/v1/services');
  tt.equal(services.length, 1, 'one request');
  tt.match(services[0]?.query, { watch: 'true', sendInitialEvents: 'true', resourceVersionMatch: 'NotOlderThan', allowWatchBookmarks: 'true', resourceVersion: '' });
  tt.equal(src.status().resources.find((r) => r.kind === 'Service')?.lists, 1, 'counted as a list');
  api.upsert('services', service('more', { lbIPs: ['192.0.2.3'] }));
  await waitFor(() => src.snapshot().service('default/more') !== undefined, 'a change on the same stream');
  tt.equal(api.count((r) => r.path === '/api/v1/services'), 1, 'still one request');
});

t.test('an apiserver that ends a streaming list before its closing bookmark gets a LIST instead', async (tt) => {
  const api = new FakeApiServer();
  await api.start();
  api.upsert('services', service('web', { lbIPs: ['192.0.2.1'] }));
  // Old apiservers ignore sendInitialEvents: the same events without the bookmark, until the watch times out.
  api.watchList = 'ignored';
  const src = new KubernetesSource({ kc: kubeConfig(api.url), serviceCIDRs: false, initialBackoffMs: 20, maxBackoffMs: 200, minWatchTimeoutSec: 1 });
  src.on('error', () => {});
  tt.teardown(async () => {
    await src.stop();
    await api.stop();
  });
  await src.start();
  await waitFor(() => src.synced(), 'synced after the fallback LIST');
  tt.ok(api.count((r) => r.path === '/api/v1/services' && r.query.watch === undefined) >= 1, 'a LIST');
  tt.ok(src.snapshot().service('default/web'));
});

t.test('watches live as long as the server lets them: timeoutSeconds in [5, 10) minutes, bookmarks, never ended by the client', async (tt) => {
  const api = new FakeApiServer();
  await api.start();
  api.upsert('nodes', node('n1'));
  const src = new KubernetesSource({ kc: kubeConfig(api.url), serviceCIDRs: false, initialBackoffMs: 20, maxBackoffMs: 200 });
  src.on('error', () => {});
  tt.teardown(async () => {
    await src.stop();
    await api.stop();
  });
  await src.start();
  await waitFor(() => src.synced() && api.watchCount() === 3, 'watching');
  const watches = api.requests.filter((r) => r.query.watch === 'true');
  tt.equal(watches.length, 3);
  for (const w of watches) {
    tt.equal(w.query.allowWatchBookmarks, 'true', `${w.path}: bookmarks`);
    const sec = Number(w.query.timeoutSeconds);
    tt.ok(sec >= 300 && sec < 600, `${w.path}: timeoutSeconds ${sec} in [300, 600)`);
  }
  // A short server-side timeout, and a quiet resource: every watch is ended by the server, none by the client.
  const quick = new KubernetesSource({ kc: kubeConfig(api.url), serviceCIDRs: false, initialBackoffMs: 20, maxBackoffMs: 200, minWatchTimeoutSec: 1 });
  quick.on('error', () => {});
  tt.teardown(() => quick.stop());
  const before = api.watchEnds.length;
  await quick.start();
  await waitFor(() => api.watchEnds.length - before >= 6, 'the server ended two rounds of watches');
  const ends = api.watchEnds.slice(before);
  tt.strictSame([...new Set(ends.map((e) => e.by))], ['timeout'], 'ended by their timeoutSeconds only');
  tt.ok(ends.every((e) => e.openMs >= 900), 'each was open for its timeout (>= 1 s)');
});
