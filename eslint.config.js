// ESLint flat config: typescript-eslint recommended rules over all TypeScript sources.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

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
    },
  },
  {
    files: ['bgp/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: ['**/src/**', '../src/*', '../../src/*'], message: 'bgp/ must not import from src/' }, { group: ['@kubernetes/*', 'fastify', 'pino', 'prom-client'], message: 'bgp/ is a dependency-free protocol library' }] }],
    },
  },
  {
    // `herald decode` is a tool beside the daemon: it uses the BGP library through its façade only, and nothing of
    // the daemon (src/) or the daemon's npm dependencies.
    files: ['tools/decode/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [
        { group: ['**/src/**', '**/src'], message: 'tools/decode/ must not import from src/ (the daemon)' },
        { group: ['**/bgp/**', '!**/bgp/index.ts'], message: 'tools/decode/ imports bgp/ only through bgp/index.ts' },
        { group: ['@kubernetes/*', 'fastify', 'pino', 'prom-client', 'zod', 'yaml', 'ip-address', 'koffi'], message: 'tools/decode/ does not load the daemon\'s dependencies' },
      ] }],
    },
  },
);
