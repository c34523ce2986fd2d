// The daemon never loads Node's bundled undici (src/net/node-http.ts): an ESM import of node:http anywhere in its
// modules would, through the ES facade's lazy WebSocket getters, and keep ~13 MiB for the process's lifetime.
// Each check runs in a fresh child process, which reports the built-in modules Node loaded (process.moduleLoadList).
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const root = new URL('../../../', import.meta.url).pathname;

/** Imports `specifiers` in a fresh Node and says whether Node loaded undici. */
function loadsUndici(specifiers: string[]): boolean {
  const code = `for (const m of ${JSON.stringify(specifiers)}) await import(m);\nprocess.stdout.write(String(process.moduleLoadList.some((m) => m.includes('undici'))));`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', code], { encoding: 'utf8', timeout: 60_000, env: { ...process.env, NODE_DISABLE_COMPILE_CACHE: '1' } });
  if (r.status !== 0) throw new Error(`child failed (${r.status ?? r.signal}): ${r.stderr}`);
  return r.stdout === 'true';
}

t.test('an ESM import of node:http loads undici in this Node (the check below can fail)', async (t) => {
  t.equal(loadsUndici(['node:http']), true);
  t.equal(loadsUndici(['node:net']), false);
});

t.test('every module of src/ and bgp/ loads without undici', async (t) => {
  const modules = ['src', 'bgp'].flatMap((dir) =>
    readdirSync(join(root, dir), { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.d.ts'))
      .map((e) => pathToFileURL(join(e.parentPath, e.name)).href),
  );
  t.ok(modules.length > 100, `${modules.length} modules`);
  t.ok(modules.some((m) => m.endsWith('/src/daemon/run.ts')) && modules.some((m) => m.endsWith('/src/k8s/client.ts')), 'the daemon and its Kubernetes client are among them');
  t.equal(loadsUndici(modules), false);
});
