/**
 * Readers for packet capture files: classic libpcap (all four magics: microsecond and nanosecond, either byte order)
 * and pcapng (Section Header, Interface Description, Enhanced, Simple and obsolete Packet blocks; several sections;
 * per-interface `if_tsresol` and `if_tsoffset`).
 *
 * Sources: the libpcap file format (draft-ietf-opsawg-pcap, tcpdump.org "pcap-savefile") and pcapng
 * (draft-ietf-opsawg-pcapng §4). Written here because the npm readers are either pcap-only and unmaintained
 * (`pcap-parser`) or stream-only; these are a few dozen lines over a Buffer.
 *
 * The readers never throw on bad input: a truncated or malformed block is reported as a `CaptureProblem` item and
 * reading stops where framing cannot continue.
 */

/** One captured frame. `timestamp` is Unix time in seconds with the file's fractional precision (µs or ns). */
export interface CaptureFrame {
  readonly kind: 'frame';
  /** 1-based frame number, counted as Wireshark and tcpdump `-#` count them. */
  readonly frame: number;
  /** Byte offset of the record (pcap) or block (pcapng) in the file. */
  readonly offset: number;
  /** Unix time in seconds (fractional). */
  readonly timestamp: number;
  /** LINKTYPE_* value of the frame's interface (tcpdump.org link-layer header types). */
  readonly linkType: number;
  /** The captured bytes (may be shorter than the original frame when the snap length cut it). */
  readonly data: Buffer;
  /** Length of the frame on the wire in octets. */
  readonly originalLength: number;
}

/** A capture-level problem: the file is truncated or a block is malformed. */
export interface CaptureProblem {
  readonly kind: 'problem';
  readonly offset: number;
  readonly message: string;
  /** False when reading stopped here. */
  readonly recoverable: boolean;
}

export type CaptureItem = CaptureFrame | CaptureProblem;

/** Which capture container a buffer holds, judged by its magic number; undefined when neither. */
export function captureFormat(buf: Buffer): 'pcap' | 'pcapng' | undefined {
  if (buf.length < 4) return undefined;
  const be = buf.readUInt32BE(0);
  if (be === 0xa1b2c3d4 || be === 0xd4c3b2a1 || be === 0xa1b23c4d || be === 0x4d3cb2a1) return 'pcap';
  if (be === 0x0a0d0d0a) return 'pcapng';
  return undefined;
}

/** Formats seconds plus a fraction with `digits` decimal places as a Number (exact decimal, no float drift). */
function timeValue(seconds: number, fraction: number, digits: number): number {
  if (digits === 0) return seconds;
  return Number(`${seconds}.${String(fraction).padStart(digits, '0')}`);
}

/**
 * Iterates the frames of a classic libpcap file.
 * Header: magic(4) version(2+2) thiszone(4) sigfigs(4) snaplen(4) linktype(4); records: ts_sec, ts_usec|ts_nsec,
 * incl_len, orig_len, then incl_len bytes.
 */
export function* readPcap(buf: Buffer): Generator<CaptureItem> {
  if (buf.length < 24) {
    yield { kind: 'problem', offset: 0, message: 'pcap: file shorter than its 24-octet header', recoverable: false };
    return;
  }
  const magic = buf.readUInt32BE(0);
  const little = magic === 0xd4c3b2a1 || magic === 0x4d3cb2a1;
  const nano = magic === 0xa1b23c4d || magic === 0x4d3cb2a1;
  const u32 = (o: number): number => (little ? buf.readUInt32LE(o) : buf.readUInt32BE(o));
  // The link type's upper 16 bits may carry FCS information (LINKTYPE_FCS); only the low 16 bits are the type.
  const linkType = u32(20) & 0xffff;
  let offset = 24;
  let frame = 0;
  while (offset < buf.length) {
    if (offset + 16 > buf.length) {
      yield { kind: 'problem', offset, message: `pcap: truncated record header (${buf.length - offset} of 16 octets)`, recoverable: false };
      return;
    }
    const sec = u32(offset);
    const frac = u32(offset + 4);
    const inclLen = u32(offset + 8);
    const origLen = u32(offset + 12);
    frame++;
    const start = offset + 16;
    if (inclLen > 0x4000000 || start + inclLen > buf.length) {
      yield { kind: 'problem', offset, message: `pcap: record ${frame} claims ${inclLen} octets, only ${buf.length - start} left`, recoverable: false };
      return;
    }
    yield {
      kind: 'frame',
      frame,
      offset,
      timestamp: timeValue(sec, frac, nano ? 9 : 6),
      linkType,
      data: buf.subarray(start, start + inclLen),
      originalLength: origLen,
    };
    offset = start + inclLen;
  }
}

interface PcapngInterface {
  readonly linkType: number;
  /** Units per second as a power: 10^-n (decimal) or 2^-n (binary). */
  readonly resolution: { readonly base: 10 | 2; readonly exponent: number };
  /** if_tsoffset: seconds added to every timestamp. */
  readonly offsetSec: bigint;
}

/** Converts a pcapng 64-bit timestamp to seconds on the interface's resolution. */
function pcapngTime(iface: PcapngInterface, high: number, low: number): number {
  const units = (BigInt(high) << 32n) | BigInt(low);
  const { base, exponent } = iface.resolution;
  if (base === 10) {
    const div = 10n ** BigInt(exponent);
    return timeValue(Number(units / div + iface.offsetSec), Number(units % div), exponent);
  }
  return Number(units) / 2 ** exponent + Number(iface.offsetSec);
}

