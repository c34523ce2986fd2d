/**
 * BFD timer negotiation as pure functions (RFC 5880 §6.8.2–§6.8.4, §6.8.7). All intervals in microseconds, the
 * unit of the packet fields.
 */
import type { BfdState } from './packet.ts';

/** The slowest-start rule: while not Up, bfd.DesiredMinTxInterval is at least one second (RFC 5880 §6.8.3). */
export const SLOW_TX_INTERVAL_US = 1_000_000;

/**
 * The bfd.DesiredMinTxInterval to advertise: the configured value once Up, at least one second otherwise
 * (RFC 5880 §6.8.3).
 */
export function advertisedTxIntervalUs(configuredUs: number, state: BfdState): number {
  return state === 'Up' ? configuredUs : Math.max(configuredUs, SLOW_TX_INTERVAL_US);
}

/**
 * The negotiated transmission interval: the larger of our bfd.DesiredMinTxInterval and the remote's
 * bfd.RemoteMinRxInterval (RFC 5880 §6.8.2, §6.8.7). 0 when the remote asks for no packets (RemoteMinRx 0).
 */
export function transmitIntervalUs(desiredMinTxUs: number, remoteMinRxUs: number): number {
  if (remoteMinRxUs === 0) return 0;
  return Math.max(desiredMinTxUs, remoteMinRxUs);
}

/**
 * One jittered inter-packet gap (RFC 5880 §6.8.7): the interval reduced by a random 0–25 %, i.e. 75–100 % of it;
 * with bfd.DetectMult 1, 75–90 %. `random` returns [0, 1) like Math.random.
 */
export function jitteredIntervalUs(intervalUs: number, detectMult: number, random: () => number): number {
  const span = detectMult === 1 ? 0.15 : 0.25;
  return intervalUs * (0.75 + span * Math.min(Math.max(random(), 0), 1));
}

/**
 * The Detection Time in Asynchronous mode (RFC 5880 §6.8.4): the remote's Detect Mult times the larger of our
 * bfd.RequiredMinRxInterval and the remote's last Desired Min TX Interval.
 */
export function detectionTimeUs(remoteDetectMult: number, requiredMinRxUs: number, remoteDesiredMinTxUs: number): number {
  return remoteDetectMult * Math.max(requiredMinRxUs, remoteDesiredMinTxUs);
}
