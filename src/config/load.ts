/**
 * Load and validate a configuration: YAML text → {@link Config}, or the full list of problems.
 *
 * Every problem is reported as `path: message` (`peers[1].holdTime: must be 0 or 3..65535 (seconds)`).
 * Structural problems (types, ranges, unknown fields) are all reported together; cross-field checks
 * (`semanticErrors`) run once the structure is valid. A value is echoed in a message only when its field cannot
 * hold a secret (a password written inline is named, never shown).
 *
 * Cost (docs/operations.md, "Limits"): the file is read only if it is a regular file of at most
 * {@link DEFAULT_CONFIG_MAX_BYTES} (`HERALD_CONFIG_MAX_BYTES`); a big `routes:` list takes the fast path of
 * routes-block.ts; a file of 128 KiB or more that the fast path cannot take is parsed and validated in a parse worker
 * whose memory is capped at what the pod has free (parse-worker.ts), other files in slices (slices.ts), so that a
 * reload never holds the event loop for long nor runs the daemon out of memory; {@link ConfigFile} skips a reload whose file content (SHA-256) is
 * the one it read last.
 */
import { createHash } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { z } from 'zod';
import type { Config, ConfigIssue, ListenerAddress } from './schema.ts';
import { isCanonicalIPv4Prefix } from '../../bgp/main-thread.ts';
import { ipFamilyOf, parseNodeIps } from '../net/address.ts';
import { configSchema, formatPath, listenerClash, staticRouteSchema } from './schema.ts';
import { semanticChecks } from './semantic.ts';
import { unknownFieldMessage } from './field-names.ts';
import { InputReadError, readFailure, readRegularFile } from '../files/read.ts';
import { parseWithRoutesBlock } from './routes-block.ts';
import { ParseBudgetExceeded, ParseMemoryError, PARSE_IN_WORKER_BYTES, runParseJob } from './parse-worker.ts';
import { runSliced, runSync } from './slices.ts';
import type { Steps } from './slices.ts';
import { documentData, LineIndex, parseJsonText, parseSingleDocument, problemText } from './yaml.ts';
import type { YamlProblem } from './yaml.ts';

/** Result of validating a configuration. */
export type ConfigResult = { ok: true; config: Config } | { ok: false; errors: ConfigIssue[] };

/** A configuration that failed to load; `issues` holds every problem. */
export class ConfigError extends Error {
  readonly issues: ConfigIssue[];
  constructor(source: string, issues: ConfigIssue[]) {
    super(`invalid configuration ${source}:\n${formatIssues(issues)}`);
    this.name = 'ConfigError';
    this.issues = issues;
  }
}

/** One line per issue: "  path: message". */
export function formatIssues(issues: readonly ConfigIssue[]): string {
  return issues.map((i) => `  ${i.path === '' ? '(root)' : i.path}: ${i.message}`).join('\n');
}

/** Largest configuration file read, bytes (16 MiB: about 600,000 static routes). */
export const DEFAULT_CONFIG_MAX_BYTES = 16 * 1024 * 1024;
/** Environment variable that overrides {@link DEFAULT_CONFIG_MAX_BYTES} (a number of bytes). */
export const CONFIG_MAX_BYTES_ENV = 'HERALD_CONFIG_MAX_BYTES';

/** Fields whose value may be a secret: named in errors, never shown (`password`, `token`, `*Password`, `*Secret`...). */
function holdsSecret(path: readonly PropertyKey[]): boolean {
  const last = path[path.length - 1];
  if (typeof last === 'string' && (/^(file|env)$/.test(last) || /(File|Env)$/.test(last))) return false;
  return path.some((p) => typeof p === 'string' && /^(password|token|secret)$|(Password|Token|Secret)$/.test(p));
}

function describeType(v: unknown, secret: boolean): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'a mapping';
  if (secret) return `a ${typeof v} (not shown: this field holds a secret)`;
  if (typeof v === 'string') return `string ${JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v)}`;
  return `${typeof v} ${String(v)}`;
}

