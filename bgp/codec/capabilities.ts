/**
 * Capabilities (RFC 5492) carried in the OPEN Capabilities optional parameter: decode and encode of each one.
 *
 * Known codes and their required lengths (value octets):
 * - 1 Multiprotocol (RFC 4760 §8): 4 — AFI(2), Reserved(1, ignored, written 0), SAFI(1).
 * - 2 Route Refresh (RFC 2918), 128 Cisco route refresh, 70 Enhanced Route Refresh (RFC 7313), 6 Extended Message
 *   (RFC 8654): 0.
 * - 65 4-octet AS (RFC 6793 §3): 4.
 * - 64 Graceful Restart (RFC 4724 §3, N bit RFC 8538): 2 + 4·n — flags/time(2) then per family AFI(2) SAFI(1) flags(1).
 *   Reserved flag bits are ignored; a value with any set also keeps `raw` so it re-encodes exactly.
 * - 69 ADD-PATH (RFC 7911 §4): 4·n — AFI(2) SAFI(1) Send/Receive(1). A Send/Receive value other than 1..3 makes the
 *   whole capability "not understood" (RFC 7911 §4: SHOULD be ignored): it is kept as `Unknown` (raw) instead.
 * - 73 FQDN (draft-walton-bgp-hostname-capability §3): hostname length(1) hostname, domain length(1) domain,
 *   nothing after. Text that is not valid UTF-8 keeps the capability as `Unknown` (raw) so it re-encodes exactly.
 * - Every other code: `Unknown`, value kept byte for byte.
 *
 * Error choice (documented in docs/codec.md): a known capability whose length does not fit its code is malformed;
 * RFC 5492 names no subcode for that, so it is BgpError 2/0 (OPEN Message Error / Unspecific, data empty) with a
 * detail naming the capability — as GoBGP and BIRD do for malformed optional parameters.
 */
import { isUtf8 } from 'node:buffer';
import { CapabilityCode } from '../constants.ts';
import { BgpError } from '../errors.ts';
import type { ByteWriter } from '../wire/writer.ts';
import type { Capability } from './types.ts';

/** Capability `type` → IANA code (for `Unknown`, the code is in the object). */
export const CAPABILITY_CODE: Readonly<Record<Exclude<Capability['type'], 'Unknown'>, number>> = {
  Multiprotocol: CapabilityCode.Multiprotocol,
  RouteRefresh: CapabilityCode.RouteRefresh,
  RouteRefreshCisco: CapabilityCode.RouteRefreshCisco,
  EnhancedRouteRefresh: CapabilityCode.EnhancedRouteRefresh,
  ExtendedMessage: CapabilityCode.ExtendedMessage,
  FourOctetAs: CapabilityCode.FourOctetAs,
  GracefulRestart: CapabilityCode.GracefulRestart,
  AddPath: CapabilityCode.AddPath,
  Fqdn: CapabilityCode.Fqdn,
};

/** IANA names of capability codes, for logs and JSON (`name` of unknown codes falls back to "Unknown"). */
export const CAPABILITY_NAMES: Readonly<Record<number, string>> = {
  1: 'Multiprotocol Extensions',
  2: 'Route Refresh',
  5: 'Extended Next Hop Encoding',
  6: 'BGP Extended Message',
  9: 'BGP Role',
  64: 'Graceful Restart',
  65: 'Support for 4-octet AS number',
  69: 'ADD-PATH',
  70: 'Enhanced Route Refresh',
  71: 'Long-Lived Graceful Restart',
  73: 'FQDN',
  75: 'Software Version',
  128: 'Route Refresh (Cisco)',
};

/** The wire code of a capability object. */
export function capabilityCode(cap: Capability): number {
  return cap.type === 'Unknown' ? cap.code : CAPABILITY_CODE[cap.type];
}

