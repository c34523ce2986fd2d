// ESLint flat config: typescript-eslint recommended rules over all TypeScript sources, and the layering of
// docs/architecture.md ("Layers") as import rules, so the picture stays true.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** Import patterns (gitignore style, matched against the import text) with the reason shown when one is used. */
const BGP_INTERNALS = { group: ['**/bgp/**', '!**/bgp/index.ts'], message: 'src/ uses the BGP library through its façade bgp/index.ts only' };
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
const layer = (folder, why) => ({ group: [`**/src/${folder}/**`, `../${folder}/**`, `../../${folder}/**`], message: why });

/** `src/<folder>` may not import the layers listed (its own layer and those below it are allowed). */
const SRC_LAYERS = {
  net: [layer('k8s', 'src/net is the ground floor'), layer('controller', 'src/net is the ground floor'), layer('config', 'src/net is the ground floor'), layer('health', 'src/net is the ground floor'), layer('daemon', 'src/net is the ground floor')],
  k8s: [layer('controller', 'the object store and informers sit below the controller'), layer('sources', 'src/k8s sits below the sources'), layer('daemon', 'src/k8s sits below the daemon'), layer('health', 'src/k8s knows nothing of health checks'), layer('config', 'src/k8s knows nothing of the config file')],
  sources: [layer('controller', 'sources feed the controller, never the other way'), layer('daemon', 'sources sit below the daemon'), layer('health', 'sources know nothing of health checks')],
  config: [layer('controller', 'the config is read by the controller, not the other way'), layer('daemon', 'the config sits below the daemon'), layer('health', 'the config schema stands alone')],
  controller: [layer('daemon', 'desired routes are computed without the daemon'), layer('health', 'desired routes are pure: the health gate comes after them'), layer('config', 'the controller reads its own context, mapped from the config by the daemon')],
  health: [layer('daemon', 'health checks sit below the daemon'), layer('controller', 'health checks know nothing of desired routes'), layer('config', 'check specs are built by the daemon from the config')],
};

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
  ...Object.entries(SRC_LAYERS).map(([folder, patterns]) => ({
    files: [`src/${folder}/**/*.ts`],
    rules: { 'no-restricted-imports': ['error', { patterns: [BGP_INTERNALS, ...patterns] }] },
  })),
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
