/**
 * The one reader of every file Herald reads (the configuration file, manifest files, the secret files
 * `password.file` and `admin.tokenFile`, the CLI's `--token-file`, the state files of `stateDir`, the Kubernetes
 * client's kubeconfig, certificates, key, token file and ServiceAccount files): only regular files,
 * at most `maxBytes`, within `timeoutMs`, never a blocking read on the main thread.
 *
 * The file is opened with O_NONBLOCK, so opening a FIFO (or a symlink to one) returns at once instead of waiting for
 * a writer — a blocked open would hold one of libuv's four threadpool threads forever, and a synchronous one the
 * main thread — and the open descriptor is checked with fstat: what is read is what was checked, even if the path is
 * swapped meanwhile. A FIFO, socket or device (`/dev/zero`) is refused before a byte is read. The size is checked
 * before reading, and at most `maxBytes + 1` bytes are read (a file may grow after the check).
 *
 * {@link readRegularFile} reads in libuv's threadpool (the main thread keeps running); {@link readSmallFileSync} is
 * for Herald's own small state files only (read once at start, a few hundred bytes on local disk).
 */
import { closeSync, constants, fstatSync, openSync, readSync, statSync } from 'node:fs';
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

/** Largest secret file read (a TCP MD5 password, the admin token), bytes. */
export const SECRET_FILE_MAX_BYTES = 64 * 1024;
/** Deadline of reading a secret file, ms. */
export const SECRET_FILE_TIMEOUT_MS = 5000;

/**
 * Why a read failed, in words, without the path (callers name the file): "a FIFO (named pipe), not a regular file
 * (...)", "is 20 MiB, larger than the limit of 16 MiB (...)", "no such file (check the path)", ...
 */
export function readFailure(err: unknown): string {
  if (err instanceof InputReadError) return err.message;
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ENOENT') return 'no such file (check the path)';
  if (code === 'EACCES') return 'permission denied (this user may not read it)';
  if (code === 'ENOTDIR') return 'a part of the path is not a directory (check the path)';
  if (code === 'ELOOP') return 'too many levels of symbolic links (a symlink loop?)';
  return err instanceof Error ? err.message : String(err);
}

/** What to do about a file that is not regular: the same words everywhere. */
const REGULAR_ONLY = 'Herald reads only regular files; a symlink to one, e.g. a mounted ConfigMap or Secret, is fine';

/** The InputReadError of a file that is not regular (`st` of what was opened). */
function notRegular(st: Stats): InputReadError {
  return new InputReadError(st.isDirectory() ? 'EISDIR' : 'ENOTREG', `${fileKind(st)}, not a regular file (${REGULAR_ONLY})`);
}

/**
 * Opening a socket file fails with ENXIO: told as "a socket, not a regular file" like the other kinds (a FIFO opens at
 * once with O_NONBLOCK and is refused by fstat).
 */
function openFailure(path: string, err: unknown): unknown {
  if ((err as NodeJS.ErrnoException).code !== 'ENXIO') return err;
  try {
    return notRegular(statSync(path));
  } catch {
    return err;
  }
}

function tooBigError(size: string, limits: ReadLimits): InputReadError {
  return new InputReadError('ETOOBIG', `${size}, larger than the limit of ${formatBytes(limits.maxBytes)}${limits.sizeHint ? ` (${limits.sizeHint})` : ''}`);
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
  let fh;
  try {
    fh = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (err) {
    throw openFailure(path, err);
  }
  try {
    const st = await fh.stat();
    if (!st.isFile()) throw notRegular(st);
    const tooBig = (size: string) => tooBigError(size, limits);
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
    return Buffer.from(buf.subarray(0, n)); // a copy of what was read: the buffer of maxBytes is not kept
  } finally {
    await fh.close();
  }
}

/** {@link readRegularFile} as UTF-8 text. */
export async function readTextFile(path: string, limits: ReadLimits): Promise<string> {
  return (await readRegularFile(path, limits)).toString('utf8');
}

/**
 * Reads a small regular file synchronously: Herald's own state files (`stateDir`), read once at start. A FIFO, socket
 * or device is refused without blocking (O_NONBLOCK, fstat), and at most `maxBytes + 1` bytes are read.
 * @throws InputReadError as {@link readRegularFile} (no `ETIMEDOUT`); the fs error otherwise
 */
export function readSmallFileSync(path: string, limits: { maxBytes: number }): string {
  return readSmallBytesSync(path, limits).toString('utf8');
}

/**
 * {@link readSmallFileSync} as bytes: also the Kubernetes client's files read once at start (a kubeconfig, its
 * certificates and key, the ServiceAccount files: small files on local disk or a Secret volume).
 * @throws InputReadError as {@link readRegularFile} (no `ETIMEDOUT`); the fs error otherwise
 */
export function readSmallBytesSync(path: string, limits: { maxBytes: number }): Buffer {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (err) {
    throw openFailure(path, err);
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw notRegular(st);
    if (st.size > limits.maxBytes) throw tooBigError(`is ${formatBytes(st.size)}`, limits);
    const buf = Buffer.allocUnsafe(limits.maxBytes + 1);
    let n = 0;
    for (;;) {
      const r = readSync(fd, buf, n, buf.length - n, n);
      if (r === 0) break;
      n += r;
      if (n > limits.maxBytes) throw tooBigError('grew past the limit while being read', limits);
    }
    return Buffer.from(buf.subarray(0, n)); // a copy of what was read: the buffer of maxBytes is not kept
  } finally {
    closeSync(fd);
  }
}