function malformed(code: number, length: number, why: string): BgpError {
  return BgpError.openUnspecific(`malformed capability ${code} (${CAPABILITY_NAMES[code] ?? 'unknown'}), length ${length}: ${why}`);
}

function unknown(code: number, buf: Buffer, start: number, end: number): Capability {
  return { type: 'Unknown', code, value: Buffer.from(buf.subarray(start, end)) };
}

/**
 * Decodes one capability whose value is `buf[start, end)`. Values kept (Unknown) are copied, never views.
 * Throws BgpError 2/0 when the length does not fit the code (see module comment).
 */
export function decodeCapability(code: number, buf: Buffer, start: number, end: number): Capability {
  const len = end - start;
  switch (code) {
    case CapabilityCode.Multiprotocol:
      if (len !== 4) throw malformed(code, len, 'expected 4');
      return { type: 'Multiprotocol', afi: buf.readUInt16BE(start), safi: buf[start + 3] as number };
    case CapabilityCode.RouteRefresh:
    case CapabilityCode.RouteRefreshCisco:
    case CapabilityCode.EnhancedRouteRefresh:
    case CapabilityCode.ExtendedMessage:
      if (len !== 0) throw malformed(code, len, 'expected 0');
      return code === CapabilityCode.RouteRefresh
        ? { type: 'RouteRefresh' }
        : code === CapabilityCode.RouteRefreshCisco
          ? { type: 'RouteRefreshCisco' }
          : code === CapabilityCode.EnhancedRouteRefresh
            ? { type: 'EnhancedRouteRefresh' }
            : { type: 'ExtendedMessage' };
    case CapabilityCode.FourOctetAs:
      if (len !== 4) throw malformed(code, len, 'expected 4');
      return { type: 'FourOctetAs', asNumber: buf.readUInt32BE(start) };
    case CapabilityCode.GracefulRestart: {
      if (len < 2 || (len - 2) % 4 !== 0) throw malformed(code, len, 'expected 2 + 4n');
      const head = buf.readUInt16BE(start);
      // RFC 4724 §3: reserved flag bits are ignored on receipt (the capability is GracefulRestart all the same,
      // test/bgp/codec/open.test.ts "capability edge cases"); `raw` keeps the exact bytes.
      let reserved = (head & 0x3000) !== 0;
      const families: { afi: number; safi: number; forwardingPreserved: boolean }[] = [];
      for (let p = start + 2; p < end; p += 4) {
        const flags = buf[p + 3] as number;
        if ((flags & 0x7f) !== 0) reserved = true;
        families.push({ afi: buf.readUInt16BE(p), safi: buf[p + 2] as number, forwardingPreserved: (flags & 0x80) !== 0 });
      }
      const gr = {
        type: 'GracefulRestart' as const,
        restarting: (head & 0x8000) !== 0,
        notification: (head & 0x4000) !== 0,
        restartTimeSec: head & 0x0fff,
        families,
      };
      return reserved ? { ...gr, raw: Buffer.from(buf.subarray(start, end)) } : gr;
    }
    case CapabilityCode.AddPath: {
      if (len === 0 || len % 4 !== 0) throw malformed(code, len, 'expected 4n, n >= 1');
      const families: { afi: number; safi: number; sendReceive: 1 | 2 | 3 }[] = [];
      for (let p = start; p < end; p += 4) {
        const sr = buf[p + 3] as number;
        if (sr < 1 || sr > 3) return unknown(code, buf, start, end); // RFC 7911 §4: not understood, ignored
        families.push({ afi: buf.readUInt16BE(p), safi: buf[p + 2] as number, sendReceive: sr as 1 | 2 | 3 });
      }
      return { type: 'AddPath', families };
    }
    case CapabilityCode.Fqdn: {
      if (len < 2) throw malformed(code, len, 'expected at least 2');
      const hostLen = buf[start] as number;
      const domLenAt = start + 1 + hostLen;
      if (domLenAt >= end) throw malformed(code, len, `hostname length ${hostLen} overruns`);
      const domLen = buf[domLenAt] as number;
      if (domLenAt + 1 + domLen !== end) throw malformed(code, len, `domain name length ${domLen} does not fill the value`);
      const host = buf.subarray(start + 1, domLenAt);
      const dom = buf.subarray(domLenAt + 1, end);
      if (!isUtf8(host) || !isUtf8(dom)) return unknown(code, buf, start, end);
      return { type: 'Fqdn', hostname: host.toString('utf8'), domainName: dom.toString('utf8') };
    }
    default:
      return unknown(code, buf, start, end);
  }
}

