/**
 * What a SIGTERM means (docs/decisions.md "Stop modes", docs/upgrades.md): a *restart* keeps the routers' forwarding
 * state (a rolling update, a pod deletion, a liveness kill: the node goes on forwarding and Herald comes back), a
 * *departure* moves the traffic away first (the node is drained or leaving service). Pure.
 */
import type { StopMode } from '../../bgp/main-thread.ts';
import type { Config } from '../config/schema.ts';

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

/**
 * The RFC 8326 wait of a departure or a drain: whether some peer enables graceful shutdown, and the largest
 * `gracefulShutdown.waitTime` among those that do (seconds; 0 when none does).
 */
export function gracefulWait(cfg: Pick<Config, 'peers'>): { graceful: boolean; waitTimeSec: number } {
  let graceful = false;
  let waitTimeSec = 0;
  for (const p of cfg.peers) {
    if (p.gracefulShutdown?.enabled) {
      graceful = true;
      waitTimeSec = Math.max(waitTimeSec, p.gracefulShutdown.waitTime);
    }
  }
  return { graceful, waitTimeSec };
}

/** What the daemon's shutdown looks at besides the configuration. */
export interface StopState {
  /** What asked for the stop (`SIGTERM`, `admin API failed`, ...). */
  readonly reason: string;
  readonly drained: string | undefined;
  readonly departing: string | undefined;
  /** The operator's drain has withdrawn everything already. */
  readonly withdrawn: boolean;
  /** Some session is Established (with none, a departure has no traffic to move: no wait). */
  readonly established: boolean;
}

/** A stop: what the speaker is told, and the log line that says which mode and why. */
export interface StopPlan {
  readonly stop: { mode: StopMode; message: string; waitTimeSec?: number };
  readonly log: Record<string, unknown>;
  readonly line: string;
}

/** The stop the configuration and the node's state call for (decideStopMode, gracefulWait). Pure. */
export function stopPlan(cfg: Pick<Config, 'peers' | 'shutdown' | 'source'>, s: StopState): StopPlan {
  const { mode, why } = decideStopMode({ onTerm: cfg.shutdown.onTerm, kubernetes: cfg.source?.kubernetes !== undefined, drained: s.drained, departing: s.departing });
  const g = gracefulWait(cfg);
  const waitTimeSec = g.graceful && s.established ? g.waitTimeSec : 0;
  const departure = { waitTimeSec, drainedAlready: s.withdrawn, ...(waitTimeSec !== g.waitTimeSec ? { skippedWait: 'no Established session' } : {}) };
  return {
    stop: { mode, message: mode === 'restart' ? `herald restarting (${s.reason})` : `herald leaving: ${why}`, ...(mode === 'departure' ? { waitTimeSec } : {}) },
    log: { reason: s.reason, mode, why, ...(mode === 'departure' ? departure : {}) },
    line: `stopping (${s.reason}): ${mode}: ${why}`,
  };
}
