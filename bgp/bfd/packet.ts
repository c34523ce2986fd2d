/**
 * BFD Control packet codec (RFC 5880 §4.1) with the packet-level checks of §6.8.6.
 *
 * Wire layout (24 octets without an Authentication Section; all integers big-endian):
 *
 *   octet 0   Vers (3 bits, = 1) | Diag (5 bits)
 *   octet 1   Sta (2 bits) | P | F | C | A | D | M
 *   octet 2   Detect Mult
 *   octet 3   Length (octets, including any Authentication Section)
 *   4..7      My Discriminator
 *   8..11     Your Discriminator
 *   12..15    Desired Min TX Interval (microseconds)
 *   16..19    Required Min RX Interval (microseconds)
 *   20..23    Required Min Echo RX Interval (microseconds)
 *
 * Authentication (§4.2–4.4, §6.7) is not implemented in this version: a packet with the A bit set is discarded
 * (§6.8.6: "If the A bit is set and no authentication is in use, the packet MUST be discarded"), and we never send
 * one. Demand mode (§6.6) and the Echo function (§6.4) are not implemented either: we send D = 0 and Required Min
 * Echo RX Interval = 0, and a peer's D bit is recorded but never honoured as it can only take effect after we set
 * D ourselves (docs/sessions.md, BFD).
 */

/** BFD protocol version (RFC 5880 §4.1). */
export const BFD_VERSION = 1;
/** Length of a Control packet without an Authentication Section (RFC 5880 §4.1). */
export const BFD_CONTROL_LENGTH = 24;
/** Smallest Length with the A bit set: 24 + the 2-octet Auth Type/Auth Len header (RFC 5880 §6.8.6). */
export const BFD_CONTROL_LENGTH_AUTH = 26;

/** Session states (RFC 5880 §4.1 "Sta", §6.2). */
export type BfdState = 'AdminDown' | 'Down' | 'Init' | 'Up';
/** Wire value of each state. */
export const BFD_STATE_CODE: Readonly<Record<BfdState, number>> = { AdminDown: 0, Down: 1, Init: 2, Up: 3 };
const STATE_BY_CODE: readonly BfdState[] = ['AdminDown', 'Down', 'Init', 'Up'];

/** Diagnostic codes (RFC 5880 §4.1 "Diag"; 9..31 reserved). */
export const BfdDiag = {
  NoDiagnostic: 0,
  ControlDetectionTimeExpired: 1,
  EchoFunctionFailed: 2,
  NeighborSignaledSessionDown: 3,
  ForwardingPlaneReset: 4,
  PathDown: 5,
  ConcatenatedPathDown: 6,
  AdministrativelyDown: 7,
  ReverseConcatenatedPathDown: 8,
} as const;
export type BfdDiag = (typeof BfdDiag)[keyof typeof BfdDiag];

const DIAG_NAMES: Readonly<Record<number, string>> = {
  0: 'No Diagnostic',
  1: 'Control Detection Time Expired',
  2: 'Echo Function Failed',
  3: 'Neighbor Signaled Session Down',
  4: 'Forwarding Plane Reset',
  5: 'Path Down',
  6: 'Concatenated Path Down',
  7: 'Administratively Down',
  8: 'Reverse Concatenated Path Down',
};

/** RFC name of a diagnostic code, e.g. 1 → "Control Detection Time Expired"; reserved values → "Reserved (n)". */
export function describeDiag(diag: number): string {
  return DIAG_NAMES[diag] ?? `Reserved (${diag})`;
}

/** One decoded BFD Control packet. Intervals in microseconds, as on the wire. */
export interface ControlPacket {
  /** Diagnostic code, 0..31 (§4.1). */
  readonly diag: number;
  readonly state: BfdState;
  /** P: the sender asks for verification (a Poll Sequence, §6.5). */
  readonly poll: boolean;
  /** F: the sender answers a Poll. */
  readonly final: boolean;
  /** C: the sender's BFD does not share fate with its control plane. */
  readonly controlPlaneIndependent: boolean;
  /** D: the sender wishes to use Demand mode (§6.6). */
  readonly demand: boolean;
  /** Detect Mult, 1..255. */
  readonly detectMult: number;
  /** My Discriminator, nonzero. */
  readonly myDiscriminator: number;
  /** Your Discriminator, 0 when the sender does not know ours yet. */
  readonly yourDiscriminator: number;
  readonly desiredMinTxIntervalUs: number;
  readonly requiredMinRxIntervalUs: number;
  readonly requiredMinEchoRxIntervalUs: number;
}

/** Why a received packet was discarded (RFC 5880 §6.8.6 packet-level rules, in the RFC's order). */
export type BfdDiscardReason =
  | 'short'
  | 'version'
  | 'length'
  | 'detectMult'
  | 'multipoint'
  | 'myDiscriminator'
  | 'yourDiscriminator'
  | 'authentication';

/** Result of decoding: a packet, or the §6.8.6 rule it broke with a human message. */
export type DecodeResult =
  | { readonly ok: true; readonly packet: ControlPacket }
  | { readonly ok: false; readonly reason: BfdDiscardReason; readonly message: string };

function discard(reason: BfdDiscardReason, message: string): DecodeResult {
  return { ok: false, reason, message };
}

