/**
 * Calls across a worker thread boundary, shared by bgp/'s two threads: the speaker thread (bgp/speaker-thread/) and
 * the BFD thread (bgp/bfd/handle.ts, worker.ts). A table of methods (method → argument tuple) types both ends:
 *
 * - the caller numbers each call (`seq`) and posts `{type: 'call', seq, method, args}`; {@link PendingCalls} keeps
 *   the calls waiting for their reply, settles them, and fails them all when the thread dies;
 * - the thread runs the method's handler ({@link answer}) and posts `{type: 'reply', seq, ok, result | error}`; an
 *   error crosses as {@link ErrorData} (name, message and the Node.js system error fields), rebuilt on the caller's
 *   side by {@link rebuildError}.
 *
 * What else a thread sends (events, views, notices) is the thread's own vocabulary, beside the replies. Every message
 * is plain structured-clone data. Threads start through bgp/thread-entry.js ({@link spawnWorker}).
 */
import { Worker } from 'node:worker_threads';
import type { WorkerOptions } from 'node:worker_threads';

/** A table of calls: each method's argument tuple. */
export type CallTable<T> = { readonly [K in keyof T]: readonly unknown[] };

/** One call of the table `T`, caller → thread. */
export type CallMessage<T extends CallTable<T>, K extends keyof T = keyof T> = {
  [P in K]: { readonly type: 'call'; readonly seq: number; readonly method: P; readonly args: T[P] };
}[K];

/** The outcome of the call numbered `seq`, thread → caller: its result (`R`, none for most calls) or its error. */
export type ReplyMessage<R> =
  | { readonly type: 'reply'; readonly seq: number; readonly ok: true; readonly result?: R }
  | { readonly type: 'reply'; readonly seq: number; readonly ok: false; readonly error: ErrorData };

/** The thread's handler of each method of `T`, answering `R` or nothing, at once or later. */
export type CallHandlers<T extends CallTable<T>, R> = { readonly [K in keyof T]: (...args: T[K]) => R | void | Promise<R | void> };

/** One end of a channel (a worker's parentPort, a Worker, a MessagePort). */
export interface ChannelEnd<In, Out> {
  postMessage(message: Out, transfer?: readonly ArrayBuffer[]): void;
  on(event: 'message', listener: (message: In) => void): unknown;
}

/** An Error as it crosses: name, message and the Node.js system error fields callers read (listen failures). */
export interface ErrorData {
  readonly name: string;
  readonly message: string;
  readonly code?: string;
  readonly syscall?: string;
  readonly address?: string;
  readonly port?: number;
}

/** `err` (anything thrown) as ErrorData. */
export function errorData(err: unknown): ErrorData {
  if (!(err instanceof Error)) return { name: 'Error', message: String(err) };
  const e: NodeJS.ErrnoException & { address?: unknown; port?: unknown } = err;
  return {
    name: e.name,
    message: e.message,
    ...(typeof e.code === 'string' ? { code: e.code } : {}),
    ...(e.syscall !== undefined ? { syscall: e.syscall } : {}),
    ...(typeof e.address === 'string' ? { address: e.address } : {}),
    ...(typeof e.port === 'number' ? { port: e.port } : {}),
  };
}

/**
 * The Error of its channel form: an Error (or what `make` builds for its name, e.g. a RouteError) with the name,
 * code, syscall, address and port it had.
 */
export function rebuildError(d: ErrorData, make: (d: ErrorData) => Error | undefined = () => undefined): Error {
  const err: NodeJS.ErrnoException & { address?: string; port?: number } = make(d) ?? new Error(d.message);
  if (d.name !== err.name) err.name = d.name;
  if (d.code !== undefined) err.code = d.code;
  if (d.syscall !== undefined) err.syscall = d.syscall;
  if (d.address !== undefined) err.address = d.address;
  if (d.port !== undefined) err.port = d.port;
  return err;
}

/** Runs the handler of `m` (the one place where a call meets its handler, typed by method). */
function dispatch<T extends CallTable<T>, R, K extends keyof T>(handlers: CallHandlers<T, R>, m: CallMessage<T, K>): R | void | Promise<R | void> {
  const handler: (...args: T[K]) => R | void | Promise<R | void> = handlers[m.method];
  return handler(...m.args);
}

