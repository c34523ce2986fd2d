/**
 * Input loading for `herald decode`: decompression and format detection, both by magic bytes, never by file name.
 *
 * Compression: gzip (RFC 1952 magic 1f 8b; node:zlib, concatenated members included) and bzip2 ("BZh" + block size
 * digit; the `seek-bzip` npm package, MIT, multi-stream). Formats: pcap (four magics), pcapng (Section Header Block
 * 0a 0d 0d 0a), otherwise MRT when the first record header is plausible (RFC 6396 §2: known Type, sane Length).
 */
import { createRequire } from 'node:module';
import { gunzipSync } from 'node:zlib';
import type Bunzip from 'seek-bzip';
import { captureFormat } from './capture.ts';
import { looksLikeMrt } from './mrt.ts';

export type Compression = 'none' | 'gzip' | 'bzip2';
export type InputFormat = 'pcap' | 'pcapng' | 'mrt';

/** Compression of a buffer judged by its magic bytes. */
export function compressionOf(buf: Buffer): Compression {
  if (buf.length >= 2 && buf[0] === 0x1f && buf[1] === 0x8b) return 'gzip';
  if (buf.length >= 4 && buf[0] === 0x42 && buf[1] === 0x5a && buf[2] === 0x68 && (buf[3] ?? 0) >= 0x31 && (buf[3] ?? 0) <= 0x39) return 'bzip2';
  return 'none';
}

/** Thrown when the input cannot be decompressed or recognised; the CLI prints its message. */
export class InputError extends Error {
  override name = 'InputError';
}

let bunzipModule: typeof Bunzip | undefined;

/** seek-bzip, loaded on first use (it is only needed for .bz2 input; keeps `herald decode` start-up short). */
function bunzip(): typeof Bunzip {
  bunzipModule ??= createRequire(import.meta.url)('seek-bzip') as typeof Bunzip;
  return bunzipModule;
}

/** Most compression layers {@link decompress} undoes (e.g. a .bz2 of a .gz); more is refused, not passed on silently. */
export const MAX_COMPRESSION_LAYERS = 2;

/**
 * Decompresses as many layers as the magic bytes announce, at most {@link MAX_COMPRESSION_LAYERS}.
 * Throws InputError on corrupt data, and "too many compression layers" when a further layer is still compressed.
 */
export function decompress(buf: Buffer): { bytes: Buffer; compression: Compression } {
  let first: Compression = 'none';
  for (let layer = 0; ; layer++) {
    if (layer === MAX_COMPRESSION_LAYERS) {
      if (compressionOf(buf) !== 'none') throw new InputError(`too many compression layers (more than ${MAX_COMPRESSION_LAYERS})`);
      break;
    }
    const c = compressionOf(buf);
    if (c === 'none') break;
    if (layer === 0) first = c;
    try {
      buf = c === 'gzip' ? gunzipSync(buf) : Buffer.from(bunzip().decode(buf, undefined, true));
    } catch (err) {
      throw new InputError(`${c} data is corrupt: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  return { bytes: buf, compression: first };
}

/** Format of decompressed input judged by its first bytes; undefined when not recognised. */
export function formatOf(buf: Buffer): InputFormat | undefined {
  const capture = captureFormat(buf);
  if (capture) return capture;
  if (looksLikeMrt(buf)) return 'mrt';
  return undefined;
}
