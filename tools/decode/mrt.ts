/**
 * MRT reader for `herald decode` (RFC 6396, with RFC 8050 ADD-PATH subtypes).
 *
 * Supported: BGP4MP and BGP4MP_ET (STATE_CHANGE, STATE_CHANGE_AS4, MESSAGE, MESSAGE_AS4, MESSAGE_LOCAL,
 * MESSAGE_AS4_LOCAL and the four *_ADDPATH subtypes); TABLE_DUMP_V2 (PEER_INDEX_TABLE, RIB_IPV4/IPV6_UNICAST/MULTICAST,
 * RIB_GENERIC and their *_ADDPATH variants); legacy TABLE_DUMP (type 12, AFI_IPv4/AFI_IPv6); the deprecated type 5
 * "BGP" records of early RIS dumps (UPDATE, OPEN, NOTIFY, KEEPALIVE, STATE_CHANGE; draft-ietf-grow-mrt-00 layout).
 * Every other type or subtype (OSPF, IS-IS, BGP4MP_ENTRY, BGP4MP_SNAPSHOT, ...) is skipped with a note line.
 *
 * Framing: each record is a 12-octet header (Timestamp, Type, Subtype, Length) and Length octets; the _ET types put a
 * 4-octet Microsecond Timestamp first, counted in Length (RFC 6396 §3). Records are framed as the input streams in. A
 * record whose Length runs past the end of the input, or above 16 MiB, ends the read with an error line (nothing
 * after it can be framed); a record whose content is malformed gives an error line and reading goes on.
 */
import { attributesJsonText, decodeLabeledPrefixAt, decodePathAttributes, decodePrefixAt, formatAddress, formatPrefixBits } from './codec.ts';
import type { CodecContext, PathAttribute } from './codec.ts';
import { decodeForOutput, problemError } from './message.ts';
import { feedAll } from './framing.ts';
import { jsonWith } from './json-text.ts';
import type { UnitParser } from './framing.ts';
import { errorLine } from './sink.ts';
import type { DecodeSink } from './sink.ts';

/** MRT Type names (RFC 6396 §4 and the deprecated types of its Appendix B). */
export const MRT_TYPE_NAMES: Readonly<Record<number, string>> = {
  0: 'NULL',
  1: 'START',
  2: 'DIE',
  3: 'I_AM_DEAD',
  4: 'PEER_DOWN',
  5: 'BGP',
  6: 'RIP',
  7: 'IDRP',
  8: 'RIPNG',
  9: 'BGP4PLUS',
  10: 'BGP4PLUS_01',
  11: 'OSPFv2',
  12: 'TABLE_DUMP',
  13: 'TABLE_DUMP_V2',
  16: 'BGP4MP',
  17: 'BGP4MP_ET',
  32: 'ISIS',
  33: 'ISIS_ET',
  48: 'OSPFv3',
  49: 'OSPFv3_ET',
};

/** BGP4MP / BGP4MP_ET subtype names (RFC 6396 §4.4, RFC 8050 §3). */
export const BGP4MP_SUBTYPE_NAMES: Readonly<Record<number, string>> = {
  0: 'BGP4MP_STATE_CHANGE',
  1: 'BGP4MP_MESSAGE',
  2: 'BGP4MP_ENTRY',
  3: 'BGP4MP_SNAPSHOT',
  4: 'BGP4MP_MESSAGE_AS4',
  5: 'BGP4MP_STATE_CHANGE_AS4',
  6: 'BGP4MP_MESSAGE_LOCAL',
  7: 'BGP4MP_MESSAGE_AS4_LOCAL',
  8: 'BGP4MP_MESSAGE_ADDPATH',
  9: 'BGP4MP_MESSAGE_AS4_ADDPATH',
  10: 'BGP4MP_MESSAGE_LOCAL_ADDPATH',
  11: 'BGP4MP_MESSAGE_AS4_LOCAL_ADDPATH',
};

