/**
 * Extended communities: typed views of the raw octets and builders for each layout. The attribute codec
 * (attributes.ts) keeps every community raw, so unknown types and subtypes re-encode byte for byte; this module
 * reads and writes the fields.
 *
 * EXTENDED_COMMUNITIES (type code 16, RFC 4360 §2), 8 octets each: Type (1) | Sub-Type (1) | Value (6).
 *   Type high-order bits: 0x80 IANA authority (I), 0x40 Transitive bit (T: set = non-transitive, RFC 4360 §2).
 *   Layouts by the low six bits of Type:
 *   0x00 Two-Octet AS Specific (RFC 4360 §3.1)     Global Administrator: 2-octet AS   | Local Administrator: 4 octets
 *   0x01 IPv4 Address Specific (RFC 4360 §3.2)     Global Administrator: IPv4 (4)     | Local Administrator: 2 octets
 *   0x02 Four-Octet AS Specific (RFC 5668 §2)      Global Administrator: 4-octet AS   | Local Administrator: 2 octets
 *   0x03 Opaque (RFC 4360 §3.3)                    Value: 6 octets
 *   Named sub-types: 0x02 Route Target (RFC 4360 §4, RFC 5668 §3), 0x03 Route Origin (RFC 4360 §5, RFC 5668 §3),
 *   and 0x04 Link Bandwidth on the two-octet AS layout (RFC 10005, formerly draft-ietf-idr-link-bandwidth): Global
 *   Administrator = the AS of the speaker that attaches it (AS_TRANS when that AS needs four octets), Local
 *   Administrator = the bandwidth as an IEEE 754 single-precision float, in bytes (not bits) per second. Type 0x40
 *   is the non-transitive form the draft began with; 0x00 the transitive form FRR sends by default (FRR user
 *   guide, "Weighted ECMP using BGP link bandwidth") — Herald's choice, see docs/routes.md "Extended communities".
 *
 * IPv6 Address Specific Extended Community (type code 25, RFC 5701 §2), 20 octets each:
 *   Type (0x00 transitive, 0x40 non-transitive) | Sub-Type (1) | Global Administrator: IPv6 (16) | Local Administrator (2).
 *   Named sub-types: 0x02 Route Target, 0x03 Route Origin (RFC 5701 §3).
 *
 * Builders throw a plain Error on out-of-range input (local input, never a protocol event); views never throw.
 */
import { AS_TRANS } from '../constants.ts';
import { formatIPv4, formatIPv6, parseIPv4Into, parseIPv6Into } from './nlri.ts';
import type { ExtendedCommunity, Ipv6ExtendedCommunity } from './types.ts';

/** Bits of the Type octet (RFC 4360 §2). */
export const ExtCommunityBit = {
  /** I bit: the type was allocated by IANA (First Come First Served, RFC 7153 §2.1). */
  IanaAuthority: 0x80,
  /** T bit: set = non-transitive across Autonomous Systems. */
  NonTransitive: 0x40,
} as const;

/** The layouts of the low six bits of the Type octet (RFC 4360 §3, RFC 5668 §2). */
export const ExtCommunityType = {
  TwoOctetAsSpecific: 0x00,
  IPv4AddressSpecific: 0x01,
  FourOctetAsSpecific: 0x02,
  Opaque: 0x03,
} as const;

/** Sub-types Herald names (RFC 4360 §4-§5, RFC 5668 §3, RFC 5701 §3, RFC 10005). */
export const ExtCommunitySubtype = {
  RouteTarget: 0x02,
  RouteOrigin: 0x03,
  /** Two-octet AS specific layout only. */
  LinkBandwidth: 0x04,
} as const;

/** Name of a named sub-type, as used in the JSON form (attributes-json.ts). */
export type ExtCommunityKind = 'route-target' | 'route-origin' | 'link-bandwidth';

/**
 * The fields of an 8-octet extended community, by layout. `transitive` is the inverse of the T bit. `other` covers
 * every type this module does not lay out (EVPN, flowspec actions, experimental), with the 7 octets after Type.
 */
