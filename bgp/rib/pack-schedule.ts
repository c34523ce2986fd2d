/**
 * When a peer without a session packs its table for the next one (AdjRibOut.prepare, bgp/rib/packed-table.ts): at
 * once (after the current task, before the session's next socket event) when a session starts or goes down, and
 * {@link PACK_AFTER_CHANGE_MS} after a change of the desired set, so that under churn a peer that is down packs at
 * most once per interval.
 */
import type { Clock, TimerHandle } from '../clock.ts';

/** Delay (ms of clock time) between a change of the desired set and the pack it causes. */
export const PACK_AFTER_CHANGE_MS = 1000;

export class PackSchedule {
  readonly #clock: Clock;
  readonly #pack: () => void;
  #timer: TimerHandle | undefined;
  #queued = false;

  /** `pack` runs at most once per `soon()` / `afterChange()` that found nothing scheduled. */
  constructor(clock: Clock, pack: () => void) {
    this.#clock = clock;
    this.#pack = pack;
  }

  /** Packs after the current task (setImmediate); a pending `afterChange()` timer is then not needed. */
  soon(): void {
    if (this.#queued) return;
    this.#queued = true;
    setImmediate(() => this.#run());
  }

  /** Packs {@link PACK_AFTER_CHANGE_MS} from now, unless a pack is scheduled already. */
  afterChange(): void {
    if (this.#queued || this.#timer !== undefined) return;
    this.#timer = this.#clock.setTimer(() => this.#run(), PACK_AFTER_CHANGE_MS);
  }

  /** Cancels the timer (a queued `soon()` still runs; `pack` checks whether it is still wanted). */
  cancel(): void {
    this.#clock.clearTimer(this.#timer);
    this.#timer = undefined;
  }

  #run(): void {
    this.#queued = false;
    this.cancel();
    this.#pack();
  }
}
