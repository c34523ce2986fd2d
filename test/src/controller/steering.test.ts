// Traffic steering as the controller decides it (src/controller/steering.ts through computeDesiredRoutes and
// decideService): the reasons and attributes of weighting, locality, maxNodesPerVip and the per-Service annotations,
// and the rendezvous choice seen from every node of one snapshot.
import t from 'tap';
import fc from 'fast-check';
import { ObjectStore } from '../../../src/k8s/object-store.ts';
import type { Advertisement, DesiredResult, DesiredRoutesContext, ServiceCandidates, VipDecision } from '../../../src/controller/desired-routes.ts';
import { computeDesiredRoutes, decideService } from '../../../src/controller/desired-routes.ts';
import { evaluateNode } from '../../../src/controller/node-eligibility.ts';
import { mergeRoutes } from '../../../src/controller/route-merge.ts';
import { selectorKeys } from '../../../src/controller/steering.ts';
import type { PublishedNodeSet } from '../../../src/k8s/node-set.ts';
import { mergeNodeSet, parseNodeSetShard, renderNodeSet } from '../../../src/k8s/node-set.ts';
import type { Node } from '../../../src/k8s/types.ts';
import type { EpSpec } from '../../helpers/k8s-objects.ts';
import { DOCUMENTATION_PREFIXES, node, service, slice } from '../../helpers/k8s-objects.ts';

const VIP = '192.0.2.10';
const NODES = ['node-a', 'node-b', 'node-c', 'node-d', 'node-e'];

function lbVip(res: DesiredResult, svc = 'default/web'): VipDecision {
  const v = res.services.find((s) => s.service === svc)?.vips.find((x) => x.kind === 'loadBalancer');
  if (v === undefined) throw new Error(`no loadBalancer VIP of ${svc}`);
  return v;
}

function codes(v: VipDecision): string[] {
  return v.reasons.map((r) => r.code);
}

/** A store with five ready Nodes and Service web (one LB VIP) whose endpoints are `eps`. */
function cluster(etp: 'Local' | 'Cluster', eps: EpSpec[], annotations?: Record<string, string>): ObjectStore {
  const s = new ObjectStore();
  for (const n of NODES) s.apply('Node', node(n));
  const svc = service('web', { lbIPs: [VIP], etp });
  if (annotations !== undefined) svc.metadata = { ...svc.metadata, annotations };
  s.apply('Service', svc);
  s.apply('EndpointSlice', slice('web-1', 'web', eps));
  return s;
}

/** `count` ready endpoints on `nodeName`, addresses from `base`. */
function on(nodeName: string, count: number, base: number): EpSpec[] {
  return Array.from({ length: count }, (_, i): EpSpec => [`10.0.${base}.${i + 1}`, nodeName]);
}

t.test('weighting: endpoints: link bandwidth = local endpoints × bandwidthPerEndpoint, "weight 3 of 10 endpoints"', async (t) => {
  const ad: Advertisement = { name: 'lb', addressKinds: ['loadBalancer'], weighting: 'endpoints', bandwidthPerEndpoint: 1000 };
  const s = cluster('Local', [...on('node-a', 3, 1), ...on('node-b', 7, 2)]);
  const res = computeDesiredRoutes(s, { nodeName: 'node-a', allowedPrefixes: DOCUMENTATION_PREFIXES, advertisements: [ad], localAs: 65001 });
  const v = lbVip(res);
  t.equal(v.announced, true);
  t.match(v.reasons.find((r) => r.code === 'Weighted')?.message, /^weight 3 of 10 endpoints: link bandwidth 3000 bytes\/s \(3 × 1000\)/);
  t.strictSame(v.attributes, [{ advertisement: 'lb', prefix: `${VIP}/32`, announced: true, linkBandwidth: 3000, endpoints: { local: 3, total: 10 } }]);
  t.strictSame(res.routes[0]?.linkBandwidth, { asn: 65001, bytesPerSecond: 3000 }, 'the route carries it');

  const b = lbVip(computeDesiredRoutes(s, { nodeName: 'node-b', allowedPrefixes: DOCUMENTATION_PREFIXES, advertisements: [ad], localAs: 65001 }));
  t.match(b.reasons.find((r) => r.code === 'Weighted')?.message, /^weight 7 of 10 endpoints: link bandwidth 7000 bytes\/s/);

  const c = lbVip(computeDesiredRoutes(cluster('Cluster', on('node-a', 3, 1)), { nodeName: 'node-c', allowedPrefixes: DOCUMENTATION_PREFIXES, advertisements: [ad], localAs: 65001 }));
  t.equal(c.announced, true);
  t.ok(codes(c).includes('Unweighted'), 'Cluster: no weight, and the reason says why');
  t.equal(c.attributes?.[0]?.linkBandwidth, undefined);
});

