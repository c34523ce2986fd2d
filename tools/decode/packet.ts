/**
 * From a captured frame to a TCP segment: link-layer header, IPv4 or IPv6, then TCP.
 *
 * Link layers (tcpdump.org LINKTYPE_* numbers): NULL/BSD loopback (0) and OpenBSD LOOP (108) with a 4-octet address
 * family in either byte order; Ethernet (1) with any number of 802.1Q/802.1ad VLAN tags and MPLS labels; raw IP
 * (12, 14, 101) and IPV4/IPV6 (228, 229); PPP (9) and PPP in HDLC framing (50); Cisco HDLC (104); Frame Relay (107,
 * RFC 2427 NLPID and SNAP); Linux cooked SLL (113) and SLL2 (276); Juniper Ethernet (178, the "MGC" pseudo-header,
 * with its extension TLVs skipped, then Ethernet or — with the no-L2 flag — IP).
 *
 * IPv4 (RFC 791): options skipped, padding beyond Total Length cut, non-first fragments ignored. IPv6 (RFC 8200):
 * hop-by-hop, routing, destination-options, fragment (first fragment only) and AH headers skipped.
 * TCP (RFC 9293): header options skipped; flags kept for SYN/FIN/RST.
 */
import { formatIPv4, formatIPv6 } from './codec.ts';

/** A TCP segment with its endpoints. Addresses are canonical strings ("192.0.2.1", "2001:db8::1"). */
export interface TcpSegment {
  readonly srcIp: string;
  readonly dstIp: string;
  readonly srcPort: number;
  readonly dstPort: number;
  /** Sequence number (uint32). */
  readonly seq: number;
  /** Acknowledgment number (uint32), meaningful when `ackFlag` is set. */
  readonly ack: number;
  readonly ackFlag: boolean;
  readonly syn: boolean;
  readonly fin: boolean;
  readonly rst: boolean;
  /** The captured payload (shorter than `payloadLength` when the capture's snap length cut the frame). */
  readonly payload: Buffer;
  /** Payload length on the wire in octets, from the IP length fields. */
  readonly payloadLength: number;
}

/** Why a frame yields no TCP segment: not IP/TCP (ignored quietly) or malformed (worth a note). */
export type PacketResult = { readonly kind: 'tcp'; readonly segment: TcpSegment } | { readonly kind: 'skip'; readonly reason?: string };

const SKIP: PacketResult = { kind: 'skip' };

/** Parses an IP packet (version from the first nibble) and its TCP header. */
export function parseIp(b: Buffer, o: number): PacketResult {
  if (o >= b.length) return { kind: 'skip', reason: 'frame ends before the IP header' };
  const version = (b[o] ?? 0) >> 4;
  if (version === 4) return parseIpv4(b, o);
  if (version === 6) return parseIpv6(b, o);
  return SKIP;
}

function parseIpv4(b: Buffer, o: number): PacketResult {
  if (o + 20 > b.length) return { kind: 'skip', reason: 'truncated IPv4 header' };
  const ihl = ((b[o] ?? 0) & 0x0f) * 4;
  const totalLength = b.readUInt16BE(o + 2);
  const fragment = b.readUInt16BE(o + 6);
  const protocol = b[o + 9];
  if (ihl < 20 || o + ihl > b.length) return { kind: 'skip', reason: 'bad IPv4 header length' };
  if (protocol !== 6) return SKIP;
  if ((fragment & 0x1fff) !== 0) return { kind: 'skip', reason: 'IPv4 non-first fragment ignored' };
  // TSO captures record Total Length 0; otherwise cut link-layer padding.
  const wireEnd = totalLength === 0 ? b.length : o + totalLength;
  if (wireEnd < o + ihl) return { kind: 'skip', reason: 'IPv4 Total Length shorter than its header' };
  return parseTcp(b, o + ihl, Math.min(b.length, wireEnd), wireEnd, formatIPv4(b, o + 12), formatIPv4(b, o + 16));
}

