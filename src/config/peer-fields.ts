/**
 * The fields of a peer in the configuration file, one row each: the Speaker option it sets (bgp/peer-config.ts, where
 * its unit, default, range and what a change of it does are), the name Herald's CRDs give it, and where the operator
 * sees it. The zod schema (schema.ts `peerSchema`) holds each field's validation, with its default and range taken
 * from bgp/; this table holds the rest, and the compiler asks for a row per field of the schema.
 *
 * Derived from it: the mapping to the Speaker (`toSpeakerPeer`), the CRDs' renames and omissions (src/crd/kinds.ts),
 * and whether a reload resets a session (src/daemon/diff.ts: the Speaker's own rule, by the option each field sets).
 * test/src/config/peer-fields.test.ts walks it.
 *
 * Names (docs/decisions.md "Configuration sources"): a CRD field keeps the file's name unless MetalLB names the same
 * concept otherwise (`peerAddress`, `peerASN`, `myASN`, ...).
 */
import { resetsSession } from '../../bgp/main-thread.ts';
import type { PeerBfdConfig, PeerConfig as SpeakerPeerConfig } from '../../bgp/main-thread.ts';
import type { PeerConfig } from './schema.ts';

/** The value of a peer's BFD settings in the file. */
type FileBfd = NonNullable<PeerConfig['bfd']>;

/**
 * What a session takes from its node rather than from the Speaker: the AS number and BGP Identifier of a node with a
 * BGPNodeConfigOverride (or a peer's own `localAs`), only where they differ from the Speaker's.
 */
export interface SessionIdentity {
  readonly localAs?: number;
  readonly bgpIdentifier?: string;
  /** The source address when the peer sets no `localAddress` (a BGPNodeConfigOverride's `sourceAddresses`). */
  readonly localAddress?: string;
}

/** What a session takes from outside its peer's fields: its node's identity and its TCP MD5 password, read. */
type SessionInputs = SessionIdentity & { readonly md5Password?: string };

/** Where the operator sees a field: a path of the peer's view (`herald peers NAME`, /api/v1/peers), or why nowhere. */
export type PeerFieldDisplay = string | { readonly hidden: string };

/** A field set in the file and in a CRD under another name, the file only, or as the object's metadata.name. */
export type CrdName = string | { readonly fileOnly: string } | 'metadata.name';

/** How the field reaches the Speaker: the option it sets and its value there (undefined: the option is not set). */
type ToSpeaker<F extends keyof PeerConfig> = {
  [B in keyof SpeakerPeerConfig]: { readonly bgp: B; readonly value: (v: PeerConfig[F], inputs: SessionInputs) => SpeakerPeerConfig[B] | undefined };
}[keyof SpeakerPeerConfig];

/** One field of a peer: how it reaches the Speaker (or why it does not: used by the daemon), its CRD name, its display. */
export type PeerField<F extends keyof PeerConfig> = (ToSpeaker<F> | { readonly daemon: string }) & {
  /** The CRD's name, when it differs from the file's. */
  readonly crd?: CrdName;
  readonly display: PeerFieldDisplay;
};

/** The same value. */
const same = <T>(v: T): T => v;
/** A copy of a list (the Speaker's configuration shares nothing with the file's). */
const copy = <T>(v: readonly T[]): T[] => [...v];
const NOT_SHOWN = (why: string) => ({ hidden: why });
const SECRET = { hidden: 'a password is never shown' };

