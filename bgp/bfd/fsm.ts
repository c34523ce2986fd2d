/**
 * The BFD session state machine (RFC 5880 §6.2, §6.8.6, §6.8.4, §6.8.16) as a pure function:
 * `transition(state, event)` returns the next state, the new bfd.LocalDiag when it changes, and whether
 * bfd.RemoteDiscr must be cleared. Timers, packets and the Poll Sequence are the session shell's job
 * (bgp/bfd/session.ts); this file holds only the diagram:
 *
 *                              +--+
 *                              |  | UP, ADMIN DOWN, TIMER
 *                              |  V
 *                      DOWN  +------+  INIT
 *               +------------|      |------------+
 *               |            | DOWN |            |
 *               |  +-------->|      |<--------+  |
 *               |  |         +------+         |  |
 *               |  |                          |  |
 *               |  |               ADMIN DOWN,|  |
 *               |  |ADMIN DOWN,          DOWN,|  |
 *               |  |TIMER                TIMER|  |
 *               V  |                          |  V
 *             +------+                      +------+
 *        +----|      |                      |      |----+
 *    DOWN|    | INIT |--------------------->|  UP  |    |INIT, UP
 *        +--->|      | INIT, UP             |      |<---+
 *             +------+                      +------+
 *
 * (RFC 5880 §6.2; event names are the State field of a received packet, TIMER is the Detection Time expiring.)
 * The local AdminDown state (§6.8.16) is entered and left only by management: `AdminDown` / `AdminUp` events.
 *
 * One choice beyond the RFC text: bfd.LocalDiag is cleared (0, No Diagnostic) on the way to Up, as BIRD and FRR do,
 * so a Diag in our packets always explains the last time the session left Up (docs/sessions.md, BFD).
 */
import { BfdDiag } from './packet.ts';
import type { BfdState } from './packet.ts';

/** Inputs of the state machine. */
export type BfdFsmEvent =
  /** A valid Control packet demultiplexed to this session (RFC 5880 §6.8.6), with its State field. */
  | { readonly type: 'ControlPacket'; readonly remoteState: BfdState }
  /** The Detection Time passed without a valid packet (RFC 5880 §6.8.4; in Down and AdminDown too, §6.8.1). */
  | { readonly type: 'DetectionTimeExpired' }
  /** Management holds the session down (RFC 5880 §6.8.16). */
  | { readonly type: 'AdminDown' }
  /** Management enables the session again (RFC 5880 §6.8.16). */
  | { readonly type: 'AdminUp' };

/** The result of one event. `diag` is the new bfd.LocalDiag when it changes. */
export interface BfdTransition {
  readonly state: BfdState;
  readonly diag?: number;
  /** bfd.RemoteDiscr must be set to zero (RFC 5880 §6.8.1: a Detection Time passed without a valid packet). */
  readonly resetRemoteDiscriminator?: boolean;
}

/** Next state for `event` in `state` (RFC 5880 §6.2, §6.8.4, §6.8.6, §6.8.16). Pure; never throws. */
export function transition(state: BfdState, event: BfdFsmEvent): BfdTransition {
  switch (event.type) {
    case 'AdminDown':
      return state === 'AdminDown' ? { state } : { state: 'AdminDown', diag: BfdDiag.AdministrativelyDown };
    case 'AdminUp':
      return { state: state === 'AdminDown' ? 'Down' : state };
    case 'DetectionTimeExpired':
      if (state === 'Init' || state === 'Up') return { state: 'Down', diag: BfdDiag.ControlDetectionTimeExpired, resetRemoteDiscriminator: true };
      // §6.8.1: bfd.RemoteDiscr is reset whatever the state, so a restarted remote (a new My Discriminator) is heard
      return { state, resetRemoteDiscriminator: true };
    case 'ControlPacket':
      return received(state, event.remoteState);
  }
}

/** The state rules of RFC 5880 §6.8.6, after the packet has been accepted and the remote variables updated. */
function received(state: BfdState, remote: BfdState): BfdTransition {
  if (state === 'AdminDown') return { state }; // "If bfd.SessionState is AdminDown: Discard the packet"
  if (remote === 'AdminDown') {
    return state === 'Down' ? { state } : { state: 'Down', diag: BfdDiag.NeighborSignaledSessionDown };
  }
  switch (state) {
    case 'Down':
      if (remote === 'Down') return { state: 'Init' };
      if (remote === 'Init') return { state: 'Up', diag: BfdDiag.NoDiagnostic };
      return { state };
    case 'Init':
      if (remote === 'Init' || remote === 'Up') return { state: 'Up', diag: BfdDiag.NoDiagnostic };
      return { state };
    case 'Up':
      if (remote === 'Down') return { state: 'Down', diag: BfdDiag.NeighborSignaledSessionDown };
      return { state };
  }
}
