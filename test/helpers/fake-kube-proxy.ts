/**
 * A small stand-in for kube-proxy's health servers (kubernetes/kubernetes
 * `pkg/proxy/healthcheck/service_health.go` and `proxy_health.go`), for tests and benchmarks.
 *
 * One node:http server on a loopback address. Any path except `/healthz` and `/livez` behaves like
 * the per-Service server on `healthCheckNodePort`; `/healthz` behaves like the node health server on
 * port 10256. The behaviour is switchable at runtime with `setMode()`:
 * - `ok`: 200 `{"service":{"namespace":"ns","name":"n"},"localEndpoints":N,"serviceProxyHealthy":true}`
 * - `none`: 503 with `localEndpoints: 0`
 * - `proxy-unhealthy`: 503 with `serviceProxyHealthy: false` (on `/healthz`: 503 `nodeEligible: true`)
 * - `not-eligible`: on `/healthz`, 503 `nodeEligible: false` (per-Service paths answer like `ok`)
 * - `empty`: 200 with an empty body (what kube-proxy sends for a just-removed Service)
 * - `garbage`: 200 with a non-JSON body
 * - `hang`: accepts the request and never answers
 * - `close`: destroys the connection without answering
 */
import http from 'node:http';
import type net from 'node:net';

export type FakeMode = 'ok' | 'none' | 'proxy-unhealthy' | 'not-eligible' | 'empty' | 'garbage' | 'hang' | 'close';

export interface FakeKubeProxy {
  host: string;
  port: number;
  /** Requests received so far. */
  readonly requests: number;
  mode: FakeMode;
  localEndpoints: number;
  setMode(mode: FakeMode): void;
  /** Close the server and every open connection. */
  close(): Promise<void>;
}

/**
 * Start a fake kube-proxy health server.
 * @param opts.host loopback address to bind (default 127.0.0.1)
 * @param opts.port port (default 0: any free port)
 * @param opts.mode initial mode (default `ok`)
 * @throws the listen error (e.g. EADDRINUSE)
 */
export async function startFakeKubeProxy(opts: { host?: string; port?: number; mode?: FakeMode; localEndpoints?: number } = {}): Promise<FakeKubeProxy> {
  const host = opts.host ?? '127.0.0.1';
  const sockets = new Set<net.Socket>();
  const state = { mode: opts.mode ?? ('ok' as FakeMode), localEndpoints: opts.localEndpoints ?? 1, requests: 0 };
  const server = http.createServer((req, res) => {
    state.requests++;
    const mode = state.mode;
    if (mode === 'hang') return;
    if (mode === 'close') {
      req.socket.destroy();
      return;
    }
    const send = (status: number, body: string) => {
      res.writeHead(status, { 'content-type': 'application/json', 'x-content-type-options': 'nosniff', connection: 'close' });
      res.end(body);
    };
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/healthz' || path === '/livez') {
      const now = new Date().toISOString();
      if (mode === 'proxy-unhealthy' || mode === 'not-eligible') {
        send(503, JSON.stringify({ lastUpdated: now, currentTime: now, nodeEligible: mode !== 'not-eligible' }));
      } else if (mode === 'empty') {
        send(200, '');
      } else if (mode === 'garbage') {
        send(200, 'not json');
      } else {
        send(200, JSON.stringify({ lastUpdated: now, currentTime: now, nodeEligible: true }));
      }
      return;
    }
    const svc = { namespace: 'ns', name: 'n' };
    switch (mode) {
      case 'ok':
      case 'not-eligible':
        send(200, JSON.stringify({ service: svc, localEndpoints: state.localEndpoints, serviceProxyHealthy: true }));
        return;
      case 'none':
        send(503, JSON.stringify({ service: svc, localEndpoints: 0, serviceProxyHealthy: true }));
        return;
      case 'proxy-unhealthy':
        send(503, JSON.stringify({ service: svc, localEndpoints: state.localEndpoints, serviceProxyHealthy: false }));
        return;
      case 'empty':
        send(200, '');
        return;
      case 'garbage':
        send(200, '<html>oops</html>');
        return;
    }
  });
  server.on('connection', (s: net.Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host, port: opts.port ?? 0 }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const addr = server.address() as net.AddressInfo;
  return {
    host,
    port: addr.port,
    get requests() {
      return state.requests;
    },
    get mode() {
      return state.mode;
    },
    set mode(m: FakeMode) {
      state.mode = m;
    },
    get localEndpoints() {
      return state.localEndpoints;
    },
    set localEndpoints(n: number) {
      state.localEndpoints = n;
    },
    setMode(m: FakeMode) {
      state.mode = m;
    },
    close() {
      return new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      });
    },
  };
}

/**
 * A loopback port that refuses connections: bind an ephemeral port, then close it.
 * (Another process could take it in between; tests use it only for "refused" expectations.)
 */
export async function refusedPort(host = '127.0.0.1'): Promise<number> {
  const srv = http.createServer();
  await new Promise<void>((resolve) => srv.listen({ host, port: 0 }, () => resolve()));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}
