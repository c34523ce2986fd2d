// The writer of the published node set (src/status/node-set-publisher.ts, issue 31 item 4) against the fake
// apiserver: one ConfigMap per shard that holds a Node, written only when a Node's eligibility or a carried label
// changes (never for a heartbeat), each shard at most once per minIntervalMs, deleted when no advertisement bounds
// fan-out; a 403 is counted and stops the pass; nothing is written while not leading. Then through the status leader
// (src/status/object-status-writer.ts): it publishes the set even where Herald's CRDs are not served, and a Herald
// that does not hold the Lease publishes nothing.
import t from 'tap';
import type { Test } from 'tap';
import { pino } from 'pino';
import { validateConfig } from '../../../src/config/load.ts';
import type { Config } from '../../../src/config/schema.ts';
import { mergeConfig } from '../../../src/crd/merge.ts';
import { nodeSetSpec } from '../../../src/daemon/cluster-components.ts';
import { KubeClient } from '../../../src/k8s/client.ts';
import { ForbiddenCalls } from '../../../src/k8s/forbidden.ts';
import { mergeNodeSet, NODE_SET_LABEL, nodeSetObjectName, nodeSetShard, parseNodeSetShard, renderNodeSet, stampShard } from '../../../src/k8s/node-set.ts';
import type { Node } from '../../../src/k8s/types.ts';
import { KubernetesSource } from '../../../src/sources/kubernetes.ts';
import type { NodeSetWriteResult } from '../../../src/status/node-set-publisher.ts';
import { NodeSetPublisher } from '../../../src/status/node-set-publisher.ts';
import { ObjectStatusWriter } from '../../../src/status/object-status-writer.ts';
import { FakeApiServer } from '../../helpers/fake-apiserver.ts';
import type { RequestLog } from '../../helpers/fake-apiserver.ts';
import { node } from '../../helpers/k8s-objects.ts';
import { waitFor } from '../../helpers/k8s-wait.ts';
import { MemoryLeaseStore } from '../../helpers/sim.ts';

const NS = 'herald-system';
const CONFIGMAPS = `/api/v1/namespaces/${NS}/configmaps`;
const MIN_MS = 1000;

/**
 * Two advertisements bound fan-out, one reading `zone` (nodeSelector), one `rack` (nodeSelectors); a third, unbounded,
 * reads `tier`: only zone and rack are carried.
 */
function config(): Config {
  const r = validateConfig({
    bgp: { localAs: 65000, routerId: '10.0.0.1' },
    advertisements: [
      { name: 'spread', maxNodesPerVip: 2, nodeSelector: { matchLabels: { zone: 'a' } } },
      { name: 'racks', maxNodesPerVip: 1, nodeSelectors: [{ matchExpressions: [{ key: 'rack', operator: 'Exists' }] }] },
      { name: 'all', nodeSelector: { matchLabels: { tier: 'edge' } } },
    ],
  });
  if (!r.ok) throw new Error(`config: ${JSON.stringify(r.errors)}`);
  return r.config;
}

// Three shards: node-a and node-117 share 0x93; n1 is alone in 0x00; worker-0042 and node-358 share 0xc4
// (test/src/k8s/node-set.test.ts pins the shard function).
interface NodeSpec {
  ready?: boolean;
  labels?: Record<string, string>;
  heartbeat?: string;
}
const CLUSTER: Record<string, NodeSpec> = {
  'node-a': { labels: { zone: 'a', rack: 'r1' } },
  'node-117': { labels: { zone: 'a' } },
  n1: { labels: { zone: 'b', tier: 'edge' } },
  'worker-0042': { labels: { rack: 'r2' } },
  'node-358': { labels: { zone: 'a' } },
};

function nodes(specs: Record<string, NodeSpec>): Node[] {
  return Object.entries(specs).map(([name, s]) => {
    const n = node(name, { ready: s.ready === false ? 'False' : 'True', labels: { 'kubernetes.io/hostname': name, ...s.labels } });
    // What a kubelet's heartbeat changes (kubelet's node status updates): the conditions' lastHeartbeatTime.
    for (const c of n.status?.conditions ?? []) Object.assign(c, { lastHeartbeatTime: s.heartbeat ?? '2026-01-01T00:00:00Z' });
    return n;
  });
}

const shardOf = (name: string): string => nodeSetObjectName(nodeSetShard(name));

