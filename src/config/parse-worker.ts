/**
 * Parsing big input where running out of memory cannot take the daemon down (issue 35 N2, N3). The YAML library
 * needs about 100 bytes of memory per byte of text it parses whole (docs/operations.md "Limits"): a 2 MB `kind:
 * List` or a 15 MB configuration with a `%YAML` header asks for more than the pod has, and on the main thread that
 * was "JavaScript heap out of memory", exit 134, every BGP session gone.
 *
 * An input of {@link PARSE_IN_WORKER_BYTES} or more is parsed in a parse worker: a child process of its own (the
 * same Node.js, through bgp/thread-entry.js so its compile cache is on), whose V8 heap is capped with
 * `--max-old-space-size` at what the pod has free: the container's memory limit (HERALD_MEMORY_LIMIT_MIB, which the
 * DaemonSet sets, else this process's cgroup limit) less what this process uses now, a reserve and the worker's own
 * cost. When the parse does not fit, V8 ends the worker, not the daemon, and the input is refused with
 * {@link ParseMemoryError}, in words; the same when the kernel ends it or it takes too long. The worker ends with its
 * job, so its memory goes back to the system. Smaller input is parsed on the calling thread in slices (slices.ts),
 * where it costs at most a few MiB.
 *
 * A process, not a worker thread: V8's `--max-old-space-size`, which deploy/herald gives the daemon, is one value per
 * process and overrides a worker thread's `resourceLimits` (Node.js documents it), so a thread could not be held to
 * less than the daemon's own heap limit.
 *
 * A job is a module whose top level calls {@link serveParseJob} with a pure function of plain (structured-clone)
 * data: src/config/config-parse-job.ts (the configuration file), src/sources/manifest-parse-job.ts (one manifest
 * file).
 */
import { fork } from 'node:child_process';
import { getHeapStatistics } from 'node:v8';
import { fileURLToPath } from 'node:url';
import { THREAD_ENTRY_URL } from '../../bgp/main-thread.ts';
import { memoryLimitMiB } from '../../bin/node-settings.js';

/** Input of at least this many bytes is parsed in a worker (below it: at most a few MiB on the calling thread). */
export const PARSE_IN_WORKER_BYTES = 128 * 1024;
/** Memory kept free for the rest of the process while a worker parses, MiB. */
const RESERVE_MIB = 32;
/** What a worker costs besides its heap (a Node.js process, the modules it loads, the message back), MiB. */
const WORKER_BASE_MIB = 48;
/** Smallest heap worth starting a worker with, MiB. */
const MIN_HEAP_MIB = 16;
/** Heap of a parse worker when the process has no memory limit, MiB. */
const UNLIMITED_HEAP_MIB = 1024;
/** Longest a parse may take, ms. */
const DEFAULT_TIMEOUT_MS = 60_000;
/** Environment variable with the container's memory limit in MiB (the DaemonSet sets it from `limits.memory`). */
export const MEMORY_LIMIT_ENV = 'HERALD_MEMORY_LIMIT_MIB';

/** Input the pod has no memory to parse, or that took too long: the message says which and what to do. */
export class ParseMemoryError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ParseMemoryError';
  }
}

/**
 * Heap the YAML library needs per byte of one document it composes, at least (measured in a parse worker: a 1.6 MB
 * block-style `kind: List` parsed in a 101 MiB heap, 63 bytes per byte; 0.8 MB of flow-style configuration did not
 * parse in 44 MiB). A document past this estimate is refused before the parse; one under it may still run out of
 * heap, and is refused when it does.
 */
export const LIBRARY_HEAP_PER_BYTE = 60;

/**
 * Thrown by a job (in the worker) for input that cannot fit its heap, before parsing it: the parse would only run
 * into the limit after seconds of work. `needMib`: the least it would need.
 */
export class ParseBudgetExceeded extends Error {
  readonly needMib: number;
  constructor(bytes: number) {
    const needMib = Math.ceil((bytes * LIBRARY_HEAP_PER_BYTE) / 1048576);
    super(`needs at least ${needMib} MiB of heap to parse`);
    this.name = 'ParseBudgetExceeded';
    this.needMib = needMib;
  }
}

/**
 * The largest document (bytes) the YAML library may compose in this worker: its heap limit over
 * {@link LIBRARY_HEAP_PER_BYTE}; unlimited outside a parse worker.
 */
export function libraryMaxBytes(): number | undefined {
  return process.send === undefined ? undefined : Math.floor(getHeapStatistics().heap_size_limit / LIBRARY_HEAP_PER_BYTE);
}

/** The container's memory limit and where it was found, or undefined when the process has none. */
export interface MemoryLimit {
  mib: number;
  /** "HERALD_MEMORY_LIMIT_MIB" or "the cgroup". */
  source: string;
}

/**
 * The memory limit of this process's container: `HERALD_MEMORY_LIMIT_MIB` when set, else the smallest limit of this
 * process's cgroup and its ancestors (bin/node-settings.js `memoryLimitMiB`, which also sizes the daemon's own heap),
 * else undefined.
 */
export function memoryLimit(env: NodeJS.ProcessEnv = process.env): MemoryLimit | undefined {
  const mib = memoryLimitMiB(env);
  if (mib === undefined) return undefined;
  return { mib, source: env[MEMORY_LIMIT_ENV] !== undefined && env[MEMORY_LIMIT_ENV] !== '' ? MEMORY_LIMIT_ENV : 'the cgroup' };
}

/** The heap a parse worker may have now, and what it was derived from. */
export interface ParseBudget {
  /** V8 heap of the worker, MiB (below {@link MIN_HEAP_MIB}: no worker is started). */
  heapMib: number;
  limit: MemoryLimit | undefined;
  /** The process's resident memory when the budget was taken, MiB. */
  rssMib: number;
}