/**
 * Decodes the capabilities packed in one Capabilities optional parameter value `buf[start, end)`
 * (RFC 5492 §4: a sequence of Code(1) Length(1) Value). Appends to `out` and returns how many were read.
 * Throws BgpError 2/0 if a capability overruns the parameter or is malformed.
 */
export function decodeCapabilities(buf: Buffer, start: number, end: number, out: Capability[]): number {
  let p = start;
  let n = 0;
  while (p < end) {
    if (end - p < 2) throw BgpError.openUnspecific(`capability header truncated at offset ${p - start} of the parameter`);
    const code = buf[p] as number;
    const len = buf[p + 1] as number;
    const vStart = p + 2;
    const vEnd = vStart + len;
    if (vEnd > end) throw BgpError.openUnspecific(`capability ${code} length ${len} overruns the optional parameter`);
    out.push(decodeCapability(code, buf, vStart, vEnd));
    n++;
    p = vEnd;
  }
  return n;
}

/**
 * Appends one capability as Code(1) Length(1) Value to `w` (RFC 5492 §4).
 * Throws RangeError (a local bug, not a BgpError) for values that cannot be encoded: value longer than 255 octets,
 * restartTimeSec outside 0..4095, numbers out of field range, FQDN parts longer than 255 octets.
 */
export function encodeCapability(cap: Capability, w: ByteWriter): void {
  const code = capabilityCode(cap);
  w.u8(code);
  const lenAt = w.reserve(1);
  const start = w.length;
  switch (cap.type) {
    case 'Multiprotocol':
      w.u16(cap.afi).u8(0).u8(cap.safi);
      break;
    case 'RouteRefresh':
    case 'RouteRefreshCisco':
    case 'EnhancedRouteRefresh':
    case 'ExtendedMessage':
      break;
    case 'FourOctetAs':
      w.u32(cap.asNumber);
      break;
    case 'GracefulRestart': {
      if (cap.raw) {
        w.bytes(cap.raw);
        break;
      }
      const t = cap.restartTimeSec;
      if (!(Number.isInteger(t) && t >= 0 && t <= 0x0fff)) throw new RangeError(`restartTimeSec out of range: ${t}`);
      w.u16((cap.restarting ? 0x8000 : 0) | (cap.notification ? 0x4000 : 0) | t);
      for (const f of cap.families) w.u16(f.afi).u8(f.safi).u8(f.forwardingPreserved ? 0x80 : 0);
      break;
    }
    case 'AddPath':
      for (const f of cap.families) w.u16(f.afi).u8(f.safi).u8(f.sendReceive);
      break;
    case 'Fqdn': {
      const host = Buffer.from(cap.hostname, 'utf8');
      const dom = Buffer.from(cap.domainName, 'utf8');
      w.u8(host.length).bytes(host).u8(dom.length).bytes(dom);
      break;
    }
    case 'Unknown':
      w.bytes(cap.value);
      break;
    default:
      return assertNever(cap);
  }
  const len = w.length - start;
  if (len > 255) throw new RangeError(`capability ${code} value of ${len} octets exceeds 255`);
  w.setU8(lenAt, len);
}

function assertNever(x: never): never {
  throw new Error(`unexpected capability ${JSON.stringify(x)}`);
}