/** Every field of a peer in the file (schema.ts `peerSchema`). */
export const PEER_FIELDS: { readonly [F in keyof Required<PeerConfig>]: PeerField<F> } = {
  name: { bgp: 'name', value: same, crd: 'metadata.name', display: 'name' },
  address: { bgp: 'address', value: same, crd: 'peerAddress', display: 'address' },
  port: { bgp: 'port', value: same, crd: 'peerPort', display: 'port' },
  peerAs: { bgp: 'peerAs', value: same, crd: 'peerASN', display: 'peerAs' },
  localAs: { bgp: 'localAs', value: (_v, s) => s.localAs, crd: 'myASN', display: 'localAs' },
  localAddress: { bgp: 'localAddress', value: (v, s) => v ?? s.localAddress, crd: 'sourceAddress', display: NOT_SHOWN('the next hop of its routes shows it (herald routes)') },
  holdTime: { bgp: 'holdTimeSec', value: same, display: 'negotiated.holdTimeSec' },
  keepaliveTime: { bgp: 'keepaliveTimeSec', value: same, display: 'negotiated.keepaliveTimeSec' },
  connectRetryTime: { bgp: 'connectRetryTimeSec', value: same, crd: 'connectTime', display: NOT_SHOWN('when the next attempt is made; state and lastError show a session that is not up') },
  passive: { bgp: 'passive', value: same, display: NOT_SHOWN('a passive session stays Active until the peer connects') },
  password: { bgp: 'md5Password', value: (_v, s) => s.md5Password, crd: { fileOnly: "a node's file or environment: a cluster-wide object names a Secret (passwordSecret)" }, display: SECRET },
  passwordSecret: { bgp: 'md5Password', value: (_v, s) => s.md5Password, display: SECRET },
  ebgpMultihop: { bgp: 'ebgpMultihop', value: same, display: NOT_SHOWN('a TTL of our packets') },
  ttlSecurity: { bgp: 'ttlSecurity', value: same, display: NOT_SHOWN('a check of the TTL of received packets') },
  families: { bgp: 'families', value: copy, display: 'negotiated.families' },
  nextHop: { bgp: 'nextHopIPv4', value: same, display: NOT_SHOWN('the next hop of each route (herald routes)') },
  nextHopV6: { bgp: 'nextHopIPv6', value: same, display: NOT_SHOWN('the next hop of each route (herald routes)') },
  gracefulRestart: { bgp: 'gracefulRestart', value: (v) => (v?.enabled ? { restartTimeSec: v.restartTime } : false), display: 'negotiated.gracefulRestart' },
  gracefulShutdown: { daemon: 'a drain or departure re-announces with GRACEFUL_SHUTDOWN first (src/daemon/mapping.ts gracefulShutdownConfigured)', display: NOT_SHOWN('herald status shows a drain') },
  maxPrefixes: { bgp: 'maxPrefixes', value: same, display: 'prefixes.received' },
  bfd: { bgp: 'bfd', value: (v) => (v?.enabled ? speakerBfd(v) : undefined), display: 'bfd' },
  nodeSelector: { daemon: 'which nodes run the peer (src/daemon/peer-set.ts resolvePeers)', crd: { fileOnly: 'a BGPPeer has nodeSelectors, as MetalLB' }, display: NOT_SHOWN('a node runs the peer or does not: a BGPPeer status counts the nodes') },
  nodeSelectors: { daemon: 'which nodes run the peer (src/daemon/peer-set.ts resolvePeers)', display: NOT_SHOWN('a node runs the peer or does not: a BGPPeer status counts the nodes') },
};

/** The BFD settings of the file (MetalLB's BFDProfile names) and the Speaker's (bgp/ names, `...Ms`). */
export const BFD_FIELDS: { readonly [F in keyof FileBfd]-?: keyof PeerBfdConfig | { readonly daemon: string } } = {
  enabled: { daemon: 'absent or false: no BFD for the peer' },
  transmitInterval: 'transmitIntervalMs',
  receiveInterval: 'receiveIntervalMs',
  detectMultiplier: 'detectMultiplier',
  passive: 'passive',
  multihop: 'multihop',
  minimumTtl: 'minimumTtl',
};

/** The Speaker's BFD settings of a peer's `bfd` (by BFD_FIELDS; absent settings stay absent). */
function speakerBfd(b: FileBfd): PeerBfdConfig {
  const out: { -readonly [K in keyof PeerBfdConfig]: PeerBfdConfig[K] } = {};
  for (const field of fieldsOf(b)) {
    const to = BFD_FIELDS[field];
    const v = b[field];
    if (typeof to === 'string' && typeof v !== 'undefined') setOption(out, to, v);
  }
  return out;
}

