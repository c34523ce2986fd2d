/**
 * The CLI's cluster mode (`--all-nodes`), in the style of `cilium bgp peers`: every node's own view (its peers, its
 * Service VIPs and why), asked of each node's Herald through the apiserver's pod proxy
 * (`GET /api/v1/namespaces/NS/pods/POD:PORT/proxy/api/v1/peers`, the pod's metrics listener: its read-only views,
 * src/metrics/server.ts), at most {@link FAN_OUT} at a time, and printed as one table with a NODE column. Per-VIP
 * detail stays on the nodes; nothing big is stored in etcd for it (docs/decisions.md "Cluster citizenship").
 *
 * The pods are Herald's DaemonSet pods in its namespace (`--namespace`, else POD_NAMESPACE, else herald-system),
 * label `app.kubernetes.io/name=herald`; the port is their container port named `metrics`. The user's kubeconfig
 * (`--kubeconfig`, else KUBECONFIG, else ~/.kube/config, else in-cluster: src/k8s/client.ts) needs `list pods` and
 * `get pods/proxy` there (docs/cli.md). A node whose pod is not Ready, has no metrics listener or does not answer is
 * named with the reason; the others are shown.
 */
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { PeerView, ServiceView, VipView } from '../admin/view.ts';
import { loadKubeConfig } from '../k8s/client.ts';
import type { KubeClient } from '../k8s/client.ts';
import { apiErrorText } from '../k8s/forbidden.ts';
import { version } from '../version.ts';
import { formatDuration, formatTable } from './table.ts';

/** Most nodes asked at once. */
export const FAN_OUT = 16;

/** Herald's pods (deploy/kubernetes/daemonset.yaml). */
const POD_SELECTOR = 'app.kubernetes.io/name=herald';

/** One node's answer, or why there is none. */
export interface NodeAnswer<T> {
  readonly node: string;
  readonly pod: string;
  readonly value?: T;
  readonly problem?: string;
}

/** ~/.kube/config when neither --kubeconfig nor KUBECONFIG names one and the file exists (kubectl's default). */
function laptopKubeconfig(env: NodeJS.ProcessEnv): string | undefined {
  if (env['KUBECONFIG']) return undefined;
  const file = join(env['HOME'] || homedir(), '.kube', 'config');
  return existsSync(file) ? file : undefined;
}

interface PodLike {
  metadata?: { name?: string; ownerReferences?: { kind?: string }[] };
  spec?: { nodeName?: string; containers?: { ports?: { name?: string; containerPort?: number }[] }[] };
  status?: { conditions?: { type?: string; status?: string }[] };
}

