/**
 * A fake Kubernetes apiserver over node:http on 127.0.0.1 (random port) speaking the real
 * list/watch protocol, for driving Herald's Kubernetes client (src/k8s/client.ts) and @kubernetes/client-node (kubernetes-notes §5):
 *
 * - one global resourceVersion counter shared by all resources; list items carry no kind/apiVersion,
 *   watch event objects do; lists in pages with `limit` and `continue` (a continue token from before a
 *   compaction answers 410, as the real one does; the pages are not a snapshot of one RV here);
 * - `GET <collection>?watch=true&resourceVersion=N`: 200 with headers flushed at once, chunked
 *   body of one JSON event per line; RV unset/"" /"0" sends synthetic ADDED first; an RV older
 *   than the compaction point gets an ERROR 410 (Expired) event then close, or an HTTP 410 when
 *   `expiredAs = 'http'`; DELETED carries the last state stamped with the deletion RV; BOOKMARK on demand, and
 *   every `bookmarkEveryMs` on watches that allow them (kube-apiserver's watch cache: about once a minute);
 *   `timeoutSeconds` ends the stream (`watchEnds` tells who ended each one);
 * - streaming lists (`sendInitialEvents=true`, KEP-3157): the current objects as ADDED, then a BOOKMARK annotated
 *   `k8s.io/initial-events-end`, then the changes; without `allowWatchBookmarks=true` and
 *   `resourceVersionMatch=NotOlderThan`, or with `watchList = false` (the WatchList feature off), 422 Invalid;
 * - a LIST with both `continue` and `resourceVersion` is refused (400), as kube-apiserver refuses it;
 * - POST (201), PUT (RV precondition → 409), PATCH `application/merge-patch+json` on the object or
 *   the `/status` subresource (other content types → 415), DELETE; `labelSelector` (equality,
 *   `!=`, existence) and `fieldSelector` (metadata.name / metadata.namespace);
 * - the pod proxy: `GET .../pods/NAME:PORT/proxy/PATH` is sent on to the pod's `status.podIP` and PORT (the first
 *   container port without one), and its answer returned, as kube-apiserver's pod proxy does;
 * - faults: `goDown('refuse' | '500' | 'hang')`, `comeBack()`, `hangWatches()`, `closeWatches()`,
 *   `compact()`, `tooManyRequests()` (429 with `Retry-After`, as API Priority and Fairness answers); `failResource(plural, 403, { methods? })` and `comeBack({ forbiddenForMs })` answer 403 with the real apiserver's
 *   Forbidden Status (reason Forbidden, details {group, kind}, a message naming user, verb, resource and scope) — a
 *   real kube-apiserver refuses even granted calls with 403 for a moment after it starts, until its RBAC
 *   authorizer has read the roles (seen in test/control-plane/outages.test.ts).
 *
 * Resources are generic (group, version, plural, kind, namespaced); `registerResource()` adds more.
 */
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { randomUUID } from 'node:crypto';

/** Description of one resource type. */
export interface ResourceType {
  group: string; // '' for core
  version: string;
  plural: string;
  kind: string;
  namespaced: boolean;
}

/** Resource types registered by default. */
export const DEFAULT_RESOURCES: ResourceType[] = [
  { group: '', version: 'v1', plural: 'services', kind: 'Service', namespaced: true },
  { group: '', version: 'v1', plural: 'nodes', kind: 'Node', namespaced: false },
  { group: '', version: 'v1', plural: 'events', kind: 'Event', namespaced: true },
  { group: 'discovery.k8s.io', version: 'v1', plural: 'endpointslices', kind: 'EndpointSlice', namespaced: true },
  { group: 'networking.k8s.io', version: 'v1', plural: 'servicecidrs', kind: 'ServiceCIDR', namespaced: false },
  { group: 'coordination.k8s.io', version: 'v1', plural: 'leases', kind: 'Lease', namespaced: true },
  { group: 'events.k8s.io', version: 'v1', plural: 'events', kind: 'Event', namespaced: true },
  { group: '', version: 'v1', plural: 'pods', kind: 'Pod', namespaced: true },
  { group: '', version: 'v1', plural: 'configmaps', kind: 'ConfigMap', namespaced: true },
];

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Obj = Record<string, any>;