t.test('locality: under Cluster, nodes without a local endpoint send the higher MED and the prepend', async (t) => {
  const ad: Advertisement = { name: 'lb', addressKinds: ['loadBalancer'], med: 10, locality: { preferLocal: true, med: 100, prependOthers: 2 } };
  const s = cluster('Cluster', on('node-a', 2, 1));
  const a = computeDesiredRoutes(s, { nodeName: 'node-a', allowedPrefixes: DOCUMENTATION_PREFIXES, advertisements: [ad] });
  const b = computeDesiredRoutes(s, { nodeName: 'node-b', allowedPrefixes: DOCUMENTATION_PREFIXES, advertisements: [ad] });
  t.equal(a.routes[0]?.med, 10);
  t.equal(a.routes[0]?.asPathPrepend, undefined);
  t.equal(b.routes[0]?.med, 110);
  t.equal(b.routes[0]?.asPathPrepend, 2);
  t.match(lbVip(a).reasons.find((r) => r.code === 'LocalityPreferred')?.message, /^preferred: 2 ready local endpoint\(s\) \(MED 10\)/);
  t.match(lbVip(b).reasons.find((r) => r.code === 'LocalityFallback')?.message, /^fallback: no ready local endpoint on node node-b \(MED 110, AS path prepended 2 time\(s\) toward eBGP peers\)/);
  t.strictSame(lbVip(b).attributes?.[0], { advertisement: 'lb', prefix: `${VIP}/32`, announced: true, med: 110, asPathPrepend: 2, endpoints: { local: 0, total: 2 }, locality: 'fallback' });
});

