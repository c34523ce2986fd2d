/**
 * BGP over TCP byte streams for `herald decode`: packet captures (pcap/pcapng → frames → TCP segments → per-direction
 * reassembly → BGP messages) and hex input (one message or a stream of them).
 *
 * Session context (RFC 4271 §4.2 OPEN, RFC 5492): each connection remembers the OPEN seen in each direction. With both
 * OPENs, what A sends to B is decoded with: 4-octet AS when both carry capability 65 (RFC 6793 §4); ADD-PATH for a
 * family when A's OPEN says send and B's says receive (RFC 7911 §4); Extended Message when both carry capability 6
 * (RFC 8654). With one OPEN: 2-octet AS if it lacks capability 65, else 4-octet AS first and 2-octet as fallback;
 * ADD-PATH off first, and on for the families it advertises as fallback. With none (capture started mid-session):
 * 2-octet AS first, 4-octet as fallback (tcpdump's heuristic), ADD-PATH off, messages up to 65535 octets accepted.
 * A fallback reading is used only when the first has RFC 7606 problems or fails and the fallback does better. The
 * options `as4`/`addPath` force a value for every session instead.
 */
import { readCapture } from './capture.ts';
import type { CaptureItem } from './capture.ts';
import type { BgpMessage, CodecContext } from './codec.ts';
import { decodeForOutput, problemError } from './message.ts';
import { parseFrame } from './packet.ts';
import type { TcpSegment } from './packet.ts';
import { TcpDirection } from './reassembly.ts';
import type { StreamEvent } from './reassembly.ts';
import { jsonSpread } from './json-text.ts';
import { errorLine } from './sink.ts';
import type { DecodeSink } from './sink.ts';
import { BgpStreamSplitter } from './splitter.ts';
import type { SplitItem } from './splitter.ts';

type OpenMessage = Extract<BgpMessage, { type: 'OPEN' }>;

/** Options shared by capture and hex decoding. */
export interface StreamOptions {
  /** TCP ports that carry BGP (default {179}). Streams on other ports are still taken when their first data holds a BGP header. */
  readonly ports?: ReadonlySet<number>;
  /** Force the AS_PATH width: true = 4-octet (`--as4`), false = 2-octet (`--as2`); undefined = from the OPENs. */
  readonly as4?: boolean;
  /** Force ADD-PATH receive per family (`--add-path`); undefined = from the OPENs. */
  readonly addPath?: { readonly ipv4?: boolean; readonly ipv6?: boolean };
}

/** Counts of a capture decode. */
export interface CaptureCounts {
  frames: number;
  segments: number;
  messages: number;
  errors: number;
}

interface Connection {
  /** OPEN sent by each direction, keyed by direction key. */
  readonly opens: Map<string, OpenMessage>;
}

/** Where a chunk of stream bytes was captured. */
interface FrameInfo {
  readonly frame: number;
  readonly offset: number;
  readonly timestamp: number;
}

interface Direction {
  readonly key: string;
  readonly reverseKey: string;
  readonly src: string;
  readonly dst: string;
  readonly conn: Connection;
  readonly tcp: TcpDirection<FrameInfo>;
  splitter: BgpStreamSplitter | undefined;
  /** undefined until decided: BGP by port, or by a BGP header at the start of the stream. */
  bgp: boolean | undefined;
}

function endpoint(ip: string, port: number): string {
  return ip.includes(':') ? `[${ip}]:${port}` : `${ip}:${port}`;
}

function hasCapability(open: OpenMessage, type: string): boolean {
  return open.capabilities.some((c) => c.type === type);
}

/** ADD-PATH Send/Receive value an OPEN advertises for AFI/SAFI unicast (0 when absent). */
function addPathMode(open: OpenMessage, afi: number): number {
  for (const c of open.capabilities) {
    if (c.type === 'AddPath') for (const f of c.families) if (f.afi === afi && f.safi === 1) return f.sendReceive;
  }
  return 0;
}

