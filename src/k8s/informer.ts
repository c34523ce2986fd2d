/**
 * Supervised informer over @kubernetes/client-node 2.x `ListWatch` (docs/kubernetes.md "Apiserver outages").
 *
 * client-node's informer STOPS after any error other than 410/inactivity timeout (list failure,
 * non-200 watch, connection refused/reset). This wrapper restarts it with jittered exponential
 * backoff (`initialBackoffMs` doubling to `maxBackoffMs`, reset when data arrives), ignores the
 * AbortError that `stop()`/`start()` provoke, catches exceptions of our handlers (client-node
 * would turn them into unhandled rejections) and aborts watches that were still waiting for
 * headers when stopped. The cache is never cleared by an outage: a restart re-watches from the
 * last resourceVersion, and only a relist (after 410) replaces the contents, emitting `delete`
 * for objects that are gone.
 *
 * Events: 'add' (obj), 'update' (obj), 'delete' (obj), 'synced' () once after the first full
 * list, 'error' (err) for every failure (already handled by a restart; for logs), 'restart'
 * (delayMs) when a restart is scheduled.
 */
import { EventEmitter } from 'node:events';
import type { KubeConfig, KubernetesListObject, KubernetesObject } from '@kubernetes/client-node';
import { ListWatch, Watch } from '@kubernetes/client-node';
import type { Clock, TimerHandle } from '../../bgp/index.ts';
import { realClock } from '../../bgp/index.ts';
import { apiErrorText } from './forbidden.ts';

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
  /** Watch (re)connect attempts ('connect' events). */
  connects: number;
  /**
   * Time the last watch stream opened (the apiserver answered 200). client-node ends a watch after 30 s without data
   * and opens the next one, so for a quiet resource this stays recent while the watch works.
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
  /** Objects in the cache. */
  objects: number;
}

/** Options of `SupervisedInformer`. */
export interface SupervisedInformerOptions<T extends KubernetesObject> {
  kc: KubeConfig;
  /** Informer name for logs/metrics, e.g. "services". */
  name: string;
  /** Collection path, e.g. "/api/v1/services". */
  path: string;
  /** List function applying the same selectors as the watch. */
  listFn: () => Promise<KubernetesListObject<T>>;
  labelSelector?: string;
  fieldSelector?: string;
  /** First restart delay in ms (default 1000). */
  initialBackoffMs?: number;
  /** Restart delay cap in ms (default 30000). */
  maxBackoffMs?: number;
  /** Give up on a list after this many ms and retry with backoff (default 60000). */
  listTimeoutMs?: number;
  /** Watch inactivity timeout in ms (client-node default 30000; lower it in tests). */
  watchTimeoutMs?: number;
  /** Delay before the informer's own re-watch after a quiet close (default: client-node's 1 s..30 s). */
  reconnectDelayFn?: (ms: number) => Promise<void>;
  /**
   * Optional resource: a 404 ("not served") or 403 (RBAC not granted) on list counts as synced with
   * an empty cache (`lastError` says why) and is retried every `maxBackoffMs`.
   */
  optional?: boolean;
  clock?: Clock;
}

/** A Watch that drops events after stop and aborts streams that connect after stop. */
class StoppableWatch extends Watch {
  stopped = false;
  readonly #open = new Set<AbortController>();
  readonly #onOpen: () => void;

  /** `onOpen`: called when a watch request was answered 200 (the stream is open). */
  constructor(kc: KubeConfig, timeoutMs: number | undefined, onOpen: () => void) {
    super(kc);
    // client-node keeps the watch request timeout in a private field without a setter or constructor option.
    if (timeoutMs !== undefined) Reflect.set(this, 'requestTimeoutMs', timeoutMs);
    this.#onOpen = onOpen;
  }

