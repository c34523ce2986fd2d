/**
 * Herald's Kubernetes API client: where the apiserver is and how to authenticate (a kubeconfig file, `KUBECONFIG`, or
 * the in-cluster service account, in that order: docs/decisions.md "Kubeconfig precedence"), and JSON requests and
 * watch streams over node:http / node:https with one keep-alive agent.
 *
 * Why not @kubernetes/client-node's typed API: importing it (its `KubeConfig` included) loads every generated model
 * and API, +64–70 MiB of RSS and 1.7–2.6 s of CPU per process against +13 MiB and 0.15–0.4 s for this client
 * (docs/benchmarks.md "Kubernetes client"), most of a DaemonSet's memory budget. Herald needs five calls and a
 * list/watch. client-node is still what reads the credentials
 * this module does not read itself (`exec` plugins, `auth-provider`, `proxy-url`): for those kubeconfigs it is loaded
 * on first use and sets up each request (`KubeConfig.applyToHTTPSOptions`). The container image leaves it out
 * (docs/decisions.md "The image leaves @kubernetes/client-node out"): there such a kubeconfig is refused at start.
 *
 * As client-go gives operators: a User-Agent naming Herald, its version and its role (`herald/0.1.0 (speaker)`), a
 * client-side limit of requests a second (rate-limit.ts), 429 and 5xx answers with `Retry-After` waited out and sent
 * again (up to {@link MAX_RETRIES} times, client-go rest `checkWait`), and TCP keepalive on every connection so that a
 * watch on a dead connection (a partitioned node, an apiserver host gone) ends within about a minute
 * ({@link TCP_KEEPALIVE}), with no client-side inactivity timer shorter than the watch's server-side timeout.
 *
 * Sources: kubeconfig format (k8s.io/client-go/tools/clientcmd/api/v1 types.go: relative paths are relative to the
 * file; several KUBECONFIG files merge, the first to set a value wins); in-cluster configuration (client-go rest
 * InClusterConfig: KUBERNETES_SERVICE_HOST/PORT, the service account's token and ca.crt; the token file is re-read,
 * as bound tokens rotate); API conventions (a failed call answers a `Status` object).
 */
