/**
 * The parse job of a big manifest file (src/config/parse-worker.ts): its bytes → the objects Herald reads, trimmed
 * to the fields it keeps (src/k8s/trim.ts: the answer carries no more than the cache would keep), or the file's
 * first problem, as src/sources/manifest-parse.ts gives them on the daemon's own thread.
 */
import { libraryMaxBytes, serveParseJob } from '../config/parse-worker.ts';
import { trimObject } from '../k8s/trim.ts';
import { parseManifest } from './manifest-parse.ts';
import type { ManifestParse } from './manifest-parse.ts';

const max = libraryMaxBytes();
// A document the YAML library would compose beyond this worker's heap is refused at once (parse-worker.ts).
serveParseJob(({ path, bytes }: { path: string; bytes: Uint8Array }): ManifestParse => {
  const r = parseManifest(path, Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'), max !== undefined ? { libraryMaxBytes: max } : {});
  return 'error' in r ? r : { objects: r.objects.map((p) => ({ kind: p.kind, obj: trimObject(p.kind, p.obj) })) };
});
