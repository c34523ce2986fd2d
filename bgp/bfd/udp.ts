/**
 * UDP sockets for BFD (RFC 5881 single-hop, RFC 5883 multihop) on node:dgram, with the socket options Node lacks
 * set through libc (bgp/sys/libc.ts, the `koffi` FFI; Linux):
 *
 * - Sending: TTL / Hop Limit 255 (RFC 5881 §5; also used for multihop), IP_TOS / IPV6_TCLASS 0xC0 (precedence
 *   Internet Control, as BIRD and FRR send), a source port in 49152–65535 (RFC 5881 §4, RFC 5883 §5).
 * - Receiving: the received TTL check. Linux accepts IP_MINTTL / IPV6_MINHOPCOUNT on a UDP socket but enforces
 *   them for TCP only (verified on this project's Linux 6.18: a UDP socket with IP_MINTTL 255 still receives
 *   datagrams sent with TTL 64), and Node cannot read the IP_TTL ancillary data of a datagram. So the check is a
 *   classic BPF socket filter (SO_ATTACH_FILTER): the kernel loads the TTL (IPv4 header octet 8) or Hop Limit
 *   (IPv6 header octet 7) through SKF_NET_OFF and drops the datagram before it is queued when the value is below
 *   the minimum — per source address where sessions need different minimums (multihop). No privilege is needed.
 *   Dropped datagrams are counted by the kernel (SO_MEMINFO SK_MEMINFO_DROPS), which `droppedByKernel()` reads.
 *
 * Sockets are created and bound with socket(2)/bind(2) through libc, then handed to node:dgram with
 * `bind({ fd })`. Without koffi (or off Linux) plain node:dgram sockets are used: packets still leave with TTL 255
 * (dgram's setTTL), but the received TTL is not checked, which `setTtlRules` reports as `unavailable` with the
 * reason (docs/sessions.md, BFD, says what that means for single-hop sessions).
 */
import { createSocket } from 'node:dgram';
import type { Socket } from 'node:dgram';
import { parseAddress } from '../codec/nlri.ts';
import { int32, libc, setIntOption, SysError } from '../sys/libc.ts';
import type { Libc } from '../sys/libc.ts';
import { AF_INET, AF_INET6, familyOf, sockaddr } from '../sys/sockaddr.ts';

/** RFC 5881 §4: destination port of single-hop Control packets. */
export const BFD_SINGLE_HOP_PORT = 3784;
/** RFC 5883 §5: destination port of multihop Control packets. */
export const BFD_MULTIHOP_PORT = 4784;
/** RFC 5881 §4: the source port range. */
export const BFD_SOURCE_PORT_MIN = 49152;
export const BFD_SOURCE_PORT_MAX = 65535;

/** An address and UDP port. */
export interface UdpEndpoint {
  readonly address: string;
  readonly port: number;
}

/** A minimum received TTL / Hop Limit, for one source address or (no `source`) for every source. */
export interface TtlRule {
  readonly source?: string;
  readonly minTtl: number;
}

/** How the received TTL is checked on a socket. */
export type TtlCheck =
  | { readonly kind: 'kernel' }
  | { readonly kind: 'none' }
  | { readonly kind: 'unavailable'; readonly reason: string };

/** A bound socket receiving Control packets on port 3784 or 4784. */
export interface BfdReceiveSocket {
  readonly local: UdpEndpoint;
  /** Replaces the received-TTL rules (an empty list checks nothing). Never throws: failures are reported. */
  setTtlRules(rules: readonly TtlRule[]): TtlCheck;
  /** Datagrams the kernel dropped on this socket (TTL filter, full buffer), when it can be read. */
  droppedByKernel(): number | undefined;
  close(): Promise<void>;
}

/** A bound socket sending one session's Control packets to its peer. */
export interface BfdSendSocket {
  readonly local: UdpEndpoint;
  send(packet: Buffer): void;
  close(): Promise<void>;
}

