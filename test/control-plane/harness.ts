/**
 * Shared pieces of the control-plane tier (test/control-plane/*.test.ts): the tier's prerequisites (skip visibly, or
 * fail under CI=true), a real control plane with Herald's deploy/kubernetes manifests (and CRDs) applied, the test acting as the
 * kubelet (Nodes, Pods with nodeName, pod status through the status subresource, graceful deletion), and `herald run`
 * processes that reach the apiserver with a ServiceAccount token and peer with one real BIRD.
 *
 * Herald is driven only through its CLI, config file, admin API and log (JSON lines on stdout).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Test } from 'tap';
import { stringify } from 'yaml';
import { birdAvailable, freePort } from '../helpers/bird.ts';
import type { Bird } from '../helpers/bird.ts';
import { ControlPlane, controlPlaneTools, readManifests } from '../helpers/control-plane.ts';
import type { ControlPlaneOptions, KubeRest } from '../helpers/control-plane.ts';
import { DaemonProcess } from '../helpers/daemon-process.ts';
import { underCI } from '../helpers/prereq.ts';
import { ROOT, adminJson, pathsFor, startBird, withLogs } from '../e2e/harness.ts';
import type { HeraldNode, NodeSpec } from '../e2e/harness.ts';

export const HERALD_AS = 65000;
export const BIRD_AS = 65100;

/**
 * Why the tier cannot run here (undefined when it can): bird2, Go/the built binaries, openssl or setpriv missing.
 */
export function tierSkipReason(): string | undefined {
  if (!birdAvailable()) return 'bird2 is not installed (scripts/setup.sh installs it)';
  const tools = controlPlaneTools();
  if ('reason' in tools) return `${tools.reason} (the control-plane tier needs etcd, kube-apiserver and kube-controller-manager)`;
  return undefined;
}

/**
 * Runs `body` as the file's tests when the tier can run; otherwise a visible skip naming the reason, or, under
 * CI=true, a failure (CI must run this tier).
 */
export function controlPlaneTier(t: Test, name: string, timeoutMs: number, body: (t: Test) => Promise<void>): void {
  const reason = tierSkipReason();
  if (reason !== undefined && underCI()) {
    t.fail(`control-plane tier cannot run under CI=true: ${reason}`);
    return;
  }
  // The tap runner honours the child's own timeout (longer than the suite's default per-file timeout).
  t.setTimeout(timeoutMs + 60_000);
  t.test(name, reason !== undefined ? { skip: reason } : { timeout: timeoutMs }, body);
}

/**
 * The access objects of deploy/kubernetes: the DaemonSet's ServiceAccount and RBAC (serviceaccount.yaml, rbac.yaml),
 * its admission policies (admission-policy.yaml), herald controller's ServiceAccount and RBAC (controller.yaml
 * without its Deployment: no kubelet runs pods here; the tests start `herald controller` themselves), and their
 * priority level (flowcontrol.yaml).
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function accessManifests(): any[] {
  return [
    ...readManifests('deploy/kubernetes/serviceaccount.yaml'),
    ...readManifests('deploy/kubernetes/rbac.yaml'),
    ...readManifests('deploy/kubernetes/admission-policy.yaml'),
    ...readManifests('deploy/kubernetes/controller.yaml').filter((d) => d.kind !== 'Deployment'),
    ...readManifests('deploy/kubernetes/flowcontrol.yaml'),
  ];
}

/**
 * A started control plane with deploy/kubernetes's Namespace and access objects applied ({@link accessManifests}).
 * `standalone`: the DaemonSet's account is also bound to the controller's roles — one `herald run` process doing
 * everything (no `--separate-controller`), as a one-process install must grant it.
 */
export async function startCluster(t: Test, o: ControlPlaneOptions & { standalone?: boolean } = {}): Promise<ControlPlane> {
  const tools = controlPlaneTools();
  if ('reason' in tools) throw new Error(tools.reason);
  const cp = await ControlPlane.start(tools.tools, o);
  t.teardown(() => cp.stop());
  t.comment(`control plane: kube-apiserver ${tools.tools.k8sVersion}, etcd ${tools.tools.etcdVersion} at ${cp.server}`);
  await cp.apply([...readManifests('deploy/kubernetes/namespace.yaml'), ...accessManifests()]);
  if (o.standalone) {
    const herald = [{ kind: 'ServiceAccount', name: 'herald', namespace: 'herald-system' }];
    await cp.apply([
      { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'herald-standalone' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'herald-controller' }, subjects: herald },
      { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'herald-standalone', namespace: 'herald-system' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'herald-controller' }, subjects: herald },
    ]);
  }
  await installCrds(cp);
  return cp;
}

