/**
 * Input of `herald decode`: opening a file, standard input or a FIFO as a stream, undoing gzip and bzip2 layers, and
 * deciding the format from the first octets, never from the file name and never after reading more than needed.
 *
 * Compression: gzip (RFC 1952 magic 1f 8b; node:zlib, concatenated members included) and bzip2 ("BZh" + block size
 * digit; the `unbzip2-stream` npm package, MIT, concatenated streams included), at most two layers. Formats: pcap
 * (four magics), pcapng (Section Header Block 0a 0d 0d 0a), MRT when the first record header is plausible (RFC 6396
 * §2: known Type, Length up to 16 MiB), hex text when the first characters are hex digits (separators and "0x"
 * allowed) that start with a BGP marker (16 × ff, RFC 4271 §4.1). Anything else is refused at once with an
 * {@link InputError} that names what was expected.
 */
import { constants as fsConstants, createReadStream, openSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { Readable, Transform, pipeline } from 'node:stream';
import { createGunzip } from 'node:zlib';
import type unbzip2Stream from 'unbzip2-stream';
import { captureFormat } from './capture.ts';
import { looksHex } from './hex.ts';
import { looksLikeMrt } from './mrt.ts';

export type Compression = 'gzip' | 'bzip2';
export type InputFormat = 'pcap' | 'pcapng' | 'mrt' | 'hex';

/** What `herald decode` reads, for error messages. */
export const EXPECTED = 'expected a pcap or pcapng capture, an MRT dump or BGP messages in hex (plain, gzip or bzip2)';

/** Most compression layers undone (e.g. a .bz2 of a .gz); a further layer is refused, not passed on silently. */
export const MAX_COMPRESSION_LAYERS = 2;

/** How long a named FIFO, socket or device may take to deliver the octets that tell its format (ms). */
export const FIRST_OCTETS_TIMEOUT_MS = 500;

/** Octets read at a time from a file. */
const CHUNK = 256 * 1024;

/** The input cannot be decoded at all (unknown format, empty, corrupt compression): one error line, exit 1. */
export class InputError extends Error {
  override name = 'InputError';
  /** Octets of the (decompressed) input read before the problem showed: the error line's `offset`. */
  readonly offset: number;
  constructor(message: string, offset = 0) {
    super(message);
    this.offset = offset;
  }
}

/** The input cannot be opened (missing, a directory, no permission): a usage error, exit 2. */
export class OpenError extends Error {
  override name = 'OpenError';
}

/** An opened input: its octets as a stream; `close()` releases the file or pipe. */
export interface OpenedInput {
  readonly stream: Readable;
  /** True for a FIFO, socket or device given by name: its first octets must come within FIRST_OCTETS_TIMEOUT_MS. */
  readonly mayStall: boolean;
  close(): void;
}

/**
 * Opens `file` ("-" = standard input) for streaming. FIFOs and sockets are opened non-blocking (an open of a FIFO
 * without a writer would otherwise hang). Throws OpenError for a missing file, a directory or a permission error.
 */
export async function openInput(file: string): Promise<OpenedInput> {
  if (file === '-') return { stream: process.stdin, mayStall: false, close: () => process.stdin.pause() };
  let st;
  try {
    st = await stat(file);
  } catch (e) {
    throw new OpenError(openProblem(file, e));
  }
  if (st.isDirectory()) throw new OpenError(`cannot read ${file}: is a directory (${EXPECTED})`);
  let stream: Readable;
  try {
    if (st.isFIFO() || st.isSocket()) {
      const { Socket } = await import('node:net');
      stream = new Socket({ fd: openSync(file, fsConstants.O_RDONLY | fsConstants.O_NONBLOCK), readable: true, writable: false });
    } else {
      stream = createReadStream(file, { highWaterMark: CHUNK });
      await new Promise<void>((resolve, reject) => {
        stream.once('open', () => resolve());
        stream.once('error', reject);
      });
    }
  } catch (e) {
    throw new OpenError(openProblem(file, e));
  }
  stream.on('error', () => {}); // read errors surface through the iterator; this keeps them from being unhandled
  return { stream, mayStall: !st.isFile(), close: () => stream.destroy() };
}

function openProblem(file: string, e: unknown): string {
  const code = (e as NodeJS.ErrnoException).code;
  const why = code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : code === 'EISDIR' ? 'is a directory' : e instanceof Error ? e.message : String(e);
  return `cannot read ${file}: ${why}`;
}

/** Compression announced by the first octets, 'unknown' when there are too few to tell, undefined when none. */
function compressionOf(head: Buffer, ended: boolean): Compression | 'unknown' | undefined {
  if (head.length >= 2 && head[0] === 0x1f && head[1] === 0x8b) return 'gzip';
  const bz = [0x42, 0x5a, 0x68];
  for (let i = 0; i < Math.min(3, head.length); i++) if (head[i] !== bz[i]) return undefined;
  if (head.length < 4) return ended ? undefined : 'unknown';
  const level = head[3] as number;
  return level >= 0x31 && level <= 0x39 ? 'bzip2' : undefined;
}

/** Format announced by the first (decompressed) octets, 'unknown' when there are too few to tell. */
export function formatOf(head: Buffer, ended: boolean): InputFormat | 'unknown' | undefined {
  const capture = captureFormat(head);
  if (capture) return capture;
  if (head.length < 4 && !ended) return 'unknown';
  if (looksLikeMrt(head)) return 'mrt';
  // An MRT header needs 12 octets; its Type (octets 4-5) already rules it out when unknown.
  if (head.length < 12 && !ended && (head.length < 6 || looksLikeMrt(Buffer.concat([head, Buffer.alloc(12 - head.length)])))) return 'unknown';
  const hex = looksHex(head, ended);
  if (hex === true) return 'hex';
  return hex === 'unknown' ? 'unknown' : undefined;
}

/** The decided input: its format and its (decompressed) octets, the ones already looked at included. */
export interface SniffedInput {
  /** 'empty' for compressed data that decompresses to nothing (RIS writes such dumps in quiet periods). */
  readonly format: InputFormat | 'empty';
  readonly chunks: AsyncIterable<Buffer>;
  /** Compression layers undone, outermost first. */
  readonly compression: readonly Compression[];
}

/** Octets of the first chunks, and whether the stream ended there. */
interface Head {
  head: Buffer;
  ended: boolean;
}

function deadline<T>(p: Promise<T>, ms: number, what: () => string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new InputError(what())), Math.max(0, ms));
  });
  return Promise.race([p, expired]).finally(() => clearTimeout(timer));
}