  override async watch(
    path: string,
    queryParams: Record<string, string | number | boolean | undefined>,
    callback: (phase: string, apiObj: unknown, watchObj?: unknown) => void,
    done: (err: unknown) => void,
  ): Promise<AbortController> {
    const box: { ctl?: AbortController; ended?: boolean } = {};
    const c = await super.watch(
      path,
      queryParams,
      (phase, obj, raw) => {
        if (!this.stopped) callback(phase, obj, raw);
      },
      (err) => {
        box.ended = true;
        if (box.ctl) this.#open.delete(box.ctl);
        done(err);
      },
    );
    box.ctl = c;
    this.#open.add(c);
    if (this.stopped) c.abort();
    // client-node settles a refused or failed request (done with the error) before it returns.
    else if (!box.ended) this.#onOpen();
    return c;
  }

  abortAll(): void {
    for (const c of this.#open) c.abort();
    this.#open.clear();
  }
}

function errText(e: unknown): string {
  if (e instanceof Error) {
    const code = (e as { code?: unknown; statusCode?: unknown }).code ?? (e as { statusCode?: unknown }).statusCode;
    const cause = (e as { cause?: { code?: string; message?: string } }).cause;
    return `${e.name}: ${e.message}${code !== undefined ? ` (code ${String(code)})` : ''}${cause?.code ? ` (${cause.code})` : ''}`;
  }
  return String(e);
}

function httpCode(e: unknown): number | undefined {
  const x = e as { code?: unknown; statusCode?: unknown };
  const c = typeof x?.code === 'number' ? x.code : typeof x?.statusCode === 'number' ? x.statusCode : undefined;
  return c;
}

/** See module doc. */
export class SupervisedInformer<T extends KubernetesObject> extends EventEmitter {
  readonly name: string;
  readonly #opts: SupervisedInformerOptions<T>;
  readonly #clock: Clock;
  readonly #watch: StoppableWatch;
  readonly #lw: ListWatch<T>;
  #running = false;
  #backoffMs = 0;
  #restartTimer: TimerHandle | undefined;
  #syncPending = false;
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

