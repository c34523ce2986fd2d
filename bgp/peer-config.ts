/**
 * A peer's configuration, the one shape every layer above takes it from: the type (PeerConfig, with its BFD and
 * graceful restart parts), and per option its unit, default and range, and what a change of it does to a running
 * peer. The Speaker's `updatePeer` decides by this table alone, and whatever reports a change (the daemon's reload
 * diff, its logs) reads the same rule:
 *
 * - `session`: the session is closed with Cease / Other Configuration Change (RFC 4486 subcode 6) and a new one is
 *   started — the option goes into the OPEN or the transport;
 * - `export`: only the attributes sent change; the session stays up and the routes go out again;
 * - `bfd`: only the peer's BFD session is reconfigured (a Poll Sequence, RFC 5880 §6.8.3), never BGP.
 *
 * A field the table does not know resets the session (as GoBGP's `NeedsResendOpenMessage` and BIRD's
 * `bgp_reconfigure` compare whole configurations). The configuration file's schema and Herald's CRDs take their
 * defaults and ranges from here (src/config/peer-fields.ts).
 *
 * Adding an option: its field in PeerConfig and its row in PEER_OPTIONS (the compiler asks for the row), then the
 * file's field and its row in src/config/ (docs/architecture.md "The peer-option spine").
 */
import { BGP_PORT } from './constants.ts';
import type { Family } from './constants.ts';

/** One configured BGP neighbour. Durations in seconds. */
export interface PeerConfig {
  /** Unique name (logs, metrics, route.peers). */
  readonly name: string;
  /** The peer's address (IPv4 or IPv6). */
  readonly address: string;
  /** The peer's TCP port (default 179). */
  readonly port?: number;
  readonly peerAs: number;
  /** Our AS number on this session (default: the Speaker's `localAs`). */
  readonly localAs?: number;
  /** Our BGP Identifier on this session, dotted quad (default: the Speaker's `bgpIdentifier`). */
  readonly bgpIdentifier?: string;
  /** Local address to bind/dial from; also the default next hop of its family. */
  readonly localAddress?: string;
  readonly localPort?: number;
  /** Hold time offered in OPEN (default 90; 0 = none). */
  readonly holdTimeSec?: number;
  readonly keepaliveTimeSec?: number;
  /** Base ConnectRetry time (default 120; the session backs off exponentially). */
  readonly connectRetryTimeSec?: number;
  /** Wait for the peer to connect (never dial). */
  readonly passive?: boolean;
  /** RFC 2385 TCP MD5 password. */
  readonly md5Password?: string;
  /** eBGP multihop TTL. */
  readonly ebgpMultihop?: number;
  /** RFC 5082 GTSM. */
  readonly ttlSecurity?: boolean;
  /** Families offered in the OPEN (default both unicast families). */
  readonly families?: readonly Family[];
  /** Next hop for IPv4 routes toward this peer (default: the session's local address if IPv4). */
  readonly nextHopIPv4?: string;
  /** Next hop for IPv6 routes; required to send IPv6 routes over an IPv4 session. */
  readonly nextHopIPv6?: string;
  /**
   * RFC 4724 capability: restart time (default 120 s) and the RFC 8538 N bit (`notification`, default true: a Cease
   * other than Hard Reset keeps graceful restart); `false` = do not advertise graceful restart.
   */
  readonly gracefulRestart?: PeerGracefulRestart | false;
  /** Offer RFC 8654 extended messages (default true). */
  readonly extendedMessage?: boolean;
  /** Maximum prefixes accepted from the peer (exceeded → Cease 1). */
  readonly maxPrefixes?: number;
  /** BFD for this peer (absent: none). Changing it never resets the BGP session. */
  readonly bfd?: PeerBfdConfig;
}

/** The graceful restart capability of a peer (RFC 4724 §3; the N bit, RFC 8538). */
export interface PeerGracefulRestart {
  /** Restart Time advertised, seconds (default 120; 12 bits). */
  readonly restartTimeSec?: number;
  /** The N bit (default true). */
  readonly notification?: boolean;
}

/** A peer's BFD settings (RFC 5880 §6.8.1 variables; names as MetalLB's BFDProfile). Intervals in milliseconds. */
export interface PeerBfdConfig {
  /** bfd.DesiredMinTxInterval once Up (default 300 ms). */
  readonly transmitIntervalMs?: number;
  /** bfd.RequiredMinRxInterval (default 300 ms). */
  readonly receiveIntervalMs?: number;
  /** bfd.DetectMult (default 3). */
  readonly detectMultiplier?: number;
  /** Wait for the peer's first packet (default false). */
  readonly passive?: boolean;
  /** RFC 5883 multihop (UDP 4784) instead of RFC 5881 single-hop (UDP 3784, TTL 255 required). Default: ebgpMultihop > 1. */
  readonly multihop?: boolean;
  /** Multihop only: drop the peer's packets with a TTL / Hop Limit below this (default: no check). */
  readonly minimumTtl?: number;
}

/** A peer's BFD settings with every default applied (what its BFD session runs with). */
export type BfdSessionSettings = Required<Omit<PeerBfdConfig, 'minimumTtl'>> & Pick<PeerBfdConfig, 'minimumTtl'>;