export type ExtendedCommunityView =
  | {
      readonly layout: 'two-octet-as';
      readonly transitive: boolean;
      readonly subtype: number;
      /** The AS number, 0..65535. */
      readonly globalAdministrator: number;
      /** 4 octets, 0..4294967295. */
      readonly localAdministrator: number;
    }
  | {
      readonly layout: 'four-octet-as';
      readonly transitive: boolean;
      readonly subtype: number;
      /** The AS number, 0..4294967295. */
      readonly globalAdministrator: number;
      /** 2 octets, 0..65535. */
      readonly localAdministrator: number;
    }
  | {
      readonly layout: 'ipv4-address';
      readonly transitive: boolean;
      readonly subtype: number;
      /** Dotted quad. */
      readonly globalAdministrator: string;
      readonly localAdministrator: number;
    }
  | { readonly layout: 'opaque'; readonly transitive: boolean; readonly subtype: number; readonly value: Buffer }
  | { readonly layout: 'other'; readonly transitive: boolean; readonly type: number; readonly value: Buffer };

/** Reads the fields of an extended community (RFC 4360 §3, RFC 5668 §2). Never throws; `value` must be 8 octets. */
export function extendedCommunityView(c: ExtendedCommunity): ExtendedCommunityView {
  const v = c.value;
  const type = v[0] as number;
  const subtype = v[1] as number;
  const transitive = (type & ExtCommunityBit.NonTransitive) === 0;
  if ((type & ExtCommunityBit.IanaAuthority) === 0) {
    switch (type & 0x3f) {
      case ExtCommunityType.TwoOctetAsSpecific:
        return { layout: 'two-octet-as', transitive, subtype, globalAdministrator: v.readUInt16BE(2), localAdministrator: v.readUInt32BE(4) };
      case ExtCommunityType.IPv4AddressSpecific:
        return { layout: 'ipv4-address', transitive, subtype, globalAdministrator: formatIPv4(v, 2), localAdministrator: v.readUInt16BE(6) };
      case ExtCommunityType.FourOctetAsSpecific:
        return { layout: 'four-octet-as', transitive, subtype, globalAdministrator: v.readUInt32BE(2), localAdministrator: v.readUInt16BE(6) };
      case ExtCommunityType.Opaque:
        return { layout: 'opaque', transitive, subtype, value: v.subarray(2, 8) };
    }
  }
  return { layout: 'other', transitive, type, value: v.subarray(1, 8) };
}

/**
 * The named sub-type of an extended community: route target / origin on the two-octet AS, IPv4 and four-octet AS
 * layouts, link bandwidth on the two-octet AS layout (either transitivity). Undefined otherwise.
 */
export function extendedCommunityKind(c: ExtendedCommunity): ExtCommunityKind | undefined {
  const type = c.value[0] as number;
  if ((type & ExtCommunityBit.IanaAuthority) !== 0) return undefined;
  const layout = type & 0x3f;
  const subtype = c.value[1] as number;
  if (layout > ExtCommunityType.FourOctetAsSpecific) return undefined;
  if (subtype === ExtCommunitySubtype.RouteTarget) return 'route-target';
  if (subtype === ExtCommunitySubtype.RouteOrigin) return 'route-origin';
  if (subtype === ExtCommunitySubtype.LinkBandwidth && layout === ExtCommunityType.TwoOctetAsSpecific) return 'link-bandwidth';
  return undefined;
}

/** A decoded link bandwidth community (RFC 10005). */
export interface LinkBandwidth {
  /** The Global Administrator: the AS that attached it (AS_TRANS for a four-octet AS). */
  readonly asNumber: number;
  /** IEEE 754 single-precision value, bytes per second (may be any float the peer sent, even NaN). */
  readonly bytesPerSecond: number;
  /** Type 0x00 (true) or 0x40 (false). */
  readonly transitive: boolean;
}

