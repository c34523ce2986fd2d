/**
 * What a SIGTERM means (docs/decisions.md "Stop modes", docs/upgrades.md): a *restart* keeps the routers' forwarding
 * state (a rolling update, a pod deletion, a liveness kill: the node goes on forwarding and Herald comes back), a
 * *departure* moves the traffic away first (the node is drained or leaving service). Pure.
 */
import type { StopMode } from '../../bgp/main-thread.ts';

/** `shutdown.onTerm`: `auto` decides by the node's state; `restart` and `departure` force the mode. */
export type OnTerm = 'auto' | 'restart' | 'departure';

/** What the decision looks at. */
export interface StopInputs {
  readonly onTerm: OnTerm;
  /** Kubernetes source (node departure signals count), or standalone (only a drain makes a departure). */
  readonly kubernetes: boolean;
  /** Why the node is drained (e.g. `annotation herald.io/drain="maintenance" on Node n1`), undefined when not. */
  readonly drained: string | undefined;
  /** Why the node is leaving service (e.g. `Node n1 has taint ToBeDeletedByClusterAutoscaler`), undefined when not. */
  readonly departing: string | undefined;
}

/** The mode and the sentence the stop's log line gives as its reason. */
export interface StopDecision {
  readonly mode: StopMode;
  readonly why: string;
}

/**
 * The stop mode of a SIGTERM. `onTerm` other than `auto` wins; otherwise a drained node departs, a departing node
 * (Kubernetes only) departs, and anything else is a restart.
 */
export function decideStopMode(i: StopInputs): StopDecision {
  if (i.onTerm === 'restart') return { mode: 'restart', why: 'shutdown.onTerm is restart' };
  if (i.onTerm === 'departure') return { mode: 'departure', why: 'shutdown.onTerm is departure' };
  if (i.drained !== undefined) return { mode: 'departure', why: `the node is drained (${i.drained})` };
  if (i.kubernetes && i.departing !== undefined) return { mode: 'departure', why: `the node is leaving service (${i.departing})` };
  return {
    mode: 'restart',
    why: i.kubernetes
      ? 'not drained and the node is not departing: a rolling update, pod deletion or liveness kill'
      : 'not drained (standalone: a stop is a restart unless drained)',
  };
}
