// ESLint flat config: typescript-eslint recommended rules over all TypeScript sources, and the layering of
// docs/architecture.md ("Layers") as import rules, so the picture stays true.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** Import patterns (gitignore style, matched against the import text) with the reason shown when one is used. */
const BGP_INTERNALS = { group: ['**/bgp/**', '!**/bgp/main-thread.ts'], message: 'src/ uses the BGP library through its main-thread entry bgp/main-thread.ts only (the speaker, sessions, RIB and BFD run in the speaker thread)' };
/**
 * `createRequire` loads a package past the import graph (no import line names it, the lint rules above cannot see
 * it). Allowed only where a package is loaded lazily on purpose, each file with its reason: bgp/sys/libc.ts loads
 * `koffi`, bgp/'s one optional native dependency (package.json `optionalDependencies`), on first use of a socket option;
 * src/admin/lazy-compilers.ts loads fastify's schema compilers on the first request that needs them;
 * tools/decode/input.ts loads `unbzip2-stream` for a bzip2 input only.
 */
const CREATE_REQUIRE_FILES = ['bgp/sys/libc.ts', 'src/admin/lazy-compilers.ts', 'tools/decode/input.ts'];
const NO_CREATE_REQUIRE = {
  paths: ['node:module', 'module'].map((name) => ({ name, importNames: ['createRequire'], message: `createRequire loads a package no import names: only ${CREATE_REQUIRE_FILES.join(', ')} may (eslint.config.js)` })),
};
/**
 * The layers of src/ (docs/architecture.md "Layers"), from the ground up: each folder, why it sits where it does, and
 * the folders it may import (besides itself, bgp/main-thread.ts and src/version.ts). Every other src/ folder is refused, so
 * a new folder must be placed here before anything can import it, and no arrow climbs back up.
 */
export const SRC_LAYERS = {
  files: { may: [], why: 'src/files is the ground floor beside src/net: the one bounded reader of every file Herald reads (the kubeconfig, secret files, the config file, manifests): below every layer, so src/k8s reads its kubeconfig through it as src/config reads the config file' },
  net: { may: [], why: 'src/net is the ground floor: addresses, prefixes, HTTP helpers' },
  k8s: { may: ['files', 'net'], why: 'src/k8s (client, informers, the object store) knows nothing of Herald\'s configuration, routes or status' },
  config: { may: ['files', 'net'], why: 'the configuration file stands alone: the daemon maps it to what each stage needs' },
  health: { may: ['net', 'k8s'], why: 'health checks know nothing of desired routes or the config file: the daemon builds their specs' },
  leader: { may: ['net', 'k8s'], why: 'leader election is a Lease and nothing else' },
  events: { may: ['net', 'k8s'], why: 'the Event recorder writes what it is given' },
  admin: { may: ['net'], why: 'the admin API serves a DaemonView: it knows the view, not the daemon' },
  crd: { may: ['net', 'k8s', 'config'], why: 'Herald\'s kinds are views of the configuration schema' },
  migrate: { may: ['files', 'net', 'k8s', 'config', 'crd'], why: 'herald migrate reads other implementations\' objects and writes Herald\'s kinds, checked by src/crd; only the CLI loads it' },
  sources: { may: ['files', 'net', 'k8s', 'config'], why: 'sources feed the controller, never the other way' },
  controller: { may: ['net', 'k8s', 'sources'], why: 'desired routes are pure: no health checks, no config file (the daemon maps its context), no daemon' },
  status: { may: ['net', 'k8s', 'config', 'crd', 'sources', 'leader', 'admin'], why: 'status is written from views and objects, never from the allocator or the controller' },
  ipam: { may: ['net', 'k8s', 'sources', 'leader', 'events', 'status'], why: 'the allocator writes Service status through src/status' },
  metrics: { may: ['net', 'admin', 'status'], why: 'metrics read providers the daemon sets: views, not stages' },
  daemon: { may: ['files', 'net', 'k8s', 'config', 'health', 'leader', 'events', 'admin', 'crd', 'sources', 'controller', 'status', 'ipam', 'metrics'], why: 'the daemon composes every stage; only the CLI sits above it' },
  cli: { may: ['files', 'net', 'k8s', 'config', 'health', 'leader', 'events', 'admin', 'crd', 'sources', 'controller', 'status', 'ipam', 'metrics', 'daemon', 'migrate'], why: 'the CLI is the top floor' },
};
const layer = (folder, why) => ({ group: [`**/src/${folder}/**`, `../${folder}/**`, `../../${folder}/**`], message: why });
/** The import patterns refused to `src/<folder>`: every other layer it may not use. */
const refused = (folder) => Object.keys(SRC_LAYERS).filter((f) => f !== folder && !SRC_LAYERS[folder].may.includes(f)).map((f) => layer(f, `src/${folder} may not import src/${f}: ${SRC_LAYERS[folder].why} (it may import ${SRC_LAYERS[folder].may.join(', ') || 'no other src/ folder'})`));

export default tseslint.config(
  { ignores: ['node_modules/**', '.tap/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', setInterval: 'readonly', clearInterval: 'readonly', setImmediate: 'readonly', URL: 'readonly' },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-restricted-imports': 'off',
      '@typescript-eslint/no-restricted-imports': ['error', NO_CREATE_REQUIRE],
    },
  },
  { files: CREATE_REQUIRE_FILES, rules: { '@typescript-eslint/no-restricted-imports': 'off' } },
  {
    files: ['bgp/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: ['**/src/**', '../src/*', '../../src/*'], message: 'bgp/ must not import from src/' }, { group: ['@kubernetes/*', 'fastify', 'pino', 'prom-client'], message: 'bgp/ is a dependency-free protocol library' }] }],
    },
  },
  {
    files: ['src/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [BGP_INTERNALS] }],
      // Seams are typed (implements/satisfies), never cast through unknown.
      'no-restricted-syntax': ['error', { selector: "TSAsExpression > TSAsExpression.expression[typeAnnotation.type='TSUnknownKeyword']", message: 'no `as unknown as` in src/: type the seam (implements/satisfies) instead' }],
    },
  },
  ...Object.keys(SRC_LAYERS).map((folder) => ({
    files: [`src/${folder}/**/*.ts`],
    rules: { 'no-restricted-imports': ['error', { patterns: [BGP_INTERNALS, ...refused(folder)] }] },
  })),
  {
    // Every folder of src/ has its place in SRC_LAYERS (test/src/layers.test.ts checks the list is whole).
    files: ['src/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [BGP_INTERNALS, ...Object.keys(SRC_LAYERS).map((f) => layer(f, 'src/version.ts sits below every folder'))] }] },
  },
  {
    // `herald decode` is a tool beside the daemon: it uses the BGP library through its codec façade only
    // (bgp/codec/index.ts: no speaker, sessions, RIB or BFD loaded), and nothing of the daemon (src/) or the daemon's
    // npm dependencies.
    files: ['tools/decode/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [
        { group: ['**/src/**', '**/src'], message: 'tools/decode/ must not import from src/ (the daemon)' },
        { regex: '(^|/)bgp(/|$)(?!codec/index\\.ts$)', message: 'tools/decode/ imports bgp/ only through its codec façade bgp/codec/index.ts' },
        { group: ['@kubernetes/*', 'fastify', 'pino', 'prom-client', 'zod', 'yaml', 'ip-address', 'koffi'], message: 'tools/decode/ does not load the daemon\'s dependencies' },
      ] }],
    },
  },
);
