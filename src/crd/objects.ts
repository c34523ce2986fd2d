/**
 * Reading Herald's objects (herald.io/v1alpha1) as configuration: an object's `spec` is turned into the item of the
 * configuration file it stands for (a peer, an advertisement, a pool, a node's own settings) through its kind's field
 * map (kinds.ts), then checked by the same zod schema as the file. Every problem names the object's own field
 * (`spec.peerASN`, `spec.serviceAllocation.priority`, `metadata.name`), never the file's.
 *
 * An object that passed the apiserver can still fail here: the apiserver checks the structure and the CEL rules;
 * Herald checks everything (the zod refinements: communities, addresses; and, in merge.ts, the rules that need
 * the other objects). Such an object is reported in its status and ignored (docs/decisions.md "Configuration
 * sources").
 */
import type { z } from 'zod';
import type { ConfigKind, HeraldObject } from '../k8s/herald-kinds.ts';
import type { FieldMap, KindSpec } from './kinds.ts';
import { kindSpec } from './kinds.ts';
import { checkAgainst } from '../config/load.ts';
import type { AdvertisementConfig, NodeOverrideConfig, PeerConfig, PoolConfig } from '../config/schema.ts';

/** A problem of one object: `path` is the object's field (`spec.holdTime`, `metadata.name`). */
export interface ObjectIssue {
  path: string;
  message: string;
}

/** An object read as configuration, or its problems. */
export type ObjectReading<T> = { ok: true; item: T } | { ok: false; issues: ObjectIssue[] };

/** What an object of each configuration kind is read as. */
export interface ConfigItems {
  BGPPeer: PeerConfig;
  BGPAdvertisement: AdvertisementConfig;
  IPAddressPool: PoolConfig;
  BGPNodeConfigOverride: NodeOverrideConfig;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** "spec" + a zod-style path → "spec.peers[0].peerAddress". */
function join(base: string, key: PropertyKey): string {
  return typeof key === 'number' ? `${base}[${key}]` : `${base}.${String(key)}`;
}

/** `record[key]` when it is the record's own property, never one of Object.prototype's. */
function own<T>(record: Readonly<Record<string, T>> | undefined, key: string): T | undefined {
  return record !== undefined && Object.hasOwn(record, key) ? record[key] : undefined;
}

/**
 * The CRD path of a file path inside an object whose fields `map` maps: ['peerAs'] → spec.peerASN,
 * ['priority'] → spec.serviceAllocation.priority, ['peers', 1, 'address'] → spec.peers[1].peerAddress.
 */
export function crdFieldPath(map: FieldMap | undefined, path: readonly PropertyKey[], base = 'spec'): string {
  let out = base;
  let m = map;
  for (let i = 0; i < path.length; i++) {
    const key = path[i];
    if (typeof key === 'number') {
      out = join(out, key);
      continue;
    }
    if (typeof key !== 'string') continue;
    // own properties only: the key is the object's own (a spec field named "toString" threw here; issue 35)
    const renamed = own(m?.rename, key);
    for (const k of renamed ?? [key]) out = join(out, k);
    m = own(m?.nested, key);
  }
  return out;
}

/**
 * A CRD value (an object's spec, or a nested object or list of it) in the file's names. Fields the CRD does not have
 * are reported as unknown (the apiserver prunes them; a manifest may still carry them).
 */
function toFileShape(value: unknown, map: FieldMap | undefined, at: string, issues: ObjectIssue[]): unknown {
  if (Array.isArray(value)) return value.map((v, i) => toFileShape(v, map, `${at}[${i}]`, issues));
  if (map === undefined || !isRecord(value)) return value;
  // CRD path (joined by '.') → file field.
  const byCrd = new Map<string, string>();
  const groups = new Set<string>();
  const renamedAway = new Set<string>();
  for (const [file, path] of Object.entries(map.rename ?? {})) {
    byCrd.set(path.join('.'), file);
    if (path.length > 1) groups.add(path[0] as string);
    renamedAway.add(file);
  }
  const out: Record<string, unknown> = {};
  const take = (crdKey: string, v: unknown, where: string) => {
    const file = byCrd.get(crdKey) ?? (!renamedAway.has(crdKey) && !map.omit?.includes(crdKey) && !crdKey.includes('.') ? crdKey : undefined);
    if (file === undefined) issues.push({ path: where, message: 'unknown field' });
    else out[file] = toFileShape(v, map.nested?.[file], where, issues);
  };
  for (const [k, v] of Object.entries(value)) {
    if (groups.has(k) && isRecord(v)) {
      for (const [sub, sv] of Object.entries(v)) take(`${k}.${sub}`, sv, `${at}.${k}.${sub}`);
    } else if (groups.has(k)) {
      issues.push({ path: `${at}.${k}`, message: 'expected a mapping' });
    } else take(k, v, `${at}.${k}`);
  }
  return out;
}

/**
 * Reads one object of a configuration kind: its spec in the file's names (its metadata.name as the item's `name`
 * for peers, advertisements and pools, its metadata.labels as a pool's `labels`), checked by the file's schema.
 * @returns the item (defaults applied), or every problem, each naming the object's field
 */
export function readObject<K extends ConfigKind>(kind: K, obj: HeraldObject): ObjectReading<ConfigItems[K]> {
  const spec: KindSpec = kindSpec(kind);
  const issues: ObjectIssue[] = [];
  const name = obj.metadata?.name;
  if (!isRecord(obj.spec)) return { ok: false, issues: [{ path: 'spec', message: obj.spec === undefined ? 'required' : 'expected a mapping' }] };
  const data = toFileShape(obj.spec, spec.fields, 'spec', issues);
  if (issues.length > 0) return { ok: false, issues };
  const labels = obj.metadata?.labels;
  const withLabels = spec.labelsField !== undefined && isRecord(data) && labels !== undefined && Object.keys(labels).length > 0 ? { ...data, [spec.labelsField]: labels } : data;
  const withName = spec.section !== undefined && isRecord(withLabels) ? { name, ...withLabels } : withLabels;
  const r = checkAgainst(spec.spec as z.ZodType<ConfigItems[K]>, withName);
  if (r.ok) return { ok: true, item: r.value };
  return {
    ok: false,
    issues: r.issues.map((i) => ({ path: spec.section !== undefined && i.path.length === 1 && i.path[0] === 'name' ? 'metadata.name' : crdFieldPath(spec.fields, i.path), message: i.message })),
  };
}
