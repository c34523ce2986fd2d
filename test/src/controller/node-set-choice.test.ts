// The rendezvous choice of maxNodesPerVip from the published node set (src/k8s/node-set.ts, src/controller/steering.ts
// `publishedClusterNodes`), through decideService as the controller runs it: the same choice as from the Node objects
// once the set lists this node; fail closed before (NodeSetUnknown: never newly announced), and what this node
// announced already is kept while the set cannot be read (setting the bound on a live advertisement moves no traffic).
import t from 'tap';
import type { Advertisement, DesiredRoutesContext, ServiceCandidates } from '../../../src/controller/desired-routes.ts';
import { decideService } from '../../../src/controller/desired-routes.ts';
import { evaluateNode } from '../../../src/controller/node-eligibility.ts';
import { clusterNodes, publishedClusterNodes } from '../../../src/controller/steering.ts';
import type { ClusterNodes } from '../../../src/controller/steering.ts';
import { mergeNodeSet, nodeSetObjectName, parseNodeSetShard, renderNodeSet, stampShard } from '../../../src/k8s/node-set.ts';
import type { PublishedNodeSet } from '../../../src/k8s/node-set.ts';
import { DOCUMENTATION_PREFIXES, node, service, slice } from '../../helpers/k8s-objects.ts';

const VIPS = Array.from({ length: 12 }, (_, i) => `192.0.2.${10 + i}`);
const NODES = ['node-a', 'node-b', 'node-c', 'node-d', 'node-e'];
const AD: Advertisement = { name: 'lb', addressKinds: ['loadBalancer'], maxNodesPerVip: 2, nodeSelector: { matchLabels: { rack: 'r1' } } };
const ctx = (me: string): DesiredRoutesContext => ({ nodeName: me, allowedPrefixes: DOCUMENTATION_PREFIXES, advertisements: [AD] });
const svc = service('web', { lbIPs: VIPS, etp: 'Cluster' });
const eps = slice('web-1', 'web', [['10.0.0.1', 'node-a']]);
const labels = (n: string) => ({ rack: n === 'node-e' ? 'r2' : 'r1', 'kubernetes.io/hostname': n });
const me = (n: string) => evaluateNode(node(n, { labels: labels(n) }), n);

/** The set as the nodes read it back from the shards the publisher writes for `names` (`ineligible` NotReady). */
function published(names: string[], keys: string[], ineligible: string[] = []): PublishedNodeSet {
  const data = renderNodeSet(names.map((name) => ({ name, eligible: !ineligible.includes(name), labels: labels(name) })), keys);
  return mergeNodeSet(new Map([...data].map(([name, d]) => [name, parseNodeSetShard({ metadata: { name }, data: d })])));
}

function chosen(c: ServiceCandidates): string[] {
  return c.contributions.map((x) => x.prefix.replace('/32', '')).sort();
}

t.test('a complete set: every node makes the choice it makes from the Node objects, and the bound holds', async (t) => {
  const set = published(NODES, ['rack']);
  const fromNodes: ClusterNodes = clusterNodes(NODES.map((n) => node(n, { labels: labels(n) })));
  const holders = new Map<string, number>();
  for (const n of NODES) {
    const a = decideService(svc, [eps], me(n), ctx(n), { cluster: publishedClusterNodes(set, n) });
    const b = decideService(svc, [eps], me(n), ctx(n), { cluster: fromNodes });
    t.strictSame(chosen(a), chosen(b), `${n}: the same VIPs from the published set as from the Node objects`);
    for (const v of chosen(a)) holders.set(v, (holders.get(v) ?? 0) + 1);
  }
  t.equal(holders.size, VIPS.length, 'every VIP is announced by some node');
  t.ok([...holders.values()].every((k) => k === 2), 'each by exactly 2 nodes (maxNodesPerVip 2)');
  t.equal(decideService(svc, [eps], me('node-e'), ctx('node-e'), { cluster: publishedClusterNodes(set, 'node-e') }).contributions.length, 0, "node-e (rack r2) is outside the advertisement's nodeSelector");
});

t.test('a set that does not list this node yet: nothing newly announced, the reason names the ConfigMaps', async (t) => {
  const set = published(['node-b', 'node-c'], ['rack']);
  const c = decideService(svc, [eps], me('node-a'), ctx('node-a'), { cluster: publishedClusterNodes(set, 'node-a') });
  t.equal(c.contributions.length, 0, 'no VIP announced');
  const r = c.decision.vips[0]?.reasons.find((x) => x.code === 'NodeSetUnknown');
  t.match(r?.message, /does not list Node node-a yet.*not announced$/, 'NodeSetUnknown, and why');
  t.match(r?.message, /ConfigMaps herald-node-set-\*, label herald\.io\/node-set/);
  const none = decideService(svc, [eps], me('node-a'), ctx('node-a'), { cluster: publishedClusterNodes(mergeNodeSet(new Map()), 'node-a') });
  t.equal(none.contributions.length, 0, 'nothing published at all: nothing announced either');
});

