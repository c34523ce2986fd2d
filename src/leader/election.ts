/**
 * Leader election over a coordination.k8s.io/v1 Lease, following client-go's leaderelection algorithm
 * (k8s.io/client-go/tools/leaderelection): acquire or renew every `retryPeriodSec` (with jitter); a Lease held by
 * someone else is taken only after its record has not changed for `leaseDurationSec`, judged by OUR clock from the
 * moment we last saw it change (never by comparing timestamps written by another machine); every write is an update
 * guarded by the resourceVersion we read (a conflict means someone else won); a leader that cannot renew within
 * `renewDeadlineSec` steps down.
 *
 * Safety margin (client-go's rule): leaseDuration > renewDeadline > retryPeriod × 1.2. `isLeader()` is true only
 * while the last successful renewal is younger than `renewDeadlineSec`, so a paused (SIGSTOPped) leader cannot act
 * on stale leadership after it resumes. Decisions: the Lease is `herald-allocator` in Herald's namespace; the holder
 * identity is the node name (docs/decisions.md).
 */
import { EventEmitter } from 'node:events';
import type { Clock, TimerHandle } from '../../bgp/main-thread.ts';
import { realClock } from '../../bgp/main-thread.ts';

/** The Lease fields the algorithm uses (coordination.k8s.io/v1 LeaseSpec). Times are RFC 3339 strings with µs. */
export interface LeaseRecord {
  readonly holderIdentity?: string;
  readonly leaseDurationSeconds?: number;
  readonly acquireTime?: string;
  readonly renewTime?: string;
  readonly leaseTransitions?: number;
}

/** A Lease as read: its record and the resourceVersion guarding the next update. */
export interface StoredLease {
  readonly record: LeaseRecord;
  readonly resourceVersion: string;
}

/** Thrown by `LeaseStore.update` when the resourceVersion no longer matches (HTTP 409), and by `create` on 409. */
export class LeaseConflictError extends Error {
  constructor(message = 'lease was changed by someone else') {
    super(message);
    this.name = 'LeaseConflictError';
  }
}

/** Access to one Lease object; the Kubernetes implementation is `KubernetesLeaseStore` in ./lease-store.ts. */
export interface LeaseStore {
  /** The Lease, or undefined when it does not exist (404). Other errors throw. */
  get(): Promise<StoredLease | undefined>;
  /** Creates the Lease; throws LeaseConflictError when it already exists. */
  create(record: LeaseRecord): Promise<StoredLease>;
  /** Replaces the Lease if its resourceVersion is still `resourceVersion`; else throws LeaseConflictError. */
  update(record: LeaseRecord, resourceVersion: string): Promise<StoredLease>;
}

export interface ElectionOptions {
  /** Our holder identity (the node name). */
  readonly identity: string;
  readonly store: LeaseStore;
  /** Seconds a non-renewed Lease stays valid (client-go default 15). */
  readonly leaseDurationSec?: number;
  /** Seconds a leader keeps trying to renew before stepping down (client-go default 10). */
  readonly renewDeadlineSec?: number;
  /** Seconds between attempts (client-go default 2). */
  readonly retryPeriodSec?: number;
  readonly clock?: Clock;
  /** Random source in [0,1) for jitter; injectable for deterministic tests. */
  readonly random?: () => number;
}

function rfc3339(ms: number): string {
  return new Date(ms).toISOString().replace('Z', '000Z');
}

function sameRecord(a: LeaseRecord | undefined, b: LeaseRecord | undefined): boolean {
  return JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
}

/**
 * One candidate. Events: 'started' (became leader), 'stopped' (lost or gave up leadership), 'error' (Error from the
 * store; the loop continues). Call `start()` once and `stop()` to release (the Lease is given up by clearing the
 * holder so another candidate takes over without waiting for expiry).
 */
export class LeaderElector extends EventEmitter {
  readonly identity: string;
  private readonly store: LeaseStore;
  private readonly leaseDurationMs: number;
  private readonly renewDeadlineMs: number;
  private readonly retryPeriodMs: number;
  private readonly clock: Clock;
  private readonly random: () => number;
  private observed: StoredLease | undefined;
  private observedAtMs = 0;
  private lastRenewMs = -Infinity;
  private leading = false;
  private running = false;
  private timer: TimerHandle | undefined;
  private inFlight: Promise<void> | undefined;

