/**
 * Counting semaphore with a FIFO wait queue: bounds how many probes run at once.
 */
export class Semaphore {
  private readonly max: number;
  private active = 0;
  /** Waiters in FIFO order; entries before `head` were handed a permit and are cleared. */
  private readonly queue: Array<(() => void) | undefined> = [];
  private head = 0;

  /** @throws RangeError when `max` is not an integer >= 1 */
  constructor(max: number) {
    if (!Number.isInteger(max) || max < 1) throw new RangeError(`semaphore size must be an integer >= 1, got ${max}`);
    this.max = max;
  }

  /** Permits in use. */
  get inFlight(): number {
    return this.active;
  }

  /** Callers waiting for a permit. */
  get waiting(): number {
    return this.queue.length - this.head;
  }

  get size(): number {
    return this.max;
  }

  /** Wait for a permit; resolves to a release function (idempotent). */
  acquire(): Promise<() => void> {
    if (this.active < this.max) {
      this.active++;
      return Promise.resolve(this.releaser());
    }
    return new Promise((resolve) => {
      this.queue.push(() => resolve(this.releaser()));
    });
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      if (this.head < this.queue.length) {
        const next = this.queue[this.head];
        this.queue[this.head] = undefined;
        this.head++;
        if (this.head > 1024 && this.head * 2 > this.queue.length) {
          this.queue.splice(0, this.head);
          this.head = 0;
        }
        next?.(); // the permit passes to the next waiter; `active` stays the same
      } else {
        this.active--;
      }
    };
  }
}
