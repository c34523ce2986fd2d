/**
 * bench/recording-peer.ts — a minimal passive BGP peer for benchmarks: it accepts ONE session at a time on a
 * loopback address, answers OPEN with its own OPEN (IPv4 unicast, 4-octet AS, route refresh) and KEEPALIVEs
 * (RFC 4271 §8, reduced to what a receiver needs), and timestamps every UPDATE with `process.hrtime.bigint()` taken
 * when the TCP chunk that completed it arrived (CLOCK_MONOTONIC, comparable across processes of this machine).
 * UPDATEs are decoded with Herald's codec (bgp/codec) in the negotiated receive context.
 *
 * Not a BGP implementation: no FSM timers other than its own KEEPALIVE (hold time/3), no validation of the peer's
 * OPEN beyond what the codec does. A NOTIFICATION closes the connection ('notification'); a decoding error closes it
 * and emits 'error'.
 *
 * Events: 'established' (Negotiated), 'update' (RecordedUpdate), 'notification' (NotificationMessage), 'closed',
 * 'error' (Error).
 */
import { EventEmitter } from 'node:events';
import net from 'node:net';
import { decodeMessage, encodeMessage } from '../bgp/codec/message.ts';
import { buildOpen, codecContextFor, negotiate } from '../bgp/codec/open.ts';
import type { Negotiated } from '../bgp/codec/open.ts';
import { DEFAULT_CONTEXT } from '../bgp/codec/types.ts';
import type { CodecContext, OpenMessage, UpdateMessage } from '../bgp/codec/types.ts';
import { MessageFramer } from '../bgp/wire/framer.ts';

/** One UPDATE as received. */
export interface RecordedUpdate {
  /** process.hrtime.bigint() when the chunk completing this message arrived, ns. */
  readonly atNs: bigint;
  /** IPv4 prefixes announced in the NLRI field. */
  readonly announced: readonly string[];
  /** IPv4 prefixes withdrawn (Withdrawn Routes field). */
  readonly withdrawn: readonly string[];
  /** True for the IPv4 End-of-RIB marker (empty UPDATE, RFC 4724 §2). */
  readonly endOfRib: boolean;
  readonly message: UpdateMessage;
}

/** Options of {@link RecordingPeer.start}. */
export interface RecordingPeerOptions {
  /** Loopback address to listen on. */
  host: string;
  /** TCP port (0 = any free port). */
  port?: number;
  /** Our AS. */
  localAs: number;
  /** Our BGP Identifier, dotted quad. */
  bgpIdentifier: string;
  /** Hold time offered, seconds (default 90). */
  holdTimeSec?: number;
}

/** See the module comment. */
export class RecordingPeer extends EventEmitter {
  readonly host: string;
  port = 0;
  /** UPDATEs received on the current session (cleared on a new session). */
  readonly updates: RecordedUpdate[] = [];
  negotiated: Negotiated | undefined;
  private readonly server: net.Server;
  private readonly opts: RecordingPeerOptions;
  private socket: net.Socket | undefined;
  private keepaliveTimer: NodeJS.Timeout | undefined;

  private constructor(opts: RecordingPeerOptions) {
    super();
    this.opts = opts;
    this.host = opts.host;
    this.server = net.createServer((s) => this.accept(s));
  }

  /**
   * Listen on `host:port`.
   * @throws the listen error (EADDRINUSE, EADDRNOTAVAIL)
   */
  static async start(opts: RecordingPeerOptions): Promise<RecordingPeer> {
    const p = new RecordingPeer(opts);
    await new Promise<void>((resolve, reject) => {
      p.server.once('error', reject);
      p.server.listen(opts.port ?? 0, opts.host, () => {
        p.server.off('error', reject);
        resolve();
      });
    });
    p.port = (p.server.address() as net.AddressInfo).port;
    return p;
  }

  private accept(s: net.Socket): void {
    if (this.socket) {
      s.destroy(); // one session at a time
      return;
    }
    this.socket = s;
    this.updates.length = 0;
    s.setNoDelay(true);
    const framer = new MessageFramer();
    const holdTimeSec = this.opts.holdTimeSec ?? 90;
    const localOpen: OpenMessage = buildOpen({
      localAs: this.opts.localAs,
      holdTimeSec,
      bgpIdentifier: this.opts.bgpIdentifier,
      capabilities: [{ type: 'Multiprotocol', afi: 1, safi: 1 }, { type: 'RouteRefresh' }, { type: 'FourOctetAs', asNumber: this.opts.localAs }],
    });
    s.write(encodeMessage(localOpen, DEFAULT_CONTEXT));
    let ctx: CodecContext = DEFAULT_CONTEXT;
    s.on('data', (chunk: Buffer) => {
      const atNs = process.hrtime.bigint();
      try {
        for (const raw of framer.push(chunk)) {
          const msg = decodeMessage(raw, ctx);
          switch (msg.type) {
            case 'OPEN': {
              const n = negotiate(localOpen, msg, holdTimeSec);
              this.negotiated = n;
              ctx = codecContextFor(n, 'receive');
              s.write(encodeMessage({ type: 'KEEPALIVE' }, ctx));
              if (n.keepaliveTimeSec > 0) {
                this.keepaliveTimer = setInterval(() => s.write(encodeMessage({ type: 'KEEPALIVE' }, ctx)), n.keepaliveTimeSec * 1000);
                this.keepaliveTimer.unref();
              }
              this.emit('established', n);
              break;
            }
            case 'UPDATE': {
              const rec: RecordedUpdate = {
                atNs,
                announced: msg.nlri.map((e) => e.prefix),
                withdrawn: msg.withdrawnRoutes.map((e) => e.prefix),
                endOfRib: msg.nlri.length === 0 && msg.withdrawnRoutes.length === 0 && msg.pathAttributes.length === 0,
                message: msg,
              };
              this.updates.push(rec);
              this.emit('update', rec);
              break;
            }
            case 'NOTIFICATION':
              this.emit('notification', msg);
              s.destroy();
              return;
            default:
              break; // KEEPALIVE, ROUTE-REFRESH
          }
        }
      } catch (err) {
        this.emit('error', err instanceof Error ? err : new Error(String(err)));
        s.destroy();
      }
    });
    s.on('error', () => undefined); // 'close' follows
    s.on('close', () => {
      if (this.keepaliveTimer) clearInterval(this.keepaliveTimer);
      this.keepaliveTimer = undefined;
      this.socket = undefined;
      this.negotiated = undefined;
      this.emit('closed');
    });
  }

  /** Close the listener and the session. */
  async close(): Promise<void> {
    this.socket?.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