/** Per-parse error map for issues without a schema-level message. */
const errorMap = (iss: { code?: string; input?: unknown; expected?: unknown; values?: unknown[]; minimum?: unknown; maximum?: unknown; origin?: string; format?: string; prefix?: string; path?: PropertyKey[] }): string | undefined => {
  switch (iss.code) {
    case 'invalid_type':
      if (iss.input === undefined) return 'required';
      return `expected ${iss.expected === 'object' ? 'a mapping' : iss.expected === 'array' ? 'a list' : String(iss.expected)}, got ${describeType(iss.input, holdsSecret(iss.path ?? []))}`;
    case 'invalid_value':
      return `must be one of ${(iss.values ?? []).map((v) => JSON.stringify(v)).join(', ')}`;
    case 'too_small':
      if (iss.origin === 'array') return `must have at least ${String(iss.minimum)} item(s)`;
      if (iss.origin === 'string') return iss.minimum === 1 ? 'must not be empty' : `must be at least ${String(iss.minimum)} characters`;
      return `must be >= ${String(iss.minimum)}`;
    case 'too_big':
      if (iss.origin === 'array') return `must have at most ${String(iss.maximum)} item(s)`;
      return `must be <= ${String(iss.maximum)}`;
    case 'invalid_format':
      if (iss.format === 'starts_with') return `must start with ${JSON.stringify(iss.prefix)}`;
      return `must be a valid ${String(iss.format)}`;
    default:
      return undefined;
  }
};
const parseParams = { error: errorMap as never };

/** Turn zod issues into ConfigIssues, one per unknown key. */
function fromZod(issues: readonly z.core.$ZodIssue[]): ConfigIssue[] {
  const out: ConfigIssue[] = [];
  for (const iss of issues) {
    if (iss.code === 'unrecognized_keys') {
      for (const k of iss.keys) out.push({ path: formatPath([...iss.path, k]), message: unknownFieldMessage(configSchema, iss.path, k) });
    } else {
      out.push({ path: formatPath(iss.path), message: iss.message });
    }
  }
  return out;
}

/** One problem of a value checked against a part of the schema: `path` as zod gives it (keys and list indexes). */
export interface SchemaIssue {
  path: readonly PropertyKey[];
  message: string;
}

/**
 * Checks `data` against a part of the configuration schema (a peer, an advertisement, ...) with the messages of a
 * whole file (unknown fields one by one, secrets never shown).
 * @returns the parsed value (defaults applied), or every problem
 */
export function checkAgainst<T>(schema: z.ZodType<T>, data: unknown): { ok: true; value: T } | { ok: false; issues: SchemaIssue[] } {
  const r = schema.safeParse(data, parseParams);
  if (r.success) return { ok: true, value: r.data };
  const issues: SchemaIssue[] = [];
  for (const iss of r.error.issues) {
    if (iss.code === 'unrecognized_keys') for (const k of iss.keys) issues.push({ path: [...iss.path, k], message: unknownFieldMessage(schema, iss.path, k) });
    else issues.push({ path: iss.path, message: iss.message });
  }
  return { ok: false, issues };
}

/** Static routes validated between two pauses; a longer list is validated in chunks of this many. */
const ROUTES_PER_CHUNK = 500;
const routeChunk = z.array(staticRouteSchema);
const ROOT_KEYS = Object.keys(configSchema.shape);

function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/**
 * A route the schema takes as it is: a plain mapping whose one field is `prefix`, in canonical IPv4 text — the bulk
 * of a big static table. The schema's output for it is the same one-field mapping, so it is taken without the
 * schema's walk; every other entry goes through the schema, with its messages.
 */
function isBarePrefixRoute(v: unknown): v is Config['routes'][number] {
  if (!isRecord(v) || Object.getPrototypeOf(v) !== Object.prototype) return false;
  for (const k in v) if (k !== 'prefix') return false;
  const prefix = v['prefix'];
  return typeof prefix === 'string' && isCanonicalIPv4Prefix(prefix);
}

/**
 * The schema over `data`, a long `routes` list in chunks with pauses in between. Same issues, in the same order, as
 * one `configSchema.safeParse(data)` (zod reports an object's fields in the order of its shape, unknown keys last).
 */