/** Where the BFD engine gets its sockets (real UDP here; tests may pass another). */
export interface BfdTransport {
  /** Binds `address`:`port` (SO_REUSEADDR) and calls `onMessage` per datagram. Rejects with the OS error. */
  openReceiver(at: UdpEndpoint, onMessage: (packet: Buffer, from: UdpEndpoint) => void): Promise<BfdReceiveSocket>;
  /**
   * Binds a socket to `localAddress` (default: any) and a free port in 49152–65535, TTL `ttl`, connected to
   * `remote` (no route lookup per packet). `onError` gets asynchronous errors (no route, ICMP unreachable, ...).
   * Rejects with the OS error.
   */
  openSender(o: { remote: UdpEndpoint; localAddress?: string; ttl: number }, onError: (err: Error) => void): Promise<BfdSendSocket>;
}

// --- libc (bgp/sys/libc.ts) ---

const SOCK_DGRAM = 2;
const SOCK_CLOEXEC = 0o2000000;
const SOL_SOCKET = 1;
const SO_REUSEADDR = 2;
const SO_ATTACH_FILTER = 26;
const SO_DETACH_FILTER = 27;
const SO_MEMINFO = 55;
const SK_MEMINFO_DROPS = 8;
const IPPROTO_IP = 0;
const IPPROTO_IPV6 = 41;
const IP_TOS = 1;
const IP_TTL = 2;
const IPV6_UNICAST_HOPS = 16;
const IPV6_V6ONLY = 26;
const IPV6_TCLASS = 67;
const EADDRINUSE = 98;
/** Precedence "Internet Control" (0xC0), the TOS/Traffic Class BIRD and FRR give BFD. */
const TOS_INTERNET_CONTROL = 0xc0;