/**
 * Runs call `m` on its handler and hands its reply to `reply`: at once when the handler throws, once its value (or
 * Promise) settles otherwise. Returns when the handler has returned.
 */
export function answer<T extends CallTable<T>, R>(handlers: CallHandlers<T, R>, m: CallMessage<T>, reply: (r: ReplyMessage<R>) => void): void {
  let result: R | void | Promise<R | void>;
  try {
    result = dispatch(handlers, m);
  } catch (err) {
    reply({ type: 'reply', seq: m.seq, ok: false, error: errorData(err) });
    return;
  }
  void Promise.resolve(result).then(
    (r) => reply(r === undefined ? { type: 'reply', seq: m.seq, ok: true } : { type: 'reply', seq: m.seq, ok: true, result: r }),
    (err: unknown) => reply({ type: 'reply', seq: m.seq, ok: false, error: errorData(err) }),
  );
}

/** A call waiting for its reply: a query's settle functions, or a command whose failure goes to `failed`. */
type Pending<R> = { readonly resolve: (r: R | undefined) => void; readonly reject: (e: Error) => void } | { readonly failed: (e: Error) => void };

/** The caller's side: numbers the calls of table `T` and settles them by their replies. */
export class PendingCalls<T extends CallTable<T>, R> {
  #seq = 0;
  readonly #pending = new Map<number, Pending<R>>();
  readonly #rebuild: (d: ErrorData) => Error;

  /** @param rebuild the Error of a reply's ErrorData (default: {@link rebuildError}) */
  constructor(rebuild: (d: ErrorData) => Error = (d) => rebuildError(d)) {
    this.#rebuild = rebuild;
  }

  /** The number of the last call made (0 before the first). */
  get lastSeq(): number {
    return this.#seq;
  }

  /**
   * Numbers a call and hands it to `post`, unless `refused` (why it cannot be posted now) is given: then the call
   * fails with it at once. Resolves with the reply's result; rejects with the thread's error.
   */
  call<K extends keyof T>(method: K, args: T[K], post: (m: CallMessage<T, K>) => void, refused?: Error): Promise<R | undefined> {
    return new Promise((resolve, reject) => this.#post(method, args, post, { resolve, reject }, refused));
  }

  /** Numbers a command and hands it to `post`; its failure (or `refused`) goes to `failed`. Returns its number. */
  send<K extends keyof T>(method: K, args: T[K], post: (m: CallMessage<T, K>) => void, failed: (e: Error) => void, refused?: Error): number {
    return this.#post(method, args, post, { failed }, refused);
  }

  /** Settles the call `reply` answers (a reply to no waiting call is ignored). */
  settle(reply: ReplyMessage<R>): void {
    const p = this.#pending.get(reply.seq);
    if (p === undefined) return;
    this.#pending.delete(reply.seq);
    if (reply.ok) {
      if ('resolve' in p) p.resolve(reply.result);
    } else {
      const err = this.#rebuild(reply.error);
      if ('reject' in p) p.reject(err);
      else p.failed(err);
    }
  }

  /** Rejects every waiting query with `err` (commands are dropped: their thread is gone) and forgets them all. */
  failAll(err: Error): void {
    for (const p of this.#pending.values()) if ('reject' in p) p.reject(err);
    this.#pending.clear();
  }

  #post<K extends keyof T>(method: K, args: T[K], post: (m: CallMessage<T, K>) => void, pending: Pending<R>, refused: Error | undefined): number {
    const seq = ++this.#seq;
    if (refused !== undefined) {
      if ('reject' in pending) pending.reject(refused);
      return seq;
    }
    this.#pending.set(seq, pending);
    post({ type: 'call', seq, method, args });
    return seq;
  }
}

/**
 * Starts a worker thread running the TypeScript module `module` (a file URL) through bgp/thread-entry.js, which turns
 * on the module compile cache in the thread first (docs/architecture.md "Threads").
 */
export function spawnWorker(module: URL, options: Omit<WorkerOptions, 'argv'> = {}): Worker {
  return new Worker(new URL('./thread-entry.js', import.meta.url), { ...options, argv: [module.href] });
}
