// Issue 35 N1, N2, N9 and the open item "manifest file errors visible only in the log", replayed against `herald run`
// as the DaemonSet runs it (deploy/herald, 320 MiB) with BIRD as the router and a manifests directory as the source:
// - N9: an unquoted `herald.io/med: 100` quarantined the Service and withdrew its VIP; now it is a bad annotation:
//   the VIP stays, with the last good MED;
// - N1: an alias bomb ended the manifests scan silently; a VIP stayed announced after its only endpoint went unready;
// - N2: a 2 MB `kind: List` (as `kubectl get -o yaml` writes it) or one 4.4 MB EndpointSlice ran the daemon out of
//   memory (exit 134: BGP and BFD dropped, BIRD flushed the routes);
// and every refused file is in `herald status`, /api/v1/status, /readyz and herald_refused_inputs.
import t from 'tap';
import { stringify } from 'yaml';
import { birdAvailable, sinceMoved } from '../helpers/bird.ts';
import { skipUnless } from '../helpers/prereq.ts';
import { node, service, slice } from '../helpers/k8s-objects.ts';
import { formatStatus } from '../../src/cli/table.ts';
import type { StatusView } from '../../src/admin/view.ts';
import { startHostileHerald } from './harness.ts';

t.setTimeout(400_000);
const VIP = '198.51.100.30';
const PREFIX = `${VIP}/32`;

/** web.yaml: Node node-a, Service default/web (Local, VIP) with `med` as written, its slice (ready or not). */
const web = (med: string, ready = true): string =>
  [node('node-a'), service('web', { etp: 'Local', lbIPs: [VIP] }), slice('web-1', 'web', [['10.2.0.1', 'node-a', { ready }]])]
    .map((o) => stringify(o))
    .join('---\n')
    .replace('  name: web\n', `  name: web\n  annotations:\n    herald.io/med: ${med}\n`);