import type { Agent, IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import type { AgentOptions, RequestOptions as HttpsRequestOptions } from 'node:https';
import { dirname, isAbsolute, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { readFailure, readSmallBytesSync, readTextFile, SECRET_FILE_MAX_BYTES, SECRET_FILE_TIMEOUT_MS } from '../files/read.ts';
import { http, https } from '../net/node-http.ts';
import type { ClientRole, RateLimit } from './rate-limit.ts';
import { DEFAULT_LIMITS, TokenBucket } from './rate-limit.ts';

export type { ClientRole, RateLimit } from './rate-limit.ts';

/** Where the configuration came from. */
export type KubeConfigOrigin = 'config' | 'env' | 'in-cluster';

const SA_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';
/** How long a token read from a file is used before the file is read again (client-go: one minute). */
const TOKEN_FILE_TTL_MS = 60_000;
/** Largest kubeconfig file read, bytes (kubectl's own are a few KiB; inline `-data` certificates add a few more). */
export const KUBECONFIG_MAX_BYTES = 1024 * 1024;
/**
 * Largest certificate-authority file read, bytes: a bundle of public roots (Debian's ca-certificates.crt) is about
 * 220 KiB. A client certificate, a client key, a token and the ServiceAccount namespace: SECRET_FILE_MAX_BYTES (64 KiB).
 */
export const CA_FILE_MAX_BYTES = 1024 * 1024;
/** What to do about a credential file Herald refused (a FIFO, a device, too big, missing). */
const CREDENTIAL_FIX = 'point it at the regular file the kubeconfig or the ServiceAccount mount provides';

/**
 * Reads one of the client's files at start (a kubeconfig, a certificate, a key, a ServiceAccount file) through the one
 * bounded reader (src/files/read.ts): a FIFO or device is refused at once, never read.
 * @param what the file's role in words, e.g. "client-key"
 * @throws Error naming `what`, the file, the problem and the fix
 */
function readStartFile(what: string, file: string, maxBytes: number): Buffer {
  try {
    return readSmallBytesSync(file, { maxBytes });
  } catch (e) {
    throw new Error(`${what} ${file}: ${readFailure(e)}; ${CREDENTIAL_FIX}`, { cause: e });
  }
}

/**
 * Herald's own namespace: where its Lease, its Secrets and its objects (herald.io) live. `POD_NAMESPACE` (downward
 * API), else the in-cluster ServiceAccount namespace file, else `herald-system`.
 */
export function heraldNamespace(env: NodeJS.ProcessEnv = process.env): string {
  if (env['POD_NAMESPACE']) return env['POD_NAMESPACE'];
  try {
    const ns = readSmallBytesSync(`${SA_DIR}/namespace`, { maxBytes: SECRET_FILE_MAX_BYTES }).toString('utf8').trim();
    if (ns) return ns;
  } catch {
    // not in a cluster
  }
  return 'herald-system';
}

/** Where and how to reach the apiserver. File paths are absolute. */
export interface KubeConnection {
  /** Base URL, e.g. "https://10.96.0.1:443" (no trailing slash). */
  readonly server: string;
  /** PEM of the CAs that sign the apiserver's certificate (default: Node's bundled roots). */
  readonly ca?: Buffer;
  readonly cert?: Buffer;
  readonly key?: Buffer;
  readonly insecureSkipTlsVerify?: boolean;
  readonly tlsServerName?: string;
  readonly token?: string;
  /** Bearer token read from this file (re-read every minute). */
  readonly tokenFile?: string;
  readonly basic?: { readonly username: string; readonly password: string };
  /**
   * Credentials only @kubernetes/client-node reads (exec, auth-provider, proxy-url): the kubeconfig files (merged in
   * this order) it loads to set up each request.
   */
  readonly delegate?: readonly string[];
}

/** An answer other than 2xx from the apiserver: `code` is the HTTP status, `body` the `Status` object (or the text). */
export class ApiError extends Error {
  readonly code: number;
  readonly body: unknown;
  constructor(what: string, code: number, body: unknown) {
    const message = typeof body === 'object' && body !== null && typeof (body as { message?: unknown }).message === 'string' ? (body as { message: string }).message : String(body || http.STATUS_CODES[code] || '');
    super(`${what}: HTTP ${code}: ${message}`);
    this.name = 'ApiError';
    this.code = code;
    this.body = body;
  }
}

/**
 * TCP keepalive of every connection to the apiserver: the first probe after 30 s without a packet, then every 10 s,
 * and the connection is reset after 3 unanswered probes, so a watch on a dead connection fails within ~60 s (client-go
 * dials with a 30 s keepalive and pings its HTTP/2 connections; over HTTP/1.1 the kernel's probes do it).
 */
export const TCP_KEEPALIVE = Object.freeze({ idleMs: 30_000, intervalMs: 10_000, count: 3 });

/** How many times a request answered 429 (or 5xx) with `Retry-After` is sent again (client-go rest: 10). */
export const MAX_RETRIES = 10;

/** The longest `Retry-After` honoured, seconds: a larger value is waited this long. */
export const MAX_RETRY_AFTER_SEC = 300;

/** What a client reports of its requests (metrics: docs/metrics.md `herald_kubernetes_requests_total`). */
export interface RequestObserver {
  /**
   * One answer, or a failure before one: `verb` as audit logs name it (get, list, watch, create, update, patch, delete),
   * `resource` the plural with its subresource ("bgpnodestatuses/status"), `code` the HTTP status or "error".
   */
  readonly onResponse?: (verb: string, resource: string, code: string) => void;
  /**
   * The token file could not be read again (refused by src/files/read.ts: a FIFO, a device, too big, gone): `reason`
   * names the file and the problem. The last token read keeps being sent until the file reads again (tried once a
   * minute, so reported at most once a minute).
   */
  readonly onTokenFileError?: (reason: string) => void;
  /** A request waited `waitMs` for the client-side limit. */
  readonly onThrottled?: (waitMs: number) => void;
  /** The apiserver answered 429 or 5xx with `Retry-After`: the request goes again after `waitMs`. */
  readonly onRetryAfter?: (waitMs: number) => void;
}

/** Options of {@link KubeClient} (besides where the apiserver is). */
export interface KubeClientOptions {
  /** The component (User-Agent, default limits); default 'speaker'. */
  readonly role?: ClientRole;
  /** Herald's version for the User-Agent (default "unknown"). */
  readonly version?: string;
  /** Requests a second and burst (default: the role's, rate-limit.ts `DEFAULT_LIMITS`); qps 0: no limit. */
  readonly limit?: Partial<RateLimit>;
  readonly observer?: RequestObserver;
}

/** The User-Agent of Herald's requests: `herald/<version> (<role>)`. */
export function heraldUserAgent(version: string, role: ClientRole): string {
  return `herald/${version} (${role})`;
}

/** A request made after {@link KubeClient.close} (the daemon is stopping): it never reached the apiserver. */
export class KubeClientClosedError extends Error {
  constructor(what: string) {
    super(`${what}: not sent, the Kubernetes client is closed (Herald is stopping)`);
    this.name = 'KubeClientClosedError';
  }
}

/** A request that took longer than its timeout, or a watch that stayed silent that long. */
export class ApiTimeoutError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TimeoutError';
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Loading
// ---------------------------------------------------------------------------------------------------------------

type Doc = Record<string, unknown>;
const isDoc = (v: unknown): v is Doc => typeof v === 'object' && v !== null && !Array.isArray(v);

function namedEntries(doc: Doc, list: string, field: string, file: string): Map<string, { value: Doc; file: string }> {
  const out = new Map<string, { value: Doc; file: string }>();
  const items = doc[list];
  if (items === undefined || items === null) return out;
  if (!Array.isArray(items)) throw new Error(`${list} must be a list`);
  for (const item of items) {
    if (!isDoc(item) || typeof item['name'] !== 'string') throw new Error(`every entry of ${list} needs a name`);
    const value = item[field];
    if (!out.has(item['name'])) out.set(item['name'], { value: isDoc(value) ? value : {}, file });
  }
  return out;
}

function text(d: Doc, k: string): string | undefined {
  const v = d[k];
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/**
 * Reads a kubeconfig's `X` or `X-data` (base64) field; a path is relative to the kubeconfig's directory.
 * @throws Error naming the field and the file when the file is refused (src/files/read.ts)
 */
function fileOrData(d: Doc, field: string, baseFile: string, maxBytes: number): Buffer | undefined {
  const data = text(d, `${field}-data`);
  if (data !== undefined) return Buffer.from(data, 'base64');
  const path = text(d, field);
  return path === undefined ? undefined : readStartFile(field, isAbsolute(path) ? path : resolve(dirname(baseFile), path), maxBytes);
}

/**
 * Whether @kubernetes/client-node can be loaded: the workstation install has it, the container image leaves it out
 * (docs/decisions.md "The image leaves @kubernetes/client-node out"). Resolves the name only; loads nothing.
 */
function clientNodeInstalled(): boolean {
  try {
    import.meta.resolve('@kubernetes/client-node');
    return true;
  } catch {
    return false;
  }
}

/** The connection described by the current context of the kubeconfig files (merged in order: the first wins). */
function fromKubeconfigFiles(files: readonly string[]): KubeConnection {
  const clusters = new Map<string, { value: Doc; file: string }>();
  const users = new Map<string, { value: Doc; file: string }>();
  const contexts = new Map<string, { value: Doc; file: string }>();
  let current: string | undefined;
  for (const file of files) {
    const doc: unknown = parseYaml(readStartFile('kubeconfig', file, KUBECONFIG_MAX_BYTES).toString('utf8'));
    if (!isDoc(doc)) throw new Error('not a kubeconfig (expected a mapping with clusters, users, contexts)');
    for (const [k, v] of namedEntries(doc, 'clusters', 'cluster', file)) if (!clusters.has(k)) clusters.set(k, v);
    for (const [k, v] of namedEntries(doc, 'users', 'user', file)) if (!users.has(k)) users.set(k, v);
    for (const [k, v] of namedEntries(doc, 'contexts', 'context', file)) if (!contexts.has(k)) contexts.set(k, v);
    current ??= text(doc, 'current-context');
  }
  if (current === undefined) throw new Error('no current-context');
  const context = contexts.get(current)?.value;
  if (context === undefined) throw new Error(`current-context "${current}" is not among the contexts`);
  const clusterName = text(context, 'cluster') ?? '';
  const cluster = clusters.get(clusterName);
  if (cluster === undefined) throw new Error(`context "${current}" names cluster "${clusterName}", which is not among the clusters`);
  const userName = text(context, 'user');
  const user = userName !== undefined ? users.get(userName) : undefined;
  if (userName !== undefined && user === undefined) throw new Error(`context "${current}" names user "${userName}", which is not among the users`);
  const server = text(cluster.value, 'server');
  if (server === undefined) throw new Error(`cluster "${clusterName}" has no server`);
  const u = user?.value ?? {};
  const needs = [...(u['exec'] !== undefined ? [`user "${userName}" has an exec credential plugin`] : []), ...(u['auth-provider'] !== undefined ? [`user "${userName}" has an auth-provider`] : []), ...(cluster.value['proxy-url'] !== undefined ? [`cluster "${clusterName}" has a proxy-url`] : [])];
  const delegate = needs.length > 0;
  if (delegate && !clientNodeInstalled()) {
    throw new Error(
      `${needs.join(' and ')}, which Herald reads only through @kubernetes/client-node, and this installation leaves it out (the container image does: docs/decisions.md "The image leaves @kubernetes/client-node out"); in a pod use the in-cluster ServiceAccount (no kubeconfig), else a kubeconfig with a token, tokenFile or client certificate`,
    );
  }
  const tokenFile = text(u, 'tokenFile');
  const username = text(u, 'username');
  const token = text(u, 'token');
  const tlsServerName = text(cluster.value, 'tls-server-name');
  const ca = fileOrData(cluster.value, 'certificate-authority', cluster.file, CA_FILE_MAX_BYTES);
  const cert = user ? fileOrData(u, 'client-certificate', user.file, SECRET_FILE_MAX_BYTES) : undefined;
  const key = user ? fileOrData(u, 'client-key', user.file, SECRET_FILE_MAX_BYTES) : undefined;
  return {
    server: server.replace(/\/+$/, ''),
    ...(ca !== undefined ? { ca } : {}),
    ...(cert !== undefined ? { cert } : {}),
    ...(key !== undefined ? { key } : {}),
    ...(cluster.value['insecure-skip-tls-verify'] === true ? { insecureSkipTlsVerify: true } : {}),
    ...(tlsServerName !== undefined ? { tlsServerName } : {}),
    ...(token !== undefined ? { token } : {}),
    ...(tokenFile !== undefined && user ? { tokenFile: isAbsolute(tokenFile) ? tokenFile : resolve(dirname(user.file), tokenFile) } : {}),
    ...(username !== undefined ? { basic: { username, password: text(u, 'password') ?? '' } } : {}),
    ...(delegate ? { delegate: [...files] } : {}),
  };
}

/**
 * The apiserver connection with Herald's precedence: `source.kubernetes.kubeconfig` (a file path) > `KUBECONFIG`
 * (several files separated by ':' merge, as kubectl merges them) > the in-cluster service account.
 * @param kubeconfigPath `source.kubernetes.kubeconfig` from Herald's config, if any
 * @param env environment (default `process.env`)
 * @param options the client's role, version, limit and observer
 * @throws Error naming the file and the problem when a kubeconfig cannot be read or has no usable current context,
 *   or when no kubeconfig is given and the process is not in a cluster (KUBERNETES_SERVICE_HOST/PORT unset)
 */
export function loadKubeConfig(kubeconfigPath?: string, env: NodeJS.ProcessEnv = process.env, options: KubeClientOptions = {}): { kc: KubeClient; origin: KubeConfigOrigin } {
  if (kubeconfigPath) {
    try {
      return { kc: new KubeClient(fromKubeconfigFiles([kubeconfigPath]), options), origin: 'config' };
    } catch (e) {
      throw new Error(`cannot load kubeconfig ${kubeconfigPath}: ${(e as Error).message}`, { cause: e });
    }
  }
  if (env['KUBECONFIG']) {
    const files = env['KUBECONFIG'].split(':').filter(Boolean);
    try {
      return { kc: new KubeClient(fromKubeconfigFiles(files), options), origin: 'env' };
    } catch (e) {
      throw new Error(`cannot load kubeconfig from KUBECONFIG=${env['KUBECONFIG']}: ${(e as Error).message}`, { cause: e });
    }
  }
  const host = env['KUBERNETES_SERVICE_HOST'];
  const port = env['KUBERNETES_SERVICE_PORT'];
  if (!host || !port) {
    throw new Error('no kubeconfig: set source.kubernetes.kubeconfig or KUBECONFIG, or run in a cluster (KUBERNETES_SERVICE_HOST/PORT unset)');
  }
  let ca: Buffer | undefined;
  try {
    ca = readStartFile('the ServiceAccount CA', `${SA_DIR}/ca.crt`, CA_FILE_MAX_BYTES);
  } catch (e) {
    // No file: verified against Node's bundled roots then (an apiserver with a public certificate). A file that is
    // there but refused (a FIFO, a device, too big) is an error: it is not read, and not silently replaced either.
    if ((e instanceof Error ? (e.cause as NodeJS.ErrnoException | undefined)?.code : undefined) !== 'ENOENT') throw e;
  }
  return { kc: new KubeClient({ server: `https://${host.includes(':') ? `[${host}]` : host}:${port}`, tokenFile: `${SA_DIR}/token`, ...(ca ? { ca } : {}) }, options), origin: 'in-cluster' };
}

// ---------------------------------------------------------------------------------------------------------------
// Requests
// ---------------------------------------------------------------------------------------------------------------

/** Options of one request. */
export interface RequestOptions {
  /** Query parameters (undefined values are left out). */
  readonly query?: Readonly<Record<string, string | number | boolean | undefined>>;
  /** JSON body. */
  readonly body?: unknown;
  /** Content-Type of the body (default application/json; merge patches: application/merge-patch+json). */
  readonly contentType?: string;
  /** Give up after this many ms (default 60,000). */
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
}

/** Options of one watch stream. */
export interface WatchOptions {
  readonly query?: Readonly<Record<string, string | number | boolean | undefined>>;
  /**
   * Abort the stream after this many ms without a byte: a hung apiserver or network. Longer than the watch's
   * server-side `timeoutSeconds` (the informer's default: that timeout plus 30 s), so a quiet watch is never torn down
   * by the client; a dead connection is found earlier by TCP keepalive.
   */
  readonly inactivityMs: number;
  readonly signal?: AbortSignal;
  /** Called once the apiserver answered 200 (the stream is open). */
  readonly onOpen?: () => void;
}

/** What a delegated request needs from @kubernetes/client-node (its `KubeConfig`). */
interface Delegate {
  applyToHTTPSOptions(opts: HttpsRequestOptions): Promise<void>;
}

/**
 * The verb and resource of a request as audit logs and APF name them: GET of a collection is `list` (`watch` with
 * `?watch=true`), of one object `get`; the resource is the plural, with its subresource ("pods/proxy").
 */
export function requestKind(method: string, path: string, watch: boolean): { verb: string; resource: string } {
  const parts = path.split('?')[0]!.split('/').filter(Boolean);
  let rest = parts[0] === 'api' ? parts.slice(2) : parts[0] === 'apis' ? parts.slice(3) : parts;
  if (rest[0] === 'namespaces' && rest.length >= 3) rest = rest.slice(2);
  const [plural = '', name, sub] = rest;
  const verbs: Record<string, string> = { POST: 'create', PUT: 'update', PATCH: 'patch', DELETE: 'delete' };
  const verb = method === 'GET' ? (watch ? 'watch' : name === undefined ? 'list' : 'get') : (verbs[method] ?? method.toLowerCase());
  return { verb, resource: sub !== undefined ? `${plural}/${sub}` : plural };
}

/**
 * The wait an answer asks for: 429 or 5xx with `Retry-After` in whole seconds (client-go rest `checkWait`; an HTTP
 * date is not read), capped at {@link MAX_RETRY_AFTER_SEC}.
 * @returns ms to wait, or undefined when the answer asks for none
 */
export function retryAfterMs(code: number, retryAfter: string | string[] | undefined): number | undefined {
  if (code !== 429 && code < 500) return undefined;
  const text = Array.isArray(retryAfter) ? retryAfter[0] : retryAfter;
  if (text === undefined || !/^\s*\d+\s*$/.test(text)) return undefined;
  return Math.min(Number(text), MAX_RETRY_AFTER_SEC) * 1000;
}

/** Requests and watches against one apiserver. See the module comment. */
export class KubeClient {
  readonly connection: KubeConnection;
  /** `herald/<version> (<role>)`, sent with every request. */
  readonly userAgent: string;
  readonly #url: URL;
  readonly #agent: Agent;
  readonly #bucket: TokenBucket;
  readonly #observer: RequestObserver;
  #token: { value: string; readAtMs: number } | undefined;
  #delegate: Promise<Delegate> | undefined;
  /** Aborted by close(): ends the waits (client-side limit, `Retry-After`) of the requests under way. */
  readonly #closing = new AbortController();

  constructor(connection: KubeConnection, options: KubeClientOptions = {}) {
    this.connection = connection;
    this.#url = new URL(connection.server);
    if (this.#url.protocol !== 'https:' && this.#url.protocol !== 'http:') throw new Error(`server ${connection.server}: only https:// (or http://) URLs are supported`);
    const role = options.role ?? 'speaker';
    this.userAgent = heraldUserAgent(options.version ?? 'unknown', role);
    this.#bucket = new TokenBucket({ ...DEFAULT_LIMITS[role], ...options.limit }, Date.now());
    this.#observer = options.observer ?? {};
    const tls: AgentOptions = {
      keepAlive: true,
      keepAliveMsecs: TCP_KEEPALIVE.idleMs,
      ...(connection.ca ? { ca: connection.ca } : {}),
      ...(connection.cert ? { cert: connection.cert } : {}),
      ...(connection.key ? { key: connection.key } : {}),
      ...(connection.insecureSkipTlsVerify ? { rejectUnauthorized: false } : {}),
      ...(connection.tlsServerName ? { servername: connection.tlsServerName } : {}),
    };
    this.#agent = this.#url.protocol === 'https:' ? new https.Agent(tls) : new http.Agent({ keepAlive: true, keepAliveMsecs: TCP_KEEPALIVE.idleMs });
  }

  /**
   * One JSON request (waiting for the client-side limit first, and again after a `Retry-After`).
   * @param path absolute API path, e.g. "/api/v1/namespaces/default/events"
   * @returns the parsed JSON answer (undefined for an empty body)
   * @throws ApiError for a non-2xx answer (with the apiserver's Status), ApiTimeoutError, or the transport's error
   */
  async request(method: string, path: string, o: RequestOptions = {}): Promise<unknown> {
    const what = `${method} ${path}`;
    const body = o.body === undefined ? undefined : JSON.stringify(o.body);
    const headers: OutgoingHttpHeaders = { Accept: 'application/json', ...(body !== undefined ? { 'Content-Type': o.contentType ?? 'application/json', 'Content-Length': Buffer.byteLength(body) } : {}) };
    const timeoutMs = o.timeoutMs ?? 60_000;
    const target = this.#target(path, o.query);
    const kind = requestKind(method, path, false);
    for (let attempt = 0; ; attempt++) {
      let res: IncomingMessage;
      let textBody: string;
      try {
        res = await this.#send(method, target, headers, body, timeoutMs, o.signal);
        textBody = await readBody(res, timeoutMs, what);
      } catch (e) {
        this.#observer.onResponse?.(kind.verb, kind.resource, 'error');
        throw e;
      }
      const code = res.statusCode ?? 0;
      this.#observer.onResponse?.(kind.verb, kind.resource, String(code));
      const wait = attempt < MAX_RETRIES ? retryAfterMs(code, res.headers['retry-after']) : undefined;
      if (wait !== undefined) {
        this.#observer.onRetryAfter?.(wait);
        await sleep(wait, this.#orClosing(o.signal));
        continue;
      }
      const parsed = parseJson(textBody);
      if (code < 200 || code > 299) throw new ApiError(what, code, parsed);
      return textBody === '' ? undefined : parsed;
    }
  }

  /**
   * A watch stream: `onEvent(type, object)` for every event line, in order. Resolves when the apiserver ends the
   * stream (its `timeoutSeconds`, or a restart).
   * @throws ApiError when the watch is refused (with the Status), ApiTimeoutError after `inactivityMs` of silence,
   *   the transport's error, or an AbortError when `signal` aborts
   */
  async watch(path: string, o: WatchOptions, onEvent: (type: string, object: unknown) => void): Promise<void> {
    const what = `watch ${path}`;
    const kind = requestKind('GET', path, true);
    let res: IncomingMessage;
    for (let attempt = 0; ; attempt++) {
      try {
        res = await this.#send('GET', this.#target(path, { ...o.query, watch: true }), { Accept: 'application/json' }, undefined, o.inactivityMs, o.signal);
      } catch (e) {
        this.#observer.onResponse?.(kind.verb, kind.resource, 'error');
        throw e;
      }
      const code = res.statusCode ?? 0;
      this.#observer.onResponse?.(kind.verb, kind.resource, String(code));
      if (code === 200) break;
      const text = await readBody(res, o.inactivityMs, what);
      const wait = attempt < MAX_RETRIES ? retryAfterMs(code, res.headers['retry-after']) : undefined;
      if (wait === undefined) throw new ApiError(what, code, parseJson(text));
      this.#observer.onRetryAfter?.(wait);
      await sleep(wait, this.#orClosing(o.signal));
    }
    o.onOpen?.();
    res.setEncoding('utf8');
    const stream = res;
    await new Promise<void>((resolveStream, reject) => {
      let pending = '';
      const timer = setTimeout(() => stream.destroy(new ApiTimeoutError(`${what}: no data for ${o.inactivityMs} ms`)), o.inactivityMs);
      const onAbort = () => stream.destroy(abortError());
      o.signal?.addEventListener('abort', onAbort, { once: true });
      const finish = (err?: unknown) => {
        clearTimeout(timer);
        o.signal?.removeEventListener('abort', onAbort);
        if (err === undefined) resolveStream();
        else reject(err);
      };
      stream.on('data', (chunk: string) => {
        timer.refresh();
        pending += chunk;
        let nl = pending.indexOf('\n');
        if (nl < 0) return;
        let start = 0;
        while (nl >= 0) {
          const line = pending.slice(start, nl);
          start = nl + 1;
          nl = pending.indexOf('\n', start);
          if (line.trim() === '') continue;
          const ev = parseJson(line) as { type?: unknown; object?: unknown };
          if (!isDoc(ev) || typeof ev.type !== 'string') {
            stream.destroy(new Error(`${what}: not a watch event: ${line.slice(0, 200)}`));
            return;
          }
          try {
            onEvent(ev.type, ev.object);
          } catch (e) {
            stream.destroy(e as Error);
            return;
          }
        }
        pending = pending.slice(start);
      });
      stream.on('end', () => finish());
      stream.on('error', (e) => finish(e));
      stream.on('close', () => {
        if (!stream.complete) finish(stream.errored ?? new Error(`${what}: connection closed`));
      });
    });
  }

  /**
   * Ends every connection, idle or in use: a request still waiting for the apiserver, for the client-side limit or
   * out a `Retry-After` fails at once (with the transport's error or an AbortError), and every later request throws {@link KubeClientClosedError} without connecting. A stopping
   * daemon calls it last, so an apiserver that does not answer never holds its exit (src/daemon/run.ts).
   */
  close(): void {
    this.#closing.abort();
    this.#agent.destroy();
  }

  /** `signal`, or the client closing, whichever aborts first. */
  #orClosing(signal: AbortSignal | undefined): AbortSignal {
    return signal === undefined ? this.#closing.signal : AbortSignal.any([signal, this.#closing.signal]);
  }

  #target(path: string, query: RequestOptions['query']): string {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) q.set(k, String(v));
    const base = this.#url.pathname.replace(/\/+$/, '');
    const qs = q.toString();
    return `${base}${path}${qs ? `?${qs}` : ''}`;
  }

  /**
   * The bearer token: inline, or from its file (read again after a minute, off the main thread, through the bounded
   * reader src/files/read.ts). A file that cannot be read again keeps the last token read (it may still be valid: a
   * projected token lives an hour), is reported to the observer and is tried again a minute later.
   * @throws Error naming the file and the fix when the file has never been read (no token to send)
   */
  async #bearer(): Promise<string | undefined> {
    const c = this.connection;
    if (c.token !== undefined) return c.token;
    if (c.tokenFile === undefined) return undefined;
    const now = Date.now();
    if (this.#token === undefined || now - this.#token.readAtMs > TOKEN_FILE_TTL_MS) {
      try {
        const value = (await readTextFile(c.tokenFile, { maxBytes: SECRET_FILE_MAX_BYTES, timeoutMs: SECRET_FILE_TIMEOUT_MS })).trim();
        this.#token = { value, readAtMs: now };
      } catch (e) {
        const reason = `tokenFile ${c.tokenFile}: ${readFailure(e)}; ${CREDENTIAL_FIX}`;
        if (this.#token === undefined) throw new Error(reason, { cause: e });
        this.#token = { value: this.#token.value, readAtMs: now }; // tried again in a minute, reported once a minute
        this.#observer.onTokenFileError?.(reason);
      }
    }
    return this.#token.value;
  }

  /** Waits for a token of the client-side limit (given back when the wait is aborted). */
  async #throttle(signal: AbortSignal | undefined): Promise<void> {
    const wait = this.#bucket.reserve(Date.now());
    if (wait <= 0) return;
    this.#observer.onThrottled?.(wait);
    try {
      await sleep(wait, this.#orClosing(signal));
    } catch (e) {
      this.#bucket.cancel();
      throw e;
    }
  }

  async #send(method: string, target: string, headers: OutgoingHttpHeaders, body: string | undefined, timeoutMs: number, signal: AbortSignal | undefined): Promise<IncomingMessage> {
    if (signal?.aborted) throw abortError();
    await this.#throttle(signal);
    if (this.#closing.signal.aborted) throw new KubeClientClosedError(`${method} ${target.split('?')[0]}`);
    const opts: HttpsRequestOptions = { method, protocol: this.#url.protocol, hostname: this.#url.hostname.replace(/^\[|\]$/g, ''), port: this.#url.port || (this.#url.protocol === 'https:' ? 443 : 80), path: target, headers: { ...headers, 'User-Agent': this.userAgent }, agent: this.#agent };
    if (this.connection.delegate) {
      await (await this.#delegated()).applyToHTTPSOptions(opts);
    } else {
      const token = await this.#bearer();
      if (token !== undefined) (opts.headers as OutgoingHttpHeaders)['Authorization'] = `Bearer ${token}`;
      else if (this.connection.basic) opts.auth = `${this.connection.basic.username}:${this.connection.basic.password}`;
    }
    const lib = this.#url.protocol === 'https:' ? https : http;
    return new Promise<IncomingMessage>((resolveRes, reject) => {
      const req = lib.request(opts, (res) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        resolveRes(res);
      });
      req.on('socket', (s) => s.setKeepAlive(true, TCP_KEEPALIVE.idleMs, TCP_KEEPALIVE.intervalMs, TCP_KEEPALIVE.count));
      const timer = setTimeout(() => req.destroy(new ApiTimeoutError(`${method} ${target.split('?')[0]} timed out after ${timeoutMs} ms`)), timeoutMs);
      const onAbort = () => req.destroy(abortError());
      signal?.addEventListener('abort', onAbort, { once: true });
      req.on('error', (e) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        reject(e);
      });
      req.end(body);
    });
  }

  /** client-node's KubeConfig for the credentials only it reads, loaded on first use. */
  #delegated(): Promise<Delegate> {
    this.#delegate ??= import('@kubernetes/client-node').then(({ KubeConfig }) => {
      const [first = '', ...rest] = this.connection.delegate ?? [];
      const kc = new KubeConfig();
      kc.loadFromFile(first);
      for (const file of rest) {
        const more = new KubeConfig();
        more.loadFromFile(file);
        kc.mergeConfig(more, true);
      }
      return kc;
    });
    return this.#delegate;
  }
}

/** The whole body of an answer as text; fails after `timeoutMs`. */
async function readBody(res: IncomingMessage, timeoutMs: number, what: string): Promise<string> {
  const chunks: Buffer[] = [];
  await new Promise<void>((resolveBody, reject) => {
    const timer = setTimeout(() => res.destroy(new ApiTimeoutError(`${what} timed out after ${timeoutMs} ms`)), timeoutMs);
    res.on('data', (c: Buffer) => chunks.push(c));
    res.on('end', () => {
      clearTimeout(timer);
      resolveBody();
    });
    res.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
  });
  return Buffer.concat(chunks).toString('utf8');
}

/** Waits `ms`; rejects with an AbortError when `signal` aborts first. */
function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  if (signal?.aborted) return Promise.reject(abortError());
  return new Promise<void>((resolveWait, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortError());
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolveWait();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function parseJson(s: string): unknown {
  try {
    return JSON.parse(s);
  } catch {
    return s;
  }
}

function abortError(): Error {
  const e = new Error('The operation was aborted');
  e.name = 'AbortError';
  return e;
}