/** The link bandwidth of a community of type 0x00 or 0x40 and sub-type 0x04 (RFC 10005), else undefined. */
export function linkBandwidthOf(c: ExtendedCommunity): LinkBandwidth | undefined {
  const v = c.value;
  if (((v[0] as number) & ~ExtCommunityBit.NonTransitive) !== ExtCommunityType.TwoOctetAsSpecific) return undefined;
  if (v[1] !== ExtCommunitySubtype.LinkBandwidth) return undefined;
  return { asNumber: v.readUInt16BE(2), bytesPerSecond: v.readFloatBE(4), transitive: (v[0] as number) === 0 };
}

// ---------------------------------------------------------------------------------------------------------------
// Builders

function uint(n: number, max: number, what: string): number {
  if (!Number.isInteger(n) || n < 0 || n > max) throw new Error(`${what} must be an integer in 0..${max}, got ${n}`);
  return n;
}

/** 8 octets: the Type octet (layout + T bit), the sub-type, then `fill` writes octets 2..7. */
function community(layout: number, subtype: number, transitive: boolean, fill: (b: Buffer) => void): ExtendedCommunity {
  const b = Buffer.alloc(8);
  b[0] = layout | (transitive ? 0 : ExtCommunityBit.NonTransitive);
  b[1] = uint(subtype, 0xff, 'sub-type');
  fill(b);
  return extendedCommunityFromBytes(b);
}

/** Wraps 8 raw octets (copied) as an ExtendedCommunity. Throws Error unless exactly 8 octets. */
export function extendedCommunityFromBytes(bytes: Uint8Array): ExtendedCommunity {
  if (bytes.length !== 8) throw new Error(`an extended community is 8 octets, got ${bytes.length}`);
  const value = Buffer.from(bytes);
  return { type: value[0] as number, subtype: value[1] as number, value };
}

/** Wraps 20 raw octets (copied) as an Ipv6ExtendedCommunity. Throws Error unless exactly 20 octets. */
export function ipv6ExtendedCommunityFromBytes(bytes: Uint8Array): Ipv6ExtendedCommunity {
  if (bytes.length !== 20) throw new Error(`an IPv6 address specific extended community is 20 octets, got ${bytes.length}`);
  const value = Buffer.from(bytes);
  return { type: value[0] as number, subtype: value[1] as number, value };
}

/** Two-Octet AS Specific (RFC 4360 §3.1): AS 0..65535, Local Administrator 0..4294967295. Default transitive. */
export function twoOctetAsSpecific(subtype: number, asNumber: number, localAdministrator: number, transitive = true): ExtendedCommunity {
  return community(ExtCommunityType.TwoOctetAsSpecific, subtype, transitive, (b) => {
    b.writeUInt16BE(uint(asNumber, 0xffff, 'two-octet AS specific Global Administrator'), 2);
    b.writeUInt32BE(uint(localAdministrator, 0xffffffff, 'two-octet AS specific Local Administrator'), 4);
  });
}

/** IPv4 Address Specific (RFC 4360 §3.2): dotted-quad address, Local Administrator 0..65535. Default transitive. */
export function ipv4AddressSpecific(subtype: number, address: string, localAdministrator: number, transitive = true): ExtendedCommunity {
  return community(ExtCommunityType.IPv4AddressSpecific, subtype, transitive, (b) => {
    parseIPv4Into(address, b, 2);
    b.writeUInt16BE(uint(localAdministrator, 0xffff, 'IPv4 address specific Local Administrator'), 6);
  });
}

/** Four-Octet AS Specific (RFC 5668 §2): AS 0..4294967295, Local Administrator 0..65535. Default transitive. */
export function fourOctetAsSpecific(subtype: number, asNumber: number, localAdministrator: number, transitive = true): ExtendedCommunity {
  return community(ExtCommunityType.FourOctetAsSpecific, subtype, transitive, (b) => {
    b.writeUInt32BE(uint(asNumber, 0xffffffff, 'four-octet AS specific Global Administrator'), 2);
    b.writeUInt16BE(uint(localAdministrator, 0xffff, 'four-octet AS specific Local Administrator'), 6);
  });
}

