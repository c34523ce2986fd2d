// runDaemon in-process (no BGP peer needed): startup errors, admin API up, reload by SIGHUP
// (valid and invalid files), stop, state file written.
import t from 'tap';
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
  for (let i = 0; i < 100 && !s; i++) {
    s = await status().catch(() => undefined);
    if (!s) await new Promise((r) => setTimeout(r, 50));
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
