/**
 * OPEN message (RFC 4271 §4.2) with optional parameters (RFC 5492 capabilities, RFC 9072 extended length),
 * its syntactic checks (RFC 4271 §6.2, RFC 6286, RFC 7607), the session-context checks `validateOpen`, and
 * `negotiate` (the session parameters both OPENs imply).
 *
 * Body layout: Version(1) My Autonomous System(2) Hold Time(2, seconds) BGP Identifier(4) Opt Parm Len(1) params.
 * RFC 9072 form: Opt Parm Len = 255, then Non-Ext OP Type = 255, Extended Opt Parm Length(2), and each parameter is
 * Type(1) Length(2) Value.
 */
import { AS_TRANS, BGP_VERSION, HEADER_LENGTH, MessageType, OptionalParameterType } from '../constants.ts';
import type { Family } from '../constants.ts';
import { BgpError } from '../errors.ts';
import { ByteWriter } from '../wire/writer.ts';
import { capabilityCode, decodeCapabilities, encodeCapability } from './capabilities.ts';
import { MIN_LENGTH } from './header.ts';
import { familyOf } from './types.ts';
import type { Capability, CodecContext, OpenMessage } from './types.ts';

/** Minimum OPEN body length in octets (29-octet message minus the header). */
const OPEN_BODY_MIN = MIN_LENGTH[MessageType.Open] - HEADER_LENGTH;

/** Formats a uint32 as a dotted quad ("192.0.2.1"). */
export function formatIdentifier(n: number): string {
  return `${n >>> 24}.${(n >>> 16) & 0xff}.${(n >>> 8) & 0xff}.${n & 0xff}`;
}

/** Parses a dotted quad into a uint32. Throws RangeError (a local bug) if it is not four decimal octets. */
export function parseIdentifier(s: string): number {
  const parts = s.split('.');
  if (parts.length !== 4) throw new RangeError(`not a dotted-quad BGP Identifier: ${JSON.stringify(s)}`);
  let n = 0;
  for (const p of parts) {
    if (!/^\d{1,3}$/.test(p)) throw new RangeError(`not a dotted-quad BGP Identifier: ${JSON.stringify(s)}`);
    const v = Number(p);
    if (v > 255) throw new RangeError(`not a dotted-quad BGP Identifier: ${JSON.stringify(s)}`);
    n = n * 256 + v;
  }
  return n;
}

/**
 * Decodes an OPEN body (the octets after the 19-octet header). Returns the canonical object: `parameterLayout` is set
 * only for 'perCapability' (two or more Capabilities parameters with one capability each), `extendedOptionalParameters`
 * only when the RFC 9072 form was used; `otherParameters` is never set (see below).
 *
 * Throws BgpError:
 * - 1/2 (data = Length field) when Opt Parm Len (or the RFC 9072 length) does not exactly fill the message, or the
 *   body is shorter than 10 octets.
 * - 2/1 (data = 0x0004) when Version is not 4 (RFC 4271 §6.2).
 * - 2/2 (data = the AS field) when My Autonomous System or the 4-octet AS capability is 0 (RFC 7607 §2).
 * - 2/6 (data = Hold Time) when Hold Time is 1 or 2 seconds (RFC 4271 §6.2; 0 is accepted).
 * - 2/3 (data = identifier) when the BGP Identifier is 0 (RFC 6286 §2.1).
 * - 2/4 for an optional parameter other than Capabilities (RFC 4271 §6.2, RFC 5492 §4; type 1 is deprecated).
 * - 2/0 for malformed optional parameters or capabilities, and for the RFC 9072 form whose Opt Parm Len is not 255.
 */
