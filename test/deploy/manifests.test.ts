/**
 * Validates every Kubernetes manifest in deploy/kubernetes against the API schemas shipped offline in
 * @kubernetes/client-node (each model's attribute type map), and checks that the RBAC rules cover exactly the API
 * calls Herald's code makes.
 */
import t from 'tap';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import * as k8s from '@kubernetes/client-node';

const root = new URL('../../', import.meta.url).pathname;
const deployDir = join(root, 'deploy/kubernetes');

type AttrMap = { name: string; baseName: string; type: string }[];
type Model = { getAttributeTypeMap(): AttrMap };

const KIND_MODEL: Record<string, string> = {
  Namespace: 'V1Namespace',
  ServiceAccount: 'V1ServiceAccount',
  ClusterRole: 'V1ClusterRole',
  ClusterRoleBinding: 'V1ClusterRoleBinding',
  Role: 'V1Role',
  RoleBinding: 'V1RoleBinding',
  ConfigMap: 'V1ConfigMap',
  Secret: 'V1Secret',
  DaemonSet: 'V1DaemonSet',
};

/** Returns every schema violation of `value` against the client-node type named `type`, with its path. */
function validate(value: unknown, type: string, path: string): string[] {
  if (value === null || value === undefined) return [];
  const arr = /^Array<(.+)>$/.exec(type);
  if (arr) return Array.isArray(value) ? value.flatMap((v, i) => validate(v, arr[1] as string, `${path}[${i}]`)) : [`${path}: expected a list`];
  const map = /^\{ \[key: string\]: (.+); \}$/.exec(type);
  if (map) {
    if (typeof value !== 'object' || Array.isArray(value)) return [`${path}: expected a map`];
    return Object.entries(value as object).flatMap(([k, v]) => validate(v, map[1] as string, `${path}.${k}`));
  }
  switch (type) {
    case 'string':
    case 'Date':
      return typeof value === 'string' ? [] : [`${path}: expected a string`];
    case 'number':
      return typeof value === 'number' ? [] : [`${path}: expected a number`];
    case 'boolean':
      return typeof value === 'boolean' ? [] : [`${path}: expected a boolean`];
    case 'IntOrString':
      return typeof value === 'string' || typeof value === 'number' ? [] : [`${path}: expected an int or a string`];
    case 'any':
      return [];
  }
  const model = (k8s as unknown as Record<string, Model | undefined>)[type];
  if (!model?.getAttributeTypeMap) return [`${path}: no schema for type ${type}`];
  if (typeof value !== 'object' || Array.isArray(value)) return [`${path}: expected an object (${type})`];
  const attrs = new Map(model.getAttributeTypeMap().map((a) => [a.baseName, a.type]));
  const errors: string[] = [];
  for (const [k, v] of Object.entries(value as object)) {
    const at = attrs.get(k);
    if (!at) errors.push(`${path}.${k}: unknown field for ${type}`);
    else errors.push(...validate(v, at, `${path}.${k}`));
  }
  return errors;
}

function loadManifests(): { file: string; doc: Record<string, unknown> }[] {
  const out: { file: string; doc: Record<string, unknown> }[] = [];
  for (const file of readdirSync(deployDir).filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml')) {
    for (const d of parseAllDocuments(readFileSync(join(deployDir, file), 'utf8'))) {
      if (d.errors.length) throw new Error(`${file}: ${d.errors[0]?.message}`);
      const doc = d.toJS() as Record<string, unknown> | null;
      if (doc) out.push({ file, doc });
    }
  }
  return out;
}

t.test('validator catches unknown fields and wrong types (so a pass means something)', async (t) => {
  const bad = { apiVersion: 'apps/v1', kind: 'DaemonSet', metadata: { name: 'x' }, spec: { template: { spec: { hostNetwrk: true, containers: [{ name: 'c', ports: [{ containerPort: 'x' }] }] } } } };
  t.same(validate(bad, 'V1DaemonSet', 'x').sort(), ['x.spec.template.spec.containers[0].ports[0].containerPort: expected a number', 'x.spec.template.spec.hostNetwrk: unknown field for V1PodSpec']);
});

t.test('every manifest matches the Kubernetes schema', async (t) => {
  const docs = loadManifests();
  t.ok(docs.length >= 9, `found ${docs.length} manifests`);
  for (const { file, doc } of docs) {
    const model = KIND_MODEL[doc.kind as string];
    t.ok(model, `${file}: kind ${doc.kind} is known`);
    if (model) t.same(validate(doc, model, `${file}:${doc.kind}`), [], `${file}: ${doc.kind} ${(doc.metadata as { name?: string }).name} is valid`);
  }
});

t.test('kustomization lists every manifest file and only existing ones', async (t) => {
  const kust = parseAllDocuments(readFileSync(join(deployDir, 'kustomization.yaml'), 'utf8'))[0]?.toJS() as { resources: string[] };
  const files = readdirSync(deployDir).filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml').sort();
  t.same([...kust.resources].sort(), files);
});

t.test('DaemonSet: hostNetwork, downward API, probes on the admin port, drain on preStop, grace > shutdown wait', async (t) => {
  const ds = loadManifests().find((d) => d.doc.kind === 'DaemonSet')?.doc as unknown as k8s.V1DaemonSet;
  const pod = ds.spec?.template.spec;
  const c = pod?.containers[0];
  t.equal(pod?.hostNetwork, true);
  t.same(ds.spec?.selector.matchLabels, ds.spec?.template.metadata?.labels);
  t.same(c?.env?.map((e) => e.valueFrom?.fieldRef?.fieldPath), ['spec.nodeName', 'status.hostIP', 'metadata.namespace']);
  t.equal(c?.readinessProbe?.httpGet?.path, '/readyz');
  t.equal(c?.livenessProbe?.httpGet?.path, '/healthz');
  t.match(c?.lifecycle?.preStop?.exec?.command?.join(' '), /drain/);
  t.equal(ds.spec?.updateStrategy?.rollingUpdate?.maxUnavailable, 1);
  const cm = loadManifests().find((d) => d.doc.kind === 'ConfigMap')?.doc as { data: Record<string, string> };
  const wait = Number(/waitTime:\s*(\d+)/.exec(cm.data['herald.yaml'] ?? '')?.[1]);
  t.ok((pod?.terminationGracePeriodSeconds ?? 30) > wait + 10, 'terminationGracePeriodSeconds exceeds the graceful-shutdown wait');
});

/** Every Kubernetes API method Herald may call → the RBAC (apiGroup, resource, verbs) it needs. */
const API_PERMISSIONS: Record<string, { group: string; resource: string; verbs: string[] }> = {
  listServiceForAllNamespaces: { group: '', resource: 'services', verbs: ['list', 'watch'] },
  listNode: { group: '', resource: 'nodes', verbs: ['list', 'watch'] },
  readNode: { group: '', resource: 'nodes', verbs: ['get'] },
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
  const granted = new Set<string>();
  for (const { doc } of loadManifests()) {
    if (doc.kind !== 'ClusterRole' && doc.kind !== 'Role') continue;
    for (const r of (doc as unknown as k8s.V1ClusterRole).rules ?? []) {
      for (const g of r.apiGroups ?? []) for (const res of r.resources ?? []) for (const v of r.verbs) granted.add(`${g}/${res}/${v}`);
    }
  }
  t.same([...needed].filter((n) => !granted.has(n)).sort(), [], 'nothing the code needs is missing');
  t.same([...granted].filter((g) => !needed.has(g)).sort(), [], 'nothing is granted that the code does not use');
});
