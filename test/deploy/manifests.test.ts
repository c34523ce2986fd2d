/**
 * Validates every Kubernetes manifest in deploy/kubernetes (rendered as `kubectl kustomize` would) against the API
 * schemas shipped offline (test/deploy/k8s-schema.ts), and checks that the RBAC rules cover exactly the API calls
 * Herald's code makes.
 */
import t from 'tap';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import * as k8s from '@kubernetes/client-node';
import { grantedPermissions, validateObject, validateType, type KubeDoc } from './k8s-schema.ts';
import { renderKustomization } from './kustomize.ts';

const root = new URL('../../', import.meta.url).pathname;
const deployDir = join(root, 'deploy/kubernetes');

function find<T>(docs: KubeDoc[], kind: string): T {
  const d = docs.find((x) => x.kind === kind);
  if (!d) throw new Error(`no ${kind} in deploy/kubernetes`);
  return d as unknown as T;
}

t.test('validator catches unknown fields, wrong types and unknown kinds (so a pass means something)', async (t) => {
  const bad = { apiVersion: 'apps/v1', kind: 'DaemonSet', metadata: { name: 'x' }, spec: { template: { spec: { hostNetwrk: true, containers: [{ name: 'c', ports: [{ containerPort: 'x' }] }] } } } };
  t.same(validateType(bad, 'V1DaemonSet', 'x').sort(), ['x.spec.template.spec.containers[0].ports[0].containerPort: expected a number', 'x.spec.template.spec.hostNetwrk: unknown field for V1PodSpec']);
  t.match(validateObject({ apiVersion: 'v1', kind: 'DaemonSet', metadata: { name: 'x' } }, 'f'), [/apiVersion v1 is not apps\/v1/]);
  t.match(validateObject({ apiVersion: 'v1', kind: 'Pdo', metadata: { name: 'x' } }, 'f'), [/no schema for kind Pdo/]);
  const pm = { apiVersion: 'monitoring.coreos.com/v1', kind: 'PodMonitor', metadata: { name: 'x' }, spec: { selector: {}, podMetricsEndpoints: [{ port: 'metrics', interval: '30 seconds' }] } };
  t.match(validateObject(pm, 'f'), [/interval must match pattern/]);
});

t.test('every object kustomize renders from deploy/kubernetes and its monitoring/ matches the Kubernetes schema', async (t) => {
  for (const dir of ['deploy/kubernetes', 'deploy/kubernetes/monitoring']) {
    const docs = renderKustomization(join(root, dir));
    t.ok(docs.length >= 2, `${dir}: ${docs.length} objects`);
    for (const doc of docs) t.same(validateObject(doc, dir), [], `${dir}: ${doc.kind} ${doc.metadata?.name} is valid`);
    for (const doc of docs) if (doc.kind !== 'Namespace' && !doc.kind?.startsWith('Cluster')) t.equal(doc.metadata?.namespace, 'herald-system', `${doc.kind} ${doc.metadata?.name} in herald-system`);
  }
  t.equal(renderKustomization(deployDir).length, 8, 'Namespace, ServiceAccount, 4 RBAC objects, ConfigMap, DaemonSet: 8 objects (no Secret: the user creates them)');
});

t.test('the kustomization lists every manifest file and only existing ones; no Secret with a placeholder ships', async (t) => {
  const kust = parse(readFileSync(join(deployDir, 'kustomization.yaml'), 'utf8')) as { resources: string[] };
  const files = readdirSync(deployDir).filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml').sort();
  t.same([...kust.resources].sort(), files);
  t.same(renderKustomization(deployDir).filter((d) => d.kind === 'Secret'), [], 'Secrets are created by the user (README.md, "In a cluster")');
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  for (const name of ['herald-bgp-password', 'herald-admin-token']) t.match(readme, new RegExp(`kubectl -n herald-system create secret generic ${name} `), `README says how to create ${name}`);
});

t.test('RoleBinding subjects are in the kustomization namespace (so kustomize leaves them as written)', async (t) => {
  for (const d of renderKustomization(deployDir).filter((x) => x.kind === 'RoleBinding' || x.kind === 'ClusterRoleBinding')) {
    for (const s of (d as unknown as k8s.V1RoleBinding).subjects ?? []) t.equal(s.namespace, 'herald-system', `${d.kind} ${d.metadata?.name}: ${s.name}`);
  }
});

