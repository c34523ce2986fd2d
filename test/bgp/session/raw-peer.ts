/**
 * A scripted raw BGP peer for session tests: speaks bytes (built with test/helpers/wire.ts, independent of the
 * codec), splits what it receives into messages by the Length field, and lets a test await the next message.
 * Either listens (`RawPeer.listen`) for our active session, or dials our BgpListener (`RawPeer.connect`).
 */
import { EventEmitter } from 'node:events';
import { createServer, Socket } from 'node:net';
import type { Server } from 'node:net';

/** One received message: type and body (after the 19-octet header). */
export interface RawMessage {
  type: number;
  body: Buffer;
  raw: Buffer;
}

/** One TCP connection of the raw peer. */
export class RawConn extends EventEmitter {
  readonly socket: Socket;
  readonly received: RawMessage[] = [];
  private buf = Buffer.alloc(0);
  private waiters: { pred: (m: RawMessage) => boolean; resolve: (m: RawMessage) => void }[] = [];
  closed = false;
  private closeWaiters: (() => void)[] = [];

  constructor(socket: Socket) {
    super();
    this.socket = socket;
    socket.on('data', (d: Buffer) => this.onData(d));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      this.closed = true;
      for (const w of this.closeWaiters) w();
      this.closeWaiters = [];
    });
  }

  private onData(d: Buffer): void {
    this.buf = Buffer.concat([this.buf, d]);
    while (this.buf.length >= 19) {
      const len = this.buf.readUInt16BE(16);
      if (len < 19 || this.buf.length < len) break;
      const raw = Buffer.from(this.buf.subarray(0, len));
      this.buf = this.buf.subarray(len);
      const m: RawMessage = { type: raw[18] ?? 0, body: raw.subarray(19), raw };
      this.received.push(m);
      const i = this.waiters.findIndex((w) => w.pred(m));
      if (i >= 0) {
        const [w] = this.waiters.splice(i, 1);
        w?.resolve(m);
      }
    }
  }

  /** Sends raw bytes. */
  send(...msgs: Buffer[]): void {
    for (const m of msgs) this.socket.write(m);
  }

  /**
   * The first received message of `type` (any type when undefined) not yet consumed by an earlier `next`; waits
   * up to `timeoutMs` (default 5000) and rejects with the types seen so far on timeout.
   */
  next(type?: number, timeoutMs = 5000): Promise<RawMessage> {
    const pred = (m: RawMessage) => (type === undefined || m.type === type) && !this.consumed.has(m);
    const found = this.received.find(pred);
    if (found) {
      this.consumed.add(found);
      return Promise.resolve(found);
    }
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w.resolve !== done);
        reject(new Error(`no message of type ${type ?? 'any'} within ${timeoutMs} ms; received types ${this.received.map((m) => m.type).join(',')}`));
      }, timeoutMs);
      const done = (m: RawMessage) => {
        clearTimeout(timer);
        this.consumed.add(m);
        resolve(m);
      };
      this.waiters.push({ pred, resolve: done });
    });
  }
  private readonly consumed = new Set<RawMessage>();

  /** Resolves when the socket is closed (rejects after timeoutMs, default 5000). */
  waitClosed(timeoutMs = 5000): Promise<void> {
    if (this.closed) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`connection not closed within ${timeoutMs} ms`)), timeoutMs);
      this.closeWaiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  destroy(): void {
    this.socket.destroy();
  }
}

/** A listening raw peer: each accepted connection becomes a RawConn. */
export class RawPeer {
  readonly server: Server;
  readonly conns: RawConn[] = [];
  private waiters: ((c: RawConn) => void)[] = [];
  private taken = 0;

  private constructor(server: Server) {
    this.server = server;
    server.on('connection', (s: Socket) => {
      const c = new RawConn(s);
      this.conns.push(c);
      const w = this.waiters.shift();
      if (w) {
        this.taken++;
        w(c);
      }
    });
  }

  /** Listens on address:port (port 0 = any); see `port`. */
  static async listen(address: string, port = 0): Promise<RawPeer> {
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, address, () => resolve());
    });
    return new RawPeer(server);
  }

  /** Dials a listener from `localAddress`. */
  static async connect(host: string, port: number, localAddress: string): Promise<RawConn> {
    const s = new Socket();
    await new Promise<void>((resolve, reject) => {
      s.once('error', reject);
      s.connect({ host, port, localAddress }, () => resolve());
    });
    return new RawConn(s);
  }

  get port(): number {
    const a = this.server.address();
    return typeof a === 'object' && a ? a.port : 0;
  }

  /** The next accepted connection not yet handed out (waits up to timeoutMs, default 5000). */
  accept(timeoutMs = 5000): Promise<RawConn> {
    if (this.taken < this.conns.length) return Promise.resolve(this.conns[this.taken++] as RawConn);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no connection within ${timeoutMs} ms`)), timeoutMs);
      this.waiters.push((c) => {
        clearTimeout(timer);
        resolve(c);
      });
    });
  }

  /** Closes the server and every connection. */
  async close(): Promise<void> {
    for (const c of this.conns) c.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

let counter = 0;
/** Distinct loopback addresses for one test: 127.(10+x).y.1 for us, .2 for the raw peer, .3 for a second peer. */
export function testAddresses(): { ours: string; peer: string; peer2: string } {
  const n = (process.pid * 13 + counter++) % 60000;
  const a = 10 + ((n >> 8) % 80);
  const b = n & 0xff;
  return { ours: `127.${a}.${b}.1`, peer: `127.${a}.${b}.2`, peer2: `127.${a}.${b}.3` };
}

/** Resolves with the first `event` emission whose args satisfy `pred` (rejects after timeoutMs, default 5000). */
export function once<T = unknown>(em: EventEmitter, event: string, pred: (arg: T) => boolean = () => true, timeoutMs = 5000): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      em.off(event, on);
      reject(new Error(`no '${event}' event within ${timeoutMs} ms`));
    }, timeoutMs);
    const on = (arg: T) => {
      if (!pred(arg)) return;
      clearTimeout(timer);
      em.off(event, on);
      resolve(arg);
    };
    em.on(event, on);
  });
}