/** TABLE_DUMP_V2 subtype names (RFC 6396 §4.3, RFC 6397, RFC 8050 §4). */
export const TABLE_DUMP_V2_SUBTYPE_NAMES: Readonly<Record<number, string>> = {
  1: 'PEER_INDEX_TABLE',
  2: 'RIB_IPV4_UNICAST',
  3: 'RIB_IPV4_MULTICAST',
  4: 'RIB_IPV6_UNICAST',
  5: 'RIB_IPV6_MULTICAST',
  6: 'RIB_GENERIC',
  7: 'GEO_PEER_TABLE',
  8: 'RIB_IPV4_UNICAST_ADDPATH',
  9: 'RIB_IPV4_MULTICAST_ADDPATH',
  10: 'RIB_IPV6_UNICAST_ADDPATH',
  11: 'RIB_IPV6_MULTICAST_ADDPATH',
  12: 'RIB_GENERIC_ADDPATH',
};

/** Subtypes of the deprecated type 5 (BGP) records. */
const BGP_SUBTYPE_NAMES: Readonly<Record<number, string>> = {
  0: 'BGP_NULL',
  1: 'BGP_UPDATE',
  2: 'BGP_PREF_UPDATE',
  3: 'BGP_STATE_CHANGE',
  4: 'BGP_SYNC',
  5: 'BGP_OPEN',
  6: 'BGP_NOTIFY',
  7: 'BGP_KEEPALIVE',
};

/** BGP FSM state numbers used by STATE_CHANGE records (RFC 6396 §4.4.1; 7 and 8 are Quagga's Clearing/Deleted). */
export const FSM_STATE_NAMES: Readonly<Record<number, string>> = {
  1: 'Idle',
  2: 'Connect',
  3: 'Active',
  4: 'OpenSent',
  5: 'OpenConfirm',
  6: 'Established',
  7: 'Clearing',
  8: 'Deleted',
};

/** Name of an MRT subtype for a given type; the number as a string when unknown. */
export function subtypeName(type: number, subtype: number): string {
  const table =
    type === 16 || type === 17
      ? BGP4MP_SUBTYPE_NAMES
      : type === 13
        ? TABLE_DUMP_V2_SUBTYPE_NAMES
        : type === 12
          ? { 1: 'AFI_IPv4', 2: 'AFI_IPv6' }
          : type === 5
            ? BGP_SUBTYPE_NAMES
            : {};
  return (table as Record<number, string>)[subtype] ?? String(subtype);
}

/** Names of a record kind: Type, Subtype, "TYPE/SUBTYPE" (LineStats.mrt), and `,"type":…,"subtype":…` as JSON text. */
interface Names {
  readonly type: string | number;
  readonly subtype: string;
  readonly kind: string;
  readonly typeJson: string;
}

/** The fields every line of a record starts with. */
interface Head {
  readonly offset: number;
  readonly timestamp: number;
  readonly type: string | number;
  readonly subtype: string;
}

/**
 * Decoding contexts of BGP4MP messages by [4-octet AS ? 2 : 0] + [ADD-PATH ? 1 : 0] (RFC 6396 §4.4, RFC 8050 §3):
 * extended messages always (a dump holds what the session accepted).
 */
const MESSAGE_CONTEXTS: readonly (readonly CodecContext[])[] = [false, true].flatMap((fourOctetAs) =>
  [false, true].map((ap) => [{ fourOctetAs, extendedMessage: true, addPath: ap ? { ipv4: true, ipv6: true } : {} }]),
);

function messageContexts(as4: boolean, addPath: boolean): readonly CodecContext[] {
  return MESSAGE_CONTEXTS[(as4 ? 2 : 0) + (addPath ? 1 : 0)] ?? [];
}

