/**
 * One peer's status as the Speaker reports it (PeerStatus, bgp/speaker-types.ts: the admin API and metrics), from
 * its configuration, session and Adj-RIB-Out.
 */
import { BGP_PORT } from './constants.ts';
import type { Family } from './constants.ts';
import type { PeerBfdStatus } from './bfd/peers.ts';
import type { AdjRibOut } from './rib/adj-rib-out.ts';
import { FAMILY_OF_AFI } from './session/open-exchange.ts';
import type { PeerConfig, PeerSession, PeerStatus } from './speaker-types.ts';

/** What the status of one peer is made of. */
export interface PeerParts {
  readonly cfg: PeerConfig;
  readonly session: PeerSession;
  readonly rib: AdjRibOut;
  readonly endOfRibReceived: ReadonlySet<Family>;
}

/** The Speaker's side of it. `bfd` is given for a peer configured with BFD (its status may be undefined yet). */
export interface SpeakerParts {
  readonly localAs: number;
  readonly bgpIdentifier: string;
  /** Clock time now (ms), for the uptime. */
  readonly now: number;
  readonly gracefulShutdown: boolean;
  readonly bfd: { readonly status: PeerBfdStatus | undefined } | undefined;
}

/** The status of one peer (PeerStatus). Never throws. */
export function peerStatus(p: PeerParts, sp: SpeakerParts): PeerStatus {
  const s = p.session;
  const n = s.negotiated;
  const st = s.stats;
  const established = s.state === 'Established';
  const gr = n?.gracefulRestart;
  const unsent = p.rib.unsentRoutes();
  return {
    name: p.cfg.name,
    address: p.cfg.address,
    port: p.cfg.port ?? BGP_PORT,
    peerAs: p.cfg.peerAs,
    localAs: p.cfg.localAs ?? sp.localAs,
    bgpIdentifier: p.cfg.bgpIdentifier ?? sp.bgpIdentifier,
    state: s.state,
    uptimeSec: established && st.establishedAt !== undefined ? (sp.now - st.establishedAt) / 1000 : undefined,
    negotiated:
      n === undefined || !established
        ? undefined
        : {
            holdTimeSec: n.holdTimeSec,
            keepaliveTimeSec: n.keepaliveTimeSec,
            fourOctetAs: n.fourOctetAs,
            extendedMessage: n.extendedMessage,
            routeRefresh: n.routeRefresh,
            families: [...n.families],
            gracefulRestartMode: n.gracefulRestartMode,
            ...(gr !== undefined
              ? {
                  peerGracefulRestart: {
                    restartTimeSec: gr.restartTimeSec,
                    restarting: gr.restarting,
                    notification: gr.notification,
                    families: gr.families.map((f) => ({ family: FAMILY_OF_AFI[`${f.afi}/${f.safi}`] ?? `${f.afi}/${f.safi}`, forwardingPreserved: f.forwardingPreserved })),
                  },
                }
              : {}),
          },
    lastReason: s.lastReason,
    lastNotificationSent: st.lastNotificationSent,
    lastNotificationReceived: st.lastNotificationReceived,
    messagesSent: { ...st.messagesSent },
    messagesReceived: { ...st.messagesReceived },
    prefixesAdvertised: p.rib.advertisedCount,
    prefixesReceived: st.prefixesReceived ?? 0,
    endOfRibReceived: [...p.endOfRibReceived],
    endOfRibSent: [...p.rib.endOfRibSent],
    gracefulShutdown: sp.gracefulShutdown && p.rib.active,
    ...(sp.bfd !== undefined ? { bfd: sp.bfd.status } : {}),
    ...(unsent.length > 0 ? { unsentRoutes: unsent } : {}),
  };
}