/** What a change of an option does to a running peer (see the module comment). */
export type PeerOptionChange = 'session' | 'export' | 'bfd';

/** One option: what its change does, and for a number or flag its unit, default and range. */
export interface PeerOption {
  readonly change: PeerOptionChange;
  readonly unit?: 's' | 'ms';
  readonly default?: number | boolean | readonly Family[];
  /** Range of a number: integers min..max, except the values in `not`. */
  readonly min?: number;
  readonly max?: number;
  readonly not?: readonly number[];
}

/** The part of an option the options of its sub-objects have (they change with their option). */
export type SubOption = Omit<PeerOption, 'change'>;

const U32 = 4294967295;

/** Every option of PeerConfig (the compiler asks for a row per field). */
export const PEER_OPTIONS = {
  name: { change: 'session' },
  address: { change: 'session' },
  port: { change: 'session', default: BGP_PORT, min: 1, max: 65535 },
  peerAs: { change: 'session', min: 1, max: U32 },
  localAs: { change: 'session', min: 1, max: U32 },
  bgpIdentifier: { change: 'session' },
  localAddress: { change: 'session' },
  localPort: { change: 'session', min: 1, max: 65535 },
  // RFC 4271 §4.2: 0 or at least 3
  holdTimeSec: { change: 'session', unit: 's', default: 90, min: 0, max: 65535, not: [1, 2] },
  keepaliveTimeSec: { change: 'session', unit: 's', min: 1, max: 65535 },
  connectRetryTimeSec: { change: 'session', unit: 's', default: 120, min: 1, max: 65535 },
  passive: { change: 'session', default: false },
  md5Password: { change: 'session' },
  ebgpMultihop: { change: 'session', min: 1, max: 255 },
  ttlSecurity: { change: 'session', default: false },
  families: { change: 'session', default: ['ipv4-unicast', 'ipv6-unicast'] },
  nextHopIPv4: { change: 'export' },
  nextHopIPv6: { change: 'export' },
  gracefulRestart: { change: 'session' },
  extendedMessage: { change: 'session', default: true },
  maxPrefixes: { change: 'session', min: 1, max: U32 },
  bfd: { change: 'bfd' },
} as const satisfies { readonly [K in keyof PeerConfig]-?: PeerOption };

/** The options of `gracefulRestart`. */
export const GRACEFUL_RESTART_OPTIONS = {
  restartTimeSec: { unit: 's', default: 120, min: 0, max: 4095 },
  notification: { default: true },
} as const satisfies { readonly [K in keyof PeerGracefulRestart]-?: SubOption };

/** The options of `bfd` (the ranges Herald supports; MetalLB's BFDProfile has the same). */
export const BFD_OPTIONS = {
  transmitIntervalMs: { unit: 'ms', default: 300, min: 10, max: 60000 },
  receiveIntervalMs: { unit: 'ms', default: 300, min: 10, max: 60000 },
  detectMultiplier: { default: 3, min: 2, max: 255 },
  passive: { default: false },
  multihop: {},
  minimumTtl: { min: 1, max: 255 },
} as const satisfies { readonly [K in keyof PeerBfdConfig]-?: SubOption };

/** What changing `field` of a PeerConfig does; a field the table does not know resets the session. */
export function changeOf(field: string): PeerOptionChange {
  const options: Readonly<Record<string, PeerOption>> = PEER_OPTIONS;
  return (Object.hasOwn(options, field) ? options[field]?.change : undefined) ?? 'session';
}

/** True when a change of these fields closes the session: one of them is a `session` option, or unknown. */
export function resetsSession(fields: Iterable<string>): boolean {
  for (const f of fields) if (changeOf(f) === 'session') return true;
  return false;
}

/** The fields of two configurations of one peer whose values differ (compared as JSON), sorted. */
export function changedFields(before: PeerConfig, after: PeerConfig): string[] {
  const a = new Map<string, unknown>(Object.entries(before));
  const b = new Map<string, unknown>(Object.entries(after));
  const keys = new Set([...a.keys(), ...b.keys()]);
  return [...keys].filter((k) => JSON.stringify(a.get(k)) !== JSON.stringify(b.get(k))).sort();
}

/** The allowed values of a number option as text: "1..65535", "0 or 3..65535". Undefined without a range. */
export function rangeText(o: SubOption): string | undefined {
  if (o.min === undefined || o.max === undefined) return undefined;
  const parts: string[] = [];
  let from = o.min;
  for (const n of [...(o.not ?? [])].sort((a, b) => a - b)) {
    if (n > from) parts.push(n - 1 === from ? String(from) : `${from}..${n - 1}`);
    from = Math.max(from, n + 1);
  }
  if (from <= o.max) parts.push(from === o.max ? String(from) : `${from}..${o.max}`);
  return parts.join(' or ');
}

/** True when `n` is within an option's range: min..max, not one of `not` (whether it must be an integer is the caller's). */
export function inRange(o: SubOption, n: number): boolean {
  return (o.min === undefined || n >= o.min) && (o.max === undefined || n <= o.max) && !(o.not ?? []).includes(n);
}