/** One framed MRT record. */
export interface MrtRecord {
  /** Byte offset of the record header in the (decompressed) input. */
  readonly offset: number;
  /** Unix time in seconds; with microseconds for the _ET types. */
  readonly timestamp: number;
  readonly type: number;
  readonly subtype: number;
  /** The Message field (after the Microsecond Timestamp for _ET types). */
  readonly body: Buffer;
}

/** Largest MRT record Length read (octets): a header claiming more is not a record header (RFC 6396 §2). */
export const MAX_MRT_RECORD = 16 * 1024 * 1024;

/** True when `buf` starts with a plausible MRT record header: a known Type other than NULL, a Length up to 16 MiB. */
export function looksLikeMrt(buf: Buffer): boolean {
  if (buf.length < 12) return false;
  const type = buf.readUInt16BE(4);
  const length = buf.readUInt32BE(8);
  return MRT_TYPE_NAMES[type] !== undefined && type !== 0 && length <= MAX_MRT_RECORD;
}

const BGP_HEADER = 19;
const MARKER = Buffer.alloc(16, 0xff);

/** The peer table of the latest PEER_INDEX_TABLE. */
interface Peer {
  readonly peerBgpId: string;
  readonly peerIp: string;
  readonly peerAs: number;
}

class RecordError extends Error {
  override name = 'MrtError';
}

/** Bounds-checked reads over a record body; overruns throw a RecordError naming the field. */
class Cursor {
  pos: number;
  readonly b: Buffer;
  readonly end: number;
  constructor(b: Buffer, pos = 0, end = b.length) {
    this.b = b;
    this.pos = pos;
    this.end = end;
  }
  need(n: number, what: string): void {
    if (this.pos + n > this.end) throw new RecordError(`truncated ${what}: need ${n} octets at ${this.pos}, ${this.end - this.pos} left`);
  }
  u8(what: string): number {
    this.need(1, what);
    return this.b[this.pos++] ?? 0;
  }
  u16(what: string): number {
    this.need(2, what);
    const v = this.b.readUInt16BE(this.pos);
    this.pos += 2;
    return v;
  }
  u32(what: string): number {
    this.need(4, what);
    const v = this.b.readUInt32BE(this.pos);
    this.pos += 4;
    return v;
  }
  as(width: number, what: string): number {
    return width === 4 ? this.u32(what) : this.u16(what);
  }
  ip(len: 4 | 16, what: string): string {
    this.need(len, what);
    const s = formatAddress(this.b, this.pos, len);
    this.pos += len;
    return s;
  }
  bytes(n: number, what: string): Buffer {
    this.need(n, what);
    const v = this.b.subarray(this.pos, this.pos + n);
    this.pos += n;
    return v;
  }
}

function afiAddrLen(afi: number): 4 | 16 {
  if (afi === 1) return 4;
  if (afi === 2) return 16;
  throw new RecordError(`unsupported Address Family ${afi}`);
}

/**
 * The NLRI of a RIB_GENERIC entry (RFC 6396 §4.3.3): a single NLRI in MP_REACH encoding for (afi, safi), read with
 * the codec. Unicast/multicast: a prefix. Labeled (SAFI 4, RFC 8277): labels then prefix. VPN (SAFI 128, RFC 4364):
 * labels, Route Distinguisher, prefix. Anything else is returned as hex.
 */
function genericNlri(b: Buffer, pos: number, afi: number, safi: number): { json: Record<string, unknown>; next: number } {
  const family = afi === 1 ? 'ipv4-unicast' : afi === 2 ? 'ipv6-unicast' : undefined;
  if (family && (safi === 1 || safi === 2)) {
    const p = decodePrefixAt(b, pos, b.length, family, 'RIB_GENERIC NLRI');
    return { json: { prefix: p.prefix, nlri: [p.prefix] }, next: p.next };
  }
  if (family && (safi === 4 || safi === 128)) {
    const { entry, next } = decodeLabeledPrefixAt(b, pos, b.length, family, safi === 128, 'RIB_GENERIC NLRI');
    const { labels, routeDistinguisher, prefix } = entry;
    return { json: { ...(routeDistinguisher !== undefined ? { routeDistinguisher } : {}), labels: [...labels], prefix, nlri: [prefix] }, next };
  }
  const c = new Cursor(b, pos);
  const bits = c.u8('NLRI length');
  c.bytes((bits + 7) >> 3, 'NLRI');
  return { json: { nlriHex: b.subarray(pos, c.pos).toString('hex') }, next: c.pos };
}