/** Opaque (RFC 4360 §3.3): 6 value octets. Default transitive. */
export function opaque(subtype: number, value: Uint8Array, transitive = true): ExtendedCommunity {
  if (value.length !== 6) throw new Error(`an opaque extended community value is 6 octets, got ${value.length}`);
  return community(ExtCommunityType.Opaque, subtype, transitive, (b) => b.set(value, 2));
}

/**
 * Link bandwidth (RFC 10005): two-octet AS specific, sub-type 0x04, the bandwidth in bytes per second rounded to the
 * nearest IEEE 754 single-precision value. An AS above 65535 is written as AS_TRANS (23456). `transitive` picks
 * type 0x00 (default, what FRR sends by default and what survives eBGP hops) or 0x40.
 * Throws Error for a negative, NaN or infinite bandwidth, or one beyond the largest finite float32 (~3.4e38).
 */
export function linkBandwidth(asNumber: number, bytesPerSecond: number, transitive = true): ExtendedCommunity {
  uint(asNumber, 0xffffffff, 'link bandwidth AS');
  if (!Number.isFinite(bytesPerSecond) || bytesPerSecond < 0) throw new Error(`link bandwidth must be a finite number of bytes per second >= 0, got ${bytesPerSecond}`);
  if (!Number.isFinite(Math.fround(bytesPerSecond))) throw new Error(`link bandwidth ${bytesPerSecond} bytes/s exceeds the largest IEEE 754 single-precision value`);
  return community(ExtCommunityType.TwoOctetAsSpecific, ExtCommunitySubtype.LinkBandwidth, transitive, (b) => {
    b.writeUInt16BE(asNumber > 0xffff ? AS_TRANS : asNumber, 2);
    b.writeFloatBE(bytesPerSecond === 0 ? 0 : bytesPerSecond, 4); // 0, not -0
  });
}

/** IPv6 Address Specific (RFC 5701 §2): IPv6 address text, Local Administrator 0..65535. Default transitive. */
export function ipv6AddressSpecific(subtype: number, address: string, localAdministrator: number, transitive = true): Ipv6ExtendedCommunity {
  const b = Buffer.alloc(20);
  b[0] = transitive ? 0x00 : ExtCommunityBit.NonTransitive;
  b[1] = uint(subtype, 0xff, 'sub-type');
  parseIPv6Into(address, b, 2);
  b.writeUInt16BE(uint(localAdministrator, 0xffff, 'IPv6 address specific Local Administrator'), 18);
  return ipv6ExtendedCommunityFromBytes(b);
}

/** The fields of an IPv6 Address Specific extended community (RFC 5701 §2). Never throws; `value` must be 20 octets. */
export interface Ipv6ExtendedCommunityView {
  readonly transitive: boolean;
  readonly subtype: number;
  /** RFC 5952 text. */
  readonly globalAdministrator: string;
  readonly localAdministrator: number;
}

/** Reads the fields of an IPv6 Address Specific extended community (RFC 5701 §2). Never throws. */
export function ipv6ExtendedCommunityView(c: Ipv6ExtendedCommunity): Ipv6ExtendedCommunityView {
  const v = c.value;
  return {
    transitive: ((v[0] as number) & ExtCommunityBit.NonTransitive) === 0,
    subtype: v[1] as number,
    globalAdministrator: formatIPv6(v, 2),
    localAdministrator: v.readUInt16BE(18),
  };
}

/** Route target / route origin name of an IPv6 Address Specific community of type 0x00 or 0x40 (RFC 5701 §3). */
export function ipv6ExtendedCommunityKind(c: Ipv6ExtendedCommunity): 'route-target' | 'route-origin' | undefined {
  if (((c.value[0] as number) & ~ExtCommunityBit.NonTransitive) !== 0) return undefined;
  if (c.value[1] === ExtCommunitySubtype.RouteTarget) return 'route-target';
  if (c.value[1] === ExtCommunitySubtype.RouteOrigin) return 'route-origin';
  return undefined;
}
