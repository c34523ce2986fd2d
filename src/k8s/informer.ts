/**
 * A supervised informer: an initial read, then a watch from its resourceVersion, for one collection of the Kubernetes
 * API (docs/kubernetes.md "Apiserver outages", "What Herald costs the apiserver"), over Herald's API client
 * (client.ts). As client-go's reflector:
 *
 * - The initial read is a streaming list where the apiserver has it (a watch with `sendInitialEvents=true`,
 *   KEP-3157): the objects arrive one by one from the watch cache, a BOOKMARK annotated
 *   `k8s.io/initial-events-end` closes them, and the same stream goes on as the watch: one request, no page ever
 *   parsed whole. An apiserver that refuses it (400/422: the WatchList feature off) gets a LIST instead, and so does
 *   one that ends the stream before that bookmark (once). The LIST is served from the watch cache
 *   (`resourceVersion=0` first, the last resourceVersion after a watch's 410, a quorum read only after a LIST's own
 *   410), in pages (`limit`/`continue`, pages after the first without a resourceVersion) that time out after
 *   `listTimeoutMs`.
 * - The watch asks for bookmarks and for a server-side timeout picked at random in [5, 10) minutes
 *   (`minWatchTimeoutSec` and twice that), then re-watches at once from the last resourceVersion: each watch reopens
 *   about every 7.5 minutes. The client never ends a quiet watch sooner: its own silence limit is the server's timeout
 *   plus 30 s (a hung apiserver), and a dead connection is found by TCP keepalive (client.ts `TCP_KEEPALIVE`).
 *   A 410 Expired (an ERROR event or an HTTP 410) makes it read the collection again: objects that are gone are then
 *   deleted.
 * - Every other failure (apiserver unreachable, 5xx, 403, a 429 after its Retry-After retries) is retried with
 *   jittered exponential backoff (`initialBackoffMs` doubling to `maxBackoffMs`, reset when data arrives). The cache is
 *   never cleared by an outage.
 * - The informer keeps no objects of its own: its cache is the source's object store (`InformerCache`), so each
 *   object is held once, trimmed (object-store.ts). An event whose resourceVersion the cache already holds is
 *   dropped.
 *
 * Events: 'add' (obj), 'update' (obj), 'delete' (obj), 'synced' () once after the first full read, 'error' (err)
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
  /** Successful initial reads, streamed or listed (first sync + relists after 410). */
  lists: number;
  /** Of `lists`, those streamed (`sendInitialEvents`); the others were LISTs. */
  streamedLists: number;
  /** Watch (re)connect attempts. */
  connects: number;
  /**
   * Time the last watch stream opened (the apiserver answered 200). A watch ends after its server-side timeout
   * (5–10 min) and the next one opens, so this stays within 10 minutes while the watch works.
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
  /**
   * Abort a watch after this many ms without a byte and re-watch at once from the last resourceVersion. Default: the
   * watch's server-side timeout plus {@link WATCH_GRACE_MS}, never shorter (tests set less).
   */
  watchTimeoutMs?: number;
  /** The shortest server-side watch timeout, s: each watch asks for a random one in [this, 2 × this) (default 300, client-go's). */
  minWatchTimeoutSec?: number;
  /** Try the streaming list first (default true); false: always LIST. */
  streamingList?: boolean;
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

/** How long past its server-side timeout a silent watch is kept before the client gives up on it (a hung apiserver). */
export const WATCH_GRACE_MS = 30_000;

/** client-go's reflector: 5 minutes, so every watch asks for 5 to 10. */
export const MIN_WATCH_TIMEOUT_SEC = 300;

/** The annotation of the BOOKMARK that ends a streaming list's initial events (KEP-3157). */
export const INITIAL_EVENTS_END = 'k8s.io/initial-events-end';

/**
 * The server-side timeout a watch asks for, s: uniform in [min, 2 × min), so that many clients' re-watches spread
 * (client-go reflector `watch`: `minWatchTimeout * (rand + 1)`).
 */