/**
 * Frames the records of an MRT byte stream, chunk by chunk (see framing.ts), and decodes each into `sink` lines.
 * A Length above {@link MAX_MRT_RECORD} or a record cut by the end of the input ends the read with an error line.
 */
export class MrtReader implements UnitParser {
  private readonly sink: DecodeSink;
  private readonly decoder: MrtDecoder;
  /** Records framed so far. */
  records = 0;
  need = 12;
  done = false;

  constructor(sink: DecodeSink) {
    this.sink = sink;
    this.decoder = new MrtDecoder(sink);
  }

  feed(buf: Buffer, base: number): number {
    let o = 0;
    this.need = 12;
    while (o + 12 <= buf.length) {
      const type = buf.readUInt16BE(o + 4);
      const subtype = buf.readUInt16BE(o + 6);
      const length = buf.readUInt32BE(o + 8);
      if (length > MAX_MRT_RECORD) {
        this.sink.error({
          error: `MRT record Length ${length} is over ${MAX_MRT_RECORD} octets: not a record header, reading stops`,
          offset: base + o,
          code: null,
          subcode: null,
          type: MRT_TYPE_NAMES[type] ?? type,
          subtype: subtypeName(type, subtype),
        });
        this.done = true;
        return o;
      }
      const end = o + 12 + length;
      if (end > buf.length) {
        this.need = 12 + length;
        return o;
      }
      this.records++;
      const offset = base + o;
      const seconds = buf.readUInt32BE(o);
      const et = type === 17 || type === 33 || type === 49;
      o = end;
      if (et && length < 4) {
        this.sink.error({ error: 'MRT _ET record shorter than its Microsecond Timestamp', offset, code: null, subcode: null });
        continue;
      }
      const start = offset - base;
      const timestamp = et ? Number(`${seconds}.${String(buf.readUInt32BE(start + 12) % 1000000).padStart(6, '0')}`) : seconds;
      this.decoder.record({ offset, timestamp, type, subtype, body: buf.subarray(start + (et ? 16 : 12), end) });
    }
    return o;
  }

  end(rest: Buffer, base: number, cut: boolean): void {
    if (cut || rest.length === 0) return;
    if (rest.length < 12) {
      this.sink.error({ error: `truncated MRT header: ${rest.length} of 12 octets`, offset: base, code: null, subcode: null });
      return;
    }
    const type = rest.readUInt16BE(4);
    this.sink.error({
      error: `truncated MRT record: Length ${rest.readUInt32BE(8)}, ${rest.length - 12} octets left`,
      offset: base,
      code: null,
      subcode: null,
      type: MRT_TYPE_NAMES[type] ?? type,
      subtype: subtypeName(type, rest.readUInt16BE(6)),
    });
  }
}

/** The session fields of a BGP4MP record (RFC 6396 §4.4.1), and their text in a line (`,"peerAs":…,"localIp":"…"`). */
interface Session {
  readonly peerAs: number;
  readonly localAs: number;
  readonly interfaceIndex: number;
  readonly peerIp: string;
  readonly localIp: string;
  readonly json: string;
}

/** Sessions whose text MrtDecoder keeps; past that the cache starts again (a dump of a big collector). */
const MAX_SESSIONS = 4096;