/** ADD-PATH families an OPEN advertises in any mode. */
function addPathAdvertised(open: OpenMessage | undefined): { ipv4: boolean; ipv6: boolean } {
  return { ipv4: open !== undefined && addPathMode(open, 1) !== 0, ipv6: open !== undefined && addPathMode(open, 2) !== 0 };
}

/**
 * The candidate decode contexts for messages sent by `mine`'s speaker to `theirs`'s speaker (the rules are in the
 * module comment). One candidate when everything is known or forced; up to four when the AS width or ADD-PATH must
 * be guessed (see decodeForOutput).
 */
export function sessionContexts(mine: OpenMessage | undefined, theirs: OpenMessage | undefined, options: StreamOptions): CodecContext[] {
  const both = mine !== undefined && theirs !== undefined;
  let asChoices: boolean[];
  if (options.as4 !== undefined) asChoices = [options.as4];
  else if (both) asChoices = [hasCapability(mine, 'FourOctetAs') && hasCapability(theirs, 'FourOctetAs')];
  else if (mine || theirs) asChoices = hasCapability((mine ?? theirs) as OpenMessage, 'FourOctetAs') ? [true, false] : [false];
  else asChoices = [false, true];
  let addPathChoices: CodecContext['addPath'][];
  if (options.addPath !== undefined) addPathChoices = [options.addPath];
  else if (both) {
    const fam = (afi: number): boolean => (addPathMode(mine, afi) & 2) !== 0 && (addPathMode(theirs, afi) & 1) !== 0;
    addPathChoices = [{ ipv4: fam(1), ipv6: fam(2) }];
  } else {
    const adv = addPathAdvertised(mine ?? theirs);
    addPathChoices = adv.ipv4 || adv.ipv6 ? [{}, adv] : [{}];
  }
  const extendedMessage = both ? hasCapability(mine, 'ExtendedMessage') && hasCapability(theirs, 'ExtendedMessage') : true;
  const out: CodecContext[] = [];
  for (const addPath of addPathChoices) for (const fourOctetAs of asChoices) out.push({ fourOctetAs, extendedMessage, addPath });
  return out;
}

const BGP_MARKER = Buffer.alloc(16, 0xff);

/** True when `b` holds a plausible BGP header anywhere: 16 × 0xff, Length 19..65535, Type 1..5 (RFC 4271 §4.1). */
function hasBgpHeader(b: Buffer): boolean {
  for (let i = b.indexOf(BGP_MARKER); i >= 0 && i + 19 <= b.length; i = b.indexOf(BGP_MARKER, i + 1)) {
    const type = b[i + 18] ?? 0;
    if (b.readUInt16BE(i + 16) >= 19 && type >= 1 && type <= 5) return true;
  }
  return false;
}

/** Decodes the BGP messages of a capture's frames as they are read (see {@link captureDecoder}). */
export interface CaptureDecoder {
  /** One item of a capture reader (capture.ts), in file order. */
  item(item: CaptureItem): void;
  /** The capture ended: delivers what TCP reassembly still holds and reports messages left incomplete. */
  end(): void;
  readonly counts: CaptureCounts;
}

/**
 * A decoder of every BGP message in a pcap or pcapng capture into `sink`, fed frame by frame.
 * Lines: `{ frame, timestamp, src, dst, ...messageToJson(msg) }`; errors carry `offset` (the frame's offset in the
 * file), `frame`, `src`, `dst` and `streamOffset` (octets from the start of that direction's TCP stream).
 */
