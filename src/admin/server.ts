/**
 * Herald's admin HTTP API (fastify): health, status, peers, Adj-RIB-Out, Service decisions,
 * actions (reset, drain, undrain), Prometheus metrics and its own OpenAPI document.
 *
 * - Read endpoints are open; every mutating endpoint needs `Authorization: Bearer <token>`
 *   (token from `admin.tokenFile` or `HERALD_ADMIN_TOKEN`). Missing or wrong token → 401; no
 *   token configured at all → 401 too (mutations are then disabled), saying so.
 * - Errors are JSON everywhere: `{statusCode, error, message}`; bad body/query → 400 naming the
 *   field; unknown route or name → 404.
 * - The route table below is the single source for the fastify routes and /openapi.json.
 * docs/admin-api.md describes every endpoint.
 */
import { timingSafeEqual } from 'node:crypto';
import Fastify, { LogController } from 'fastify';
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { DaemonView } from './view.ts';
import { NotFoundError, refusedText } from './view.ts';
import * as S from './schemas.ts';
import { peerViewSchema } from './peer-view.ts';
import { lazySchemaController } from './lazy-compilers.ts';
import { addressBits, ipFamilyOf } from '../net/address.ts';
import { http } from '../net/node-http.ts';

/** One admin endpoint. */
export interface RouteDef {
  method: 'GET' | 'POST';
  url: string;
  summary: string;
  /** Needs the bearer token. */
  mutating?: boolean;
  params?: object;
  querystring?: object;
  body?: object;
  /** Response schemas by status code (error statuses are added automatically). */
  response: Record<number, object>;
  /** Plain-text response (metrics). */
  produces?: string;
  handler: (view: DaemonView, req: FastifyRequest, reply: FastifyReply) => Promise<unknown>;
}

type Params = Record<string, string> & { name: string };