/**
 * A kubeconfig with the token the DaemonSet's pod on `node` gets (bound to a Pod there: the admission policies read
 * the node's name from it), written under the control plane's directory.
 */
export async function nodeKubeconfig(cp: ControlPlane, node: string, o: { namespace?: string } = {}): Promise<string> {
  const ns = o.namespace ?? 'herald-system';
  // A pod of its own (unlabelled: not one of the DaemonSet's pods createHeraldPods makes), bound to the node.
  const token = await cp.podToken(ns, 'herald', `herald-token-${node}`, node);
  return cp.writeTokenKubeconfig(join(cp.dir, `herald-${ns}-${node}.kubeconfig`), token);
}

/** Installs Herald's CRDs (deploy/kubernetes/crds/, as the kustomization does) and waits until each is Established. */
export async function installCrds(cp: ControlPlane): Promise<void> {
  const crds = readManifests('deploy/kubernetes/crds/kustomization.yaml')[0].resources.flatMap((f: string) => readManifests(`deploy/kubernetes/crds/${f}`));
  for (const c of crds) await cp.admin.must('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', c);
  for (const c of crds) {
    await until(`CRD ${c.metadata.name} Established`, async () => {
      const r = await cp.admin.request('GET', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${c.metadata.name}`);
      return (r.body?.status?.conditions ?? []).some((x: { type: string; status: string }) => x.type === 'Established' && x.status === 'True');
    });
  }
}

/** Waits until `check` returns a truthy value (returned); throws `what` (and the last error) after `timeoutMs`. */
export async function until<T>(what: string, check: () => Promise<T | undefined | false | null> | T | undefined | false | null, timeoutMs = 60_000, intervalMs = 250): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const v = await check();
      if (v) return v;
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? ` (last error: ${String(last)})` : ''}`);
}

// ------------------------------------------------------------------------------------------------
// The test as the kubelet
// ------------------------------------------------------------------------------------------------

/** Creates Node `name` with InternalIP `ip` and sets its status Ready (as a kubelet registers itself). */
export async function createNode(api: KubeRest, name: string, ip: string): Promise<void> {
  await api.must('POST', '/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name, labels: { 'kubernetes.io/hostname': name } } });
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  await api.must(
    'PATCH',
    `/api/v1/nodes/${name}/status`,
    {
      status: {
        addresses: [
          { type: 'InternalIP', address: ip },
          { type: 'Hostname', address: name },
        ],
        conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status (test)', lastHeartbeatTime: now, lastTransitionTime: now }],
      },
    },
    'application/merge-patch+json',
  );
}

/** Creates Pod `namespace/name` bound to `nodeName` (spec.nodeName: no scheduler), labels `labels`, one container port 8080. */
export async function createPod(api: KubeRest, o: { name: string; namespace?: string; nodeName: string; labels: Record<string, string> }): Promise<void> {
  const ns = o.namespace ?? 'default';
  await api.must('POST', `/api/v1/namespaces/${ns}/pods`, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: o.name, namespace: ns, labels: o.labels },
    spec: {
      nodeName: o.nodeName,
      automountServiceAccountToken: false,
      terminationGracePeriodSeconds: 30,
      containers: [{ name: 'web', image: 'registry.invalid/herald-test:1', ports: [{ containerPort: 8080, name: 'http' }] }],
    },
  });
}

/**
 * Herald's DaemonSet and its pods, one per node (Ready, at the node's address), as a cluster that runs Herald has them:
 * the elected status writer counts a node's Herald while its pod is Ready (src/status/object-status-writer.ts), and
 * `--all-nodes` asks each pod through the pod proxy at its `metrics` port. No DaemonSet controller runs: the pods are
 * created here (owned by the DaemonSet, so the garbage collector keeps them) and `herald run` runs as processes.
 */
export async function createHeraldPods(api: KubeRest, o: { namespace: string; nodes: readonly { name: string; ip: string }[]; metricsPort?: number }): Promise<void> {
  const labels = { 'app.kubernetes.io/name': 'herald' };
  const ds = (await api.must('POST', `/apis/apps/v1/namespaces/${o.namespace}/daemonsets`, {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name: 'herald', namespace: o.namespace, labels },
    spec: { selector: { matchLabels: labels }, template: { metadata: { labels }, spec: { containers: [{ name: 'herald', image: 'registry.invalid/herald:test' }] } } },
  })).body as { metadata: { uid: string } };
  for (const n of o.nodes) {
    const name = `herald-${n.name}`;
    await api.must('POST', `/api/v1/namespaces/${o.namespace}/pods`, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: o.namespace, labels, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'herald', uid: ds.metadata.uid, controller: true, blockOwnerDeletion: true }] },
      spec: { nodeName: n.name, serviceAccountName: 'herald', hostNetwork: true, automountServiceAccountToken: false, containers: [{ name: 'herald', image: 'registry.invalid/herald:test', ports: [{ name: 'metrics', containerPort: o.metricsPort ?? 9179 }] }] },
    });
    await setPodReady(api, { name, namespace: o.namespace, podIP: n.ip, hostIP: n.ip, ready: true });
  }
}

