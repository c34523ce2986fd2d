/**
 * bench/counting-proxy.ts — an HTTP proxy in front of the fake apiserver (test/helpers/fake-apiserver.ts) that counts
 * what each client costs it, for bench/scale.ts. Each Herald reaches it through its own path prefix
 * (`http://127.0.0.1:PORT/pods/<node>`, the kubeconfig's server URL: src/k8s/client.ts keeps a server path), so every
 * request is told apart by node, and by role (the User-Agent, `herald/<version> (<role>)`).
 *
 * Counted per node: requests by verb, resource and code (as audit logs name them: src/k8s/client.ts `requestKind`),
 * LISTs that would be read from etcd (no `resourceVersion`, or a quorum read) and those served from the watch cache
 * (`resourceVersion=0`, a resourceVersion, or a streaming list), watch streams opened and their lifetimes, bytes
 * received and sent (bodies), watch events and their bytes by resource, and what etcd stores for each successful write
 * (the object the apiserver answers with: its size in bytes).
 *
 * Faults: `storm()` answers every request with 429 and `Retry-After` (API Priority and Fairness shedding load);
 * `partition(node)` cuts a node off (its connections reset, new ones reset at once) until `heal(node)`.
 */
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { requestKind } from '../src/k8s/client.ts';

/** What one node cost over a window (or since start). */
export interface NodeCounts {
  /** "verb resource code" → requests. */
  readonly requests: Map<string, number>;
  /** LISTs the apiserver answers from etcd (no resourceVersion): the expensive kind. */
  etcdLists: number;
  /** LISTs and streaming lists served from the watch cache. */
  cacheLists: number;
  /** Watch streams opened (answered 200), streaming lists included. */
  watchOpens: number;
  /** Bytes the client sent (request bodies) and received (response bodies, watch streams included). */
  bytesIn: number;
  bytesOut: number;
  /** Watch events received, and their bytes, by resource. */
  readonly watchEvents: Map<string, { events: number; bytes: number }>;
  /** Successful writes, and the bytes of the objects stored (what etcd keeps), by "verb resource". */
  readonly writes: Map<string, { count: number; bytes: number }>;
  /** User-Agents seen. */
  readonly agents: Set<string>;
}

function emptyCounts(): NodeCounts {
  return { requests: new Map(), etcdLists: 0, cacheLists: 0, watchOpens: 0, bytesIn: 0, bytesOut: 0, watchEvents: new Map(), writes: new Map(), agents: new Set() };
}

const bump = (m: Map<string, number>, k: string, n = 1) => m.set(k, (m.get(k) ?? 0) + n);

/** See the module comment. */
export class CountingProxy {
  readonly #target: URL;
  readonly #agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });
  #server: http.Server | undefined;
  #port = 0;
  /** node → counts since the last `take()`. */
  #counts = new Map<string, NodeCounts>();
  readonly #sockets = new Map<string, Set<Socket>>();
  /** Sockets already tracked (a kept-alive connection carries many requests). */
  readonly #seen = new WeakSet<Socket>();
  readonly #partitioned = new Set<string>();
  #storm: { retryAfterSec: number } | undefined;
  /** Open watch streams by node. */
  readonly #open = new Map<string, number>();

  constructor(target: string) {
    this.#target = new URL(target);
  }

  /** The server URL of node `node`'s kubeconfig. */
  urlFor(node: string): string {
    return `http://127.0.0.1:${this.#port}/pods/${encodeURIComponent(node)}`;
  }

