/**
 * What the speaker thread loads: its own isolate holds every module it imports, so it imports `bgp/` and `node:*`
 * only — no module of `src/`, no npm package (zod, pino, fastify, prom-client, yaml, ...): docs/benchmarks.md
 * "Where the memory goes". Read from a module load hook preloaded (`--import`) into every thread of a process that
 * starts a SpeakerProxy with `herald run`'s modules loaded in the main thread.
 */
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const root = new URL('../../../', import.meta.url).pathname;

t.test('the speaker thread loads bgp/ modules and node: builtins only', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'herald-thread-modules-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const out = join(dir, 'loads.txt');
  const hook = join(dir, 'hook.mjs');
  writeFileSync(hook, `
import module from 'node:module';
import { appendFileSync } from 'node:fs';
import { isMainThread } from 'node:worker_threads';
module.registerHooks({ load(url, context, next) { appendFileSync(${JSON.stringify(out)}, (isMainThread ? 'main ' : 'thread ') + url + '\\n'); return next(url, context); } });
`);
  const probe = join(dir, 'probe.mjs');
  writeFileSync(probe, `
await import(${JSON.stringify(pathToFileURL(join(root, 'src/daemon/run.ts')).href)});
const { SpeakerProxy } = await import(${JSON.stringify(pathToFileURL(join(root, 'bgp/index.ts')).href)});
const p = SpeakerProxy.start({ localAs: 65001, bgpIdentifier: '10.0.0.1' });
await p.ready();
p.addPeer({ name: 'p', address: '127.0.0.1', port: 9, peerAs: 65002 });
p.setRoutes([{ prefix: '192.0.2.1/32', family: 'ipv4-unicast' }]);
await p.routes();
await p.stop({ mode: 'departure', waitTimeSec: 0 });
process.exit(0);
`);
  const r = spawnSync(process.execPath, ['--import', pathToFileURL(hook).href, probe], { encoding: 'utf8', timeout: 60_000 });
  t.equal(r.status, 0, r.stderr.slice(-2000));
  const lines = readFileSync(out, 'utf8').trim().split('\n');
  const thread = lines.filter((l) => l.startsWith('thread ')).map((l) => l.slice('thread '.length));
  const main = lines.filter((l) => l.startsWith('main ')).map((l) => l.slice('main '.length));
  t.ok(main.some((u) => u.includes('/node_modules/fastify/')), 'the main thread loaded herald run\'s modules (fastify among them)');
  t.ok(thread.some((u) => u.endsWith('/bgp/speaker-thread/worker.ts')) && thread.some((u) => u.endsWith('/bgp/speaker.ts')), `the speaker thread's modules were seen (${thread.length})`);
  const bgp = pathToFileURL(join(root, 'bgp')).href + '/';
  const foreign = thread.filter((u) => !u.startsWith('node:') && !u.startsWith(bgp));
  t.same(foreign, [], 'nothing outside bgp/ and node:');
});