  /** @throws Error when the timing parameters break client-go's safety rule. */
  constructor(options: ElectionOptions) {
    super();
    this.identity = options.identity;
    this.store = options.store;
    this.leaseDurationMs = (options.leaseDurationSec ?? 15) * 1000;
    this.renewDeadlineMs = (options.renewDeadlineSec ?? 10) * 1000;
    this.retryPeriodMs = (options.retryPeriodSec ?? 2) * 1000;
    this.clock = options.clock ?? realClock;
    this.random = options.random ?? Math.random;
    if (!(this.leaseDurationMs > this.renewDeadlineMs)) throw new Error('leaseDuration must be greater than renewDeadline');
    if (!(this.renewDeadlineMs > this.retryPeriodMs * 1.2)) throw new Error('renewDeadline must be greater than retryPeriod × 1.2');
    if (!this.identity) throw new Error('identity is required');
  }

  /** True while we hold the Lease and renewed it less than renewDeadline ago (by our clock). */
  isLeader(): boolean {
    return this.leading && this.clock.now() - this.lastRenewMs < this.renewDeadlineMs;
  }

  /** The current holder as last observed (may be us), or undefined. */
  observedHolder(): string | undefined {
    return this.observed?.record.holderIdentity || undefined;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.schedule(0);
  }

  /** Stops the loop; a leader releases the Lease (holder cleared) so others need not wait for expiry. */
  async stop(): Promise<void> {
    this.running = false;
    this.clock.clearTimer(this.timer);
    await this.inFlight;
    if (this.leading && this.observed && this.observed.record.holderIdentity === this.identity) {
      try {
        await this.store.update({ ...this.observed.record, holderIdentity: '', leaseDurationSeconds: 1 }, this.observed.resourceVersion);
      } catch (err) {
        this.emit('error', err);
      }
    }
    this.setLeading(false);
  }

  /** One acquire-or-renew attempt (exposed for tests). Returns whether we hold the Lease afterwards. */
  async tryAcquireOrRenew(): Promise<boolean> {
    const now = this.clock.now();
    const desired = (prev: LeaseRecord | undefined): LeaseRecord => {
      const ours = prev?.holderIdentity === this.identity;
      return {
        holderIdentity: this.identity,
        leaseDurationSeconds: this.leaseDurationMs / 1000,
        acquireTime: ours && prev?.acquireTime ? prev.acquireTime : rfc3339(now),
        renewTime: rfc3339(now),
        leaseTransitions: ours ? (prev?.leaseTransitions ?? 0) : (prev?.leaseTransitions ?? -1) + 1,
      };
    };
    const current = await this.store.get();
    if (!current) {
      try {
        this.observe(await this.store.create(desired(undefined)), now);
        return true;
      } catch (err) {
        if (err instanceof LeaseConflictError) return false;
        throw err;
      }
    }
    if (!sameRecord(current.record, this.observed?.record) || current.resourceVersion !== this.observed?.resourceVersion) {
      this.observe(current, now);
    }
    const holder = current.record.holderIdentity;
    const heldByOther = !!holder && holder !== this.identity;
    const observedDurationMs = (current.record.leaseDurationSeconds ?? this.leaseDurationMs / 1000) * 1000;
    if (heldByOther && this.observedAtMs + observedDurationMs > now) return false;
    try {
      this.observe(await this.store.update(desired(current.record), current.resourceVersion), now);
      return true;
    } catch (err) {
      if (err instanceof LeaseConflictError) return false;
      throw err;
    }
  }

  private observe(lease: StoredLease, atMs: number): void {
    this.observed = lease;
    this.observedAtMs = atMs;
  }

  private setLeading(value: boolean): void {
    if (value === this.leading) return;
    this.leading = value;
    this.emit(value ? 'started' : 'stopped');
  }

  private schedule(ms: number): void {
    if (!this.running) return;
    this.timer = this.clock.setTimer(() => {
      this.inFlight = this.tick();
    }, ms);
  }

  private async tick(): Promise<void> {
    let held = false;
    try {
      held = await this.tryAcquireOrRenew();
    } catch (err) {
      this.emit('error', err);
    }
    if (!this.running) return;
    const now = this.clock.now();
    if (held) {
      this.lastRenewMs = now;
      this.setLeading(true);
    } else if (this.leading && now - this.lastRenewMs >= this.renewDeadlineMs) {
      this.setLeading(false);
    } else if (this.leading && this.observed?.record.holderIdentity !== this.identity) {
      this.setLeading(false);
    }
    // client-go: JitterUntil(retryPeriod, 1.2) while acquiring; a fixed retryPeriod while renewing.
    const wait = this.leading ? this.retryPeriodMs : this.retryPeriodMs * (1 + 0.2 * this.random());
    this.schedule(wait);
  }
}
