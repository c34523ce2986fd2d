/**
 * Location of the third-party reference data (`../shared/data/bgp/` next to the repository; README inside).
 * Tests skip with a visible message only when it is absent (CI has it).
 */
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

/** Absolute path of shared/data/bgp, resolved from the repository root. */
export const SHARED_BGP = fileURLToPath(new URL('../../../../shared/data/bgp/', import.meta.url));

export const SHARED_PRESENT = existsSync(SHARED_BGP);

/** Every file under `dir` (recursive), as absolute paths, sorted. */
export function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...filesUnder(p));
    else out.push(p);
  }
  return out;
}

/** The octets of a shared file, gunzipped when it is gzip (by its magic). */
export function readMaybeGzip(path: string): Buffer {
  const raw = readFileSync(path);
  return raw[0] === 0x1f && raw[1] === 0x8b ? gunzipSync(raw) : raw;
}