/** `f` over `items`, at most `limit` at a time, results in the order of `items`. */
async function pooled<A, B>(items: readonly A[], limit: number, f: (a: A) => Promise<B>): Promise<B[]> {
  const out: B[] = new Array<B>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const k = next++;
      out[k] = await f(items[k] as A);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

/**
 * `path` (e.g. "/api/v1/peers") asked of every Herald pod in `namespace` through the apiserver, by node name.
 * @throws Error naming the kubeconfig problem or the apiserver's answer to the pod list (e.g. 403 without `list pods`)
 */
export async function askNodes(o: { kubeconfig?: string; namespace: string; path: string; env?: NodeJS.ProcessEnv; kc?: KubeClient }): Promise<NodeAnswer<unknown>[]> {
  const env = o.env ?? process.env;
  const kc = o.kc ?? loadKubeConfig(o.kubeconfig ?? laptopKubeconfig(env), env, { role: 'cli', version: await version() }).kc;
  const ns = encodeURIComponent(o.namespace);
  try {
    let list: { items?: PodLike[] };
    try {
      list = ((await kc.request('GET', `/api/v1/namespaces/${ns}/pods`, { query: { labelSelector: POD_SELECTOR } })) ?? {}) as { items?: PodLike[] };
    } catch (err) {
      throw new Error(`cannot list Herald's pods in namespace ${o.namespace}: ${apiErrorText(err)}`, { cause: err });
    }
    const pods = (list.items ?? []).filter((p) => p.metadata?.ownerReferences?.some((r) => r.kind === 'DaemonSet') && p.spec?.nodeName !== undefined);
    pods.sort((a, b) => ((a.spec?.nodeName ?? '') < (b.spec?.nodeName ?? '') ? -1 : 1));
    return await pooled(pods, FAN_OUT, async (p): Promise<NodeAnswer<unknown>> => {
      const node = p.spec?.nodeName ?? '?';
      const pod = p.metadata?.name ?? '?';
      if (!p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')) return { node, pod, problem: `pod ${pod} is not Ready` };
      const port = p.spec?.containers?.flatMap((c) => c.ports ?? []).find((x) => x.name === 'metrics')?.containerPort;
      if (port === undefined) return { node, pod, problem: `pod ${pod} has no container port named metrics (Herald's metrics listener, metrics: in herald.yaml)` };
      try {
        return { node, pod, value: await kc.request('GET', `/api/v1/namespaces/${ns}/pods/${encodeURIComponent(pod)}:${port}/proxy${o.path}`, { timeoutMs: 15_000 }) };
      } catch (err) {
        return { node, pod, problem: `no answer from pod ${pod}: ${apiErrorText(err)}` };
      }
    });
  } finally {
    if (o.kc === undefined) kc.close();
  }
}

const isRecord = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The answers' values that are arrays of records with a string `key` (a node's view as its admin API serves it). */
function listsOf<T>(answers: readonly NodeAnswer<unknown>[], key: string): NodeAnswer<T[]>[] {
  return answers.map((a) => {
    if (a.problem !== undefined) return a as NodeAnswer<T[]>;
    if (!Array.isArray(a.value)) return { node: a.node, pod: a.pod, problem: `pod ${a.pod} answered something else than a list` };
    return { node: a.node, pod: a.pod, value: a.value.filter((x): x is T => isRecord(x) && typeof x[key] === 'string') };
  });
}

/** Every node's peers (`herald peers --all-nodes`). */
export async function clusterPeers(o: { kubeconfig?: string; namespace: string; env?: NodeJS.ProcessEnv; kc?: KubeClient }): Promise<NodeAnswer<PeerView[]>[]> {
  return listsOf<PeerView>(await askNodes({ ...o, path: '/api/v1/peers' }), 'name');
}

/** Every node's Service VIPs, of one Service when `service` ("ns/name") is given (`herald services --all-nodes`). */
export async function clusterServices(o: { kubeconfig?: string; namespace: string; service?: string; env?: NodeJS.ProcessEnv; kc?: KubeClient }): Promise<NodeAnswer<ServiceView[]>[]> {
  if (o.service === undefined) return listsOf<ServiceView>(await askNodes({ ...o, path: '/api/v1/services' }), 'service');
  const [namespace = '', name = ''] = o.service.split('/');
  const answers = await askNodes({ ...o, path: `/api/v1/services/${encodeURIComponent(namespace)}/${encodeURIComponent(name)}` });
  // A node that does not know the Service answers 404: no VIP of it there.
  return listsOf<ServiceView>(
    answers.map((a) => (a.problem !== undefined && /HTTP 404/.test(a.problem) ? { node: a.node, pod: a.pod, value: [] } : a.value !== undefined ? { ...a, value: [a.value] } : a)),
    'service',
  );
}

/** One row per node and peer (`--json`: these objects). */
export function peerRows(answers: readonly NodeAnswer<PeerView[]>[]): Array<PeerView & { node: string }> {
  return answers.flatMap((a) => (a.value ?? []).map((p) => ({ node: a.node, ...p })));
}

/** One row per node and VIP (`--json`: these objects). */
export function vipRows(answers: readonly NodeAnswer<ServiceView[]>[]): Array<VipView & { node: string; service: string }> {
  return answers.flatMap((a) => (a.value ?? []).flatMap((s) => (Array.isArray(s.vips) ? s.vips : []).map((v) => ({ node: a.node, service: s.service, ...v }))));
}

/** Lines for nodes without an answer. */
function notes(answers: readonly NodeAnswer<unknown>[]): string {
  const out = answers.flatMap((a) => (a.problem !== undefined ? [`${a.node}: ${a.problem}`] : []));
  return out.length > 0 ? `\n${out.join('\n')}\n` : '';
}

/** `herald peers --all-nodes`: NODE, PEER, ADDRESS, PEER ASN, MY ASN, STATE, UPTIME, SENT, RECEIVED, LAST ERROR. */
export function formatClusterPeers(answers: readonly NodeAnswer<PeerView[]>[]): string {
  if (answers.length === 0) return "No Herald pod found (label app.kubernetes.io/name=herald; is Herald's DaemonSet in this namespace?).\n";
  const rows = peerRows(answers);
  if (rows.length === 0) return `No sessions on ${answers.filter((a) => a.problem === undefined).length} node(s).\n${notes(answers)}`;
  const error = (p: PeerView) => (p.lastError ? `${p.lastError.description ?? p.lastError.kind}${p.lastError.message !== undefined ? `: ${p.lastError.message}` : ''}` : '');
  const table = formatTable(
    ['NODE', 'PEER', 'ADDRESS', 'PEER ASN', 'MY ASN', 'STATE', 'UPTIME', 'SENT', 'RECEIVED', 'LAST ERROR'],
    rows.map((p) => [p.node, p.name, `${p.address}:${p.port}`, String(p.peerAs), String(p.localAs), p.state, p.uptimeSec !== undefined ? formatDuration(Math.round(p.uptimeSec)) : '', String(p.prefixes?.sent ?? ''), String(p.prefixes?.received ?? ''), error(p)]),
  );
  return table + notes(answers);
}

/** `herald services [ns/name] --all-nodes`: NODE, SERVICE, ADDRESS, KIND, ANNOUNCED, REASONS. */
export function formatClusterServices(answers: readonly NodeAnswer<ServiceView[]>[], service: string | undefined): string {
  if (answers.length === 0) return "No Herald pod found (label app.kubernetes.io/name=herald; is Herald's DaemonSet in this namespace?).\n";
  const rows = vipRows(answers);
  if (rows.length === 0) return `${service !== undefined ? `No node lists a VIP of ${service}.` : 'No node lists a VIP.'}\n${notes(answers)}`;
  const table = formatTable(
    ['NODE', 'SERVICE', 'ADDRESS', 'KIND', 'ANNOUNCED', 'REASONS'],
    rows.map((v) => [v.node, v.service, v.address, v.kind, v.announced ? 'yes' : 'no', (v.reasons ?? []).map((r) => r.code).join(', ')]),
  );
  return table + notes(answers);
}