/** The admin API, in documentation order. */
export const ROUTES: RouteDef[] = [
  {
    method: 'GET',
    url: '/healthz',
    summary: 'Liveness: 200 while the process is working.',
    response: { 200: S.healthSchema, 503: S.healthSchema },
    handler: async (view, _req, reply) => {
      const ok = view.live();
      reply.code(ok ? 200 : 503);
      return { ok };
    },
  },
  {
    method: 'GET',
    url: '/readyz',
    summary:
      'Readiness: 200 once the config is loaded and every source has synced; 503 with the reasons otherwise. A drained node stays ready (a DaemonSet rollout must not stall on it) and lists the drain among the reasons ("drained: ..."). Quarantined objects and refused input (manifest files, configuration objects) are listed, without affecting readiness.',
    response: { 200: S.healthSchema, 503: S.healthSchema },
    handler: async (view, _req, reply) => {
      const s = view.status();
      reply.code(s.ready ? 200 : 503);
      const quarantined = (s.quarantined ?? []).map((q) => `${q.kind} ${q.name}: ${q.reason}`);
      const refused = (s.refused ?? []).map(refusedText);
      return { ok: s.ready, reasons: [...s.notReady, ...s.drain.map((d) => `drained: ${d}`)], ...(quarantined.length > 0 ? { quarantined } : {}), ...(refused.length > 0 ? { refused } : {}) };
    },
  },
  {
    method: 'GET',
    url: '/api/v1/status',
    summary: 'Daemon summary: version, node, router id, readiness, drain state, peer and route counts, last reload.',
    response: { 200: S.statusSchema },
    handler: async (view) => view.status(),
  },
  {
    method: 'GET',
    url: '/api/v1/peers',
    summary: 'Every configured peer with session state, uptime, negotiated capabilities, last error and counters.',
    response: { 200: { type: 'array', items: peerViewSchema } },
    handler: async (view) => view.peers(),
  },
  {
    method: 'GET',
    url: '/api/v1/peers/:name',
    summary: 'One peer by name.',
    params: S.peerNameParams,
    response: { 200: peerViewSchema },
    handler: async (view, req) => {
      const { name } = req.params as Params;
      const p = view.peers().find((x) => x.name === name);
      if (!p) throw new NotFoundError(`no peer named "${name}"`);
      return p;
    },
  },
  {
    method: 'GET',
    url: '/api/v1/routes',
    summary: 'Adj-RIB-Out per peer with every attribute as sent; filter with ?peer= and ?prefix=.',
    querystring: S.routesQuery,
    response: { 200: { type: 'array', items: S.routeSchema } },
    handler: async (view, req) => {
      const q = req.query as { peer?: string; prefix?: string };
      if (q.prefix !== undefined) {
        const why = prefixFilterError(q.prefix);
        if (why !== undefined) throw new HttpError(400, why);
      }
      if (q.peer !== undefined && !view.peers().some((p) => p.name === q.peer)) throw new NotFoundError(`no peer named "${q.peer}"`);
      return view.routes({ ...(q.peer !== undefined ? { peer: q.peer } : {}), ...(q.prefix !== undefined ? { prefix: q.prefix } : {}) });
    },
  },
  {
    method: 'GET',
    url: '/api/v1/services',
    summary: 'Every Service VIP with whether it is announced from this node and the reason chain.',
    response: { 200: { type: 'array', items: S.serviceSchema } },
    handler: async (view) => view.services(),
  },
  {
    method: 'GET',
    url: '/api/v1/services/:namespace/:name',
    summary: 'One Service by namespace and name.',
    params: S.serviceParams,
    response: { 200: S.serviceSchema },
    handler: async (view, req) => {
      const { namespace, name } = req.params as Params & { namespace: string };
      const key = `${namespace}/${name}`;
      const s = view.services().find((x) => x.service === key);
      if (!s) throw new NotFoundError(`no Service ${key} known to this node`);
      return s;
    },
  },
  {
    method: 'GET',
    url: '/api/v1/health',
    summary: 'Every health check (static routes, kube-proxy, Service annotations): state, target, last failure.',
    response: { 200: { type: 'array', items: S.healthCheckSchema } },
    handler: async (view) => view.health(),
  },
  {
    method: 'POST',
    url: '/api/v1/peers/:name/reset',
    summary: 'Reset a session: hard (Cease/Administrative Reset, reconnect) or soft (re-send the Adj-RIB-Out).',
    mutating: true,
    params: S.peerNameParams,
    body: S.resetBodySchema,
    response: { 200: S.okSchema, 409: S.errorSchema },
    handler: async (view, req) => {
      const { name } = req.params as Params;
      const soft = (req.body as { soft?: boolean } | undefined)?.soft ?? false;
      if (soft) {
        const p = view.peers().find((x) => x.name === name);
        // A soft reset re-sends the Adj-RIB-Out over the session: without an Established session there is nothing to send on.
        if (p && p.state !== 'Established') throw new HttpError(409, `peer ${name} is ${p.state}, not Established: a soft reset needs an Established session (a hard reset reconnects)`);
      }
      await view.resetPeer(name, soft);
      return { ok: true, message: `${soft ? 'soft' : 'hard'} reset of ${name}` };
    },
  },
  {
    method: 'POST',
    url: '/api/v1/drain',
    summary:
      'Drain this node: recorded where it is kept (Kubernetes: the Node annotation herald.io/drain, whose value is the reason; standalone: stateDir), then graceful shutdown (RFC 8326): every route re-announced with GRACEFUL_SHUTDOWN, withdrawn after the wait time. Kept across restarts until undrain.',
    mutating: true,
    body: S.drainBodySchema,
    response: { 200: S.okSchema },
    handler: async (view, req) => {
      const reason = (req.body as { reason?: string } | undefined)?.reason;
      return { ok: true, message: await view.drain(reason !== undefined ? { reason } : {}) };
    },
  },
  {
    method: 'POST',
    url: '/api/v1/undrain',
    summary: "Undo the operator's drain (removes the annotation or the stateDir record): announce the desired routes normally again. A node leaving service stays drained.",
    mutating: true,
    body: S.emptyBodySchema,
    response: { 200: S.okSchema },
    handler: async (view) => ({ ok: true, message: await view.undrain() }),
  },
  {
    method: 'GET',
    url: '/metrics',
    summary: 'Prometheus metrics (text exposition format 0.0.4).',
    produces: 'text/plain; version=0.0.4',
    response: {},
    handler: async (view, _req, reply) => {
      const m = await view.metrics();
      reply.type(m.contentType);
      return m.body;
    },
  },
];

const STATUS_TEXT: Partial<Record<number, string>> = { 400: 'Bad Request', 401: 'Unauthorized', 404: 'Not Found', 405: 'Method Not Allowed', 409: 'Conflict', 413: 'Payload Too Large', 415: 'Unsupported Media Type', 500: 'Internal Server Error', 503: 'Service Unavailable' };

/** Request body size limit, bytes (→ 413 above it). */
const BODY_LIMIT_BYTES = 64 * 1024; // = bodyLimit in buildAdminServer

/** An error answered with its own HTTP status (4xx) and message. */
class HttpError extends Error {
  readonly statusCode: number;
  constructor(statusCode: number, message: string) {
    super(message);
    this.statusCode = statusCode;
  }
}

