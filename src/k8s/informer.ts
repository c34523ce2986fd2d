/**
 * A supervised informer: list, then watch from the list's resourceVersion, for one collection of the Kubernetes API
 * (docs/kubernetes.md "Apiserver outages"), over Herald's API client (client.ts).
 *
 * - The list is read in pages (`limit`/`continue`, as client-go's reflector does), so the whole collection is never
 *   one string in memory; a page that times out (`listTimeoutMs`) fails the list.
 * - The watch asks for bookmarks and for a server-side timeout of 5–10 minutes (client-go's), and is aborted after
 *   `watchTimeoutMs` (30 s) without a byte, a hung apiserver or network; either way it re-watches at once from the
 *   last resourceVersion (a quiet resource is re-watched every 30 s). A 410 Expired (an ERROR event or an HTTP 410) makes it list again: objects that are gone are
 *   then deleted.
 * - Every other failure (apiserver unreachable, 5xx, 403) is retried with jittered exponential backoff
 *   (`initialBackoffMs` doubling to `maxBackoffMs`, reset when data arrives). The cache is never cleared by an
 *   outage.
 * - The informer keeps no objects of its own: its cache is the source's object store (`InformerCache`), so each
 *   object is held once, trimmed (object-store.ts). An event whose resourceVersion the cache already holds is
 *   dropped.
 *
 * Events: 'add' (obj), 'update' (obj), 'delete' (obj), 'synced' () once after the first full list, 'error' (err)
 * for every failure (already handled by a retry; for logs), 'restart' (delayMs) when a retry is scheduled.
 * Exceptions of listeners are caught (recorded in `stats.lastError`).
 */
import { EventEmitter } from 'node:events';
import type { Clock, TimerHandle } from '../../bgp/main-thread.ts';
import { realClock } from '../../bgp/main-thread.ts';
import type { KubeClient } from './client.ts';
import { ApiError, ApiTimeoutError } from './client.ts';
import { apiErrorCode, apiErrorText } from './forbidden.ts';
import type { InformerCache } from './object-store.ts';
import type { KubeObject } from './types.ts';

/** Plain-number counters for metrics. Times are ms since the epoch (0 = never). */
export interface InformerStats {
  synced: boolean;
  /** The API answered 404 for the list: the resource is not served (e.g. ServiceCIDR before 1.33). */
  notServed: boolean;
  /** Restarts after an error. */
  restarts: number;
  /** Errors seen (list or watch). */
  errors: number;
  /** Successful lists (first sync + relists after 410). */
  lists: number;
  /** Watch (re)connect attempts. */
  connects: number;
  /**
   * Time the last watch stream opened (the apiserver answered 200). A watch ends after its server-side timeout
   * (5–10 min) or 30 s without data (`watchTimeoutMs`) and the next one opens, so this stays recent while the watch
   * works.
   */
  lastConnectAtMs: number;
  /** Last add/update/delete/list time. */
  lastEventAtMs: number;
  /** Time of the last successful list. */
  lastListAtMs: number;
  /** Message of the last error, '' if none. */
  lastError: string;
  /** The list or watch is refused with 403 (RBAC): "list services: HTTP 403: <apiserver message>"; '' once data flows again. */
  forbidden: string;
  /** Objects delivered and not deleted. */
  objects: number;
}

/** Objects per list page when the options give none (see `SupervisedInformerOptions.pageSize`). */
export const LIST_PAGE_SIZE = 100;

