/**
 * SessionOptions: the configuration of one peer session, and the FSM configuration derived from it.
 */
import type { Family } from '../constants.ts';
import { parseIdentifier } from '../codec/open.ts';
import type { Clock } from '../clock.ts';
import type { FsmConfig } from '../fsm/fsm.ts';
import { inRange, PEER_OPTIONS, rangeText } from '../peer-config.ts';

/** Configuration of one peer session. Durations in seconds. */
export interface SessionOptions {
  /** Peer name for logs and events. */
  name: string;
  localAs: number;
  peerAs: number;
  /** Our BGP Identifier, dotted quad. */
  bgpIdentifier: string;
  remoteAddress: string;
  /** Default 179. */
  remotePort?: number;
  localAddress?: string;
  localPort?: number;
  /** Default 90; 0 = no keepalives and no hold timer; 1 and 2 are invalid (RFC 4271 §4.2). */
  holdTimeSec?: number;
  /** Default one third of the negotiated hold time (capped at it). */
  keepaliveTimeSec?: number;
  /** Cap of the reconnect backoff (default 120); also the connect timeout. */
  connectRetryTimeSec?: number;
  /** First reconnect delay in ms (default 1000). */
  connectRetryBaseMs?: number;
  /** Never dial; wait for the peer to connect through the listener. */
  passive?: boolean;
  /** RFC 2385 TCP MD5 key. */
  md5Password?: string;
  /** TTL of our packets for multihop eBGP. */
  ebgpMultihop?: number;
  /** RFC 5082 GTSM (TTL 255, minimum 256 - hops). */
  ttlSecurity?: boolean;
  /** Families offered in Multiprotocol capabilities (default both unicast families). */
  families?: Family[];
  /**
   * RFC 4724 graceful restart capability: restart time, R bit, per-family F bit, and the RFC 8538 N bit
   * (`notification`, default false). Read at each OPEN.
   */
  gracefulRestart?: { restartTimeSec: number; restarting: boolean; forwardingPreserved: boolean; notification?: boolean };
  /** Offer RFC 8654 extended messages (default true). */
  extendedMessage?: boolean;
  /** Maximum prefixes received (announced NLRI counted per UPDATE, cumulative); exceeded → Cease 1 (RFC 4486). */
  maxPrefixes?: number;
  /** Time source (default realClock). */
  clock?: Clock;
  /** Random source for backoff jitter (tests). */
  random?: () => number;
}

/**
 * The FSM configuration of a session (hold time default 90 s, bgp/peer-config.ts). Throws RangeError for a hold
 * time of 1 or 2 seconds or outside 0..65535 (RFC 4271 §4.2) and for a BGP Identifier that is not a dotted quad.
 */
export function fsmConfigOf(options: SessionOptions): FsmConfig {
  const hold = PEER_OPTIONS.holdTimeSec;
  const holdTimeSec = options.holdTimeSec ?? hold.default;
  if (!inRange(hold, holdTimeSec)) throw new RangeError(`holdTimeSec must be ${rangeText(hold)} (RFC 4271 §4.2), got ${holdTimeSec}`);
  parseIdentifier(options.bgpIdentifier);
  const passive = options.passive ?? false;
  return options.keepaliveTimeSec !== undefined ? { holdTimeSec, passive, keepaliveTimeSec: options.keepaliveTimeSec } : { holdTimeSec, passive };
}
