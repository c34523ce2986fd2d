#!/usr/bin/env node
// Entry point of the `herald` binary: runs the TypeScript CLI through Node 24's type stripping.
// This file itself must parse and run on older Node versions (plain JavaScript, nothing newer than Node 16), so that a
// wrong Node gets one line naming the fix instead of ERR_UNKNOWN_FILE_EXTENSION from the .ts import below.
const REQUIRED_MAJOR = 24;
const major = Number(process.versions.node.split('.')[0]);
if (!(major >= REQUIRED_MAJOR)) {
  process.stderr.write(
    `herald: needs Node.js ${REQUIRED_MAJOR} or newer, found ${process.version} (${process.execPath}): ` +
      `in a checkout run \`npm ci\` once, then \`npm run -s herald -- ...\` (it brings Node ${REQUIRED_MAJOR}); else install Node.js ${REQUIRED_MAJOR}\n`,
  );
  process.exit(1);
}

const command = process.argv[2];
const settings = await import('./node-settings.js');
if (settings.DAEMON_COMMANDS.has(command) && process.env[settings.SETTINGS_ENV] === undefined && typeof process.execve === 'function') {
  // The daemons run with the V8 and malloc settings their memory was measured with, however they are started:
  // re-executed in place (same PID) with them (bin/node-settings.js). Flags given to this node come after ours and win.
  const flags = settings.daemonFlags(settings.memoryLimitMiB());
  process.execve(process.execPath, [process.execPath, ...flags, ...process.execArgv, ...process.argv.slice(1)], settings.daemonEnv());
}
if (process.env[settings.SETTINGS_ENV] === 'applied') delete process.env[settings.SETTINGS_ENV];

// Node's module compile cache (NODE_COMPILE_CACHE, else under the OS temp dir) holds every module with its types
// stripped: a process that finds its modules there never loads Node's TypeScript stripper (~30 MiB in the main
// thread, ~20 MiB in the speaker thread for as long as it runs; docs/benchmarks.md "Compile cache"). Node writes new
// entries at exit; a daemon writes them also once it has started (below), so the first start fills the cache for the
// next wherever it can be written. A read-only cache (the image's) is only read.
const { default: module } = await import('node:module');
module.enableCompileCache?.();
if (settings.DAEMON_COMMANDS.has(command)) {
  for (const ms of [10_000, 120_000]) setTimeout(() => module.flushCompileCache?.(), ms).unref();
}
if (command === 'warm-compile-cache') {
  // Fills the compile cache with every module, once per set of V8 flags (V8 keeps its code cache per set): the
  // daemons' flags, then none (the other commands). Usage: herald warm-compile-cache [DIR] (else NODE_COMPILE_CACHE).
  const { spawnSync } = await import('node:child_process');
  const warm = new URL('../deploy/warm-compile-cache.js', import.meta.url).pathname;
  for (const flags of [settings.daemonFlags(undefined), []]) {
    const r = spawnSync(process.execPath, [...flags, warm, ...process.argv.slice(3)], { stdio: 'inherit', env: settings.daemonEnv() });
    if (r.status !== 0) process.exit(r.status ?? 1);
  }
  process.exit(0);
}
if (command === 'decode') {
  // `herald decode` is a one-shot tool whose start-up counts (issue 12): it loads only the decoder, not the CLI of
  // the admin commands (src/cli/main.ts dispatches `decode` the same way when run directly).
  // Its modules import each other by relative `.ts` paths. Such a path is resolved here against the importing
  // module's URL, without Node's general resolver (file stats, path and URL conversions per import), which cost
  // about 15 ms of CPU of a 110 ms run (docs/decode.md "Performance"). Bare names and `node:` go to Node's resolver.
  module.registerHooks?.({
    resolve(specifier, context, nextResolve) {
      if (specifier.endsWith('.ts') && (specifier.startsWith('./') || specifier.startsWith('../')) && context.parentURL?.startsWith('file:')) {
        return { url: new URL(specifier, context.parentURL).href, format: 'module-typescript', shortCircuit: true };
      }
      return nextResolve(specifier, context);
    },
  });
  const { tierForInput } = await import('../tools/decode/jit.ts');
  const { runDecode } = await import('../tools/decode/cli.ts');
  const argv = process.argv.slice(3);
  runDecode(argv, process.stdout, process.stderr, { beforeDecoding: () => tierForInput(argv) }).then(
    (code) => {
      process.exitCode = code;
    },
    (err) => {
      process.stderr.write(`herald: ${(err && err.message) || String(err)}\n`);
      process.exitCode = 1;
    },
  );
} else {
  await import('../src/cli/main.ts');
}