/** The writes (every request but reads) of the node set's ConfigMaps, as "METHOD name". */
function writes(api: FakeApiServer, from = 0): string[] {
  return api.requests
    .slice(from)
    .filter((r: RequestLog) => r.method !== 'GET' && r.path.startsWith(CONFIGMAPS))
    .map((r) => `${r.method} ${r.path.slice(CONFIGMAPS.length + 1) || '(collection)'}`);
}

/** The shards in the apiserver, by name: their data. */
/** The shards in the apiserver, by name: what they list (their stamps apart: see {@link stamps}). */
function published(api: FakeApiServer): Map<string, Record<string, string>> {
  return new Map(
    api
      .list('configmaps')
      .filter((c) => Object.hasOwn(c.metadata?.labels ?? {}, NODE_SET_LABEL))
      .map((c) => {
        const { total: _total, seq: _seq, ...listing } = c.data as Record<string, string>;
        return [c.metadata.name as string, listing];
      }),
  );
}

/** The shards' stamps, by name: [total, seq]. */
function stamps(api: FakeApiServer): Map<string, [number, number]> {
  return new Map(api.list('configmaps').filter((c) => Object.hasOwn(c.metadata?.labels ?? {}, NODE_SET_LABEL)).map((c) => [c.metadata.name as string, [Number(c.data?.total), Number(c.data?.seq)]]));
}

async function setup(t: Test, before?: (api: FakeApiServer) => void) {
  const api = new FakeApiServer();
  await api.start();
  before?.(api);
  const kc = new KubeClient({ server: api.url, token: 't' }, { limit: { qps: 0 } });
  const forbidden = new ForbiddenCalls();
  const results: NodeSetWriteResult[] = [];
  const lines: string[] = [];
  const log = pino({ level: 'info' }, { write: (l: string) => void lines.push(l) });
  const pub = new NodeSetPublisher({ kc, namespace: NS, forbidden, log, onWrite: (r) => results.push(r), minIntervalMs: MIN_MS });
  let events = 0;
  pub.start(() => events++);
  t.teardown(async () => {
    await pub.stop();
    await api.stop();
  });
  await waitFor(() => pub.synced(), 'the shards read once');
  return {
    api,
    pub,
    forbidden,
    results,
    lines,
    /** Resolves once the publisher's watch has brought `n` more changes than when `mark()` was taken. */
    mark: () => {
      const at = events;
      return (n: number) => waitFor(() => events >= at + n, `${n} change(s) of the shards seen by the publisher`);
    },
  };
}

