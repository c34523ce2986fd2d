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
import { CLUSTER_SCOPED, renderKustomization } from './kustomize.ts';
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
    for (const doc of docs) if (!CLUSTER_SCOPED.has(doc.kind ?? '')) t.equal(doc.metadata?.namespace, 'herald-system', `${doc.kind} ${doc.metadata?.name} in herald-system`);
  }
  const kinds = renderKustomization(deployDir).map((d) => d.kind);
  t.equal(kinds.filter((k) => k === 'CustomResourceDefinition').length, 5, 'the five CRDs of herald.io');
  t.same(
    kinds.filter((k) => k !== 'CustomResourceDefinition').sort(),
    ['ClusterRole', 'ClusterRole', 'ClusterRoleBinding', 'ClusterRoleBinding', 'ConfigMap', 'DaemonSet', 'Deployment', 'FlowSchema', 'FlowSchema', 'Namespace', 'PriorityLevelConfiguration', 'Role', 'Role', 'RoleBinding', 'RoleBinding', 'ServiceAccount', 'ServiceAccount', 'ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding', 'ValidatingAdmissionPolicyBinding'],
    'Namespace, the two ServiceAccounts with their RBAC, the admission policies, their priority level, ConfigMap, DaemonSet, the controller Deployment (no Secret: the user creates them)',
  );
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

