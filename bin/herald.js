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

// The compile cache (stored under the OS temp dir) makes every start after the first several times faster.
const { default: module } = await import('node:module');
module.enableCompileCache?.();
if (process.argv[2] === 'decode') {
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