/** Options of `SupervisedInformer`. */
export interface SupervisedInformerOptions {
  client: KubeClient;
  /** Informer name for logs/metrics, e.g. "services". */
  name: string;
  /** Collection path, e.g. "/api/v1/services". */
  path: string;
  /** Where delivered objects are kept (the source's object store). */
  cache: InformerCache;
  labelSelector?: string;
  fieldSelector?: string;
  /** First restart delay in ms (default 1000). */
  initialBackoffMs?: number;
  /** Restart delay cap in ms (default 30000). */
  maxBackoffMs?: number;
  /** Give up on a list page after this many ms and retry with backoff (default 60000). */
  listTimeoutMs?: number;
  /** Abort a watch after this many ms without a byte and re-watch at once from the last resourceVersion (default 30000). */
  watchTimeoutMs?: number;
  /**
   * Objects per list page (default {@link LIST_PAGE_SIZE}). Smaller than client-go's 500: a page of served objects
   * (managedFields and all) is parsed whole before it is trimmed, and 500 of them made the initial sync's peak RSS
   * ~10 MiB higher at 10,000 Services (docs/benchmarks.md "Levers"), for fewer round trips only.
   */
  pageSize?: number;
  /**
   * Optional resource: a 404 ("not served") or 403 (RBAC not granted) on list counts as synced with
   * an empty cache (`lastError` says why) and is retried every `maxBackoffMs`.
   */
  optional?: boolean;
  clock?: Clock;
}

/** A watch that ended without an event soon after it opened is followed by a pause (a server closing at once). */
const QUICK_WATCH_MS = 1000;

interface ListPage {
  metadata?: { resourceVersion?: string; continue?: string };
  items?: unknown[];
}