t.test('one ConfigMap per shard that holds a Node; rewritten only when eligibility or a carried label changes', async (t) => {
  const { api, pub, results, mark } = await setup(t, (api) => {
    // Not a shard: never touched.
    api.upsert('configmaps', { metadata: { name: 'herald-config', namespace: NS }, data: { x: '1' } });
  });
  const spec = nodeSetSpec(config());
  t.strictSame([...(spec?.labelKeys ?? [])].sort(), ['rack', 'zone'], "the bounded advertisements' keys, not the unbounded one's");
  const yes = () => true;

  let seen = mark();
  t.equal(await pub.publish(spec, nodes(CLUSTER), 0, yes), Number.POSITIVE_INFINITY, 'nothing held back');
  t.strictSame(writes(api), ['POST (collection)', 'POST (collection)', 'POST (collection)'], 'three creates');
  t.strictSame(results, ['ok', 'ok', 'ok'], 'counted');
  const shards = published(api);
  t.strictSame([...shards.keys()].sort(), ['herald-node-set-00', 'herald-node-set-93', 'herald-node-set-c4'], 'one object per non-empty shard');
  t.strictSame(shards.get('herald-node-set-93'), { eligible: '{"node-117":{"zone":"a"},"node-a":{"rack":"r1","zone":"a"}}', ineligible: '[]', labelKeys: '["rack","zone"]' }, 'the carried labels only');
  t.strictSame(shards.get('herald-node-set-00'), { eligible: '{"n1":{"zone":"b"}}', ineligible: '[]', labelKeys: '["rack","zone"]' }, "the unbounded advertisement's tier is not carried");
  const cm = api.get('configmaps', NS, 'herald-node-set-c4');
  t.strictSame(cm?.metadata?.labels, { [NODE_SET_LABEL]: '', 'app.kubernetes.io/managed-by': 'herald' }, 'labelled for the nodes’ watch');
  await seen(3);

  // Heartbeats, and labels no bounded advertisement reads: the same text, nothing written.
  const quiet = Object.fromEntries(Object.entries(CLUSTER).map(([n, s]) => [n, { ...s, heartbeat: '2026-01-01T00:05:00Z', labels: { ...s.labels, tier: 'core', 'node.kubernetes.io/instance-type': 'm5.large' } }]));
  const before = api.requests.length;
  t.equal(await pub.publish(spec, nodes(quiet), 10_000, yes), Number.POSITIVE_INFINITY);
  t.strictSame(writes(api, before), [], 'a heartbeat writes nothing');
  t.strictSame(results, ['ok', 'ok', 'ok']);

  // node-358 turns NotReady: its shard alone is replaced, guarded by its resourceVersion.
  seen = mark();
  const notReady = { ...quiet, 'node-358': { ...quiet['node-358'], ready: false } };
  let from = api.requests.length;
  const rv = api.get('configmaps', NS, shardOf('node-358'))?.metadata?.resourceVersion as string;
  t.equal(await pub.publish(spec, nodes(notReady), 20_000, yes), Number.POSITIVE_INFINITY);
  t.strictSame(writes(api, from), [`PUT ${shardOf('node-358')}`], 'exactly its one shard rewritten');
  t.strictSame(published(api).get(shardOf('node-358')), { eligible: '{"worker-0042":{"rack":"r2"}}', ineligible: '["node-358"]', labelKeys: '["rack","zone"]' });
  t.not(api.get('configmaps', NS, shardOf('node-358'))?.metadata?.resourceVersion, rv, 'replaced');
  await seen(1);

  // worker-0042, in the same shard, changes a carried label 100 ms later: held back, and the wait returned.
  const relabelled = { ...notReady, 'worker-0042': { labels: { rack: 'r3' } } };
  from = api.requests.length;
  t.equal(await pub.publish(spec, nodes(relabelled), 20_100, yes), MIN_MS - 100, 'due in minIntervalMs - 100 ms');
  t.strictSame(writes(api, from), [], 'not written within minIntervalMs of the last write');
  seen = mark();
  t.equal(await pub.publish(spec, nodes(relabelled), 20_000 + MIN_MS, yes), Number.POSITIVE_INFINITY);
  t.strictSame(writes(api, from), [`PUT ${shardOf('worker-0042')}`], 'written once due');
  t.match(published(api).get(shardOf('worker-0042'))?.['eligible'], '"rack":"r3"');
  await seen(1);

  // Nothing bounds fan-out any more: every shard is deleted, the other ConfigMap kept.
  from = api.requests.length;
  t.equal(await pub.publish(undefined, nodes(relabelled), 30_000, yes), Number.POSITIVE_INFINITY);
  t.strictSame(writes(api, from).sort(), ['DELETE herald-node-set-00', 'DELETE herald-node-set-93', 'DELETE herald-node-set-c4']);
  t.strictSame(published(api).size, 0, 'no shard left');
  t.ok(api.get('configmaps', NS, 'herald-config'), 'a ConfigMap without the label is not touched');
  t.strictSame(results, Array(8).fill('ok'), '3 creates, 2 replacements, 3 deletions');
});

t.test("a new leader rewrites nothing that is in place, and writes empty a shard no Node is in (its stamp says the Node is gone)", async (t) => {
  const spec = nodeSetSpec(config());
  if (spec === undefined) throw new Error('spec');
  const { api, pub, results } = await setup(t, (api) => {
    // What the previous leader wrote for these Nodes, and a shard of a Node since gone.
    const entries = nodes(CLUSTER).map((n) => spec.entry(n)).filter((e) => e !== undefined);
    for (const [name, data] of renderNodeSet([...entries, { name: 'gone-node', eligible: true, labels: {} }], spec.labelKeys)) {
      api.upsert('configmaps', { metadata: { name, namespace: NS, labels: { [NODE_SET_LABEL]: '' } }, data: stampShard(data, entries.length + 1, 500) });
    }
  });
  const stale = shardOf('gone-node');
  t.ok(!['herald-node-set-00', 'herald-node-set-93', 'herald-node-set-c4'].includes(stale), `gone-node has a shard of its own (${stale})`);
  t.equal(published(api).size, 4);
  await pub.publish(spec, nodes(CLUSTER), 0, () => true);
  t.strictSame(writes(api), [`PUT ${stale}`], 'only the stale shard is written');
  t.strictSame(published(api).get(stale), { eligible: '{}', ineligible: '[]', labelKeys: JSON.stringify(spec.labelKeys.slice().sort()) }, 'empty');
  t.strictSame(stamps(api).get(stale), [5, 501], "stamped with the set's 5 Nodes, after the previous leader's newest write (its clock behind)");
  t.strictSame(results, ['ok']);
  // What a node reads now: whole, without gone-node.
  const set = mergeNodeSet(new Map([...api.list('configmaps')].filter((c) => Object.hasOwn(c.metadata?.labels ?? {}, NODE_SET_LABEL)).map((c) => [c.metadata.name as string, parseNodeSetShard(c)])));
  t.equal(set.expected, 5);
  t.equal(set.listed.size, 5, 'whole: as many Nodes as the newest stamp says');
  t.notOk(set.listed.has('gone-node'));
});

