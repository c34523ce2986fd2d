#!/usr/bin/env node
// Entry point of the `herald` binary: runs the TypeScript CLI through Node 24's type stripping.
// The compile cache (stored under the OS temp dir) makes every start after the first several times faster.
import module from 'node:module';

module.enableCompileCache?.();
await import('../src/cli/main.ts');
