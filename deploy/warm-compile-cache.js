// Fills Node's module compile cache with every module Herald can load, so that the processes started from it never
// strip TypeScript types or compile a module from source: run once when the container image is built
// (scripts/image.sh, with NODE_COMPILE_CACHE set to the directory the image keeps), and by bench/daemon.ts, both
// through `herald warm-compile-cache` (deploy/herald), which gives it the node flags `herald run` gets: V8 keeps its
// code cache per set of flags.
//
// Why (docs/benchmarks.md "Compile cache"): a module loaded without a cache entry has its types stripped by Node's
// TypeScript stripper, which stays loaded in that thread's isolate; `herald run` with an empty cache holds ~30 MiB
// more in the main thread and ~20 MiB more in the speaker thread, for as long as it runs. The cache directory in the
// image is read-only at run time (readOnlyRootFilesystem): Node reads it and skips writing, which is fine.
//
// Usage: NODE_COMPILE_CACHE=DIR herald warm-compile-cache [--reproducible]   (or: herald warm-compile-cache DIR)
// It imports every .ts module under bgp/, src/ and tools/ (importing runs none of them: the CLI entry point and the
// thread entry points act only when started as such), writes the cache and prints how many modules it holds.
// Plain JavaScript, so that nothing is stripped before the cache is on.
//
// --reproducible (scripts/image.sh): keep only the entries that are the same bytes on every build, Node's transpile
// cache (each module's stripped TypeScript), and delete V8's code cache entries, which differ from one run to the
// next (V8 seeds its string hashes at random per process) and would give every image build another digest. The
// transpile entries are what spares the stripper (above); without a code cache entry V8 compiles a module from its
// stripped source. An entry's file name is Node's key, the CRC-32 of the entry's type byte followed by the module's
// URL (GetCacheKey in compile_cache.cc of Node's sources; type 2 = kStrippedTypeScript): if Node changes it, no entry matches and
// this fails instead of shipping an empty cache.
import module from 'node:module';
import { readdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { crc32 } from 'node:zlib';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const reproducible = args.includes('--reproducible');
const dir = args.find((a) => a !== '--reproducible');
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
const cacheDir = module.getCompileCacheDir();
if (reproducible) {
  const STRIPPED_TYPESCRIPT = 2;
  const keep = new Set(files.map((f) => crc32(Buffer.concat([Buffer.from([STRIPPED_TYPESCRIPT]), Buffer.from(pathToFileURL(f).href)])).toString(16).padStart(8, '0')));
  const entries = readdirSync(cacheDir);
  const kept = entries.filter((e) => keep.has(e));
  if (kept.length !== files.length) {
    process.stderr.write(`warm-compile-cache: --reproducible found ${kept.length} transpile entries for ${files.length} modules in ${cacheDir}: Node's cache key (compile_cache.cc in Node's sources) changed; update deploy/warm-compile-cache.js\n`);
    process.exit(1);
  }
  for (const e of entries) if (!keep.has(e)) rmSync(join(cacheDir, e));
  process.stdout.write(`warm-compile-cache: ${files.length} modules, transpile entries only (V8's code cache dropped: --reproducible), in ${cacheDir}\n`);
} else {
  process.stdout.write(`warm-compile-cache: ${files.length} modules (and their dependencies) in ${cacheDir}\n`);
}
process.exit(0);