t.test('DaemonSet: hostNetwork, downward API, probes on the admin port, no preStop drain, node-critical priority, grace > shutdown wait, the password Secret required, the admin token optional', async (t) => {
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
  t.same(secrets.map((v) => [v.secret?.secretName, v.secret?.optional]), [['herald-bgp-password', false], ['herald-admin-token', true]], 'the password Secret is required (a missing one is named in the pod events); the admin token is optional (admin mutations are then refused)');
  t.same(c?.args?.slice(-1), ['--separate-controller'], 'the cluster-wide writers are herald controller\'s');
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

t.test('herald controller: a Deployment of two with its own ServiceAccount, the same image and configuration, probes on its port, pods apart from the DaemonSet', async (t) => {
  const docs = renderKustomization(deployDir);
  const ds = find<k8s.V1DaemonSet>(docs, 'DaemonSet');
  const dep = find<k8s.V1Deployment>(docs, 'Deployment');
  const pod = dep.spec?.template.spec;
  const c = pod?.containers[0];
  t.equal(dep.spec?.replicas, 2);
  t.equal(pod?.serviceAccountName, 'herald-controller');
  t.not(pod?.serviceAccountName, ds.spec?.template.spec?.serviceAccountName, 'not the DaemonSet\'s account');
  t.equal(c?.image, ds.spec?.template.spec?.containers[0]?.image, 'the same image');
  t.same(c?.args, ['controller', '--config', '/etc/herald/config/herald.yaml', '--listen', '0.0.0.0:9180']);
  t.same(pod?.volumes?.find((v) => v.name === 'config')?.configMap?.name, ds.spec?.template.spec?.volumes?.find((v) => v.name === 'config')?.configMap?.name, 'the same configuration');
  t.same([c?.readinessProbe?.httpGet?.path, c?.readinessProbe?.httpGet?.port, c?.livenessProbe?.httpGet?.path], ['/readyz', 'metrics', '/healthz']);
  t.same(c?.ports?.map((p) => [p.name, p.containerPort]), [['metrics', 9180]]);
  t.same(c?.env?.map((e) => e.name), ['POD_NAME', 'POD_NAMESPACE', 'HERALD_MEMORY_LIMIT_MIB'], 'POD_NAME: the holder identity of its Leases');
  const dsSelector = ds.spec?.selector.matchLabels ?? {};
  const labels = dep.spec?.template.metadata?.labels ?? {};
  t.notOk(Object.entries(dsSelector).every(([k, v]) => labels[k] === v), 'the DaemonSet\'s selector does not match the controller\'s pods');
  t.equal(pod?.hostNetwork, undefined, 'on the pod network');
});

/** Every permission the Roles and ClusterRoles bound to ServiceAccount `sa` grant. */
function grantsOf(docs: ReturnType<typeof renderKustomization>, sa: string): Set<string> {
  const bound = new Set<string>();
  for (const b of docs.filter((d) => d.kind === 'RoleBinding' || d.kind === 'ClusterRoleBinding') as unknown as k8s.V1RoleBinding[]) {
    if ((b.subjects ?? []).some((s) => s.kind === 'ServiceAccount' && s.name === sa)) bound.add(`${b.roleRef.kind}/${b.roleRef.name}`);
  }
  return grantedPermissions(docs.filter((d) => bound.has(`${d.kind}/${d.metadata?.name}`)));
}

t.test('the two accounts: the DaemonSet\'s reads and writes its own node\'s two objects only; the cluster-wide writes are the controller\'s', async (t) => {
  const docs = renderKustomization(deployDir);
  const node = grantsOf(docs, 'herald');
  const controller = grantsOf(docs, 'herald-controller');
  const writes = (g: Set<string>) => [...g].filter((p) => !/\/(list|watch|get)$/.test(p)).sort();
  t.same(writes(node), ['/nodes/patch', 'herald.io/bgpnodestatuses/create', 'herald.io/bgpnodestatuses/status/patch'], 'the DaemonSet writes its Node (the drain annotation) and its BGPNodeStatus, nothing else');
  for (const p of ['coordination.k8s.io/leases/get', '/services/status/patch', '/events/create', '/events/patch', 'herald.io/bgpnodestatuses/list']) {
    t.notOk(node.has(p), `the DaemonSet has no ${p}`);
    t.ok(controller.has(p), `the controller has ${p}`);
  }
  t.notOk(controller.has('/nodes/patch') || controller.has('/secrets/get'), 'the controller neither patches Nodes nor reads Secrets');
});

t.test('the admission policies: the DaemonSet\'s account, its token\'s node name, enforced (Deny)', async (t) => {
  const docs = renderKustomization(deployDir);
  const policies = docs.filter((d) => d.kind === 'ValidatingAdmissionPolicy') as unknown as k8s.V1ValidatingAdmissionPolicy[];
  const bindings = docs.filter((d) => d.kind === 'ValidatingAdmissionPolicyBinding') as unknown as k8s.V1ValidatingAdmissionPolicyBinding[];
  t.same(policies.map((p) => p.spec?.matchConstraints?.resourceRules?.flatMap((r) => r.resources)), [['nodes'], ['bgpnodestatuses', 'bgpnodestatuses/status']]);
  for (const p of policies) {
    t.same(p.spec?.matchConditions?.map((m) => m.expression), ["request.userInfo.username == 'system:serviceaccount:herald-system:herald'"], `${p.metadata?.name}: the DaemonSet's account`);
    t.match(JSON.stringify(p.spec?.variables), /authentication\.kubernetes\.io\/node-name/, `${p.metadata?.name}: the node name from the token`);
    t.equal(p.spec?.failurePolicy, 'Fail');
    t.same(bindings.filter((b) => b.spec?.policyName === p.metadata?.name).map((b) => b.spec?.validationActions), [['Deny']], `${p.metadata?.name} is bound, Deny`);
  }
});

t.test('API Priority and Fairness: one priority level for Herald, a flow per identity, matched before the default service-accounts schema', async (t) => {
  const docs = renderKustomization(deployDir);
  const plc = find<k8s.V1PriorityLevelConfiguration>(docs, 'PriorityLevelConfiguration');
  t.equal(plc.spec?.type, 'Limited');
  t.equal(plc.spec?.limited?.limitResponse?.type, 'Queue', 'bursts queue rather than fail at once');
  const schemas = docs.filter((d) => d.kind === 'FlowSchema') as unknown as k8s.V1FlowSchema[];
  const accounts = (docs.filter((d) => d.kind === 'ServiceAccount') as unknown as k8s.V1ServiceAccount[]).map((a) => a.metadata?.name).sort();
  t.same(schemas.map((f) => f.spec?.rules?.[0]?.subjects?.[0]?.serviceAccount?.name).sort(), accounts, 'one schema per ServiceAccount shipped');
  for (const f of schemas) {
    t.equal(f.spec?.priorityLevelConfiguration.name, plc.metadata?.name, `${f.metadata?.name}: Herald's level`);
    t.equal(f.spec?.distinguisherMethod?.type, 'ByUser', `${f.metadata?.name}: its identity is its flow`);
    t.ok((f.spec?.matchingPrecedence ?? 10_000) < 9000 && (f.spec?.matchingPrecedence ?? 0) > 900, `${f.metadata?.name}: after the system's schemas, before service-accounts (9000)`);
  }
});
