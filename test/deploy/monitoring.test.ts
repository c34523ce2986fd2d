/**
 * The alerts (deploy/helm/herald/files/prometheus-rules.yaml) and the Grafana dashboard
 * (deploy/helm/herald/files/grafana-dashboard.json) use only metrics Herald exports (src/metrics/metrics.ts, read from
 * a live registry, prom-client's default metrics included) and only labels those metrics or the scrape carry.
 */
import t from 'tap';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { HeraldMetrics } from '../../src/metrics/metrics.ts';
import { exprNames } from './promql.ts';

const root = new URL('../../', import.meta.url).pathname;
const RULES = 'deploy/helm/herald/files/prometheus-rules.yaml';
const DASHBOARD = 'deploy/helm/herald/files/grafana-dashboard.json';

/** Labels every scraped series carries: Prometheus' own, prometheus-operator's for a PodMonitor, and the PodMonitor's relabeling (`node`). */
const TARGET_LABELS = ['instance', 'job', 'namespace', 'pod', 'container', 'endpoint', 'node'];

/** Every series name Herald exports → its label names (histograms as _bucket with le, _sum, _count). */
async function exportedSeries(): Promise<Map<string, Set<string>>> {
  const m = new HeraldMetrics({ version: 'test' });
  const out = new Map<string, Set<string>>();
  for (const metric of await m.registry.getMetricsAsJSON()) {
    const labels = new Set([...((m.registry.getSingleMetric(metric.name) as unknown as { labelNames?: string[] })?.labelNames ?? []), ...TARGET_LABELS]);
    if (String(metric.type) === 'histogram') {
      out.set(`${metric.name}_bucket`, new Set([...labels, 'le']));
      out.set(`${metric.name}_sum`, labels);
      out.set(`${metric.name}_count`, labels);
    } else out.set(metric.name, labels);
  }
  return out;
}

/** Problems of one expression: unknown metrics, labels no selected metric has. */
function problems(expr: string, series: Map<string, Set<string>>, where: string): string[] {
  const names = exprNames(expr);
  const errors: string[] = [];
  const used = names.selectors.filter((s) => s.metric !== undefined);
  if (used.length === 0) errors.push(`${where}: selects no metric: ${expr}`);
  const allLabels = new Set<string>(TARGET_LABELS);
  for (const s of used) {
    const labels = series.get(s.metric as string);
    if (!labels) {
      errors.push(`${where}: unknown metric ${s.metric}`);
      continue;
    }
    for (const l of labels) allLabels.add(l);
    for (const l of s.labels) if (!labels.has(l)) errors.push(`${where}: ${s.metric} has no label ${l}`);
  }
  for (const l of names.grouping) if (!allLabels.has(l)) errors.push(`${where}: groups by ${l}, which none of its metrics has`);
  return errors;
}

