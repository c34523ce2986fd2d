// Fills Node's module compile cache with every module Herald can load, so that the processes started from it never
// strip TypeScript types or compile a module from source: run once when the container image is built
// (deploy/Dockerfile, with NODE_COMPILE_CACHE set to the directory the image keeps), and by bench/daemon.ts, both
// through `herald warm-compile-cache` (deploy/herald), which gives it the node flags `herald run` gets: V8 keeps its
// code cache per set of flags.
//
// Why (docs/benchmarks.md "Compile cache"): a module loaded without a cache entry has its types stripped by Node's
// TypeScript stripper, which stays loaded in that thread's isolate; `herald run` with an empty cache holds ~30 MiB
// more in the main thread and ~20 MiB more in the speaker thread, for as long as it runs. The cache directory in the
// image is read-only at run time (readOnlyRootFilesystem): Node reads it and skips writing, which is fine.
//
// Usage: NODE_COMPILE_CACHE=DIR herald warm-compile-cache   (or: herald warm-compile-cache DIR)
// It imports every .ts module under bgp/, src/ and tools/ (importing runs none of them: the CLI entry point and the
// thread entry points act only when started as such), writes the cache and prints how many modules it holds.
// Plain JavaScript, so that nothing is stripped before the cache is on.
import module from 'node:module';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dir = process.argv[2];
const enabled = dir !== undefined ? module.enableCompileCache(dir) : module.enableCompileCache();
const { status, constants } = { status: enabled.status, constants: module.constants.compileCacheStatus };
if (status !== constants.ENABLED && status !== constants.ALREADY_ENABLED) {
  process.stderr.write(`warm-compile-cache: the compile cache is not on (${enabled.message ?? `status ${status}`}): set NODE_COMPILE_CACHE to a writable directory\n`);
  process.exit(1);
}

/** Every TypeScript module (not a declaration file) under `folder`, as absolute paths. */
function modules(folder) {
  return readdirSync(join(root, folder), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.d.ts'))
    .map((e) => join(e.parentPath, e.name))
    .sort();
}

const files = ['bgp', 'src', 'tools'].flatMap(modules);
for (const f of files) await import(pathToFileURL(f).href);
module.flushCompileCache();
process.stdout.write(`warm-compile-cache: ${files.length} modules (and their dependencies) in ${module.getCompileCacheDir()}\n`);
process.exit(0);
