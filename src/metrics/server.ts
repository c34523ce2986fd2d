/**
 * The metrics-only HTTP listener (config `metrics: {address, port}`, docs/metrics.md): `GET /metrics` (and `HEAD`)
 * in the Prometheus text format 0.0.4, and, with `views`, the node's read-only views `GET /api/v1/peers`,
 * `/api/v1/services` and `/api/v1/services/NS/NAME` as the admin API serves them (what `herald peers --all-nodes` and
 * `services --all-nodes` ask each node through the apiserver's pod proxy, src/cli/cluster.ts: the same facts the
 * metrics already show per peer and per VIP). It opens on the node's address, where anyone on the network reaches
 * it, so it holds no admin data, no mutation, and takes no token: every other path answers 404 and another method
 * 405, both with the admin API's JSON error shape `{statusCode, error, message}` (docs/admin-api.md).
 *
 * It shares the main thread with the health checks and the route pipeline, so nothing a client does may cost that
 * thread more than a bounded share (issue 35 N5: 100 connections pipelining scrapes lagged it 5 s and withdrew a VIP):
 * - the exposition is rendered at most once per `maxAgeMs` (1 s); scrapes in between, and scrapes while it renders,
 *   get the same bytes ({@link ExpositionCache});
 * - at most `maxConnections` (16) connections: Node drops the ones above at once (`server.maxConnections`);
 * - requests beyond a token bucket (`ratePerSec` 10, burst 20) are answered 429 with `Retry-After` and the
 *   connection closed, so one client pipelining cannot keep the thread busy;
 * - a connection that sends no request within `idleTimeoutMs` (5 s), or no complete headers within it, is closed;
 *   an idle keep-alive connection too.
 * Refused scrapes and connections are counted (`onRefused`: `herald_metrics_refused_total{reason}`).
 */
import Fastify, { LogController } from 'fastify';
import type { FastifyBaseLogger, FastifyInstance, FastifyReply } from 'fastify';
import { lazySchemaController } from '../admin/lazy-compilers.ts';

/** The metrics' path. */
export const METRICS_PATH = '/metrics';

/** The node's read-only views (src/admin/view.ts `DaemonView`), served as JSON beside the metrics. */
export interface MetricsViews {
  peers(): unknown;
  services(): readonly { readonly service: string }[];
}

/** A scrape taking longer than this (ms) is cut: the port is reachable from the network. */
const REQUEST_TIMEOUT_MS = 30_000;

/** Why a scrape or connection was refused (the `reason` label). */
export type MetricsRefusal = 'connections' | 'rate';

/** Limits of the listener (defaults in the module comment). */
export interface MetricsServerLimits {
  /** Longest an exposition is served from the cache, ms (default 1000). */
  maxAgeMs?: number;
  /** Most open connections (default 16). */
  maxConnections?: number;
  /** Scrapes served per second, sustained (default 10). */
  ratePerSec?: number;
  /** Scrapes served in a burst (default 20). */
  burst?: number;
  /** A connection idle this long (no request, no complete headers, keep-alive unused) is closed, ms (default 5000). */
  idleTimeoutMs?: number;
}

/** Options of {@link buildMetricsServer}. */
export interface MetricsServerOptions extends MetricsServerLimits {
  /** The exposition (HeraldMetrics.text through the daemon view, which refreshes scrape-time values). */
  text: () => Promise<{ contentType: string; body: string }>;
  /** fastify logger instance (a pino Logger) or false. */
  logger?: false | FastifyBaseLogger;
  /** A scrape or a connection refused by a limit. */
  onRefused?: (reason: MetricsRefusal) => void;
  /**
   * Also serve the probes of a process that has no admin API (`herald controller`): GET /healthz (200 while it runs)
   * and GET /readyz (200, or 503 with `notReady`: what keeps it from being ready; `forbidden`: the Kubernetes calls
   * refused with 403, as `herald status` lists them).
   */
  probes?: { notReady(): string[]; forbidden?(): string[] };
  /** Monotonic ms (tests); default performance.now. */
  now?: () => number;
  /** The read-only views served beside the metrics (rendered at most once per `maxAgeMs` too); none when absent. */
  views?: MetricsViews;
}

/** One rendered exposition, as bytes ready to send. */
export interface Exposition {
  contentType: string;
  body: Buffer;
}

/**
 * The exposition rendered at most once per `maxAgeMs`: every call within that time, and every call while a render is
 * in progress, gets the same rendered bytes. A failed render is not cached.
 */
export class ExpositionCache {
  readonly #render: () => Promise<{ contentType: string; body: string }>;
  readonly #maxAgeMs: number;
  readonly #now: () => number;
  #last: { at: number; value: Exposition } | undefined;
  #pending: Promise<Exposition> | undefined;
  /** Renders done (tests). */
  renders = 0;

  constructor(render: () => Promise<{ contentType: string; body: string }>, maxAgeMs: number, now: () => number = () => performance.now()) {
    this.#render = render;
    this.#maxAgeMs = maxAgeMs;
    this.#now = now;
  }

  /** The cached exposition when fresh, else a new render (shared by concurrent callers). */
  get(): Promise<Exposition> {
    const last = this.#last;
    if (last !== undefined && this.#now() - last.at < this.#maxAgeMs) return Promise.resolve(last.value);
    this.#pending ??= (async () => {
      try {
        this.renders++;
        const m = await this.#render();
        const value = { contentType: m.contentType, body: Buffer.from(m.body, 'utf8') };
        this.#last = { at: this.#now(), value };
        return value;
      } finally {
        this.#pending = undefined;
      }
    })();
    return this.#pending;
  }
}