interface Change {
  rv: number;
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  object: Obj;
  /** State before a MODIFIED (for selector transitions). */
  prev?: Obj;
}

interface WatchConn {
  res: http.ServerResponse;
  rt: ResourceType;
  ns: string | undefined;
  labelSelector: string | undefined;
  fieldSelector: string | undefined;
  hung: boolean;
  /** Ended by the server (timeout or fault): set before the response ends. */
  endedBy?: WatchEnd['by'];
}

/** One logged request. */
export interface RequestLog {
  method: string;
  path: string;
  query: Record<string, string>;
  /** The User-Agent header ('' without one). */
  userAgent: string;
}

/** How a watch stream ended: its `timeoutSeconds` ran out, the client closed it, or the server cut it (a fault). */
export interface WatchEnd {
  plural: string;
  by: 'timeout' | 'client' | 'server';
  /** How long it was open, ms. */
  openMs: number;
}

function rtId(rt: { group: string; version: string; plural: string }): string {
  return `${rt.group}/${rt.version}/${rt.plural}`;
}

function apiVersionOf(rt: ResourceType): string {
  return rt.group ? `${rt.group}/${rt.version}` : rt.version;
}

function keyOf(ns: string | undefined, name: string): string {
  return ns ? `${ns}/${name}` : name;
}

function status(code: number, reason: string, message: string, details?: Obj): Obj {
  const s: Obj = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code };
  if (details) s.details = details;
  return s;
}

/**
 * The Status of a request RBAC refuses, as kube-apiserver writes it (its forbidden responder): e.g.
 * `endpointslices.discovery.k8s.io is forbidden: User "system:anonymous" cannot list resource "endpointslices" in
 * API group "discovery.k8s.io" at the cluster scope`. The fake has no authentication: the user is system:anonymous.
 */
function forbidden(rt: ResourceType, method: string, q: Record<string, string>, ns: string | undefined, name: string | undefined, sub: string | undefined): Obj {
  const verbs: Record<string, string> = { POST: 'create', PUT: 'update', PATCH: 'patch', DELETE: 'delete' };
  const verb = method === 'GET' ? (name !== undefined ? 'get' : q.watch === 'true' || q.watch === '1' ? 'watch' : 'list') : (verbs[method] ?? method.toLowerCase());
  // A list or watch selecting one name (fieldSelector metadata.name=X) is authorized, and refused, for that name.
  const named = name ?? /^metadata\.name==?([^,]+)$/.exec(q.fieldSelector ?? '')?.[1];
  const what = `${rt.plural}${rt.group ? `.${rt.group}` : ''}${named !== undefined ? ` "${named}"` : ''}`;
  const resource = `${rt.plural}${sub !== undefined ? `/${sub}` : ''}`;
  const scope = ns !== undefined ? `in the namespace "${ns}"` : 'at the cluster scope';
  return status(403, 'Forbidden', `${what} is forbidden: User "system:anonymous" cannot ${verb} resource "${resource}" in API group "${rt.group}" ${scope}`, { ...(named !== undefined ? { name: named } : {}), group: rt.group, kind: rt.plural });
}

