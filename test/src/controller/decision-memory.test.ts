// What the controller keeps per Service (docs/benchmarks.md "Where the memory goes"): at 10,000 Services most VIPs
// of a node are blocked for the same reason, and their candidates are kept until the Service changes. Identity checks
// show what is shared; a heap snapshot of a child process measures the element stores of the kept lists (a list grown
// by push keeps room for 17 elements, some 150 bytes, whatever it holds).
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { decideService } from '../../../src/controller/desired-routes.ts';
import type { DesiredRoutesContext } from '../../../src/controller/desired-routes.ts';
import { evaluateNode } from '../../../src/controller/node-eligibility.ts';
import { trimObject } from '../../../src/k8s/trim.ts';
import type { EndpointSlice, Node, Service } from '../../../src/k8s/types.ts';
import { DOCUMENTATION_PREFIXES, node, service, slice } from '../../helpers/k8s-objects.ts';

const ME = 'n1';
const ctx: DesiredRoutesContext = { nodeName: ME, allowedPrefixes: DOCUMENTATION_PREFIXES, advertisements: [{ name: 'lb', addressKinds: ['loadBalancer'] }] };
const state = evaluateNode(trimObject('Node', node(ME)) as Node, ME);

/** A Local Service with an LB IP and a cluster IP whose endpoints are on other nodes (blocked here). */
function decide(i: number) {
  const svc = trimObject('Service', service(`svc-${i}`, { etp: 'Local', clusterIPs: [`10.96.0.${i}`], lbIPs: [`192.0.2.${i}`] })) as Service;
  const sl = trimObject('EndpointSlice', slice(`svc-${i}-a`, `svc-${i}`, [[`10.1.0.${i}`, 'n2'], [`10.1.1.${i}`, 'n3']])) as EndpointSlice;
  return decideService(svc, [sl], state, ctx);
}

t.test('VIPs blocked for the same reasons share one frozen reason list; their endpoint counts are one object', async (t) => {
  const [a, b] = [decide(1), decide(2)];
  const lb = (d: ReturnType<typeof decide>) => d.vips.find((v) => v.decision.kind === 'loadBalancer');
  const [va, vb] = [lb(a), lb(b)];
  t.equal(va?.decision.announced, false, 'blocked: no local endpoint');
  t.same(va?.decision.reasons.map((r) => r.code), ['NoLocalReadyEndpoint']);
  t.equal(va?.decision.reasons, vb?.decision.reasons, 'one list for both Services');
  t.ok(Object.isFrozen(va?.decision.reasons), 'frozen: no holder can change it for the others');
  t.equal(va?.endpoints, vb?.endpoints, 'one counts object for both');
  t.same(va?.endpoints, { local: 0, total: 2, terminating: 0, notReady: 0, localAddresses: [] });
  t.equal(a.decision.reasons, b.decision.reasons, 'the empty Service-level chain is one list too');
  const own = decide(3);
  const local = decideService(
    trimObject('Service', service('here', { etp: 'Local', clusterIPs: ['10.96.1.1'], lbIPs: ['192.0.2.200'] })) as Service,
    [trimObject('EndpointSlice', slice('here-a', 'here', [['10.1.9.1', ME]])) as EndpointSlice],
    state,
    ctx,
  );
  t.equal(local.vips.find((v) => v.decision.kind === 'loadBalancer')?.decision.announced, true, 'control: a local endpoint announces');
  t.not(local.vips[0]?.endpoints, own.vips[0]?.endpoints, 'counts with a local endpoint are its own');
  t.notOk(Object.isFrozen(local.vips.find((v) => v.decision.announced)?.decision.reasons), 'an announced VIP names its prefix: its own list');
});

const ROOT = join(import.meta.dirname, '..', '..', '..');
const url = (p: string) => pathToFileURL(join(ROOT, p)).href;
const CHILD = `
import { getHeapSnapshot } from 'node:v8';
import { decideService } from ${JSON.stringify(url('src/controller/desired-routes.ts'))};
import { evaluateNode } from ${JSON.stringify(url('src/controller/node-eligibility.ts'))};
import { trimObject } from ${JSON.stringify(url('src/k8s/trim.ts'))};
import { node, service, slice } from ${JSON.stringify(url('test/helpers/k8s-objects.ts'))};
const ME = 'n1';
const ctx = { nodeName: ME, allowedPrefixes: ['192.0.0.0/16'], advertisements: [{ name: 'lb', addressKinds: ['loadBalancer'] }] };
const state = evaluateNode(trimObject('Node', node(ME)), ME);
const objects = (i) => [
  trimObject('Service', service('svc-' + i, { etp: 'Local', clusterIPs: ['10.96.' + (i >> 8) + '.' + (i & 255)], lbIPs: ['192.0.' + (i >> 8) + '.' + (i & 255)] })),
  [trimObject('EndpointSlice', slice('svc-' + i + '-a', 'svc-' + i, [['10.1.' + (i >> 8) + '.' + (i & 255), 'n2']]))],
];
async function elementBytes() {
  let json = '';
  for await (const chunk of getHeapSnapshot()) json += chunk;
  const snap = JSON.parse(json);
  const f = snap.snapshot.meta.node_fields, types = snap.snapshot.meta.node_types[0];
  const [T, NAME, SIZE] = [f.indexOf('type'), f.indexOf('name'), f.indexOf('self_size')];
  let bytes = 0;
  for (let i = 0; i < snap.nodes.length; i += f.length) {
    if (types[snap.nodes[i + T]] === 'array' && snap.strings[snap.nodes[i + NAME]] === '(object elements)') bytes += snap.nodes[i + SIZE];
  }
  return bytes;
}
const N = 400;
const inputs = Array.from({ length: N + 20 }, (_, i) => objects(i));
const kept = inputs.slice(0, 20).map(([svc, slices]) => decideService(svc, slices, state, ctx)); // warm the tables
const before = await elementBytes();
for (const [svc, slices] of inputs.slice(20)) kept.push(decideService(svc, slices, state, ctx));
const after = await elementBytes();
console.log(JSON.stringify({ kept: kept.length, blocked: kept.filter((c) => c.vips.every((v) => !v.decision.announced)).length, perService: (after - before) / N }));
`;

t.test('the lists kept by 400 decided Services have element stores of their own size, not room for 17', async (t) => {
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', CHILD], { encoding: 'utf8', timeout: 90_000 });
  t.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout) as { kept: number; blocked: number; perService: number };
  t.equal(out.kept, 420);
  t.equal(out.blocked, 420, 'every VIP blocked (endpoints on another node)');
  // Two VIPs a Service: decision.vips and vips hold 2 elements each (16 + 2 × 8 bytes a store), the reason lists are
  // shared. Grown by push, the lists of one Service took over 600 bytes.
  t.ok(out.perService <= 100, `${out.perService.toFixed(1)} bytes of element stores per Service (at most 100)`);
});