/** Iterates the packets of a pcapng file (draft-ietf-opsawg-pcapng §4). Unknown block types are skipped. */
export function* readPcapng(buf: Buffer): Generator<CaptureItem> {
  let offset = 0;
  let little = true;
  let interfaces: PcapngInterface[] = [];
  let frame = 0;
  const u32 = (o: number): number => (little ? buf.readUInt32LE(o) : buf.readUInt32BE(o));
  const u16 = (o: number): number => (little ? buf.readUInt16LE(o) : buf.readUInt16BE(o));
  while (offset < buf.length) {
    if (offset + 12 > buf.length) {
      yield { kind: 'problem', offset, message: `pcapng: truncated block header (${buf.length - offset} octets left)`, recoverable: false };
      return;
    }
    const blockType = buf.readUInt32BE(offset) === 0x0a0d0d0a ? 0x0a0d0d0a : u32(offset);
    if (blockType === 0x0a0d0d0a) {
      // Section Header Block: the byte-order magic decides the endianness of everything in the section.
      const bom = buf.readUInt32LE(offset + 8);
      if (bom === 0x1a2b3c4d) little = true;
      else if (bom === 0x4d3c2b1a) little = false;
      else {
        yield { kind: 'problem', offset, message: `pcapng: bad byte-order magic 0x${bom.toString(16)}`, recoverable: false };
        return;
      }
      interfaces = [];
    }
    const blockLen = u32(offset + 4);
    if (blockLen < 12 || blockLen % 4 !== 0 || offset + blockLen > buf.length) {
      yield { kind: 'problem', offset, message: `pcapng: block of type 0x${blockType.toString(16)} has bad length ${blockLen}`, recoverable: false };
      return;
    }
    const body = offset + 8;
    const bodyEnd = offset + blockLen - 4;
    switch (blockType) {
      case 1: {
        // Interface Description Block: LinkType(2) Reserved(2) SnapLen(4) options.
        if (bodyEnd - body < 8) break;
        const linkType = u16(body);
        let resolution: PcapngInterface['resolution'] = { base: 10, exponent: 6 };
        let offsetSec = 0n;
        let o = body + 8;
        while (o + 4 <= bodyEnd) {
          const code = u16(o);
          const len = u16(o + 2);
          const v = o + 4;
          if (code === 0 || v + len > bodyEnd) break;
          if (code === 9 && len >= 1) {
            const r = buf[v] ?? 6;
            resolution = r & 0x80 ? { base: 2, exponent: r & 0x7f } : { base: 10, exponent: r };
          } else if (code === 14 && len >= 8) {
            offsetSec = little ? buf.readBigInt64LE(v) : buf.readBigInt64BE(v);
          }
          o = v + ((len + 3) & ~3);
        }
        interfaces.push({ linkType, resolution, offsetSec });
        break;
      }
      case 2:
      case 6: {
        // 6 = Enhanced Packet Block: InterfaceID(4) TsHigh(4) TsLow(4) CapLen(4) OrigLen(4) data.
        // 2 = obsolete Packet Block: InterfaceID(2) Drops(2) then the same fields.
        frame++;
        if (bodyEnd - body < 20) {
          yield { kind: 'problem', offset, message: `pcapng: packet block ${frame} too short`, recoverable: true };
          break;
        }
        const ifId = blockType === 6 ? u32(body) : u16(body);
        const iface = interfaces[ifId];
        const capLen = u32(body + 12);
        const origLen = u32(body + 16);
        const start = body + 20;
        if (!iface || start + capLen > bodyEnd) {
          yield {
            kind: 'problem',
            offset,
            message: iface ? `pcapng: packet block ${frame} claims ${capLen} octets` : `pcapng: packet block ${frame} names unknown interface ${ifId}`,
            recoverable: true,
          };
          break;
        }
        yield {
          kind: 'frame',
          frame,
          offset,
          timestamp: pcapngTime(iface, u32(body + 4), u32(body + 8)),
          linkType: iface.linkType,
          data: buf.subarray(start, start + capLen),
          originalLength: origLen,
        };
        break;
      }
      case 3: {
        // Simple Packet Block: OrigLen(4) data; interface 0, no timestamp.
        frame++;
        const iface = interfaces[0];
        if (!iface || bodyEnd - body < 4) {
          yield { kind: 'problem', offset, message: `pcapng: simple packet block ${frame} without interface`, recoverable: true };
          break;
        }
        const origLen = u32(body);
        const capLen = Math.min(origLen, bodyEnd - body - 4);
        yield { kind: 'frame', frame, offset, timestamp: 0, linkType: iface.linkType, data: buf.subarray(body + 4, body + 4 + capLen), originalLength: origLen };
        break;
      }
      default:
        break;
    }
    offset += blockLen;
  }
}

/** Iterates a capture of either format; yields one problem item when the buffer is neither. */
export function* readCapture(buf: Buffer): Generator<CaptureItem> {
  const format = captureFormat(buf);
  if (format === 'pcap') yield* readPcap(buf);
  else if (format === 'pcapng') yield* readPcapng(buf);
  else yield { kind: 'problem', offset: 0, message: 'not a pcap or pcapng file', recoverable: false };
}