export function decodeOpen(body: Buffer): OpenMessage {
  const msgLength = body.length + HEADER_LENGTH;
  if (body.length < OPEN_BODY_MIN) throw BgpError.badMessageLength(msgLength, `OPEN body ${body.length} < 10`);
  const version = body[0] as number;
  if (version !== BGP_VERSION) throw BgpError.unsupportedVersionNumber(version);
  const myAutonomousSystem = body.readUInt16BE(1);
  const holdTime = body.readUInt16BE(3);
  const id = body.readUInt32BE(5);
  const optLen = body[9] as number;
  let extended = false;
  let p = 10;
  let end: number;
  if (optLen > 0 && body.length > 10 && body[10] === OptionalParameterType.ExtendedLength) {
    // RFC 9072 §2: Non-Ext OP Type 255 announces the extended form.
    if (optLen !== 255) throw BgpError.openUnspecific(`RFC 9072 extended parameters with Opt Parm Len ${optLen}, expected 255`);
    if (body.length < 13) throw BgpError.badMessageLength(msgLength, 'RFC 9072 extended length truncated');
    extended = true;
    const extLen = body.readUInt16BE(11);
    p = 13;
    end = p + extLen;
  } else {
    end = p + optLen;
  }
  if (end !== body.length) {
    throw BgpError.badMessageLength(msgLength, `optional parameters length ${end - p} does not fill the OPEN (${body.length - p} octets)`);
  }
  if (myAutonomousSystem === 0) throw BgpError.badPeerAs(0, 'My Autonomous System is 0 (RFC 7607)');
  if (holdTime === 1 || holdTime === 2) throw BgpError.unacceptableHoldTime(holdTime);
  if (id === 0) throw BgpError.badBgpIdentifier(0);

  const capabilities: Capability[] = [];
  const groups: number[] = [];
  while (p < end) {
    const hdr = extended ? 3 : 2;
    if (end - p < hdr) throw BgpError.openUnspecific('optional parameter header truncated');
    const paramType = body[p] as number;
    const len = extended ? body.readUInt16BE(p + 1) : (body[p + 1] as number);
    const vStart = p + hdr;
    const vEnd = vStart + len;
    if (vEnd > end) throw BgpError.openUnspecific(`optional parameter ${paramType} length ${len} overruns the parameters`);
    if (paramType !== OptionalParameterType.Capabilities) throw BgpError.unsupportedOptionalParameter(paramType);
    groups.push(decodeCapabilities(body, vStart, vEnd, capabilities));
    p = vEnd;
  }
  for (const c of capabilities) {
    if (c.type === 'FourOctetAs' && c.asNumber === 0) throw BgpError.badPeerAs(myAutonomousSystem, '4-octet AS capability is 0 (RFC 7607)');
  }
  const msg: {
    type: 'OPEN';
    version: number;
    myAutonomousSystem: number;
    holdTime: number;
    bgpIdentifier: string;
    capabilities: Capability[];
    parameterLayout?: 'perCapability';
    capabilityGroups?: number[];
    extendedOptionalParameters?: boolean;
  } = { type: 'OPEN', version, myAutonomousSystem, holdTime, bgpIdentifier: formatIdentifier(id), capabilities };
  if (groups.length >= 2 && groups.every((n) => n === 1)) msg.parameterLayout = 'perCapability';
  else if (groups.length >= 1 && !(groups.length === 1 && groups[0] !== 0)) msg.capabilityGroups = groups;
  if (extended) msg.extendedOptionalParameters = true;
  return msg;
}

/**
 * Encodes an OPEN body (no header) into `w` (RFC 4271 §4.2). Capabilities are grouped per `capabilityGroups`, else
 * `parameterLayout` ('single' default: one Capabilities parameter; 'perCapability': one parameter each);
 * `otherParameters` follow, raw. The RFC 9072 form is used when `extendedOptionalParameters` is set or when a
 * parameter value or the parameters total exceed 255 octets.
 * Throws RangeError (local bug) for out-of-range fields, a bad `bgpIdentifier` string, or `capabilityGroups`
 * not summing to the number of capabilities.
 */