t.test('a ConfigMap of a shard\'s name without the label (made by hand): taken over by an unconditional replace, labelled', async (t) => {
  const spec = nodeSetSpec(config());
  if (spec === undefined) throw new Error('spec');
  const { api, pub, results } = await setup(t, (api) => api.upsert('configmaps', { metadata: { name: 'herald-node-set-00', namespace: NS }, data: { note: 'by hand' } }));
  await pub.publish(spec, nodes(CLUSTER), 0, () => true);
  t.ok(writes(api).includes('PUT herald-node-set-00'), `the create's 409 is followed by a replace (${writes(api).join(', ')})`);
  t.strictSame(results, ['ok', 'ok', 'ok'], 'every shard written');
  t.equal(published(api).size, 3, 'every shard carries the label, so the nodes read them');
});

t.test('not leading: nothing written; the Lease lost during a pass stops it before the next write', async (t) => {
  const { api, pub, results } = await setup(t);
  const spec = nodeSetSpec(config());
  t.equal(await pub.publish(spec, nodes(CLUSTER), 0, () => false), Number.POSITIVE_INFINITY);
  t.strictSame(writes(api), [], 'leading() false: no write');
  t.strictSame(results, []);
  let asked = 0;
  await pub.publish(spec, nodes(CLUSTER), 0, () => ++asked === 1);
  t.strictSame(writes(api), ['POST (collection)'], 'leading() asked before each write: one write, then it stops');
  t.equal(asked, 2);
});

t.test('a 403 on create is counted as forbidden, recorded once, and ends the pass; the next pass writes', async (t) => {
  const { api, pub, forbidden, results, lines } = await setup(t);
  const spec = nodeSetSpec(config());
  // RBAC grants list and watch of ConfigMaps, not create: the informer keeps reading.
  api.failResource('configmaps', 403, { methods: ['POST'] });
  t.equal(await pub.publish(spec, nodes(CLUSTER), 0, () => true), Number.POSITIVE_INFINITY);
  t.strictSame(writes(api), ['POST (collection)'], 'one create tried, then the pass ends');
  t.strictSame(results, ['forbidden'], 'counted as forbidden');
  t.match(forbidden.list(), [/^create configmaps: HTTP 403: .*cannot create resource "configmaps" in API group "" in the namespace "herald-system"/], 'recorded for herald status');
  t.equal(pub.forbidden(), '', "the informer's reads are not refused");
  const warned = lines.filter((l) => l.includes('writing the node set'));
  t.equal(warned.length, 1, 'one warning');
  t.match(JSON.parse(warned[0] ?? '{}'), { msg: /^writing the node set \(create herald-node-set-00\) failed/, err: /^HTTP 403: .*cannot create resource "configmaps"/ }, 'naming the shard and the refusal');
  // The next shards' creates are refused too, each naming its own shard: still that one warning (per verb and code).
  await pub.publish(spec, nodes(CLUSTER), 1, () => true);
  await pub.publish(spec, nodes(CLUSTER), 2, () => true);
  t.equal(writes(api).length, 3, 'one create tried per pass, on another shard each time');
  t.equal(lines.filter((l) => l.includes('writing the node set')).length, 1, 'warned once, not once per shard');

  api.failResource('configmaps', undefined);
  const from = api.requests.length;
  await pub.publish(spec, nodes(CLUSTER), 3 * MIN_MS, () => true);
  t.strictSame(writes(api, from), ['POST (collection)', 'POST (collection)', 'POST (collection)'], 'granted: every shard created');
  t.strictSame(forbidden.list(), [], 'no longer forbidden');
  t.equal(published(api).size, 3);
});