/** Whether `a` is exactly the first `n` octets of `b` (b holds at least n). */
function sameOctets(a: Buffer, b: Buffer, n: number): boolean {
  if (a.length !== n) return false;
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Reads the session fields at `c` (bounds-checked: a short body throws RecordError naming the field). */
function readSession(c: Cursor, asWidth: number): Session {
  const peerAs = c.as(asWidth, 'Peer AS Number');
  const localAs = c.as(asWidth, 'Local AS Number');
  const interfaceIndex = c.u16('Interface Index');
  const ipLen = afiAddrLen(c.u16('Address Family'));
  const peerIp = c.ip(ipLen, 'Peer IP Address');
  const localIp = c.ip(ipLen, 'Local IP Address');
  // Numbers print as JSON.stringify prints them; addresses need no escaping.
  const json = ',"peerAs":' + peerAs + ',"localAs":' + localAs + ',"interfaceIndex":' + interfaceIndex + ',"peerIp":"' + peerIp + '","localIp":"' + localIp + '"';
  return { peerAs, localAs, interfaceIndex, peerIp, localIp, json };
}

/** Decodes every record of an in-memory MRT dump into `sink`; returns the number of records framed. */
export function decodeMrt(buf: Buffer, sink: DecodeSink): number {
  return feedAll(buf, new MrtReader(sink)).records;
}

/** Stateful MRT record decoder (keeps the latest PEER_INDEX_TABLE for RIB entries). */
export class MrtDecoder {
  private readonly sink: DecodeSink;
  private peers: Peer[] = [];
  /** ADD-PATH families offered in the latest OPEN logged for a session ("peerIp|localIp"). */
  private readonly addPathOffered = new Map<string, { ipv4: boolean; ipv6: boolean }>();
  private readonly names = new Map<number, Names>();
  /** Session fields of BGP4MP records by a hash of their octets (see sessionOf). */
  private readonly sessions = new Map<number, Session & { readonly octets: Buffer }>();

  constructor(sink: DecodeSink) {
    this.sink = sink;
  }

  /** Names of a record kind, built once per kind. */
  private namesOf(type: number, subtype: number): Names {
    const key = type * 65536 + subtype;
    let n = this.names.get(key);
    if (!n) {
      const typeName = MRT_TYPE_NAMES[type] ?? type;
      const sub = subtypeName(type, subtype);
      n = { type: typeName, subtype: sub, kind: `${typeName}/${sub}`, typeJson: `,"type":${JSON.stringify(typeName)},"subtype":${JSON.stringify(sub)}` };
      this.names.set(key, n);
    }
    return n;
  }

  /** Decodes one framed record into zero or more sink lines. Never throws. */
  record(rec: MrtRecord): void {
    const names = this.namesOf(rec.type, rec.subtype);
    const typeName = names.type;
    const sub = names.subtype;
    const head: Head = { offset: rec.offset, timestamp: rec.timestamp, type: typeName, subtype: sub };
    const kind = names.kind;
    try {
      switch (rec.type) {
        case 16:
        case 17:
          this.bgp4mp(rec, head, names);
          return;
        case 13:
          this.tableDumpV2(rec, head, kind);
          return;
        case 12:
          this.tableDump(rec, head, kind);
          return;
        case 5:
          this.legacyBgp(rec, head, kind);
          return;
        default:
          this.sink.note({ ...head, note: `MRT type ${typeName} is not decoded; record skipped`, length: rec.body.length });
      }
    } catch (err) {
      this.sink.error(errorLine(err, rec.offset, { type: typeName, subtype: sub }));
    }
  }

  private bgp4mp(rec: MrtRecord, head: Head, names: Names): void {
    const kind = names.kind;
    const st = rec.subtype;
    const stateChange = st === 0 || st === 5;
    const message = st === 1 || st === 4 || (st >= 6 && st <= 11);
    if (!stateChange && !message) {
      this.sink.note({ ...head, note: `BGP4MP subtype ${head.subtype} is not decoded; record skipped`, length: rec.body.length });
      return;
    }
    const as4 = st === 4 || st === 5 || st === 7 || st === 9 || st === 11;
    const c = new Cursor(rec.body);
    const asWidth = as4 ? 4 : 2;
    const session = this.sessionOf(c, asWidth);
    const { peerAs, localAs, interfaceIndex, peerIp, localIp } = session;
    if (stateChange) {
      const oldState = c.u16('Old State');
      const newState = c.u16('New State');
      this.sink.line(
        JSON.stringify({ ...head, peerAs, localAs, interfaceIndex, peerIp, localIp, oldState, newState, oldStateName: FSM_STATE_NAMES[oldState] ?? String(oldState), newStateName: FSM_STATE_NAMES[newState] ?? String(newState) }),
        { mrt: kind },
      );
      return;
    }
    const addPath = st >= 8;
    let candidates = messageContexts(as4, addPath);
    // Some writers (BIRD's mainline mrtdump) log ADD-PATH sessions with the plain MESSAGE subtypes: when the peer's
    // OPEN offered ADD-PATH, a reading with path identifiers is the fallback.
    const sessionKey = this.addPathOffered.size > 0 || rec.body[c.pos + 18] === 1 ? `${peerIp}|${localIp}` : '';
    const adv = sessionKey === '' ? undefined : this.addPathOffered.get(sessionKey);
    if (!addPath && adv) candidates = [...candidates, { ...(candidates[0] as CodecContext), addPath: adv }];
    const dec = decodeForOutput(rec.body.subarray(c.pos), candidates);
    if (dec.msg.type === 'OPEN') {
      const fams = { ipv4: false, ipv6: false };
      for (const cap of dec.msg.capabilities) {
        if (cap.type !== 'AddPath') continue;
        for (const f of cap.families) {
          if (f.safi === 1 && f.afi === 1) fams.ipv4 = true;
          if (f.safi === 1 && f.afi === 2) fams.ipv6 = true;
        }
      }
      if (fams.ipv4 || fams.ipv6) this.addPathOffered.set(sessionKey, fams);
      else this.addPathOffered.delete(sessionKey);
    }
    // The line of almost every record of an update dump, written as text: the fields of Head, the session, the
    // message. Numbers print as JSON.stringify prints them; addresses need no escaping.
    const line = '{"offset":' + head.offset + ',"timestamp":' + head.timestamp + names.typeJson + session.json + ',"message":' + dec.text + '}';
    this.sink.line(line, { mrt: kind, message: dec.msg });
    if (dec.problems.length > 0) this.sink.error(problemError(dec, rec.offset, { type: head.type, subtype: head.subtype }));
  }

  /**
   * Reads the session fields at the start of a BGP4MP body (Peer AS, Local AS, Interface Index, Address Family, Peer
   * and Local IP; RFC 6396 §4.4.1) and leaves `c` after them. A dump holds few sessions, so their text is kept by
   * their octets and reused. Throws RecordError when the body is too short or the Address Family unknown.
   */
  private sessionOf(c: Cursor, asWidth: number): Session {
    const b = c.b;
    const afiAt = 2 * asWidth + 2;
    const afi = b.length >= afiAt + 2 ? ((b[afiAt] as number) << 8) | (b[afiAt + 1] as number) : 0;
    const end = afiAt + 2 + 2 * (afi === 1 ? 4 : 16);
    if ((afi === 1 || afi === 2) && b.length >= end) {
      let hash = asWidth;
      // hash × 31 + octet in int32 arithmetic (shift and subtract: no Math.imul call in the lower JIT tiers).
      for (let i = 0; i < end; i++) hash = ((hash << 5) - hash + (b[i] as number)) | 0;
      const known = this.sessions.get(hash);
      if (known && sameOctets(known.octets, b, end)) {
        c.pos = end;
        return known;
      }
      const s = readSession(c, asWidth);
      if (this.sessions.size >= MAX_SESSIONS) this.sessions.clear();
      this.sessions.set(hash, { ...s, octets: Buffer.from(b.subarray(0, end)) });
      return s;
    }
    return readSession(c, asWidth);
  }

  private tableDumpV2(rec: MrtRecord, head: Head, kind: string): void {
    const st = rec.subtype;
    if (st === 1) {
      this.peerIndexTable(rec, head, kind);
      return;
    }
    const generic = st === 6 || st === 12;
    const addPath = st >= 8 && st <= 12;
    if (!((st >= 2 && st <= 6) || (st >= 8 && st <= 12))) {
      this.sink.note({ ...head, note: `TABLE_DUMP_V2 subtype ${head.subtype} is not decoded; record skipped`, length: rec.body.length });
      return;
    }
    const c = new Cursor(rec.body);
    const sequence = c.u32('Sequence Number');
    let afi: number;
    let safi: number;
    let nlri: Record<string, unknown>;
    if (generic) {
      afi = c.u16('Address Family Identifier');
      safi = c.u8('Subsequent AFI');
      const n = genericNlri(rec.body, c.pos, afi, safi);
      nlri = n.json;
      c.pos = n.next;
    } else {
      afi = st === 2 || st === 3 || st === 8 || st === 9 ? 1 : 2;
      safi = st === 3 || st === 5 || st === 9 || st === 11 ? 2 : 1;
      const p = decodePrefixAt(rec.body, c.pos, rec.body.length, afi === 1 ? 'ipv4-unicast' : 'ipv6-unicast', 'RIB prefix');
      nlri = { prefix: p.prefix, nlri: [p.prefix] };
      c.pos = p.next;
    }
    const count = c.u16('Entry Count');
    const ctx: CodecContext = { fourOctetAs: true, extendedMessage: true, addPath: {} };
    const entries: string[] = [];
    const attrLists: PathAttribute[][] = [];
    for (let i = 0; i < count; i++) {
      const peerIndex = c.u16('Peer Index');
      const originatedTime = c.u32('Originated Time');
      const pathId = addPath ? c.u32('Path Identifier') : undefined;
      const attrLen = c.u16('Attribute Length');
      const attrBytes = c.bytes(attrLen, `attributes of entry ${i}`);
      const peer = this.peers[peerIndex];
      const entry: Record<string, unknown> = {
        peerIndex,
        ...(peer ? { peerIp: peer.peerIp, peerAs: peer.peerAs } : {}),
        originatedTime,
        ...(pathId !== undefined ? { pathId } : {}),
      };
      try {
        const attrs = decodePathAttributes(attrBytes, ctx, { mrtRibEntry: true });
        attrLists.push(attrs);
        entries.push(jsonWith(entry, { pathAttributes: attributesJsonText(attrs) }));
      } catch (err) {
        this.sink.error(errorLine(err, rec.offset, { type: head.type, subtype: head.subtype, entry: i, ...nlri }));
      }
    }
    if (c.pos !== rec.body.length) {
      this.sink.error({ error: `${rec.body.length - c.pos} octets after the last RIB entry`, offset: rec.offset, code: null, subcode: null, type: head.type, subtype: head.subtype });
    }
    this.sink.line(jsonWith({ ...head, sequence, afi, safi, ...nlri }, { entries: `[${entries.join(',')}]` }), { mrt: kind, entries: attrLists });
  }

  private peerIndexTable(rec: MrtRecord, head: Head, kind: string): void {
    const c = new Cursor(rec.body);
    const collectorBgpId = c.ip(4, 'Collector BGP ID');
    const viewNameLength = c.u16('View Name Length');
    const viewName = c.bytes(viewNameLength, 'View Name').toString('utf8');
    const count = c.u16('Peer Count');
    const peers: Peer[] = [];
    for (let i = 0; i < count; i++) {
      const peerType = c.u8('Peer Type');
      const peerBgpId = c.ip(4, 'Peer BGP ID');
      const peerIp = c.ip(peerType & 0x01 ? 16 : 4, 'Peer IP Address');
      const peerAs = c.as(peerType & 0x02 ? 4 : 2, 'Peer AS');
      peers.push({ peerBgpId, peerIp, peerAs });
    }
    this.peers = peers;
    this.sink.line(JSON.stringify({ ...head, collectorBgpId, viewName, peers: peers.map((p, index) => ({ index, ...p })) }), { mrt: kind });
  }

  private tableDump(rec: MrtRecord, head: Head, kind: string): void {
    if (rec.subtype !== 1 && rec.subtype !== 2) {
      this.sink.note({ ...head, note: `TABLE_DUMP subtype ${rec.subtype} is not decoded; record skipped`, length: rec.body.length });
      return;
    }
    const ipLen = rec.subtype === 1 ? 4 : 16;
    const c = new Cursor(rec.body);
    const viewNumber = c.u16('View Number');
    const sequence = c.u16('Sequence Number');
    const addrAt = c.pos;
    c.bytes(ipLen, 'Prefix');
    const prefix = formatPrefixBits(rec.body, addrAt, c.pos, c.u8('Prefix Length'), ipLen === 4 ? 'ipv4-unicast' : 'ipv6-unicast', 'TABLE_DUMP Prefix');
    const status = c.u8('Status');
    const originatedTime = c.u32('Originated Time');
    const peerIp = c.ip(ipLen, 'Peer IP Address');
    const peerAs = c.u16('Peer AS');
    const attrLen = c.u16('Attribute Length');
    const attrs = decodePathAttributes(c.bytes(attrLen, 'attributes'), { fourOctetAs: false, extendedMessage: true, addPath: {} }, { mrtRibEntry: true });
    this.sink.line(
      jsonWith({ ...head, viewNumber, sequence, prefix, nlri: [prefix], status, originatedTime, peerIp, peerAs }, { pathAttributes: attributesJsonText(attrs) }),
      { mrt: kind, entries: [attrs] },
    );
  }

  /** Deprecated type 5 (BGP): Peer AS(2), Peer IP(4), [Local AS(2), Local IP(4), message body without header]. */
  private legacyBgp(rec: MrtRecord, head: Head, kind: string): void {
    const st = rec.subtype;
    const c = new Cursor(rec.body);
    const peerAs = c.u16('Peer AS Number');
    const peerIp = c.ip(4, 'Peer IP Address');
    if (st === 3) {
      const oldState = c.u16('Old State');
      const newState = c.u16('New State');
      this.sink.line(
        JSON.stringify({ ...head, peerAs, peerIp, oldState, newState, oldStateName: FSM_STATE_NAMES[oldState] ?? String(oldState), newStateName: FSM_STATE_NAMES[newState] ?? String(newState) }),
        { mrt: kind },
      );
      return;
    }
    const msgType = st === 1 ? 2 : st === 5 ? 1 : st === 6 ? 3 : st === 7 ? 4 : 0;
    if (msgType === 0) {
      this.sink.note({ ...head, note: `BGP subtype ${head.subtype} is not decoded; record skipped`, length: rec.body.length });
      return;
    }
    const localAs = c.u16('Local AS Number');
    const localIp = c.ip(4, 'Local IP Address');
    const body = rec.body.subarray(c.pos);
    const whole = Buffer.alloc(BGP_HEADER + body.length);
    MARKER.copy(whole, 0);
    whole.writeUInt16BE(Math.min(0xffff, whole.length), 16);
    whole[18] = msgType;
    body.copy(whole, BGP_HEADER);
    const dec = decodeForOutput(whole, [{ fourOctetAs: false, extendedMessage: true, addPath: {} }]);
    this.sink.line(jsonWith({ ...head, peerAs, peerIp, localAs, localIp }, { message: dec.text }), { mrt: kind, message: dec.msg });
    if (dec.problems.length > 0) this.sink.error(problemError(dec, rec.offset, { type: head.type, subtype: head.subtype }));
  }
}