export function encodeOpenBody(msg: OpenMessage, w: ByteWriter): void {
  w.u8(msg.version).u16(msg.myAutonomousSystem).u16(msg.holdTime).u32(parseIdentifier(msg.bgpIdentifier));
  // Encode each parameter value separately first: their sizes decide the length form.
  const params: { type: number; value: Buffer }[] = [];
  const caps = msg.capabilities;
  let groups: readonly number[];
  if (msg.capabilityGroups) {
    groups = msg.capabilityGroups;
    if (groups.reduce((a, b) => a + b, 0) !== caps.length) throw new RangeError('capabilityGroups does not sum to the number of capabilities');
  } else if (caps.length === 0) groups = [];
  else if (msg.parameterLayout === 'perCapability') groups = caps.map(() => 1);
  else groups = [caps.length];
  let i = 0;
  const cw = new ByteWriter(64);
  const bounds: number[] = [0];
  for (const n of groups) {
    for (let k = 0; k < n; k++) encodeCapability(caps[i++] as Capability, cw);
    bounds.push(cw.length);
  }
  const all = cw.view(); // taken after the last write, so no later growth can move it
  for (let g = 0; g < groups.length; g++) {
    params.push({ type: OptionalParameterType.Capabilities, value: all.subarray(bounds[g], bounds[g + 1]) });
  }
  for (const o of msg.otherParameters ?? []) params.push({ type: o.paramType, value: o.value });
  let total = 0;
  let longValue = false;
  for (const q of params) {
    total += 2 + q.value.length;
    if (q.value.length > 255) longValue = true;
  }
  if (msg.extendedOptionalParameters || longValue || total > 255) {
    // RFC 9072 §2.
    const ext = total + params.length; // each header grows from 2 to 3 octets
    if (ext > 0xffff) throw new RangeError(`optional parameters too long: ${ext}`);
    w.u8(255).u8(OptionalParameterType.ExtendedLength).u16(ext);
    for (const q of params) w.u8(q.type).u16(q.value.length).bytes(q.value);
  } else {
    w.u8(total);
    for (const q of params) w.u8(q.type).u8(q.value.length).bytes(q.value);
  }
}

/** The peer's real AS: the 4-octet AS capability if present (RFC 6793 §3), else My Autonomous System. */
export function openAs(open: OpenMessage): number {
  for (const c of open.capabilities) if (c.type === 'FourOctetAs') return c.asNumber;
  return open.myAutonomousSystem;
}

/** What the session expects of the peer's OPEN (from configuration). */
export interface OpenExpectations {
  /** The configured peer AS; a different AS (from the 4-octet AS capability or the field) → 2/2. */
  readonly peerAs?: number;
  /** Our own BGP Identifier (dotted quad); the peer using it → 2/3 (iBGP, or when `isIbgp` is not given). */
  readonly localBgpIdentifier?: string;
  /** The session is internal (same AS). RFC 6286 §2.2 allows equal identifiers only between different ASes. */
  readonly isIbgp?: boolean;
  /** Capabilities we require the peer to have advertised (compared by code, and AFI/SAFI for Multiprotocol). */
  readonly requiredCapabilities?: readonly Capability[];
}

/**
 * Semantic OPEN checks that need configuration (RFC 4271 §6.2, RFC 6286 §2.2, RFC 5492 §5). Pure; returns nothing.
 * Throws BgpError:
 * - 2/2 Bad Peer AS, data = the received 2-octet My Autonomous System field, when the AS differs from `peerAs`.
 * - 2/3 Bad BGP Identifier, data = the identifier, when it equals `localBgpIdentifier` and the session is iBGP
 *   (`isIbgp` true or not given).
 * - 2/7 Unsupported Capability, data = the missing capability tuples (code, length, value) as we would send them.
 */
export function validateOpen(open: OpenMessage, expect: OpenExpectations): void {
  if (expect.peerAs !== undefined) {
    const as = openAs(open);
    if (as !== expect.peerAs) throw BgpError.badPeerAs(open.myAutonomousSystem, `peer AS ${as}, expected ${expect.peerAs}`);
  }
  if (expect.localBgpIdentifier !== undefined && expect.isIbgp !== false && open.bgpIdentifier === expect.localBgpIdentifier) {
    throw BgpError.badBgpIdentifier(parseIdentifier(open.bgpIdentifier));
  }
  if (expect.requiredCapabilities && expect.requiredCapabilities.length > 0) {
    const missing = expect.requiredCapabilities.filter((req) => !open.capabilities.some((c) => sameCapability(req, c)));
    if (missing.length > 0) {
      const w = new ByteWriter(32);
      for (const m of missing) encodeCapability(m, w);
      throw BgpError.unsupportedCapability(w.toBuffer(), `missing capabilities: ${missing.map((m) => m.type).join(', ')}`);
    }
  }
}