export function captureDecoder(sink: DecodeSink, options: StreamOptions = {}): CaptureDecoder {
  const ports = options.ports ?? new Set([179]);
  const counts: CaptureCounts = { frames: 0, segments: 0, messages: 0, errors: 0 };
  const directions = new Map<string, Direction>();
  const connections = new Map<string, Connection>();
  const noted = new Set<string>();
  let current: FrameInfo = { frame: 0, offset: 0, timestamp: 0 };

  const contexts = (d: Direction): CodecContext[] => sessionContexts(d.conn.opens.get(d.key), d.conn.opens.get(d.reverseKey), options);
  const maxLength = (d: Direction) => (): number => ((contexts(d)[0] as CodecContext).extendedMessage ? 65535 : 4096);

  const handle = (d: Direction, items: SplitItem[]): void => {
    for (const item of items) {
      const where = { frame: current.frame, src: d.src, dst: d.dst, streamOffset: item.offset };
      if (item.kind === 'message') {
        try {
          const dec = decodeForOutput(item.bytes, contexts(d));
          const msg = dec.msg;
          if (msg.type === 'OPEN') d.conn.opens.set(d.key, msg);
          counts.messages++;
          sink.line(jsonSpread({ frame: current.frame, timestamp: current.timestamp, src: d.src, dst: d.dst }, dec.text), { message: msg });
          if (dec.problems.length > 0) {
            counts.errors++;
            sink.error(problemError(dec, current.offset, where));
          }
        } catch (err) {
          counts.errors++;
          sink.error(errorLine(err, current.offset, where));
        }
      } else if (item.kind === 'error') {
        counts.errors++;
        sink.error({ error: item.message, offset: current.offset, code: item.code, subcode: item.subcode, ...where });
      } else if (item.kind === 'truncated') {
        counts.errors++;
        sink.error({ error: `stream ends inside a message: ${item.have} of ${item.need} octets`, offset: current.offset, code: null, subcode: null, ...where });
      } else {
        sink.note({ note: `skipped ${item.octets} octets: ${item.reason}`, offset: current.offset, ...where });
      }
    }
  };

  const directionFor = (seg: TcpSegment): Direction => {
    const src = endpoint(seg.srcIp, seg.srcPort);
    const dst = endpoint(seg.dstIp, seg.dstPort);
    const key = `${src}>${dst}`;
    let d = directions.get(key);
    if (!d) {
      const connKey = src < dst ? `${src}|${dst}` : `${dst}|${src}`;
      let conn = connections.get(connKey);
      if (!conn) {
        conn = { opens: new Map() };
        connections.set(connKey, conn);
      }
      const byPort = ports.has(seg.srcPort) || ports.has(seg.dstPort);
      d = { key, reverseKey: `${dst}>${src}`, src, dst, conn, tcp: new TcpDirection(), splitter: undefined, bgp: byPort ? true : undefined };
      directions.set(key, d);
    }
    return d;
  };

  const feed = (d: Direction, events: StreamEvent<FrameInfo>[]): void => {
    for (const ev of events) {
      if (ev.kind === 'restart') {
        if (d.splitter) handle(d, d.splitter.end());
        d.splitter = undefined;
        d.conn.opens.delete(d.key);
        continue;
      }
      // A message is attributed to the frame that carried its last octet.
      if (ev.kind === 'data' || ev.kind === 'rewrite') current = ev.tag;
      if (ev.kind === 'rewrite') {
        if (d.bgp) {
          const one = new BgpStreamSplitter(true);
          handle(d, [...one.push(ev.bytes, maxLength(d)), ...one.end()]);
        }
        continue;
      }
      if (d.bgp === undefined && ev.kind === 'data') {
        // A stream on another port is BGP when its first data holds a BGP header (or its reverse direction is BGP).
        const rev = directions.get(d.reverseKey);
        d.bgp = rev?.bgp === true || hasBgpHeader(ev.bytes);
        if (d.bgp && rev && rev.bgp === false) rev.bgp = true;
      }
      if (!d.bgp) continue;
      if (!d.splitter) d.splitter = new BgpStreamSplitter(!d.tcp.midStream);
      if (ev.kind === 'data') handle(d, d.splitter.push(ev.bytes, maxLength(d)));
      else d.splitter.gap(ev.missing);
    }
  };

  const item = (item: CaptureItem): void => {
    if (item.kind === 'problem') {
      counts.errors++;
      sink.error({ error: item.message, offset: item.offset, code: null, subcode: null });
      return;
    }
    counts.frames++;
    current = { frame: item.frame, offset: item.offset, timestamp: item.timestamp };
    const parsed = parseFrame(item.linkType, item.data);
    if (parsed.kind === 'skip') {
      if (parsed.reason && !noted.has(parsed.reason)) {
        noted.add(parsed.reason);
        sink.note({ note: `frame not decoded: ${parsed.reason}`, frame: item.frame, offset: item.offset });
      }
      return;
    }
    const seg = parsed.segment;
    counts.segments++;
    const d = directionFor(seg);
    if (d.bgp === false) return;
    feed(d, d.tcp.push(seg, current));
    if (seg.ackFlag) {
      const rev = directions.get(d.reverseKey);
      if (rev && rev.bgp !== false) {
        feed(rev, rev.tcp.acknowledged(seg.ack));
        current = { frame: item.frame, offset: item.offset, timestamp: item.timestamp };
      }
    }
  };
  const end = (): void => {
    for (const d of directions.values()) {
      feed(d, d.tcp.flush());
      if (d.splitter) handle(d, d.splitter.end());
    }
  };
  return { item, end, counts };
}

