/**
 * The one binding of libc in bgp/: the socket calls Node.js does not expose (setsockopt(2) with options it lacks,
 * getsockopt(2), sockets created and bound before Node takes them), for TCP (bgp/session/transport.ts: TCP MD5,
 * TTL, GTSM) and for BFD (bgp/bfd/udp.ts: TTL, TOS, the received-TTL socket filter).
 *
 * It goes through `koffi`, bgp/'s one npm dependency: optional (package.json `optionalDependencies`), native, and
 * loaded here only (the lint rule on `createRequire`, eslint.config.js), on first use: sessions and BFD sessions
 * that need none of these options never load it. Without it, or off Linux, `libc()` answers why, and each caller
 * decides: a TCP option asked for fails with that reason, BFD falls back to plain node:dgram sockets.
 *
 * Errors of the calls are `SysError`s: the call, the errno and its name (`setsockopt(TCP_MD5SIG) failed: ENOTSOCK`).
 */
import { createRequire } from 'node:module';

/** The libc functions bgp/ calls. Each returns what the C function returns (-1 on failure: read `errno()`). */
export interface Libc {
  socket(domain: number, type: number, protocol: number): number;
  setsockopt(fd: number, level: number, name: number, value: Buffer, length: number): number;
  /** `length` holds a socklen_t (4 octets, host order) in and out. */
  getsockopt(fd: number, level: number, name: number, value: Buffer, length: Buffer): number;
  bind(fd: number, addr: Buffer, length: number): number;
  close(fd: number): number;
  /** errno of the last call of this thread. */
  errno(): number;
  /** The address of a Buffer's memory (for structures holding a pointer, e.g. struct sock_fprog). */
  address(buf: Buffer): bigint;
}

/** The part of koffi used here (require() is untyped, and bgp/ imports no npm package's types). */
interface Koffi {
  load(name: string): { func(sig: string): (...args: unknown[]) => number };
  errno(): number;
  address(v: unknown): bigint;
}

let bound: Libc | undefined;
let unavailable: string | undefined;

/**
 * The libc binding, or the reason it is unavailable ("socket options need Linux (this is darwin)", "the koffi FFI
 * failed to load: ..."). Loaded once per thread, on first use.
 */
export function libc(): Libc | string {
  if (bound) return bound;
  if (unavailable !== undefined) return unavailable;
  if (process.platform !== 'linux') return (unavailable = `socket options need Linux (this is ${process.platform})`);
  try {
    const require = createRequire(import.meta.url);
    const koffi = require('koffi') as Koffi;
    const lib = koffi.load('libc.so.6');
    const socket = lib.func('int socket(int domain, int type, int protocol)');
    const setsockopt = lib.func('int setsockopt(int fd, int level, int name, const void *val, uint32_t len)');
    const getsockopt = lib.func('int getsockopt(int fd, int level, int name, void *val, void *len)');
    const bind = lib.func('int bind(int fd, const void *addr, uint32_t len)');
    const close = lib.func('int close(int fd)');
    bound = {
      socket: (d, t, p) => socket(d, t, p),
      setsockopt: (fd, level, name, value, length) => setsockopt(fd, level, name, value, length),
      getsockopt: (fd, level, name, value, length) => getsockopt(fd, level, name, value, length),
      bind: (fd, addr, length) => bind(fd, addr, length),
      close: (fd) => close(fd),
      errno: () => koffi.errno(),
      address: (buf) => koffi.address(buf),
    };
    return bound;
  } catch (e) {
    return (unavailable = `the koffi FFI failed to load: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/** Names of the errno values these calls report (Linux, asm-generic/errno-base.h and errno.h). */
const ERRNO_NAMES: Readonly<Record<number, string>> = {
  1: 'EPERM',
  2: 'ENOENT',
  9: 'EBADF',
  13: 'EACCES',
  22: 'EINVAL',
  88: 'ENOTSOCK',
  92: 'ENOPROTOOPT',
  95: 'EOPNOTSUPP',
  98: 'EADDRINUSE',
  99: 'EADDRNOTAVAIL',
};

/** "ENOTSOCK", or "errno 42" for a value without a name here. */
export function errnoName(errno: number): string {
  return ERRNO_NAMES[errno] ?? `errno ${errno}`;
}

/** A libc call that failed: `call` as written in the message (e.g. "setsockopt(IP_TTL)"), the errno and its name. */
export class SysError extends Error {
  readonly call: string;
  readonly errno: number;
  /** The errno's name ("EADDRINUSE"), as Node's own system errors carry it; "errno N" when unnamed. */
  readonly code: string;
  constructor(call: string, errno: number) {
    super(`${call} failed: ${errnoName(errno)}`);
    this.name = 'SysError';
    this.call = call;
    this.errno = errno;
    this.code = errnoName(errno);
  }
}

/** A C int in host byte order (little-endian on the Linux platforms koffi supports here). */
export function int32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeInt32LE(n);
  return b;
}

/** setsockopt(2) with `value`. Throws SysError naming `what` (the option) when it fails. */
export function setOption(lib: Libc, fd: number, level: number, name: number, value: Buffer, what: string): void {
  if (lib.setsockopt(fd, level, name, value, value.length) !== 0) throw new SysError(`setsockopt(${what})`, lib.errno());
}

/** setsockopt(2) with an int value. Throws SysError. */
export function setIntOption(lib: Libc, fd: number, level: number, name: number, value: number, what: string): void {
  setOption(lib, fd, level, name, int32(value), what);
}