/** Creates, configures and binds a datagram socket; returns its fd. Throws SysError (the fd is closed then). */
function boundFd(lib: Libc, family: 4 | 6, address: string, port: number, configure: (fd: number) => void): number {
  const fd = lib.socket(family === 4 ? AF_INET : AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw new SysError('socket(2)', lib.errno());
  try {
    if (family === 6) setIntOption(lib, fd, IPPROTO_IPV6, IPV6_V6ONLY, 1, 'IPV6_V6ONLY');
    configure(fd);
    const sa = sockaddr(family, address, port);
    if (lib.bind(fd, sa, sa.length) !== 0) throw new SysError(`bind(${address}:${port})`, lib.errno());
    return fd;
  } catch (e) {
    lib.close(fd);
    throw e;
  }
}

/** Wraps a bound fd (or, with no fd, binds itself) in a node:dgram socket; resolves once listening. */
function dgramSocket(family: 4 | 6, fd: number | undefined, bind: { address: string; port: number } | undefined, onMessage: (b: Buffer, from: UdpEndpoint) => void): Promise<Socket> {
  const s = createSocket(family === 4 ? { type: 'udp4', reuseAddr: true } : { type: 'udp6', reuseAddr: true, ipv6Only: true });
  s.on('message', (msg, rinfo) => onMessage(msg, { address: rinfo.address, port: rinfo.port }));
  return new Promise((resolve, reject) => {
    const fail = (err: Error): void => {
      s.close();
      reject(err);
    };
    s.once('error', fail);
    const listening = (): void => {
      s.off('error', fail);
      resolve(s);
    };
    if (fd !== undefined) s.bind({ fd }, listening);
    else s.bind({ port: bind?.port ?? 0, address: bind?.address ?? (family === 4 ? '0.0.0.0' : '::') }, listening);
  });
}

function closeSocket(s: Socket): Promise<void> {
  return new Promise((resolve) => {
    try {
      s.close(() => resolve());
    } catch {
      resolve(); // already closed
    }
  });
}

// --- the TTL filter (classic BPF) ---

/** SKF_NET_OFF: negative offsets from here address the network (IP) header (linux/filter.h). */
const SKF_NET_OFF = -0x100000;
const BPF_LD_W_ABS = 0x20;
const BPF_LD_B_ABS = 0x30;
const BPF_JMP_JEQ_K = 0x15;
const BPF_JMP_JGE_K = 0x35;
const BPF_RET_K = 0x06;
const ACCEPT = 0xffffffff;
const DROP = 0;
/** BPF_MAXINSNS (linux/bpf_common.h). */
const MAX_INSNS = 4096;

type Insn = [code: number, jt: number, jf: number, k: number];

/**
 * How many per-source rules one TTL filter holds (ttlFilterProgram: 6 instructions per IPv4 source, 12 per IPv6
 * source, in BPF_MAXINSNS with room for a rule for every other source): 682 for IPv4, 341 for IPv6. A session
 * whose rule does not fit is not checked by the kernel, and the engine discards its packets (fail closed).
 */
export function maxTtlRules(family: 4 | 6): number {
  return Math.floor((MAX_INSNS - 4) / (2 * (family === 4 ? 1 : 4) + 4));
}

/**
 * The classic BPF program for `rules` on a socket of `family`: a datagram from a source with a rule is accepted only
 * if its TTL / Hop Limit is at least the rule's minimum; a rule without `source` applies to every other source;
 * sources without a rule are accepted (the BFD demultiplexer discards them, counted). Returns the instructions as
 * `struct sock_filter` array bytes. Throws Error for a bad address or minTtl, or more than 4096 instructions.
 */
export function ttlFilterProgram(family: 4 | 6, rules: readonly TtlRule[]): Buffer {
  const ttlOffset = family === 4 ? 8 : 7;
  const srcOffset = family === 4 ? 12 : 8;
  const insns: Insn[] = [];
  const check = (minTtl: number): Insn[] => [
    [BPF_LD_B_ABS, 0, 0, SKF_NET_OFF + ttlOffset],
    [BPF_JMP_JGE_K, 0, 1, minTtl],
    [BPF_RET_K, 0, 0, ACCEPT],
    [BPF_RET_K, 0, 0, DROP],
  ];
  let fallback: number | undefined;
  for (const r of rules) {
    if (!Number.isInteger(r.minTtl) || r.minTtl < 1 || r.minTtl > 255) throw new Error(`minimum TTL must be 1..255, got ${r.minTtl}`);
    if (r.source === undefined) {
      fallback = Math.max(fallback ?? 1, r.minTtl);
      continue;
    }
    const bytes = parseAddress(r.source);
    if (bytes.length !== (family === 4 ? 4 : 16)) throw new Error(`${r.source} is not an IPv${family} address`);
    const words = bytes.length / 4;
    // per word: load, compare (mismatch skips the remaining compares and this rule's 4-instruction check)
    for (let w = 0; w < words; w++) {
      const skip = 2 * (words - w - 1) + 4;
      insns.push([BPF_LD_W_ABS, 0, 0, SKF_NET_OFF + srcOffset + 4 * w]);
      insns.push([BPF_JMP_JEQ_K, 0, skip, bytes.readUInt32BE(4 * w)]);
    }
    insns.push(...check(r.minTtl));
  }
  if (fallback !== undefined) insns.push(...check(fallback));
  else insns.push([BPF_RET_K, 0, 0, ACCEPT]);
  if (insns.length > MAX_INSNS) throw new Error(`TTL filter needs ${insns.length} BPF instructions; the kernel allows ${MAX_INSNS}`);
  const out = Buffer.alloc(insns.length * 8);
  insns.forEach(([code, jt, jf, k], i) => {
    out.writeUInt16LE(code, i * 8);
    out[i * 8 + 2] = jt;
    out[i * 8 + 3] = jf;
    out.writeUInt32LE(k >>> 0, i * 8 + 4);
  });
  return out;
}

function attachFilter(lib: Libc, fd: number, program: Buffer): void {
  // struct sock_fprog { unsigned short len; struct sock_filter *filter; } on LP64: len, 6 octets padding, pointer
  const fprog = Buffer.alloc(16);
  fprog.writeUInt16LE(program.length / 8, 0);
  fprog.writeBigUInt64LE(lib.address(program), 8);
  if (lib.setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, fprog, fprog.length) !== 0) throw new SysError('setsockopt(SO_ATTACH_FILTER)', lib.errno());
}

// --- the transport ---

function randomPort(): number {
  return BFD_SOURCE_PORT_MIN + Math.floor(Math.random() * (BFD_SOURCE_PORT_MAX - BFD_SOURCE_PORT_MIN + 1));
}