/**
 * Sets the Pod Running with `podIP` and its Ready condition (through the status subresource, as the kubelet does).
 * The EndpointSlice controller takes `ready` from this condition.
 */
export async function setPodReady(api: KubeRest, o: { name: string; namespace?: string; podIP: string; hostIP: string; ready: boolean }): Promise<void> {
  const ns = o.namespace ?? 'default';
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const status = o.ready ? 'True' : 'False';
  await api.must(
    'PATCH',
    `/api/v1/namespaces/${ns}/pods/${o.name}/status`,
    {
      status: {
        phase: 'Running',
        podIP: o.podIP,
        podIPs: [{ ip: o.podIP }],
        hostIP: o.hostIP,
        hostIPs: [{ ip: o.hostIP }],
        startTime: now,
        conditions: [
          { type: 'Initialized', status: 'True', lastTransitionTime: now },
          { type: 'ContainersReady', status, lastTransitionTime: now },
          { type: 'Ready', status, lastTransitionTime: now },
          { type: 'PodScheduled', status: 'True', lastTransitionTime: now },
        ],
      },
    },
    // Pod conditions merge by type with a strategic merge patch (a JSON merge patch would replace the list).
    'application/strategic-merge-patch+json',
  );
}

/** Deletes a Pod with a grace period: it gets a deletionTimestamp and stays until {@link finishPodDeletion}. */
export async function deletePodGracefully(api: KubeRest, name: string, namespace = 'default', gracePeriodSeconds = 30): Promise<void> {
  await api.must('DELETE', `/api/v1/namespaces/${namespace}/pods/${name}`, { apiVersion: 'v1', kind: 'DeleteOptions', gracePeriodSeconds });
}

/** The kubelet's final delete (grace period 0) once the containers have stopped. */
export async function finishPodDeletion(api: KubeRest, name: string, namespace = 'default'): Promise<void> {
  await api.must('DELETE', `/api/v1/namespaces/${namespace}/pods/${name}`, { apiVersion: 'v1', kind: 'DeleteOptions', gracePeriodSeconds: 0 }, undefined, [404]);
}

/** Creates a LoadBalancer Service selecting `selector` (port 80 → 8080). */
export async function createService(api: KubeRest, o: { name: string; namespace?: string; selector: Record<string, string>; etp: 'Local' | 'Cluster'; loadBalancerClass?: string; annotations?: Record<string, string> }): Promise<void> {
  const ns = o.namespace ?? 'default';
  await api.must('POST', `/api/v1/namespaces/${ns}/services`, {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: o.name, namespace: ns, ...(o.annotations ? { annotations: o.annotations } : {}) },
    spec: {
      type: 'LoadBalancer',
      selector: o.selector,
      externalTrafficPolicy: o.etp,
      ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' }],
      ...(o.loadBalancerClass !== undefined ? { loadBalancerClass: o.loadBalancerClass } : {}),
    },
  });
}

