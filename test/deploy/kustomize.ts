/**
 * Renders a kustomization the way `kubectl kustomize` does, for the only features deploy/kubernetes uses:
 * `resources` (YAML files and directories with their own kustomization.yaml), `namespace` (set on every
 * namespaced object) and `images` (the image of every container and init container of a pod template whose name,
 * the part before `:` or `@`, is an entry's `name`: `newName` replaces the name, then `digest` gives `NAME@DIGEST`,
 * else `newTag` gives `NAME:TAG`; kustomize's api/filters/imagetag). Any other field is an error naming the fix, so
 * the manifests cannot silently outgrow it.
 */
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import type { KubeDoc } from './k8s-schema.ts';

const SUPPORTED = new Set(['apiVersion', 'kind', 'namespace', 'resources', 'images']);

/** One entry of a kustomization's `images`. */
export interface ImageOverride {
  readonly name: string;
  readonly newName?: string;
  readonly newTag?: string;
  readonly digest?: string;
}

/** `image` with the first matching override applied (kustomize's rules, see the module comment). */
export function overrideImage(image: string, overrides: readonly ImageOverride[]): string {
  const at = image.indexOf('@');
  const colon = image.lastIndexOf(':');
  const end = at >= 0 ? at : colon > image.lastIndexOf('/') ? colon : image.length;
  const name = image.slice(0, end);
  const o = overrides.find((x) => x.name === name);
  if (o === undefined) return image;
  const newName = o.newName ?? name;
  if (o.digest !== undefined) return `${newName}@${o.digest}`;
  if (o.newTag !== undefined) return `${newName}:${o.newTag}`;
  return `${newName}${image.slice(end)}`;
}

type PodSpecLike = { containers?: { image?: string }[]; initContainers?: { image?: string }[] };

/** Applies `images` to the containers of a pod template (workloads) or a Pod. */
function applyImages(doc: KubeDoc, overrides: readonly ImageOverride[]): void {
  const d = doc as { kind?: string; spec?: { template?: { spec?: PodSpecLike }; jobTemplate?: { spec?: { template?: { spec?: PodSpecLike } } } } & PodSpecLike };
  const pod = d.kind === 'Pod' ? d.spec : d.kind === 'CronJob' ? d.spec?.jobTemplate?.spec?.template?.spec : d.spec?.template?.spec;
  for (const c of [...(pod?.containers ?? []), ...(pod?.initContainers ?? [])]) if (c.image !== undefined) c.image = overrideImage(c.image, overrides);
}
/** Kinds without a namespace: kustomize's namespace leaves them as written. */
export const CLUSTER_SCOPED = new Set(['Namespace', 'ClusterRole', 'ClusterRoleBinding', 'CustomResourceDefinition', 'ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding', 'FlowSchema', 'PriorityLevelConfiguration']);

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
  const kust = parse(readFileSync(join(dir, 'kustomization.yaml'), 'utf8')) as { namespace?: string; resources?: string[]; images?: ImageOverride[] };
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
      if (kust.images !== undefined) applyImages(doc, kust.images);
      out.push(doc);
    }
  }
  return out;
}
