/**
 * Node's `http` and `https` modules for the daemon, taken with `process.getBuiltinModule` instead of an ESM `import`.
 *
 * Why: an ESM import of `node:http` builds the module's ES facade, which reads every export once, and three of them
 * (`WebSocket`, `CloseEvent`, `MessageEvent`) are getters that load Node's bundled undici, its fetch and WebSocket
 * client. Herald's daemon never uses it, yet held it for its lifetime: about 13 MiB of RSS and 60 ms of CPU at start
 * (docs/benchmarks.md "Levers"). `process.getBuiltinModule` (Node.js 22.3+, `process` docs) returns the module
 * itself, with its types, and builds no facade. Type-only imports of `node:http` are erased and cost nothing.
 * test/src/net/node-http.test.ts checks that the daemon's modules never load undici.
 */

/** Node's `node:http` module. */
export const http = process.getBuiltinModule('node:http');

/** Node's `node:https` module. */
export const https = process.getBuiltinModule('node:https');