  constructor(opts: SupervisedInformerOptions<T>) {
    super();
    this.name = opts.name;
    this.#opts = opts;
    this.#clock = opts.clock ?? realClock;
    // A watch that opens is allowed: a 403 seen before (e.g. an apiserver just started) is over.
    this.#watch = new StoppableWatch(opts.kc, opts.watchTimeoutMs, () => {
      this.stats.forbidden = '';
      this.stats.lastConnectAtMs = this.#clock.now();
    });
    const listTimeoutMs = opts.listTimeoutMs ?? 60_000;
    const listFn = async (): Promise<KubernetesListObject<T>> => {
      // client-node puts no timeout on a list: a hung apiserver would stall the informer forever.
      let timer: ReturnType<typeof setTimeout> | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`list ${opts.path} timed out after ${listTimeoutMs} ms`)), listTimeoutMs);
      });
      let list: KubernetesListObject<T>;
      try {
        list = await Promise.race([opts.listFn(), timeout]);
      } finally {
        clearTimeout(timer);
      }
      // client-node applies the list synchronously after this promise settles; mark synced after that.
      this.#syncPending = true;
      setImmediate(() => this.#listApplied());
      return list;
    };
    const lwOptions = opts.reconnectDelayFn ? { delayFn: opts.reconnectDelayFn } : undefined;
    this.#lw = new ListWatch<T>(opts.path, this.#watch, listFn, false, opts.labelSelector, opts.fieldSelector, lwOptions);
    this.#lw.on('add', (o) => this.#emitSafe('add', o));
    this.#lw.on('update', (o) => this.#emitSafe('update', o));
    this.#lw.on('delete', (o) => this.#emitSafe('delete', o));
    this.#lw.on('connect', () => {
      this.stats.connects++;
    });
    this.#lw.on('error', (e) => this.#onError(e));
  }

  /** True once the first full list has been applied; stays true through outages. */
  synced(): boolean {
    return this.stats.synced;
  }

  /** Cached objects (never cleared by an outage). */
  list(): readonly T[] {
    return this.#lw.list();
  }

  /** Start listing/watching. Resolves after the first attempt (successful or not); never rejects. */
  async start(): Promise<void> {
    if (this.#running) return;
    this.#running = true;
    this.#watch.stopped = false;
    await this.#startOnce();
  }

  /** Stop watching and cancel a pending restart. The cache is kept. */
  async stop(): Promise<void> {
    this.#running = false;
    this.#watch.stopped = true;
    if (this.#restartTimer !== undefined) this.#clock.clearTimer(this.#restartTimer);
    this.#restartTimer = undefined;
    await this.#lw.stop();
    this.#watch.abortAll();
  }

  async #startOnce(): Promise<void> {
    try {
      await this.#lw.start();
    } catch (e) {
      // A handler threw during the initial list (we catch ours, so this is unexpected) or the watch setup failed.
      this.#onError(e);
    }
  }

  #listApplied(): void {
    if (!this.#syncPending) return;
    this.#syncPending = false;
    const now = this.#clock.now();
    this.stats.lists++;
    this.stats.lastListAtMs = now;
    this.stats.lastEventAtMs = now;
    this.stats.notServed = false;
    this.stats.forbidden = '';
    this.stats.objects = this.#lw.list().length;
    this.#backoffMs = 0;
    if (!this.stats.synced) {
      this.stats.synced = true;
      this.#emitSafe('synced');
    }
  }

  #emitSafe(event: string, ...args: unknown[]): void {
    if (event === 'add' || event === 'update' || event === 'delete') {
      this.stats.lastEventAtMs = this.#clock.now();
      // O(1) bookkeeping: client-node fires 'add' only for objects new to its cache.
      if (event === 'add') this.stats.objects++;
      else if (event === 'delete') this.stats.objects = Math.max(0, this.stats.objects - 1);
      this.stats.forbidden = '';
      this.#backoffMs = 0;
    }
    try {
      this.emit(event, ...args);
    } catch (e) {
      // A throwing listener must not kill the process nor the informer.
      this.stats.lastError = `listener for ${event} threw: ${errText(e)}`;
    }
  }

  #onError(e: unknown): void {
    // Our own stop() aborts the watch with an AbortError: ignored. While running, any error
    // (including an AbortError from a stop/start race inside client-node) leaves the informer
    // stopped, so it is restarted.
    if (!this.#running) return;
    this.stats.errors++;
    this.stats.lastError = errText(e);
    const code = httpCode(e);
    if (code === 403) {
      // client-node: a refused list throws ApiException (`code`), a refused watch an Error with `statusCode`.
      const verb = typeof (e as { statusCode?: unknown }).statusCode === 'number' ? 'watch' : 'list';
      this.stats.forbidden = `${verb} ${this.#opts.path.split('/').pop()}: ${apiErrorText(e)}`;
    }
    // Optional resource not served (404) or not granted (403): proceed without it rather than never syncing.
    const unavailable = this.#opts.optional === true && (code === 404 || code === 403);
    if (unavailable) this.stats.notServed = code === 404;
    if (unavailable && !this.stats.synced) {
      this.stats.synced = true;
      this.#emitSafe('synced');
    }
    if (this.listenerCount('error') > 0) this.#emitSafe('error', e);
    if (this.#restartTimer !== undefined) return;
    const max = this.#opts.maxBackoffMs ?? 30_000;
    const base = this.#opts.initialBackoffMs ?? 1000;
    this.#backoffMs = unavailable ? max : this.#backoffMs === 0 ? base : Math.min(this.#backoffMs * 2, max);
    const delayMs = Math.round(this.#backoffMs * (0.8 + Math.random() * 0.4));
    this.stats.restarts++;
    this.#emitSafe('restart', delayMs);
    this.#restartTimer = this.#clock.setTimer(() => {
      this.#restartTimer = undefined;
      if (this.#running) void this.#startOnce();
    }, delayMs);
  }
}
