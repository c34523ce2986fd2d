/**
 * The Helm chart's `values.schema.json` (deploy/helm/herald/values.schema.json): Helm checks every install, upgrade,
 * lint and template against it, so a typo or a wrong type in a values file fails before anything reaches the cluster,
 * naming the value. `config` is Herald's configuration schema itself (src/config/schema.ts, the source of the CRDs
 * and docs/config.schema.json), less the keys the chart sets (their values fail the render with a message naming the
 * fix: deploy/helm/herald/templates/_helpers.tpl "herald.config"); the chart's own values are described here.
 * JSON Schema draft-07, which helm 3 and helm 4 both read. `scripts/gen-config-docs.ts` writes it;
 * test/src/crd/docs.test.ts checks the committed file is current and test/deploy/helm.test.ts that helm applies it.
 */
import { z } from 'zod';
import { configSchema } from '../config/schema.ts';

/** A JSON Schema (draft-07) node, as this module writes them. */
export type SchemaNode = Record<string, unknown>;

/** The keys of `config` the chart sets itself (they must match the pod's mounts, ports and probes). */
export const CHART_OWNED_CONFIG_KEYS = ['source', 'admin', 'metrics', 'stateDir', 'node'] as const;

const str = (description: string, extra: SchemaNode = {}): SchemaNode => ({ type: 'string', description, ...extra });
const bool = (description: string): SchemaNode => ({ type: 'boolean', description });
const port = (description: string): SchemaNode => ({ type: 'integer', minimum: 1, maximum: 65535, description });
const labels = (description: string): SchemaNode => ({ type: 'object', additionalProperties: { type: 'string' }, description });
/** A Kubernetes object the chart passes through as written (its own schema is the apiserver's). */
const kube = (description: string): SchemaNode => ({ type: 'object', description });
const kubeList = (description: string, required: string[] = []): SchemaNode => ({ type: 'array', items: { type: 'object', ...(required.length ? { required } : {}) }, description });
const obj = (description: string, properties: Record<string, SchemaNode>): SchemaNode => ({ type: 'object', additionalProperties: false, description, properties });

/** `config`: Herald's configuration schema, the chart-owned keys described instead of typed. */
function configValues(): SchemaNode {
  const s = z.toJSONSchema(configSchema, { io: 'input', unrepresentable: 'any', target: 'draft-7' }) as SchemaNode & { properties: Record<string, SchemaNode> };
  const { $schema: _schema, ...rest } = s;
  const properties = { ...rest.properties };
  for (const k of CHART_OWNED_CONFIG_KEYS) {
    properties[k] = { description: `Set by the chart (it must match the pod's mounts, ports and probes): leave config.${k} out; the chart fails naming it otherwise` };
  }
  return { ...rest, description: "Herald's configuration (docs/configuration.md), written to the ConfigMap as herald.yaml", properties };
}

/** The schema of the chart's values (see the module comment). */
export function chartValuesSchema(): SchemaNode {
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    title: 'Herald chart values',
    type: 'object',
    additionalProperties: false,
    properties: {
      image: obj("Herald's image", {
        repository: str('Registry path of the image, without a tag', { minLength: 1 }),
        tag: str("Tag (default: the chart's appVersion); unused when digest is set"),
        digest: str('Manifest digest: the pods take the image by digest (scripts/image.sh pin writes it)', { pattern: '^(sha256:[0-9a-f]{64})?$' }),
        pullPolicy: { enum: ['', 'Always', 'IfNotPresent', 'Never'], description: "Default: Kubernetes' own" },
      }),
      imagePullSecrets: kubeList('Secrets for pulling the image: [{name: NAME}]', ['name']),
      fullnameOverride: str('Base name of every object (default: the release name, or <release>-herald)'),
      namespace: obj('The Namespace object', {
        create: bool('Render the Namespace (GitOps); with helm install --create-namespace leave it false'),
        podSecurityEnforce: { enum: ['privileged', 'baseline', 'restricted'], description: 'Its pod-security.kubernetes.io/enforce label (hostNetwork and hostPath need privileged)' },
      }),
      crds: obj("Herald's CustomResourceDefinitions (herald.io), templates of the chart", {
        install: bool('Install and upgrade them with the chart (helm.sh/resource-policy: keep: an uninstall leaves them and the objects)'),
      }),
      config: configValues(),
      admin: obj('The admin API (always 127.0.0.1 on the node)', { port: port('Its port, also the probes\'') }),
      secrets: obj('Secrets the pod mounts', {
        bgpPassword: obj('TCP MD5 passwords, mounted at /etc/herald/secrets', {
          name: str('Default: <fullname>-bgp-password'),
          create: bool('Create it from data (else it must exist)'),
          data: labels('Key → password, for create: true'),
        }),
        adminToken: obj("Bearer token of the admin API's mutating calls", {
          name: str('Default: <fullname>-admin-token'),
          create: bool('Create it from token (else it must exist)'),
          token: str('The token, for create: true'),
        }),
      }),
      extraArgs: { type: 'array', items: { type: 'string' }, description: 'Arguments added after the herald container\'s own (herald run ...)' },
      extraEnv: kubeList('Environment variables added to the herald container', ['name']),
      extraVolumes: kubeList('Volumes added to the pod', ['name']),
      extraVolumeMounts: kubeList('Volume mounts added to the herald container', ['name', 'mountPath']),
      resources: kube('The herald container\'s requests and limits'),
      terminationGracePeriodSeconds: { type: 'integer', minimum: 0, description: "Above every peer's gracefulShutdown.waitTime plus 10 s (the chart checks)" },
      tolerations: kubeList('Pod tolerations'),
      nodeSelector: labels('Pod nodeSelector'),
      affinity: kube('Pod affinity'),
      priorityClassName: str('Pod priority class'),
      podAnnotations: labels('Annotations of the pods'),
      podLabels: labels('Labels added to the pods (the selector stays app.kubernetes.io/name)'),
      serviceAccount: obj("The DaemonSet's ServiceAccount (the controller's is <fullname>-controller)", {
        create: bool('Create it (false: it must exist; the RBAC objects still bind it)'),
        name: str('Default: <fullname>'),
        annotations: labels('Annotations of the ServiceAccount the chart creates'),
      }),
      controller: obj('herald controller: the Deployment holding the cluster-wide writers (allocator, object status, Events on Services)', {
        replicas: { type: 'integer', minimum: 1, description: 'Replicas (one leader per Lease; 2 take over from each other within 15 s)' },
        port: port('Port of its probes (/healthz, /readyz) and /metrics on the pod\'s address'),
        resources: kube("The controller container's requests and limits"),
      }),
      metrics: obj("Herald's metrics-only listener and the monitoring objects", {
        port: port('Port of the metrics-only listener on the node\'s address (the pod\'s port named metrics)'),
        podMonitor: obj('prometheus-operator PodMonitor', { enabled: bool('Render it'), interval: str('Scrape interval, e.g. 30s'), labels: labels('Labels your Prometheus selects PodMonitors by') }),
        prometheusRule: obj("prometheus-operator PrometheusRule with Herald's alerts", { enabled: bool('Render it'), labels: labels('Labels your Prometheus selects rules by') }),
        dashboard: obj('A ConfigMap with the Grafana dashboard for the dashboard sidecar', { enabled: bool('Render it'), labels: labels('Labels the sidecar selects by') }),
      }),
    },
  };
}