/** {@link ParseBudget} now: the limit less the process's RSS, a reserve and a worker's own cost. */
export function parseBudget(env: NodeJS.ProcessEnv = process.env, rssBytes: number = process.memoryUsage.rss()): ParseBudget {
  const limit = memoryLimit(env);
  const rssMib = Math.round(rssBytes / 1048576);
  const heapMib = limit === undefined ? UNLIMITED_HEAP_MIB : Math.min(UNLIMITED_HEAP_MIB, limit.mib - rssMib - RESERVE_MIB - WORKER_BASE_MIB);
  return { heapMib, limit, rssMib };
}

/** "the pod's memory limit of 320 MiB (HERALD_MEMORY_LIMIT_MIB), 140 MiB in use" */
function budgetText(b: ParseBudget): string {
  return b.limit === undefined ? `a parse heap of ${b.heapMib} MiB` : `the memory limit of ${b.limit.mib} MiB (${b.limit.source}) with ${b.rssMib} MiB in use, which leaves a parse ${Math.max(0, b.heapMib)} MiB`;
}

/** Options of {@link runParseJob}. */
export interface ParseJobOptions {
  /** What is parsed, for messages ("the configuration file", "this manifest file"). */
  what: string;
  /** How to make it fit, for messages ("split it into several files"). */
  fix: string;
  /** Environment for the memory limit (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** The budget to use instead of {@link parseBudget} (tests). */
  budget?: ParseBudget;
  /** Longest the parse may take, ms (default 60 s). */
  timeoutMs?: number;
  /** Aborts the parse (the worker is terminated). */
  signal?: AbortSignal;
}

type JobReply<O> = { ok: true; value: O } | { ok: false; message: string; needMib?: number };

/**
 * Runs the job module `entry` on `input` in a parse worker whose heap is capped at the pod's free memory.
 * @returns the job's result
 * @throws ParseMemoryError when the parse does not fit in memory or time (the worker is ended, the daemon is not)
 * @throws Error with the job's own message when the job throws; the signal's reason when aborted
 */
export async function runParseJob<I, O>(entry: URL, input: I, opts: ParseJobOptions): Promise<O> {
  const budget = opts.budget ?? parseBudget(opts.env);
  if (budget.heapMib < MIN_HEAP_MIB) {
    throw new ParseMemoryError(`not parsed: ${opts.what} needs a parse worker, and ${budgetText(budget)}, less than the ${MIN_HEAP_MIB} MiB it needs to start (${opts.fix}, or raise the container's memory limit)`);
  }
  opts.signal?.throwIfAborted();
  const child = fork(fileURLToPath(THREAD_ENTRY_URL), [entry.href], {
    execArgv: [`--max-old-space-size=${budget.heapMib}`, '--max-semi-space-size=1'],
    serialization: 'advanced',
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
  });
  // V8's last words when it runs out of heap, for a message that names them; at most a few KiB kept.
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => {
    if (stderr.length < 4096) stderr += d.toString();
  });
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  let timer: NodeJS.Timeout | undefined;
  let abort: (() => void) | undefined;
  try {
    return await new Promise<O>((resolve, reject) => {
      timer = setTimeout(() => reject(new ParseMemoryError(`not parsed: ${opts.what} took longer than ${timeoutMs / 1000} s to parse (${opts.fix})`)), timeoutMs);
      timer.unref();
      abort = () => reject(opts.signal?.reason instanceof Error ? opts.signal.reason : new Error('aborted'));
      opts.signal?.addEventListener('abort', abort, { once: true });
      child.once('message', (reply: JobReply<O>) => {
        if (reply.ok) resolve(reply.value);
        else if (reply.needMib !== undefined) reject(new ParseMemoryError(`not parsed: ${opts.what} needs at least ${reply.needMib} MiB to parse, more than this pod has free: ${budgetText(budget)} (${opts.fix}, or raise the container's memory limit)`));
        else reject(new Error(reply.message));
      });
      child.once('error', reject);
      child.once('exit', (code, signal) => {
        const outOfMemory = /heap out of memory|allocation failed/i.test(stderr) || signal === 'SIGKILL' || code === 134 || signal === 'SIGABRT';
        if (outOfMemory) {
          reject(new ParseMemoryError(`not parsed: ${opts.what} needs more memory to parse than this pod has free: ${budgetText(budget)}, and the parse ran out of it (${opts.fix}, or raise the container's memory limit)`));
        } else {
          reject(new Error(`the parse worker ended (${signal ?? `exit code ${code}`}) before answering${stderr ? `: ${stderr.trim().split('\n').slice(-3).join(' ')}` : ''}`));
        }
      });
      child.send(input as never);
    });
  } finally {
    clearTimeout(timer);
    if (abort) opts.signal?.removeEventListener('abort', abort);
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
}

/**
 * The worker side: answers the one input this process gets with `handler`'s result (or its error's message), then
 * lets the process end. Called at the top level of a job module; does nothing in a process without an IPC channel.
 */
export function serveParseJob<I, O>(handler: (input: I) => O): void {
  if (process.send === undefined) return;
  process.once('message', (input: I) => {
    let reply: JobReply<O>;
    try {
      reply = { ok: true, value: handler(input) };
    } catch (err) {
      reply = { ok: false, message: err instanceof Error ? err.message : String(err), ...(err instanceof ParseBudgetExceeded ? { needMib: err.needMib } : {}) };
    }
    process.send?.(reply, undefined, {}, () => process.disconnect());
  });
}