function* schemaSteps(data: unknown, chunked: boolean): Steps<{ ok: true; config: Config } | { ok: false; issues: z.core.$ZodIssue[] }> {
  const routes = isRecord(data) ? data['routes'] : undefined;
  if (!chunked || !isRecord(data) || !Array.isArray(routes) || routes.length <= ROUTES_PER_CHUNK) {
    const r = configSchema.safeParse(data, parseParams);
    return r.success ? { ok: true, config: r.data } : { ok: false, issues: r.error.issues };
  }
  const root = configSchema.safeParse({ ...data, routes: [] }, parseParams);
  yield;
  const routeIssues: z.core.$ZodIssue[] = [];
  const parsed: Config['routes'] = [];
  for (let i = 0; i < routes.length; i += ROUTES_PER_CHUNK) {
    const chunk = routes.slice(i, i + ROUTES_PER_CHUNK);
    if (chunk.every(isBarePrefixRoute)) {
      if (routeIssues.length === 0) for (const x of chunk) parsed.push(x);
      yield;
      continue;
    }
    const r = routeChunk.safeParse(chunk, parseParams);
    if (r.success) {
      if (routeIssues.length === 0) for (const x of r.data) parsed.push(x);
    } else {
      for (const iss of r.error.issues) routeIssues.push({ ...iss, path: ['routes', i + Number(iss.path[0]), ...iss.path.slice(1)] });
    }
    yield;
  }
  if (root.success && routeIssues.length === 0) return { ok: true, config: { ...root.data, routes: parsed } };
  const rootIssues = root.success ? [] : root.error.issues;
  const routesAt = ROOT_KEYS.indexOf('routes');
  let at = rootIssues.findIndex((iss) => iss.path.length === 0 || ROOT_KEYS.indexOf(String(iss.path[0])) > routesAt);
  if (at < 0) at = rootIssues.length;
  return { ok: false, issues: [...rootIssues.slice(0, at), ...routeIssues, ...rootIssues.slice(at)] };
}

/** Options of parsing and validation: `fastPath: false` takes the plain library path (one parse, one zod call; tests). */
export interface ParseOptions {
  fastPath?: boolean;
  /**
   * The largest text the YAML library may parse whole (a parse worker's heap over the library's cost per byte:
   * parse-worker.ts `libraryMaxBytes`); a bigger one throws ParseBudgetExceeded at once. Default: no limit.
   */
  libraryMaxBytes?: number;
}

/** {@link validateConfig} as pausable work (slices.ts). */
export function* validateSteps(data: unknown, opts: ParseOptions = {}): Steps<ConfigResult> {
  const r = yield* schemaSteps(data ?? {}, opts.fastPath !== false);
  if (!r.ok) return { ok: false, errors: fromZod(r.issues) };
  const sem = yield* semanticChecks(r.config);
  if (sem.length > 0) return { ok: false, errors: sem };
  return { ok: true, config: r.config };
}

/**
 * Validate a parsed (plain JSON) configuration object.
 * @returns the config with defaults applied, or every problem found.
 */
export function validateConfig(data: unknown, opts: ParseOptions = {}): ConfigResult {
  return runSync(validateSteps(data, opts));
}

function yamlErrors(problems: readonly YamlProblem[]): ConfigResult {
  return { ok: false, errors: problems.map((p) => ({ path: '(yaml)', message: problemText(p) })) };
}

/**
 * The YAML data of a configuration text: JSON.parse for a JSON text, the routes fast path when the file allows it,
 * else the library whole.
 */
export function* configDataSteps(text: string, opts: ParseOptions = {}): Steps<{ ok: true; data: unknown } | { ok: false; problems: YamlProblem[] }> {
  const index = new LineIndex(text);
  if (opts.fastPath !== false) {
    const json = parseJsonText(text, index);
    if (json !== undefined) return json.ok ? { ok: true, data: json.value } : json;
    const split = yield* parseWithRoutesBlock(text, index);
    if (split !== undefined) return split;
  }
  if (opts.libraryMaxBytes !== undefined && text.length > opts.libraryMaxBytes) throw new ParseBudgetExceeded(text.length);
  const whole = yield* parseSingleDocument(text, index);
  if (!whole.ok) return whole;
  return documentData(whole.doc);
}

