/**
 * What the speaker thread loads: its own isolate holds every module it imports, so it imports `bgp/` and `node:*`
 * only — no module of `src/`, no npm package (zod, pino, fastify, prom-client, yaml, ...): docs/benchmarks.md
 * "Where the memory goes". Read from a module load hook preloaded (`--import`) into every thread of a process that
 * starts a SpeakerProxy with `herald run`'s modules loaded in the main thread.
 */
import t from 'tap';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { moduleLoads } from '../../helpers/module-loads.ts';

const root = new URL('../../../', import.meta.url).pathname;

t.test('the speaker thread loads bgp/ modules and node: builtins only', async (t) => {
  const r = moduleLoads(`
await import(${JSON.stringify(pathToFileURL(join(root, 'src/daemon/run.ts')).href)});
const { SpeakerProxy } = await import(${JSON.stringify(pathToFileURL(join(root, 'bgp/main-thread.ts')).href)});
const p = SpeakerProxy.start({ localAs: 65001, bgpIdentifier: '10.0.0.1' });
await p.ready();
p.addPeer({ name: 'p', address: '127.0.0.1', port: 9, peerAs: 65002 });
p.setRoutes([{ prefix: '192.0.2.1/32', family: 'ipv4-unicast' }]);
await p.routes();
await p.stop({ mode: 'departure', waitTimeSec: 0 });
process.exit(0);
`);
  t.equal(r.status, 0, r.stderr.slice(-2000));
  const thread = r.threads;
  const main = r.main;
  t.ok(main.some((u) => u.includes('/node_modules/fastify/')), 'the main thread loaded herald run\'s modules (fastify among them)');
  t.ok(thread.some((u) => u.endsWith('/bgp/speaker-thread/worker.ts')) && thread.some((u) => u.endsWith('/bgp/speaker.ts')), `the speaker thread's modules were seen (${thread.length})`);
  const bgp = pathToFileURL(join(root, 'bgp')).href + '/';
  const foreign = thread.filter((u) => !u.startsWith('node:') && !u.startsWith(bgp));
  t.same(foreign, [], 'nothing outside bgp/ and node:');
});