/** Decodes every BGP message of an in-memory pcap or pcapng capture into `sink` (tests, in-process use). */
export function decodeCapture(buf: Buffer, sink: DecodeSink, options: StreamOptions = {}): CaptureCounts {
  const decoder = captureDecoder(sink, options);
  for (const item of readCapture(buf)) decoder.item(item);
  decoder.end();
  return decoder.counts;
}

/**
 * Decodes a stream of whole BGP messages (each with its 19-octet header), pushed in pieces of any size: hex input.
 * Lines: `{ offset, ...messageToJson(msg) }` with `offset` the message's position in the stream. The context is
 * forced by the options or guessed as for a capture without OPENs.
 */
export class BgpMessageStream {
  private readonly sink: DecodeSink;
  private readonly candidates: CodecContext[];
  private readonly splitter = new BgpStreamSplitter(true);
  /** Messages decoded so far. */
  messages = 0;

  constructor(sink: DecodeSink, options: StreamOptions = {}) {
    this.sink = sink;
    this.candidates = sessionContexts(undefined, undefined, options);
  }

  push(bytes: Buffer): void {
    if (bytes.length > 0) this.handle(this.splitter.push(bytes, () => 65535));
  }

  end(): void {
    this.handle(this.splitter.end());
  }

  private handle(items: readonly SplitItem[]): void {
    const sink = this.sink;
    for (const item of items) {
      if (item.kind === 'message') {
        try {
          const dec = decodeForOutput(item.bytes, this.candidates);
          this.messages++;
          sink.line(jsonSpread({ offset: item.offset }, dec.text), { message: dec.msg });
          if (dec.problems.length > 0) sink.error(problemError(dec, item.offset, {}));
        } catch (err) {
          sink.error(errorLine(err, item.offset));
        }
      } else if (item.kind === 'error') {
        sink.error({ error: item.message, offset: item.offset, code: item.code, subcode: item.subcode });
      } else if (item.kind === 'truncated') {
        sink.error({ error: `input ends inside a message: ${item.have} of ${item.need} octets`, offset: item.offset, code: null, subcode: null });
      } else {
        sink.note({ note: `skipped ${item.octets} octets: ${item.reason}`, offset: item.offset });
      }
    }
  }
}

/** Decodes an in-memory stream of whole BGP messages (see BgpMessageStream); returns the number decoded. */
export function decodeBgpStream(bytes: Buffer, sink: DecodeSink, options: StreamOptions = {}): number {
  const stream = new BgpMessageStream(sink, options);
  stream.push(bytes);
  stream.end();
  return stream.messages;
}
