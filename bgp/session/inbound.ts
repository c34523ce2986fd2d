/**
 * Inbound: what one framed message received on a connection means to the session (RFC 4271 §4, §6; RFC 2918).
 * Each message is counted and decoded here; the session turns the result into FSM events. UPDATE bodies are not
 * decoded here: the FSM delivers them only in Established, and the session decodes them then.
 */
import { HEADER_LENGTH, MessageType } from '../constants.ts';
import { BgpError } from '../errors.ts';
import { decodeNotification } from '../codec/notification.ts';
import { decodeOpen } from '../codec/open.ts';
import { decodeRouteRefresh } from '../codec/route-refresh.ts';
import type { OpenMessage } from '../codec/types.ts';
import type { FsmEvent } from '../fsm/events.ts';
import { SessionState } from '../fsm/state.ts';
import { checkPeerOpen } from './open-exchange.ts';
import type { SessionOptions } from './options.ts';
import { countReceived, notificationRecord } from './stats.ts';
import type { SessionStats } from './stats.ts';

/** A received message: the FSM event it is, or (in OpenSent) the peer's checked OPEN, to be agreed on first. */
export type Inbound = { readonly event: FsmEvent; readonly open?: undefined } | { readonly open: OpenMessage; readonly event?: undefined };

const EV_KEEPALIVE: FsmEvent = Object.freeze({ type: 'KeepAliveMsg' });

/**
 * Reads one message (header included) on the FSM's connection in `state`: counted in `stats`, a NOTIFICATION
 * recorded at clock time `now` (ms). Throws BgpError for what the codec rejects, for an OPEN that fails the
 * configuration checks (2/2, 2/3) and for an unknown message type (1/3).
 */
export function readMessage(msg: Buffer, state: SessionState, options: SessionOptions, stats: SessionStats, now: number): Inbound {
  const type = msg[18] as number;
  countReceived(stats, type);
  const body = msg.subarray(HEADER_LENGTH);
  switch (type) {
    case MessageType.Open: {
      const open = decodeOpen(body);
      if (state !== SessionState.OpenSent) return { event: { type: 'BgpOpen', holdTimeSec: open.holdTime } };
      checkPeerOpen(open, options);
      return { open };
    }
    case MessageType.Update:
      return { event: { type: 'UpdateMsg', body } };
    case MessageType.Notification: {
      const n = decodeNotification(body);
      const text = n.shutdownCommunication;
      stats.lastNotificationReceived = notificationRecord({ code: n.errorCode, subcode: n.errorSubcode, data: Buffer.from(n.data), text }, now);
      return { event: text !== undefined ? { type: 'NotifMsg', code: n.errorCode, subcode: n.errorSubcode, text } : { type: 'NotifMsg', code: n.errorCode, subcode: n.errorSubcode } };
    }
    case MessageType.Keepalive:
      return { event: EV_KEEPALIVE };
    case MessageType.RouteRefresh: {
      const rr = decodeRouteRefresh(msg);
      return { event: { type: 'RouteRefreshMsg', request: { afi: rr.afi, safi: rr.safi, subtype: rr.subtype } } };
    }
    default:
      throw BgpError.badMessageType(type);
  }
}

/**
 * Reads one message on a collision candidate, which runs its own OpenSent: its checked OPEN, or undefined for a
 * NOTIFICATION (the candidate is given up). Throws BgpError for anything else (RFC 6608 5/1) and for a bad OPEN.
 */
export function readCandidateMessage(msg: Buffer, options: SessionOptions, stats: SessionStats): OpenMessage | undefined {
  const type = msg[18] as number;
  countReceived(stats, type);
  if (type === MessageType.Notification) return undefined;
  if (type !== MessageType.Open) throw BgpError.fsmError(SessionState.OpenSent, type);
  const open = decodeOpen(msg.subarray(HEADER_LENGTH));
  checkPeerOpen(open, options);
  return open;
}
