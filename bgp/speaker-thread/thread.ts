/**
 * SpeakerThread: a speaker thread started before its Speaker's options are known. The thread loads its modules
 * (bgp/speaker-thread/worker.ts and the core it imports: about 0.2 s of CPU) while its starter still reads its
 * configuration, on the machine's other core; {@link SpeakerThread.serve} then sends the options as the thread's first
 * message, and the thread builds its Speaker from them. `herald run` spawns it first thing (src/cli/main.ts), so this
 * load is off the critical path of a start (docs/benchmarks.md "Targets").
 *
 * Until it serves, the thread does not keep the process alive (a start that fails on a bad configuration exits as
 * before), and its death is recorded for the proxy that takes it (no unhandled `error` event).
 */
import type { ResourceLimits, Worker } from 'node:worker_threads';
import { spawnWorker } from '../worker-rpc.ts';
import type { CallMessage, SpeakerCalls, SpeakerThreadOptions, ThreadMessage } from './protocol.ts';

/** What the serving side is told: the thread's message batches, and its end with the cause. */
export interface ThreadListener {
  message(batch: ThreadMessage[]): void;
  exited(cause: string): void;
}

/** See the module comment. */
export class SpeakerThread {
  readonly #worker: Worker;
  #listener: ThreadListener | undefined;
  #crash: string | undefined;
  /** The cause, once the thread has ended before it served. */
  #ended: string | undefined;

  private constructor(worker: Worker) {
    this.#worker = worker;
    worker.on('message', (batch: ThreadMessage[]) => this.#listener?.message(batch));
    worker.on('error', (err) => (this.#crash = `${err.name}: ${err.message}`));
    worker.on('exit', (code) => {
      const cause = this.#crash ?? `exit code ${code}`;
      if (this.#listener) this.#listener.exited(cause);
      else this.#ended = cause;
    });
    // After the listeners: adding a 'message' listener refs the worker again.
    worker.unref();
  }

  /**
   * Starts a speaker thread (bgp/thread-entry.js running worker.ts), its V8 heap bounded by `resourceLimits` when
   * given (Node.js worker_threads; a thread that runs out is reported as dying).
   */
  static spawn(thread: { readonly resourceLimits?: ResourceLimits } = {}): SpeakerThread {
    const worker = spawnWorker(new URL('./worker.ts', import.meta.url), thread.resourceLimits ? { resourceLimits: thread.resourceLimits } : {});
    return new SpeakerThread(worker);
  }

  /** Whether a Speaker was started on this thread already (a thread serves one). */
  get serving(): boolean {
    return this.#listener !== undefined;
  }

  /**
   * Starts the thread's Speaker with `options` and hands its messages and its end to `listener` from now on (an end
   * before this call is reported as soon as this call has returned). The thread keeps the process alive from now on.
   * @throws Error when the thread serves already.
   */
  serve(options: SpeakerThreadOptions, listener: ThreadListener): void {
    if (this.#listener) throw new Error('this speaker thread serves a Speaker already: spawn one per SpeakerProxy');
    this.#listener = listener;
    const ended = this.#ended;
    if (ended !== undefined) {
      queueMicrotask(() => listener.exited(ended));
      return;
    }
    this.#worker.ref();
    this.#worker.postMessage(options);
  }

  /** Posts one call to the thread's Speaker (transferring `transfer`); after {@link serve} only. */
  post<K extends keyof SpeakerCalls>(message: CallMessage<K>, transfer: readonly ArrayBuffer[]): void {
    this.#worker.postMessage(message, transfer);
  }

  /** Ends the thread; resolves once it is gone. */
  async end(): Promise<void> {
    await this.#worker.terminate();
  }
}
