/**
 * Independent builders for test inputs of `herald decode`: TCP/IP packets, link-layer framings, pcap and pcapng
 * files, MRT records and BGP messages. Written from the format documents, not from the code under test.
 */

export interface SegSpec {
  src?: string;
  dst?: string;
  sport?: number;
  dport?: number;
  seq: number;
  syn?: boolean;
  fin?: boolean;
  payload?: Buffer;
}

function ipv4Bytes(s: string): Buffer {
  return Buffer.from(s.split('.').map(Number));
}

function ipv6Bytes(s: string): Buffer {
  const [head = '', tail = ''] = s.split('::');
  const h = head ? head.split(':') : [];
  const t = s.includes('::') && tail ? tail.split(':') : [];
  const groups = [...h, ...Array(8 - h.length - t.length).fill('0'), ...t];
  const b = Buffer.alloc(16);
  groups.forEach((g, i) => b.writeUInt16BE(parseInt(g, 16), i * 2));
  return b;
}

function tcpHeader(spec: SegSpec): Buffer {
  const t = Buffer.alloc(20);
  t.writeUInt16BE(spec.sport ?? 40000, 0);
  t.writeUInt16BE(spec.dport ?? 179, 2);
  t.writeUInt32BE(spec.seq >>> 0, 4);
  t[12] = 5 << 4;
  t[13] = 0x10 | (spec.syn ? 0x02 : 0) | (spec.fin ? 0x01 : 0);
  t.writeUInt16BE(65535, 14);
  return t;
}

/** An IPv4 packet (no options) carrying one TCP segment. */
export function ipv4Tcp(spec: SegSpec): Buffer {
  const payload = spec.payload ?? Buffer.alloc(0);
  const ip = Buffer.alloc(20);
  ip[0] = 0x45;
  ip.writeUInt16BE(20 + 20 + payload.length, 2);
  ip[8] = 64;
  ip[9] = 6;
  ipv4Bytes(spec.src ?? '192.0.2.1').copy(ip, 12);
  ipv4Bytes(spec.dst ?? '192.0.2.2').copy(ip, 16);
  return Buffer.concat([ip, tcpHeader(spec), payload]);
}

/** An IPv6 packet carrying one TCP segment, optionally behind a hop-by-hop header. */
export function ipv6Tcp(spec: SegSpec, hopByHop = false): Buffer {
  const payload = spec.payload ?? Buffer.alloc(0);
  const ext = hopByHop ? Buffer.from([6, 0, 1, 4, 0, 0, 0, 0]) : Buffer.alloc(0);
  const ip = Buffer.alloc(40);
  ip[0] = 0x60;
  ip.writeUInt16BE(ext.length + 20 + payload.length, 4);
  ip[6] = hopByHop ? 0 : 6;
  ip[7] = 64;
  ipv6Bytes(spec.src ?? '2001:db8::1').copy(ip, 8);
  ipv6Bytes(spec.dst ?? '2001:db8::2').copy(ip, 24);
  return Buffer.concat([ip, ext, tcpHeader(spec), payload]);
}

/** Ethernet II framing, with optional 802.1Q tags. */
export function ethernet(ip: Buffer, vlans: number[] = []): Buffer {
  const macs = Buffer.from('020000000001020000000002', 'hex');
  const tags = vlans.map((v) => Buffer.from([0x81, 0x00, (v >> 8) & 0x0f, v & 0xff]));
  const type = Buffer.from(ip[0]! >> 4 === 6 ? [0x86, 0xdd] : [0x08, 0x00]);
  return Buffer.concat([macs, ...tags, type, ip, Buffer.alloc(4)]); // trailing padding/FCS-like bytes
}

/** A classic pcap file. */
export function pcapFile(linkType: number, frames: Buffer[], opts: { bigEndian?: boolean; nano?: boolean; times?: [number, number][] } = {}): Buffer {
  const be = opts.bigEndian === true;
  const w32 = (b: Buffer, v: number, o: number): void => void (be ? b.writeUInt32BE(v, o) : b.writeUInt32LE(v, o));
  const w16 = (b: Buffer, v: number, o: number): void => void (be ? b.writeUInt16BE(v, o) : b.writeUInt16LE(v, o));
  const head = Buffer.alloc(24);
  w32(head, opts.nano ? 0xa1b23c4d : 0xa1b2c3d4, 0);
  w16(head, 2, 4);
  w16(head, 4, 6);
  w32(head, 65535, 16);
  w32(head, linkType, 20);
  const recs = frames.map((f, i) => {
    const r = Buffer.alloc(16);
    const [sec, frac] = opts.times?.[i] ?? [1700000000 + i, 250000];
    w32(r, sec, 0);
    w32(r, frac, 4);
    w32(r, f.length, 8);
    w32(r, f.length, 12);
    return Buffer.concat([r, f]);
  });
  return Buffer.concat([head, ...recs]);
}

function pad4(b: Buffer): Buffer {
  return b.length % 4 === 0 ? b : Buffer.concat([b, Buffer.alloc(4 - (b.length % 4))]);
}

