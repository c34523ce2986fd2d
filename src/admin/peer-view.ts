/**
 * A peer as the operator sees it (`herald peers`, /api/v1/peers, a BGPNodeStatus), in one place: the JSON Schema
 * fastify enforces on the admin API's answers (and /openapi.json publishes), the type derived from it
 * (schema-type.ts), and the view made from the Speaker's PeerStatus (bgp/peer-status.ts) with the daemon's per-peer
 * history. Durations are seconds unless named `...Ms`, timestamps ISO 8601 strings (UTC).
 *
 * Showing a new part of a peer's status: its property in `peerViewSchema` (its type follows) and its value in
 * `peerView`; `herald peers NAME` (src/cli/table.ts) prints what it chooses of the view.
 */
import type { PeerBfdStatus, PeerStatus, StateReason } from '../../bgp/main-thread.ts';
import { describeNotification } from '../../bgp/main-thread.ts';
import type { FromSchema } from './schema-type.ts';
import { bool, int, num, str, strList } from './schemas.ts';

const counts = { type: 'object', additionalProperties: int } as const;

export const peerViewSchema = {
  type: 'object',
  required: ['name', 'address', 'port', 'localAs', 'peerAs', 'state', 'messages', 'prefixes', 'flaps'],
  properties: {
    name: str,
    address: str,
    port: int,
    localAs: int,
    peerAs: int,
    state: { type: 'string', description: 'Idle, Connect, Active, OpenSent, OpenConfirm or Established (RFC 4271 §8)' },
    uptimeSec: { type: 'number', description: 'Seconds since Established' },
    since: str,
    negotiated: {
      type: 'object',
      required: ['holdTimeSec', 'keepaliveTimeSec', 'families', 'fourOctetAs', 'extendedMessage', 'routeRefresh', 'gracefulRestart'],
      properties: {
        holdTimeSec: int,
        keepaliveTimeSec: num,
        families: strList,
        fourOctetAs: bool,
        extendedMessage: bool,
        routeRefresh: bool,
        gracefulRestart: bool,
        peerBgpIdentifier: str,
      },
    },
    lastError: {
      type: 'object',
      required: ['kind'],
      properties: { kind: str, code: int, subcode: int, description: str, message: str, at: str },
    },
    messages: { type: 'object', required: ['sent', 'received'], properties: { sent: counts, received: counts } },
    prefixes: { type: 'object', required: ['sent', 'received'], properties: { sent: int, received: int } },
    flaps: int,
    unsentRoutes: {
      type: 'array',
      description: 'Desired routes that cannot be encoded toward this peer (e.g. an IPv6 next hop with a zone id), by reason; the other routes are sent',
      items: { type: 'object', required: ['reason', 'prefixes', 'example'], properties: { reason: str, prefixes: int, example: str } },
    },
    bfd: {
      type: 'object',
      description: "The peer's BFD session (RFC 5880), when BFD is on for it; intervals in ms",
      required: ['state', 'remoteState', 'diagnostic', 'multihop', 'localDiscriminator', 'remoteDiscriminator', 'transmitIntervalMs', 'detectionTimeMs', 'ttlCheck', 'discards', 'stateChanges'],
      properties: {
        state: { type: 'string', description: 'AdminDown, Down, Init or Up' },
        remoteState: str,
        diagnostic: str,
        multihop: bool,
        localDiscriminator: int,
        remoteDiscriminator: int,
        transmitIntervalMs: num,
        detectionTimeMs: num,
        ttlCheck: str,
        ttlCheckReason: str,
        error: str,
        discards: { ...counts, description: 'Packets meant for this session that were discarded, by reason (RFC 5880 §6.8.6: authentication, remoteDiscriminator, wrongSource, ttlUnchecked, ...)' },
        lastDiscard: { type: 'object', required: ['reason', 'message'], properties: { reason: str, message: str } },
        stateChanges: int,
        upSince: str,
        lastDown: { type: 'object', required: ['at', 'diagnostic', 'remoteState', 'detectionTimeMs'], properties: { at: str, diagnostic: str, remoteState: str, detectionTimeMs: num } },
      },
    },
  },
} as const;

/**
 * One BGP neighbour: its address and AS numbers; its RFC 4271 §8 state (Idle, Connect, Active, OpenSent, OpenConfirm,
 * Established) with `uptimeSec` since Established and `since` the state changed; what the OPENs agreed (`negotiated`,
 * absent before the OPEN exchange); why the session last went down (`lastError`); messages by type; prefixes in our
 * Adj-RIB-Out toward the peer (sent) and NLRI it announced (received); times it left Established (`flaps`); its BFD
 * session; desired routes that cannot be encoded toward it, by reason.
 */
