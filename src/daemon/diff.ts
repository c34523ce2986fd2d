/**
 * PURE comparison of two configurations for a live reload (SIGHUP or a changed file).
 *
 * The daemon applies the result as a diff: unchanged peers keep their sessions; a changed peer is
 * updated, and whether its session restarts is the Speaker's one rule (bgp/peer-config.ts, by the
 * option each changed field sets: src/config/peer-fields.ts), which `sessionReset` reports; removed
 * peers are stopped with Cease / Peer De-configured (RFC 4486 subcode 3); new peers are started. Global settings that cannot change without restarting the
 * process are listed in `restartRequired` and keep their running values.
 */
import { isDeepStrictEqual } from 'node:util';
import type { Config, PeerConfig } from '../config/schema.ts';
import { fileChangeResets } from '../config/peer-fields.ts';

/** Global fields that need a process restart; a reload keeps the running values. */
export const RESTART_FIELDS = ['bgp.localAs', 'bgp.routerId', 'bgp.listen', 'admin', 'metrics', 'stateDir', 'source', 'node', 'flapControl'] as const;

/** A peer present in both configs with different settings. */
export interface ChangedPeer<P> {
  name: string;
  before: P;
  after: P;
  /** Every top-level field that differs, sorted. */
  fields: string[];
  /** True when the session restarts for these fields (the Speaker's rule, bgp/peer-config.ts). */
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
 * @param resets whether a change of these fields restarts the session (for the file's peers: `fileChangeResets`;
 *   for the Speaker's: bgp/'s `resetsSession`)
 */
export function diffPeers<P extends { name: string }>(before: readonly P[], after: readonly P[], resets: (fields: readonly string[]) => boolean): PeerDiff<P> {
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
    else out.changed.push({ name, before: o, after: p, fields, sessionReset: resets(fields) });
  }
  for (const [name, p] of old) if (!cur.has(name)) out.removed.push(p);
  return out;
}

/** Compare two validated configurations (see the module comment for what each part means). */
export function diffConfig(before: Config, after: Config): ConfigDiff {
  const peers = diffPeers(before.peers, after.peers, fileChangeResets);
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
