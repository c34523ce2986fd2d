/**
 * The Helm chart deploy/helm/herald, with the real helm (built from its Go module by scripts/helm.sh): `helm lint`
 * is clean, `helm template` with the default values and with ci/full-values.yaml gives objects that match the
 * Kubernetes schemas and a herald.yaml that Herald accepts and can run in that pod, the default rendering equals
 * deploy/kubernetes as kustomize renders it, and bad values fail with a message naming the fix.
 */
import t from 'tap';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import type * as k8s from '@kubernetes/client-node';
import { chartDir, findHelm, helmTemplate, root, runHelm } from './helm-tool.ts';
import { validateObject, type KubeDoc } from './k8s-schema.ts';
import { renderKustomization } from './kustomize.ts';
import { parseHeraldYaml, podProblems } from './pod-checks.ts';
import { skipUnless } from '../helpers/prereq.ts';

const helm = findHelm();
const skip = skipUnless({ helm: helm.path !== undefined }, helm.missing ?? '');
const H = helm.path as string;
const FULL = join(chartDir, 'ci/full-values.yaml');

/** Labels only Helm puts on objects (its release bookkeeping); everything else must equal the kustomize manifests. */
const HELM_LABELS = ['helm.sh/chart', 'app.kubernetes.io/managed-by', 'app.kubernetes.io/instance', 'app.kubernetes.io/version'];

/** An object with Helm's bookkeeping labels (and the CRDs' keep annotation) removed and herald.yaml parsed, keyed for comparison. */
function normalize(doc: KubeDoc): KubeDoc {
  const copy = structuredClone(doc);
  const labels = copy.metadata?.labels;
  if (labels) for (const l of HELM_LABELS) delete labels[l];
  const annotations = copy.metadata?.annotations;
  if (copy.kind === 'CustomResourceDefinition' && annotations?.['helm.sh/resource-policy'] === 'keep') {
    delete annotations['helm.sh/resource-policy'];
    if (Object.keys(annotations).length === 0 && copy.metadata) delete copy.metadata.annotations;
  }
  const data = (copy as { data?: Record<string, string> }).data;
  if (copy.kind === 'ConfigMap' && data?.['herald.yaml'] !== undefined) (copy as { data: Record<string, unknown> }).data['herald.yaml'] = parse(data['herald.yaml']);
  return copy;
}

const key = (d: KubeDoc): string => `${d.kind}/${d.metadata?.namespace ?? ''}/${d.metadata?.name}`;
const byKey = (docs: KubeDoc[]): KubeDoc[] => [...docs].sort((a, b) => key(a).localeCompare(key(b)));

function only<T>(docs: KubeDoc[], kind: string): T {
  const found = docs.filter((d) => d.kind === kind);
  if (found.length !== 1) throw new Error(`expected one ${kind}, found ${found.length}`);
  return found[0] as unknown as T;
}

function heraldContainer(docs: KubeDoc[]): k8s.V1Container {
  return only<k8s.V1DaemonSet>(docs, 'DaemonSet').spec?.template.spec?.containers.find((c) => c.name === 'herald') as k8s.V1Container;
}

t.test('helm lint --strict is clean with the default and with the full values', { skip }, async (t) => {
  for (const extra of [[], ['-f', FULL]]) {
    const r = runHelm(H, ['lint', '--strict', chartDir, ...extra]);
    t.equal(r.status, 0, `helm lint ${extra.join(' ')}: ${r.stdout}${r.stderr}`);
    t.notMatch(r.stdout, /\[(WARNING|ERROR)\]/, 'no warning, no error');
    t.match(r.stdout, /1 chart\(s\) linted, 0 chart\(s\) failed/);
  }
});