/** Async iterator over `head` then the rest of `it`; returning it also returns `it`. */
async function* chain(head: Buffer, it: AsyncIterator<Buffer>): AsyncGenerator<Buffer> {
  try {
    if (head.length > 0) yield head;
    for (;;) {
      const r = await it.next();
      if (r.done) return;
      yield r.value;
    }
  } finally {
    await it.return?.();
  }
}

/** node:stream Transform over unbzip2-stream's classic stream. */
function bunzip2(): Transform {
  const inner = (createRequire(import.meta.url)('unbzip2-stream') as typeof unbzip2Stream)();
  let failure: Error | undefined;
  const out = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      if (!failure) inner.write(chunk);
      done(failure);
    },
    flush(done) {
      if (!failure) inner.end();
      done(failure);
    },
  });
  inner.on('data', (d: Buffer) => {
    if (!failure) out.push(d);
  });
  inner.on('error', (e: Error) => {
    failure ??= e;
  });
  return out;
}

/**
 * Decompressed octets of `compressed` (the input `name`). Errors are InputErrors at the offset of the decompressed
 * octets yielded so far: "NAME: gzip stream ends early …" for a cut file (zlib's "unexpected end of file"), else
 * "NAME: <kind> data is corrupt: …".
 */
function decompressed(kind: Compression, compressed: AsyncIterable<Buffer>, name: string): AsyncIterator<Buffer> {
  const decoder = kind === 'gzip' ? createGunzip({ chunkSize: CHUNK }) : bunzip2();
  const out = pipeline(Readable.from(compressed, { objectMode: false }), decoder, () => {});
  const it = (out as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
  let yielded = 0;
  return {
    next: async () => {
      try {
        const r = await it.next();
        if (!r.done) yielded += r.value.length;
        return r;
      } catch (e) {
        if (e instanceof InputError) throw new InputError(e.message, yielded); // an inner layer's, at this layer's offset
        if ((e as NodeJS.ErrnoException).code === 'Z_BUF_ERROR') {
          throw new InputError(`${name}: ${kind} stream ends early (unexpected end of file) after ${yielded} decompressed octets: the file is cut short (an interrupted download, or a dump still being written)`, yielded);
        }
        throw new InputError(`${name}: ${kind} data is corrupt: ${e instanceof Error ? e.message : String(e)}`, yielded);
      }
    },
    return: async () => {
      out.destroy();
      return (await it.return?.()) ?? { done: true, value: undefined };
    },
  };
}

/**
 * Reads the first octets of `input`, undoes compression layers and decides the format. The octets read are not
 * lost: `chunks` yields them first. Throws InputError when the input is empty, not a known format, has more than
 * MAX_COMPRESSION_LAYERS layers, is corrupt before its format shows, or (a FIFO, socket or device) has not shown
 * its format within FIRST_OCTETS_TIMEOUT_MS.
 */
export async function sniff(input: OpenedInput, name: string): Promise<SniffedInput> {
  let it: AsyncIterator<Buffer> = (input.stream as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
  const until = input.mayStall ? Date.now() + FIRST_OCTETS_TIMEOUT_MS : undefined;
  const compression: Compression[] = [];
  for (;;) {
    const layer = compression.length;
    let h: Head = { head: Buffer.alloc(0), ended: false };
    let decision: Compression | InputFormat | 'unknown' | undefined = 'unknown';
    while (decision === 'unknown') {
      const next = it.next();
      const r = until === undefined ? await next : await deadline(next, until - Date.now(), () => stalled(name, h.head.length));
      h = r.done ? { head: h.head, ended: true } : { head: h.head.length === 0 ? r.value : Buffer.concat([h.head, r.value]), ended: false };
      if (h.ended && h.head.length === 0) {
        if (layer === 0) throw new InputError(`${name} is empty: ${EXPECTED}`);
        return { format: 'empty', chunks: chain(h.head, it), compression };
      }
      decision = compressionOf(h.head, h.ended) ?? formatOf(h.head, h.ended);
    }
    if (decision === undefined) {
      const what = layer === 0 ? name : `${name} (after ${compression.join(' and ')})`;
      throw new InputError(`${what} is not a known format: ${EXPECTED}; its first octets are ${hexDump(h.head)}`);
    }
    if (decision !== 'gzip' && decision !== 'bzip2') return { format: decision, chunks: chain(h.head, it), compression };
    if (layer === MAX_COMPRESSION_LAYERS) throw new InputError(`too many compression layers (more than ${MAX_COMPRESSION_LAYERS})`);
    compression.push(decision);
    it = decompressed(decision, chain(h.head, it), name);
  }
}

function stalled(name: string, have: number): string {
  const got = have === 0 ? 'no data' : `only ${have} octets`;
  return `${got} from ${name} within ${FIRST_OCTETS_TIMEOUT_MS / 1000} s: ${EXPECTED} (to wait for a slow writer, redirect it to standard input and give "-")`;
}

/** The first 16 octets as spaced hex, "…" when there are more. */
function hexDump(b: Buffer): string {
  const shown = b.subarray(0, 16).toString('hex').replace(/(..)(?!$)/g, '$1 ');
  return b.length > 16 ? `${shown} …` : shown;
}
