/**
 * Validates every Kubernetes manifest in deploy/kubernetes (rendered as `kubectl kustomize` would) against the API
 * schemas shipped offline (test/deploy/k8s-schema.ts), and checks that the RBAC rules cover exactly the API calls
 * Herald's code makes.
 */
import t from 'tap';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import type * as k8s from '@kubernetes/client-node';
import { grantedPermissions, validateObject, validateType, type KubeDoc } from './k8s-schema.ts';
import { renderKustomization } from './kustomize.ts';
import { CONFIG_KINDS, heraldCollectionPath, type HeraldKind } from '../../src/k8s/herald-kinds.ts';

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
    for (const doc of docs) if (doc.kind !== 'Namespace' && doc.kind !== 'CustomResourceDefinition' && !doc.kind?.startsWith('Cluster')) t.equal(doc.metadata?.namespace, 'herald-system', `${doc.kind} ${doc.metadata?.name} in herald-system`);
  }
  const kinds = renderKustomization(deployDir).map((d) => d.kind);
  t.equal(kinds.filter((k) => k === 'CustomResourceDefinition').length, 5, 'the five CRDs of herald.io');
  t.same(kinds.filter((k) => k !== 'CustomResourceDefinition').sort(), ['ClusterRole', 'ClusterRoleBinding', 'ConfigMap', 'DaemonSet', 'Namespace', 'Role', 'Role', 'RoleBinding', 'RoleBinding', 'ServiceAccount'], 'Namespace, ServiceAccount, the RBAC objects, ConfigMap, DaemonSet (no Secret: the user creates them)');
});

t.test('the kustomization lists every manifest file and only existing ones; no Secret with a placeholder ships', async (t) => {
  const kust = parse(readFileSync(join(deployDir, 'kustomization.yaml'), 'utf8')) as { resources: string[] };
  const files = readdirSync(deployDir).filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml').sort();
  t.same([...kust.resources].filter((r) => !r.endsWith('/') && r !== 'crds').sort(), files);
  t.ok(kust.resources.includes('crds'), 'the CRDs (deploy/kubernetes/crds, generated) are part of it');
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
  t.same(c?.env?.map((e) => e.valueFrom?.fieldRef?.fieldPath ?? e.valueFrom?.resourceFieldRef?.resource), ['spec.nodeName', 'status.hostIPs', 'metadata.namespace', 'limits.memory']);
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

/** HTTP method of a request → the RBAC verb it needs (a path naming one object: get, not list). */
const VERBS: Record<string, string> = { GET: 'get', POST: 'create', PUT: 'update', PATCH: 'patch', DELETE: 'delete' };

/**
 * The (apiGroup/resource/verb) a Kubernetes API path needs: /api/v1/... is the core group, /apis/GROUP/VERSION/...
 * a named one; `namespaces/NS/` is skipped; a name after the plural and a subresource after the name
 * (services/NAME/status → services/status). Template parts (`${...}`) stand for names.
 */
function permissionOf(path: string, verb: string): string {
  const parts = path.split('?')[0]!.split('/').filter(Boolean);
  const group = parts[0] === 'api' ? '' : (parts[1] ?? '');
  let rest = parts.slice(parts[0] === 'api' ? 2 : 3);
  if (rest[0] === 'namespaces' && rest.length > 2) rest = rest.slice(2);
  const resource = rest.length >= 3 ? `${rest[0]}/${rest[2]}` : (rest[0] ?? '');
  return `${group}/${resource}/${verb}`;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sourceFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
}

t.test('RBAC covers exactly the API calls the code makes', async (t) => {
  // The code reaches the apiserver through src/k8s/client.ts only: informers (`path: '/api...'`, list and watch) and
  // `request('VERB', path)`. A path built by a method of the same file (`${this.#collection()}`) is resolved from it;
  // Herald's own kinds go by `heraldCollectionPath(KIND, namespace)` (src/k8s/herald-kinds.ts): a quoted kind is that
  // kind, a variable one (the source's informers over CONFIG_KINDS) every configuration kind.
  // The CLI (src/cli/) calls the apiserver with the user's kubeconfig, never Herald's ServiceAccount.
  const herald = (kind: string): string[] => (kind.startsWith("'") ? [heraldCollectionPath(kind.slice(1, -1) as HeraldKind, 'NS')] : CONFIG_KINDS.map((k) => heraldCollectionPath(k, 'NS')));
  const heraldPaths = (path: string): string[] => {
    const m = /\$\{heraldCollectionPath\(('\w+'|\w+), [^)]*\)\}/.exec(path);
    return m ? herald(m[1] as string).map((c) => path.replace(m[0], c)) : [path];
  };
  const needed = new Set<string>();
  const calls: string[] = [];
  const files = sourceFiles(join(root, 'src')).filter((f) => !f.includes(`${join('src', 'cli')}/`));
  for (const f of files) {
    const text = readFileSync(f, 'utf8');
    for (const m of text.matchAll(/\bpath: (?:'(\/apis?\/[^']+)'|`(\/apis?\/[^`]+)`|heraldCollectionPath\(('\w+'|\w+), [^)]*\))/g)) {
      for (const path of m[1] !== undefined ? [m[1]] : m[2] !== undefined ? [m[2]] : herald(m[3] as string)) {
        calls.push(`list/watch ${path}`);
        for (const v of ['list', 'watch']) needed.add(permissionOf(path, v));
      }
    }
    for (const m of text.matchAll(/\.request\('([A-Z]+)', (?:`([^`]+)`|(this\.#\w+\(\))|(heraldCollectionPath\([^)]*\)))/g)) {
      const raw = (m[2] ?? `\${${(m[3] ?? m[4]) as string}}`).replace(/\$\{this\.#(\w+)\(\)\}/g, (_, name: string) => new RegExp(`#${name}\\(\\): string \\{\\s*return \`([^\`]+)\``).exec(text)?.[1] ?? `?${name}`);
      for (const path of heraldPaths(raw)) {
        calls.push(`${m[1]} ${path}`);
        const verb = VERBS[m[1] as string];
        t.ok(verb !== undefined && path.startsWith('/api'), `${f.slice(root.length)}: ${m[1]} ${path} is an API call Herald's RBAC can name`);
        needed.add(permissionOf(path, verb ?? '?'));
      }
    }
  }
  t.ok(calls.length >= 8, `the code calls: ${calls.join('; ')}`);
  for (const call of ['list/watch /apis/herald.io/v1alpha1/namespaces/NS/bgppeers', 'POST /apis/herald.io/v1alpha1/namespaces/NS/bgpnodestatuses', 'GET /api/v1/namespaces/${encodeURIComponent(namespace)}/secrets/${encodeURIComponent(name)}']) {
    t.ok(calls.includes(call), `the scan finds ${call}`);
  }
  const granted = grantedPermissions(renderKustomization(deployDir));
  t.same([...needed].filter((n) => !granted.has(n)).sort(), [], 'nothing the code needs is missing (add it to deploy/kubernetes/rbac.yaml)');
  t.same([...granted].filter((g) => !needed.has(g)).sort(), [], 'nothing is granted that the code does not use');
});