function sameCapability(a: Capability, b: Capability): boolean {
  if (a.type !== b.type) return false;
  if (a.type === 'Multiprotocol' && b.type === 'Multiprotocol') return a.afi === b.afi && a.safi === b.safi;
  if (a.type === 'Unknown' && b.type === 'Unknown') return a.code === b.code;
  return true;
}

/** Per-family ADD-PATH direction flags, in the shape of `CodecContext.addPath`. */
export interface AddPathFamilies {
  readonly ipv4?: boolean;
  readonly ipv6?: boolean;
}

/** Graceful restart as both OPENs agreed it (see Negotiated.gracefulRestartMode). */
export type GracefulRestartMode = 'none' | 'restart' | 'notification';

/** The session parameters implied by the two OPENs (RFC 4271 §4.2, RFC 4760 §8, RFC 6793, RFC 8654, RFC 7911). */
export interface Negotiated {
  /** min(local configured, peer's Hold Time) in seconds; 0 = no keepalives and no hold timer (RFC 4271 §4.2). */
  readonly holdTimeSec: number;
  /** floor(holdTimeSec / 3) in seconds (RFC 4271 §10 suggests one third); 0 when holdTimeSec is 0. */
  readonly keepaliveTimeSec: number;
  /** Both sides advertised the 4-octet AS capability (RFC 6793 §4). */
  readonly fourOctetAs: boolean;
  /** The peer's AS: its 4-octet AS capability if present, else its My Autonomous System field. */
  readonly peerAs: number;
  /** Both sides advertised the extended message capability (RFC 8654 §3). */
  readonly extendedMessage: boolean;
  /** Families both support, in order ipv4-unicast, ipv6-unicast; a side with no Multiprotocol capability supports only ipv4-unicast (RFC 4760 §8). */
  readonly families: Family[];
  /** Both sides advertised route refresh (code 2 or Cisco 128). */
  readonly routeRefresh: boolean;
  /** Both sides advertised enhanced route refresh (RFC 7313 §4). */
  readonly enhancedRouteRefresh: boolean;
  /** The peer's graceful restart capability, if it sent one (RFC 4724). */
  readonly gracefulRestart?: Extract<Capability, { type: 'GracefulRestart' }>;
  /**
   * What graceful restart both OPENs agreed: 'none' (a side did not advertise it); 'restart' (both did, RFC 4724 §3:
   * a connection that ends without a NOTIFICATION leaves the routes stale at the helper); 'notification' (both also
   * set the N bit, RFC 8538 §2: a NOTIFICATION other than Cease / Hard Reset keeps them too).
   */
  readonly gracefulRestartMode: GracefulRestartMode;
  /**
   * ADD-PATH per direction and negotiated family (RFC 7911 §4): we send path ids when we advertised send (2/3) and the
   * peer receive (1/3); we receive them when we advertised receive and the peer send.
   */
  readonly addPath: { readonly send: AddPathFamilies; readonly receive: AddPathFamilies };
}

function familiesOf(open: OpenMessage): Set<Family> {
  const s = new Set<Family>();
  let any = false;
  for (const c of open.capabilities) {
    if (c.type !== 'Multiprotocol') continue;
    any = true;
    const f = familyOf(c.afi, c.safi);
    if (f) s.add(f);
  }
  if (!any) s.add('ipv4-unicast');
  return s;
}

function addPathModes(open: OpenMessage): Map<Family, number> {
  const m = new Map<Family, number>();
  for (const c of open.capabilities) {
    if (c.type !== 'AddPath') continue;
    for (const f of c.families) {
      const fam = familyOf(f.afi, f.safi);
      if (fam) m.set(fam, f.sendReceive);
    }
  }
  return m;
}

