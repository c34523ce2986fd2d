/**
 * Kubernetes Events on Services, rate-limited and de-duplicated (in the manner of client-go's EventRecorder).
 * Uses legacy core/v1 Events: the Event lives in the Service's namespace, `involvedObject` names the Service,
 * `eventTime` stays unset.
 *
 * De-duplication: the same (service, reason, message) is not sent again within `repeatAfterSec` (default 600 s).
 * Rate limit: at most `burst` Events, refilled at `perSecond` (token bucket); extra Events are dropped and counted
 * (`dropped`, and `onDropped` with failed writes: `herald_kubernetes_events_dropped_total`, docs/metrics.md).
 */
import type { KubeClient } from '../k8s/client.ts';

/** One Event to record about a Service. */
export interface ServiceEvent {
  /** "namespace/name" of the Service. */
  readonly service: string;
  readonly type: 'Normal' | 'Warning';
  readonly reason: string;
  readonly message: string;
}

/** Where Events go. `KubernetesEventSink` writes them to the apiserver; tests collect them. */
export interface EventSink {
  send(event: ServiceEvent): Promise<void>;
}

/** Why an Event was lost: the rate limit dropped it, or the sink failed to write it. */
export type EventDropReason = 'rateLimited' | 'sendFailed';

export interface RecorderOptions {
  readonly component?: string;
  readonly burst?: number;
  readonly perSecond?: number;
  readonly repeatAfterSec?: number;
  readonly now?: () => number;
  readonly onError?: (err: unknown, event: ServiceEvent) => void;
  /** Called for every Event lost (besides `onError` for a failed write); de-duplicated repeats are not lost. */
  readonly onDropped?: (event: ServiceEvent, reason: EventDropReason) => void;
}

/** Rate-limited, de-duplicating front of an EventSink. `record()` never throws and never blocks the caller. */
export class EventRecorder {
  private readonly sink: EventSink;
  private readonly burst: number;
  private readonly perSecond: number;
  private readonly repeatAfterMs: number;
  private readonly now: () => number;
  private readonly onError: (err: unknown, event: ServiceEvent) => void;
  private readonly onDropped: (event: ServiceEvent, reason: EventDropReason) => void;
  private tokens: number;
  private lastRefillMs: number;
  private readonly lastSent = new Map<string, number>();
  /** Events dropped by the rate limit. */
  dropped = 0;

  constructor(sink: EventSink, options: RecorderOptions = {}) {
    this.sink = sink;
    this.burst = options.burst ?? 25;
    this.perSecond = options.perSecond ?? 5;
    this.repeatAfterMs = (options.repeatAfterSec ?? 600) * 1000;
    this.now = options.now ?? Date.now;
    this.onError = options.onError ?? (() => {});
    this.onDropped = options.onDropped ?? (() => {});
    this.tokens = this.burst;
    this.lastRefillMs = this.now();
  }

  /** Records an Event unless it repeats a recent identical one or the rate limit is exhausted. Returns whether it was sent. */
  record(event: ServiceEvent): boolean {
    const now = this.now();
    const id = `${event.service}\u0000${event.reason}\u0000${event.message}`;
    const last = this.lastSent.get(id);
    if (last !== undefined && now - last < this.repeatAfterMs) return false;
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.lastRefillMs) / 1000) * this.perSecond);
    this.lastRefillMs = now;
    if (this.tokens < 1) {
      this.dropped++;
      this.onDropped(event, 'rateLimited');
      return false;
    }
    this.tokens -= 1;
    this.lastSent.set(id, now);
    if (this.lastSent.size > 10000) this.lastSent.delete(this.lastSent.keys().next().value as string);
    this.sink.send(event).catch((err: unknown) => {
      this.onError(err, event);
      this.onDropped(event, 'sendFailed');
    });
    return true;
  }
}

/** Writes core/v1 Events for Services (POST /api/v1/namespaces/NS/events). */
export class KubernetesEventSink implements EventSink {
  private readonly api: KubeClient;
  private readonly component: string;
  private readonly host: string | undefined;

  constructor(kc: KubeClient, component = 'herald', host?: string) {
    this.api = kc;
    this.component = component;
    this.host = host;
  }

  async send(event: ServiceEvent): Promise<void> {
    const [namespace = 'default', name = ''] = event.service.split('/');
    const now = new Date().toISOString();
    const body = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: `${name}.${Date.now().toString(16)}${Math.floor(Math.random() * 0xfff).toString(16)}`, namespace },
      involvedObject: { kind: 'Service', apiVersion: 'v1', namespace, name },
      reason: event.reason,
      message: event.message,
      type: event.type,
      source: { component: this.component, ...(this.host ? { host: this.host } : {}) },
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1,
    };
    await this.api.request('POST', `/api/v1/namespaces/${encodeURIComponent(namespace)}/events`, { body });
  }
}