/** RFC 7386 JSON merge patch. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) return patch;
  const out: Obj = target !== null && typeof target === 'object' && !Array.isArray(target) ? { ...(target as Obj) } : {};
  for (const [k, v] of Object.entries(patch as Obj)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

function matchesLabelSelector(sel: string | undefined, labels: Record<string, string> | undefined): boolean {
  if (!sel) return true;
  const l = labels ?? {};
  for (const raw of sel.split(',')) {
    const term = raw.trim();
    if (!term) continue;
    let m: RegExpMatchArray | null;
    if ((m = term.match(/^([^!=]+)!=(.*)$/))) {
      if (l[m[1]!.trim()] === m[2]!.trim()) return false;
    } else if ((m = term.match(/^([^=]+)==?(.*)$/))) {
      if (l[m[1]!.trim()] !== m[2]!.trim()) return false;
    } else if (term.startsWith('!')) {
      if (Object.hasOwn(l, term.slice(1))) return false;
    } else if (!Object.hasOwn(l, term)) return false;
  }
  return true;
}

function matchesFieldSelector(sel: string | undefined, obj: Obj): boolean {
  if (!sel) return true;
  for (const term of sel.split(',')) {
    const m = term.match(/^([^!=]+)(!=|==?)(.*)$/);
    if (!m) continue;
    const [, field, op, value] = m;
    const actual = field === 'metadata.name' ? obj.metadata?.name : field === 'metadata.namespace' ? obj.metadata?.namespace : undefined;
    const eq = actual === value;
    if (op === '!=' ? eq : !eq) return false;
  }
  return true;
}

/** The fake apiserver. */
export class FakeApiServer {
  readonly #types = new Map<string, ResourceType>();
  readonly #stores = new Map<string, Map<string, Obj>>();
  readonly #history = new Map<string, Change[]>();
  readonly #watches = new Set<WatchConn>();
  readonly #sockets = new Set<Socket>();
  #server: http.Server | undefined;
  #port = 0;
  #rv = 100;
  #compactedRv = 0;
  #mode: 'up' | 'refuse' | '500' | 'hang' = 'up';
  #hungRequests = new Set<http.ServerResponse>();
  /** plural (or plural/subresource) -> the HTTP status to answer, and the methods it applies to (absent: all). */
  readonly #failing = new Map<string, { code: number; methods?: readonly string[] }>();
  /** Until then every request is refused with 403 (an apiserver whose RBAC authorizer has not synced yet). */
  #forbiddenUntilMs = 0;
  /** How an expired watch RV is reported: an ERROR event (apiserver) or an HTTP 410 (some proxies). */
  expiredAs: 'event' | 'http' = 'event';
  /** Every request received, in order. */
  readonly requests: RequestLog[] = [];
  /** List pages answered. */
  listPages = 0;
  /**
   * Serve streaming lists (`sendInitialEvents`); false: refuse them (422) as an apiserver without the WatchList
   * feature; 'ignored': ignore the parameter as apiservers before 1.27 do (the objects, no closing bookmark).
   */
  watchList: boolean | 'ignored' = true;
  /** Send a BOOKMARK this often on every watch that allows them (0: only when `bookmark()` is called). */
  bookmarkEveryMs = 0;
  /** Keep every request in `requests` (false for long runs: `count()` then sees nothing). */
  logRequests = true;
  /** How every watch stream ended, in order. */
  readonly watchEnds: WatchEnd[] = [];
  /** Requests still to answer with 429 (`tooManyRequests`), and the Retry-After they carry. */
  #throttle: { left: number; retryAfterSec: number | undefined; plural: string | undefined } | undefined;

  constructor(types: ResourceType[] = DEFAULT_RESOURCES) {
    for (const t of types) this.registerResource(t);
  }

