/**
 * PURE comparison of two configurations for a live reload (SIGHUP or a changed file).
 *
 * The daemon applies the result as a diff: unchanged peers keep their sessions; a peer whose
 * session-relevant fields changed is restarted (the Speaker decides via `updatePeer`); a peer
 * whose only changes are export attributes (next hops, graceful shutdown, ...) is updated and its
 * routes re-announced; removed peers are stopped with Cease / Peer De-configured (RFC 4486
 * subcode 3); new peers are started. Global settings that cannot change without restarting the
 * process are listed in `restartRequired` and keep their running values.
 */
import { isDeepStrictEqual } from 'node:util';
import type { Config, PeerConfig } from '../config/schema.ts';

/** Peer fields whose change needs a new BGP session (they go into OPEN or the transport). */
export const SESSION_FIELDS = [
  'address',
  'port',
  'peerAs',
  'localAs',
  'localAddress',
  'holdTime',
  'keepaliveTime',
  'connectRetryTime',
  'passive',
  'password',
  'passwordSecret',
  'ebgpMultihop',
  'ttlSecurity',
  'families',
  'gracefulRestart',
  'maxPrefixes',
] as const satisfies readonly (keyof PeerConfig)[];

/** Global fields that need a process restart; a reload keeps the running values. */
export const RESTART_FIELDS = ['bgp.localAs', 'bgp.routerId', 'bgp.listen', 'admin', 'metrics', 'stateDir', 'source', 'node', 'flapControl'] as const;

/** A peer present in both configs with different settings. */
export interface ChangedPeer<P> {
  name: string;
  before: P;
  after: P;
  /** Every top-level field that differs, sorted. */
  fields: string[];
  /** True when a session-relevant field changed (the session restarts). */
  sessionReset: boolean;
}

/** Difference between two peer lists, matched by name. */
export interface PeerDiff<P> {
  added: P[];
  removed: P[];
  changed: ChangedPeer<P>[];
  unchanged: string[];
}

/** Difference between two configurations. */
export interface ConfigDiff {
  peers: PeerDiff<PeerConfig>;
  /** Static routes changed (the desired set is recomputed and re-announced). */
  routesChanged: boolean;
  /** Route policy for Services changed (advertisements, loadBalancerClass, serviceCIDRs, ...). */
  policyChanged: boolean;
  /** Health-check timing or kube-proxy check settings changed. */
  healthChanged: boolean;
  logLevelChanged: boolean;
  /** Dotted names of global settings that differ but need a restart (running values kept). */
  restartRequired: string[];
  /** True when nothing differs at all. */
  empty: boolean;
}

function get(obj: unknown, dotted: string): unknown {
  let cur: unknown = obj;
  for (const part of dotted.split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}

/**
 * Compare two lists of peers by name.
 * @param sessionFields fields whose change means a session reset
 */
export function diffPeers<P extends { name: string }>(before: readonly P[], after: readonly P[], sessionFields: readonly string[] = SESSION_FIELDS): PeerDiff<P> {
  const old = new Map(before.map((p) => [p.name, p]));
  const cur = new Map(after.map((p) => [p.name, p]));
  const out: PeerDiff<P> = { added: [], removed: [], changed: [], unchanged: [] };
  for (const [name, p] of cur) {
    const o = old.get(name);
    if (!o) {
      out.added.push(p);
      continue;
    }
    const keys = new Set([...Object.keys(o), ...Object.keys(p)]);
    const fields = [...keys]
      .filter((k) => !isDeepStrictEqual((o as Record<string, unknown>)[k], (p as Record<string, unknown>)[k]))
      .sort();
    if (fields.length === 0) out.unchanged.push(name);
    else out.changed.push({ name, before: o, after: p, fields, sessionReset: fields.some((f) => sessionFields.includes(f)) });
  }
  for (const [name, p] of old) if (!cur.has(name)) out.removed.push(p);
  return out;
}

/** Compare two validated configurations (see the module comment for what each part means). */
export function diffConfig(before: Config, after: Config): ConfigDiff {
  const peers = diffPeers(before.peers, after.peers);
  const differs = (k: string) => !isDeepStrictEqual(get(before, k), get(after, k));
  const routesChanged = differs('routes');
  const policyChanged = ['loadBalancerClass', 'serviceCIDRs', 'countServingTerminating', 'advertisements', 'attributeChangeInterval', 'pools', 'allowedPrefixes'].some(differs);
  const healthChanged = ['healthChecks', 'kubeProxy'].some(differs);
  const logLevelChanged = differs('logLevel');
  const restartRequired: string[] = RESTART_FIELDS.filter(differs);
  const empty =
    peers.added.length === 0 &&
    peers.removed.length === 0 &&
    peers.changed.length === 0 &&
    !routesChanged &&
    !policyChanged &&
    !healthChanged &&
    !logLevelChanged &&
    restartRequired.length === 0;
  return { peers, routesChanged, policyChanged, healthChanged, logLevelChanged, restartRequired, empty };
}

/**
 * The config to run after a reload: `after`, except that restart-only settings keep their
 * running values from `before`.
 */
export function effectiveReloadConfig(before: Config, after: Config): Config {
  const { metrics: _metrics, ...rest } = after; // the running metrics listener (or none) stays
  return {
    ...rest,
    bgp: { ...after.bgp, localAs: before.bgp.localAs, routerId: before.bgp.routerId, listen: before.bgp.listen },
    admin: before.admin,
    ...(before.metrics ? { metrics: before.metrics } : {}),
    stateDir: before.stateDir,
    source: before.source,
    node: before.node,
    flapControl: before.flapControl,
  };
}