function has(open: OpenMessage, pred: (c: Capability) => boolean): boolean {
  return open.capabilities.some(pred);
}

/**
 * Computes the negotiated session parameters from our OPEN, the peer's OPEN and our configured hold time (seconds).
 * Pure, never throws (call `validateOpen` first for the checks).
 */
export function negotiate(localOpen: OpenMessage, remoteOpen: OpenMessage, localHoldTimeSec: number): Negotiated {
  const holdTimeSec = Math.min(localHoldTimeSec, remoteOpen.holdTime);
  const localFam = familiesOf(localOpen);
  const remoteFam = familiesOf(remoteOpen);
  const families = (['ipv4-unicast', 'ipv6-unicast'] as const).filter((f) => localFam.has(f) && remoteFam.has(f));
  const lap = addPathModes(localOpen);
  const rap = addPathModes(remoteOpen);
  const send: { ipv4?: boolean; ipv6?: boolean } = {};
  const receive: { ipv4?: boolean; ipv6?: boolean } = {};
  for (const f of families) {
    const key = f === 'ipv4-unicast' ? 'ipv4' : 'ipv6';
    const l = lap.get(f) ?? 0;
    const r = rap.get(f) ?? 0;
    if (l & 2 && r & 1) send[key] = true;
    if (l & 1 && r & 2) receive[key] = true;
  }
  const rr = (c: Capability): boolean => c.type === 'RouteRefresh' || c.type === 'RouteRefreshCisco';
  const gr = remoteOpen.capabilities.find((c) => c.type === 'GracefulRestart');
  const localGr = localOpen.capabilities.find((c) => c.type === 'GracefulRestart');
  const result: Negotiated = {
    holdTimeSec,
    keepaliveTimeSec: Math.floor(holdTimeSec / 3),
    fourOctetAs: has(localOpen, (c) => c.type === 'FourOctetAs') && has(remoteOpen, (c) => c.type === 'FourOctetAs'),
    peerAs: openAs(remoteOpen),
    extendedMessage: has(localOpen, (c) => c.type === 'ExtendedMessage') && has(remoteOpen, (c) => c.type === 'ExtendedMessage'),
    families: [...families],
    routeRefresh: has(localOpen, rr) && has(remoteOpen, rr),
    enhancedRouteRefresh:
      has(localOpen, (c) => c.type === 'EnhancedRouteRefresh') && has(remoteOpen, (c) => c.type === 'EnhancedRouteRefresh'),
    addPath: { send, receive },
    gracefulRestartMode:
      gr?.type !== 'GracefulRestart' || localGr?.type !== 'GracefulRestart' ? 'none' : gr.notification && localGr.notification ? 'notification' : 'restart',
  };
  return gr && gr.type === 'GracefulRestart' ? { ...result, gracefulRestart: gr } : result;
}

/**
 * The CodecContext for one direction of a negotiated session: 'send' for what we encode, 'receive' for what we decode
 * (ADD-PATH differs per direction, RFC 7911 §3).
 */
export function codecContextFor(n: Negotiated, direction: 'send' | 'receive'): CodecContext {
  return {
    fourOctetAs: n.fourOctetAs,
    extendedMessage: n.extendedMessage,
    addPath: direction === 'send' ? { ...n.addPath.send } : { ...n.addPath.receive },
  };
}

/** Builds an OPEN with the RFC default layout: version 4, My AS = AS_TRANS when `localAs` > 65535 (RFC 6793 §4.1). */
export function buildOpen(options: { localAs: number; holdTimeSec: number; bgpIdentifier: string; capabilities: readonly Capability[] }): OpenMessage {
  return {
    type: 'OPEN',
    version: BGP_VERSION,
    myAutonomousSystem: options.localAs > 0xffff ? AS_TRANS : options.localAs,
    holdTime: options.holdTimeSec,
    bgpIdentifier: options.bgpIdentifier,
    capabilities: options.capabilities,
  };
}

/** True when `open` advertises the capability code (any form). */
export function hasCapabilityCode(open: OpenMessage, code: number): boolean {
  return open.capabilities.some((c) => capabilityCode(c) === code);
}