/** Sets `status.loadBalancer.ingress` of a Service to `ips`, as an external load-balancer controller would. */
export async function setIngress(api: KubeRest, name: string, ips: string[], namespace = 'default'): Promise<void> {
  await api.must('PATCH', `/api/v1/namespaces/${namespace}/services/${name}/status`, { status: { loadBalancer: { ingress: ips.map((ip) => ({ ip, ipMode: 'VIP' })) } } }, 'application/merge-patch+json');
}

/** The endpoints of the Service's EndpointSlices (written by the real EndpointSlice controller). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function sliceEndpoints(api: KubeRest, service: string, namespace = 'default'): Promise<any[]> {
  const a = await api.must('GET', `/apis/discovery.k8s.io/v1/namespaces/${namespace}/endpointslices?labelSelector=${encodeURIComponent(`kubernetes.io/service-name=${service}`)}`);
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  return (a.body.items as any[]).flatMap((s) => s.endpoints ?? []);
}

// ------------------------------------------------------------------------------------------------
// Herald
// ------------------------------------------------------------------------------------------------

/** Options of {@link startHerald}. */
export interface HeraldOptions {
  node: NodeSpec;
  kubeconfig: string;
  bird: { ip: string; port: number };
  /** POD_NAMESPACE (the allocator's Lease namespace; default herald-system). */
  namespace?: string;
  /** Extra top-level config (pools, loadBalancerClass, ...). */
  extra?: Record<string, unknown>;
  /** More environment (test hooks, docs/development.md). */
  env?: Record<string, string>;
  /** Extra arguments of `herald run` (e.g. --separate-controller). */
  args?: string[];
}

/**
 * Spawns `herald run` (bin/herald.js under this Node) for `node` with the Kubernetes source on `kubeconfig`, one eBGP
 * peer (BIRD), kube-proxy probing off (this tier tests the EndpointSlice path; the e2e tier covers kube-proxy health
 * with its fake), flap control off, the admin API on a free port of 127.0.0.1.
 */
export async function startHerald(t: Test, o: HeraldOptions): Promise<HeraldNode> {
  const proc = new DaemonProcess(`cp-${o.node.name}`);
  const adminPort = await freePort('127.0.0.1');
  const config = {
    bgp: { localAs: HERALD_AS },
    peers: [{ name: 'bird', address: o.bird.ip, port: o.bird.port, peerAs: BIRD_AS, localAddress: o.node.ip, holdTime: 30, connectRetryTime: 1, ebgpMultihop: 2, families: ['ipv4-unicast'] }],
    source: { kubernetes: { kubeconfig: o.kubeconfig } },
    kubeProxy: { enabled: false },
    flapControl: { holdDown: 0, penalty: 0 },
    admin: { address: '127.0.0.1', port: adminPort },
    stateDir: join(proc.dir, 'state'),
    logLevel: 'info',
    ...o.extra,
  };
  const configPath = join(proc.dir, 'herald.yaml');
  writeFileSync(configPath, stringify(config));
  proc.spawn(process.execPath, [join(ROOT, 'bin', 'herald.js'), 'run', '--config', configPath, '--node-name', o.node.name, '--node-ip', o.node.ip, ...(o.args ?? [])], {
    env: { ...process.env, POD_NAMESPACE: o.namespace ?? 'herald-system', HERALD_ADMIN_TOKEN: ADMIN_TOKEN, ...o.env },
  });
  t.teardown(() => proc.stop(5000));
  return { proc, adminPort };
}

/** A running `herald controller` and the port of its probes and metrics listener. */
export interface HeraldController {
  proc: DaemonProcess;
  port: number;
}

/**
 * Spawns `herald controller` (bin/herald.js under this Node) with the Kubernetes source on `kubeconfig`, its probes
 * and metrics on a free port of 127.0.0.1, holder identity `identity`.
 */
