/**
 * The metrics-only HTTP listener (config `metrics: {address, port}`, docs/metrics.md): `GET /metrics` (and `HEAD`)
 * in the Prometheus text format 0.0.4, nothing else. It opens on the node's address, where anyone on the network
 * reaches it, so it holds no admin data and takes no token: every other path answers 404 and another method on
 * `/metrics` 405, both with the admin API's JSON error shape `{statusCode, error, message}` (docs/admin-api.md).
 */
import Fastify, { LogController } from 'fastify';
import type { FastifyBaseLogger, FastifyInstance, FastifyReply } from 'fastify';
import { lazySchemaController } from '../admin/lazy-compilers.ts';

/** The one path served. */
export const METRICS_PATH = '/metrics';

/** A scrape taking longer than this (ms) is cut: the port is reachable from the network. */
const REQUEST_TIMEOUT_MS = 30_000;

/** Options of {@link buildMetricsServer}. */
export interface MetricsServerOptions {
  /** The exposition, produced per scrape (HeraldMetrics.text through the daemon view, which refreshes scrape-time values). */
  text: () => Promise<{ contentType: string; body: string }>;
  /** fastify logger instance (a pino Logger) or false. */
  logger?: false | FastifyBaseLogger;
}

function sendError(reply: FastifyReply, statusCode: 404 | 405 | 500, message: string): FastifyReply {
  const error = { 404: 'Not Found', 405: 'Method Not Allowed', 500: 'Internal Server Error' }[statusCode];
  return reply.code(statusCode).type('application/json').send({ statusCode, error, message });
}

/** Build (not start) the metrics listener; call `listen({host, port})` on the result, or `inject()` in tests. */
export async function buildMetricsServer(opts: MetricsServerOptions): Promise<FastifyInstance> {
  // Prometheus scrapes every few seconds: no per-request log lines.
  // No route here has a schema: fastify's schema compilers are never loaded (src/admin/lazy-compilers.ts).
  const base = { requestTimeout: REQUEST_TIMEOUT_MS, logController: new LogController({ disableRequestLogging: true }), schemaController: lazySchemaController() };
  const app: FastifyInstance = opts.logger ? Fastify({ ...base, loggerInstance: opts.logger }) : Fastify({ ...base, logger: false });
  app.get(METRICS_PATH, async (_req, reply) => {
    const m = await opts.text();
    reply.type(m.contentType);
    return m.body;
  });
  app.setNotFoundHandler((req, reply) => {
    const path = req.url.split('?')[0] ?? '';
    if (path === METRICS_PATH) {
      reply.header('allow', 'GET, HEAD');
      return sendError(reply, 405, `method ${req.method} not allowed on ${METRICS_PATH}; allowed: GET, HEAD`);
    }
    return sendError(reply, 404, `no such endpoint: ${req.method} ${path} (this listener serves only GET ${METRICS_PATH}; the admin API is on its own address, docs/admin-api.md)`);
  });
  app.setErrorHandler((err: Error, _req, reply) => {
    reply.log.error({ err }, 'metrics scrape failed');
    return sendError(reply, 500, `cannot produce the metrics: ${err.message}`);
  });
  return app;
}
