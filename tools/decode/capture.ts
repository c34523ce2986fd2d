/**
 * Readers for packet capture files: classic libpcap (all four magics: microsecond and nanosecond, either byte order)
 * and pcapng (Section Header, Interface Description, Enhanced, Simple and obsolete Packet blocks; several sections;
 * per-interface `if_tsresol` and `if_tsoffset`).
 *
 * Sources: the libpcap file format (draft-ietf-opsawg-pcap, tcpdump.org "pcap-savefile") and pcapng
 * (draft-ietf-opsawg-pcapng §4). Written here because the npm readers are either pcap-only and unmaintained
 * (`pcap-parser`) or stream-only; these are a few dozen lines over a Buffer.
 *
 * The readers take the file as it streams in (framing.ts) and never throw on bad input: a truncated or malformed
 * block is reported as a `CaptureProblem` item and reading stops where framing cannot continue.
 */
import { feedAll } from './framing.ts';
import type { UnitParser } from './framing.ts';

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

/** Largest pcap record or pcapng block read (octets); a larger length means the framing is lost. */
export const MAX_CAPTURE_UNIT = 16 * 1024 * 1024;

/** Where the readers put what they read. */
export type CaptureEmit = (item: CaptureItem) => void;

/**
 * Reads a classic libpcap file as it streams in (see framing.ts).
 * Header: magic(4) version(2+2) thiszone(4) sigfigs(4) snaplen(4) linktype(4); records: ts_sec, ts_usec|ts_nsec,
 * incl_len, orig_len, then incl_len bytes. Frame data is copied (the reader's input chunk is not retained).
 */
export class PcapReader implements UnitParser {
  need = 24;
  done = false;
  private headerRead = false;
  private little = false;
  private nano = false;
  private linkType = 0;
  private frame = 0;
  private readonly emit: CaptureEmit;

  constructor(emit: CaptureEmit) {
    this.emit = emit;
  }

  private u32(b: Buffer, o: number): number {
    return this.little ? b.readUInt32LE(o) : b.readUInt32BE(o);
  }

  feed(buf: Buffer, base: number): number {
    let o = 0;
    if (!this.headerRead) {
      if (buf.length < 24) return 0;
      const magic = buf.readUInt32BE(0);
      this.little = magic === 0xd4c3b2a1 || magic === 0x4d3cb2a1;
      this.nano = magic === 0xa1b23c4d || magic === 0x4d3cb2a1;
      // The link type's upper 16 bits may carry FCS information (LINKTYPE_FCS); only the low 16 bits are the type.
      this.linkType = this.u32(buf, 20) & 0xffff;
      this.headerRead = true;
      o = 24;
    }
    this.need = 16;
    while (o + 16 <= buf.length) {
      const inclLen = this.u32(buf, o + 8);
      if (inclLen > MAX_CAPTURE_UNIT) {
        this.emit({ kind: 'problem', offset: base + o, message: `pcap: record ${this.frame + 1} claims ${inclLen} octets, more than ${MAX_CAPTURE_UNIT}`, recoverable: false });
        this.done = true;
        return o;
      }
      const start = o + 16;
      if (start + inclLen > buf.length) {
        this.need = 16 + inclLen;
        return o;
      }
      this.frame++;
      this.emit({
        kind: 'frame',
        frame: this.frame,
        offset: base + o,
        timestamp: timeValue(this.u32(buf, o), this.u32(buf, o + 4), this.nano ? 9 : 6),
        linkType: this.linkType,
        data: Buffer.from(buf.subarray(start, start + inclLen)),
        originalLength: this.u32(buf, o + 12),
      });
      o = start + inclLen;
    }
    return o;
  }

