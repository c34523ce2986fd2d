/**
 * The parse job of a big configuration file (src/config/parse-worker.ts): its bytes → the configuration, or every
 * problem, exactly as src/config/load.ts `parseConfigText` gives them on the daemon's own thread.
 */
import { parseConfigText } from './load.ts';
import type { ConfigResult } from './load.ts';
import { serveParseJob } from './parse-worker.ts';

serveParseJob((bytes: Uint8Array): ConfigResult => parseConfigText(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8')));
