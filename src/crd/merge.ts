/**
 * PURE: the configuration in force on one node, from the configuration file and Herald's objects
 * (docs/decisions.md "Configuration sources"):
 *
 * - The file holds the node-local and global settings (bgp, source, node, health checks, admin, ...) and may hold
 *   peers, advertisements and pools; BGPPeer, BGPAdvertisement and IPAddressPool objects ADD to those lists. Nothing a
 *   file configures is ever replaced by an object: an object whose name (or peer address and port) the file already
 *   uses is invalid, and so reported.
 * - This node's BGPNodeConfigOverride (named after the node) sets its AS number and router ID, over the file's, its
 *   source addresses for peers that set none, and adds peers of its own. A peer's own `myASN` (file: `localAs`) and
 *   `sourceAddress` (file: `localAddress`) win.
 * - Advertisements (file or objects) name peers of either; with none at all, LoadBalancer ingress IPs go to every
 *   peer, as without objects.
 * - Each object is checked on its own, in name order, against the file and the objects accepted before it: an
 *   invalid one is ignored and its problems returned (for its status), and never disturbs another.
 *
 * The outcome depends only on the file and the objects (not on the node), except for which override applies; every
 * node reaches the same verdicts from the same inputs (each logs the invalid ones: src/daemon/daemon.ts).
 */
import type { ConfigKind, HeraldObject } from '../k8s/herald-kinds.ts';
import type { ConfigItems, ObjectIssue } from './objects.ts';
import { crdFieldPath, readObject } from './objects.ts';
import { kindSpec } from './kinds.ts';
import type { Config, NodeOverrideConfig, PeerConfig } from '../config/schema.ts';
import { semanticErrors } from '../config/semantic.ts';

/** Herald's configuration objects as read from the apiserver, by kind. */
export type ConfigObjects = Readonly<Record<ConfigKind, readonly HeraldObject[]>>;

/** Where a peer of the merged configuration comes from. */
export type PeerOrigin = 'file' | 'BGPPeer' | 'BGPNodeConfigOverride';

/** Herald's verdict on one object. */
export interface ObjectVerdict {
  readonly kind: ConfigKind;
  readonly name: string;
  readonly generation?: number;
  /** Empty when the object is valid (and in force). */
  readonly issues: readonly ObjectIssue[];
}

/** The merged configuration of one node. */
export interface MergedConfig {
  /** The file's configuration with the valid objects' peers, advertisements and pools added (this node's override peers included). */
  readonly config: Config;
  /** Origin of every peer of `config.peers`, by name. */
  readonly origins: ReadonlyMap<string, PeerOrigin>;
  /** This node's override, when one applies: its name and settings (its peers are in `config.peers`). */
  readonly override?: { readonly name: string; readonly localAs?: number; readonly routerId?: string; readonly sourceAddresses?: readonly string[] };
  /** One verdict per object, in kind then name order. */
  readonly verdicts: readonly ObjectVerdict[];
}

/** No objects at all (a node without the Kubernetes source, or before any was read). */
export const NO_OBJECTS: ConfigObjects = { BGPPeer: [], BGPAdvertisement: [], IPAddressPool: [], BGPNodeConfigOverride: [] };

const byName = (a: HeraldObject, b: HeraldObject) => ((a.metadata?.name ?? '') < (b.metadata?.name ?? '') ? -1 : (a.metadata?.name ?? '') > (b.metadata?.name ?? '') ? 1 : 0);

/**
 * The problems `cfg` has at the item `index` of list `section` (semanticErrors' paths, e.g. "peers[3].keepaliveTime"),
 * as fields of the object the item comes from.
 */
