/**
 * Connection collisions (RFC 4271 §6.8): the second connection from the peer, held aside as the *candidate* while
 * the session's own connection is in OpenSent, OpenConfirm or Established, and the rule that decides what happens
 * once the peer's OPEN arrives on it. The decision reaches the FSM as `CollisionSwitch` or `PeerRestarted`
 * (bgp/fsm/events.ts); a losing candidate is closed by the session with Cease 7.
 */
import { parseIdentifier } from '../codec/open.ts';
import type { Clock, TimerHandle } from '../clock.ts';
import { SessionState } from '../fsm/state.ts';

/** What the facts of one collision are, once the candidate delivered the peer's OPEN. */
export interface CollisionFacts {
  /** The FSM's state (of the session's own connection). */
  readonly state: SessionState;
  /** Our BGP Identifier and the one in the candidate's OPEN, dotted quads. */
  readonly localId: string;
  readonly remoteId: string;
  /** Our AS and the peer's (4-octet values; they differ whenever the Identifiers may be equal: eBGP). */
  readonly localAs: number;
  readonly peerAs: number;
  /** Who opened the session's own connection (none in Idle and Active); the candidate is always the peer's. */
  readonly existing: 'outgoing' | 'incoming' | undefined;
  /** The peer negotiated graceful restart (RFC 4724) on the session's own connection. */
  readonly gracefulRestart: boolean;
}

/**
 * What to do with a candidate whose valid OPEN arrived:
 * - OpenSent / OpenConfirm: RFC 4271 §6.8, BGP Identifiers compared as unsigned 32-bit integers. Ours lower: the
 *   existing connection is closed with Cease 7 and the session continues on the candidate (`switch`); ours higher:
 *   the candidate gets Cease 7 (`closeCandidate`). This is the rule as written, whichever side opened the existing
 *   one. Equal Identifiers (possible only between eBGP peers; iBGP rejects them with 2/3, RFC 6286 §2.2): RFC 6286
 *   §2.3, the connection opened by the speaker with the larger AS number survives. The candidate is the peer's, so it
 *   wins when the peer's AS is larger and the existing connection is ours; when both are the peer's (a passive
 *   session), the existing one stays.
 * - Established: a collision closes the new connection (CollisionDetectEstablishedState is not implemented), unless
 *   the peer negotiated graceful restart: a valid OPEN on a new connection proves it restarted (RFC 4724 §4:
 *   `peerRestarted`).
 * - Idle, Connect, Active: the connection the candidate collided with is gone; the candidate gets Cease 7 and the
 *   session reconnects as usual.
 */
export function resolveCollision(f: CollisionFacts): 'switch' | 'closeCandidate' | 'peerRestarted' {
  switch (f.state) {
    case SessionState.OpenSent:
    case SessionState.OpenConfirm:
      return existingSurvives(f) ? 'closeCandidate' : 'switch';
    case SessionState.Established:
      return f.gracefulRestart ? 'peerRestarted' : 'closeCandidate';
    default:
      return 'closeCandidate';
  }
}

/** RFC 4271 §6.8 and RFC 6286 §2.3: does the existing connection survive the candidate's OPEN? */
function existingSurvives(f: CollisionFacts): boolean {
  const local = parseIdentifier(f.localId) >>> 0;
  const remote = parseIdentifier(f.remoteId) >>> 0;
  if (local !== remote) return local > remote;
  return !(f.peerAs > f.localAs && f.existing === 'outgoing');
}

/**
 * The candidate slot: at most one connection held aside, with its own OpenSent wait (it runs its own OpenSent,
 * RFC 4271 §8: we send our OPEN on it; a candidate that sends nothing within `waitMs` is given up).
 */
export class CandidateSlot<C> {
  private readonly clock: Clock;
  private readonly timedOut: (conn: C) => void;
  private held: { readonly conn: C; readonly timer: TimerHandle } | undefined;

  /** `timedOut(conn)` is called when a held candidate's wait ran out; it is no longer held then. */
  constructor(clock: Clock, timedOut: (conn: C) => void) {
    this.clock = clock;
    this.timedOut = timedOut;
  }

  /** The candidate held now, if any. */
  get conn(): C | undefined {
    return this.held?.conn;
  }

  /** Holds `conn` for at most `waitMs`. Call `take()` first: one candidate at a time. */
  hold(conn: C, waitMs: number): void {
    this.take();
    const timer = this.clock.setTimer(() => {
      if (this.held?.conn !== conn) return;
      this.held = undefined;
      this.timedOut(conn);
    }, waitMs);
    this.held = { conn, timer };
  }

  /** Stops holding the candidate (its wait is cancelled) and returns it. */
  take(): C | undefined {
    const held = this.held;
    if (!held) return undefined;
    this.held = undefined;
    this.clock.clearTimer(held.timer);
    return held.conn;
  }
}
