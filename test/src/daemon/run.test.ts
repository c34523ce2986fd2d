// runDaemon in-process (no BGP peer needed): startup errors, admin API up, reload by SIGHUP
// (valid and invalid files), stop, state file written.
import t from 'tap';
import type { Test } from 'tap';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { runDaemon } from '../../../src/daemon/run.ts';
import { freePort } from '../../helpers/bird.ts';

const dir = mkdtempSync(join(tmpdir(), 'herald-run-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

t.test('an invalid file or identity stops startup with exit code 1', async (t) => {
  const bad = join(dir, 'bad.yaml');
  writeFileSync(bad, 'bgp: {localAs: 0}\n');
  const writes: string[] = [];
  const orig = process.stderr.write.bind(process.stderr);
  process.stderr.write = ((s: string) => (writes.push(String(s)), true)) as typeof process.stderr.write;
  try {
    t.equal(await runDaemon({ configPath: bad, env: {} }), 1);
    t.equal(await runDaemon({ configPath: join(dir, 'missing.yaml'), env: {} }), 1);
    const noId = join(dir, 'noid.yaml');
    writeFileSync(noId, 'bgp: {localAs: 65000}\n');
    t.equal(await runDaemon({ configPath: noId, env: {} }), 1);
  } finally {
    process.stderr.write = orig;
  }
  t.match(writes.join(''), /bgp\.localAs: must be an AS number/);
  t.match(writes.join(''), /cannot read/);
  t.match(writes.join(''), /bgp\.routerId: required unless node\.ip/);
});

t.test('runs, serves the API, reloads on SIGHUP, stops', async (t) => {
  const adminPort = await freePort('127.0.0.1');
  const configPath = join(dir, 'herald.yaml');
  const stateDir = join(dir, 'state');
  const base = { bgp: { localAs: 65000, routerId: '10.0.0.1' }, admin: { address: '127.0.0.1', port: adminPort }, stateDir, logLevel: 'fatal' };
  writeFileSync(configPath, stringify({ ...base, routes: [{ prefix: '10.5.0.0/24' }] }));
  const hupListeners = process.listenerCount('SIGHUP');
  let stop!: () => void;
  const stopSignal = new Promise<void>((resolve) => (stop = resolve));
  const running = runDaemon({ configPath, env: { HERALD_ADMIN_TOKEN: 'tok' }, stopSignal, watchIntervalMs: 0 });
  const api = `http://127.0.0.1:${adminPort}`;
  const status = async () => (await (await fetch(`${api}/api/v1/status`)).json()) as { ready: boolean; routes: { desired: number }; lastReload?: { ok: boolean; errors?: string[] } };
  let s: Awaited<ReturnType<typeof status>> | undefined;
  // the admin API answers before the speaker thread has started and bound: ready follows
  for (let i = 0; i < 400 && !s?.ready; i++) {
    s = await status().catch(() => undefined);
    if (!s?.ready) await new Promise((r) => setTimeout(r, 50));
  }
  t.ok(s, 'admin API up');
  t.equal(s?.ready, true);
  t.equal(s?.routes.desired, 1);
  t.ok(existsSync(join(stateDir, 'state.json')), 'heartbeat written');

  const waitReload = async (pred: (x: Awaited<ReturnType<typeof status>>) => boolean) => {
    for (let i = 0; i < 100; i++) {
      const x = await status();
      if (pred(x)) return x;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error('reload not seen');
  };
  writeFileSync(configPath, stringify({ ...base, routes: [{ prefix: '10.5.0.0/24' }, { prefix: '10.6.0.0/24' }] }));
  process.emit('SIGHUP', 'SIGHUP');
  const ok = await waitReload((x) => x.lastReload?.ok === true);
  t.equal(ok.routes.desired, 2, 'new static route applied');
  writeFileSync(configPath, 'bgp: {localAs: 65000}\nroutes: [{prefix: nope}]\n');
  process.emit('SIGHUP', 'SIGHUP');
  const rejected = await waitReload((x) => x.lastReload?.ok === false);
  t.match(rejected.lastReload?.errors, [/routes\[0\]\.prefix/]);
  t.equal(rejected.routes.desired, 2, 'running configuration kept');

  stop();
  t.equal(await running, 0);
  const after = await fetch(`${api}/healthz`).catch(() => undefined);
  t.equal(after, undefined, 'admin API closed');
  t.equal(process.listenerCount('SIGHUP'), hupListeners, 'signal handlers removed');
});

/** Start runDaemon with `config`, wait for its admin API; returns helpers and the log lines. */
async function start(t: Test, config: object, o: { heartbeatIntervalMs?: number } = {}) {
  const configPath = join(dir, `cfg-${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(configPath, stringify(config));
  const lines: Record<string, unknown>[] = [];
  let stop!: () => void;
  const stopSignal = new Promise<void>((resolve) => (stop = resolve));
  const running = runDaemon({ configPath, env: { HERALD_ADMIN_TOKEN: 'tok' }, stopSignal, watchIntervalMs: 0, logStream: { write: (s) => void lines.push(JSON.parse(s) as Record<string, unknown>) }, ...o });
  const api = `http://127.0.0.1:${(config as { admin: { port: number } }).admin.port}`;
  let up = false;
  for (let i = 0; i < 100 && !up; i++) {
    up = (await fetch(`${api}/healthz`).catch(() => undefined))?.ok === true;
    if (!up) await new Promise((r) => setTimeout(r, 50));
  }
  t.ok(up, 'admin API up');
  const status = async () => (await (await fetch(`${api}/api/v1/status`)).json()) as { drained: boolean };
  const post = (path: string) => fetch(`${api}${path}`, { method: 'POST', headers: { authorization: 'Bearer tok' } });
  return { api, status, post, lines, stopAndWait: async () => (stop(), running) };
}

t.test('standalone: the drain is a stateDir record that survives a restart; undrain clears it; SIGTERM then is a departure', async (t) => {
  const adminPort = await freePort('127.0.0.1');
  const stateDir = join(dir, 'state-drain');
  const config = { bgp: { localAs: 65000, routerId: '10.0.0.1' }, admin: { address: '127.0.0.1', port: adminPort }, stateDir, logLevel: 'info', routes: [{ prefix: '10.5.0.0/24' }] };
  let d = await start(t, config);
  t.equal((await d.status()).drained, false);
  t.equal((await d.post('/api/v1/drain')).status, 200);
  t.ok(existsSync(join(stateDir, 'drain.json')), 'drain recorded in stateDir');
  t.equal(await d.stopAndWait(), 0);
  t.ok(d.lines.some((l) => l['mode'] === 'departure' && /the node is drained \(file .*drain\.json/.test(String(l['why']))), 'a drained node departs on stop, and the log says why');

  d = await start(t, config);
  t.equal((await d.status()).drained, true, 'starts drained after a restart');
  t.ok(d.lines.some((l) => l['level'] === 40 && /^starting drained: file .*drain\.json/.test(String(l['msg']))), 'starting drained is a warning naming the source');
  t.match((await d.status()) as unknown as { drain: string[] }, { drain: [/^file .*drain\.json/] });
  t.equal((await d.post('/api/v1/undrain')).status, 200);
  t.notOk(existsSync(join(stateDir, 'drain.json')), 'undrain clears the record');
  t.equal(await d.stopAndWait(), 0);
  t.ok(d.lines.some((l) => l['mode'] === 'restart' && /standalone/.test(String(l['why']))), 'undrained: a stop is a restart');

  d = await start(t, config);
  t.equal((await d.status()).drained, false, 'not drained after undrain and restart');
  const r = await fetch(d.api + '/api/v1/drain', { method: 'POST', headers: { authorization: 'Bearer tok', 'content-type': 'application/json' }, body: JSON.stringify({ persist: false }) });
  t.equal(r.status, 400, 'persist is gone: a drain is always kept until undrain');
  t.equal(await d.stopAndWait(), 0);
});

t.test('a stateDir that is a file is warned about once, not at every heartbeat', async (t) => {
  const adminPort = await freePort('127.0.0.1');
  const stateDir = join(dir, 'state-is-a-file');
  writeFileSync(stateDir, 'x');
  const d = await start(t, { bgp: { localAs: 65000, routerId: '10.0.0.1' }, admin: { address: '127.0.0.1', port: adminPort }, stateDir, logLevel: 'info' }, { heartbeatIntervalMs: 10 });
  // At least ten heartbeats (bounded wait: the count of heartbeats is not asserted, only the warnings).
  await new Promise((r) => setTimeout(r, 300));
  t.equal(await d.stopAndWait(), 0);
  const warns = d.lines.filter((l) => typeof l['msg'] === 'string' && (l['msg'] as string).startsWith('cannot write state file'));
  t.equal(warns.length, 1, 'warned once');
  t.match(warns[0], { code: 'EEXIST' });
});

t.test('expected start errors are logged as message and code, without a stack', async (t) => {
  const { createServer } = await import('node:net');
  const busy = createServer();
  await new Promise<void>((r) => busy.listen(0, '127.0.0.1', () => r()));
  t.teardown(() => busy.close());
  const busyPort = (busy.address() as { port: number }).port;
  const orig = process.stderr.write.bind(process.stderr);
  const stderr: string[] = [];
  process.stderr.write = ((s: string) => (stderr.push(String(s)), true)) as typeof process.stderr.write;
  const run = async (config: object) => {
    const configPath = join(dir, `fatal-${Math.random().toString(36).slice(2)}.yaml`);
    writeFileSync(configPath, stringify(config));
    const lines: Record<string, unknown>[] = [];
    const code = await runDaemon({ configPath, env: {}, watchIntervalMs: 0, logStream: { write: (s) => void lines.push(JSON.parse(s) as Record<string, unknown>) } });
    return { code, lines };
  };
  try {
    const base = { bgp: { localAs: 65000, routerId: '10.0.0.1' }, stateDir: join(dir, 'state-fatal'), logLevel: 'info' };
    const pw = await run({ ...base, admin: { address: '127.0.0.1', port: busyPort }, peers: [{ name: 'a', address: '127.0.0.2', peerAs: 65001, password: { file: join(dir, 'no-such-password') } }] });
    t.equal(pw.code, 1);
    const fatal = pw.lines.find((l) => l['msg'] === 'cannot start');
    t.match(fatal, { errors: [/^peers\[0\]\.password\.file: cannot read .*no-such-password: no such file \(check the path\)$/] });
    t.notMatch(JSON.stringify(pw.lines), /"stack"/, 'no stack');
    const port = await run({ ...base, admin: { address: '127.0.0.1', port: busyPort } });
    t.equal(port.code, 1);
    t.match(port.lines.find((l) => l['msg'] === 'admin API cannot listen'), { code: 'EADDRINUSE', error: /EADDRINUSE/ });
    t.notMatch(JSON.stringify(port.lines), /"stack"/, 'no stack');
  } finally {
    process.stderr.write = orig;
  }
  t.match(stderr.join(''), /admin API cannot listen on 127\.0\.0\.1:\d+/);
});

t.test('the metrics listener: /metrics over HTTP on the node address, on the admin port, and no admin endpoint there', async (t) => {
  // As in the DaemonSet: the admin API on 127.0.0.1:P, the metrics listener on the node's address (--node-ip) port P.
  const port = await freePort('127.0.0.1');
  const configPath = join(dir, 'metrics.yaml');
  const config = { bgp: { localAs: 65000, routerId: '10.0.0.1' }, admin: { address: '127.0.0.1', port }, metrics: { port }, stateDir: join(dir, 'state-metrics'), logLevel: 'info', routes: [{ prefix: '10.5.0.0/24' }] };
  writeFileSync(configPath, stringify(config));
  const lines: Record<string, unknown>[] = [];
  let stop!: () => void;
  const stopSignal = new Promise<void>((resolve) => (stop = resolve));
  const running = runDaemon({ configPath, nodeIp: '127.0.0.2', env: { HERALD_ADMIN_TOKEN: 'tok' }, stopSignal, watchIntervalMs: 0, logStream: { write: (s) => void lines.push(JSON.parse(s) as Record<string, unknown>) } });
  const node = `http://127.0.0.2:${port}`;
  const admin = `http://127.0.0.1:${port}`;
  let scrape: Response | undefined;
  for (let i = 0; i < 100 && scrape?.status !== 200; i++) {
    scrape = await fetch(`${node}/metrics`).catch(() => undefined);
    if (scrape?.status !== 200) await new Promise((r) => setTimeout(r, 50));
  }
  t.equal(scrape?.status, 200, 'scraped on the node address');
  t.match(scrape?.headers.get('content-type'), /^text\/plain; version=0\.0\.4/);
  const body = (await scrape?.text()) ?? '';
  t.match(body, /^herald_desired_routes 1$/m, "the daemon's metrics");
  t.match(body, /^herald_build_info\{version="[^"]+"\} 1$/m);
  t.match(lines.find((l) => l['msg'] === 'metrics listening'), { address: '127.0.0.2', port });
  t.equal((await fetch(`${node}/metrics`, { method: 'HEAD' })).status, 200, 'HEAD /metrics');

  // The node's read-only views (what `--all-nodes` asks through the pod proxy), as the admin API serves them.
  for (const path of ['/api/v1/peers', '/api/v1/services']) {
    const r = await fetch(`${node}${path}`);
    t.equal(r.status, 200, `GET ${path}: the node's view, read-only`);
    t.same(await r.json(), await (await fetch(`${admin}${path}`)).json(), `GET ${path}: as the admin API serves it`);
  }
  for (const path of ['/api/v1/status', '/api/v1/routes', '/api/v1/health', '/readyz', '/healthz', '/openapi.json', '/', '/metrics/']) {
    const r = await fetch(`${node}${path}`);
    t.equal(r.status, 404, `GET ${path}: not on the metrics listener`);
    t.match(await r.json(), { statusCode: 404, message: /serves only GET \/metrics, \/api\/v1\/peers and \/api\/v1\/services/ });
  }
  for (const path of ['/api/v1/drain', '/api/v1/undrain', '/api/v1/peers/x/reset']) {
    const r = await fetch(`${node}${path}`, { method: 'POST', headers: { authorization: 'Bearer tok' } });
    t.equal(r.status, 404, `POST ${path} with the token: not on the metrics listener`);
  }
  const post = await fetch(`${node}/metrics`, { method: 'POST' });
  t.equal(post.status, 405);
  t.equal(post.headers.get('allow'), 'GET, HEAD');
  t.equal(((await (await fetch(`${admin}/api/v1/status`)).json()) as { drained: boolean }).drained, false, 'the admin API answers on loopback, same port');
  t.match(await (await fetch(`${admin}/metrics`)).text(), /^herald_desired_routes 1$/m, 'and keeps its own /metrics there');

  stop();
  t.equal(await running, 0);
  t.equal(await fetch(`${node}/metrics`).catch(() => undefined), undefined, 'metrics listener closed');
});

t.test('a metrics listener that cannot bind stops startup with exit code 1, naming the address', async (t) => {
  const { createServer } = await import('node:net');
  const busy = createServer();
  await new Promise<void>((r) => busy.listen(0, '127.0.0.2', () => r()));
  t.teardown(() => busy.close());
  const busyPort = (busy.address() as { port: number }).port;
  const adminPort = await freePort('127.0.0.1');
  const configPath = join(dir, 'metrics-busy.yaml');
  writeFileSync(configPath, stringify({ bgp: { localAs: 65000, routerId: '10.0.0.1' }, admin: { address: '127.0.0.1', port: adminPort }, metrics: { address: '127.0.0.2', port: busyPort }, stateDir: join(dir, 'state-metrics-busy'), logLevel: 'info' }));
  const orig = process.stderr.write.bind(process.stderr);
  const stderr: string[] = [];
  process.stderr.write = ((s: string) => (stderr.push(String(s)), true)) as typeof process.stderr.write;
  const lines: Record<string, unknown>[] = [];
  let code: number;
  try {
    code = await runDaemon({ configPath, env: {}, watchIntervalMs: 0, logStream: { write: (s) => void lines.push(JSON.parse(s) as Record<string, unknown>) } });
  } finally {
    process.stderr.write = orig;
  }
  t.equal(code, 1);
  t.match(lines.find((l) => l['msg'] === 'metrics listener cannot listen'), { code: 'EADDRINUSE' });
  t.match(stderr.join(''), new RegExp(`metrics listener cannot listen on 127\\.0\\.0\\.2:${busyPort}: .*EADDRINUSE`));
  t.equal(await fetch(`http://127.0.0.1:${adminPort}/healthz`).catch(() => undefined), undefined, 'the admin API is closed again');

  // Without metrics.address and without a node address: a configuration error before anything starts.
  writeFileSync(configPath, stringify({ bgp: { localAs: 65000, routerId: '10.0.0.1' }, admin: { address: '127.0.0.1', port: adminPort }, metrics: {}, stateDir: join(dir, 'state-metrics-busy') }));
  process.stderr.write = ((s: string) => (stderr.push(String(s)), true)) as typeof process.stderr.write;
  try {
    code = await runDaemon({ configPath, env: {}, watchIntervalMs: 0 });
  } finally {
    process.stderr.write = orig;
  }
  t.equal(code, 1);
  t.match(stderr.join(''), /metrics\.address: not set, and the node's address is unknown/);
});