/**
 * Why a `?prefix=` filter is not usable, or undefined when it is: it must be an IPv4/IPv6 address
 * (routes containing it) or a CIDR prefix `address/length` with length 0–32 (IPv4) or 0–128 (IPv6).
 */
export function prefixFilterError(filter: string): string | undefined {
  const expected = 'expected an address (10.1.0.1, 2001:db8::1) or a CIDR prefix (10.1.0.0/24, 2001:db8::/48)';
  const parts = filter.split('/');
  if (parts.length > 2) return `invalid prefix filter "${filter}": more than one "/"; ${expected}`;
  const [addr = '', len] = parts;
  if (addr.includes('%')) return `invalid prefix filter "${filter}": "${addr}" has a zone id ("%..."), which no route has; ${expected}`;
  const family = ipFamilyOf(addr);
  if (family === undefined) return `invalid prefix filter "${filter}": "${addr}" is not an IP address; ${expected}`;
  if (len !== undefined) {
    const max = addressBits(family);
    if (!/^\d{1,3}$/.test(len) || Number(len) > max) return `invalid prefix filter "${filter}": length "${len}" is not an integer 0-${max}; ${expected}`;
  }
  return undefined;
}

function sendError(reply: FastifyReply, statusCode: number, message: string): FastifyReply {
  return reply.code(statusCode).type('application/json').send({ statusCode, error: STATUS_TEXT[statusCode] ?? http.STATUS_CODES[statusCode] ?? 'Error', message });
}

/** Methods served at a path (HEAD with GET, as fastify does), for 405 answers; empty for an unknown path. */
function allowedMethods(path: string): string[] {
  const out = new Set<string>();
  for (const r of [...ROUTES, { method: 'GET', url: '/openapi.json' }]) {
    const re = new RegExp(`^${r.url.replace(/:[A-Za-z]+/g, '[^/]+')}/?$`);
    if (re.test(path)) {
      out.add(r.method);
      if (r.method === 'GET') out.add('HEAD');
    }
  }
  return [...out];
}

/** Constant-time token comparison. */
function tokenMatches(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Options of {@link buildAdminServer}. */
export interface AdminServerOptions {
  view: DaemonView;
  /** Current bearer token for mutating endpoints, or undefined when none is configured. Read per request. */
  token: () => string | undefined;
  /** fastify logger instance (a pino Logger) or false. */
  logger?: false | FastifyBaseLogger;
}

/**
 * Build (not start) the admin server. Call `listen({host, port})` on the result, or `inject()` in tests.
 */
export async function buildAdminServer(opts: AdminServerOptions): Promise<FastifyInstance> {
  const base = {
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false, useDefaults: true, allErrors: true } },
    bodyLimit: BODY_LIMIT_BYTES,
    // Probes hit /healthz and /readyz every few seconds: no per-request log lines. (Through the log controller:
    // the top-level `disableRequestLogging` option is deprecated since fastify 5.x, warning FSTDEP023.)
    logController: new LogController({ disableRequestLogging: true }),
    // Each route's schemas are compiled on its first request: most routes of a daemon's API are never called.
    schemaController: lazySchemaController(),
  };
  const app: FastifyInstance = opts.logger ? Fastify({ ...base, loggerInstance: opts.logger }) : Fastify({ ...base, logger: false });

  // An empty POST body (no content-type, or JSON with nothing) means {}; anything else must be a JSON object. No other
  // content type is parsed (fastify's own text/plain parser is removed): it is answered 415 before its body is read.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
    const text = String(body).trim();
    if (text === '') return done(null, {});
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      done(new HttpError(400, `body is not valid JSON: ${(err as Error).message}`), undefined);
      return;
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      done(new HttpError(400, `body must be a JSON object (or empty), not ${value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value}`), undefined);
      return;
    }
    done(null, value);
  });

  app.addHook('preValidation', async (req) => {
    if (req.method === 'POST' && req.body === undefined) req.body = {};
  });

  app.setNotFoundHandler((req, reply) => {
    const path = req.url.split('?')[0] ?? '';
    const allow = allowedMethods(path);
    if (allow.length > 0) {
      reply.header('allow', allow.join(', '));
      return sendError(reply, 405, `method ${req.method} not allowed on ${path}; allowed: ${allow.join(', ')}`);
    }
    return sendError(reply, 404, `no such endpoint: ${req.method} ${path}`);
  });

  app.setErrorHandler((err: Error & { statusCode?: number; code?: string; validation?: unknown; validationContext?: string }, req, reply) => {
    if (err instanceof NotFoundError) return sendError(reply, 404, err.message);
    if (err.validation) return sendError(reply, 400, err.message);
    if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE' || err.statusCode === 413) return sendError(reply, 413, `request body too large: the limit is ${BODY_LIMIT_BYTES} bytes`);
    if (err.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE' || err.statusCode === 415) {
      return sendError(reply, 415, `content type ${JSON.stringify(req.headers['content-type'] ?? '')} is not accepted: send a JSON object with content-type application/json, or no body`);
    }
    const code = err.statusCode && err.statusCode >= 400 && err.statusCode < 600 ? err.statusCode : 500;
    if (code === 500) reply.log.error({ err }, 'admin request failed');
    return sendError(reply, code, err.message);
  });

  const checkToken = async (req: FastifyRequest, reply: FastifyReply) => {
    const expected = opts.token();
    if (expected === undefined || expected === '') {
      return sendError(reply, 401, 'mutating endpoints are disabled: no admin token configured (admin.tokenFile or HERALD_ADMIN_TOKEN)');
    }
    const h = req.headers.authorization;
    if (h === undefined) return sendError(reply, 401, 'missing bearer token (Authorization: Bearer <token>)');
    const m = /^Bearer\s+(.+)$/i.exec(h);
    if (!m || !tokenMatches((m[1] ?? '').trim(), expected)) return sendError(reply, 401, 'invalid bearer token');
  };

  for (const r of ROUTES) {
    const response: Record<number, object> = { ...r.response };
    if (r.produces === undefined) {
      for (const code of [400, 404, 500]) response[code] ??= S.errorSchema;
      if (r.mutating) response[401] ??= S.errorSchema;
      if (r.body) for (const code of [413, 415]) response[code] ??= S.errorSchema;
    }
    app.route({
      method: r.method,
      url: r.url,
      schema: {
        ...(r.params ? { params: r.params } : {}),
        ...(r.querystring ? { querystring: r.querystring } : {}),
        ...(r.body ? { body: r.body } : {}),
        ...(r.produces === undefined ? { response } : {}),
      },
      // The token is checked first thing, before the body is read or parsed: a caller without it learns nothing
      // about what a body would have done (onRequest runs before content-type parsing, fastify's lifecycle).
      ...(r.mutating ? { onRequest: checkToken } : {}),
      handler: (req, reply) => r.handler(opts.view, req, reply),
    });
  }

  app.get('/openapi.json', async () => openApiDocument());
  return app;
}

