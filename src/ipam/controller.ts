/**
 * The LoadBalancer allocator loop: while this instance leads (see src/leader/election.ts), it plans addresses for all
 * Services (`planAllocations`, pure) and writes the status patches and Events. Level-triggered: `reconcile()` may be
 * called at any time and as often as wanted (on every Service change and periodically); it reads the whole current
 * Service list each time, so a missed event is healed by the next pass.
 *
 * Writes are conditioned on the resourceVersion the plan was made from, so a deposed leader's late write fails
 * with 409 instead of overwriting its successor's (a Lease gives no fencing: the resourceVersion guard is the fence).
 */
import type { Clock } from '../../bgp/main-thread.ts';
import { realClock } from '../../bgp/main-thread.ts';
import type { Service } from '../k8s/types.ts';
import type { EventRecorder } from '../events/recorder.ts';
import { planAllocations, type AllocationFailure, type AllocatorOptions } from './allocator.ts';
import type { Pool } from './pool.ts';
import type { ServiceStatusWriter } from '../status/service-status.ts';

/** Status writes in flight at once during a pass (the apiserver handles them in parallel). */
const WRITE_CONCURRENCY = 8;

export interface AllocatorControllerOptions extends AllocatorOptions {
  /** What the configuration in force says at each pass (compatibility.metallbAnnotations), besides the class. */
  readonly planOptions?: () => AllocatorOptions;
  readonly services: () => readonly Service[];
  readonly pools: () => readonly Pool[];
  readonly isLeader: () => boolean;
  readonly writer: ServiceStatusWriter;
  readonly recorder?: EventRecorder;
  /** Called with each write failure (logged by the daemon); the next pass retries. */
  readonly onError?: (err: unknown, service: string) => void;
  /** Time source (tests); default the shared realClock. */
  readonly clock?: Clock;
}

/** How long our own successful writes override a Service view that has not caught up with them yet. */
const OWN_WRITE_TTL_MS = 60_000;

/** Counters for metrics and the admin API. */
export interface AllocatorStats {
  passes: number;
  writes: number;
  writeErrors: number;
}

export class AllocatorController {
  private readonly options: AllocatorControllerOptions;
  private running: Promise<void> | undefined;
  private again = false;
  readonly stats: AllocatorStats = { passes: 0, writes: 0, writeErrors: 0 };
  /** Services left without the addresses they need by the last pass, by why (allocator.ts `AllocationFailure`). */
  failed: ReadonlyMap<AllocationFailure, number> = new Map();
  /**
   * Our successful status writes that the Service view (an informer cache) may not show yet. Without them a pass
   * that runs before the cache catches up would see an address we just gave as free and give it again to another
   * Service (whose own resourceVersion is current, so its write would succeed): a double allocation.
   */
  private readonly ownWrites = new Map<string, { ips: readonly string[]; atMs: number }>();

  constructor(options: AllocatorControllerOptions) {
    this.options = options;
  }

  /** Runs one pass now, or one more pass after the current one (coalesced). Resolves when no pass is pending. */
  reconcile(): Promise<void> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      do {
        this.again = false;
        await this.pass();
      } while (this.again);
      this.running = undefined;
    })();
    return this.running;
  }

  private now(): number {
    return (this.options.clock ?? realClock).now();
  }

  /**
   * The Service view with our recent writes applied where the view has not caught up with them: a Service whose
   * view shows other addresses than we wrote is taken to hold what we wrote, until the view shows it or the record
   * expires. Conservative: at worst an address stays reserved a little longer. Records of Services that are gone
   * or caught up are dropped.
   */
  private withOwnWrites(services: readonly Service[]): Service[] {
    if (this.ownWrites.size === 0) return [...services];
    const now = this.now();
    const present = new Set<string>();
    const out = services.map((s) => {
      const key = `${s.metadata?.namespace ?? 'default'}/${s.metadata?.name ?? ''}`;
      present.add(key);
      const own = this.ownWrites.get(key);
      if (!own) return s;
      const shown = (s.status?.loadBalancer?.ingress ?? []).map((i) => i.ip ?? '').join(',');
      if (shown === own.ips.join(',') || now - own.atMs > OWN_WRITE_TTL_MS) {
        this.ownWrites.delete(key);
        return s;
      }
      return { ...s, status: { ...s.status, loadBalancer: { ingress: own.ips.map((ip) => ({ ip, ipMode: 'VIP' })) } } };
    });
    for (const key of this.ownWrites.keys()) if (!present.has(key)) this.ownWrites.delete(key);
    return out;
  }

  private async pass(): Promise<void> {
    if (!this.options.isLeader()) return;
    this.stats.passes++;
    const services = this.withOwnWrites(this.options.services());
    const plan = planAllocations(services, this.options.pools(), { ...this.options.planOptions?.(), loadBalancerClass: this.options.loadBalancerClass });
    this.failed = plan.failed;
    const rv = new Map(services.map((s) => [`${s.metadata?.namespace ?? 'default'}/${s.metadata?.name ?? ''}`, s.metadata?.resourceVersion]));
    const failed = new Set<string>();
    // Up to WRITE_CONCURRENCY writes in flight; leadership is re-checked before each one.
    let next = 0;
    let stepDown = false;
    const worker = async () => {
      while (next < plan.patches.length) {
        if (!this.options.isLeader()) {
          stepDown = true; // stepped down mid-pass: write nothing more
          return;
        }
        const patch = plan.patches[next++] as (typeof plan.patches)[number];
        try {
          await this.options.writer.patchIngress(patch.service, patch.ips, rv.get(patch.service));
          this.ownWrites.set(patch.service, { ips: patch.ips, atMs: this.now() });
          this.stats.writes++;
        } catch (err) {
          this.stats.writeErrors++;
          failed.add(patch.service);
          this.options.onError?.(err, patch.service);
        }
      }
    };
    await Promise.all(Array.from({ length: WRITE_CONCURRENCY }, worker));
    if (stepDown) return;
    for (const event of plan.events) {
      if (event.reason === 'IPAllocated' && failed.has(event.service)) continue;
      this.options.recorder?.record(event);
    }
  }
}
