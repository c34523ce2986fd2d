/**
 * TCP transport for BGP sessions: dialing with a chosen local address/port, and the socket options Node does not
 * expose, set through libc setsockopt(2) (bgp/sys/libc.ts, the `koffi` FFI; Linux only):
 * - TCP MD5 signatures (RFC 2385): TCP_MD5SIG (14) with a `struct tcp_md5sig` naming the peer address and key.
 *   Must be set before connect() on the dialing side (the SYN is signed) and on the listening socket per peer.
 * - TTL for eBGP multihop: IP_TTL (2) / IPV6_UNICAST_HOPS (16).
 * - GTSM (RFC 5082): send with TTL 255 and drop packets below 255 - hops + 1: IP_MINTTL (21) /
 *   IPV6_MINHOPCOUNT (73).
 * When any option is requested the socket is created with socket(2) through libc, the options are set, and the fd
 * is wrapped in a net.Socket that then connects (Node binds localAddress/localPort on it). Without options plain
 * net.connect is used. Unsupported platforms or kernels give a `TransportError` with a clear message.
 */
import { isIPv6, Socket } from 'node:net';
import type { Server } from 'node:net';
import { libc, setOption, int32, SysError } from '../sys/libc.ts';
import type { Libc } from '../sys/libc.ts';
import { AF_INET, AF_INET6, writeSockaddr } from '../sys/sockaddr.ts';

/** A local (configuration or OS) error of the transport; never becomes a NOTIFICATION. */
export class TransportError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TransportError';
  }
}

/** How to dial a peer. */
export interface DialOptions {
  remoteAddress: string;
  /** Default 179. */
  remotePort?: number;
  localAddress?: string;
  localPort?: number;
  /** RFC 2385 key (1..80 octets). */
  md5Password?: string;
  /** IP TTL / IPv6 hop limit of our packets (1..255). */
  ttl?: number;
  /** Minimum TTL / hop count accepted (1..255; RFC 5082 GTSM). */
  minTtl?: number;
}

const SOCK_STREAM = 1;
const IPPROTO_IP = 0;
const IPPROTO_TCP = 6;
const IPPROTO_IPV6 = 41;
const TCP_MD5SIG = 14;
const IP_TTL = 2;
const IP_MINTTL = 21;
const IPV6_UNICAST_HOPS = 16;
const IPV6_MINHOPCOUNT = 73;
/** sizeof(struct tcp_md5sig): sockaddr_storage 128, flags 1, prefixlen 1, keylen 2, ifindex 4, key 80. */
const TCP_MD5SIG_SIZE = 216;
const TCP_MD5SIG_MAXKEYLEN = 80;
/** errno values meaning the kernel lacks the option: ENOENT, ENOPROTOOPT, EOPNOTSUPP. */
const NO_SUCH_OPTION = new Set([2, 92, 95]);

/** The libc binding (bgp/sys/libc.ts) for `what`. Throws TransportError when it is unavailable. */
function loadLibc(what: string): Libc {
  const lib = libc();
  if (typeof lib === 'string') throw new TransportError(`${what} needs setsockopt(2) through the koffi FFI: ${lib}`);
  return lib;
}

function setOpt(fd: number, level: number, name: number, value: Buffer, what: string): void {
  try {
    setOption(loadLibc(what), fd, level, name, value, what);
  } catch (e) {
    if (!(e instanceof SysError)) throw e;
    const hint = NO_SUCH_OPTION.has(e.errno) ? ' (the kernel lacks this option, e.g. CONFIG_TCP_MD5SIG)' : '';
    throw new TransportError(`${e.message}${hint}`);
  }
}

/** The file descriptor of a connected/listening Node socket or server. Throws TransportError when it has none. */
export function socketFd(s: Socket | Server): number {
  // Node exposes no public fd for a socket or server: read its libuv handle's `fd` and check what we got.
  const handle: unknown = Reflect.get(s, '_handle');
  const fd: unknown = typeof handle === 'object' && handle !== null ? Reflect.get(handle, 'fd') : undefined;
  if (typeof fd !== 'number' || fd < 0) throw new TransportError('socket has no file descriptor (not open yet, or not a TCP socket)');
  return fd;
}

/**
 * Installs (or, with an empty password, removes) the RFC 2385 TCP MD5 key for `peerAddress` on socket `fd`
 * (a listening socket or one not yet connected). Throws TransportError (non-Linux, koffi missing, key longer than
 * 80 octets, kernel without TCP_MD5SIG).
 */