/**
 * {@link parseConfigSteps} for a text the routes fast path can take whole (routes-block.ts: a `routes:` block list,
 * the rest of the file under `maxRestChars`), or undefined: then only the YAML library whole or JSON.parse reads it.
 * The fast path needs memory in proportion to the routes, not the ~100 bytes per byte of text of the library, so a
 * big file of this shape is parsed on the daemon's own thread, in slices (issue 34: a parse worker process costs a
 * 100,000-route reload about a second of CPU); other big input goes to a parse worker (parse-worker.ts).
 */
export function* parseConfigFastSteps(text: string, maxRestChars: number): Steps<ConfigResult | undefined> {
  if (/^\s*[{[]/.test(text)) return undefined; // JSON (or flow YAML): JSON.parse or the library, whole
  const index = new LineIndex(text);
  const split = yield* parseWithRoutesBlock(text, index, { maxRestChars });
  if (split === undefined) return undefined;
  if (!split.ok) return yamlErrors(split.problems);
  return yield* validateSteps(split.data, {});
}

/** {@link parseConfigText} as pausable work (slices.ts). `fastPath: false` parses with the library only (tests). */
export function* parseConfigSteps(text: string, opts: ParseOptions = {}): Steps<ConfigResult> {
  const r = yield* configDataSteps(text, opts);
  if (!r.ok) return yamlErrors(r.problems);
  return yield* validateSteps(r.data, opts);
}

/**
 * Parse YAML text and validate it. YAML syntax errors are reported with line and column
 * (path `(yaml)`), and all of them are listed.
 */
export function parseConfigText(text: string, opts: ParseOptions = {}): ConfigResult {
  return runSync(parseConfigSteps(text, opts));
}

/**
 * The size limit in force: `HERALD_CONFIG_MAX_BYTES` from `env` when set, else {@link DEFAULT_CONFIG_MAX_BYTES}.
 * @throws ConfigError when the variable is not a positive integer
 */
export function configMaxBytes(env: NodeJS.ProcessEnv = process.env): number {
  const v = env[CONFIG_MAX_BYTES_ENV];
  if (v === undefined || v === '') return DEFAULT_CONFIG_MAX_BYTES;
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < 1) throw new ConfigError('(environment)', [{ path: CONFIG_MAX_BYTES_ENV, message: `must be a positive integer number of bytes, got ${JSON.stringify(v)}` }]);
  return n;
}

/** Options of {@link ConfigFile} and {@link loadConfigFile}. */
export interface ConfigFileOptions {
  /** Environment for `HERALD_CONFIG_MAX_BYTES` (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** Size limit, bytes (default: {@link configMaxBytes}). */
  maxBytes?: number;
  /** A file of at least this many bytes is parsed in a parse worker (default {@link PARSE_IN_WORKER_BYTES}; tests). */
  parseInWorkerBytes?: number;
}

/**
 * One configuration file, read again on each reload: a reload whose file content (SHA-256) equals the last one read
 * is a no-op — whatever that content's outcome — so SIGHUP and the file watcher seeing the same change parse it once.
 * After a failed apply of a valid file, {@link ConfigFile.forget} lets the next reload try it again.
 */
export class ConfigFile {
  readonly path: string;
  readonly #opts: ConfigFileOptions;
  #lastHash: string | undefined;
  /** The configuration loaded last, whose route objects a changed file reuses where a route did not change. */
  #last: Config | undefined;
  /** Parses done (tests: an unchanged reload parses nothing). */
  parses = 0;

  constructor(path: string, opts: ConfigFileOptions = {}) {
    this.path = path;
    this.#opts = opts;
  }

  /**
   * Read, parse and validate the file.
   * @throws ConfigError with every problem (unreadable, too big or not a regular file included).
   */
  async load(): Promise<Config> {
    return (await this.#read(false)) as Config;
  }

  /**
   * Read the file again: the new configuration, or undefined when its content is the one read last (nothing to do).
   * @throws ConfigError as {@link load}
   */
  async reload(): Promise<Config | undefined> {
    return this.#read(true);
  }

  /** Forget the content read last: the next {@link reload} parses the file even when it is unchanged. */
  forget(): void {
    this.#lastHash = undefined;
  }

  async #read(skipUnchanged: boolean): Promise<Config | undefined> {
    const maxBytes = this.#opts.maxBytes ?? configMaxBytes(this.#opts.env);
    let bytes: Buffer;
    try {
      bytes = await readRegularFile(this.path, { maxBytes, sizeHint: `raise it with ${CONFIG_MAX_BYTES_ENV}=BYTES` });
    } catch (err) {
      const message = err instanceof InputReadError ? (err.code === 'ETOOBIG' ? `file ${err.message}` : `cannot read: ${err.message}`) : `cannot read: ${readFailure(err)}`;
      throw new ConfigError(this.path, [{ path: '(file)', message }]);
    }
    const hash = createHash('sha256').update(bytes).digest('hex');
    if (skipUnchanged && hash === this.#lastHash) return undefined;
    this.#lastHash = hash;
    this.parses++;
    const last = this.#last;
    let parsed: ConfigResult | undefined;
    const workerBytes = this.#opts.parseInWorkerBytes ?? PARSE_IN_WORKER_BYTES;
    if (bytes.length >= workerBytes) {
      // A big file the routes fast path takes is parsed here, in slices: its memory grows with the routes, not the text.
      parsed = await runSliced(parseConfigFastSteps(bytes.toString('utf8'), workerBytes));
    }
    if (parsed === undefined && bytes.length >= workerBytes) {
      // Other big input is parsed where running out of memory cannot end this process (parse-worker.ts).
      try {
        parsed = await runParseJob<Uint8Array, ConfigResult>(new URL('./config-parse-job.ts', import.meta.url), bytes, { what: 'the configuration file', fix: 'write its routes: list one simple mapping per line (`- prefix: ...`), without anchors or a %YAML header, which takes the fast path: docs/operations.md "Limits"', ...(this.#opts.env ? { env: this.#opts.env } : {}) });
      } catch (err) {
        if (err instanceof ParseMemoryError) throw new ConfigError(this.path, [{ path: '(file)', message: err.message }]);
        throw err;
      }
    }
    const r = await runSliced(
      (function* () {
        const result = parsed ?? (yield* parseConfigSteps(bytes.toString('utf8')));
        if (result.ok && last !== undefined) yield* reuseUnchangedRoutes(last, result.config);
        return result;
      })(),
    );
    if (!r.ok) throw new ConfigError(this.path, r.errors);
    this.#last = r.config;
    return r.config;
  }
}

/**
 * Puts `prev`'s route object in `next` wherever a route (same prefix) is unchanged, so that the daemon, which maps
 * one config route object to one Speaker route, rebuilds only the routes that changed (src/daemon/route-assembly.ts).
 * Routes in the same places from either end are compared in place; only the middle between is matched by prefix
 * (issue 34: a reload that empties or fills a big table, or edits a few lines of it, builds no map of all of it).
 */
function* reuseUnchangedRoutes(prev: Config, next: Config): Steps<void> {
  const old = prev.routes;
  const now = next.routes;
  const same = (i: number, j: number): boolean => {
    const a = old[j]!;
    const b = now[i]!;
    if (a.prefix !== b.prefix || !sameRoute(a, b)) return false;
    now[i] = a;
    return true;
  };
  let start = 0;
  const lim = Math.min(old.length, now.length);
  for (; start < lim; start++) {
    if (start % ROUTES_PER_CHUNK === 0) yield;
    if (!same(start, start)) break;
  }
  let endOld = old.length;
  let endNow = now.length;
  for (let k = 0; endOld > start && endNow > start; k++) {
    if (k % ROUTES_PER_CHUNK === 0) yield;
    if (!same(endNow - 1, endOld - 1)) break;
    endOld--;
    endNow--;
  }
  if (endOld === start || endNow === start) return;
  const byPrefix = new Map<string, number>();
  for (let j = start; j < endOld; j++) {
    if (j % ROUTES_PER_CHUNK === 0) yield;
    byPrefix.set(old[j]!.prefix, j);
  }
  for (let i = start; i < endNow; i++) {
    if (i % ROUTES_PER_CHUNK === 0) yield;
    const j = byPrefix.get(now[i]!.prefix);
    if (j !== undefined) same(i, j);
  }
}

/** Two static routes of the same prefix are the same: a bare prefix (the common case) is compared without a walk. */
function sameRoute(a: Config['routes'][number], b: Config['routes'][number]): boolean {
  const bare = (r: object): boolean => {
    for (const k in r) if (k !== 'prefix') return false;
    return true;
  };
  if (bare(a) && bare(b)) return true;
  return isDeepStrictEqual(a, b);
}

/**
 * Read and validate a configuration file (at most `HERALD_CONFIG_MAX_BYTES`, default 16 MiB; see {@link ConfigFile}).
 * @throws ConfigError with every problem (unreadable file included).
 */
export async function loadConfigFile(path: string, opts: ConfigFileOptions = {}): Promise<Config> {
  return new ConfigFile(path, opts).load();
}

/** Command-line / environment overrides of the node identity. */
export interface RuntimeOverrides {
  nodeName?: string;
  nodeIp?: string;
  env?: NodeJS.ProcessEnv;
}

/** Values the daemon needs that may come from flags or the environment. */
export interface RuntimeIdentity {
  /** Kubernetes node name (flag, then config, then NODE_NAME, then the host name). */
  nodeName: string;
  /**
   * This node's addresses as given by `--node-ip`, `node.ip` or `NODE_IP` (at most one per IP family). They override
   * the Node object's InternalIP of their family (docs/decisions.md "Node addresses"); empty when none is given.
   */
  nodeIps: readonly string[];
  /** BGP Identifier, dotted quad. */
  routerId: string;
}

/**
 * Resolve node name, node IPs and router id. Precedence: flag > config file > environment (`NODE_NAME`, `NODE_IP`).
 * The router id defaults to the IPv4 node IP.
 * @throws ConfigError when no router id can be found or a flag is malformed.
 */
export function resolveIdentity(cfg: Config, o: RuntimeOverrides, hostname: string): RuntimeIdentity {
  const env = o.env ?? process.env;
  const nodeName = o.nodeName ?? cfg.node.name ?? env['NODE_NAME'] ?? hostname;
  const issues: ConfigIssue[] = [];
  const given: [string, string | undefined][] = [['--node-ip', o.nodeIp], ['node.ip', cfg.node.ip], ['NODE_IP', env['NODE_IP']]];
  const [where, text] = given.find(([, v]) => v !== undefined && v.trim() !== '') ?? ['', undefined];
  let nodeIps: readonly string[] = [];
  if (text !== undefined) {
    const parsed = parseNodeIps(text);
    if ('error' in parsed) issues.push({ path: where, message: where === 'NODE_IP' ? `${parsed.error} (got ${JSON.stringify(text)})` : parsed.error });
    else nodeIps = parsed;
  }
  let routerId = cfg.bgp.routerId;
  if (routerId === undefined) {
    const v4 = nodeIps.find((a) => ipFamilyOf(a) === 'IPv4');
    if (v4 !== undefined && v4 !== '0.0.0.0') routerId = v4;
    else issues.push({ path: 'bgp.routerId', message: 'required unless node.ip (or --node-ip / NODE_IP) has an IPv4 address other than 0.0.0.0' });
  }
  if (issues.length > 0 || routerId === undefined) throw new ConfigError('(runtime)', issues);
  return { nodeName, routerId, nodeIps };
}

/**
 * Where the metrics-only listener binds (docs/metrics.md): `metrics.address`, else the node's first address (`nodeIps`
 * of {@link resolveIdentity}: --node-ip, node.ip or NODE_IP); undefined when the config has no `metrics` section.
 * @throws ConfigError when no address is set nor known, or when it overlaps the admin API's address and port.
 */
export function metricsListener(cfg: Config, identity: RuntimeIdentity): ListenerAddress | undefined {
  if (!cfg.metrics) return undefined;
  const address = cfg.metrics.address ?? identity.nodeIps[0];
  if (address === undefined) {
    throw new ConfigError('(runtime)', [{ path: 'metrics.address', message: "not set, and the node's address is unknown: set metrics.address, or node.ip (or --node-ip / NODE_IP)" }]);
  }
  const listener = { address, port: cfg.metrics.port };
  const clash = listenerClash(cfg.admin, listener);
  if (clash !== undefined) throw new ConfigError('(runtime)', [{ path: cfg.metrics.address !== undefined ? 'metrics.address' : 'metrics.address (the node address)', message: clash }]);
  return listener;
}
