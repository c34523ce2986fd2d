/**
 * Injectable time for everything that waits: the FSM and session timers (RFC 4271 §8: ConnectRetryTimer, HoldTimer,
 * KeepaliveTimer), and, through bgp/main-thread.ts, the daemon's health checks, work queues, informers and leader election.
 *
 * Production code uses `realClock`: `now()` is `performance.timeOrigin + performance.now()`, on the epoch time line
 * but never going backwards, so a wall-clock step neither fires nor delays a timer deadline computed from it; timers
 * are unref'd so an idle speaker never keeps the process alive on its own. Tests use `FakeClock`, whose timers fire
 * only when `advance(ms)` moves time past them, so a 90-second hold timer test takes microseconds.
 */

/** Opaque handle of a pending timer. */
export type TimerHandle = { readonly __timer: unique symbol } | object;

/** The clock interface: all durations and times in milliseconds. */
export interface Clock {
  /** Current time in milliseconds on the epoch time line, never decreasing (FakeClock: starts where it is told). */
  now(): number;
  /** Calls `fn` once after `ms` milliseconds (negative treated as 0). */
  setTimer(fn: () => void, ms: number): TimerHandle;
  /** Cancels a timer; a handle that already fired or was cleared is ignored. */
  clearTimer(handle: TimerHandle | undefined): void;
}

/** The process clock: monotonic epoch milliseconds and unref'd setTimeout. */
export const realClock: Clock = {
  now: () => performance.timeOrigin + performance.now(),
  setTimer(fn, ms) {
    const t = setTimeout(fn, Math.max(0, ms));
    t.unref();
    return t;
  },
  clearTimer(handle) {
    if (handle) clearTimeout(handle as ReturnType<typeof setTimeout>);
  },
};

interface FakeTimer {
  /** Creation order: ties fire in it. */
  readonly id: number;
  readonly at: number;
  readonly fn: () => void;
}

/**
 * A manual clock for tests: time moves only through `advance(ms)`, which fires due timers in time order (ties in
 * creation order), including timers scheduled by callbacks while advancing.
 */
export class FakeClock implements Clock {
  private t: number;
  private nextId = 1;
  /** Pending timers by handle (the handle is an empty object only this map knows). */
  private readonly timers = new Map<TimerHandle, FakeTimer>();

  /** @param startMs initial value of now() in ms (default 0). */
  constructor(startMs = 0) {
    this.t = startMs;
  }

  now(): number {
    return this.t;
  }

  setTimer(fn: () => void, ms: number): TimerHandle {
    const handle: TimerHandle = {};
    this.timers.set(handle, { id: this.nextId++, at: this.t + Math.max(0, ms), fn });
    return handle;
  }

  clearTimer(handle: TimerHandle | undefined): void {
    if (handle) this.timers.delete(handle);
  }

  /** Number of timers still pending. */
  get pending(): number {
    return this.timers.size;
  }

  /** Milliseconds until the next pending timer fires, or undefined when none is pending. */
  nextDueInMs(): number | undefined {
    let min: number | undefined;
    for (const timer of this.timers.values()) if (min === undefined || timer.at < min) min = timer.at;
    return min === undefined ? undefined : min - this.t;
  }

  /** Moves time forward by `ms` milliseconds, firing every timer that falls due (in order). */
  advance(ms: number): void {
    const end = this.t + ms;
    for (;;) {
      let due: FakeTimer | undefined;
      let dueHandle: TimerHandle | undefined;
      for (const [handle, timer] of this.timers) {
        if (timer.at <= end && (!due || timer.at < due.at || (timer.at === due.at && timer.id < due.id))) {
          due = timer;
          dueHandle = handle;
        }
      }
      if (!due || !dueHandle) break;
      this.timers.delete(dueHandle);
      this.t = due.at;
      due.fn();
    }
    this.t = end;
  }
}