export type PeerView = FromSchema<typeof peerViewSchema>;

/** Why a session last went down, or the NOTIFICATION last exchanged (code, subcode and their name, RFC 4271 §4.5). */
export type PeerErrorView = NonNullable<PeerView['lastError']>;

/** A peer's BFD session (RFC 5880): states, Diag, discriminators, intervals in milliseconds, the received-TTL check. */
export type PeerBfdView = NonNullable<PeerView['bfd']>;

/** A StateReason → the admin API's error view (undefined for reasons that are not errors). */
export function errorView(reason: StateReason | undefined, at?: string): PeerErrorView | undefined {
  if (!reason) return undefined;
  const base = at !== undefined ? { at } : {};
  switch (reason.kind) {
    case 'notificationSent':
    case 'notificationReceived':
      return {
        kind: reason.kind,
        code: reason.code,
        subcode: reason.subcode,
        description: describeNotification(reason.code, reason.subcode),
        ...(reason.text !== undefined ? { message: reason.text } : {}),
        ...(reason.kind === 'notificationSent' && reason.cause !== undefined ? { message: reason.cause } : {}),
        ...base,
      };
    case 'holdTimerExpired':
      return { kind: reason.kind, ...base };
    case 'transportError':
    case 'admin':
      return { kind: reason.kind, message: reason.message, ...base };
    case 'connectionClosed':
    case 'collision':
      return { kind: reason.kind, ...base };
    default:
      return undefined;
  }
}

/** Per-peer bookkeeping the daemon keeps from 'peerState' events. */
export interface PeerHistory {
  since?: string;
  flaps: number;
  lastError?: PeerErrorView;
}

/** Speaker PeerStatus → admin PeerView. */
export function peerView(s: PeerStatus, h: PeerHistory | undefined): PeerView {
  const v: PeerView = {
    name: s.name,
    address: s.address,
    port: s.port,
    localAs: s.localAs,
    peerAs: s.peerAs,
    state: s.state,
    messages: { sent: { ...s.messagesSent }, received: { ...s.messagesReceived } },
    prefixes: { sent: s.prefixesAdvertised, received: s.prefixesReceived },
    flaps: h?.flaps ?? 0,
  };
  if (s.uptimeSec !== undefined) v.uptimeSec = Math.round(s.uptimeSec * 1000) / 1000;
  if (h?.since !== undefined) v.since = h.since;
  if (s.negotiated) {
    v.negotiated = {
      holdTimeSec: s.negotiated.holdTimeSec,
      keepaliveTimeSec: s.negotiated.keepaliveTimeSec,
      families: [...s.negotiated.families],
      fourOctetAs: s.negotiated.fourOctetAs,
      extendedMessage: s.negotiated.extendedMessage,
      routeRefresh: s.negotiated.routeRefresh,
      gracefulRestart: s.negotiated.peerGracefulRestart !== undefined,
    };
  }
  const err = h?.lastError ?? errorView(s.lastReason);
  if (err) v.lastError = err;
  if (s.unsentRoutes !== undefined && s.unsentRoutes.length > 0) {
    // the current problem of an Established session: routes it cannot carry (bgp/rib/adj-rib-out.ts UnsentRoutes)
    v.unsentRoutes = s.unsentRoutes.map((u) => ({ reason: u.reason, prefixes: u.prefixes, example: u.example }));
    v.lastError = { kind: 'unsentRoutes', message: s.unsentRoutes.map((u) => `${u.prefixes} route(s) not sent, e.g. ${u.example}: ${u.reason}`).join('; ') };
  }
  if (s.bfd) v.bfd = bfdView(s.bfd);
  return v;
}

/** Speaker PeerBfdStatus → admin PeerBfdView: the same fields, its Clock milliseconds as ISO 8601. */
function bfdView(b: PeerBfdStatus): PeerBfdView {
  const iso = (ms: number) => new Date(ms).toISOString();
  const { upSince, lastDown, ...rest } = b;
  return { ...rest, ...(upSince !== undefined ? { upSince: iso(upSince) } : {}), ...(lastDown ? { lastDown: { ...lastDown, at: iso(lastDown.at) } } : {}) };
}