/** A token bucket: `take()` is true while the rate allows. */
class TokenBucket {
  readonly #ratePerSec: number;
  readonly #burst: number;
  readonly #now: () => number;
  #tokens: number;
  #at: number;
  constructor(ratePerSec: number, burst: number, now: () => number) {
    this.#ratePerSec = ratePerSec;
    this.#burst = burst;
    this.#now = now;
    this.#tokens = burst;
    this.#at = now();
  }

  take(): boolean {
    const t = this.#now();
    this.#tokens = Math.min(this.#burst, this.#tokens + ((t - this.#at) / 1000) * this.#ratePerSec);
    this.#at = t;
    if (this.#tokens < 1) return false;
    this.#tokens -= 1;
    return true;
  }
}

function sendError(reply: FastifyReply, statusCode: 404 | 405 | 429 | 500, message: string): FastifyReply {
  const error = { 404: 'Not Found', 405: 'Method Not Allowed', 429: 'Too Many Requests', 500: 'Internal Server Error' }[statusCode];
  return reply.code(statusCode).type('application/json').send({ statusCode, error, message });
}

/** Build (not start) the metrics listener; call `listen({host, port})` on the result, or `inject()` in tests. */
export async function buildMetricsServer(opts: MetricsServerOptions): Promise<FastifyInstance> {
  const now = opts.now ?? (() => performance.now());
  const idleTimeoutMs = opts.idleTimeoutMs ?? 5000;
  // Prometheus scrapes every few seconds: no per-request log lines.
  // No route here has a schema: fastify's schema compilers are never loaded (src/admin/lazy-compilers.ts).
  const base = {
    requestTimeout: REQUEST_TIMEOUT_MS,
    connectionTimeout: idleTimeoutMs,
    keepAliveTimeout: idleTimeoutMs,
    logController: new LogController({ disableRequestLogging: true }),
    schemaController: lazySchemaController(),
  };
  const app: FastifyInstance = opts.logger ? Fastify({ ...base, loggerInstance: opts.logger }) : Fastify({ ...base, logger: false });
  app.server.maxConnections = opts.maxConnections ?? 16;
  app.server.headersTimeout = idleTimeoutMs;
  app.server.on('drop', () => opts.onRefused?.('connections'));
  const cache = new ExpositionCache(opts.text, opts.maxAgeMs ?? 1000, now);
  const bucket = new TokenBucket(opts.ratePerSec ?? 10, opts.burst ?? 20, now);
  // Every request counts against the rate, whatever its path: a 404 costs this thread as much as a cached scrape.
  app.addHook('onRequest', async (_req, reply) => {
    if (bucket.take()) return;
    opts.onRefused?.('rate');
    reply.header('retry-after', '1').header('connection', 'close');
    return sendError(reply, 429, `too many requests: this listener serves about ${opts.ratePerSec ?? 10} per second; retry later`);
  });
  app.get(METRICS_PATH, async (_req, reply) => {
    const m = await cache.get();
    reply.type(m.contentType);
    return m.body;
  });
  const views = opts.views;
  if (views !== undefined) {
    const maxAgeMs = opts.maxAgeMs ?? 1000;
    const json = (f: () => unknown) => new ExpositionCache(async () => ({ contentType: 'application/json; charset=utf-8', body: JSON.stringify(f()) }), maxAgeMs, now);
    // One Service's view is looked up in the Services' view of at most maxAgeMs ago: a request per Service never
    // renders every Service again (the view is as costly as the whole list at 10,000 Services).
    let services: { atMs: number; list: ReturnType<MetricsViews['services']> } | undefined;
    const servicesView = () => {
      if (services === undefined || now() - services.atMs >= maxAgeMs) services = { atMs: now(), list: views.services() };
      return services.list;
    };
    for (const [path, c] of [['/api/v1/peers', json(() => views.peers())], ['/api/v1/services', json(servicesView)]] as const) {
      app.get(path, async (_req, reply) => {
        const v = await c.get();
        reply.type(v.contentType);
        return v.body;
      });
    }
    app.get<{ Params: { namespace: string; name: string } }>('/api/v1/services/:namespace/:name', async (req, reply) => {
      const { namespace, name } = req.params;
      const s = servicesView().find((x) => x.service === `${namespace}/${name}`);
      if (s === undefined) return sendError(reply, 404, `no Service ${namespace}/${name} known to this node`);
      return s;
    });
  }
  const probes = opts.probes;
  if (probes) {
    app.get('/healthz', async () => ({ live: true }));
    app.get('/readyz', async (_req, reply) => {
      const notReady = probes.notReady();
      const forbidden = probes.forbidden?.() ?? [];
      return reply.code(notReady.length === 0 ? 200 : 503).send({ ready: notReady.length === 0, notReady, ...(forbidden.length > 0 ? { forbidden } : {}) });
    });
  }
  app.setNotFoundHandler((req, reply) => {
    const path = req.url.split('?')[0] ?? '';
    if (path === METRICS_PATH || (views !== undefined && path.startsWith('/api/v1/'))) {
      if (path === METRICS_PATH || ['/api/v1/peers', '/api/v1/services'].includes(path) || /^\/api\/v1\/services\/[^/]+\/[^/]+$/.test(path)) {
        reply.header('allow', 'GET, HEAD');
        return sendError(reply, 405, `method ${req.method} not allowed on ${path}; allowed: GET, HEAD`);
      }
    }
    return sendError(reply, 404, `no such endpoint: ${req.method} ${path} (this listener serves only GET ${METRICS_PATH}${views !== undefined ? ', /api/v1/peers and /api/v1/services' : ''}; the admin API is on its own address, docs/admin-api.md)`);
  });
  app.setErrorHandler((err: Error, _req, reply) => {
    reply.log.error({ err }, 'metrics scrape failed');
    return sendError(reply, 500, `cannot produce the metrics: ${err.message}`);
  });
  return app;
}