/** The keys of `o` that are its type's (Object.keys answers strings). */
function fieldsOf<T extends object>(o: T): (keyof T & string)[] {
  return Object.keys(o).filter((k): k is keyof T & string => Object.hasOwn(o, k));
}

/** Sets one option (its value checked against the option's type by the caller's row). */
function setOption<T extends object, K extends keyof T>(out: T, key: K, value: T[K]): void {
  out[key] = value;
}

/** The Speaker option a field of the file sets and its value there, for one field (typed by the field's row). */
function speakerOption<F extends keyof PeerConfig>(p: PeerConfig, field: F, inputs: SessionInputs, out: { -readonly [K in keyof SpeakerPeerConfig]?: SpeakerPeerConfig[K] }): void {
  const row: PeerField<F> = PEER_FIELDS[field];
  if (!('bgp' in row)) return;
  const v = row.value(p[field], inputs);
  if (v !== undefined) setOption(out, row.bgp, v);
}

/**
 * Config peer → Speaker PeerConfig, field by field by PEER_FIELDS (RFC names, seconds suffixed); absent options stay
 * absent. `md5Password` is the password of `password` or `passwordSecret`, read (src/daemon/peer-set.ts).
 */
export function toSpeakerPeer(p: PeerConfig, md5Password: string | undefined, session: SessionIdentity = {}): SpeakerPeerConfig {
  const inputs: SessionInputs = { ...session, ...(md5Password !== undefined ? { md5Password } : {}) };
  const out: { -readonly [K in keyof SpeakerPeerConfig]?: SpeakerPeerConfig[K] } = {};
  for (const field of fieldsOf(PEER_FIELDS)) speakerOption(p, field, inputs, out);
  return { ...out, name: p.name, address: p.address, peerAs: p.peerAs, ...(session.bgpIdentifier !== undefined ? { bgpIdentifier: session.bgpIdentifier } : {}) };
}

/** The Speaker option each field of the file sets (undefined: a field the daemon uses itself). */
const SPEAKER_OPTION = new Map<string, keyof SpeakerPeerConfig | undefined>(Object.entries(PEER_FIELDS).map(([field, row]) => [field, 'bgp' in row ? row.bgp : undefined]));

/** The Speaker option a field of the file sets, or undefined for a field the daemon uses itself (or no field). */
export function speakerOptionOf(field: string): keyof SpeakerPeerConfig | undefined {
  return SPEAKER_OPTION.get(field);
}

/**
 * Whether a change of these fields of a peer in the file closes its session: the Speaker's own rule
 * (bgp/peer-config.ts `resetsSession`) on the options they set. A field the daemon uses itself (gracefulShutdown, the
 * node selectors) never does; a field this table does not know does.
 */
export function fileChangeResets(fields: readonly string[]): boolean {
  return fields.some((f) => !SPEAKER_OPTION.has(f)) || resetsSession(fields.flatMap((f) => SPEAKER_OPTION.get(f) ?? []));
}

/** The CRD name of each field renamed there (`{address: ['peerAddress'], ...}`), for src/crd/kinds.ts. */
export function crdRenames(): Record<string, readonly string[]> {
  const out: Record<string, readonly string[]> = {};
  for (const [field, row] of Object.entries(PEER_FIELDS)) if (typeof row.crd === 'string' && row.crd !== 'metadata.name') out[field] = [row.crd];
  return out;
}

/** The fields a CRD leaves out: file-only fields, and (for a BGPPeer) the name, its metadata.name. */
export function crdOmitted(kind: 'object' | 'list item'): string[] {
  return Object.entries(PEER_FIELDS)
    .filter(([, row]) => typeof row.crd === 'object' || (kind === 'object' && row.crd === 'metadata.name'))
    .map(([field]) => field);
}
