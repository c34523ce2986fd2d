/**
 * The container image's compile cache (deploy/warm-compile-cache.js, scripts/image.sh): filled once, it holds every
 * module `herald run` loads in its main thread and its speaker thread, so no thread of a process started from it
 * loads Node's TypeScript stripper (~30 MiB in the main thread, ~20 MiB in the speaker thread: docs/benchmarks.md
 * "Compile cache"). Read through Node's own trace of the cache (NODE_DEBUG_NATIVE=COMPILE_CACHE).
 */
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { daemonFlags } from '../../bin/node-settings.js';

const root = new URL('../../', import.meta.url).pathname;

/** Loads what `herald run` loads with a Kubernetes source, and starts (and stops) a speaker thread. */
const PROBE = `
const { SpeakerProxy } = await import(${JSON.stringify(join(root, 'bgp/index.ts'))});
for (const m of ['src/daemon/run.ts', 'src/k8s/client.ts', 'src/sources/kubernetes.ts', 'src/k8s/secrets.ts', 'src/events/recorder.ts', 'src/daemon/service-events.ts', 'src/status/node-status.ts']) await import(${JSON.stringify(root)} + m);
const p = SpeakerProxy.start({ localAs: 65001, bgpIdentifier: '10.0.0.1' });
await p.ready();
await p.stop({ mode: 'departure', waitTimeSec: 0 });
process.exit(0);
`;

t.test('deploy/warm-compile-cache.js fills the cache with every module of the main and the speaker thread', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'herald-compile-cache-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  // As scripts/image.sh runs it: through the entrypoint, whose node flags the cache is kept for.
  const warm = spawnSync('sh', [join(root, 'deploy/herald'), 'warm-compile-cache', join(dir, 'cache')], { encoding: 'utf8', timeout: 120_000, env: { ...process.env, HERALD_HOME: root, PATH: `${dirname(process.execPath)}:${process.env['PATH'] ?? ''}` } });
  t.equal(warm.status, 0, warm.stderr);
  t.match(warm.stdout, /^warm-compile-cache: \d+ modules/);
  t.equal(readdirSync(join(dir, 'cache')).length, 2, 'one cache per set of V8 flags: the daemons\' and the other commands\' (none)');
  const probe = join(dir, 'probe.mjs');
  writeFileSync(probe, PROBE);
  const env: NodeJS.ProcessEnv = { ...process.env, NODE_COMPILE_CACHE: join(dir, 'cache'), NODE_DEBUG_NATIVE: 'COMPILE_CACHE' };
  delete env['NODE_DISABLE_COMPILE_CACHE'];
  // With the node flags bin/herald.js gives `herald run` (bin/node-settings.js; V8 keeps its code cache per set of flags).
  const flags = daemonFlags(undefined);
  t.ok(flags.length > 0, `the node flags of \`herald run\`: ${flags.join(' ')}`);
  const run = spawnSync(process.execPath, [...flags, probe], { encoding: 'utf8', env, timeout: 120_000 });
  t.equal(run.status, 0, run.stderr.slice(-2000));
  const trace = run.stderr + run.stdout;
  const hits = trace.split('\n').filter((l) => /retrieving transpile cache for StrippedTypeScript .*\.ts\.\.\.success/.test(l));
  t.ok(hits.length > 100, `the modules came from the cache (${hits.length})`);
  t.ok(hits.some((l) => l.includes('/bgp/speaker-thread/worker.ts')), 'the speaker thread\'s too (only it loads worker.ts here)');
  const stripped = trace.split('\n').filter((l) => /no transpile cache for StrippedTypeScript/.test(l));
  t.same(stripped, [], 'no module had its types stripped');
});

t.test('--reproducible keeps only the transpile entries, the same bytes on every run', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'herald-compile-cache-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const env = { ...process.env, HERALD_HOME: root, PATH: `${dirname(process.execPath)}:${process.env['PATH'] ?? ''}` };
  const files = (d: string): string[] => readdirSync(d, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name)).sort();
  const runs = [join(dir, 'a'), join(dir, 'b')].map((d) => {
    const r = spawnSync('sh', [join(root, 'deploy/herald'), 'warm-compile-cache', d, '--reproducible'], { encoding: 'utf8', timeout: 120_000, env });
    t.equal(r.status, 0, r.stderr);
    t.match(r.stdout, /transpile entries only/);
    return files(d).map((f) => [relative(d, f), readFileSync(f).toString('base64')]);
  });
  t.ok(runs[0]!.length > 200, `${runs[0]!.length} entries (each module, for two sets of node flags)`);
  t.same(runs[0], runs[1], 'two runs write the same files, byte for byte (an image build is reproducible)');
});

t.test('scripts/image.sh fills the cache as the DaemonSet\'s user, reproducibly, and points Node at it', async (t) => {
  const text = readFileSync(join(root, 'scripts/image.sh'), 'utf8');
  t.match(text, /--env NODE_COMPILE_CACHE=\/app\/\.compile-cache/, 'NODE_COMPILE_CACHE=/app/.compile-cache');
  t.match(text, /cp deploy\/warm-compile-cache\.js /, 'the warmer is in the image');
  t.match(text, /chroot --userspec=1000:1000 [^\n]*\n[^\n]*NODE_COMPILE_CACHE=\/app\/\.compile-cache herald warm-compile-cache --reproducible/, 'filled through the entrypoint (its node flags) as uid 1000 (Node keeps the entries per uid; the DaemonSet runs as 1000)');
});