t.test('default values: every object is valid, and they are the kustomize manifests of deploy/kubernetes', { skip }, async (t) => {
  // The CRDs are templates (files/crds/, generated with the kustomize copies: test/src/crd/docs.test.ts), so that an
  // upgrade upgrades them; helm.sh/resource-policy: keep leaves them on uninstall.
  const chart = helmTemplate(H);
  const crds = chart.filter((d) => d.kind === 'CustomResourceDefinition');
  t.equal(crds.length, 5, 'the five CRDs');
  t.same(crds.map((d) => d.metadata?.annotations?.['helm.sh/resource-policy']), ['keep', 'keep', 'keep', 'keep', 'keep'], 'each kept on uninstall');
  for (const d of chart) t.same(validateObject(d, 'helm template'), [], `${d.kind} ${d.metadata?.name} is valid`);
  for (const d of chart.filter((x) => x.kind !== 'CustomResourceDefinition')) {
    t.same(HELM_LABELS.map((l) => d.metadata?.labels?.[l]), ['herald-0.1.0', 'Helm', 'herald', '0.1.0'], `${key(d)}: Helm's labels`);
  }
  const kustomize = renderKustomization(join(root, 'deploy/kubernetes'));
  const ns = kustomize.filter((d) => d.kind === 'Namespace');
  t.equal(ns.length, 1);
  // The chart renders the Namespace only with namespace.create (helm install --create-namespace is the usual way).
  t.same(byKey(chart.map(normalize)), byKey(kustomize.filter((d) => d.kind !== 'Namespace').map(normalize)), 'helm template == kubectl kustomize (Namespace aside)');
  const withNs = helmTemplate(H, ['--set', 'namespace.create=true']).filter((d) => d.kind === 'Namespace');
  t.same(withNs.map(normalize), ns.map(normalize), 'namespace.create=true renders the same Namespace');
  t.equal(chart.filter((d) => d.kind === 'Secret').length, 0, 'no Secret by default: they are expected to exist');
});

t.test('monitoring values render deploy/kubernetes/monitoring; the rules are the chart file', { skip }, async (t) => {
  const chart = helmTemplate(H, ['--set', 'metrics.podMonitor.enabled=true', '--set', 'metrics.prometheusRule.enabled=true']).filter((d) => d.apiVersion === 'monitoring.coreos.com/v1');
  t.equal(chart.length, 2);
  const kustomize = renderKustomization(join(root, 'deploy/kubernetes/monitoring'));
  t.same(byKey(chart.map(normalize)), byKey(kustomize.map(normalize)), 'helm template == kubectl kustomize deploy/kubernetes/monitoring');
  const rule = only<{ spec: unknown }>(chart, 'PrometheusRule');
  t.same(rule.spec, parse(readFileSync(join(chartDir, 'files/prometheus-rules.yaml'), 'utf8')));
});

t.test('full values: every object is valid, herald.yaml is valid and can run in the rendered pod', { skip }, async (t) => {
  const docs = helmTemplate(H, ['-f', FULL]);
  t.same(docs.map((d) => d.kind).filter((k) => k !== 'CustomResourceDefinition').sort(), ['ClusterRole', 'ClusterRole', 'ClusterRoleBinding', 'ClusterRoleBinding', 'ConfigMap', 'ConfigMap', 'DaemonSet', 'Deployment', 'FlowSchema', 'FlowSchema', 'Namespace', 'PodMonitor', 'PriorityLevelConfiguration', 'PrometheusRule', 'Role', 'Role', 'RoleBinding', 'RoleBinding', 'Secret', 'Secret', 'ServiceAccount', 'ServiceAccount', 'ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding', 'ValidatingAdmissionPolicyBinding']);
  t.equal(docs.filter((d) => d.kind === 'CustomResourceDefinition').length, 5, 'and the five CRDs');
  for (const d of docs) t.same(validateObject(d, 'helm template -f ci/full-values.yaml'), [], `${d.kind} ${d.metadata?.name} is valid`);
  const cm = docs.find((d) => d.kind === 'ConfigMap' && d.metadata?.name === 'bgp-config') as unknown as k8s.V1ConfigMap;
  const cfg = parseHeraldYaml(cm.data?.['herald.yaml'] ?? '', 'rendered herald.yaml');
  t.same([cfg.peers.length, cfg.advertisements?.length, cfg.pools?.length, cfg.routes.length], [3, 2, 2, 1], 'peers, advertisements, pools and routes come through');
  t.same([cfg.source?.kubernetes, cfg.admin.port, cfg.metrics, cfg.stateDir], [{}, 9180, { port: 9181 }, '/var/lib/herald'], 'the chart-owned keys');
  const c = heraldContainer(docs);
  t.same(podProblems(cfg, c), [], 'the configuration starts and drains in the rendered pod');
  t.same(c.ports?.map((p) => [p.name, p.containerPort]), [['metrics', 9181]]);
  const secrets = docs.filter((d) => d.kind === 'Secret') as unknown as k8s.V1Secret[];
  t.same(secrets.map((s) => [s.metadata?.name, Object.fromEntries(Object.entries(s.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString()]))]).sort(), [['bgp-admin-token', { token: 'test-token' }], ['bgp-bgp-password', { 'tor-a': 'test-password-a' }]]);
  const dashboard = docs.find((d) => d.kind === 'ConfigMap' && d.metadata?.name === 'bgp-dashboard') as unknown as k8s.V1ConfigMap;
  t.equal(JSON.parse(dashboard.data?.['herald.json'] ?? '{}').uid, 'herald', 'the dashboard ConfigMap holds the dashboard');
  t.equal(dashboard.metadata?.labels?.['grafana_dashboard'], '1');
  const ds = only<k8s.V1DaemonSet>(docs, 'DaemonSet');
  t.same([ds.spec?.template.metadata?.labels?.['example.net/team'], ds.spec?.selector.matchLabels], ['network', { 'app.kubernetes.io/name': 'herald' }], 'podLabels on the pods; the selector unchanged');
  t.same(ds.spec?.template.spec?.volumes?.find((v) => v.name === 'tor-c')?.secret, { secretName: 'tor-c' }, 'extraVolumes');
  t.same(c.volumeMounts?.find((m) => m.name === 'tor-c'), { name: 'tor-c', mountPath: '/etc/herald/tor-c', readOnly: true }, 'extraVolumeMounts');
  // The DaemonSet's account (the controller's own is <fullname>-controller).
  const sa = only<k8s.V1ServiceAccount>(docs.filter((d) => d.metadata?.name !== 'bgp-controller'), 'ServiceAccount');
  t.same([sa.metadata?.name, sa.metadata?.annotations], ['bgp-speaker', { 'example.net/audit': 'true' }], 'serviceAccount.name and annotations');
  const pm = only<{ metadata: { labels: Record<string, string> }; spec: { podMetricsEndpoints: { interval: string }[] } }>(docs, 'PodMonitor');
  t.same([pm.metadata.labels['release'], pm.spec.podMetricsEndpoints[0]?.interval], ['kube-prometheus-stack', '15s']);
});

