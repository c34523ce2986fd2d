/**
 * Kubernetes Events on Services, correlated as client-go's EventRecorder does (correlator.ts: similar Events
 * aggregated, a repeat raises the `count` of the Event written before instead of creating one, a spam filter per
 * object) and rate-limited for the whole process. Uses legacy core/v1 Events: the Event lives in the Service's
 * namespace, `involvedObject` names the Service, `eventTime` stays unset; a repeat is a merge patch of `count`,
 * `lastTimestamp` and `message` (RBAC: `events` create and patch).
 *
 * Rate limit: at most `burst` writes, refilled at `perSecond` (token bucket) besides each object's own limit; an Event
 * either refuses is dropped and counted (`dropped`, and `onDropped` with failed writes:
 * `herald_kubernetes_events_dropped_total`, docs/metrics.md). A repeat that is only counted is not lost.
 */
import type { KubeClient } from '../k8s/client.ts';
import { apiErrorCode } from '../k8s/forbidden.ts';
import type { ForbiddenCalls } from '../k8s/forbidden.ts';
import type { CorrelatorOptions } from './correlator.ts';
import { EventCorrelator } from './correlator.ts';

/** One Event to record about a Service. */
export interface ServiceEvent {
  /** "namespace/name" of the Service. */
  readonly service: string;
  readonly type: 'Normal' | 'Warning';
  readonly reason: string;
  readonly message: string;
}

/** How one Event reaches the apiserver: a new object, or a higher count on the one written before. */
export interface EventWrite {
  readonly action: 'create' | 'patch';
  /** The Event object's name. */
  readonly name: string;
  /** The message to write (an aggregated one says "(combined from similar events): ..."). */
  readonly message: string;
  readonly count: number;
  /** First and last occurrence, ms since the epoch. */
  readonly firstMs: number;
  readonly lastMs: number;
}

/** Where Events go. `KubernetesEventSink` writes them to the apiserver; tests collect them. */
export interface EventSink {
  send(event: ServiceEvent, write: EventWrite): Promise<void>;
}

/** Why an Event was lost: a rate limit dropped it, or the sink failed to write it. */
export type EventDropReason = 'rateLimited' | 'sendFailed';

export interface RecorderOptions {
  readonly component?: string;
  /** Writes at once for the whole process (default 25). */
  readonly burst?: number;
  /** Writes a second for the whole process once the burst is spent (default 5). */
  readonly perSecond?: number;
  /** A repeat of a written Event within this long is counted, not written, s (default 600). */
  readonly repeatAfterSec?: number;
  /** The correlator's other settings (correlator.ts). */
  readonly correlator?: Omit<CorrelatorOptions, 'repeatAfterMs'>;
  readonly now?: () => number;
  readonly onError?: (err: unknown, event: ServiceEvent) => void;
  /** Called for every Event lost (besides `onError` for a failed write); repeats that are only counted are not lost. */
  readonly onDropped?: (event: ServiceEvent, reason: EventDropReason) => void;
}

/**
 * Test hook (docs/development.md): HERALD_TEST_EVENT_REPEAT_SEC=N in the environment writes a repeated Event's count
 * after N seconds instead of 10 minutes (test/control-plane/rbac.test.ts makes Herald patch an Event).
 * @returns the recorder's `repeatAfterSec` option, or nothing without the variable
 */
export function repeatAfterFromEnv(env: NodeJS.ProcessEnv): { repeatAfterSec?: number } {
  const n = Number(env['HERALD_TEST_EVENT_REPEAT_SEC'] ?? '');
  return env['HERALD_TEST_EVENT_REPEAT_SEC'] !== undefined && Number.isFinite(n) && n >= 0 ? { repeatAfterSec: n } : {};
}

/** Correlating, rate-limited front of an EventSink. `record()` never throws and never blocks the caller. */
export class EventRecorder {
  private readonly sink: EventSink;
  private readonly burst: number;
  private readonly perSecond: number;
  private readonly now: () => number;
  private readonly onError: (err: unknown, event: ServiceEvent) => void;
  private readonly onDropped: (event: ServiceEvent, reason: EventDropReason) => void;
  private readonly correlator: EventCorrelator;
  private tokens: number;
  private lastRefillMs: number;
  /** Events dropped by a rate limit (the process's or the object's). */
  dropped = 0;
  /** Writes sent: new Events and count patches. */
  readonly writes = { create: 0, patch: 0 };