function toOpenApiPath(url: string): string {
  return url.replace(/:([A-Za-z]+)/g, '{$1}');
}

/** OpenAPI 3.1 document generated from {@link ROUTES}. */
export function openApiDocument(): object {
  const paths: Record<string, Record<string, object>> = {};
  for (const r of ROUTES) {
    const parameters: object[] = [];
    const params = r.params as { properties?: Record<string, object> } | undefined;
    for (const [name, schema] of Object.entries(params?.properties ?? {})) parameters.push({ name, in: 'path', required: true, schema });
    const query = r.querystring as { properties?: Record<string, { description?: string }> } | undefined;
    for (const [name, schema] of Object.entries(query?.properties ?? {})) parameters.push({ name, in: 'query', required: false, schema, ...(schema.description ? { description: schema.description } : {}) });
    const responses: Record<string, object> = {};
    if (r.produces !== undefined) responses['200'] = { description: 'OK', content: { [r.produces]: { schema: { type: 'string' } } } };
    for (const [code, schema] of Object.entries(r.response)) responses[code] = { description: code === '200' ? 'OK' : (STATUS_TEXT[Number(code)] ?? 'Error'), content: { 'application/json': { schema } } };
    if (r.produces === undefined) {
      const errs = [...(r.body || r.querystring ? [400] : []), ...(r.mutating ? [401] : []), ...(r.params || r.querystring ? [404] : []), ...(r.body ? [413, 415] : [])];
      for (const code of errs) responses[String(code)] ??= { description: STATUS_TEXT[code], content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } };
    }
    const op: Record<string, unknown> = {
      summary: r.summary,
      operationId: `${r.method.toLowerCase()}${r.url.replace(/[/:{}]+(.)?/g, (_m, c: string | undefined) => (c ? c.toUpperCase() : ''))}`,
      ...(parameters.length ? { parameters } : {}),
      ...(r.body ? { requestBody: { required: false, content: { 'application/json': { schema: r.body } } } } : {}),
      responses,
      ...(r.mutating ? { security: [{ bearer: [] }] } : {}),
    };
    (paths[toOpenApiPath(r.url)] ??= {})[r.method.toLowerCase()] = op;
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Herald admin API', version: '1', description: 'Read endpoints are open; mutating endpoints need a bearer token.' },
    paths,
    components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } }, schemas: { Error: S.errorSchema } },
  };
}
