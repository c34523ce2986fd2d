/**
 * Validation of Kubernetes objects against the API schemas shipped offline: the built-in kinds against
 * @kubernetes/client-node's models (each model's attribute type map: unknown fields and wrong types are errors), and
 * prometheus-operator's PodMonitor/PrometheusRule against the CRD schemas of @kubernetes-models/prometheus-operator
 * (types, patterns, required fields).
 */
import * as k8s from '@kubernetes/client-node';
import { PodMonitor, PrometheusRule } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1';

type AttrMap = { name: string; baseName: string; type: string }[];
type Model = { getAttributeTypeMap(): AttrMap };

/** kind → its apiVersion and client-node model name, for every built-in kind Herald's manifests and chart render. */
export const KIND_MODEL: Readonly<Record<string, { apiVersion: string; model: string }>> = {
  Namespace: { apiVersion: 'v1', model: 'V1Namespace' },
  ServiceAccount: { apiVersion: 'v1', model: 'V1ServiceAccount' },
  ClusterRole: { apiVersion: 'rbac.authorization.k8s.io/v1', model: 'V1ClusterRole' },
  ClusterRoleBinding: { apiVersion: 'rbac.authorization.k8s.io/v1', model: 'V1ClusterRoleBinding' },
  Role: { apiVersion: 'rbac.authorization.k8s.io/v1', model: 'V1Role' },
  RoleBinding: { apiVersion: 'rbac.authorization.k8s.io/v1', model: 'V1RoleBinding' },
  ConfigMap: { apiVersion: 'v1', model: 'V1ConfigMap' },
  Secret: { apiVersion: 'v1', model: 'V1Secret' },
  DaemonSet: { apiVersion: 'apps/v1', model: 'V1DaemonSet' },
  Deployment: { apiVersion: 'apps/v1', model: 'V1Deployment' },
  ValidatingAdmissionPolicy: { apiVersion: 'admissionregistration.k8s.io/v1', model: 'V1ValidatingAdmissionPolicy' },
  ValidatingAdmissionPolicyBinding: { apiVersion: 'admissionregistration.k8s.io/v1', model: 'V1ValidatingAdmissionPolicyBinding' },
  FlowSchema: { apiVersion: 'flowcontrol.apiserver.k8s.io/v1', model: 'V1FlowSchema' },
  PriorityLevelConfiguration: { apiVersion: 'flowcontrol.apiserver.k8s.io/v1', model: 'V1PriorityLevelConfiguration' },
  CustomResourceDefinition: { apiVersion: 'apiextensions.k8s.io/v1', model: 'V1CustomResourceDefinition' },
};

/** Returns every schema violation of `value` against the client-node type named `type`, with its path. */
export function validateType(value: unknown, type: string, path: string): string[] {
  if (value === null || value === undefined) return [];
  const arr = /^Array<(.+)>$/.exec(type);
  if (arr) return Array.isArray(value) ? value.flatMap((v, i) => validateType(v, arr[1] as string, `${path}[${i}]`)) : [`${path}: expected a list`];
  const map = /^\{ \[key: string\]: (.+); \}$/.exec(type);
  if (map) {
    if (typeof value !== 'object' || Array.isArray(value)) return [`${path}: expected a map`];
    return Object.entries(value as object).flatMap(([k, v]) => validateType(v, map[1] as string, `${path}.${k}`));
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
    else errors.push(...validateType(v, at, `${path}.${k}`));
  }
  return errors;
}

/** A Kubernetes object as parsed from YAML. */
export interface KubeDoc {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string>; [k: string]: unknown };
  [k: string]: unknown;
}

/** Every schema violation of one object (an unknown kind is one). `where` prefixes each message. */
export function validateObject(doc: KubeDoc, where: string): string[] {
  const at = `${where}: ${doc.kind} ${doc.metadata?.name}`;
  if (doc.apiVersion === 'monitoring.coreos.com/v1' && (doc.kind === 'PodMonitor' || doc.kind === 'PrometheusRule')) {
    try {
      // The constructors take the object without apiVersion/kind, which they set themselves.
      const { apiVersion: _a, kind: _k, ...rest } = doc;
      if (doc.kind === 'PodMonitor') new PodMonitor(rest as ConstructorParameters<typeof PodMonitor>[0]).validate();
      else new PrometheusRule(rest as ConstructorParameters<typeof PrometheusRule>[0]).validate();
      return [];
    } catch (e) {
      return [`${at}: ${(e as Error).message}`];
    }
  }
  const known = doc.kind === undefined ? undefined : KIND_MODEL[doc.kind];
  if (!known) return [`${at}: no schema for kind ${doc.kind} (${doc.apiVersion})`];
  const errors = doc.apiVersion === known.apiVersion ? [] : [`${at}: apiVersion ${doc.apiVersion} is not ${known.apiVersion}`];
  return [...errors, ...validateType(doc, known.model, at)];
}

/** Every `group/resource/verb` the ClusterRole and Role of deploy/kubernetes grant. */
export function grantedPermissions(docs: KubeDoc[]): Set<string> {
  const granted = new Set<string>();
  for (const doc of docs) {
    if (doc.kind !== 'ClusterRole' && doc.kind !== 'Role') continue;
    for (const r of (doc as unknown as k8s.V1ClusterRole).rules ?? []) {
      for (const g of r.apiGroups ?? []) for (const res of r.resources ?? []) for (const v of r.verbs) granted.add(`${g}/${res}/${v}`);
    }
  }
  return granted;
}
