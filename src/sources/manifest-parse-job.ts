/**
 * The parse job of a big manifest file (src/config/parse-worker.ts): its bytes → the objects Herald reads, trimmed
 * to the fields it keeps (src/k8s/trim.ts: the answer carries no more than the cache would keep), or the file's
 * first problem, as src/sources/manifest-parse.ts gives them on the daemon's own thread.
 */
import { serveParseJob } from '../config/parse-worker.ts';
import { trimObject } from '../k8s/trim.ts';
import { parseManifest } from './manifest-parse.ts';
import type { ManifestParse } from './manifest-parse.ts';

serveParseJob(({ path, bytes }: { path: string; bytes: Uint8Array }): ManifestParse => {
  const r = parseManifest(path, Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'));
  return 'error' in r ? r : { objects: r.objects.map((p) => ({ kind: p.kind, obj: trimObject(p.kind, p.obj) })) };
});