function block(type: number, body: Buffer): Buffer {
  const padded = pad4(body);
  const len = 12 + padded.length;
  const h = Buffer.alloc(8);
  h.writeUInt32LE(type, 0);
  h.writeUInt32LE(len, 4);
  const t = Buffer.alloc(4);
  t.writeUInt32LE(len, 0);
  return Buffer.concat([h, padded, t]);
}

/** A little-endian pcapng file with one interface (optional if_tsresol) and Enhanced Packet Blocks. */
export function pcapngFile(linkType: number, frames: Buffer[], opts: { tsresol?: number; units?: bigint[] } = {}): Buffer {
  const shbBody = Buffer.alloc(16);
  shbBody.writeUInt32LE(0x1a2b3c4d, 0);
  shbBody.writeUInt16LE(1, 4);
  shbBody.writeBigInt64LE(-1n, 8);
  const shb = block(0x0a0d0d0a, shbBody);
  const idbHead = Buffer.alloc(8);
  idbHead.writeUInt16LE(linkType, 0);
  idbHead.writeUInt32LE(65535, 4);
  const options: Buffer[] = [];
  if (opts.tsresol !== undefined) {
    const o = Buffer.alloc(8);
    o.writeUInt16LE(9, 0);
    o.writeUInt16LE(1, 2);
    o[4] = opts.tsresol;
    options.push(o, Buffer.alloc(4)); // opt_endofopt
  }
  const idb = block(1, Buffer.concat([idbHead, ...options]));
  const epbs = frames.map((f, i) => {
    const h = Buffer.alloc(20);
    const units = opts.units?.[i] ?? BigInt(1700000000 + i) * 1000000n + 250000n;
    h.writeUInt32LE(0, 0);
    h.writeUInt32LE(Number(units >> 32n), 4);
    h.writeUInt32LE(Number(units & 0xffffffffn), 8);
    h.writeUInt32LE(f.length, 12);
    h.writeUInt32LE(f.length, 16);
    return block(6, Buffer.concat([h, f]));
  });
  return Buffer.concat([shb, idb, ...epbs]);
}

/** A BGP message: marker, length, type, body (RFC 4271 §4.1). */
export function bgpMessage(type: number, body: Buffer = Buffer.alloc(0)): Buffer {
  const h = Buffer.alloc(19, 0xff);
  h.writeUInt16BE(19 + body.length, 16);
  h[18] = type;
  return Buffer.concat([h, body]);
}

export const KEEPALIVE = bgpMessage(4);

/** A minimal valid UPDATE announcing `prefixes` (IPv4, /24s given as "a.b.c") with ORIGIN, AS_PATH, NEXT_HOP. */
export function simpleUpdate(asns: number[], nextHop: string, prefixes: string[], as4 = true): Buffer {
  const asBytes = Buffer.alloc(asns.length * (as4 ? 4 : 2));
  asns.forEach((a, i) => (as4 ? asBytes.writeUInt32BE(a, i * 4) : asBytes.writeUInt16BE(a, i * 2)));
  const asPath = Buffer.concat([Buffer.from([2, asns.length]), asBytes]);
  const attrs = Buffer.concat([
    Buffer.from([0x40, 1, 1, 0]),
    Buffer.from([0x40, 2, asPath.length]),
    asPath,
    Buffer.from([0x40, 3, 4]),
    ipv4Bytes(nextHop),
  ]);
  const nlri = Buffer.concat(prefixes.map((p) => Buffer.concat([Buffer.from([24]), ipv4Bytes(`${p}.0`).subarray(0, 3)])));
  const body = Buffer.concat([Buffer.from([0, 0, attrs.length >> 8, attrs.length & 0xff]), attrs, nlri]);
  return bgpMessage(2, body);
}

/** One MRT record (RFC 6396 §2); `microseconds` makes it an _ET record. */
export function mrtRecord(type: number, subtype: number, body: Buffer, timestamp = 1700000000, microseconds?: number): Buffer {
  const h = Buffer.alloc(12);
  h.writeUInt32BE(timestamp, 0);
  h.writeUInt16BE(type, 4);
  h.writeUInt16BE(subtype, 6);
  const ext = microseconds === undefined ? Buffer.alloc(0) : Buffer.alloc(4);
  if (microseconds !== undefined) ext.writeUInt32BE(microseconds, 0);
  h.writeUInt32BE(ext.length + body.length, 8);
  return Buffer.concat([h, ext, body]);
}

/** BGP4MP_MESSAGE(_AS4) body over IPv4 (RFC 6396 §4.4.2/§4.4.3). */
export function bgp4mpMessage(as4: boolean, peerAs: number, localAs: number, message: Buffer): Buffer {
  const asb = Buffer.alloc(as4 ? 8 : 4);
  if (as4) {
    asb.writeUInt32BE(peerAs, 0);
    asb.writeUInt32BE(localAs, 4);
  } else {
    asb.writeUInt16BE(peerAs, 0);
    asb.writeUInt16BE(localAs, 2);
  }
  return Buffer.concat([asb, Buffer.from([0, 0, 0, 1]), ipv4Bytes('198.51.100.1'), ipv4Bytes('198.51.100.2'), message]);
}
