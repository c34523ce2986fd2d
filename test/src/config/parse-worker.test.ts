// Issue 35 N2/N3: big input is parsed in a parse worker (a child process) whose heap is capped at what the pod has
// free; running out of it ends the worker, never this process, and the input is refused in words. JSON input takes
// JSON.parse instead of the YAML library.
import t from 'tap';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { ConfigError, ConfigFile, parseConfigText } from '../../../src/config/load.ts';
import { memoryLimit, parseBudget, ParseMemoryError, runParseJob } from '../../../src/config/parse-worker.ts';
import type { ParseBudget } from '../../../src/config/parse-worker.ts';
import { LineIndex, parseJsonText } from '../../../src/config/yaml.ts';

const CONFIG_JOB = new URL('../../../src/config/config-parse-job.ts', import.meta.url);
const budget = (heapMib: number): ParseBudget => ({ heapMib, limit: { mib: 320, source: 'test' }, rssMib: 150 });
/** A flow-style (not JSON) configuration the YAML library parses whole: ~100 bytes of memory per byte of text. */
const flowConfig = (n: number): string => `{bgp: {localAs: 65000, routerId: 10.0.0.1}, routes: [${Array.from({ length: n }, (_, i) => `{prefix: 10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}/32, localPref: 100}`).join(', ')}]}\n`;

t.test('the memory limit: HERALD_MEMORY_LIMIT_MIB first; the budget is the limit less RSS, a reserve and the worker', async (t) => {
  t.same(memoryLimit({ HERALD_MEMORY_LIMIT_MIB: '320' }), { mib: 320, source: 'HERALD_MEMORY_LIMIT_MIB' });
  t.not(memoryLimit({ HERALD_MEMORY_LIMIT_MIB: 'lots' })?.source, 'HERALD_MEMORY_LIMIT_MIB', 'a malformed value is ignored');
  t.same(parseBudget({ HERALD_MEMORY_LIMIT_MIB: '320' }, 150 * 1048576), { heapMib: 320 - 150 - 32 - 48, limit: { mib: 320, source: 'HERALD_MEMORY_LIMIT_MIB' }, rssMib: 150 });
});

t.test('input the YAML library cannot parse in the worker\'s heap is refused at once, with what it needs', async (t) => {
  const text = flowConfig(20_000);
  const t0 = performance.now();
  const err = await runParseJob(CONFIG_JOB, Buffer.from(text), { what: 'the configuration file', fix: 'split it', budget: budget(16) }).catch((e: unknown) => e);
  t.type(err, ParseMemoryError);
  const need = Math.ceil((text.length * 60) / 1048576);
  t.equal((err as Error).message, `not parsed: the configuration file needs at least ${need} MiB to parse, more than this pod has free: the memory limit of 320 MiB (test) with 150 MiB in use, which leaves a parse 16 MiB (split it, or raise the container's memory limit)`);
  t.comment(`refused after ${(performance.now() - t0).toFixed(0)} ms`);
});

t.test('a parse that runs out of its heap ends the worker, not this process, and says so', async (t) => {
  const pid = process.pid;
  const err = await runParseJob(new URL('./fixtures/alloc-job.ts', import.meta.url), 0, { what: 'the configuration file', fix: 'split it', budget: budget(16) }).catch((e: unknown) => e);
  t.type(err, ParseMemoryError);
  t.equal((err as Error).message, "not parsed: the configuration file needs more memory to parse than this pod has free: the memory limit of 320 MiB (test) with 150 MiB in use, which leaves a parse 16 MiB, and the parse ran out of it (split it, or raise the container's memory limit)");
  t.equal(process.pid, pid, 'this process lives on');
  const ok = await runParseJob(CONFIG_JOB, Buffer.from(flowConfig(200)), { what: 'x', fix: 'y', budget: budget(64) });
  t.same(ok, parseConfigText(flowConfig(200)), 'the same worker path answers what the main thread would');
});

t.test('no worker is started without room for one; a slow parse is cut', async (t) => {
  await t.rejects(runParseJob(CONFIG_JOB, Buffer.from('{}'), { what: 'this manifest file', fix: 'split it', budget: budget(10) }), { name: 'ParseMemoryError', message: /not parsed: this manifest file needs a parse worker, and .* less than the 16 MiB it needs to start/ });
  await t.rejects(runParseJob(CONFIG_JOB, Buffer.from(flowConfig(5000)), { what: 'the configuration file', fix: 'split it', budget: budget(256), timeoutMs: 1 }), { name: 'ParseMemoryError', message: /took longer than 0.001 s to parse/ });
});

