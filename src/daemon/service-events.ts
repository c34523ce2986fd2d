/**
 * Kubernetes Events on a Service (rate-limited by the EventRecorder):
 * - when this node's announcement of one of its VIPs changes: `Announced` and `Withdrawn` (Normal); the message names
 *   the node, the VIP and, for a withdrawal, the reason chain (e.g. NoLocalReadyEndpoint; a failing health check by its
 *   codes only: `eventText`);
 * - when Herald refuses something the Service asks for (admission.ts: `PrefixNotAllowed`): a Warning with that code as
 *   its reason, once when the refusal appears. Every node reaches the same refusal from the same inputs, so only the
 *   node `refusals()` names posts them (in a cluster, the holder of the status writer's Lease).
 *
 * The first full pass only records the state (a restart must not post one Event per VIP); afterwards each pass's
 * changed Services are compared with what was last seen. Rate limiting and de-duplication are the EventRecorder's.
 */
import type { ServiceEvent } from '../events/recorder.ts';
import type { ServiceDecision } from '../controller/desired-routes.ts';
import { ReasonCode, REFUSAL_CODES } from '../controller/reasons.ts';
import type { DecisionChanges, DecisionSet } from './health-gate.ts';

/**
 * A reason as an Event on the Service says it. A failing health check is named by its codes only (`HealthCheckFailing
 * (UnexpectedStatus)`), never with what the probed target answered: the Event is read by the Service's tenant, and
 * the answer of a host on the node network is none of their business (docs/security.md). The admin API keeps it.
 */
function eventText(r: { code: string; message: string; causes?: readonly { code: string }[] }): string {
  if (r.code !== ReasonCode.HealthCheckFailing) return `${r.code}: ${r.message}`;
  const codes = [...new Set((r.causes ?? []).map((c) => c.code))];
  return codes.length > 0 ? `${r.code} (${codes.join(', ')})` : r.code;
}

/** Options of {@link AnnouncementEvents}. */
export interface AnnouncementEventsOptions {
  /** Whether this node posts the Events of refused input (default: always). */
  readonly refusals?: () => boolean;
}

/** Where Events go: an EventRecorder in production, an array in tests. */
export interface ServiceEventSink {
  record(event: ServiceEvent): unknown;
}

/** See the module comment. */
export class AnnouncementEvents {
  private readonly nodeName: string;
  private readonly sink: ServiceEventSink;
  /**
   * service → the VIP addresses announced when it was last seen; a Service announcing none has no entry (at 10,000
   * Services most announce nothing from one node: docs/benchmarks.md "Where the memory goes").
   */
  private readonly last = new Map<string, readonly string[]>();
  /** service → its refusals when last seen ("code address message"); Services with none have no entry. */
  private readonly refused = new Map<string, readonly string[]>();
  private readonly postsRefusals: () => boolean;
  private primed = false;

  constructor(nodeName: string, sink: ServiceEventSink, opts: AnnouncementEventsOptions = {}) {
    this.nodeName = nodeName;
    this.sink = sink;
    this.postsRefusals = opts.refusals ?? (() => true);
  }

  /** Compares the Services named in `changes` (all of them when absent or `all`) with their last known state. */
  observe(decisions: DecisionSet, changes?: DecisionChanges): void {
    const full = !changes || changes.all || !this.primed;
    const wanted = full ? undefined : [...changes.services].sort();
    const seen = new Set<string>();
    // Only the changed Services are looked at: O(changes), not O(Services).
    const todo = wanted ? wanted.map((k) => decisions.service(k)).filter((s) => s !== undefined) : decisions.services();
    for (const s of todo) {
      seen.add(s.service);
      const before = this.last.get(s.service);
      const announced: string[] = [];
      for (const v of s.vips) {
        const was = before?.includes(v.address) ?? false;
        if (v.announced) announced.push(v.address);
        if (v.kind === 'clusterIP' && !v.announced && !was) continue; // ClusterIPs not selected by any advertisement: no noise
        if (this.primed && was !== v.announced) {
          const why = v.reasons.filter((r) => !['Advertised', 'LocalReadyEndpoint', 'ReadyEndpoint'].includes(r.code)).map(eventText).join('; ');
          this.sink.record(
            v.announced
              ? { service: s.service, type: 'Normal', reason: 'Announced', message: `node ${this.nodeName} announces ${v.address} (${v.kind})` }
              : { service: s.service, type: 'Normal', reason: 'Withdrawn', message: `node ${this.nodeName} withdrew ${v.address} (${v.kind})${why ? `: ${why}` : ''}` },
          );
        }
      }
      if (announced.length > 0) this.last.set(s.service, announced.slice()); // its exact length
      else this.last.delete(s.service);
      this.#refusals(s);
    }
    // Services that disappeared (deleted): forget them without an Event (the Service is gone).
    const gone = full ? [...this.last.keys()].filter((k) => !seen.has(k)) : (wanted ?? []).filter((k) => !seen.has(k));
    for (const k of gone) {
      this.last.delete(k);
      this.refused.delete(k);
    }
    this.primed = true;
  }

  /** A Warning for each refusal of the Service that was not there when it was last seen. */
  #refusals(s: ServiceDecision): void {
    const before = this.refused.get(s.service);
    const now: string[] = [];
    for (const v of s.vips) {
      for (const r of v.reasons) {
        if (!REFUSAL_CODES.has(r.code)) continue;
        const id = `${r.code} ${v.address} ${r.message}`;
        if (now.includes(id)) continue;
        now.push(id);
        if (this.primed && !(before?.includes(id) ?? false) && this.postsRefusals()) {
          // Most refusal messages name the address already; the shared ones do not.
          const message = r.message.includes(v.address) ? r.message : `${v.address} (${v.kind}): ${r.message}`;
          this.sink.record({ service: s.service, type: 'Warning', reason: r.code, message });
        }
      }
    }
    if (now.length > 0) this.refused.set(s.service, now);
    else this.refused.delete(s.service);
  }
}