export function watchTimeoutSeconds(minSec: number, random: number = Math.random()): number {
  return Math.floor(minSec * (1 + random));
}

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
  /** Where the watch goes on from; '' until the initial read is complete (and again after a 410). */
  #resourceVersion = '';
  /** The resourceVersion the next LIST asks for: "0" (any, the watch cache), the last one known, or "" (quorum). */
  #listResourceVersion = '0';
  /** The apiserver serves streaming lists (until it refuses one). */
  #streaming: boolean;
  /** The last streaming list ended before its initial events did: the next read is a LIST. */
  #listOnce = false;
  #backoffMs = 0;
  #restartTimer: TimerHandle | undefined;
  #wakeRestart: (() => void) | undefined;
  readonly stats: InformerStats = {
    synced: false,
    notServed: false,
    restarts: 0,
    errors: 0,
    lists: 0,
    streamedLists: 0,
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
    this.#streaming = opts.streamingList !== false;
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
        let quiet: boolean;
        if (this.#resourceVersion === '' && this.#streaming && !this.#listOnce) {
          quiet = await this.#watch(abort.signal, live, firstAttempt);
        } else {
          if (this.#resourceVersion === '') {
            this.#listOnce = false;
            try {
              await this.#list(abort.signal, live);
            } finally {
              firstAttempt();
            }
          }
          firstAttempt();
          if (!live()) return;
          quiet = await this.#watch(abort.signal, live, undefined);
        }
        if (quiet && live()) await this.#pause(this.#nextBackoff(false), live, false);
      } catch (e) {
        firstAttempt();
        if (!live()) return;
        const code = apiErrorCode(e);
        if (e instanceof StreamingRefused) {
          this.#streaming = false; // this apiserver has no streaming list: LIST from now on
          continue;
        }
        if (code === 410) {
          // A watch's 410: LIST from the last resourceVersion (the watch cache has it); a LIST's own 410: a quorum read.
          this.#listResourceVersion = e instanceof ListExpired ? '' : this.#resourceVersion || this.#listResourceVersion;
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
      let page: ListPage;
      try {
        page = (await this.#o.client.request('GET', this.#o.path, {
          // A continued list carries its resourceVersion in the token: the apiserver refuses both.
          query: { limit: this.#o.pageSize ?? LIST_PAGE_SIZE, continue: cont, resourceVersion: cont === undefined ? this.#listResourceVersion : undefined, labelSelector: this.#o.labelSelector, fieldSelector: this.#o.fieldSelector },
          timeoutMs: this.#o.listTimeoutMs ?? 60_000,
          signal,
        })) as ListPage;
      } catch (e) {
        throw apiErrorCode(e) === 410 ? new ListExpired(e) : e;
      }
      if (!live()) return;
      for (const item of page.items ?? []) {
        const obj = item as KubeObject;
        seen.add(keyText(obj));
        this.#deliver(obj);
      }
      cont = page.metadata?.continue || undefined;
      rv = page.metadata?.resourceVersion ?? rv;
    } while (cont !== undefined);
    this.#initialReadDone(seen, rv, false);
  }

  /** After a complete initial read: delete what it did not hold, go on from `rv`, mark synced. */
  #initialReadDone(seen: ReadonlySet<string>, rv: string, streamed: boolean): void {
    const gone: KubeObject[] = [];
    for (const obj of this.#o.cache.objects()) if (!seen.has(keyText(obj))) gone.push(obj);
    for (const obj of gone) this.#emitObject('delete', obj);
    this.#resourceVersion = rv;
    this.#listResourceVersion = rv || '0';
    const now = this.#clock.now();
    this.stats.lists++;
    if (streamed) this.stats.streamedLists++;
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
   * One watch until the apiserver ends it: from the current resourceVersion, or, with `initialRead`, a streaming list
   * (the initial events, their closing BOOKMARK, then the watch; `initialRead` is called at that BOOKMARK).
   * @returns true when it ended quickly without delivering anything (the caller pauses before the next one)
   * @throws ApiError 410 when the resourceVersion is too old (the caller lists again), StreamingRefused when the
   *   apiserver refuses a streaming list, any other failure
   */
  async #watch(signal: AbortSignal, live: () => boolean, initialRead: (() => void) | undefined): Promise<boolean> {
    this.stats.connects++;
    const openedAt = this.#clock.now();
    const seen: WatchSeen = { events: 0, error: undefined, initial: initialRead !== undefined ? new Set<string>() : undefined };
    const timeoutSeconds = watchTimeoutSeconds(this.#o.minWatchTimeoutSec ?? MIN_WATCH_TIMEOUT_SEC);
    const streaming = initialRead !== undefined ? { sendInitialEvents: true, resourceVersionMatch: 'NotOlderThan' } : {};
    const query = { ...streaming, resourceVersion: this.#resourceVersion, allowWatchBookmarks: true, timeoutSeconds, labelSelector: this.#o.labelSelector, fieldSelector: this.#o.fieldSelector };
    // A watch that opens is allowed: a 403 seen before (e.g. an apiserver just started) is over.
    const onOpen = () => {
      this.stats.forbidden = '';
      this.stats.lastConnectAtMs = this.#clock.now();
    };
    const inactivityMs = this.#o.watchTimeoutMs ?? timeoutSeconds * 1000 + WATCH_GRACE_MS;
    try {
      await this.#o.client.watch(this.#o.path, { query, inactivityMs, signal, onOpen }, (type, object) => {
        if (live() && seen.error === undefined) this.#onWatchEvent(type, object, seen, initialRead);
      });
    } catch (e) {
      const code = apiErrorCode(e);
      if (initialRead !== undefined && (code === 400 || code === 422)) throw new StreamingRefused(e);
      // Silence for watchTimeoutMs: re-watch at once (the next request's own timeout bounds a hung apiserver).
      if (!(e instanceof ApiTimeoutError)) throw e;
    }
    if (seen.error !== undefined) throw seen.error;
    if (seen.initial !== undefined && live()) {
      // Ended before its initial events did: an apiserver that ignores sendInitialEvents, or one that went away.
      this.#listOnce = true;
      return false;
    }
    return seen.events === 0 && this.#clock.now() - openedAt < QUICK_WATCH_MS;
  }

  /**
   * One watch event; an ERROR event (410 Expired, most often) is kept in `seen.error` and ends the watch. While
   * `seen.initial` is set (a streaming list's initial events), the resourceVersion stays '' (a cut stream starts the
   * read again) and the keys seen are kept, until the BOOKMARK that ends them.
   */
  #onWatchEvent(type: string, object: unknown, seen: WatchSeen, initialRead: (() => void) | undefined): void {
    const obj = object as KubeObject;
    switch (type) {
      case 'ADDED':
      case 'MODIFIED':
        seen.events++;
        seen.initial?.add(keyText(obj));
        this.#deliver(obj);
        break;
      case 'DELETED':
        seen.events++;
        seen.initial?.delete(keyText(obj));
        if (this.#o.cache.versionOf(obj) !== undefined) this.#emitObject('delete', obj);
        break;
      case 'BOOKMARK':
        if (seen.initial !== undefined && obj?.metadata?.annotations?.[INITIAL_EVENTS_END] === 'true') {
          const keys = seen.initial;
          seen.initial = undefined;
          this.#initialReadDone(keys, obj.metadata?.resourceVersion ?? '', true);
          initialRead?.();
          return;
        }
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
    if (rv && seen.initial === undefined) this.#resourceVersion = rv;
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

/** What one watch has seen so far. */
interface WatchSeen {
  events: number;
  error: ApiError | undefined;
  /** During a streaming list's initial events: the keys seen. */
  initial: Set<string> | undefined;
}

/** The apiserver refused a streaming list (400/422: the WatchList feature is off). */
class StreamingRefused extends Error {
  constructor(cause: unknown) {
    super(`streaming list refused: ${errText(cause)}`, { cause });
    this.name = 'StreamingRefused';
  }
}

/** A LIST answered 410 (its resourceVersion or continue token is too old). */
class ListExpired extends Error {
  readonly code = 410;
  constructor(cause: unknown) {
    super(errText(cause), { cause });
    this.name = 'ListExpired';
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