  /** Add a resource type (idempotent). */
  registerResource(rt: ResourceType): void {
    const id = rtId(rt);
    this.#types.set(id, rt);
    if (!this.#stores.has(id)) this.#stores.set(id, new Map());
    if (!this.#history.has(id)) this.#history.set(id, []);
  }

  /** Remove a resource type: its URLs then answer 404 (e.g. ServiceCIDR on an old cluster). */
  unregisterResource(group: string, version: string, plural: string): void {
    this.#types.delete(rtId({ group, version, plural }));
  }

  /** Base URL, e.g. "http://127.0.0.1:41234". */
  get url(): string {
    return `http://127.0.0.1:${this.#port}`;
  }

  /** Current (latest) resourceVersion. */
  get resourceVersion(): string {
    return String(this.#rv);
  }

  /** Number of open watch streams (optionally for one plural). */
  watchCount(plural?: string): number {
    return [...this.#watches].filter((w) => !plural || w.rt.plural === plural).length;
  }

  /** Number of requests matching a predicate. */
  count(pred: (r: RequestLog) => boolean): number {
    return this.requests.filter(pred).length;
  }

  /** Listen on 127.0.0.1 (a random port the first time, the same port afterwards). */
  async start(): Promise<void> {
    const server = http.createServer((req, res) => this.#handle(req, res));
    server.on('connection', (s: Socket) => {
      this.#sockets.add(s);
      s.on('close', () => this.#sockets.delete(s));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.#port, '127.0.0.1', () => resolve());
    });
    this.#port = (server.address() as AddressInfo).port;
    this.#server = server;
  }

  /** Close the listener and every connection. */
  async stop(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    for (const w of this.#watches) {
      w.endedBy = 'server';
      w.res.destroy();
    }
    this.#watches.clear();
    for (const r of this.#hungRequests) r.destroy();
    this.#hungRequests.clear();
    for (const s of this.#sockets) s.destroy();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /**
   * Simulate an outage: 'refuse' closes the listener (connections refused), '500' answers every
   * request with 500, 'hang' accepts requests and never answers.
   */
  async goDown(mode: 'refuse' | '500' | 'hang'): Promise<void> {
    this.#mode = mode;
    if (mode === 'refuse') await this.stop();
    else this.closeWatches(true);
  }

  /**
   * End an outage (re-listen on the same port after 'refuse'). `forbiddenForMs`: answer every request with 403 for
   * that long first, as a real apiserver does right after it starts.
   */
  async comeBack(o: { forbiddenForMs?: number } = {}): Promise<void> {
    const wasRefusing = this.#mode === 'refuse';
    this.#mode = 'up';
    this.#forbiddenUntilMs = o.forbiddenForMs !== undefined ? Date.now() + o.forbiddenForMs : 0;
    for (const r of this.#hungRequests) r.destroy();
    this.#hungRequests.clear();
    if (wasRefusing) await this.start();
  }

  /** Close every watch stream: normally (end) or abruptly (destroy). */
  closeWatches(abrupt = false): void {
    for (const w of this.#watches) {
      w.endedBy = 'server';
      if (abrupt) w.res.destroy();
      else w.res.end();
    }
    this.#watches.clear();
  }

  /**
   * Answer every request for `plural` with HTTP `code` (undefined = stop failing). Open watches of it are cut.
   * `plural/status` fails only the status subresource. `methods` (e.g. `['POST']`): only requests with these HTTP
   * methods fail (RBAC granting list and watch but not create); watches are cut only when it includes GET.
   */
  failResource(plural: string, code: number | undefined, o: { methods?: readonly string[] } = {}): void {
    if (code === undefined) this.#failing.delete(plural);
    else {
      this.#failing.set(plural, { code, ...(o.methods !== undefined ? { methods: o.methods } : {}) });
      if (o.methods !== undefined && !o.methods.includes('GET')) return;
      for (const w of this.#watches) {
        if (w.rt.plural === plural) {
          w.endedBy = 'server';
          w.res.destroy();
          this.#watches.delete(w);
        }
      }
    }
  }

  /**
   * Answer the next `count` requests (for `plural` only, when given) with 429 Too Many Requests, with
   * `Retry-After: retryAfterSec` unless it is undefined, as API Priority and Fairness does when a priority level's
   * queues are full. `count` 0 ends it.
   */
  tooManyRequests(o: { count: number; retryAfterSec?: number; plural?: string }): void {
    this.#throttle = o.count > 0 ? { left: o.count, retryAfterSec: o.retryAfterSec, plural: o.plural } : undefined;
  }

  /** Keep every open watch open but silent: changes are no longer delivered to them. */
  hangWatches(): void {
    for (const w of this.#watches) w.hung = true;
  }

  /** Forget the change history: watches from any older RV now get 410 Expired. */
  compact(): void {
    this.#compactedRv = this.#rv;
    for (const h of this.#history.values()) h.length = 0;
  }

  /** Send a BOOKMARK carrying the current RV on every watch of `plural`. */
  bookmark(plural: string): void {
    for (const w of this.#watches) {
      if (w.rt.plural !== plural || w.hung) continue;
      w.res.write(JSON.stringify({ type: 'BOOKMARK', object: { kind: w.rt.kind, apiVersion: apiVersionOf(w.rt), metadata: { resourceVersion: String(this.#rv) } } }) + '\n');
    }
  }

  #type(plural: string, group = ''): ResourceType {
    const rt = [...this.#types.values()].find((t) => t.plural === plural && t.group === group);
    if (!rt) throw new Error(`fake apiserver: unknown resource ${group}/${plural}`);
    return rt;
  }

  /** Stored object or undefined. */
  get(plural: string, ns: string | undefined, name: string, group = ''): Obj | undefined {
    const rt = this.#type(plural, group);
    const o = this.#stores.get(rtId(rt))!.get(keyOf(rt.namespaced ? ns : undefined, name));
    return o ? structuredClone(o) : undefined;
  }

  /** All stored objects of a type. */
  list(plural: string, group = ''): Obj[] {
    return [...this.#stores.get(rtId(this.#type(plural, group)))!.values()].map((o) => structuredClone(o));
  }

  /** Create (or replace when it exists) an object from the test; returns the stored copy. */
  upsert(plural: string, obj: Obj, group = ''): Obj {
    const rt = this.#type(plural, group);
    const key = keyOf(rt.namespaced ? obj.metadata?.namespace : undefined, obj.metadata?.name);
    const exists = this.#stores.get(rtId(rt))!.has(key);
    return this.#write(rt, obj, exists ? 'MODIFIED' : 'ADDED');
  }

  /** Delete an object from the test; returns false when it did not exist. */
  remove(plural: string, ns: string | undefined, name: string, group = ''): boolean {
    const rt = this.#type(plural, group);
    return this.#delete(rt, keyOf(rt.namespaced ? ns : undefined, name)) !== undefined;
  }

  #write(rt: ResourceType, obj: Obj, type: 'ADDED' | 'MODIFIED'): Obj {
    const store = this.#stores.get(rtId(rt))!;
    const stored = structuredClone(obj);
    delete stored.kind;
    delete stored.apiVersion;
    stored.metadata = { ...(stored.metadata ?? {}) };
    if (!rt.namespaced) delete stored.metadata.namespace;
    const key = keyOf(stored.metadata.namespace, stored.metadata.name);
    const prev = store.get(key);
    stored.metadata.uid = prev?.metadata?.uid ?? stored.metadata.uid ?? randomUUID();
    stored.metadata.creationTimestamp = prev?.metadata?.creationTimestamp ?? new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    stored.metadata.resourceVersion = String(++this.#rv);
    store.set(key, stored);
    this.#publish(rt, prev && type === 'MODIFIED' ? { rv: this.#rv, type, object: stored, prev } : { rv: this.#rv, type, object: stored });
    return structuredClone(stored);
  }

  #delete(rt: ResourceType, key: string): Obj | undefined {
    const store = this.#stores.get(rtId(rt))!;
    const prev = store.get(key);
    if (!prev) return undefined;
    store.delete(key);
    const gone = structuredClone(prev);
    gone.metadata.resourceVersion = String(++this.#rv);
    this.#publish(rt, { rv: this.#rv, type: 'DELETED', object: gone });
    return gone;
  }

  #publish(rt: ResourceType, ch: Change): void {
    this.#history.get(rtId(rt))!.push(ch);
    for (const w of this.#watches) if (w.rt === rt) this.#send(w, ch);
  }

  #visible(w: { ns: string | undefined; labelSelector: string | undefined; fieldSelector: string | undefined }, o: Obj): boolean {
    return (!w.ns || o.metadata?.namespace === w.ns) && matchesLabelSelector(w.labelSelector, o.metadata?.labels) && matchesFieldSelector(w.fieldSelector, o);
  }

  #send(w: WatchConn, ch: Change): void {
    if (w.hung) return;
    const now = this.#visible(w, ch.object);
    let type: Change['type'] = ch.type;
    if (ch.type === 'MODIFIED' && ch.prev) {
      // With selectors, an object that starts matching arrives as ADDED, one that stops as DELETED.
      const before = this.#visible(w, ch.prev);
      if (!before && !now) return;
      if (!before) type = 'ADDED';
      else if (!now) type = 'DELETED';
    } else if (!now) return;
    const object = { kind: w.rt.kind, apiVersion: apiVersionOf(w.rt), ...ch.object };
    w.res.write(JSON.stringify({ type, object }) + '\n');
  }

  #reply(res: http.ServerResponse, code: number, body: Obj): void {
    const text = JSON.stringify(body);
    res.writeHead(code, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
    res.end(text);
  }

  #handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const u = new URL(req.url ?? '/', 'http://x');
    const query = Object.fromEntries(u.searchParams);
    const ua = req.headers['user-agent'] ?? '';
    if (this.logRequests) this.requests.push({ method: req.method ?? 'GET', path: u.pathname, query, userAgent: ua });
    if (this.#mode === 'hang') {
      this.#hungRequests.add(res);
      res.on('close', () => this.#hungRequests.delete(res));
      return;
    }
    if (this.#mode === '500') {
      req.resume();
      return this.#reply(res, 500, status(500, 'InternalError', 'fake apiserver is down'));
    }
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      try {
        this.#route(req, res, u, query, body);
      } catch (e) {
        this.#reply(res, 500, status(500, 'InternalError', (e as Error).message));
      }
    });
  }

  #route(req: http.IncomingMessage, res: http.ServerResponse, u: URL, q: Record<string, string>, body: string): void {
    const parts = u.pathname.split('/').filter(Boolean);
    let group: string;
    let version: string;
    let rest: string[];
    if (parts[0] === 'api') {
      group = '';
      version = parts[1] ?? '';
      rest = parts.slice(2);
    } else if (parts[0] === 'apis') {
      group = parts[1] ?? '';
      version = parts[2] ?? '';
      rest = parts.slice(3);
    } else return this.#reply(res, 404, status(404, 'NotFound', 'the server could not find the requested resource'));
    let ns: string | undefined;
    if (rest[0] === 'namespaces' && rest.length >= 3) {
      ns = rest[1];
      rest = rest.slice(2);
    }
    if (group === '' && rest[0] === 'pods' && rest[2] === 'proxy' && ns !== undefined) return this.#podProxy(req, res, ns, rest[1] ?? '', `/${rest.slice(3).join('/')}${u.search}`);
    const [plural, name, sub] = rest;
    const rt = this.#types.get(rtId({ group, version, plural: plural ?? '' }));
    if (!rt || rest.length > 3 || (sub !== undefined && sub !== 'status')) {
      return this.#reply(res, 404, status(404, 'NotFound', 'the server could not find the requested resource'));
    }
    const method = req.method ?? 'GET';
    const failing = (key: string): number | undefined => {
      const f = this.#failing.get(key);
      return f !== undefined && (f.methods === undefined || f.methods.includes(method)) ? f.code : undefined;
    };
    const failCode = Date.now() < this.#forbiddenUntilMs ? 403 : ((sub !== undefined ? failing(`${rt.plural}/${sub}`) : undefined) ?? failing(rt.plural));
    if (failCode === 403) return this.#reply(res, 403, forbidden(rt, method, q, ns, name, sub));
    if (failCode !== undefined) return this.#reply(res, failCode, status(failCode, 'InternalError', `injected failure for ${rt.plural}`));
    const th = this.#throttle;
    if (th !== undefined && (th.plural === undefined || th.plural === rt.plural)) {
      if (--th.left <= 0) this.#throttle = undefined;
      const text = JSON.stringify(status(429, 'TooManyRequests', 'The server has received too many requests and has asked us to try again later.', { retryAfterSeconds: th.retryAfterSec ?? 0 }));
      res.writeHead(429, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text), ...(th.retryAfterSec !== undefined ? { 'Retry-After': String(th.retryAfterSec) } : {}) });
      res.end(text);
      return;
    }
    if (name === undefined) {
      if (method === 'GET') return q.watch === 'true' || q.watch === '1' ? this.#watch(res, rt, ns, q) : this.#list(res, rt, ns, q);
      if (method === 'POST') return this.#create(res, rt, ns, body);
      return this.#reply(res, 405, status(405, 'MethodNotAllowed', `${method} not allowed on a collection`));
    }
    const key = keyOf(rt.namespaced ? ns : undefined, name);
    const store = this.#stores.get(rtId(rt))!;
    const cur = store.get(key);
    const notFound = (): void => this.#reply(res, 404, status(404, 'NotFound', `${rt.plural} "${name}" not found`, { name, kind: rt.plural }));
    const out = (o: Obj): Obj => ({ kind: rt.kind, apiVersion: apiVersionOf(rt), ...o });
    switch (method) {
      case 'GET':
        return cur ? this.#reply(res, 200, out(cur)) : notFound();
      case 'DELETE': {
        const gone = this.#delete(rt, key);
        return gone ? this.#reply(res, 200, out(gone)) : notFound();
      }
      case 'PUT': {
        if (!cur) return notFound();
        const obj = JSON.parse(body) as Obj;
        const rv = obj.metadata?.resourceVersion;
        if (rv && rv !== cur.metadata.resourceVersion) return this.#conflict(res, rt, name);
        const next: Obj = sub === 'status' ? { ...cur, status: obj.status } : { ...obj, status: cur.status };
        next.metadata = { ...(sub === 'status' ? cur.metadata : obj.metadata) };
        return this.#reply(res, 200, out(this.#write(rt, next, 'MODIFIED')));
      }
      case 'PATCH': {
        if (!cur) return notFound();
        const ct = (req.headers['content-type'] ?? '').split(';')[0]!.trim();
        if (ct !== 'application/merge-patch+json') {
          return this.#reply(res, 415, status(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: application/merge-patch+json (got ${ct})`));
        }
        const patch = JSON.parse(body) as Obj;
        const rv = patch.metadata?.resourceVersion;
        if (rv && rv !== cur.metadata.resourceVersion) return this.#conflict(res, rt, name);
        const merged = mergePatch(cur, patch) as Obj;
        const next = sub === 'status' ? { ...cur, status: merged.status } : { ...merged, status: cur.status };
        if (next.status === undefined) delete next.status;
        return this.#reply(res, 200, out(this.#write(rt, next, 'MODIFIED')));
      }
      default:
        return this.#reply(res, 405, status(405, 'MethodNotAllowed', `${method} not allowed`));
    }
  }

  /** kube-apiserver's pod proxy (pkg/registry/core/pod/rest/subresources.go): to the pod's IP and the port asked for. */
  #podProxy(req: http.IncomingMessage, res: http.ServerResponse, ns: string, target: string, path: string): void {
    const [name = '', portText] = target.split(':');
    const pod = this.#stores.get(rtId(this.#type('pods')))!.get(keyOf(ns, name));
    if (!pod) return this.#reply(res, 404, status(404, 'NotFound', `pods "${name}" not found`, { name, kind: 'pods' }));
    const port = Number(portText ?? pod.spec?.containers?.[0]?.ports?.[0]?.containerPort);
    const ip = pod.status?.podIP;
    if (!ip || !(port > 0)) return this.#reply(res, 503, status(503, 'ServiceUnavailable', `no endpoints available for pod "${name}"`));
    const up = http.request({ host: ip, port, method: req.method, path, headers: { accept: req.headers.accept ?? '*/*' } }, (r) => {
      res.writeHead(r.statusCode ?? 502, { 'Content-Type': r.headers['content-type'] ?? 'application/octet-stream' });
      r.pipe(res);
    });
    up.on('error', (e) => this.#reply(res, 503, status(503, 'ServiceUnavailable', `error trying to reach service: ${e.message}`)));
    up.end();
  }

  #conflict(res: http.ServerResponse, rt: ResourceType, name: string): void {
    this.#reply(
      res,
      409,
      status(409, 'Conflict', `Operation cannot be fulfilled on ${rt.plural} "${name}": the object has been modified; please apply your changes to the latest version and try again`, { name, kind: rt.plural }),
    );
  }

  #create(res: http.ServerResponse, rt: ResourceType, ns: string | undefined, body: string): void {
    const obj = JSON.parse(body) as Obj;
    obj.metadata = { ...(obj.metadata ?? {}) };
    if (rt.namespaced) obj.metadata.namespace = ns ?? obj.metadata.namespace;
    if (!obj.metadata.name && obj.metadata.generateName) obj.metadata.name = `${obj.metadata.generateName}${randomUUID().slice(0, 5)}`;
    const key = keyOf(obj.metadata.namespace, obj.metadata.name);
    if (this.#stores.get(rtId(rt))!.has(key)) {
      return this.#reply(res, 409, status(409, 'AlreadyExists', `${rt.plural} "${obj.metadata.name}" already exists`, { name: obj.metadata.name, kind: rt.plural }));
    }
    const stored = this.#write(rt, obj, 'ADDED');
    this.#reply(res, 201, { kind: rt.kind, apiVersion: apiVersionOf(rt), ...stored });
  }

  #list(res: http.ServerResponse, rt: ResourceType, ns: string | undefined, q: Record<string, string>): void {
    const sel = { ns, labelSelector: q.labelSelector, fieldSelector: q.fieldSelector };
    const all = [...this.#stores.get(rtId(rt))!.values()].filter((o) => this.#visible(sel, o));
    // Pages (`limit`, `continue`): the token is the list's RV and the offset; a compacted RV answers 410, as etcd does.
    let rv = this.#rv;
    let offset = 0;
    if (q.continue && q.resourceVersion) return this.#reply(res, 400, status(400, 'BadRequest', 'specifying resource version is not allowed when using continue'));
    if (q.continue) {
      const [r, o] = q.continue.split(':').map(Number);
      if (r === undefined || o === undefined || r < this.#compactedRv) return this.#reply(res, 410, status(410, 'Expired', 'The provided continue parameter is too old to display a consistent list result.'));
      rv = r;
      offset = o;
    }
    const limit = Number(q.limit) > 0 ? Number(q.limit) : Infinity;
    const items = all.slice(offset, offset + limit);
    const more = offset + items.length < all.length;
    this.listPages++;
    this.#reply(res, 200, { kind: `${rt.kind}List`, apiVersion: apiVersionOf(rt), metadata: { resourceVersion: String(rv), ...(more ? { continue: `${rv}:${offset + items.length}` } : {}) }, items });
  }

  #watch(res: http.ServerResponse, rt: ResourceType, ns: string | undefined, q: Record<string, string>): void {
    const streaming = q.sendInitialEvents === 'true' && this.watchList !== 'ignored';
    if (streaming) {
      // apimachinery ValidateListOptions: the feature gate, then the options a streaming list needs.
      const why = !this.watchList
        ? 'sendInitialEvents: Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled'
        : q.allowWatchBookmarks !== 'true'
          ? 'allowWatchBookmarks: Required value: allowWatchBookmarks required when sendInitialEvents is specified'
          : q.resourceVersionMatch !== 'NotOlderThan'
            ? "resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"
            : undefined;
      if (why !== undefined) return this.#reply(res, 422, status(422, 'Invalid', `ListOptions.meta.k8s.io "" is invalid: ${why}`, { group: 'meta.k8s.io', kind: 'ListOptions' }));
    }
    const rvText = q.resourceVersion ?? '';
    const from = streaming || rvText === '' || rvText === '0' ? undefined : Number(rvText);
    if (from !== undefined && from < this.#compactedRv) {
      const st = status(410, 'Expired', `too old resource version: ${from} (${this.#compactedRv})`);
      if (this.expiredAs === 'http') return this.#reply(res, 410, st);
      res.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' });
      res.end(JSON.stringify({ type: 'ERROR', object: st }) + '\n');
      return;
    }
    res.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' });
    res.flushHeaders();
    const w: WatchConn = { res, rt, ns, labelSelector: q.labelSelector, fieldSelector: q.fieldSelector, hung: false };
    this.#watches.add(w);
    const openedAt = Date.now();
    const bookmarkMark = (extra?: Obj): string => JSON.stringify({ type: 'BOOKMARK', object: { kind: rt.kind, apiVersion: apiVersionOf(rt), metadata: { resourceVersion: String(this.#rv), ...extra } } }) + '\n';
    const timers: NodeJS.Timeout[] = [];
    res.on('close', () => {
      this.#watches.delete(w);
      for (const t of timers) clearTimeout(t);
      this.watchEnds.push({ plural: rt.plural, by: w.endedBy ?? 'client', openMs: Date.now() - openedAt });
    });
    if (from === undefined) {
      for (const o of this.#stores.get(rtId(rt))!.values()) this.#send(w, { rv: Number(o.metadata.resourceVersion), type: 'ADDED', object: o });
      if (streaming) res.write(bookmarkMark({ annotations: { 'k8s.io/initial-events-end': 'true' } }));
    } else {
      for (const ch of this.#history.get(rtId(rt))!) if (ch.rv > from) this.#send(w, ch);
    }
    const timeoutSec = Number(q.timeoutSeconds);
    if (timeoutSec > 0) {
      const timer = setTimeout(() => {
        w.endedBy = 'timeout';
        res.end();
      }, timeoutSec * 1000);
      timer.unref();
      timers.push(timer);
    }
    if (this.bookmarkEveryMs > 0 && q.allowWatchBookmarks === 'true') {
      const every = setInterval(() => {
        if (!w.hung) res.write(bookmarkMark());
      }, this.bookmarkEveryMs);
      every.unref();
      timers.push(every);
    }
  }
}
