/**
 * SessionStats: the counters and last NOTIFICATIONs of one session (cumulative over its connections), for status
 * pages and metrics.
 */
import { describeNotification } from '../errors.ts';

/** A NOTIFICATION sent or received, for status pages. */
export interface NotificationRecord {
  code: number;
  subcode: number;
  data: Buffer;
  text?: string;
  description: string;
  at: number;
}

/** Counters of one session (cumulative over connections). */
export interface SessionStats {
  messagesSent: Record<string, number>;
  messagesReceived: Record<string, number>;
  updatesReceived: number;
  /** Prefixes received in the current session: currently announced ones with maxPrefixes set, else cumulative announced NLRI. */
  prefixesReceived: number;
  /** UPDATEs received that RFC 7606 repaired (treat-as-withdraw or attribute discard). */
  malformedUpdatesReceived: number;
  /** Clock time (ms) of the last transition to Established. */
  establishedAt?: number;
  /** Number of times the session left Established. */
  flaps: number;
  lastNotificationSent?: NotificationRecord;
  lastNotificationReceived?: NotificationRecord;
}

/** Message type names used as counter keys (RFC 4271 §4.1, RFC 2918). */
const TYPE_NAMES: Record<number, string> = { 1: 'OPEN', 2: 'UPDATE', 3: 'NOTIFICATION', 4: 'KEEPALIVE', 5: 'ROUTE-REFRESH' };

function emptyCounts(): Record<string, number> {
  return { OPEN: 0, UPDATE: 0, NOTIFICATION: 0, KEEPALIVE: 0, 'ROUTE-REFRESH': 0 };
}

/** Zeroed counters. */
export function newStats(): SessionStats {
  return { messagesSent: emptyCounts(), messagesReceived: emptyCounts(), updatesReceived: 0, prefixesReceived: 0, malformedUpdatesReceived: 0, flaps: 0 };
}

/** Counts one received message of type code `type` (an unknown type as "type N"). */
export function countReceived(stats: SessionStats, type: number): void {
  const name = TYPE_NAMES[type] ?? `type ${type}`;
  stats.messagesReceived[name] = (stats.messagesReceived[name] ?? 0) + 1;
}

/** The record of one NOTIFICATION at clock time `at` (ms). */
export function notificationRecord(n: { code: number; subcode: number; data: Buffer; text?: string | undefined }, at: number): NotificationRecord {
  const rec: NotificationRecord = { code: n.code, subcode: n.subcode, data: n.data, description: describeNotification(n.code, n.subcode), at };
  if (n.text !== undefined) rec.text = n.text;
  return rec;
}
