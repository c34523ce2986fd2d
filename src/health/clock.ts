/**
 * Injectable time source for the health subsystem.
 *
 * Every time value is in **milliseconds**. `nowMs()` is an epoch-based time (milliseconds since
 * 1970-01-01 UTC) that never goes backwards in the real clock (it is `performance.timeOrigin +
 * performance.now()`, so wall-clock steps do not shorten a hold-down). Tests use {@link FakeClock},
 * whose time only moves when the test calls `advance()`.
 */
export interface Clock {
  /** Current time, milliseconds since the epoch (monotonic for the real clock). */
  nowMs(): number;
  /** Run `fn` after `ms` milliseconds (clamped to >= 0). Returns a handle for `clearTimeout`. */
  setTimeout(fn: () => void, ms: number): TimerHandle;
  /** Cancel a timer. Unknown or already-fired handles are ignored. */
  clearTimeout(handle: TimerHandle): void;
}

/** Opaque timer handle (a Node `Timeout` for the real clock, a number for the fake one). */
export type TimerHandle = unknown;

/** The process clock: `performance` for time, Node timers for scheduling. */
export const systemClock: Clock = {
  nowMs: () => performance.timeOrigin + performance.now(),
  setTimeout: (fn, ms) => setTimeout(fn, Math.max(0, ms)),
  clearTimeout: (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
};

interface FakeTimer {
  id: number;
  atMs: number;
  fn: () => void;
}

/**
 * Deterministic clock for tests: timers fire only inside {@link FakeClock.advance}, in due-time
 * order (ties in creation order). A timer created by a firing timer with a due time inside the
 * advanced window fires in the same `advance` call.
 */
export class FakeClock implements Clock {
  private now: number;
  private nextId = 1;
  private timers: FakeTimer[] = [];

  /** @param startMs initial time in epoch milliseconds (default 1_000_000). */
  constructor(startMs = 1_000_000) {
    this.now = startMs;
  }

  nowMs(): number {
    return this.now;
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    const id = this.nextId++;
    this.timers.push({ id, atMs: this.now + Math.max(0, ms), fn });
    return id;
  }

  clearTimeout(handle: TimerHandle): void {
    this.timers = this.timers.filter((t) => t.id !== handle);
  }

  /** Number of timers waiting to fire. */
  pending(): number {
    return this.timers.length;
  }

  /** Move time forward by `ms` milliseconds, firing due timers in order. */
  advance(ms: number): void {
    const end = this.now + ms;
    for (;;) {
      let next: FakeTimer | undefined;
      for (const t of this.timers) {
        if (t.atMs <= end && (next === undefined || t.atMs < next.atMs || (t.atMs === next.atMs && t.id < next.id))) next = t;
      }
      if (next === undefined) break;
      const due = next;
      this.timers = this.timers.filter((t) => t !== due);
      this.now = Math.max(this.now, due.atMs);
      due.fn();
    }
    this.now = end;
  }
}
