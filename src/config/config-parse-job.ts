/**
 * The parse job of a big configuration file (src/config/parse-worker.ts): its bytes → the configuration, or every
 * problem, exactly as src/config/load.ts `parseConfigText` gives them on the daemon's own thread.
 */
import { parseConfigText } from './load.ts';
import type { ConfigResult } from './load.ts';
import { libraryMaxBytes, serveParseJob } from './parse-worker.ts';

const max = libraryMaxBytes();
// A text the YAML library would parse whole beyond this worker's heap is refused at once (parse-worker.ts).
serveParseJob((bytes: Uint8Array): ConfigResult => parseConfigText(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'), max !== undefined ? { libraryMaxBytes: max } : {}));