function parseIpv6(b: Buffer, o: number): PacketResult {
  if (o + 40 > b.length) return { kind: 'skip', reason: 'truncated IPv6 header' };
  const payloadLength = b.readUInt16BE(o + 4);
  let next = b[o + 6];
  const src = formatIPv6(b, o + 8);
  const dst = formatIPv6(b, o + 24);
  const wireEnd = payloadLength === 0 ? b.length : o + 40 + payloadLength;
  const end = Math.min(b.length, wireEnd);
  let p = o + 40;
  for (let guard = 0; guard < 16; guard++) {
    if (next === 6) return parseTcp(b, p, end, wireEnd, src, dst);
    if (p + 8 > end) return SKIP;
    if (next === 0 || next === 43 || next === 60) {
      next = b[p];
      p += ((b[p + 1] ?? 0) + 1) * 8;
    } else if (next === 44) {
      if ((b.readUInt16BE(p + 2) & 0xfff8) !== 0) return { kind: 'skip', reason: 'IPv6 non-first fragment ignored' };
      next = b[p];
      p += 8;
    } else if (next === 51) {
      next = b[p];
      p += ((b[p + 1] ?? 0) + 2) * 4;
    } else return SKIP;
  }
  return SKIP;
}

function parseTcp(b: Buffer, o: number, end: number, wireEnd: number, srcIp: string, dstIp: string): PacketResult {
  if (o + 20 > end) return { kind: 'skip', reason: 'truncated TCP header' };
  const dataOffset = ((b[o + 12] ?? 0) >> 4) * 4;
  const flags = b[o + 13] ?? 0;
  if (dataOffset < 20 || o + dataOffset > end) return { kind: 'skip', reason: 'bad TCP data offset' };
  return {
    kind: 'tcp',
    segment: {
      srcIp,
      dstIp,
      srcPort: b.readUInt16BE(o),
      dstPort: b.readUInt16BE(o + 2),
      seq: b.readUInt32BE(o + 4),
      ack: b.readUInt32BE(o + 8),
      ackFlag: (flags & 0x10) !== 0,
      syn: (flags & 0x02) !== 0,
      fin: (flags & 0x01) !== 0,
      rst: (flags & 0x04) !== 0,
      payload: b.subarray(o + dataOffset, end),
      payloadLength: Math.max(end, wireEnd) - (o + dataOffset),
    },
  };
}

/** Dispatches on an EtherType (IEEE 802.3), following VLAN tags and MPLS label stacks. */
function parseEtherType(b: Buffer, type: number, o: number): PacketResult {
  for (let guard = 0; guard < 16; guard++) {
    if (type === 0x0800 || type === 0x86dd) return parseIp(b, o);
    if (type === 0x8100 || type === 0x88a8 || type === 0x9100) {
      if (o + 4 > b.length) return { kind: 'skip', reason: 'truncated VLAN tag' };
      type = b.readUInt16BE(o + 2);
      o += 4;
      continue;
    }
    if (type === 0x8847 || type === 0x8848) {
      // MPLS: pop labels until bottom of stack, then guess IPv4/IPv6 from the version nibble.
      while (o + 4 <= b.length) {
        const bos = ((b[o + 2] ?? 0) & 0x01) !== 0;
        o += 4;
        if (bos) return parseIp(b, o);
      }
      return { kind: 'skip', reason: 'truncated MPLS label stack' };
    }
    return SKIP;
  }
  return SKIP;
}

function parseEthernet(b: Buffer, o: number): PacketResult {
  if (o + 14 > b.length) return { kind: 'skip', reason: 'truncated Ethernet header' };
  const type = b.readUInt16BE(o + 12);
  if (type < 0x0600) {
    // IEEE 802.3 length field: LLC/SNAP (AA AA 03 + OUI) carries an EtherType.
    if (b[o + 14] === 0xaa && b[o + 15] === 0xaa && o + 22 <= b.length) return parseEtherType(b, b.readUInt16BE(o + 20), o + 22);
    return SKIP;
  }
  return parseEtherType(b, type, o + 14);
}

