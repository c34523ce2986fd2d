/**
 * BGP session states (RFC 4271 §8.2.2) and the reasons recorded for every state change.
 */
import { describeNotification } from '../errors.ts';

/** The six states of the RFC 4271 §8 finite state machine. */
export const SessionState = {
  Idle: 'Idle',
  Connect: 'Connect',
  Active: 'Active',
  OpenSent: 'OpenSent',
  OpenConfirm: 'OpenConfirm',
  Established: 'Established',
} as const;
export type SessionState = (typeof SessionState)[keyof typeof SessionState];

/**
 * Why a session changed state: data, not text (logs, metrics and the admin API render it).
 * `notificationSent`/`notificationReceived` carry the NOTIFICATION code/subcode and, for Cease 2/4, the RFC 9003
 * shutdown communication in `text`; a NOTIFICATION we sent because of a local failure says what failed in `cause`.
 */
export type StateReason =
  | { readonly kind: 'notificationSent'; readonly code: number; readonly subcode: number; readonly text?: string; readonly cause?: string }
  | { readonly kind: 'notificationReceived'; readonly code: number; readonly subcode: number; readonly text?: string }
  | { readonly kind: 'holdTimerExpired' }
  | { readonly kind: 'transportError'; readonly message: string }
  | { readonly kind: 'connectionClosed' }
  | { readonly kind: 'admin'; readonly message: string }
  | { readonly kind: 'deconfigured' }
  | { readonly kind: 'collision' }
  | { readonly kind: 'started' }
  | { readonly kind: 'progress'; readonly message: string };

/**
 * The one line of human text for a state-change reason (logs, status pages), e.g. "NOTIFICATION sent: Cease /
 * Administrative Shutdown "maintenance"". Covers every StateReason kind; "unknown" for no reason (no state change
 * yet). `describe` names a NOTIFICATION code/subcode (default: the RFC 4271 / IANA names of describeNotification).
 */
export function describeReason(reason: StateReason | undefined, describe: (code: number, subcode: number) => string = describeNotification): string {
  if (reason === undefined) return 'unknown';
  switch (reason.kind) {
    case 'notificationSent':
    case 'notificationReceived': {
      const dir = reason.kind === 'notificationSent' ? 'sent' : 'received';
      const text = reason.text !== undefined ? ` "${reason.text}"` : '';
      const cause = reason.kind === 'notificationSent' && reason.cause !== undefined ? ` (${reason.cause})` : '';
      return `NOTIFICATION ${dir}: ${describe(reason.code, reason.subcode)}${text}${cause}`;
    }
    case 'holdTimerExpired':
      return 'hold timer expired';
    case 'transportError':
      return `transport error: ${reason.message}`;
    case 'connectionClosed':
      return 'connection closed by peer';
    case 'admin':
      return `administrative: ${reason.message}`;
    case 'deconfigured':
      return 'peer de-configured';
    case 'collision':
      return 'connection collision resolution';
    case 'started':
      return 'started';
    case 'progress':
      return reason.message;
  }
}
