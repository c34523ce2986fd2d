/**
 * The Speaker's public types: its options, what it needs from a session and a listener (PeerSession, PeerListener:
 * the seams bgp/session/ implements), and a peer's status (PeerStatus, for the admin API and metrics). A peer's
 * configuration, PeerConfig, is bgp/peer-config.ts's. The Speaker itself is bgp/speaker.ts, which re-exports these.
 */
import type { EventEmitter } from 'node:events';
import type { Family } from './constants.ts';
import type { GracefulRestartMode, Negotiated } from './codec/open.ts';
import type { Clock } from './clock.ts';
import type { StateReason } from './fsm/state.ts';
import type { CeaseRequest, SessionOptions, StopRequest, TxSource } from './session/session.ts';
import type { AcceptingSession } from './session/listener.ts';
import type { BfdClient } from './bfd/handle.ts';
import type { PeerBfdStatus } from './bfd/peers.ts';
import type { UnsentRoutes } from './rib/adj-rib-out.ts';

export type { PeerConfig } from './peer-config.ts';

/** Options of the Speaker. */
export interface SpeakerOptions {
  readonly localAs: number;
  /** BGP Identifier (router id), dotted quad. */
  readonly bgpIdentifier: string;
  /** Accept incoming connections here (passive peers and collisions); omitted = dial only. */
  readonly listen?: { readonly address: string; readonly port: number };
  /**
   * Bind `listen` on the first `listen()` call instead of in the constructor: a daemon that binds only once its
   * first route set is in place never hands a connecting peer an empty table (docs/sessions.md "Start-up order").
   */
  readonly deferListen?: boolean;
  readonly clock?: Clock;
  /** `restarting: true` when the daemon knows it restarted (sets the R bit, RFC 4724 §3). */
  readonly gracefulRestart?: { readonly restarting: boolean };
  /** Injection points for tests; default: the session layer's Session and BgpListener. */
  readonly createSession?: (options: SessionOptions) => PeerSession;
  readonly createListener?: (address: string, port: number) => PeerListener;
  /** BFD client, started on the first peer with `bfd`; default: the worker-thread BfdHandle. */
  readonly createBfd?: () => BfdClient;
}

/**
 * What the Speaker needs from a session (bgp/session/session.ts implements it; the listener hands it accepted
 * connections, see AcceptingSession). Events: 'stateChange', 'established', 'down', 'routeRefresh', 'endOfRib',
 * 'update' as documented in bgp/session/session.ts.
 */
export interface PeerSession extends EventEmitter, AcceptingSession {
  readonly name: string;
  readonly state: string;
  readonly negotiated: Negotiated | undefined;
  readonly lastReason: StateReason | undefined;
  readonly stats: {
    readonly messagesSent: Readonly<Record<string, number>>;
    readonly messagesReceived: Readonly<Record<string, number>>;
    readonly prefixesReceived: number;
    readonly updatesReceived: number;
    readonly establishedAt?: number;
    readonly flaps: number;
    readonly lastNotificationSent?: unknown;
    readonly lastNotificationReceived?: unknown;
  };
  /** The local address of the connected socket; undefined while not connected. */
  readonly localAddress: string | undefined;
  start(): void;
  /** Ends the session: a Cease (the RFC 8538 §5 Hard Reset rule applies), or none (bgp/session/cease.ts). */
  stop(request?: StopRequest): Promise<void>;
  reset(request?: CeaseRequest): void;
  setTxSource(src: TxSource): void;
  kickTx(): void;
}

/** What the Speaker needs from the listener (bgp/session/listener.ts implements it). */
export interface PeerListener {
  register(remoteAddress: string, session: PeerSession): void;
  unregister(remoteAddress: string): void;
  /** Rejects with the OS error when the address cannot be bound. */
  listen(): Promise<void>;
  close(): Promise<void> | void;
}

/** Status of one peer, for the admin API and metrics. */
export interface PeerStatus {
  readonly name: string;
  readonly address: string;
  readonly port: number;
  readonly peerAs: number;
  /** Our AS number and BGP Identifier on this session. */
  readonly localAs: number;
  readonly bgpIdentifier: string;
  readonly state: string;
  /** Seconds since Established (undefined when not Established). */
  readonly uptimeSec: number | undefined;
  readonly negotiated:
    | {
        readonly holdTimeSec: number;
        readonly keepaliveTimeSec: number;
        readonly fourOctetAs: boolean;
        readonly extendedMessage: boolean;
        readonly routeRefresh: boolean;
        readonly families: readonly Family[];
        /** The peer's graceful restart capability (RFC 4724, N bit RFC 8538), as received. */
        readonly peerGracefulRestart?: { restartTimeSec: number; restarting: boolean; notification: boolean; families: { family: string; forwardingPreserved: boolean }[] };
        /** What both OPENs agreed: none, restart (RFC 4724) or notification (RFC 8538 N bit as well). */
        readonly gracefulRestartMode: GracefulRestartMode;
      }
    | undefined;
  /** Why the session last changed state (includes NOTIFICATION code/subcode/text). */
  readonly lastReason: StateReason | undefined;
  readonly lastNotificationSent: unknown;
  readonly lastNotificationReceived: unknown;
  readonly messagesSent: Readonly<Record<string, number>>;
  readonly messagesReceived: Readonly<Record<string, number>>;
  readonly prefixesAdvertised: number;
  readonly prefixesReceived: number;
  /** Families whose End-of-RIB we received from the peer on this session. */
  readonly endOfRibReceived: readonly Family[];
  /** Families whose End-of-RIB we sent on this session. */
  readonly endOfRibSent: readonly Family[];
  /** RFC 8326 graceful shutdown community currently attached. */
  readonly gracefulShutdown: boolean;
  /** The peer's BFD session, when BFD is configured for it. */
  readonly bfd?: PeerBfdStatus;
  /** Desired routes that cannot be encoded toward this peer, by reason (present only when there are some). */
  readonly unsentRoutes?: readonly UnsentRoutes[];
}
