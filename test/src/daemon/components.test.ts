// The components of a Herald process (src/daemon/components.ts): started in order, stopped in reverse order; a start
// that fails stops everything and names the component; a stop asked for while starting starts nothing more; the
// listener, state file and configuration watcher components on their own.
import t from 'tap';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify from 'fastify';
import { pino } from 'pino';
import { ConfigFile } from '../../../src/config/load.ts';
import type { Config } from '../../../src/config/schema.ts';
import { Components, StartError, configWatcher, heartbeatComponent, listenerComponent } from '../../../src/daemon/components.ts';
import type { Component } from '../../../src/daemon/components.ts';

const silent = pino({ level: 'silent' });

function recorder() {
  const calls: string[] = [];
  const part = (name: string, o: { fail?: boolean; gate?: Promise<void> } = {}): Component => ({
    name,
    start: async () => {
      calls.push(`start ${name}`);
      await o.gate;
      if (o.fail) throw new Error(`${name} cannot listen on 127.0.0.1:9179: EADDRINUSE`);
    },
    stop: (why) => void calls.push(`stop ${name} (${why})`),
  });
  return { calls, part };
}

t.test('started in order, stopped in reverse order, once', async (t) => {
  const { calls, part } = recorder();
  const c = new Components([part('a'), part('b'), part('c')], silent);
  t.same(c.names, ['a', 'b', 'c']);
  await c.start();
  await c.stop('SIGTERM');
  await c.stop('SIGTERM');
  t.same(calls, ['start a', 'start b', 'start c', 'stop c (SIGTERM)', 'stop b (SIGTERM)', 'stop a (SIGTERM)']);
});

t.test('a start that fails stops every component and names the one that failed', async (t) => {
  const { calls, part } = recorder();
  const c = new Components([part('a'), part('admin API', { fail: true }), part('c')], silent);
  const err = await c.start().catch((e: unknown) => e);
  t.ok(err instanceof StartError);
  t.equal((err as StartError).component, 'admin API');
  t.equal((err as Error).message, 'admin API cannot listen on 127.0.0.1:9179: EADDRINUSE');
  t.same(calls, ['start a', 'start admin API', 'stop c (admin API failed)', 'stop admin API (admin API failed)', 'stop a (admin API failed)'], 'each stop is safe for a component that did not start');
});

t.test('a stop while starting waits for the component starting and starts no other', async (t) => {
  const { calls, part } = recorder();
  let open!: () => void;
  const gate = new Promise<void>((r) => (open = r));
  const c = new Components([part('a'), part('b', { gate }), part('c')], silent);
  const starting = c.start();
  await new Promise((r) => setImmediate(r));
  const stopping = c.stop('SIGTERM');
  open();
  await Promise.all([starting, stopping]);
  t.same(calls, ['start a', 'start b', 'stop c (SIGTERM)', 'stop b (SIGTERM)', 'stop a (SIGTERM)']);
});

t.test('a stop that throws is logged and the others still stop', async (t) => {
  const lines: Record<string, unknown>[] = [];
  const log = pino({ level: 'info' }, { write: (l: string) => void lines.push(JSON.parse(l) as Record<string, unknown>) });
  const { calls, part } = recorder();
  const bad: Component = { name: 'bad', start: () => undefined, stop: () => { throw new Error('boom'); } };
  const c = new Components([part('a'), bad, part('c')], log);
  await c.start();
  await c.stop('x');
  t.same(calls.filter((s) => s.startsWith('stop')), ['stop c (x)', 'stop a (x)']);
  t.ok(lines.some((l) => l['msg'] === 'stop failed' && l['component'] === 'bad'));
});

t.test('listenerComponent: a port in use is a start error naming the address and the fields; stop closes', async (t) => {
  const taken = createServer();
  await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
  t.teardown(() => taken.close());
  const port = (taken.address() as { port: number }).port;
  const lines: Record<string, unknown>[] = [];
  const log = pino({ level: 'info' }, { write: (l: string) => void lines.push(JSON.parse(l) as Record<string, unknown>) });
  const busy = listenerComponent({ name: 'metrics listener', logged: 'metrics', fields: 'metrics.address, metrics.port', at: { address: '127.0.0.1', port }, build: async () => Fastify(), log });
  await t.rejects(Promise.resolve(busy.start()), new RegExp(`^metrics listener cannot listen on 127\\.0\\.0\\.1:${port}: .*EADDRINUSE.* \\(metrics\\.address, metrics\\.port\\)$`));
  t.match(lines.find((l) => l['msg'] === 'metrics listener cannot listen'), { code: 'EADDRINUSE' });
  const ok = listenerComponent({ name: 'admin API', logged: 'admin API', at: { address: '127.0.0.1', port: 0 }, build: async () => Fastify().get('/', async () => 'up'), log });
  await ok.start();
  const at = lines.find((l) => l['msg'] === 'admin API listening') as { port: number };
  t.equal(await (await fetch(`http://127.0.0.1:${at.port}/`)).text(), 'up');
  await ok.stop('x');
  t.equal(await fetch(`http://127.0.0.1:${at.port}/`).catch(() => 'closed'), 'closed');
});

t.test('heartbeatComponent: written at start, and again at stop only when it started', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'herald-hb-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'state.json');
  const never = heartbeatComponent({ stateDir: () => dir, intervalMs: 60_000, log: silent });
  await never.stop('admin API failed');
  t.notOk(existsSync(file), 'a process that never started writes no heartbeat (its next start is not a restart)');
  const hb = heartbeatComponent({ stateDir: () => dir, intervalMs: 60_000, log: silent });
  await hb.start();
  t.ok(existsSync(file));
  rmSync(file);
  await hb.stop('SIGTERM');
  t.ok(existsSync(file), 'the last heartbeat, at stop');
});

t.test('configWatcher: a reload asked for before the start runs after it; a bad file is rejected; its stop waits', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'herald-watch-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'herald.yaml');
  writeFileSync(path, 'bgp: {localAs: 65000, routerId: 10.0.0.1}\n');
  const file = new ConfigFile(path, { env: {} });
  await file.load();
  const seen: string[] = [];
  const w = configWatcher({
    file,
    path,
    stamp: 'x',
    intervalMs: 0,
    log: silent,
    target: { reload: async (c: Config) => void seen.push(`reload ${c.bgp.localAs}`), rejected: (e) => void seen.push(`rejected ${e.join('; ')}`), failed: () => false },
  });
  writeFileSync(path, 'bgp: {localAs: 65001, routerId: 10.0.0.1}\n');
  w.reload('SIGHUP');
  await new Promise((r) => setTimeout(r, 50));
  t.same(seen, [], 'waits for the start');
  await w.start();
  await new Promise((r) => setTimeout(r, 200));
  t.same(seen, ['reload 65001']);
  writeFileSync(path, 'bgp: {localAs: nope}\n');
  w.reload('SIGHUP');
  await w.stop('SIGTERM');
  t.equal(seen.length, 2, 'the stop waited for the reload in progress');
  t.match(seen[1], /^rejected bgp\.localAs: /);
});