t.test('a set without a label key the selector reads: fail closed, the key named', async (t) => {
  const set = published(NODES, []);
  const c = decideService(svc, [eps], me('node-a'), ctx('node-a'), { cluster: publishedClusterNodes(set, 'node-a') });
  t.equal(c.contributions.length, 0);
  t.match(c.decision.vips[0]?.reasons.find((x) => x.code === 'NodeSetUnknown')?.message, /does not carry label\(s\) rack that advertisement lb's nodeSelector reads/);
});

t.test('a shard that cannot be read: its Nodes are not listed, and the reason names it', async (t) => {
  const good = renderNodeSet(NODES.filter((n) => n !== 'node-a').map((name) => ({ name, eligible: true, labels: labels(name) })), ['rack']);
  const shards = new Map<string, ReturnType<typeof parseNodeSetShard> | { problem: string }>([...good].map(([name, d]) => [name, parseNodeSetShard({ metadata: { name }, data: d })]));
  shards.set(nodeSetObjectName(255), { problem: 'data.eligible is not JSON' });
  const c = decideService(svc, [eps], me('node-a'), ctx('node-a'), { cluster: publishedClusterNodes(mergeNodeSet(shards), 'node-a') });
  t.equal(c.contributions.length, 0);
  t.match(c.decision.vips[0]?.reasons.find((x) => x.code === 'NodeSetUnknown')?.message, /not readable: herald-node-set-ff: data\.eligible is not JSON/);
});

t.test('what this node announced already is kept while the set is unknown; never newly announced', async (t) => {
  // Before the bound: node-a announced every VIP (an advertisement without maxNodesPerVip).
  const unbounded: Advertisement = { name: 'lb', addressKinds: ['loadBalancer'] };
  const before = decideService(svc, [eps], me('node-a'), { ...ctx('node-a'), advertisements: [unbounded] });
  t.equal(before.contributions.length, VIPS.length, 'every VIP from node-a before the bound');
  // The bound is set; the controller has not published yet.
  const unknown = publishedClusterNodes(mergeNodeSet(new Map()), 'node-a');
  const kept = decideService(svc, [eps], me('node-a'), ctx('node-a'), { cluster: unknown, previous: before });
  t.equal(kept.contributions.length, VIPS.length, 'kept: no traffic moves while the set is unknown');
  t.match(kept.decision.vips[0]?.reasons.find((x) => x.code === 'NodeSetUnknown')?.message, /kept, as this node announced it already$/);
  // One VIP more, never announced by node-a: not newly announced.
  const more = service('web', { lbIPs: [...VIPS, '192.0.2.99'], etp: 'Cluster' });
  const next = decideService(more, [eps], me('node-a'), ctx('node-a'), { cluster: unknown, previous: kept });
  t.equal(next.contributions.length, VIPS.length, 'the new VIP is not announced');
  t.notOk(next.contributions.some((c) => c.prefix === '192.0.2.99/32'));
  // Once the set lists node-a, the choice applies: node-a keeps only what it wins.
  const known = decideService(svc, [eps], me('node-a'), ctx('node-a'), { cluster: publishedClusterNodes(published(NODES, ['rack']), 'node-a'), previous: kept });
  t.ok(known.contributions.length < VIPS.length, `the bound applies once known (${known.contributions.length} of ${VIPS.length})`);
});

t.test('a first publish read halfway (shard by shard): no node decides from it; whole, every node does', async (t) => {
  // The publisher stamps each shard with the whole set's count and a rising sequence (src/k8s/node-set.ts).
  const data = [...renderNodeSet(NODES.map((name) => ({ name, eligible: true, labels: labels(name) })), ['rack'])];
  t.ok(data.length >= 3, `${data.length} shards for ${NODES.length} Nodes`);
  const read = (n: number) => mergeNodeSet(new Map(data.slice(0, n).map(([name, d], i) => [name, parseNodeSetShard({ metadata: { name }, data: stampShard(d, NODES.length, 100 + i) })])));
  for (let n = 1; n < data.length; n++) {
    const set = read(n);
    for (const node of [...set.listed]) {
      const c = decideService(svc, [eps], me(node), ctx(node), { cluster: publishedClusterNodes(set, node) });
      t.equal(c.contributions.length, 0, `${n} of ${data.length} shards read: ${node}, listed, announces nothing`);
      t.match(c.decision.vips[0]?.reasons.find((x) => x.code === 'NodeSetUnknown')?.message, new RegExp(`is being written: ${set.listed.size} of ${NODES.length} Nodes read`));
    }
  }
  const whole = read(data.length);
  t.equal(whole.expected, NODES.length);
  const holders = new Map<string, number>();
  for (const n of NODES) for (const v of chosen(decideService(svc, [eps], me(n), ctx(n), { cluster: publishedClusterNodes(whole, n) }))) holders.set(v, (holders.get(v) ?? 0) + 1);
  t.ok(holders.size === VIPS.length && [...holders.values()].every((k) => k === 2), 'whole: each VIP from exactly 2 nodes');
});
