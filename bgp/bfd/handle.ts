/**
 * The main-thread handle of the BFD engine. `BfdHandle.start()` runs the engine in a worker thread
 * (bgp/bfd/worker.ts) and talks to it over the typed channel of bgp/bfd/protocol.ts: configuration in, state and
 * timer changes out. The handle keeps the last reported status of every session, so readers (the Speaker's peer
 * status, metrics) get it synchronously.
 *
 * Events:
 * - 'update' (id, change: BfdChange, info: BfdSessionInfo)   a state or timer change of a session, or discarded packets meant for it (at most once a second)
 * - 'error'  (message: string, id?: string)                        a socket or TTL-check problem, a worker crash
 *
 * A worker that dies is restarted after one second with every session configured again (the peers saw BFD go Down
 * meanwhile; that is the truth: nothing was sending).
 *
 * For the lifecycle: `adminDown()` sets every (or the named) session AdminDown and resolves once each peer that
 * was Up has confirmed it (RFC 5880 §6.5 Final), so a stop that keeps forwarding can close BGP without the peer's
 * BFD declaring a failure (RFC 5882 §3.2); `adminUp()` undoes it.
 */
import { EventEmitter } from 'node:events';
import { MessageChannel } from 'node:worker_threads';
import type { MessagePort } from 'node:worker_threads';
import type { Clock } from '../clock.ts';
import { BfdEngine } from './engine.ts';
import type { BfdPeerConfig, BfdSessionInfo } from './engine.ts';
import { serveEngine } from './protocol.ts';
import type { BfdCalls, BfdMessage, BfdStatusReply } from './protocol.ts';
import { PendingCalls, spawnWorker } from '../worker-rpc.ts';
import type { CallMessage } from '../worker-rpc.ts';
import type { BfdTransport } from './udp.ts';
import { udpTransport } from './udp.ts';

/** What the Speaker needs from BFD (BfdHandle implements it; tests may pass a fake). */
export interface BfdClient extends EventEmitter {
  /** Adds a session; rejects with the engine's message for a bad configuration. */
  add(id: string, config: BfdPeerConfig): Promise<void>;
  update(id: string, config: BfdPeerConfig): Promise<void>;
  remove(id: string): Promise<void>;
  adminDown(ids?: readonly string[], timeoutMs?: number): Promise<void>;
  adminUp(ids?: readonly string[]): Promise<void>;
  /** The last reported status of a session (synchronous). */
  info(id: string): BfdSessionInfo | undefined;
  close(): Promise<void>;
}

/** Where the engine runs. `main` (tests only) accepts a clock and a transport. */
export type BfdThread = { readonly thread: 'worker' } | { readonly thread: 'main'; readonly clock: Clock; readonly transport?: BfdTransport };

interface Port {
  postMessage<K extends keyof BfdCalls>(m: CallMessage<BfdCalls, K>): void;
  close(): Promise<void>;
}

const RESTART_MS = 1000;

/** The main-thread handle. See the module comment. */
export class BfdHandle extends EventEmitter implements BfdClient {
  private readonly where: BfdThread;
  private port: Port | undefined;
  private readonly calls = new PendingCalls<BfdCalls, BfdStatusReply>();
  private readonly configs = new Map<string, BfdPeerConfig>();
  private readonly infos = new Map<string, BfdSessionInfo>();
  private closed = false;
  private restartTimer: NodeJS.Timeout | undefined;

  private constructor(where: BfdThread) {
    super();
    this.where = where;
  }

  /** Starts the engine (default: in a worker thread). */
  static start(where: BfdThread = { thread: 'worker' }): BfdHandle {
    const h = new BfdHandle(where);
    h.port = h.spawn();
    return h;
  }

  add(id: string, config: BfdPeerConfig): Promise<void> {
    this.configs.set(id, config);
    return this.call('add', [id, config]).then(() => undefined, (e: Error) => {
      this.configs.delete(id);
      throw e;
    });
  }

