/**
 * An independent wire builder for expected bytes in tests (the pg-protocol BufferList idea): written from the RFC
 * layouts with Buffer.concat, sharing no code with bgp/wire or bgp/codec, so a bug in the encoder cannot hide in
 * the expectation.
 */

type Part = Buffer | number[] | Uint8Array;

function cat(parts: readonly Part[]): Buffer {
  return Buffer.concat(parts.map((p) => (Buffer.isBuffer(p) ? p : Buffer.from(p))));
}

/** One octet. */
export const u8 = (n: number): Buffer => Buffer.from([n & 0xff]);
/** Two octets, big-endian. */
export const u16 = (n: number): Buffer => Buffer.from([(n >>> 8) & 0xff, n & 0xff]);
/** Four octets, big-endian. */
export const u32 = (n: number): Buffer => Buffer.from([(n >>> 24) & 0xff, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff]);
/** An IPv4 dotted quad as 4 octets. */
export const ip4 = (s: string): Buffer => Buffer.from(s.split('.').map(Number));
/** Concatenation. */
export const bytes = (...parts: Part[]): Buffer => cat(parts);

/** A whole message: 16 × 0xff, Length (computed), Type, body (RFC 4271 §4.1). */
export function message(type: number, ...body: Part[]): Buffer {
  const b = cat(body);
  return cat([Buffer.alloc(16, 0xff), u16(19 + b.length), u8(type), b]);
}

/** A capability TLV: Code(1) Length(1) Value (RFC 5492 §4). */
export function capability(code: number, ...value: Part[]): Buffer {
  const v = cat(value);
  return cat([u8(code), u8(v.length), v]);
}

/** An optional parameter: Type(1) Length(1) Value (RFC 4271 §4.2). */
export function param(type: number, ...value: Part[]): Buffer {
  const v = cat(value);
  return cat([u8(type), u8(v.length), v]);
}

/** An RFC 9072 optional parameter: Type(1) Length(2) Value. */
export function extParam(type: number, ...value: Part[]): Buffer {
  const v = cat(value);
  return cat([u8(type), u16(v.length), v]);
}

/** An OPEN message (type 1) from its fields; `params` are already-built parameters (non-extended form). */
export function open(f: { version?: number; as: number; holdTime: number; id: string; params?: Buffer[] }): Buffer {
  const p = cat(f.params ?? []);
  return message(1, u8(f.version ?? 4), u16(f.as), u16(f.holdTime), ip4(f.id), u8(p.length), p);
}

/** An OPEN in the RFC 9072 form: Opt Parm Len 255, Non-Ext OP Type 255, Extended Length(2), `extParam`s. */
export function openExtended(f: { as: number; holdTime: number; id: string; params: Buffer[] }): Buffer {
  const p = cat(f.params);
  return message(1, u8(4), u16(f.as), u16(f.holdTime), ip4(f.id), u8(255), u8(255), u16(p.length), p);
}

/** A NOTIFICATION (type 3). */
export function notification(code: number, subcode: number, ...data: Part[]): Buffer {
  return message(3, u8(code), u8(subcode), cat(data));
}

/** A KEEPALIVE (type 4). */
export function keepalive(): Buffer {
  return message(4);
}

/** A ROUTE-REFRESH (type 5): AFI(2) Subtype(1) SAFI(1) and optional extra octets. */
export function routeRefresh(afi: number, subtype: number, safi: number, ...extra: Part[]): Buffer {
  return message(5, u16(afi), u8(subtype), u8(safi), cat(extra));
}