t.test('maxNodesPerVip 2 of 5: two nodes announce, every node names the same two, the others say why not', async (t) => {
  const ad: Advertisement = { name: 'lb', addressKinds: ['loadBalancer'], maxNodesPerVip: 2 };
  const s = cluster('Cluster', on('node-a', 1, 1));
  const views = NODES.map((n) => lbVip(computeDesiredRoutes(s, { nodeName: n, allowedPrefixes: DOCUMENTATION_PREFIXES, advertisements: [ad] })));
  const announcing = NODES.filter((_, i) => views[i]?.announced);
  t.equal(announcing.length, 2);
  for (const v of views) t.strictSame([...(v.attributes?.[0]?.choice?.nodes ?? [])].sort(), announcing, 'the same choice on every node');
  for (const v of views.filter((x) => !x.announced)) {
    t.strictSame(codes(v), ['NotChosen']);
    t.match(v.reasons[0]?.message, /^not among the 2 node\(s\) chosen for this VIP \(maxNodesPerVip 2 of 5 eligible node\(s\), advertisement lb: /);
  }
  for (const v of views.filter((x) => x.announced)) t.ok(codes(v).includes('Chosen'));
});

// ---------------------------------------------------------------------------------------------
// The rendezvous choice through the controller, every node of one snapshot deciding alone
// ---------------------------------------------------------------------------------------------

const NAMES = ['n0', 'n1', 'n2', 'n3', 'n4', 'n5', 'n6', 'n7'];
const vipsArb = fc.uniqueArray(fc.ipV4(), { minLength: 1, maxLength: 6 });
const nodesArb = fc.array(fc.record({ ready: fc.constantFrom(true, true, true, false), endpoints: fc.integer({ min: 0, max: 3 }) }), { minLength: NAMES.length, maxLength: NAMES.length });

interface Cluster {
  vips: string[];
  nodes: Array<{ ready: boolean; endpoints: number }>;
  local: boolean;
  n: number;
}

function storeOf(c: Cluster, without?: string): ObjectStore {
  const s = new ObjectStore();
  const eps: EpSpec[] = [];
  c.nodes.forEach((x, i) => {
    const name = NAMES[i] as string;
    if (name === without) return;
    s.apply('Node', node(name, { ready: x.ready ? 'True' : 'False' }));
    for (let k = 0; k < x.endpoints; k++) eps.push([`10.1.${i}.${k + 1}`, name]);
  });
  // One Service per VIP, all served by the same endpoints.
  c.vips.forEach((vip, i) => {
    s.apply('Service', service(`s${i}`, { lbIPs: [vip], etp: c.local ? 'Local' : 'Cluster', clusterIPs: [`10.96.0.${i + 1}`] }));
    if (eps.length > 0) s.apply('EndpointSlice', slice(`s${i}-1`, `s${i}`, eps));
  });
  return s;
}

/** Per VIP, the nodes announcing it, each node computing alone from the store; and the choice each node names. */
function announcers(c: Cluster, s: ObjectStore): { by: Map<string, string[]>; choices: Map<string, Set<string>> } {
  const by = new Map<string, string[]>(c.vips.map((v) => [v, []]));
  const choices = new Map<string, Set<string>>(c.vips.map((v) => [v, new Set<string>()]));
  // Any IPv4 address may be a VIP here: the property is about the rendezvous choice, not the allowed space.
  const ctx: Omit<DesiredRoutesContext, 'nodeName'> = { allowedPrefixes: ['0.0.0.0/0'], advertisements: [{ name: 'lb', addressKinds: ['loadBalancer'], maxNodesPerVip: c.n }] };
  for (const name of NAMES) {
    if (s.node(name) === undefined) continue;
    const res = computeDesiredRoutes(s, { nodeName: name, ...ctx });
    for (const svc of res.services) {
      const v = svc.vips.find((x) => x.kind === 'loadBalancer');
      if (v === undefined) continue;
      if (v.announced) by.get(v.address)?.push(name);
      const chosen = v.attributes?.[0]?.choice?.nodes;
      if (chosen !== undefined) choices.get(v.address)?.add(JSON.stringify([...chosen].sort()));
    }
  }
  return { by, choices };
}

const clusterArb = fc.record({ vips: vipsArb, nodes: nodesArb, local: fc.boolean(), n: fc.integer({ min: 1, max: 5 }) });

t.test('property: each VIP is announced by exactly min(N, eligible) nodes, and every node names the same choice', async (t) => {
  let runs = 0;
  let bounded = 0;
  fc.assert(
    fc.property(clusterArb, (c) => {
      runs++;
      const s = storeOf(c);
      const total = c.nodes.reduce((a, x) => a + x.endpoints, 0);
      const eligible = NAMES.filter((_, i) => c.nodes[i]?.ready && (!c.local || (c.nodes[i]?.endpoints ?? 0) > 0));
      const { by, choices } = announcers(c, s);
      for (const vip of c.vips) {
        const got = by.get(vip) ?? [];
        const want = total === 0 ? 0 : Math.min(c.n, eligible.length);
        if (got.length !== want) throw new Error(`${vip}: ${got.length} announcing (${got.join(', ')}), want ${want} of ${eligible.join(', ')}`);
        if (!got.every((n) => eligible.includes(n))) throw new Error(`${vip}: an ineligible node announces`);
        if (total > 0 && (choices.get(vip)?.size ?? 0) > 1) throw new Error(`${vip}: nodes disagree: ${[...(choices.get(vip) ?? [])].join(' | ')}`);
        if (want < eligible.length) bounded++;
      }
    }),
    { numRuns: 150, seed: 18 },
  );
  t.equal(runs, 150, 'ran every generated case');
  t.ok(bounded > 30, `${bounded} VIPs had more eligible nodes than N`);
});

t.test('property: removing one Node moves only the VIPs it announced', async (t) => {
  let moved = 0;
  fc.assert(
    fc.property(clusterArb, fc.integer({ min: 0, max: NAMES.length - 1 }), (c, pick) => {
      const gone = NAMES[pick] as string;
      const before = announcers(c, storeOf(c)).by;
      const after = announcers(c, storeOf(c, gone)).by;
      for (const vip of c.vips) {
        const b = before.get(vip) ?? [];
        const a = after.get(vip) ?? [];
        if (!b.includes(gone)) {
          if (JSON.stringify(a) !== JSON.stringify(b)) throw new Error(`${vip} moved from ${b.join(',')} to ${a.join(',')} though ${gone} did not hold it`);
        } else {
          moved++;
          if (!b.filter((n) => n !== gone).every((n) => a.includes(n))) throw new Error(`${vip}: a remaining node lost it`);
        }
      }
    }),
    { numRuns: 100, seed: 19 },
  );
  t.ok(moved > 10, `${moved} VIPs were held by the removed node`);
});

// ---------------------------------------------------------------------------------------------
// Per-Service annotations: reported per annotation, never withdrawing
// ---------------------------------------------------------------------------------------------

t.test('annotations: valid ones apply; a bad one is reported alone and never withdraws the VIP', async (t) => {
  // The advertisement accepts what these Services ask for (admission.ts; refusals: test/src/controller/service-attributes-admission.test.ts).
  const ad: Advertisement = { name: 'lb', addressKinds: ['loadBalancer'], communities: ['65000:1'], med: 5, serviceAttributes: { communities: ['65000:0-99'], largeCommunities: ['65000:1:0-9'], med: true, maxPrepend: 2 } };
  const ctx: DesiredRoutesContext = { nodeName: 'node-a', allowedPrefixes: DOCUMENTATION_PREFIXES, advertisements: [ad] };
  const me = evaluateNode(node('node-a'), 'node-a');
  const eps = slice('web-1', 'web', on('node-a', 1, 1));
  const svc = (annotations: Record<string, string>) => {
    const s = service('web', { lbIPs: [VIP], etp: 'Local' });
    s.metadata = { ...s.metadata, annotations };
    return s;
  };
  // The route as it goes out: the advertisement's attributes and the Service's, merged (route-merge.ts).
  const route = (c: ServiceCandidates) => mergeRoutes(c.contributions).find((x) => x.prefix === `${VIP}/32`);
  const lb = (c: ServiceCandidates) => c.decision.vips.find((v) => v.kind === 'loadBalancer') as VipDecision;

  const good = decideService(svc({ 'herald.io/communities': '65000:7 65000:8', 'herald.io/large-communities': '65000:1:2', 'herald.io/med': '50', 'herald.io/as-path-prepend': '2' }), [eps], me, ctx);
  t.strictSame(route(good)?.communities, ['65000:1', '65000:7', '65000:8'], 'added to the advertisement\'s');
  t.strictSame(route(good)?.largeCommunities, ['65000:1:2']);
  t.equal(route(good)?.med, 50, 'replaces the advertisement\'s');
  t.equal(route(good)?.asPathPrepend, 2);
  t.match(lb(good).reasons.find((r) => r.code === 'ServiceAttributes')?.message, 'annotations accepted by advertisement lb: communities 65000:7 65000:8; large communities 65000:1:2; MED 50; AS path prepend 2 toward eBGP peers');

  // Two bad annotations next to two good ones, with the good values known from before.
  const edited = decideService(svc({ 'herald.io/communities': '65000:7 65000:8', 'herald.io/large-communities': '65000:1:2', 'herald.io/med': 'fifty', 'herald.io/as-path-prepend': '99' }), [eps], me, ctx, { previous: good });
  t.equal(lb(edited).announced, true, 'still announced');
  t.equal(route(edited)?.med, 50, 'the last good MED');
  t.equal(route(edited)?.asPathPrepend, 2, 'the last good prepend');
  const bad = lb(edited).reasons.filter((r) => r.code === 'InvalidAnnotation');
  t.equal(bad.length, 2, 'one reason per bad annotation');
  t.match(bad.map((r) => r.message).join('\n'), /herald\.io\/med.*fifty.*last good value \(50\)/);
  t.match(bad.map((r) => r.message).join('\n'), /herald\.io\/as-path-prepend.*last good value \(2\)/);

  // A bad annotation with no good value seen (first sight, or after a restart): announced without it.
  const fresh = decideService(svc({ 'herald.io/med': 'fifty', 'herald.io/communities': '65000:7' }), [eps], me, ctx);
  t.equal(lb(fresh).announced, true, 'announced: the annotation says nothing about whether this node can serve the VIP');
  t.equal(route(fresh)?.med, 5, "the advertisement's MED");
  t.strictSame(route(fresh)?.communities, ['65000:1', '65000:7'], 'the good annotation applies');
  t.match(lb(fresh).reasons.find((r) => r.code === 'InvalidAnnotation')?.message, /herald\.io\/med.*announced without it \(the advertisement's MED\)/);

  // Fixed: the new value applies, no InvalidAnnotation left.
  const fixed = decideService(svc({ 'herald.io/med': '60' }), [eps], me, ctx, { previous: fresh });
  t.equal(route(fixed)?.med, 60);
  t.notOk(codes(lb(fixed)).includes('InvalidAnnotation'));
});

// ---------------------------------------------------------------------------------------------
// maxNodesPerVip from the published node set (src/k8s/node-set.ts), and the nodeSelectors list
// ---------------------------------------------------------------------------------------------

/** The node set the status leader would publish for `nodes` (each judged as its own Herald judges itself), as read back. */
function publishedOf(nodes: readonly Node[], labelKeys: readonly string[]): PublishedNodeSet {
  const entries = nodes.map((n) => {
    const name = n.metadata?.name ?? '';
    const st = evaluateNode(n, name);
    return { name, eligible: st.eligible, labels: st.labels };
  });
  return mergeNodeSet(new Map([...renderNodeSet(entries, labelKeys)].map(([name, data]) => [name, parseNodeSetShard({ metadata: { name }, data })])));
}

/** What a node's Herald holds with the node set: its own Node, Service web (LB VIP) with `eps`, and `set`. */
function nodeView(me: Node, set: PublishedNodeSet | undefined, etp: 'Local' | 'Cluster', eps: EpSpec[]): ObjectStore {
  const s = new ObjectStore();
  s.apply('Node', me);
  s.apply('Service', service('web', { lbIPs: [VIP], etp }));
  s.apply('EndpointSlice', slice('web-1', 'web', eps));
  if (set !== undefined) s.setNodeSet(set);
  return s;
}

const ZONED: Node[] = [
  node('node-a', { labels: { zone: 'a' } }),
  node('node-b', { labels: { zone: 'a', rack: 'r1' } }),
  node('node-c', { labels: { zone: 'b' } }),
  node('node-d', { labels: { zone: 'b' } }),
  node('node-e', { labels: { zone: 'b', rack: 'r9' } }),
];
const nodeNamed = (name: string): Node => ZONED.find((n) => n.metadata?.name === name) as Node;

t.test('node set: a set that does not list this node fails closed with NodeSetUnknown naming the ConfigMaps', async (t) => {
  const ad: Advertisement = { name: 'lb', addressKinds: ['loadBalancer'], maxNodesPerVip: 2 };
  const eps = on('node-a', 1, 1);
  // The leader has published every other Node, not node-a (new, or its shard not written yet).
  const without = publishedOf(ZONED.filter((n) => n.metadata?.name !== 'node-a'), []);
  const v = lbVip(computeDesiredRoutes(nodeView(nodeNamed('node-a'), without, 'Cluster', eps), { nodeName: 'node-a', allowedPrefixes: DOCUMENTATION_PREFIXES, advertisements: [ad] }));
  t.equal(v.announced, false, 'not announced');
  t.strictSame(codes(v), ['NodeSetUnknown']);
  t.equal(v.reasons[0]?.message, 'maxNodesPerVip 2 of advertisement lb cannot be decided: the node set the status leader publishes (ConfigMaps herald-node-set-*, label herald.io/node-set) does not list Node node-a yet; not announced');
  t.strictSame(v.attributes, [{ advertisement: 'lb', prefix: `${VIP}/32`, announced: false }], 'no choice shown');

  // Nothing published yet, and a shard that cannot be read: named in the reason.
  const broken = mergeNodeSet(new Map([['herald-node-set-93', { problem: 'data.eligible is not JSON (Unexpected end of JSON input)' }]]));
  const w = lbVip(computeDesiredRoutes(nodeView(nodeNamed('node-a'), broken, 'Cluster', eps), { nodeName: 'node-a', allowedPrefixes: DOCUMENTATION_PREFIXES, advertisements: [ad] }));
  t.strictSame(codes(w), ['NodeSetUnknown']);
  t.match(w.reasons[0]?.message, /does not list Node node-a yet; not readable: herald-node-set-93: data\.eligible is not JSON \(Unexpected end of JSON input\); not announced$/);

  // An advertisement that does not bound fan-out does not need the set.
  const free = lbVip(computeDesiredRoutes(nodeView(nodeNamed('node-a'), without, 'Cluster', eps), { nodeName: 'node-a', allowedPrefixes: DOCUMENTATION_PREFIXES, advertisements: [{ name: 'lb', addressKinds: ['loadBalancer'] }] }));
  t.equal(free.announced, true, 'announced by an unbounded advertisement');

  // Listed (even as not eligible by the leader's view): usable.
  const listed = publishedOf(ZONED, []);
  const x = lbVip(computeDesiredRoutes(nodeView(nodeNamed('node-a'), listed, 'Cluster', eps), { nodeName: 'node-a', allowedPrefixes: DOCUMENTATION_PREFIXES, advertisements: [ad] }));
  t.notOk(codes(x).includes('NodeSetUnknown'), 'decided once the set lists this node');
  t.equal(x.attributes?.[0]?.choice?.eligible, 5);
});

t.test("node set: a set without a label key the advertisement's node selectors read fails closed, naming the key", async (t) => {
  const ad: Advertisement = { name: 'zonal', addressKinds: ['loadBalancer'], maxNodesPerVip: 1, nodeSelector: { matchLabels: { zone: 'a' } }, nodeSelectors: [{ matchExpressions: [{ key: 'rack', operator: 'DoesNotExist' }] }, { matchLabels: { rack: 'r1' } }] };
  t.strictSame(selectorKeys(ad).sort(), ['rack', 'zone'], 'the keys of nodeSelector and of nodeSelectors');
  const eps = on('node-a', 1, 1);
  const decide = (set: PublishedNodeSet) => lbVip(computeDesiredRoutes(nodeView(nodeNamed('node-a'), set, 'Cluster', eps), { nodeName: 'node-a', allowedPrefixes: DOCUMENTATION_PREFIXES, advertisements: [ad] }));

  const none = decide(publishedOf(ZONED, []));
  t.strictSame(codes(none), ['NodeSetUnknown']);
  t.equal(none.announced, false);
  t.equal(none.reasons[0]?.message, "maxNodesPerVip 1 of advertisement zonal cannot be decided: the published node set does not carry label(s) zone, rack that advertisement zonal's nodeSelector reads (the status leader publishes them once it runs this configuration); not announced");

  const zoneOnly = decide(publishedOf(ZONED, ['zone']));
  t.strictSame(codes(zoneOnly), ['NodeSetUnknown']);
  t.match(zoneOnly.reasons[0]?.message, /does not carry label\(s\) rack that advertisement zonal's nodeSelector reads/, 'the key of nodeSelectors named');

  // One shard without the key (an older leader's, mid-rollout) is as if no shard carried it.
  const mixed = mergeNodeSet(new Map([
    ...[...renderNodeSet([{ name: 'node-a', eligible: true, labels: { zone: 'a' } }], ['rack', 'zone'])].map(([name, data]) => [name, parseNodeSetShard({ metadata: { name }, data })] as const),
    ...[...renderNodeSet([{ name: 'node-c', eligible: true, labels: { zone: 'b' } }], ['zone'])].map(([name, data]) => [name, parseNodeSetShard({ metadata: { name }, data })] as const),
  ]));
  t.match(decide(mixed).reasons[0]?.message, /does not carry label\(s\) rack /);

  const both = decide(publishedOf(ZONED, ['rack', 'zone']));
  t.notOk(codes(both).includes('NodeSetUnknown'), 'decided with both keys');
  // zone a and (no rack, or rack r1): node-a and node-b.
  t.equal(both.attributes?.[0]?.choice?.eligible, 2);
});

t.test('node set: a complete set gives every node the choice the Node objects give', async (t) => {
  const zoneArb = fc.constantFrom('a', 'b', undefined);
  const labelled = fc.array(zoneArb, { minLength: NAMES.length, maxLength: NAMES.length });
  let runs = 0;
  let decided = 0;
  fc.assert(
    fc.property(clusterArb, labelled, fc.boolean(), (c, zones, selecting) => {
      runs++;
      const ad: Advertisement = { name: 'lb', addressKinds: ['loadBalancer'], maxNodesPerVip: c.n, ...(selecting ? { nodeSelectors: [{ matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] }, { matchExpressions: [{ key: 'zone', operator: 'DoesNotExist' }] }] } : {}) };
      const all = storeOf(c);
      const nodes: Node[] = [];
      for (const n of [...all.nodes()]) {
        const i = NAMES.indexOf(n.metadata?.name ?? '');
        const zone = zones[i];
        const relabelled: Node = { ...n, metadata: { ...n.metadata, labels: { ...(zone !== undefined ? { zone } : {}), 'kubernetes.io/hostname': n.metadata?.name ?? '' } } };
        all.apply('Node', relabelled);
        nodes.push(relabelled);
      }
      // Every node's Herald, each with its own Node and the published set only.
      const set = publishedOf(nodes, selectorKeys(ad));
      for (const me of nodes) {
        const name = me.metadata?.name ?? '';
        const own = new ObjectStore();
        own.apply('Node', me);
        for (const svc of all.services()) {
          own.apply('Service', svc);
          for (const sl of all.endpointSlicesFor(`default/${svc.metadata?.name ?? ''}`)) own.apply('EndpointSlice', sl);
        }
        own.setNodeSet(set);
        const ctx: DesiredRoutesContext = { nodeName: name, allowedPrefixes: ['0.0.0.0/0'], advertisements: [ad] };
        const fromNodes = computeDesiredRoutes(all, ctx).services.map((s) => s.vips.filter((v) => v.kind === 'loadBalancer'));
        const fromSet = computeDesiredRoutes(own, ctx).services.map((s) => s.vips.filter((v) => v.kind === 'loadBalancer'));
        const a = JSON.stringify(fromNodes);
        const b = JSON.stringify(fromSet);
        if (a !== b) throw new Error(`${name}: from the Nodes ${a}\nfrom the set ${b}`);
        decided += fromSet.flat().filter((v) => v.attributes?.[0]?.choice !== undefined).length;
      }
    }),
    { numRuns: 60, seed: 31 },
  );
  t.equal(runs, 60, 'ran every generated case');
  t.ok(decided > 100, `${decided} rendezvous choices compared`);
});

t.test("maxNodesPerVip: the advertisement's nodeSelectors (the list) restrict the rendezvous candidates", async (t) => {
  const ad: Advertisement = { name: 'zonal', addressKinds: ['loadBalancer'], maxNodesPerVip: 1, nodeSelectors: [{ matchLabels: { zone: 'a' } }, { matchLabels: { rack: 'r9' } }] };
  // Every node holds an endpoint; Cluster policy: every Node passing the selectors is a candidate.
  const eps = ZONED.flatMap((n, i) => on(n.metadata?.name ?? '', 1, i + 1));
  const views = new Map<string, VipDecision>();
  for (const from of ['nodes', 'set'] as const) {
    for (const me of ['node-a', 'node-b', 'node-e']) {
      const s = from === 'set' ? nodeView(nodeNamed(me), publishedOf(ZONED, selectorKeys(ad)), 'Cluster', eps) : nodeView(nodeNamed(me), undefined, 'Cluster', eps);
      if (from === 'nodes') for (const n of ZONED) s.apply('Node', n);
      const v = lbVip(computeDesiredRoutes(s, { nodeName: me, allowedPrefixes: DOCUMENTATION_PREFIXES, advertisements: [ad] }));
      views.set(`${from} ${me}`, v);
      t.equal(v.attributes?.[0]?.choice?.eligible, 3, `${me} (${from === 'set' ? 'the published set' : 'the Node objects'}): node-a, node-b (zone a) and node-e (rack r9) are the candidates`);
      t.ok((v.attributes?.[0]?.choice?.nodes ?? []).every((n) => ['node-a', 'node-b', 'node-e'].includes(n)), 'the chosen node is one of them');
    }
  }
  const announcing = [...views].filter(([, v]) => v.announced).map(([k]) => k);
  t.equal(announcing.length, 2, `one node announces, in both views: ${announcing.join(', ')}`);
});
