/**
 * Renders a kustomization the way `kubectl kustomize` does, for the only features deploy/kubernetes uses:
 * `resources` (YAML files and directories with their own kustomization.yaml) and `namespace` (set on every
 * namespaced object). Any other field is an error naming the fix, so the manifests cannot silently outgrow it.
 */
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import type { KubeDoc } from './k8s-schema.ts';

const SUPPORTED = new Set(['apiVersion', 'kind', 'namespace', 'resources']);
const CLUSTER_SCOPED = new Set(['Namespace', 'ClusterRole', 'ClusterRoleBinding', 'CustomResourceDefinition']);

/** Parses every YAML document of a file (throws on a YAML error, with the file name); skips empty documents. */
export function loadYamlDocs(file: string): KubeDoc[] {
  const out: KubeDoc[] = [];
  for (const d of parseAllDocuments(readFileSync(file, 'utf8'))) {
    if (d.errors.length) throw new Error(`${file}: ${d.errors[0]?.message}`);
    const doc = d.toJS() as KubeDoc | null;
    if (doc) out.push(doc);
  }
  return out;
}

/** The objects `kubectl kustomize dir` prints, in resource order. */
export function renderKustomization(dir: string): KubeDoc[] {
  const kust = parse(readFileSync(join(dir, 'kustomization.yaml'), 'utf8')) as { namespace?: string; resources?: string[] };
  const unsupported = Object.keys(kust).filter((k) => !SUPPORTED.has(k));
  if (unsupported.length) {
    throw new Error(`${dir}/kustomization.yaml uses ${unsupported.join(', ')}: test/deploy/kustomize.ts renders only resources and namespace (extend it, or build kustomize from its Go module as scripts/helm.sh builds helm)`);
  }
  const out: KubeDoc[] = [];
  for (const r of kust.resources ?? []) {
    const path = join(dir, r);
    const docs = statSync(path).isDirectory() ? renderKustomization(path) : loadYamlDocs(path);
    for (const doc of docs) {
      if (kust.namespace !== undefined) {
        if (doc.kind === 'Namespace' && doc.metadata?.name !== kust.namespace) {
          throw new Error(`${path}: Namespace ${doc.metadata?.name} differs from the kustomization's namespace ${kust.namespace} (kustomize would rename it)`);
        }
        if (!CLUSTER_SCOPED.has(doc.kind ?? '')) doc.metadata = { ...doc.metadata, namespace: kust.namespace };
      }
      out.push(doc);
    }
  }
  return out;
}
