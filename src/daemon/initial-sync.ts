/**
 * The initial-sync gate: when End-of-RIB may be sent (RFC 4724 §4.1, docs/decisions.md "Graceful restart").
 *
 * After a restart the routers keep our stale routes until End-of-RIB; an End-of-RIB before the first complete
 * desired set would make them flush routes that are still right. So it waits for the first run that saw the source
 * synced (at once with static routes only), and for the first verdict of every registered health check (checks start
 * `Pending`): an End-of-RIB while they are pending would flush the routes graceful restart kept and move traffic for
 * nothing. Bounded: at the latest after the slowest check could have passed `rise` times (rise × interval + timeout,
 * plus 2 s).
 */
import type { Logger } from 'pino';
import type { Clock, TimerHandle } from '../../bgp/main-thread.ts';
import type { CheckSpec } from '../health/types.ts';

/** Extra time past the slowest check's first possible verdict, ms. */
const SETTLE_MARGIN_MS = 2000;

/** Options of {@link InitialSync}. */
export interface InitialSyncOptions {
  /** Called once: the speaker may send End-of-RIB. */
  markDone: () => void;
  /** Called when the wait for pending checks runs out: the caller runs the pipeline again. */
  recheck: () => void;
  log: Logger;
  clock: Clock;
}

/** See the module comment. */
export class InitialSync {
  readonly #opts: InitialSyncOptions;
  #done = false;
  #deadlineMs: number | undefined;
  #timer: TimerHandle | undefined;

  constructor(opts: InitialSyncOptions) {
    this.#opts = opts;
  }

  /** True once End-of-RIB may be sent. */
  get done(): boolean {
    return this.#done;
  }

  /**
   * After a run with a complete desired set: mark the initial sync done unless registered checks are still pending
   * and their wait has not run out.
   * @param pendingChecks registered gates still `Pending`
   * @param specs every check spec (their timing bounds the wait)
   * @param routes size of the desired set (logged)
   */
  observe(pendingChecks: number, specs: readonly CheckSpec[], routes: number): void {
    if (this.#done) return;
    const now = this.#opts.clock.now();
    if (this.#deadlineMs === undefined) {
      const settleMs = Math.max(0, ...specs.map((x) => (x.rise * x.intervalSec + x.timeoutSec) * 1000)) + SETTLE_MARGIN_MS;
      this.#deadlineMs = now + settleMs;
      if (pendingChecks > 0) this.#timer = this.#opts.clock.setTimer(() => this.#opts.recheck(), settleMs);
    }
    if (pendingChecks > 0 && now < this.#deadlineMs) {
      this.#opts.log.debug({ pending: pendingChecks }, 'End-of-RIB waits for the first verdict of health checks');
      return;
    }
    this.#done = true;
    this.stop();
    this.#opts.markDone();
    this.#opts.log.info({ routes, pendingChecks }, 'initial sync done: End-of-RIB may be sent');
  }

  /** Cancel the wait's timer. */
  stop(): void {
    this.#opts.clock.clearTimer(this.#timer);
    this.#timer = undefined;
  }
}