/**
 * Decodes one UDP payload as a BFD Control packet and applies the checks of RFC 5880 §6.8.6 that need no session:
 * version 1; Length ≥ 24 (≥ 26 with the A bit) and ≤ the payload; Detect Mult ≠ 0; M bit clear; My Discriminator ≠ 0;
 * Your Discriminator = 0 only with State Down or AdminDown; and, since authentication is not implemented, A bit clear.
 * Octets past Length are ignored. Never throws: a bad packet is a `{ ok: false }` result.
 */
export function decodeControlPacket(buf: Uint8Array): DecodeResult {
  if (buf.length < 4) return discard('short', `${buf.length} octets: too short for a BFD Control packet header`);
  const b0 = buf[0] ?? 0;
  const b1 = buf[1] ?? 0;
  const version = b0 >> 5;
  if (version !== BFD_VERSION) return discard('version', `version ${version}, expected ${BFD_VERSION}`);
  const auth = (b1 & 0x04) !== 0;
  const length = buf[3] ?? 0;
  const min = auth ? BFD_CONTROL_LENGTH_AUTH : BFD_CONTROL_LENGTH;
  if (length < min) return discard('length', `Length ${length} is below the minimum ${min}`);
  if (length > buf.length) return discard('length', `Length ${length} exceeds the ${buf.length}-octet UDP payload`);
  const detectMult = buf[2] ?? 0;
  if (detectMult === 0) return discard('detectMult', 'Detect Mult is zero');
  if ((b1 & 0x01) !== 0) return discard('multipoint', 'Multipoint (M) bit is set');
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const myDiscriminator = view.getUint32(4);
  const yourDiscriminator = view.getUint32(8);
  if (myDiscriminator === 0) return discard('myDiscriminator', 'My Discriminator is zero');
  const state = STATE_BY_CODE[b1 >> 6] ?? 'AdminDown';
  if (yourDiscriminator === 0 && state !== 'Down' && state !== 'AdminDown') {
    return discard('yourDiscriminator', `Your Discriminator is zero in a packet with State ${state}`);
  }
  if (auth) return discard('authentication', 'Authentication (A bit) is not supported: configure the peer without BFD authentication');
  return {
    ok: true,
    packet: {
      diag: b0 & 0x1f,
      state,
      poll: (b1 & 0x20) !== 0,
      final: (b1 & 0x10) !== 0,
      controlPlaneIndependent: (b1 & 0x08) !== 0,
      demand: (b1 & 0x02) !== 0,
      detectMult,
      myDiscriminator,
      yourDiscriminator,
      desiredMinTxIntervalUs: view.getUint32(12),
      requiredMinRxIntervalUs: view.getUint32(16),
      requiredMinEchoRxIntervalUs: view.getUint32(20),
    },
  };
}

function checkUint(name: string, v: number, max: number): void {
  if (!Number.isInteger(v) || v < 0 || v > max) throw new RangeError(`BFD ${name} must be an integer 0..${max}, got ${v}`);
}

/**
 * Encodes a Control packet (24 octets, Version 1, A = 0, M = 0). Throws RangeError for a field out of range, for
 * Detect Mult or My Discriminator 0, and for P and F both set (RFC 5880 §6.8.7: "MUST NOT have both").
 */
export function encodeControlPacket(p: ControlPacket): Buffer {
  checkUint('Diag', p.diag, 31);
  checkUint('Detect Mult', p.detectMult, 255);
  checkUint('My Discriminator', p.myDiscriminator, 0xffffffff);
  checkUint('Your Discriminator', p.yourDiscriminator, 0xffffffff);
  checkUint('Desired Min TX Interval', p.desiredMinTxIntervalUs, 0xffffffff);
  checkUint('Required Min RX Interval', p.requiredMinRxIntervalUs, 0xffffffff);
  checkUint('Required Min Echo RX Interval', p.requiredMinEchoRxIntervalUs, 0xffffffff);
  if (p.detectMult === 0) throw new RangeError('BFD Detect Mult must not be zero');
  if (p.myDiscriminator === 0) throw new RangeError('BFD My Discriminator must not be zero');
  if (p.poll && p.final) throw new RangeError('a BFD Control packet must not have both Poll and Final set (RFC 5880 §6.8.7)');
  const buf = Buffer.alloc(BFD_CONTROL_LENGTH);
  buf[0] = (BFD_VERSION << 5) | p.diag;
  buf[1] = (BFD_STATE_CODE[p.state] << 6) | (p.poll ? 0x20 : 0) | (p.final ? 0x10 : 0) | (p.controlPlaneIndependent ? 0x08 : 0) | (p.demand ? 0x02 : 0);
  buf[2] = p.detectMult;
  buf[3] = BFD_CONTROL_LENGTH;
  buf.writeUInt32BE(p.myDiscriminator, 4);
  buf.writeUInt32BE(p.yourDiscriminator, 8);
  buf.writeUInt32BE(p.desiredMinTxIntervalUs, 12);
  buf.writeUInt32BE(p.requiredMinRxIntervalUs, 16);
  buf.writeUInt32BE(p.requiredMinEchoRxIntervalUs, 20);
  return buf;
}