function parsePpp(b: Buffer): PacketResult {
  let o = 0;
  if (b[0] === 0xff && b[1] === 0x03) o = 2;
  if (o >= b.length) return { kind: 'skip', reason: 'truncated PPP header' };
  // Protocol field: 1 octet when its low bit is set (protocol field compression), else 2.
  let proto: number;
  if (((b[o] ?? 0) & 0x01) === 1) {
    proto = b[o] ?? 0;
    o += 1;
  } else {
    if (o + 2 > b.length) return { kind: 'skip', reason: 'truncated PPP header' };
    proto = b.readUInt16BE(o);
    o += 2;
  }
  if (proto === 0x21 || proto === 0x57) return parseIp(b, o);
  if (proto === 0x0281 || proto === 0x0283) return parseEtherType(b, 0x8847, o);
  return SKIP;
}

function parseFrameRelay(b: Buffer): PacketResult {
  // Q.922 address (2 octets, EA bit ends it), then RFC 2427: control 0x03, optional pad, NLPID.
  let o = 0;
  while (o < b.length && ((b[o] ?? 0) & 0x01) === 0) o++;
  o++;
  if (o + 2 > b.length) return { kind: 'skip', reason: 'truncated Frame Relay header' };
  if (b[o] === 0x03) {
    o++;
    if (b[o] === 0x00) o++;
    const nlpid = b[o];
    if (nlpid === 0xcc || nlpid === 0x8e) return parseIp(b, o + 1);
    if (nlpid === 0x80 && o + 6 <= b.length) return parseEtherType(b, b.readUInt16BE(o + 4), o + 6);
    return SKIP;
  }
  // Cisco Frame Relay encapsulation: an EtherType right after the address.
  return parseEtherType(b, b.readUInt16BE(o), o + 2);
}

function parseJuniperEther(b: Buffer): PacketResult {
  // "MGC" magic, flags octet; flag 0x80 = extension TLVs follow (2-octet total length); 0x02 = no L2 header.
  if (b.length < 4 || b[0] !== 0x4d || b[1] !== 0x47 || b[2] !== 0x43) return { kind: 'skip', reason: 'missing Juniper MGC magic' };
  const flags = b[3] ?? 0;
  let o = 4;
  if (flags & 0x80) {
    if (o + 2 > b.length) return { kind: 'skip', reason: 'truncated Juniper extension' };
    o += 2 + b.readUInt16BE(o);
  }
  if (flags & 0x02) return parseIp(b, o + 4);
  return parseEthernet(b, o);
}

/** Decodes one captured frame of the given LINKTYPE down to its TCP segment. */
export function parseFrame(linkType: number, b: Buffer): PacketResult {
  switch (linkType) {
    case 0:
    case 108: {
      if (b.length < 4) return { kind: 'skip', reason: 'truncated loopback header' };
      // The family is in the capturing host's byte order (0) or network order (108): accept either reading.
      const family = b.readUInt32LE(0) < 0x10000 ? b.readUInt32LE(0) : b.readUInt32BE(0);
      if (family === 2 || family === 24 || family === 28 || family === 30 || family === 10) return parseIp(b, 4);
      return SKIP;
    }
    case 1:
      return parseEthernet(b, 0);
    case 9:
    case 50:
      return parsePpp(b);
    case 12:
    case 14:
    case 101:
    case 228:
    case 229:
      return parseIp(b, 0);
    case 104:
      // Cisco HDLC: address, control, 2-octet EtherType.
      if (b.length < 4) return { kind: 'skip', reason: 'truncated Cisco HDLC header' };
      return parseEtherType(b, b.readUInt16BE(2), 4);
    case 107:
      return parseFrameRelay(b);
    case 113:
      if (b.length < 16) return { kind: 'skip', reason: 'truncated Linux SLL header' };
      return parseEtherType(b, b.readUInt16BE(14), 16);
    case 276:
      if (b.length < 20) return { kind: 'skip', reason: 'truncated Linux SLL2 header' };
      return parseEtherType(b, b.readUInt16BE(0), 20);
    case 178:
      return parseJuniperEther(b);
    default:
      return { kind: 'skip', reason: `unsupported link type ${linkType}` };
  }
}
