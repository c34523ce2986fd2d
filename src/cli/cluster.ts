/**
 * The CLI's cluster mode (`--all-nodes`): every node's BGPNodeStatus (src/status/node-status.ts), read through the
 * apiserver with a kubeconfig (`--kubeconfig`, else KUBECONFIG, else ~/.kube/config, else in-cluster: src/k8s/client.ts),
 * in Herald's namespace (`--namespace`, else POD_NAMESPACE, else herald-system), as one table with a NODE column, in
 * the style of `cilium bgp peers`. Needs `list` on bgpnodestatuses.herald.io there (docs/cli.md).
 */
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { NodeStatus, SessionStatus, VipStatus } from '../crd/status.ts';
import { STATUS_STALE_MS, nodeStatusSchema } from '../crd/status.ts';
import { loadKubeConfig } from '../k8s/client.ts';
import { version } from '../version.ts';
import { apiErrorText } from '../k8s/forbidden.ts';
import { HERALD_GROUP, heraldCollectionPath } from '../k8s/herald-kinds.ts';
import { formatDuration, formatTable } from './table.ts';

/** One node's status as read, or why it cannot be read. */
export interface NodeStatusRow {
  readonly node: string;
  readonly status?: NodeStatus;
  readonly problem?: string;
}

/** ~/.kube/config when neither --kubeconfig nor KUBECONFIG names one and the file exists (kubectl's default). */
function laptopKubeconfig(env: NodeJS.ProcessEnv): string | undefined {
  if (env['KUBECONFIG']) return undefined;
  const file = join(env['HOME'] || homedir(), '.kube', 'config');
  return existsSync(file) ? file : undefined;
}

/**
 * Every BGPNodeStatus in `namespace`, by node name.
 * @throws Error naming the kubeconfig problem or the apiserver's answer (e.g. 403 without `list`)
 */
export async function readNodeStatuses(o: { kubeconfig?: string; namespace: string; env?: NodeJS.ProcessEnv }): Promise<NodeStatusRow[]> {
  const env = o.env ?? process.env;
  const { kc } = loadKubeConfig(o.kubeconfig ?? laptopKubeconfig(env), env, { role: 'cli', version: await version() });
  let list: { items?: unknown[] };
  try {
    list = ((await kc.request('GET', heraldCollectionPath('BGPNodeStatus', o.namespace))) ?? {}) as { items?: unknown[] };
  } catch (err) {
    throw new Error(`cannot list bgpnodestatuses.${HERALD_GROUP} in namespace ${o.namespace}: ${apiErrorText(err)}`, { cause: err });
  } finally {
    kc.close();
  }
  const rows: NodeStatusRow[] = [];
  for (const item of list.items ?? []) {
    const obj = item as { metadata?: { name?: string }; status?: unknown };
    const node = obj.metadata?.name ?? '?';
    if (obj.status === undefined) {
      rows.push({ node, problem: 'no status written yet' });
      continue;
    }
    const r = nodeStatusSchema.safeParse(obj.status);
    rows.push(r.success ? { node, status: r.data } : { node, problem: `status not understood by this herald (${r.error.issues[0]?.path.join('.') ?? ''}: ${r.error.issues[0]?.message ?? ''})` });
  }
  return rows.sort((a, b) => (a.node < b.node ? -1 : a.node > b.node ? 1 : 0));
}

/** Seconds from `since` (RFC 3339) to `nowMs`, as the tables print durations; '' when unknown. */
function age(since: string | undefined, nowMs: number): string {
  if (since === undefined) return '';
  const t = Date.parse(since);
  return Number.isNaN(t) ? '' : formatDuration(Math.max(0, Math.round((nowMs - t) / 1000)));
}

/** Every node's sessions, one row each (`--json`: these objects). */
export function clusterSessions(rows: readonly NodeStatusRow[]): Array<SessionStatus & { node: string }> {
  return rows.flatMap((r) => (r.status?.sessions ?? []).map((s) => ({ node: r.node, ...s })));
}

/** Every node's VIPs of `service` ("ns/name"; all when undefined), one row each (`--json`: these objects). */
export function clusterVips(rows: readonly NodeStatusRow[], service?: string): Array<VipStatus & { node: string }> {
  return rows.flatMap((r) => (r.status?.vips ?? []).filter((v) => service === undefined || v.service === service).map((v) => ({ node: r.node, ...v })));
}

/** Lines for nodes whose status cannot be shown, and for stale ones. */
function notes(rows: readonly NodeStatusRow[], nowMs: number): string {
  const out: string[] = [];
  for (const r of rows) {
    if (r.problem !== undefined) out.push(`${r.node}: ${r.problem}`);
    for (const p of r.status?.problems ?? []) out.push(`${r.node}: not run: ${p}`);
    const updated = r.status?.lastUpdate !== undefined ? Date.parse(r.status.lastUpdate) : Number.NaN;
    if (!Number.isNaN(updated) && nowMs - updated > STATUS_STALE_MS) out.push(`${r.node}: status last written ${age(r.status?.lastUpdate, nowMs)} ago (is its Herald running?)`);
  }
  return out.length > 0 ? `\n${out.join('\n')}\n` : '';
}

/** `herald peers --all-nodes`: NODE, PEER, SOURCE, ADDRESS, PEER ASN, MY ASN, STATE, SINCE, SENT, RECEIVED, LAST ERROR. */
export function formatClusterPeers(rows: readonly NodeStatusRow[], nowMs: number): string {
  const sessions = clusterSessions(rows);
  if (sessions.length === 0 && rows.every((r) => r.problem === undefined)) return rows.length === 0 ? 'No BGPNodeStatus found (is Herald running with the kubernetes source?).\n' : `No sessions on ${rows.length} node(s).\n${notes(rows, nowMs)}`;
  const table = formatTable(
    ['NODE', 'PEER', 'SOURCE', 'ADDRESS', 'PEER ASN', 'MY ASN', 'STATE', 'SINCE', 'SENT', 'RECEIVED', 'LAST ERROR'],
    sessions.map((s) => [s.node, s.peer, s.source, `${s.peerAddress}:${s.peerPort}`, String(s.peerASN), String(s.myASN), s.state, age(s.since, nowMs), String(s.prefixesSent), String(s.prefixesReceived), s.lastError ?? '']),
  );
  return table + notes(rows, nowMs);
}

/** `herald services [ns/name] --all-nodes`: NODE, SERVICE, ADDRESS, KIND, ANNOUNCED, REASONS. */
export function formatClusterServices(rows: readonly NodeStatusRow[], service: string | undefined, nowMs: number): string {
  const vips = clusterVips(rows, service);
  if (vips.length === 0) return `${service !== undefined ? `No node lists a VIP of ${service}.` : 'No node lists a VIP.'}\n${notes(rows, nowMs)}`;
  const table = formatTable(
    ['NODE', 'SERVICE', 'ADDRESS', 'KIND', 'ANNOUNCED', 'REASONS'],
    vips.map((v) => [v.node, v.service, v.address, v.kind, v.announced ? 'yes' : 'no', v.reasons.join(', ')]),
  );
  return table + notes(rows, nowMs);
}