export function setMd5Key(fd: number, peerAddress: string, password: string): void {
  const key = Buffer.from(password, 'utf8');
  if (key.length > TCP_MD5SIG_MAXKEYLEN) throw new TransportError(`TCP MD5 password is ${key.length} octets; at most ${TCP_MD5SIG_MAXKEYLEN}`);
  const sig = Buffer.alloc(TCP_MD5SIG_SIZE);
  try {
    writeSockaddr(peerAddress, 0, sig); // tcpm_addr, a sockaddr_storage: the peer's address, port 0
  } catch {
    throw new TransportError(`not an IP address: ${peerAddress}`);
  }
  sig.writeUInt16LE(key.length, 130);
  key.copy(sig, 136);
  setOpt(fd, IPPROTO_TCP, TCP_MD5SIG, sig, 'TCP_MD5SIG');
}

/** Sets the TTL (IPv4) or unicast hop limit (IPv6) of packets sent on `fd`. Throws TransportError. */
export function setTtl(fd: number, ipv6: boolean, ttl: number): void {
  if (!(Number.isInteger(ttl) && ttl >= 1 && ttl <= 255)) throw new TransportError(`TTL must be 1..255, got ${ttl}`);
  if (ipv6) setOpt(fd, IPPROTO_IPV6, IPV6_UNICAST_HOPS, int32(ttl), 'IPV6_UNICAST_HOPS');
  else setOpt(fd, IPPROTO_IP, IP_TTL, int32(ttl), 'IP_TTL');
}

/** Drops received packets whose TTL / hop limit is below `minTtl` (RFC 5082 GTSM). Throws TransportError. */
export function setMinTtl(fd: number, ipv6: boolean, minTtl: number): void {
  if (!(Number.isInteger(minTtl) && minTtl >= 1 && minTtl <= 255)) throw new TransportError(`minimum TTL must be 1..255, got ${minTtl}`);
  if (ipv6) setOpt(fd, IPPROTO_IPV6, IPV6_MINHOPCOUNT, int32(minTtl), 'IPV6_MINHOPCOUNT');
  else setOpt(fd, IPPROTO_IP, IP_MINTTL, int32(minTtl), 'IP_MINTTL');
}

/**
 * TTL settings for a peer: GTSM (RFC 5082 §3) sends TTL 255 and accepts >= 256 - hops (hops = ebgpMultihop or 1);
 * otherwise ebgpMultihop (if set) is the TTL of our packets. Returns {} when nothing is configured.
 */
export function ttlOptions(o: { ebgpMultihop?: number; ttlSecurity?: boolean }): { ttl?: number; minTtl?: number } {
  if (o.ttlSecurity) {
    const hops = o.ebgpMultihop ?? 1;
    return { ttl: 255, minTtl: Math.max(1, 256 - hops) };
  }
  return o.ebgpMultihop !== undefined ? { ttl: o.ebgpMultihop } : {};
}

/** Applies TTL / minimum TTL to an open socket (e.g. one accepted by the listener). Throws TransportError. */
export function applySocketOptions(socket: Socket, o: { ttl?: number; minTtl?: number; remoteAddress: string }): void {
  if (o.ttl === undefined && o.minTtl === undefined) return;
  const fd = socketFd(socket);
  const v6 = isIPv6(o.remoteAddress);
  if (o.ttl !== undefined) setTtl(fd, v6, o.ttl);
  if (o.minTtl !== undefined) setMinTtl(fd, v6, o.minTtl);
}

/**
 * Starts a TCP connection to the peer; returns the connecting socket (listen for 'connect' and 'error').
 * Throws TransportError synchronously when a requested option cannot be set.
 */
export function dial(o: DialOptions): Socket {
  const port = o.remotePort ?? 179;
  const connectOpts: { port: number; host: string; localAddress?: string; localPort?: number } = { port, host: o.remoteAddress };
  if (o.localAddress !== undefined) connectOpts.localAddress = o.localAddress;
  if (o.localPort !== undefined) connectOpts.localPort = o.localPort;
  if (o.md5Password === undefined && o.ttl === undefined && o.minTtl === undefined) {
    const s = new Socket();
    s.connect(connectOpts);
    return s;
  }
  const lib = loadLibc(o.md5Password !== undefined ? 'TCP MD5 (RFC 2385)' : 'TTL / GTSM');
  const v6 = isIPv6(o.remoteAddress);
  const fd = lib.socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw new TransportError(new SysError('socket(2)', lib.errno()).message);
  try {
    if (o.md5Password !== undefined) setMd5Key(fd, o.remoteAddress, o.md5Password);
    if (o.ttl !== undefined) setTtl(fd, v6, o.ttl);
    if (o.minTtl !== undefined) setMinTtl(fd, v6, o.minTtl);
  } catch (e) {
    lib.close(fd);
    throw e;
  }
  const s = new Socket({ fd, readable: true, writable: true });
  s.connect(connectOpts);
  return s;
}