t.test('a BGP listen port below 1024 runs as uid 0 with NET_BIND_SERVICE only; 1179 adds nothing', { skip }, async (t) => {
  for (const [args, privileged] of [
    [['--set', 'config.bgp.listen.port=179'], true],
    [['--set', 'config.bgp.listen.address=0.0.0.0'], true], // no port: 179
    [['--set', 'config.bgp.listen.port=1179'], false],
    [[], false],
  ] as [string[], boolean][]) {
    const docs = helmTemplate(H, args);
    const c = heraldContainer(docs);
    const cfg = parseHeraldYaml((only<k8s.V1ConfigMap>(docs, 'ConfigMap').data?.['herald.yaml']) ?? '', 'rendered');
    t.same([c.securityContext?.runAsUser, c.securityContext?.capabilities?.add], privileged ? [0, ['NET_BIND_SERVICE']] : [1000, undefined], `${args.join(' ') || 'defaults'}`);
    t.same(podProblems(cfg, c), [], `${args.join(' ') || 'defaults'}: the pod can bind its port`);
  }
});

t.test('the password Secret is mounted (and required) only when a peer reads it', { skip }, async (t) => {
  const docs = helmTemplate(H, ['--set', 'config.peers[0].name=r', '--set', 'config.peers[0].address=192.0.2.1', '--set', 'config.peers[0].peerAs=64500']);
  const ds = only<k8s.V1DaemonSet>(docs, 'DaemonSet');
  t.same(ds.spec?.template.spec?.volumes?.filter((v) => v.secret).map((v) => v.secret?.secretName), ['herald-admin-token']);
  t.same(podProblems(parseHeraldYaml(only<k8s.V1ConfigMap>(docs, 'ConfigMap').data?.['herald.yaml'] ?? '', 'rendered'), heraldContainer(docs)), []);
});