const keyText = (o: KubeObject): string => `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;

/** See module doc. */
export class SupervisedInformer extends EventEmitter {
  readonly name: string;
  readonly #o: SupervisedInformerOptions;
  readonly #clock: Clock;
  #running = false;
  /** Bumped by every start/stop: a loop whose generation is stale ends. */
  #generation = 0;
  #abort: AbortController | undefined;
  #resourceVersion = '';
  #backoffMs = 0;
  #restartTimer: TimerHandle | undefined;
  #wakeRestart: (() => void) | undefined;
  readonly stats: InformerStats = {
    synced: false,
    notServed: false,
    restarts: 0,
    errors: 0,
    lists: 0,
    connects: 0,
    lastConnectAtMs: 0,
    lastEventAtMs: 0,
    lastListAtMs: 0,
    lastError: '',
    forbidden: '',
    objects: 0,
  };

  constructor(opts: SupervisedInformerOptions) {
    super();
    this.name = opts.name;
    this.#o = opts;
    this.#clock = opts.clock ?? realClock;
  }

  /** True once the first full list has been applied; stays true through outages. */
  synced(): boolean {
    return this.stats.synced;
  }

  /** Start listing/watching. Resolves after the first list attempt (successful or not); never rejects. */
  async start(): Promise<void> {
    if (this.#running) return;
    this.#running = true;
    const gen = ++this.#generation;
    let firstAttempt!: () => void;
    const attempted = new Promise<void>((r) => (firstAttempt = r));
    void this.#loop(gen, firstAttempt);
    await attempted;
  }

  /** Stop watching and cancel a pending restart. The cache is kept. */
  async stop(): Promise<void> {
    this.#running = false;
    this.#generation++;
    this.#abort?.abort();
    this.#abort = undefined;
    if (this.#restartTimer !== undefined) this.#clock.clearTimer(this.#restartTimer);
    this.#restartTimer = undefined;
    this.#wakeRestart?.();
  }

  async #loop(gen: number, firstAttempt: () => void): Promise<void> {
    const live = () => this.#running && gen === this.#generation;
    while (live()) {
      const abort = new AbortController();
      this.#abort = abort;
      try {
        if (this.#resourceVersion === '') {
          try {
            await this.#list(abort.signal, live);
          } finally {
            firstAttempt();
          }
        }
        firstAttempt();
        if (!live()) return;
        const quiet = await this.#watch(abort.signal, live);
        if (quiet && live()) await this.#pause(this.#nextBackoff(false), live, false);
      } catch (e) {
        firstAttempt();
        if (!live()) return;
        if (apiErrorCode(e) === 410) {
          this.#resourceVersion = '';
          continue;
        }
        await this.#pause(this.#failed(e), live, true);
      }
    }
  }

  /** List every page, deliver the changes, delete what is no longer listed, then mark synced. */
  async #list(signal: AbortSignal, live: () => boolean): Promise<void> {
    const seen = new Set<string>();
    let cont: string | undefined;
    let rv = '';
    do {
      const page = (await this.#o.client.request('GET', this.#o.path, {
        query: { limit: this.#o.pageSize ?? LIST_PAGE_SIZE, continue: cont, labelSelector: this.#o.labelSelector, fieldSelector: this.#o.fieldSelector },
        timeoutMs: this.#o.listTimeoutMs ?? 60_000,
        signal,
      })) as ListPage;
      if (!live()) return;
      for (const item of page.items ?? []) {
        const obj = item as KubeObject;
        seen.add(keyText(obj));
        this.#deliver(obj);
      }
      cont = page.metadata?.continue || undefined;
      rv = page.metadata?.resourceVersion ?? rv;
    } while (cont !== undefined);
    const gone: KubeObject[] = [];
    for (const obj of this.#o.cache.objects()) if (!seen.has(keyText(obj))) gone.push(obj);
    for (const obj of gone) this.#emitObject('delete', obj);
    this.#resourceVersion = rv;
    const now = this.#clock.now();
    this.stats.lists++;
    this.stats.lastListAtMs = now;
    this.stats.lastEventAtMs = now;
    this.stats.notServed = false;
    this.stats.forbidden = '';
    this.#backoffMs = 0;
    if (!this.stats.synced) {
      this.stats.synced = true;
      this.#emitSafe('synced');
    }
  }

  /**
   * One watch from the current resourceVersion until the apiserver ends it.
   * @returns true when it ended quickly without delivering anything (the caller pauses before the next one)
   * @throws ApiError 410 when the resourceVersion is too old (the caller lists again), any other failure
   */
  async #watch(signal: AbortSignal, live: () => boolean): Promise<boolean> {
    this.stats.connects++;
    const openedAt = this.#clock.now();
    const seen = { events: 0, error: undefined as ApiError | undefined };
    // A random server-side timeout spreads the re-watches of many clients (client-go's reflector: 5 to 10 minutes).
    // 4 to 8 minutes here, so a working watch reopens within the 10 minutes the stale-watch alert allows
    // (deploy/kubernetes/monitoring/prometheusrule.yaml).
    const timeoutSeconds = 240 + Math.floor(Math.random() * 240);
    const query = { resourceVersion: this.#resourceVersion, allowWatchBookmarks: true, timeoutSeconds, labelSelector: this.#o.labelSelector, fieldSelector: this.#o.fieldSelector };
    // A watch that opens is allowed: a 403 seen before (e.g. an apiserver just started) is over.
    const onOpen = () => {
      this.stats.forbidden = '';
      this.stats.lastConnectAtMs = this.#clock.now();
    };
    try {
      await this.#o.client.watch(this.#o.path, { query, inactivityMs: this.#o.watchTimeoutMs ?? 30_000, signal, onOpen }, (type, object) => {
        if (live() && seen.error === undefined) this.#onWatchEvent(type, object, seen);
      });
    } catch (e) {
      // Silence for watchTimeoutMs: re-watch at once (the next request's own timeout bounds a hung apiserver).
      if (!(e instanceof ApiTimeoutError)) throw e;
    }
    if (seen.error !== undefined) throw seen.error;
    return seen.events === 0 && this.#clock.now() - openedAt < QUICK_WATCH_MS;
  }

  /** One watch event; an ERROR event (410 Expired, most often) is kept in `seen.error` and ends the watch. */
  #onWatchEvent(type: string, object: unknown, seen: { events: number; error: ApiError | undefined }): void {
    const obj = object as KubeObject;
    switch (type) {
      case 'ADDED':
      case 'MODIFIED':
        seen.events++;
        this.#deliver(obj);
        break;
      case 'DELETED':
        seen.events++;
        if (this.#o.cache.versionOf(obj) !== undefined) this.#emitObject('delete', obj);
        break;
      case 'BOOKMARK':
        break;
      case 'ERROR': {
        const code = (object as { code?: unknown } | undefined)?.code;
        seen.error = new ApiError(`watch ${this.#o.path}`, typeof code === 'number' ? code : 500, object);
        return;
      }
      default:
        return;
    }
    const rv = obj?.metadata?.resourceVersion;
    if (rv) this.#resourceVersion = rv;
    this.#backoffMs = 0;
  }

  /** An object listed or watched: 'add' when new to the cache, 'update' when its resourceVersion changed. */
  #deliver(obj: KubeObject): void {
    const had = this.#o.cache.versionOf(obj);
    if (had === undefined) this.#emitObject('add', obj);
    else if (had !== obj.metadata?.resourceVersion) this.#emitObject('update', obj);
  }

  #emitObject(event: 'add' | 'update' | 'delete', obj: KubeObject): void {
    this.stats.lastEventAtMs = this.#clock.now();
    if (event === 'add') this.stats.objects++;
    else if (event === 'delete') this.stats.objects = Math.max(0, this.stats.objects - 1);
    this.stats.forbidden = '';
    this.#emitSafe(event, obj);
  }

  #emitSafe(event: string, ...args: unknown[]): void {
    try {
      this.emit(event, ...args);
    } catch (e) {
      // A throwing listener must not kill the process nor the informer.
      this.stats.lastError = `listener for ${event} threw: ${e instanceof Error ? e.message : String(e)}`;
    }
  }

  /** Record a failure; returns the delay before the next attempt. */
  #failed(e: unknown): number {
    this.stats.errors++;
    this.stats.lastError = errText(e);
    const code = apiErrorCode(e);
    if (code === 403) {
      const verb = e instanceof ApiError && e.message.startsWith('watch ') ? 'watch' : 'list';
      this.stats.forbidden = `${verb} ${this.#o.path.split('/').pop()}: ${apiErrorText(e)}`;
    }
    // Optional resource not served (404) or not granted (403): proceed without it rather than never syncing.
    const unavailable = this.#o.optional === true && (code === 404 || code === 403);
    if (unavailable) this.stats.notServed = code === 404;
    if (unavailable && !this.stats.synced) {
      this.stats.synced = true;
      this.#emitSafe('synced');
    }
    if (this.listenerCount('error') > 0) this.#emitSafe('error', e);
    return this.#nextBackoff(unavailable);
  }

  #nextBackoff(unavailable: boolean): number {
    const max = this.#o.maxBackoffMs ?? 30_000;
    const base = this.#o.initialBackoffMs ?? 1000;
    this.#backoffMs = unavailable ? max : this.#backoffMs === 0 ? base : Math.min(this.#backoffMs * 2, max);
    return Math.round(this.#backoffMs * (0.8 + Math.random() * 0.4));
  }

  /** Wait `delayMs` on the clock (a stop ends the wait); `restart`: after a failure (counted and emitted). */
  async #pause(delayMs: number, live: () => boolean, restart: boolean): Promise<void> {
    if (!live()) return;
    if (restart) {
      this.stats.restarts++;
      this.#emitSafe('restart', delayMs);
    }
    await new Promise<void>((resolveWait) => {
      this.#wakeRestart = resolveWait;
      this.#restartTimer = this.#clock.setTimer(() => {
        this.#restartTimer = undefined;
        resolveWait();
      }, delayMs);
    });
    this.#wakeRestart = undefined;
  }
}

function errText(e: unknown): string {
  if (e instanceof ApiError) return e.message;
  if (e instanceof Error) {
    const code = (e as { code?: unknown }).code;
    const cause = (e as { cause?: { code?: string } }).cause;
    return `${e.name}: ${e.message}${code !== undefined ? ` (code ${String(code)})` : ''}${cause?.code ? ` (${cause.code})` : ''}`;
  }
  return String(e);
}
