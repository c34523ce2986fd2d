/**
 * The OPEN exchange seen from the session's configuration: our OPEN (RFC 4271 §4.2 with RFC 5492 capabilities) and
 * the configuration checks of the peer's (RFC 4271 §6.2, RFC 6286, RFC 6793 §4.2). Decoding and the generic checks
 * are the codec's (bgp/codec/open.ts).
 */
import { AS_TRANS, Afi, MAX_EXTENDED_MESSAGE_LENGTH, MAX_MESSAGE_LENGTH, Safi } from '../constants.ts';
import type { Family } from '../constants.ts';
import { BgpError } from '../errors.ts';
import { buildOpen, codecContextFor, negotiate, validateOpen } from '../codec/open.ts';
import type { Negotiated } from '../codec/open.ts';
import { DEFAULT_CONTEXT } from '../codec/types.ts';
import type { Capability, CodecContext, OpenMessage } from '../codec/types.ts';
import { negotiateHoldTime } from '../fsm/fsm.ts';
import type { FsmConfig } from '../fsm/fsm.ts';
import { PEER_OPTIONS } from '../peer-config.ts';
import type { SessionOptions } from './options.ts';

/** AFI/SAFI of each family Herald speaks. */
export const FAMILY_AFI_SAFI: Record<Family, { afi: number; safi: number }> = {
  'ipv4-unicast': { afi: Afi.IPv4, safi: Safi.Unicast },
  'ipv6-unicast': { afi: Afi.IPv6, safi: Safi.Unicast },
};

/** The family of "AFI/SAFI" (e.g. "2/1" → ipv6-unicast), for the families Herald speaks; the inverse of FAMILY_AFI_SAFI. */
export const FAMILY_OF_AFI: Readonly<Record<string, Family>> = { '1/1': 'ipv4-unicast', '2/1': 'ipv6-unicast' };


/**
 * Our OPEN from the options (built for each connection: the R bit can change between them): Multiprotocol per
 * family, Route Refresh, Extended Message unless disabled, Graceful Restart when configured (R, N and F bits),
 * 4-octet AS.
 */
export function localOpen(o: SessionOptions, holdTimeSec: number): OpenMessage {
  const families = o.families ?? PEER_OPTIONS.families.default;
  const caps: Capability[] = [];
  for (const f of families) caps.push({ type: 'Multiprotocol', ...FAMILY_AFI_SAFI[f] });
  caps.push({ type: 'RouteRefresh' });
  if (o.extendedMessage !== false) caps.push({ type: 'ExtendedMessage' });
  if (o.gracefulRestart) {
    const gr = o.gracefulRestart;
    caps.push({
      type: 'GracefulRestart',
      restarting: gr.restarting,
      notification: gr.notification ?? false,
      restartTimeSec: Math.min(4095, Math.max(0, Math.round(gr.restartTimeSec))),
      families: families.map((f) => ({ ...FAMILY_AFI_SAFI[f], forwardingPreserved: gr.forwardingPreserved })),
    });
  }
  caps.push({ type: 'FourOctetAs', asNumber: o.localAs });
  return buildOpen({ localAs: o.localAs, holdTimeSec, bgpIdentifier: o.bgpIdentifier, capabilities: caps });
}

/** Configuration checks of the peer's OPEN: 2/2 peer AS, 2/3 our own identifier on iBGP. Throws BgpError. */
export function checkPeerOpen(open: OpenMessage, o: SessionOptions): void {
  const isIbgp = o.peerAs === o.localAs;
  validateOpen(open, { peerAs: o.peerAs, localBgpIdentifier: o.bgpIdentifier, isIbgp });
  // RFC 6793 §4.2: a 2-octet speaker in an AS > 65535 must send AS_TRANS... and we cannot verify more.
  if (o.peerAs > 0xffff && !open.capabilities.some((c) => c.type === 'FourOctetAs') && open.myAutonomousSystem !== AS_TRANS) {
    throw BgpError.badPeerAs(open.myAutonomousSystem, `peer AS ${o.peerAs} needs 4 octets but the peer sent ${open.myAutonomousSystem}`);
  }
}

/** What both OPENs of a connection agreed, as the session uses it. */
export interface Agreement {
  /** Undefined before the peer's OPEN. */
  readonly negotiated: Negotiated | undefined;
  /** Codec contexts for what we send and what we receive (4-octet AS, extended messages, ADD-PATH). */
  readonly sendCtx: CodecContext;
  readonly recvCtx: CodecContext;
  /** Largest message either side may send: 4096, or 65535 with RFC 8654. */
  readonly maxLength: number;
}

/** Before the peer's OPEN: RFC 4271 defaults. */
export const NO_AGREEMENT: Agreement = Object.freeze({ negotiated: undefined, sendCtx: DEFAULT_CONTEXT, recvCtx: DEFAULT_CONTEXT, maxLength: MAX_MESSAGE_LENGTH });

/** The largest message of a session: 65535 octets when both sides advertised extended messages (RFC 8654), else 4096. */
export function maxMessageLength(n: Pick<Negotiated, 'extendedMessage'>): number {
  return n.extendedMessage ? MAX_EXTENDED_MESSAGE_LENGTH : MAX_MESSAGE_LENGTH;
}

/** Negotiates a connection from our OPEN and the peer's (codec `negotiate`, hold time per RFC 4271 §4.2). */
export function agree(local: OpenMessage, remote: OpenMessage, config: FsmConfig): Agreement {
  const timers = negotiateHoldTime(config.holdTimeSec, remote.holdTime, config.keepaliveTimeSec);
  // The KEEPALIVE interval actually used (a configured keepaliveTimeSec below a third of the hold time wins).
  const n: Negotiated = { ...negotiate(local, remote, config.holdTimeSec), keepaliveTimeSec: timers.keepaliveTimeSec };
  return { negotiated: n, sendCtx: codecContextFor(n, 'send'), recvCtx: codecContextFor(n, 'receive'), maxLength: maxMessageLength(n) };
}