t.test('bad values fail at render time with a message naming the fix', { skip }, async (t) => {
  const cases: [string[], RegExp][] = [
    [['--set', 'config.admin.port=1'], /config\.admin is set by the chart .*remove it/],
    [['--set', 'config.metrics.port=1'], /config\.metrics is set by the chart .*metrics\.port/],
    [['--set', 'config.stateDir=/x'], /config\.stateDir is set by the chart/],
    [['--set', 'secrets.adminToken.create=true'], /secrets\.adminToken\.token is empty: set it/],
    [['--set', 'secrets.bgpPassword.create=true'], /peer tor-a reads its password from \/etc\/herald\/secrets\/password, but secrets\.bgpPassword\.data has no key "password"/],
    [['--set', 'terminationGracePeriodSeconds=20'], /terminationGracePeriodSeconds 20 must exceed peer tor-a's gracefulShutdown\.waitTime 15 plus 10 s.*raise it to 26/],
  ];
  for (const [args, message] of cases) {
    const r = runHelm(H, ['template', 'herald', chartDir, '-n', 'herald-system', ...args]);
    t.not(r.status, 0, `${args.join(' ')} fails`);
    t.match(r.stderr, message, `${args.join(' ')}: ${r.stderr.trim()}`);
  }
});

t.test('extraArgs follow the container\'s own; serviceAccount.create=false binds an existing ServiceAccount; crds.install=false renders no CRD', { skip }, async (t) => {
  const args = heraldContainer(helmTemplate(H, ['--set-json', 'extraArgs=["--an-option","a value"]'])).args ?? [];
  t.same(args.slice(-2), ['--an-option', 'a value'], 'appended, quoted');
  t.same(args.slice(0, 7), ['run', '--config', '/etc/herald/config/herald.yaml', '--node-name', '$(NODE_NAME)', '--node-ip', '$(HOST_IPS)'], 'after the chart\'s own');
  const noSa = helmTemplate(H, ['--set', 'serviceAccount.create=false', '--set', 'serviceAccount.name=platform-bgp']);
  t.same(noSa.filter((d) => d.kind === 'ServiceAccount').map((d) => d.metadata?.name), ['herald-controller'], "no ServiceAccount rendered for the DaemonSet (the controller's own stays)");
  t.equal(only<k8s.V1DaemonSet>(noSa, 'DaemonSet').spec?.template.spec?.serviceAccountName, 'platform-bgp', 'the pods use the given one');
  // The DaemonSet's bindings (named herald) name it; the controller's (herald-controller) keep its own account.
  const bindings = noSa.filter((d) => d.kind === 'ClusterRoleBinding' || d.kind === 'RoleBinding').map((d) => d as unknown as k8s.V1RoleBinding);
  const subjects = bindings.filter((b) => b.metadata?.name === 'herald').flatMap((b) => b.subjects ?? []);
  t.ok(subjects.length >= 2 && subjects.every((x) => x.name === 'platform-bgp'), 'and every binding of the DaemonSet names it');
  t.ok(bindings.filter((b) => b.metadata?.name === 'herald-controller').flatMap((b) => b.subjects ?? []).every((x) => x.name === 'herald-controller'), "the controller's bindings name its own account");
  const policy = JSON.stringify(noSa.filter((d) => d.kind === 'ValidatingAdmissionPolicy' || d.kind === 'FlowSchema'));
  t.match(policy, 'system:serviceaccount:herald-system:platform-bgp', 'the admission policies match the given account');
  t.notMatch(policy, "'system:serviceaccount:herald-system:herald'", 'and not the default one');
  t.equal(helmTemplate(H, ['--set', 'crds.install=false']).filter((d) => d.kind === 'CustomResourceDefinition').length, 0, 'crds.install=false: no CRD');
});

t.test('values.schema.json: a typo or a wrong type fails at render naming the value; kubeVersion needs Kubernetes 1.31', { skip }, async (t) => {
  const cases: [string[], RegExp][] = [
    [['--set', 'imag.tag=x'], /additional properties 'imag' not allowed/],
    [['--set', 'config.bgp.localAs=many'], /\/config\/bgp\/localAs.*want integer/],
    [['--set', 'config.peers[0].holdTme=90'], /\/config\/peers\/0.*additional properties 'holdTme' not allowed/],
    [['--set', 'image.digest=sha256:abc'], /\/image\/digest.*does not match pattern/],
    [['--set', 'admin.port=0'], /\/admin\/port/],
    [['--set', 'serviceAccount.create=maybe'], /\/serviceAccount\/create.*want boolean/],
    [['--kube-version', '1.30.4'], /requires kubeVersion: >=1\.31\.0-0/],
  ];
  for (const [args, message] of cases) {
    const r = runHelm(H, ['template', 'herald', chartDir, '-n', 'herald-system', ...args]);
    t.not(r.status, 0, `${args.join(' ')} fails`);
    t.match(r.stderr, message, `${args.join(' ')}: ${r.stderr.trim().split('\n').slice(-1)[0]}`);
  }
  t.equal(runHelm(H, ['template', 'herald', chartDir, '-n', 'herald-system', '--kube-version', '1.31.0']).status, 0, 'Kubernetes 1.31 is enough');
  const schema = JSON.parse(readFileSync(join(chartDir, 'values.schema.json'), 'utf8')) as { properties: Record<string, { properties?: Record<string, unknown> }> };
  const herald = JSON.parse(readFileSync(join(root, 'docs/config.schema.json'), 'utf8')) as { properties: Record<string, unknown> };
  t.same(Object.keys(schema.properties['config']?.properties ?? {}).sort(), Object.keys(herald.properties).sort(), "config's schema has the configuration's sections (the same source: src/config/schema.ts)");
});