/** An alias bomb: 9 levels of 10 aliases. */
const BOMB = `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: lol}\ndata:\n  a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n${Array.from({ length: 8 }, (_, i) => `  ${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [${Array(10).fill(`*${String.fromCharCode(97 + i)}`).join(',')}]`).join('\n')}\n`;

/** What `kubectl get services -A -o yaml` writes for `n` Services. */
function kubectlList(n: number): string {
  const items = Array.from({ length: n }, (_, i) => ({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { annotations: { 'kubectl.kubernetes.io/last-applied-configuration': JSON.stringify({ apiVersion: 'v1', kind: 'Service', metadata: { name: `svc-${i}`, namespace: 'bulk' }, spec: { type: 'LoadBalancer', ports: [{ port: 80 }] } }) }, creationTimestamp: '2026-12-01T10:00:00Z', name: `svc-${i}`, namespace: 'bulk', resourceVersion: String(100000 + i), uid: `0f1e2d3c-0000-4000-8000-${String(i).padStart(12, '0')}` },
    spec: { clusterIP: `10.96.${(i >> 8) & 255}.${i & 255}`, clusterIPs: [`10.96.${(i >> 8) & 255}.${i & 255}`], externalTrafficPolicy: 'Cluster', internalTrafficPolicy: 'Cluster', ipFamilies: ['IPv4'], ipFamilyPolicy: 'SingleStack', ports: [{ nodePort: 30000 + (i % 2000), port: 80, protocol: 'TCP', targetPort: 8080 }], selector: { app: `app-${i}` }, sessionAffinity: 'None', type: 'LoadBalancer' },
    status: { loadBalancer: { ingress: [{ ip: `198.18.${(i >> 8) & 255}.${i & 255}`, ipMode: 'VIP' }] } },
  }));
  return stringify({ apiVersion: 'v1', items, kind: 'List', metadata: { resourceVersion: '' } });
}

/** One EndpointSlice of `n` endpoints, as the API server writes them. */
function bigSlice(n: number): string {
  const endpoints = Array.from({ length: n }, (_, i) => ({ addresses: [`10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`], conditions: { ready: true, serving: true, terminating: false }, nodeName: `node-${i % 500}`, targetRef: { kind: 'Pod', name: `web-${i}-abcde`, namespace: 'bulk', uid: `0f1e2d3c-0000-4000-8000-${String(i).padStart(12, '0')}` }, zone: `zone-${i % 3}` }));
  return stringify({ apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata: { name: 'huge-1', namespace: 'bulk', labels: { 'kubernetes.io/service-name': 'huge' } }, addressType: 'IPv4', endpoints, ports: [{ name: 'http', port: 8080, protocol: 'TCP' }] });
}

t.test('hostile manifests: the VIP follows its endpoint, bad files are refused and shown, the daemon stays up', { skip: skipUnless({ bird2: birdAvailable() }) }, async (t) => {
  const h = await startHostileHerald(t, {
    bird: true,
    manifests: { 'web.yaml': web('"50"') },
    config: { allowedPrefixes: ['198.51.100.0/24', '198.18.0.0/16'], advertisements: [{ name: 'default', serviceAttributes: { med: true } }] },
  });
  const med = async () => (await h.bird?.routes('all table master4'))?.find((r) => r.prefix === PREFIX)?.med;
  const announced = (want: boolean, what: string) => h.waitFor(async () => (await h.birdHas(PREFIX)) === want || undefined, what, 120_000);
  await announced(true, 'the VIP in BIRD');
  await h.waitFor(async () => (await med()) === 50 || undefined, 'MED 50 in BIRD');
  const { since } = await h.session();
  const status = async () => (await h.get<StatusView>('/api/v1/status')).body;

  // N9: unquoted, the MED is a number: a bad annotation, the last good MED stays, the VIP stays.
  h.put('web.yaml', web('100'));
  const svcView = await h.waitFor(async () => {
    const s = (await h.get<{ reasons: { code: string; message: string }[]; vips: { reasons: { code: string; message: string }[] }[] }>('/api/v1/services/default/web')).body;
    return JSON.stringify(s).includes('must be a string') ? s : undefined;
  }, 'the annotation refused');
  t.match(JSON.stringify(svcView), /herald\.io\/med: must be a string, got number 100 \(quote it in YAML: \\"100\\"\)/);
  t.equal((await status()).quarantined, undefined, 'the Service is not quarantined');
  t.ok(await h.birdHas(PREFIX), 'the VIP stays announced');
  t.equal(await med(), 50, 'with the last good MED');

  // N1: an alias bomb in a file read before web.yaml: refused with its line, and the scan goes on.
  h.put('a-bomb.yaml', BOMB);
  h.put('web.yaml', web('"50"', false));
  await announced(false, 'the only endpoint unready: the VIP withdrawn (the scan was not ended by the bomb)');
  t.pass('the VIP left BIRD after its endpoint went unready');
  const refusedBomb = await h.waitFor(async () => (await status()).refused?.find((r) => r.name.endsWith('a-bomb.yaml')), 'the bomb listed as refused');
  t.match(refusedBomb, { kind: 'file', line: 1, reason: /^document not usable: Excessive alias count indicates a resource exhaustion attack/ });

  // N2: a 2 MB kubectl List and a 4.4 MB EndpointSlice: refused in words, nothing else moves.
  const list = kubectlList(2600);
  const huge = bigSlice(16_000);
  t.comment(`List ${(list.length / 1048576).toFixed(1)} MB, EndpointSlice ${(huge.length / 1048576).toFixed(1)} MB`);
  t.ok(list.length >= 2_000_000 && huge.length >= 4_400_000, 'the sizes of the issue');
  h.put('b-list.yaml', list);
  h.put('c-slice.yaml', huge);
  const s = await h.waitFor(async () => {
    const st = await status();
    return (st.refused ?? []).filter((r) => /b-list|c-slice/.test(r.name)).length === 2 ? st : undefined;
  }, 'both big files refused', 240_000);
  for (const r of (s.refused ?? []).filter((x) => /b-list|c-slice/.test(x.name))) {
    t.match(r.reason, /^not parsed: this manifest file needs at least \d+ MiB to parse, more than this pod has free: the memory limit of 320 MiB \(HERALD_MEMORY_LIMIT_MIB\) with \d+ MiB in use, which leaves a parse \d+ MiB \(split it into several files, or its kind: List into several documents, or raise the container's memory limit\)$/, r.name);
  }
  h.put('web.yaml', web('"50"', true));
  await announced(true, 'ready again: the VIP announced again (the scan goes on past the big files)');
  t.pass('the VIP is back in BIRD');

  // Item 7: visible everywhere, not only in the log.
  const readyz = (await h.get<{ ok: boolean; refused?: string[] }>('/readyz')).body;
  t.equal(readyz.ok, true, 'ready: the node serves with the last good input');
  t.equal(readyz.refused?.length, 3, 'refused files in /readyz');
  t.match(readyz.refused, [/^file .*a-bomb\.yaml:1: document not usable/, /^file .*b-list\.yaml: not parsed/, /^file .*c-slice\.yaml: not parsed/]);
  t.match(formatStatus(await status()), /^Refused: +file .*a-bomb\.yaml:1: document not usable/m, 'herald status');
  t.match(await h.metrics(), /^herald_refused_inputs\{kind="file"\} 3$/m, 'the metric');
  const { state, since: after } = await h.session();
  t.equal(state, 'Established', 'the BGP session stayed up');
  t.notOk(sinceMoved(since, after), `and never flapped (${since} → ${after})`);
  h.assertContained(t, 'after the hostile manifests');
});
