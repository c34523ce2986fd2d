/**
 * Bounded reads of input files (the configuration file, manifest files): only regular files, at most `maxBytes`,
 * within `timeoutMs`.
 *
 * The file is opened with O_NONBLOCK, so opening a FIFO (or a symlink to one) returns at once instead of waiting for
 * a writer — a blocked open would hold one of libuv's four threadpool threads forever — and the open descriptor is
 * checked with fstat: what is read is what was checked, even if the path is swapped meanwhile. The size is checked
 * before reading, and at most `maxBytes + 1` bytes are read (a file may grow after the check).
 */
import { constants } from 'node:fs';
import type { Stats } from 'node:fs';
import { open } from 'node:fs/promises';

/** Why a read was refused: `code` for programs, `message` for people (no path in it: callers add it). */
export class InputReadError extends Error {
  readonly code: 'ENOTREG' | 'EISDIR' | 'ETOOBIG' | 'ETIMEDOUT';
  constructor(code: InputReadError['code'], message: string) {
    super(message);
    this.name = 'InputReadError';
    this.code = code;
  }
}

/** "16 MiB", "2.5 MiB", "900 KiB", "12 bytes". */
export function formatBytes(n: number): string {
  if (n >= 1024 * 1024) return `${Number((n / 1048576).toFixed(1))} MiB`;
  if (n >= 1024) return `${Number((n / 1024).toFixed(1))} KiB`;
  return `${n} bytes`;
}

/** What a non-regular file is, in words ("a FIFO", "a directory", ...). */
export function fileKind(st: Stats): string {
  if (st.isDirectory()) return 'a directory';
  if (st.isFIFO()) return 'a FIFO (named pipe)';
  if (st.isSocket()) return 'a socket';
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isBlockDevice()) return 'a block device';
  return 'not a regular file';
}

/** Options of {@link readRegularFile}. */
export interface ReadLimits {
  /** Largest accepted size, bytes. */
  maxBytes: number;
  /** Whole read deadline, ms (default 10000). */
  timeoutMs?: number;
  /** Hint added to the size error, e.g. "split it into several files". */
  sizeHint?: string;
}

/**
 * Reads a whole regular file.
 * @returns its bytes
 * @throws InputReadError `ENOTREG` (a FIFO, socket or device), `EISDIR` (a directory), `ETOOBIG` (larger than `maxBytes`),
 *   `ETIMEDOUT` (not read within `timeoutMs`); the fs error (ENOENT, EACCES, ELOOP, ...) otherwise.
 */
export async function readRegularFile(path: string, limits: ReadLimits): Promise<Buffer> {
  const timeoutMs = limits.timeoutMs ?? 10_000;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new InputReadError('ETIMEDOUT', `not read within ${timeoutMs / 1000} s (a slow or hung filesystem?)`)), timeoutMs);
    timer.unref();
  });
  const read = readChecked(path, limits);
  try {
    return await Promise.race([read, timeout]);
  } finally {
    clearTimeout(timer);
    read.catch(() => undefined); // a read that lost the race settles later; its descriptor is closed by readChecked
  }
}

async function readChecked(path: string, limits: ReadLimits): Promise<Buffer> {
  const fh = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const st = await fh.stat();
    if (!st.isFile()) throw new InputReadError(st.isDirectory() ? 'EISDIR' : 'ENOTREG', `${fileKind(st)}, not a regular file`);
    const tooBig = (size: string) =>
      new InputReadError('ETOOBIG', `${size}, larger than the limit of ${formatBytes(limits.maxBytes)}${limits.sizeHint ? ` (${limits.sizeHint})` : ''}`);
    if (st.size > limits.maxBytes) throw tooBig(`is ${formatBytes(st.size)}`);
    let buf = Buffer.allocUnsafe(Math.min(st.size, limits.maxBytes) + 1);
    let n = 0;
    for (;;) {
      const { bytesRead } = await fh.read(buf, n, buf.length - n, n);
      if (bytesRead === 0) break;
      n += bytesRead;
      if (n > limits.maxBytes) throw tooBig('grew past the limit while being read');
      if (n === buf.length) {
        const bigger = Buffer.allocUnsafe(Math.min(buf.length * 2, limits.maxBytes + 1));
        buf.copy(bigger, 0, 0, n);
        buf = bigger;
      }
    }
    return buf.subarray(0, n);
  } finally {
    await fh.close();
  }
}