async function openReceiver(at: UdpEndpoint, onMessage: (packet: Buffer, from: UdpEndpoint) => void): Promise<BfdReceiveSocket> {
  const family = familyOf(at.address);
  const lib = libc();
  const fd = typeof lib === 'string' ? undefined : boundFd(lib, family, at.address, at.port, (fd) => setIntOption(lib, fd, SOL_SOCKET, SO_REUSEADDR, 1, 'SO_REUSEADDR'));
  const s = await dgramSocket(family, fd, at, onMessage);
  const local = s.address();
  return {
    local: { address: local.address, port: local.port },
    setTtlRules(rules) {
      if (typeof lib === 'string' || fd === undefined) return rules.length === 0 ? { kind: 'none' } : { kind: 'unavailable', reason: typeof lib === 'string' ? lib : 'no file descriptor' };
      try {
        if (rules.length === 0) {
          lib.setsockopt(fd, SOL_SOCKET, SO_DETACH_FILTER, int32(0), 4); // ENOENT when none was attached: fine
          return { kind: 'none' };
        }
        attachFilter(lib, fd, ttlFilterProgram(family, rules));
        return { kind: 'kernel' };
      } catch (e) {
        return { kind: 'unavailable', reason: e instanceof Error ? e.message : String(e) };
      }
    },
    droppedByKernel() {
      if (typeof lib === 'string' || fd === undefined) return undefined;
      const info = Buffer.alloc(4 * 9);
      const len = int32(info.length);
      if (lib.getsockopt(fd, SOL_SOCKET, SO_MEMINFO, info, len) !== 0) return undefined;
      return info.readUInt32LE(4 * SK_MEMINFO_DROPS);
    },
    close: () => closeSocket(s),
  };
}

async function openSender(o: { remote: UdpEndpoint; localAddress?: string; ttl: number }, onError: (err: Error) => void): Promise<BfdSendSocket> {
  const family = familyOf(o.remote.address);
  const address = o.localAddress ?? (family === 4 ? '0.0.0.0' : '::');
  const lib = libc();
  let s: Socket | undefined;
  for (let attempt = 0; s === undefined; attempt++) {
    const port = randomPort();
    try {
      if (typeof lib === 'string') {
        s = await dgramSocket(family, undefined, { address, port }, () => undefined);
        s.setTTL(o.ttl);
      } else {
        const fd = boundFd(lib, family, address, port, (fd) => {
          setIntOption(lib, fd, family === 4 ? IPPROTO_IP : IPPROTO_IPV6, family === 4 ? IP_TTL : IPV6_UNICAST_HOPS, o.ttl, 'TTL');
          setIntOption(lib, fd, family === 4 ? IPPROTO_IP : IPPROTO_IPV6, family === 4 ? IP_TOS : IPV6_TCLASS, TOS_INTERNET_CONTROL, 'TOS');
        });
        s = await dgramSocket(family, fd, undefined, () => undefined);
      }
    } catch (e) {
      const inUse = (e instanceof SysError && e.errno === EADDRINUSE) || (e as NodeJS.ErrnoException).code === 'EADDRINUSE';
      if (!inUse || attempt >= 50) throw e;
    }
  }
  const sock = s;
  sock.on('error', onError); // ICMP errors reach a connected socket; never let them go unheard
  await new Promise<void>((resolve, reject) => {
    sock.once('connect', resolve);
    try {
      sock.connect(o.remote.port, o.remote.address);
    } catch (e) {
      reject(e instanceof Error ? e : new Error(String(e)));
    }
  });
  const local = sock.address();
  let inFlight = 0;
  let drained: (() => void) | undefined;
  return {
    local: { address: local.address, port: local.port },
    send(packet) {
      inFlight++;
      sock.send(packet, (err) => {
        if (err) onError(err);
        if (--inFlight === 0) drained?.();
      });
    },
    // a packet handed to send() just before (AdminDown on removal) still goes out
    close: async () => {
      if (inFlight > 0) await new Promise<void>((resolve) => (drained = resolve));
      await closeSocket(sock);
    },
  };
}

/** The real UDP transport (node:dgram, with koffi for the socket options). */
export const udpTransport: BfdTransport = { openReceiver, openSender };
