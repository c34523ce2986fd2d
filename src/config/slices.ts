/**
 * Cooperative work in slices: long input work (YAML parsing, validation of a big route list) is written once as a
 * generator that `yield`s at points where it may pause, and run either to completion at once ({@link runSync}: tests,
 * `herald config check`) or in slices of a few milliseconds with the event loop turning in between
 * ({@link runSliced}: the daemon, whose BGP keepalives and hold timers must not wait behind a parse).
 *
 * Slices for small input: the parsed objects are used on the main thread, and a worker would hold a second copy of
 * them (its own heap, then a structured clone). Input of 128 KiB or more, where the parse itself may need more memory
 * than the pod has, goes to a parse worker whose heap is capped (parse-worker.ts; docs/operations.md, "Limits").
 */
import { setImmediate as nextTurn } from 'node:timers/promises';

/** Work that may pause at each `yield` and finally returns a `T`. */
export type Steps<T> = Generator<void, T, void>;

/** Default length of one slice, ms: well below a BGP keepalive (hold time 3 s → keepalive 1 s). */
export const SLICE_MS = 10;

/** Runs `work` to completion without pausing. */
export function runSync<T>(work: Steps<T>): T {
  for (;;) {
    const r = work.next();
    if (r.done) return r.value;
  }
}

/**
 * Runs `work` in slices of about `sliceMs` ms, letting the event loop run (timers, sockets) between slices.
 * @throws the `signal`'s reason when it is aborted between two slices; whatever `work` throws.
 */
export async function runSliced<T>(work: Steps<T>, opts: { sliceMs?: number; signal?: AbortSignal } = {}): Promise<T> {
  const sliceMs = opts.sliceMs ?? SLICE_MS;
  let deadline = performance.now() + sliceMs;
  for (;;) {
    const r = work.next();
    if (r.done) return r.value;
    if (performance.now() >= deadline) {
      await nextTurn();
      opts.signal?.throwIfAborted();
      deadline = performance.now() + sliceMs;
    }
  }
}
