#!/usr/bin/env node
// Entry point of the `herald` binary: runs the TypeScript CLI through Node 24's type stripping.
import '../src/cli/main.ts';