export async function startController(t: Test, o: { kubeconfig: string; identity: string; namespace?: string; extra?: Record<string, unknown>; env?: Record<string, string> }): Promise<HeraldController> {
  const proc = new DaemonProcess(`cp-${o.identity}`);
  const port = await freePort('127.0.0.1');
  const config = { bgp: { localAs: HERALD_AS }, source: { kubernetes: { kubeconfig: o.kubeconfig } }, logLevel: 'info', ...o.extra };
  const configPath = join(proc.dir, 'herald.yaml');
  writeFileSync(configPath, stringify(config));
  proc.spawn(process.execPath, [join(ROOT, 'bin', 'herald.js'), 'controller', '--config', configPath, '--listen', `127.0.0.1:${port}`], {
    env: { ...process.env, POD_NAMESPACE: o.namespace ?? 'herald-system', POD_NAME: o.identity, ...o.env },
  });
  t.teardown(() => proc.stop(5000));
  return { proc, port };
}

/** The controller's `/readyz` (undefined while it does not answer). */
export async function controllerStatus(c: HeraldController): Promise<{ ready: boolean; notReady: string[]; forbidden?: string[] } | undefined> {
  try {
    const res = await fetch(`http://127.0.0.1:${c.port}/readyz`, { signal: AbortSignal.timeout(3000) });
    return (await res.json()) as { ready: boolean; notReady: string[]; forbidden?: string[] };
  } catch {
    return undefined;
  }
}

/** The admin token every Herald of this tier is started with. */
export const ADMIN_TOKEN = 'control-plane-tier';

/**
 * `herald drain` then `herald undrain` through the admin API: the Node annotation herald.io/drain is patched in and
 * out (RBAC `patch nodes`). Resolves with both HTTP statuses.
 */
export async function drainAndUndrain(h: HeraldNode): Promise<[number, number]> {
  const post = async (path: string): Promise<number> => (await fetch(`http://127.0.0.1:${h.adminPort}${path}`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, signal: AbortSignal.timeout(10_000) })).status;
  return [await post('/api/v1/drain'), await post('/api/v1/undrain')];
}

/** Herald's `/api/v1/status` (undefined while it does not answer). */
export async function heraldStatus(h: HeraldNode): Promise<{ ready: boolean; notReady: string[]; forbidden?: string[] } | undefined> {
  return (await adminJson(h.adminPort, '/api/v1/status')) as { ready: boolean; notReady: string[]; forbidden?: string[] } | undefined;
}

/** Herald's log lines (pino JSON on stdout), parsed; lines that are not JSON are skipped. */
export function heraldLog(h: HeraldNode): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const line of h.proc.stdout.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      out.push(JSON.parse(line) as Record<string, unknown>);
    } catch {
      // a line cut at the capture limit
    }
  }
  return out;
}

/** What {@link startNodes} returns. */
export interface HeraldCluster {
  bird: Bird;
  heralds: HeraldNode[];
  /** The BIRD protocols holding a path for the prefix, sorted. */
  paths(): Promise<string[]>;
  /** Waits until exactly `want` hold a path (throws with the Heralds' logs), then asserts it. */
  waitPaths(want: string[], what: string, timeoutMs?: number): Promise<void>;
}

/**
 * One `herald run` per node (the shipped ServiceAccount's token) peering with one BIRD at `${block}100`, and helpers
 * that read BIRD's paths for `prefix`.
 */
export async function startNodes(t: Test, cp: ControlPlane, block: string, nodes: NodeSpec[], prefix: string): Promise<HeraldCluster> {
  const birdIp = `${block}100`;
  const birdPort = await freePort(birdIp);
  const bird = await startBird({ ip: birdIp, port: birdPort, birdAs: BIRD_AS, heraldAs: HERALD_AS, nodes });
  t.teardown(() => bird.stop());
  const heralds: HeraldNode[] = [];
  // The operator allows the tier's VIP (admission: a LoadBalancer address only inside pools or allowedPrefixes).
  for (const n of nodes) heralds.push(await startHerald(t, { node: n, kubeconfig: await nodeKubeconfig(cp, n.name), bird: { ip: birdIp, port: birdPort }, args: ['--separate-controller'], extra: { allowedPrefixes: [prefix] } }));
  const names = nodes.map((n) => n.name);
  const paths = () => pathsFor(bird, prefix);
  const waitPaths = async (want: string[], what: string, timeoutMs = 90_000) => {
    await withLogs(() => bird.waitFor(async () => (await paths()).join() === want.join() || undefined, `${what}: paths ${want.join(',') || '(none)'}`, timeoutMs), heralds, names);
    t.same(await paths(), want, what);
  };
  return { bird, heralds, paths, waitPaths };
}