  constructor(sink: EventSink, options: RecorderOptions = {}) {
    this.sink = sink;
    this.burst = options.burst ?? 25;
    this.perSecond = options.perSecond ?? 5;
    this.now = options.now ?? Date.now;
    this.onError = options.onError ?? (() => {});
    this.onDropped = options.onDropped ?? (() => {});
    this.correlator = new EventCorrelator({ ...options.correlator, repeatAfterMs: (options.repeatAfterSec ?? 600) * 1000 });
    this.tokens = this.burst;
    this.lastRefillMs = this.now();
  }

  /** Records an Event: written (new, or a count on the one before) unless only counted or rate-limited. Returns whether it was written. */
  record(event: ServiceEvent): boolean {
    const now = this.now();
    const admit = (): boolean => {
      this.tokens = Math.min(this.burst, this.tokens + ((now - this.lastRefillMs) / 1000) * this.perSecond);
      this.lastRefillMs = now;
      if (this.tokens < 1) return false;
      this.tokens -= 1;
      return true;
    };
    const c = this.correlator.correlate({ object: event.service, type: event.type, reason: event.reason, message: event.message }, now, admit);
    if (c.action === 'skip') {
      if (c.why !== 'counted') {
        this.dropped++;
        this.onDropped(event, 'rateLimited');
      }
      return false;
    }
    this.writes[c.action]++;
    this.sink.send(event, c).catch((err: unknown) => {
      this.correlator.forget(c.name);
      this.onError(err, event);
      this.onDropped(event, 'sendFailed');
    });
    return true;
  }
}

/**
 * Writes core/v1 Events for Services: POST /api/v1/namespaces/NS/events for a new one, a merge patch of the Event
 * for a repeat (created again when it is gone: Events expire after an hour by default).
 */
export class KubernetesEventSink implements EventSink {
  private readonly api: KubeClient;
  private readonly component: string;
  private readonly host: string | undefined;
  private readonly forbidden: ForbiddenCalls | undefined;

  /** @param forbidden where a 403 of `create events` or `patch events` is recorded (src/k8s/forbidden.ts) */
  constructor(kc: KubeClient, component = 'herald', host?: string, forbidden?: ForbiddenCalls) {
    this.api = kc;
    this.component = component;
    this.host = host;
    this.forbidden = forbidden;
  }

  private track<T>(call: string, f: () => Promise<T>): Promise<T> {
    return this.forbidden ? this.forbidden.track(call, f) : f();
  }

  async send(event: ServiceEvent, write: EventWrite): Promise<void> {
    const [namespace = 'default', name = ''] = event.service.split('/');
    const ns = encodeURIComponent(namespace);
    const first = new Date(write.firstMs).toISOString();
    const last = new Date(write.lastMs).toISOString();
    if (write.action === 'patch') {
      try {
        await this.track('patch events', () => this.api.request('PATCH', `/api/v1/namespaces/${ns}/events/${encodeURIComponent(write.name)}`, { body: { count: write.count, lastTimestamp: last, message: write.message }, contentType: 'application/merge-patch+json' }));
        return;
      } catch (err) {
        if (apiErrorCode(err) !== 404) throw err;
      }
    }
    const body = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: write.name, namespace },
      involvedObject: { kind: 'Service', apiVersion: 'v1', namespace, name },
      reason: event.reason,
      message: write.message,
      type: event.type,
      source: { component: this.component, ...(this.host ? { host: this.host } : {}) },
      reportingComponent: this.component,
      ...(this.host ? { reportingInstance: this.host } : {}),
      firstTimestamp: first,
      lastTimestamp: last,
      count: write.count,
    };
    await this.track('create events', () => this.api.request('POST', `/api/v1/namespaces/${ns}/events`, { body }));
  }
}