  async start(): Promise<void> {
    const server = http.createServer((req, res) => this.#handle(req, res));
    server.keepAliveTimeout = 0;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    this.#port = (server.address() as AddressInfo).port;
    this.#server = server;
  }

  async stop(): Promise<void> {
    for (const set of this.#sockets.values()) for (const s of set) s.destroy();
    this.#agent.destroy();
    const server = this.#server;
    this.#server = undefined;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** The counts since the last call, by node; counting starts afresh. */
  take(): Map<string, NodeCounts> {
    const c = this.#counts;
    this.#counts = new Map();
    return c;
  }

  /** Watch streams open now, by node. */
  openWatches(): Map<string, number> {
    return new Map(this.#open);
  }

  /** Every request answered 429 `Retry-After: retryAfterSec` until `calm()`. */
  storm(retryAfterSec: number): void {
    this.#storm = { retryAfterSec };
  }

  calm(): void {
    this.#storm = undefined;
  }

  /** Node `node` is cut off: its connections reset, and each new one reset at once, until `heal(node)`. */
  partition(node: string): void {
    this.#partitioned.add(node);
    for (const s of this.#sockets.get(node) ?? []) s.destroy();
  }

  heal(node: string): void {
    this.#partitioned.delete(node);
  }

  #of(node: string): NodeCounts {
    let c = this.#counts.get(node);
    if (c === undefined) {
      c = emptyCounts();
      this.#counts.set(node, c);
    }
    return c;
  }

  #handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const m = /^\/pods\/([^/]+)(\/.*)$/.exec(req.url ?? '');
    if (m === null) {
      res.writeHead(404).end();
      return;
    }
    const node = decodeURIComponent(m[1]!);
    const rest = m[2]!;
    const sock = req.socket;
    let set = this.#sockets.get(node);
    if (set === undefined) {
      set = new Set();
      this.#sockets.set(node, set);
    }
    if (!this.#seen.has(sock)) {
      this.#seen.add(sock);
      set.add(sock);
      sock.once('close', () => set.delete(sock));
    }
    if (this.#partitioned.has(node)) {
      sock.destroy();
      return;
    }
    const u = new URL(rest, 'http://x');
    const watch = u.searchParams.get('watch') === 'true' || u.searchParams.get('watch') === '1';
    const kind = requestKind(req.method ?? 'GET', u.pathname, watch);
    const c = this.#of(node);
    c.agents.add(String(req.headers['user-agent'] ?? ''));
    if (this.#storm !== undefined) {
      req.resume();
      bump(c.requests, `${kind.verb} ${kind.resource} 429`);
      const body = JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'Too many requests, please try again later.', reason: 'TooManyRequests', code: 429 });
      res.writeHead(429, { 'Content-Type': 'application/json', 'Retry-After': String(this.#storm.retryAfterSec), 'Content-Length': Buffer.byteLength(body) });
      res.end(body);
      c.bytesOut += Buffer.byteLength(body);
      return;
    }
    const rv = u.searchParams.get('resourceVersion');
    if (kind.verb === 'list') {
      if (u.searchParams.get('continue') === null) {
        if (rv === null || rv === '') c.etcdLists++;
        else c.cacheLists++;
      }
    }
    if (watch && u.searchParams.get('sendInitialEvents') === 'true') c.cacheLists++;
    const up = http.request({ host: this.#target.hostname, port: this.#target.port, method: req.method, path: rest, headers: { ...req.headers, host: this.#target.host }, agent: this.#agent }, (upRes) => {
      const code = upRes.statusCode ?? 0;
      bump(c.requests, `${kind.verb} ${kind.resource} ${code}`);
      res.writeHead(code, upRes.headers);
      const isWrite = ['create', 'update', 'patch'].includes(kind.verb) && code >= 200 && code < 300;
      let stored = 0;
      let pending = '';
      if (watch && code === 200) {
        c.watchOpens++;
        this.#open.set(node, (this.#open.get(node) ?? 0) + 1);
        res.once('close', () => this.#open.set(node, (this.#open.get(node) ?? 1) - 1));
      }
      upRes.on('data', (chunk: Buffer) => {
        const now = this.#of(node); // a long watch is counted in the window it delivers in
        now.bytesOut += chunk.length;
        if (isWrite) stored += chunk.length;
        if (watch && code === 200) {
          pending += chunk.toString('utf8');
          let nl = pending.indexOf('\n');
          while (nl >= 0) {
            const line = pending.slice(0, nl);
            pending = pending.slice(nl + 1);
            const w = now.watchEvents.get(kind.resource) ?? { events: 0, bytes: 0 };
            w.events++;
            w.bytes += Buffer.byteLength(line) + 1;
            now.watchEvents.set(kind.resource, w);
            nl = pending.indexOf('\n');
          }
        }
        res.write(chunk);
      });
      upRes.on('end', () => {
        if (isWrite) {
          const key = `${kind.verb} ${kind.resource}`;
          const w = c.writes.get(key) ?? { count: 0, bytes: 0 };
          w.count++;
          w.bytes += stored;
          c.writes.set(key, w);
        }
        res.end();
      });
      upRes.on('error', () => res.destroy());
    });
    up.on('error', () => res.destroy());
    res.on('close', () => up.destroy());
    req.on('data', (chunk: Buffer) => {
      c.bytesIn += chunk.length;
      up.write(chunk);
    });
    req.on('end', () => up.end());
  }
}