t.test('ConfigFile: a big file over the pod\'s memory is a ConfigError naming the file; the next good file loads', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'herald-parse-worker-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const path = join(dir, 'herald.yaml');
  await writeFile(path, flowConfig(40_000));
  // The budget from the limit: this process's RSS + reserve + worker + about 40 MiB of heap.
  const limit = Math.round(process.memoryUsage.rss() / 1048576) + 32 + 48 + 40;
  const file = new ConfigFile(path, { env: { HERALD_MEMORY_LIMIT_MIB: String(limit) }, parseInWorkerBytes: 1024 });
  const err = await file.load().catch((e: unknown) => e);
  t.type(err, ConfigError);
  t.match((err as ConfigError).issues, [{ path: '(file)', message: /not parsed: the configuration file needs at least \d+ MiB to parse, more than this pod has free: the memory limit of \d+ MiB \(HERALD_MEMORY_LIMIT_MIB\)/ }]);
  await writeFile(path, stringify({ bgp: { localAs: 65000, routerId: '10.0.0.1' }, routes: Array.from({ length: 100 }, (_, i) => ({ prefix: `10.0.${i}.0/24` })) }));
  t.equal((await file.reload())?.routes.length, 100, 'a file that fits is parsed and loads');
});

t.test('JSON text takes JSON.parse, with the YAML rules: the same values, duplicate keys refused', async (t) => {
  const text = JSON.stringify({ bgp: { localAs: 65000, routerId: '10.0.0.1' }, routes: [{ prefix: '10.0.0.0/24', localPref: 1e2, communities: ['65000:1'] }] });
  t.same(parseConfigText(text), parseConfigText(text, { fastPath: false }), 'JSON.parse and the YAML library agree');
  const idx = (s: string) => new LineIndex(s);
  t.same(parseJsonText('{"a": 1, "b": {"a": 2, "c": [{"a": 3}, {"a": 4}]}}', idx('x')), { ok: true, value: { a: 1, b: { a: 2, c: [{ a: 3 }, { a: 4 }] } } }, 'one key per object is fine');
  const dup = '{\n  "a": 1,\n  "b": {"x": "\\"", "\\u0078": 2}\n}';
  t.same(parseJsonText(dup, idx(dup)), { ok: false, problems: [{ message: 'Map keys must be unique', line: 3, column: 20 }] }, 'a key repeated (escaped) in its object');
  t.match(parseConfigText('{"bgp": {"localAs": 1, "localAs": 2}}'), { ok: false, errors: [{ path: '(yaml)', message: /^Map keys must be unique at line 1, column 24$/ }] });
  t.equal(parseJsonText('bgp: {localAs: 1}', idx('')), undefined, 'YAML is left to the YAML library');
  t.equal(parseJsonText('{bgp: {localAs: 1}}', idx('')), undefined, 'flow YAML too');
});

t.test('a big file the routes fast path takes is parsed on the daemon\'s thread, with no worker (issue 34); other big input still goes to one', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'herald-parse-fast-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const path = join(dir, 'herald.yaml');
  const head = 'bgp:\n  localAs: 65000\n  routerId: 10.0.0.1\n';
  const routeLines = Array.from({ length: 10_000 }, (_, i) => `  - prefix: 10.1.${i >> 8}.${i & 255}/32\n`).join('');
  // A memory limit that leaves no room for any worker: what parses here was parsed without one.
  const env = { HERALD_MEMORY_LIMIT_MIB: '1' };
  await writeFile(path, `${head}routes:\n${routeLines}`);
  t.ok(routeLines.length > 128 * 1024, 'over the worker threshold');
  const fast = await new ConfigFile(path, { env }).load();
  t.equal(fast.routes.length, 10_000, 'loaded without a worker');
  const whole = parseConfigText(`${head}routes:\n${routeLines}`);
  t.same(fast, whole.ok ? whole.config : undefined, 'the same configuration as a parse of the whole text');
  // the rest of the file (without the routes block) over the threshold goes to the library whole: a worker
  await writeFile(path, `${head}${`# ${'x'.repeat(78)}\n`.repeat(2000)}routes:\n${routeLines}`);
  await t.rejects(new ConfigFile(path, { env }).load(), { name: 'ConfigError', message: /needs a parse worker/ }, 'a big rest of the file: a worker');
  await writeFile(path, flowConfig(5000));
  await t.rejects(new ConfigFile(path, { env }).load(), { name: 'ConfigError', message: /needs a parse worker/ }, 'flow YAML: a worker');
});