function itemIssues(cfg: Config, section: 'peers' | 'advertisements' | 'pools', index: number, kind: ConfigKind, otherPeerNames: ReadonlySet<string>): ObjectIssue[] {
  const prefix = `${section}[${index}]`;
  const map = kindSpec(kind).fields;
  const out: ObjectIssue[] = [];
  // Static routes never depend on objects: leave them out (a file may hold hundreds of thousands).
  for (const i of semanticErrors({ ...cfg, routes: [] }, { otherPeerNames })) {
    if (i.path !== prefix && !i.path.startsWith(`${prefix}.`) && !i.path.startsWith(`${prefix}[`)) continue;
    const rest = i.path.slice(prefix.length).replace(/^\./, '');
    const keys: PropertyKey[] = rest === '' ? [] : rest.split(/\.|(?=\[)/).map((k) => (k.startsWith('[') ? Number(k.slice(1, -1)) : k));
    out.push({ path: keys[0] === 'name' ? 'metadata.name' : crdFieldPath(map, keys), message: i.message });
  }
  return out;
}

/** Duplicate-name and duplicate-endpoint problems of a peer against the peers accepted so far. */
function peerConflicts(p: PeerConfig, accepted: readonly PeerConfig[], origins: ReadonlyMap<string, PeerOrigin>, base: string): ObjectIssue[] {
  const out: ObjectIssue[] = [];
  const sameName = accepted.find((q) => q.name === p.name);
  if (sameName) out.push({ path: base === 'spec' ? 'metadata.name' : `${base}.name`, message: `a peer named "${p.name}" is already configured (${originText(origins.get(p.name))}); names are unique` });
  const sameEndpoint = accepted.find((q) => q.address === p.address && q.port === p.port);
  if (sameEndpoint) out.push({ path: `${base}.peerAddress`, message: `peer "${sameEndpoint.name}" (${originText(origins.get(sameEndpoint.name))}) already uses ${p.address} port ${p.port}` });
  return out;
}

function originText(o: PeerOrigin | undefined): string {
  return o === 'file' ? 'in the configuration file' : o === 'BGPPeer' ? 'a BGPPeer' : 'a BGPNodeConfigOverride';
}

/** The kinds that add to a list of the file other than its peers, with the list each adds to. */
const LISTED = { BGPAdvertisement: 'advertisements', IPAddressPool: 'pools' } as const;
type ListedKind = keyof typeof LISTED;

/**
 * The file's list of `kind` (LISTED) with the valid objects of `kind` added, in name order: each is checked against
 * the file with the merged peers (`withPeers`) and the items accepted before it; a name already used is refused.
 * Every object gets its verdict.
 */
function addListed<K extends ListedKind>(
  m: { objects: ConfigObjects; withPeers: Config; overridePeerNames: ReadonlySet<string>; verdict: (kind: ConfigKind, obj: HeraldObject, issues: ObjectIssue[]) => void },
  kind: K,
  noun: string,
  fromFile: readonly ConfigItems[K][],
): ConfigItems[K][] {
  const section = LISTED[kind];
  const items: ConfigItems[K][] = [...fromFile];
  const fileNames = new Set(items.map((a) => a.name));
  for (const obj of [...m.objects[kind]].sort(byName)) {
    const r = readObject(kind, obj);
    if (!r.ok) {
      m.verdict(kind, obj, r.issues);
      continue;
    }
    const issues = items.some((a) => a.name === r.item.name)
      ? [{ path: 'metadata.name', message: `${noun} named "${r.item.name}" is ${fileNames.has(r.item.name) ? 'in the configuration file' : 'already configured'}; names are unique` }]
      : itemIssues({ ...m.withPeers, [section]: [...items, r.item] }, section, items.length, kind, m.overridePeerNames);
    m.verdict(kind, obj, issues);
    if (issues.length === 0) items.push(r.item);
  }
  return items;
}

/**
 * Merges the objects into the file's configuration for node `nodeName` (see the module comment).
 * @param file a valid configuration file (restart-only settings as running)
 */
export function mergeConfig(file: Config, objects: ConfigObjects, nodeName: string): MergedConfig {
  const verdicts: ObjectVerdict[] = [];
  const verdict = (kind: ConfigKind, obj: HeraldObject, issues: ObjectIssue[]) => {
    verdicts.push({ kind, name: obj.metadata?.name ?? '', ...(obj.metadata?.generation !== undefined ? { generation: obj.metadata.generation } : {}), issues });
  };
  const origins = new Map<string, PeerOrigin>(file.peers.map((p) => [p.name, 'file']));
  const peers: PeerConfig[] = [...file.peers];
  const noNames: ReadonlySet<string> = new Set();

  for (const obj of [...objects.BGPPeer].sort(byName)) {
    const r = readObject('BGPPeer', obj);
    if (!r.ok) {
      verdict('BGPPeer', obj, r.issues);
      continue;
    }
    const conflicts = peerConflicts(r.item, peers, origins, 'spec');
    const issues = conflicts.length > 0 ? conflicts : itemIssues({ ...file, peers: [...peers, r.item] }, 'peers', peers.length, 'BGPPeer', noNames);
    verdict('BGPPeer', obj, issues);
    if (issues.length > 0) continue;
    peers.push(r.item);
    origins.set(r.item.name, 'BGPPeer');
  }

  // Overrides: every node's is checked (the same verdict everywhere); only this node's applies.
  const overridePeerNames = new Set<string>();
  let override: { name: string; settings: NodeOverrideConfig } | undefined;
  for (const obj of [...objects.BGPNodeConfigOverride].sort(byName)) {
    const r = readObject('BGPNodeConfigOverride', obj);
    if (!r.ok) {
      verdict('BGPNodeConfigOverride', obj, r.issues);
      continue;
    }
    const issues: ObjectIssue[] = [];
    const own: PeerConfig[] = [];
    const localAs = r.item.localAs ?? file.bgp.localAs;
    (r.item.peers ?? []).forEach((p, i) => {
      const base = `spec.peers[${i}]`;
      const conflicts = peerConflicts(p, [...peers, ...own], origins, base);
      if (conflicts.length > 0) {
        issues.push(...conflicts);
        return;
      }
      // Checked as a peer of this override's node (its AS number), after the peers every node has.
      const cfg: Config = { ...file, bgp: { ...file.bgp, localAs }, peers: [...peers, ...own, p] };
      for (const i2 of itemIssues(cfg, 'peers', peers.length + own.length, 'BGPPeer', noNames)) {
        issues.push({ path: i2.path === 'metadata.name' ? `${base}.name` : i2.path.replace(/^spec/, base), message: i2.message });
      }
      own.push(p);
    });
    verdict('BGPNodeConfigOverride', obj, issues);
    if (issues.length > 0) continue;
    for (const p of own) overridePeerNames.add(p.name);
    if (obj.metadata?.name === nodeName) override = { name: nodeName, settings: r.item };
  }

  const withPeers: Config = { ...file, peers };
  const listed = { objects, withPeers, overridePeerNames, verdict };
  const advertisements = addListed(listed, 'BGPAdvertisement', 'an advertisement', file.advertisements ?? []);
  const pools = addListed(listed, 'IPAddressPool', 'a pool', file.pools ?? []);

  for (const p of override?.settings.peers ?? []) {
    peers.push(p);
    origins.set(p.name, 'BGPNodeConfigOverride');
  }
  const config: Config = {
    ...file,
    peers,
    ...(advertisements.length > 0 ? { advertisements } : {}),
    ...(pools.length > 0 ? { pools } : {}),
  };
  const o = override?.settings;
  return {
    config,
    origins,
    ...(override
      ? {
          override: {
            name: override.name,
            ...(o?.localAs !== undefined ? { localAs: o.localAs } : {}),
            ...(o?.routerId !== undefined ? { routerId: o.routerId } : {}),
            ...(o?.sourceAddresses !== undefined ? { sourceAddresses: o.sourceAddresses } : {}),
          },
        }
      : {}),
    verdicts,
  };
}
