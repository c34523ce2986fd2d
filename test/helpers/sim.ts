/**
 * A simulated time line for leader-election tests: one clock shared by several "processes", whose timers can be paused
 * (SIGSTOP, a partition) or dropped (kill -9); and an in-memory Lease with resourceVersion-guarded updates, like the
 * apiserver's optimistic concurrency.
 */
import type { Clock, TimerHandle } from '../../bgp/index.ts';
import { LeaseConflictError, type LeaseRecord, type LeaseStore, type StoredLease } from '../../src/leader/election.ts';

/** An in-memory Lease with resourceVersion-guarded updates, like the apiserver's optimistic concurrency. */
export class MemoryLeaseStore implements LeaseStore {
  lease: StoredLease | undefined;
  private rv = 0;
  writes = 0;
  async get() { return this.lease; }
  async create(record: LeaseRecord) {
    if (this.lease) throw new LeaseConflictError('exists');
    this.writes++;
    this.lease = { record, resourceVersion: String(++this.rv) };
    return this.lease;
  }
  async update(record: LeaseRecord, resourceVersion: string) {
    if (!this.lease || this.lease.resourceVersion !== resourceVersion) throw new LeaseConflictError();
    this.writes++;
    this.lease = { record, resourceVersion: String(++this.rv) };
    return this.lease;
  }
}

/** One simulated time line; each process gets a clock whose timers can be paused (SIGSTOP) or dropped (kill -9). */
export class Sim {
  now = 0;
  timers: { at: number; fn: () => void; owner: string; handle: TimerHandle }[] = [];
  paused = new Set<string>();
  killed = new Set<string>();
  clockFor(owner: string): Clock {
    return {
      now: () => this.now,
      setTimer: (fn, ms) => { const handle: TimerHandle = {}; this.timers.push({ at: this.now + ms, fn, owner, handle }); return handle; },
      clearTimer: (h) => { this.timers = this.timers.filter((x) => x.handle !== h); },
    };
  }
  /** Runs every timer due up to `until`, letting promise chains settle after each; `check` runs after each step. */
  async run(until: number, check: () => void) {
    for (;;) {
      const due = this.timers.filter((x) => !this.paused.has(x.owner) && !this.killed.has(x.owner)).sort((a, b) => a.at - b.at)[0];
      if (!due || due.at > until) { this.now = until; check(); return; }
      this.timers = this.timers.filter((x) => x !== due);
      this.now = Math.max(this.now, due.at);
      due.fn();
      for (let i = 0; i < 10; i++) await Promise.resolve();
      check();
    }
  }
}