t.test("the shards cannot be listed (403): nothing is written, and herald status shows why", async (t) => {
  const { api, pub, results } = await setup(t, (api) => api.failResource('configmaps', 403));
  t.match(pub.forbidden(), /^(list|watch) configmaps: HTTP 403: .*cannot (list|watch) resource "configmaps"/);
  t.equal(await pub.publish(nodeSetSpec(config()), nodes(CLUSTER), 0, () => true), Number.POSITIVE_INFINITY);
  t.strictSame(writes(api), [], 'not created blind (what exists is not known)');
  t.strictSame(results, []);
});

// ---------------------------------------------------------------------------------------------
// Through the status leader
// ---------------------------------------------------------------------------------------------

t.test('the status leader publishes the node set where the herald.io CRDs are not served; a non-leader publishes nothing', async (t) => {
  // Only the built-in resources: every herald.io request answers 404.
  const api = new FakeApiServer();
  await api.start();
  for (const [name, s] of Object.entries(CLUSTER)) api.upsert('nodes', nodes({ [name]: s })[0] as Node);
  const client = (version: string) => new KubeClient({ server: api.url, token: 't' }, { version, limit: { qps: 0 } });
  const source = new KubernetesSource({ kc: client('source'), heraldNamespace: NS, nodeName: 'n1', serviceCIDRs: false, initialBackoffMs: 20, maxBackoffMs: 200 });
  source.on('error', () => {});
  await source.start();
  const file = config();
  const leases = new MemoryLeaseStore();
  const results: NodeSetWriteResult[] = [];
  const log = pino({ level: 'silent' });
  const writer = (identity: string) =>
    new ObjectStatusWriter({
      kc: client(identity),
      namespace: NS,
      identity,
      source,
      merged: () => mergeConfig(file, { BGPPeer: [], BGPAdvertisement: [], IPAddressPool: [], BGPNodeConfigOverride: [] }, identity),
      poolUsage: () => [],
      forbidden: new ForbiddenCalls(),
      log,
      leases,
      nodeSet: () => nodeSetSpec(file),
      onNodeSetWrite: (r) => results.push(r),
      minIntervalMs: 200,
      resyncMs: 300,
    });
  const leader = writer('leader');
  const follower = writer('follower');
  t.teardown(async () => {
    await follower.stop();
    await leader.stop();
    await source.stop();
    await api.stop();
  });
  leader.start();
  await waitFor(() => leader.isLeader(), 'the first candidate leads');
  follower.start();
  await waitFor(() => published(api).size === 3, 'the node set published', 20_000);
  // The apiserver holds the last object before the writer has read its answer.
  await waitFor(() => results.length >= 3, 'the writes counted');
  t.ok(api.requests.some((r) => r.path.endsWith('/bgpnodestatuses')), 'the leader asked for the BGPNodeStatus objects (404: not served)');
  t.strictSame(published(api).get('herald-node-set-93'), { eligible: '{"node-117":{"zone":"a"},"node-a":{"rack":"r1","zone":"a"}}', ineligible: '[]', labelKeys: '["rack","zone"]' });
  t.ok(results.length >= 3 && results.every((r) => r === 'ok'), `counted through onNodeSetWrite: ${results.join(', ')}`);

  // A Node turns NotReady: the leader's Node watch brings it, its shard is rewritten.
  api.upsert('nodes', nodes({ 'node-358': { ...CLUSTER['node-358'], ready: false } })[0] as Node);
  await waitFor(() => published(api).get(shardOf('node-358'))?.['ineligible'] === '["node-358"]', 'node-358 published as ineligible', 20_000);

  // Several passes of both (resync every 300 ms): the follower never reads or writes the node set.
  await new Promise((r) => setTimeout(r, 1500));
  t.ok(leader.isLeader() && !follower.isLeader(), 'one leader');
  const followers = api.requests.filter((r) => r.userAgent.startsWith('herald/follower ') && r.path.startsWith(CONFIGMAPS));
  t.strictSame(followers, [], 'the non-leader sent no request for the node set');
  t.ok(api.requests.some((r) => r.userAgent.startsWith('herald/leader ') && r.method === 'PUT' && r.path.startsWith(CONFIGMAPS)), "the leader's client wrote it");
});