  end(rest: Buffer, base: number, cut: boolean): void {
    if (cut) return;
    if (!this.headerRead) {
      this.emit({ kind: 'problem', offset: 0, message: 'pcap: file shorter than its 24-octet header', recoverable: false });
    } else if (rest.length > 0 && rest.length < 16) {
      this.emit({ kind: 'problem', offset: base, message: `pcap: truncated record header (${rest.length} of 16 octets)`, recoverable: false });
    } else if (rest.length > 0) {
      const msg = `pcap: record ${this.frame + 1} claims ${this.u32(rest, 8)} octets, only ${rest.length - 16} left`;
      this.emit({ kind: 'problem', offset: base, message: msg, recoverable: false });
    }
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

/**
 * Reads a pcapng file as it streams in (draft-ietf-opsawg-pcapng §4; see framing.ts). Unknown block types are
 * skipped. Frame data is copied (the reader's input chunk is not retained).
 */
export class PcapngReader implements UnitParser {
  need = 12;
  done = false;
  private little = true;
  private interfaces: PcapngInterface[] = [];
  private frame = 0;
  private readonly emit: CaptureEmit;

  constructor(emit: CaptureEmit) {
    this.emit = emit;
  }

  feed(buf: Buffer, base: number): number {
    let offset = 0;
    this.need = 12;
    while (offset + 12 <= buf.length) {
      const shb = buf.readUInt32BE(offset) === 0x0a0d0d0a;
      let little = this.little;
      if (shb) {
        // Section Header Block: the byte-order magic decides the endianness of everything in the section.
        const bom = buf.readUInt32LE(offset + 8);
        if (bom === 0x1a2b3c4d) little = true;
        else if (bom === 0x4d3c2b1a) little = false;
        else return this.stop(offset, base, `pcapng: bad byte-order magic 0x${bom.toString(16)}`);
      }
      const blockType = shb ? 0x0a0d0d0a : little ? buf.readUInt32LE(offset) : buf.readUInt32BE(offset);
      const blockLen = little ? buf.readUInt32LE(offset + 4) : buf.readUInt32BE(offset + 4);
      if (blockLen < 12 || blockLen % 4 !== 0 || blockLen > MAX_CAPTURE_UNIT) {
        return this.stop(offset, base, `pcapng: block of type 0x${blockType.toString(16)} has bad length ${blockLen}`);
      }
      if (offset + blockLen > buf.length) {
        this.need = blockLen;
        return offset;
      }
      if (shb) {
        this.little = little;
        this.interfaces = [];
      }
      this.block(buf, offset, blockType, blockLen, base);
      offset += blockLen;
    }
    return offset;
  }

  /** Reports a framing problem at buf[offset] and stops reading; returns `offset` (what was consumed). */
  private stop(offset: number, base: number, message: string): number {
    this.emit({ kind: 'problem', offset: base + offset, message, recoverable: false });
    this.done = true;
    return offset;
  }

  end(rest: Buffer, base: number, cut: boolean): void {
    if (cut || rest.length === 0) return;
    if (rest.length < 12) {
      this.emit({ kind: 'problem', offset: base, message: `pcapng: truncated block header (${rest.length} octets left)`, recoverable: false });
      return;
    }
    const blockType = this.little ? rest.readUInt32LE(0) : rest.readUInt32BE(0);
    const blockLen = this.little ? rest.readUInt32LE(4) : rest.readUInt32BE(4);
    const msg = `pcapng: block of type 0x${blockType.toString(16)} claims ${blockLen} octets, only ${rest.length} left`;
    this.emit({ kind: 'problem', offset: base, message: msg, recoverable: false });
  }

  /** One whole block at buf[offset, offset + blockLen). */
  private block(buf: Buffer, offset: number, blockType: number, blockLen: number, base: number): void {
    const little = this.little;
    const u32 = (o: number): number => (little ? buf.readUInt32LE(o) : buf.readUInt32BE(o));
    const u16 = (o: number): number => (little ? buf.readUInt16LE(o) : buf.readUInt16BE(o));
    const body = offset + 8;
    const bodyEnd = offset + blockLen - 4;
    const at = base + offset;
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
        this.interfaces.push({ linkType, resolution, offsetSec });
        break;
      }
      case 2:
      case 6: {
        // 6 = Enhanced Packet Block: InterfaceID(4) TsHigh(4) TsLow(4) CapLen(4) OrigLen(4) data.
        // 2 = obsolete Packet Block: InterfaceID(2) Drops(2) then the same fields.
        const frame = ++this.frame;
        if (bodyEnd - body < 20) {
          this.emit({ kind: 'problem', offset: at, message: `pcapng: packet block ${frame} too short`, recoverable: true });
          break;
        }
        const ifId = blockType === 6 ? u32(body) : u16(body);
        const iface = this.interfaces[ifId];
        const capLen = u32(body + 12);
        const origLen = u32(body + 16);
        const start = body + 20;
        if (!iface || start + capLen > bodyEnd) {
          const message = iface ? `pcapng: packet block ${frame} claims ${capLen} octets` : `pcapng: packet block ${frame} names unknown interface ${ifId}`;
          this.emit({ kind: 'problem', offset: at, message, recoverable: true });
          break;
        }
        this.emit({
          kind: 'frame',
          frame,
          offset: at,
          timestamp: pcapngTime(iface, u32(body + 4), u32(body + 8)),
          linkType: iface.linkType,
          data: Buffer.from(buf.subarray(start, start + capLen)),
          originalLength: origLen,
        });
        break;
      }
      case 3: {
        // Simple Packet Block: OrigLen(4) data; interface 0, no timestamp.
        const frame = ++this.frame;
        const iface = this.interfaces[0];
        if (!iface || bodyEnd - body < 4) {
          this.emit({ kind: 'problem', offset: at, message: `pcapng: simple packet block ${frame} without interface`, recoverable: true });
          break;
        }
        const origLen = u32(body);
        const capLen = Math.min(origLen, bodyEnd - body - 4);
        this.emit({ kind: 'frame', frame, offset: at, timestamp: 0, linkType: iface.linkType, data: Buffer.from(buf.subarray(body + 4, body + 4 + capLen)), originalLength: origLen });
        break;
      }
      default:
        break;
    }
  }
}

/** A reader for the capture format `buf` starts with (see captureFormat); undefined when neither. */
export function captureReader(format: 'pcap' | 'pcapng', emit: CaptureEmit): PcapReader | PcapngReader {
  return format === 'pcap' ? new PcapReader(emit) : new PcapngReader(emit);
}

/** Reads a whole in-memory capture of either format; one problem item when the buffer is neither. */
export function readCapture(buf: Buffer): CaptureItem[] {
  const format = captureFormat(buf);
  if (!format) return [{ kind: 'problem', offset: 0, message: 'not a pcap or pcapng file', recoverable: false }];
  const items: CaptureItem[] = [];
  feedAll(buf, captureReader(format, (item) => items.push(item)));
  return items;
}
