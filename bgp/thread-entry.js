// Entry point of Herald's worker threads (the speaker thread, bgp/speaker-thread/proxy.ts; the BFD thread,
// bgp/bfd/handle.ts): turns on Node's module compile cache in the new thread, then imports the thread's TypeScript
// module, the last entry of process.argv (the Worker's `argv` option). The cache is per thread and holds the
// type-stripped sources: a thread started without it strips every module again, loading Node's TypeScript stripper
// into its isolate (about 27 MiB and 0.1–1 s of CPU per thread; docs/benchmarks.md). Plain JavaScript, so that
// nothing is stripped before the cache is on.
import module from 'node:module';

module.enableCompileCache?.();
await import(process.argv[process.argv.length - 1]);
// Writes the entries of the modules just loaded now, not only at exit, so that a daemon's first start fills the cache
// for the next one wherever it can be written (bin/herald.js does the same for the main thread).
module.flushCompileCache?.();