interface Rule {
  alert?: string;
  record?: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

function rules(): Rule[] {
  const doc = parse(readFileSync(join(root, RULES), 'utf8')) as { groups: { name: string; rules: Rule[] }[] };
  return doc.groups.flatMap((g) => g.rules);
}

t.test('the name reader finds metrics, labels and groupings, and skips functions, keywords and variables', async (t) => {
  const n = exprNames('histogram_quantile(0.99, sum by (node, le) (rate(herald_x_bucket{node=~"$node", a!="b{"}[$__rate_interval]))) > 0 and on(pod) max without (peer) (up) or vector(0) offset 5m');
  t.same(n.selectors, [{ metric: 'herald_x_bucket', labels: ['node', 'a'] }, { metric: 'up', labels: [] }]);
  t.same(n.grouping, ['node', 'le', 'pod', 'peer']);
  const series = await exportedSeries();
  t.same(problems('sum by (peer) (herald_desired_routes)', series, 'x'), ['x: groups by peer, which none of its metrics has']);
  t.same(problems('herald_bgp_session_up{peerr="a"} + herald_nope', series, 'x'), ['x: herald_bgp_session_up has no label peerr', 'x: unknown metric herald_nope']);
  t.ok(series.has('herald_bgp_update_send_duration_seconds_bucket') && series.has('process_resident_memory_bytes'), 'histograms and default metrics are in the set');
});

t.test('every alert uses only exported metrics and labels, and has a severity, a summary and a description', async (t) => {
  const series = await exportedSeries();
  const all = rules();
  t.ok(all.length >= 6, `${all.length} rules`);
  t.equal(new Set(all.map((r) => r.alert)).size, all.length, 'alert names are unique');
  for (const r of all) {
    const where = `${RULES}: ${r.alert}`;
    t.same(problems(r.expr, series, where), [], `${r.alert}: ${r.expr}`);
    t.match(r.labels?.severity, /^(critical|warning|info)$/, `${r.alert}: severity`);
    t.ok(r.annotations?.summary && r.annotations.description, `${r.alert}: summary and description`);
    const labels = new Set<string>(TARGET_LABELS);
    for (const s of exprNames(r.expr).selectors) for (const l of series.get(s.metric ?? '') ?? []) labels.add(l);
    for (const text of Object.values(r.annotations ?? {})) {
      for (const m of text.matchAll(/\$labels\.(\w+)/g)) t.ok(labels.has(m[1] as string), `${r.alert}: annotation label ${m[1]} exists on its series`);
    }
  }
});

t.test('the alerts that matter are there', async (t) => {
  const byName = new Map(rules().map((r) => [r.alert, r.expr]));
  const wanted: [string, string, RegExp][] = [
    ['session down', 'HeraldBGPSessionDown', /herald_bgp_session_up == 0/],
    ['VIP announced from no node', 'HeraldVIPNotAnnounced', /^sum by \(service, address\) \(herald_vip_announced\) == 0$/],
    ['no route from any node', 'HeraldNothingAnnounced', /herald_desired_routes/],
    ['config rejected, cleared by a good config', 'HeraldConfigRejected', /^herald_config_last_reload_successful == 0$/],
    ['health checks failing', 'HeraldHealthChecksFailing', /herald_health_check_results_total/],
    ['stale informers, quiet resources too (a quiet watch reopens within 10 minutes)', 'HeraldKubernetesStale', /herald_kubernetes_watch_last_connect_timestamp_seconds > 900 and .*herald_kubernetes_last_sync_timestamp_seconds > 900/],
    ['Events lost', 'HeraldKubernetesEventsDropped', /herald_kubernetes_events_dropped_total/],
    ['pool exhausted', 'HeraldIPAMPoolExhausted', /herald_ipam_pool_addresses\{state="available"\}/],
    ['no allocator leader', 'HeraldIPAMNoLeader', /herald_ipam_leader\) == 0/],
    ['drain active', 'HeraldDrained', /herald_drained == 1/],
    ['BFD session down', 'HeraldBFDSessionDown', /^herald_bfd_session_up == 0$/],
    ['BFD flapping', 'HeraldBFDFlapping', /herald_bfd_session_state_changes_total\{to="Up"\}/],
  ];
  for (const [what, name, expr] of wanted) t.match(byName.get(name), expr, `${what}: ${name}`);
});

interface Panel {
  type: string;
  title: string;
  datasource?: { uid?: string };
  targets?: { expr: string; refId: string }[];
  panels?: Panel[];
}

t.test('every dashboard query uses only exported metrics and labels', async (t) => {
  const series = await exportedSeries();
  const dash = JSON.parse(readFileSync(join(root, DASHBOARD), 'utf8')) as { uid: string; title: string; panels: Panel[]; templating: { list: { name: string; type: string; query: unknown; definition?: string }[] } };
  t.equal(dash.uid, 'herald');
  const panels = dash.panels.flatMap((p) => [p, ...(p.panels ?? [])]).filter((p) => p.type !== 'row');
  t.ok(panels.length >= 15, `${panels.length} panels`);
  let queries = 0;
  for (const p of panels) {
    t.equal(p.datasource?.uid, '${datasource}', `${p.title}: uses the data source variable`);
    t.ok(p.targets?.length, `${p.title}: has a query`);
    for (const target of p.targets ?? []) {
      queries++;
      t.same(problems(target.expr, series, `${DASHBOARD}: ${p.title}`), [], `${p.title} ${target.refId}: ${target.expr}`);
    }
  }
  t.ok(queries >= panels.length);
  const bfd = panels.filter((p) => p.targets?.some((q) => /herald_bfd_/.test(q.expr)));
  t.same(bfd.map((p) => p.title), ['BFD session Up (1) or not (0)', 'BFD state transitions', 'BFD Detection Time'], 'a BFD row: session state, transitions, Detection Time');
  const vars = dash.templating.list.filter((v) => v.type === 'query');
  t.ok(vars.length >= 1);
  for (const v of vars) {
    const m = /^label_values\((\w+),\s*(\w+)\)$/.exec(v.definition ?? '');
    t.ok(m, `variable ${v.name}: label_values(metric, label)`);
    t.ok(series.get(m?.[1] ?? '')?.has(m?.[2] ?? ''), `variable ${v.name}: ${m?.[1]} has label ${m?.[2]}`);
  }
});
