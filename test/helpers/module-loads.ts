/**
 * What a process loads: runs `probe` (the source of an ES module) in a new Node.js process with a module load hook
 * preloaded (`--import`) into every thread, and answers the URLs each thread loaded, in order. For the tests of what
 * a thread or an entry loads (test/bgp/speaker-thread/modules.test.ts, test/bgp/main-thread.test.ts).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

/** The URLs loaded by the main thread and by the other threads, with the probe's exit status and stderr. */
export interface ModuleLoads {
  readonly status: number | null;
  readonly stderr: string;
  readonly main: readonly string[];
  readonly threads: readonly string[];
}

/** Runs `probe` (module source; it may import by file URL) and records every module load (60 s at most). */
export function moduleLoads(probe: string): ModuleLoads {
  const dir = mkdtempSync(join(tmpdir(), 'herald-module-loads-'));
  try {
    const out = join(dir, 'loads.txt');
    const hook = join(dir, 'hook.mjs');
    writeFileSync(hook, `
import module from 'node:module';
import { appendFileSync } from 'node:fs';
import { isMainThread } from 'node:worker_threads';
module.registerHooks({ load(url, context, next) { appendFileSync(${JSON.stringify(out)}, (isMainThread ? 'main ' : 'thread ') + url + '\\n'); return next(url, context); } });
`);
    const file = join(dir, 'probe.mjs');
    writeFileSync(file, probe);
    const r = spawnSync(process.execPath, ['--import', pathToFileURL(hook).href, file], { encoding: 'utf8', timeout: 60_000 });
    let lines: string[] = [];
    try {
      lines = readFileSync(out, 'utf8').trim().split('\n');
    } catch {
      // nothing loaded (the probe did not start): reported through status and stderr
    }
    const of = (who: string) => lines.filter((l) => l.startsWith(`${who} `)).map((l) => l.slice(who.length + 1));
    return { status: r.status, stderr: r.stderr, main: of('main'), threads: of('thread') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