  update(id: string, config: BfdPeerConfig): Promise<void> {
    this.configs.set(id, config);
    return this.call('update', [id, config]).then(() => undefined);
  }

  remove(id: string): Promise<void> {
    this.configs.delete(id);
    this.infos.delete(id);
    return this.call('remove', [id]).then(() => undefined);
  }

  adminDown(ids?: readonly string[], timeoutMs?: number): Promise<void> {
    return this.call('adminDown', [ids, timeoutMs]).then(() => undefined);
  }

  adminUp(ids?: readonly string[]): Promise<void> {
    return this.call('adminUp', [ids]).then(() => undefined);
  }

  info(id: string): BfdSessionInfo | undefined {
    return this.infos.get(id);
  }

  /** Fresh status of every session (with packet counters) and the engine's discard counters. */
  async status(): Promise<BfdStatusReply> {
    const s = await this.call('status', []);
    if (!s) throw new Error('BFD engine sent no status');
    return s;
  }

  /** Stops every session and the worker. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.restartTimer);
    const port = this.port;
    if (!port) return;
    await this.call('close', []).catch(() => undefined);
    this.port = undefined;
    await port.close();
  }

  private call<K extends keyof BfdCalls>(method: K, args: BfdCalls[K]): Promise<BfdStatusReply | undefined> {
    const port = this.port;
    if (this.closed && method !== 'close') return Promise.reject(new Error('BFD is closed'));
    if (!port) return Promise.reject(new Error('the BFD worker is restarting'));
    return this.calls.call(method, args, (m) => port.postMessage(m));
  }

  private onMessage(m: BfdMessage): void {
    switch (m.type) {
      case 'reply':
        this.calls.settle(m);
        return;
      case 'update':
        if (!this.configs.has(m.id)) return; // a late notice of a removed session
        this.infos.set(m.id, m.info);
        this.emit('update', m.id, m.change, m.info);
        return;
      case 'error':
        if (this.listenerCount('error') > 0) this.emit('error', m.message, m.id);
        return;
    }
  }

  private spawn(): Port {
    if (this.where.thread === 'main') {
      const { port1, port2 } = new MessageChannel();
      const where = this.where;
      const engine = serveEngine(port2, (notify) =>
        new BfdEngine({
          clock: where.clock,
          transport: where.transport ?? udpTransport,
          onUpdate: (id, change, info) => notify({ type: 'update', id, change, info }),
          onError: (id, message) => notify(id !== undefined ? { type: 'error', id, message } : { type: 'error', message }),
        }),
      );
      port1.on('message', (m: BfdMessage) => this.onMessage(m));
      port1.unref();
      return {
        postMessage: (m) => port1.postMessage(m),
        close: async () => {
          await engine.close();
          closePorts(port1, port2);
        },
      };
    }
    const worker = spawnWorker(new URL('./worker.ts', import.meta.url));
    worker.unref(); // BFD alone never keeps the process alive
    worker.on('message', (m: BfdMessage) => this.onMessage(m));
    worker.on('error', (err) => this.crashed(`BFD worker failed: ${err.message}`));
    worker.on('exit', (code) => {
      if (!this.closed) this.crashed(`BFD worker exited with code ${code}`);
    });
    return {
      postMessage: (m) => worker.postMessage(m),
      close: async () => {
        await worker.terminate();
      },
    };
  }

  private crashed(message: string): void {
    if (this.closed || this.port === undefined) return;
    this.port = undefined;
    this.calls.failAll(new Error(message));
    this.infos.clear();
    if (this.listenerCount('error') > 0) this.emit('error', `${message}; restarting it in ${RESTART_MS} ms`);
    this.restartTimer = setTimeout(() => {
      if (this.closed) return;
      this.port = this.spawn();
      for (const [id, config] of this.configs) {
        this.add(id, config).catch((e: Error) => this.listenerCount('error') > 0 && this.emit('error', e.message, id));
      }
    }, RESTART_MS);
    this.restartTimer.unref();
  }
}

function closePorts(...ports: MessagePort[]): void {
  for (const p of ports) p.close();
}