t.test('DaemonSet: hostNetwork, downward API, probes on the admin port, no preStop drain, node-critical priority, grace > shutdown wait, required Secrets', async (t) => {
  const docs = renderKustomization(deployDir);
  const ds = find<k8s.V1DaemonSet>(docs, 'DaemonSet');
  const pod = ds.spec?.template.spec;
  const c = pod?.containers[0];
  t.equal(pod?.hostNetwork, true);
  t.same(ds.spec?.selector.matchLabels, ds.spec?.template.metadata?.labels);
  t.same(c?.env?.map((e) => e.valueFrom?.fieldRef?.fieldPath), ['spec.nodeName', 'status.hostIPs', 'metadata.namespace']);
  t.equal(c?.readinessProbe?.httpGet?.path, '/readyz');
  t.equal(c?.livenessProbe?.httpGet?.path, '/healthz');
  t.equal(c?.lifecycle?.preStop, undefined, 'no preStop drain: a rolling update is a restart (docs/upgrades.md)');
  t.equal(pod?.priorityClassName, 'system-node-critical', 'stopped after the workloads it announces on a node shutdown');
  t.equal(ds.spec?.updateStrategy?.rollingUpdate?.maxUnavailable, 1);
  t.same(c?.ports?.map((p) => [p.name, p.containerPort]), [['metrics', 9179]], 'the port Prometheus scrapes is named metrics');
  const cm = find<{ data: Record<string, string> }>(docs, 'ConfigMap');
  const wait = Number(/waitTime:\s*(\d+)/.exec(cm.data['herald.yaml'] ?? '')?.[1]);
  t.ok((pod?.terminationGracePeriodSeconds ?? 30) > wait + 10, 'terminationGracePeriodSeconds covers a departure: the graceful-shutdown wait, the withdrawal, the Cease');
  const secrets = (pod?.volumes ?? []).filter((v) => v.secret);
  t.same(secrets.map((v) => [v.secret?.secretName, v.secret?.optional]), [['herald-bgp-password', false], ['herald-admin-token', false]], 'both Secrets are required: a missing one is named in the pod events');
  const ns = find<k8s.V1Namespace>(docs, 'Namespace');
  t.equal(ns.metadata?.labels?.['pod-security.kubernetes.io/enforce'], 'privileged', 'hostNetwork and hostPath need the privileged Pod Security level');
});

/** Every Kubernetes API method Herald may call → the RBAC (apiGroup, resource, verbs) it needs. */
const API_PERMISSIONS: Record<string, { group: string; resource: string; verbs: string[] }> = {
  listServiceForAllNamespaces: { group: '', resource: 'services', verbs: ['list', 'watch'] },
  listNode: { group: '', resource: 'nodes', verbs: ['list', 'watch'] },
  readNode: { group: '', resource: 'nodes', verbs: ['get'] },
  patchNode: { group: '', resource: 'nodes', verbs: ['patch'] },
  readNamespacedService: { group: '', resource: 'services', verbs: ['get'] },
  listEndpointSliceForAllNamespaces: { group: 'discovery.k8s.io', resource: 'endpointslices', verbs: ['list', 'watch'] },
  listServiceCIDR: { group: 'networking.k8s.io', resource: 'servicecidrs', verbs: ['list', 'watch'] },
  patchNamespacedServiceStatus: { group: '', resource: 'services/status', verbs: ['patch'] },
  createNamespacedEvent: { group: '', resource: 'events', verbs: ['create'] },
  patchNamespacedEvent: { group: '', resource: 'events', verbs: ['patch'] },
  readNamespacedLease: { group: 'coordination.k8s.io', resource: 'leases', verbs: ['get'] },
  createNamespacedLease: { group: 'coordination.k8s.io', resource: 'leases', verbs: ['create'] },
  replaceNamespacedLease: { group: 'coordination.k8s.io', resource: 'leases', verbs: ['update'] },
};

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sourceFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
}

t.test('RBAC covers exactly the API calls the code makes', async (t) => {
  const apiMethods = new Set<string>();
  for (const name of Object.keys(k8s)) {
    const cls = (k8s as unknown as Record<string, { prototype?: object }>)[name];
    if (/Api$/.test(name) && cls?.prototype) for (const m of Object.getOwnPropertyNames(cls.prototype)) apiMethods.add(m);
  }
  const used = new Set<string>();
  const files = sourceFiles(join(root, 'src'));
  t.ok(files.length > 0);
  for (const f of files) {
    for (const m of readFileSync(f, 'utf8').matchAll(/\.(\w+)\(/g)) if (apiMethods.has(m[1] as string) && /^(list|read|create|replace|patch|delete|connect)[A-Z]/.test(m[1] as string)) used.add(m[1] as string);
  }
  t.ok(used.size > 0, `the code calls ${[...used].sort().join(', ')}`);
  const unknown = [...used].filter((m) => !API_PERMISSIONS[m]);
  t.same(unknown, [], 'every API method the code calls has a known permission (add it here and to deploy/kubernetes/rbac.yaml)');
  const needed = new Set<string>();
  for (const m of used) for (const v of API_PERMISSIONS[m]?.verbs ?? []) needed.add(`${API_PERMISSIONS[m]?.group}/${API_PERMISSIONS[m]?.resource}/${v}`);
  const granted = grantedPermissions(renderKustomization(deployDir));
  t.same([...needed].filter((n) => !granted.has(n)).sort(), [], 'nothing the code needs is missing');
  t.same([...granted].filter((g) => !needed.has(g)).sort(), [], 'nothing is granted that the code does not use');
});
