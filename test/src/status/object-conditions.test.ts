// The conditions of Herald's configuration objects (src/status/object-conditions.ts): node statuses + objects + the
// nodes whose Herald pod is Ready + the merge's verdicts → Valid and InUse with their counts, as the elected status
// writer writes them.
import t from 'tap';
import { validateConfig } from '../../../src/config/load.ts';
import type { Config } from '../../../src/config/schema.ts';
import type { ConfigObjects } from '../../../src/crd/merge.ts';
import { mergeConfig, NO_OBJECTS } from '../../../src/crd/merge.ts';
import type { HeraldObject } from '../../../src/k8s/herald-kinds.ts';
import type { PoolUsage } from '../../../src/status/object-conditions.ts';
import { nodeDigestOf } from '../../../src/status/node-digest.ts';
import type { NodeDigest } from '../../../src/status/node-digest.ts';
import { hasStatus, objectStatuses } from '../../../src/status/object-conditions.ts';
import type { ConditionInputs, ObjectStatusUpdate } from '../../../src/status/object-conditions.ts';
import { heraldObject, node } from '../../helpers/k8s-objects.ts';

const NOW = Date.parse('2026-12-01T12:00:00Z');

function cfg(data: object): Config {
  const r = validateConfig({ bgp: { localAs: 65000 }, source: { kubernetes: {} }, ...data });
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return r.config;
}

const file = cfg({ peers: [{ name: 'core', address: '192.0.2.1', peerAs: 65100 }] });

/** A BGPNodeStatus as node-status.ts writes it. */
function nodeStatus(name: string, status: Record<string, unknown>): HeraldObject {
  return { apiVersion: 'herald.io/v1alpha1', kind: 'BGPNodeStatus', metadata: { name, namespace: 'herald-system', resourceVersion: '1' }, spec: { nodeName: name }, status };
}

const session = (peer: string, state: string, source = 'BGPPeer') => ({ peer, source, peerAddress: '192.0.2.9', peerPort: 179, peerASN: 65009, myASN: 65000, state, prefixesSent: 0, prefixesReceived: 0 });

/** The nodes' statuses; every node with one has a Ready Herald pod unless `notReady` names it. */
function inputs(objects: Partial<ConfigObjects>, o: { nodes?: ReturnType<typeof node>[]; statuses?: HeraldObject[]; notReady?: string[]; usage?: PoolUsage[]; file?: Config } = {}): ConditionInputs {
  const all: ConfigObjects = { ...NO_OBJECTS, ...objects };
  const digests = new Map<string, NodeDigest>();
  for (const s of o.statuses ?? []) {
    const d = nodeDigestOf(s);
    if (d) digests.set(d.node, d);
  }
  const readyNodes = new Set([...digests.keys()].filter((n) => !(o.notReady ?? []).includes(n)));
  return { objects: all, merged: mergeConfig(o.file ?? file, all, 'leader'), nodes: o.nodes ?? [], statuses: digests, readyNodes, poolUsage: o.usage ?? [], nowMs: NOW };
}

function find(updates: ObjectStatusUpdate[], kind: string, name: string): ObjectStatusUpdate {
  const u = updates.find((x) => x.kind === kind && x.name === name);
  if (!u) throw new Error(`no status for ${kind}/${name}`);
  return u;
}

const cond = (u: ObjectStatusUpdate, type: string) => u.status.conditions.find((c) => c.type === type);

t.test('BGPPeer: Established on 3 of 5 selected nodes; unselected, not Ready and deleted nodes are not counted as Established', async (t) => {
  const peer = heraldObject('BGPPeer', 'tor-a', { peerAddress: '192.0.2.2', peerASN: 65002, nodeSelectors: [{ matchLabels: { rack: 'a' } }] }, { generation: 4 });
  const rackA = { labels: { rack: 'a' } };
  const nodes = [node('n1', rackA), node('n2', rackA), node('n3', rackA), node('n4', rackA), node('n5', { labels: { rack: 'b' } }), node('n6', rackA)];
  const fresh = (name: string, state: string) => nodeStatus(name, { sessions: [session('tor-a', state), session('core', 'Established', 'file')] });
  const statuses = [
    fresh('n1', 'Established'),
    fresh('n2', 'Established'),
    fresh('n3', 'Established'),
    fresh('n4', 'Active'),
    nodeStatus('n5', { sessions: [session('core', 'Established', 'file')] }), // rack b: not selected
    nodeStatus('gone', { sessions: [session('tor-a', 'Established')] }), // no Node: deleted
    // n6 has a status saying Established, but its Herald pod is not Ready: selected, not Established.
    nodeStatus('n6', { sessions: [session('tor-a', 'Established')] }),
  ];
  const u = find(objectStatuses(inputs({ BGPPeer: [peer] }, { nodes, statuses, notReady: ['n6'] })), 'BGPPeer', 'tor-a');
  t.equal(u.status.nodes, 5, 'n1-n4 and n6: rack a, running Herald');
  t.equal(u.status.establishedNodes, 3);
  t.match(cond(u, 'Valid'), { status: 'True', reason: 'Valid', observedGeneration: 4 });
  const inUse = cond(u, 'InUse');
  t.match(inUse, { status: 'True', reason: 'Established', observedGeneration: 4, lastTransitionTime: '2026-12-01T12:00:00Z' });
  t.match(inUse?.message, /^Established on 3 of 5 selected nodes; not Established: n4, n6 \(its Herald pod is not Ready\)\.$/);
});

t.test('BGPPeer: not Established anywhere, a node that cannot run it says why, no node selected', async (t) => {
  const peer = heraldObject('BGPPeer', 'md5', { peerAddress: '192.0.2.2', peerASN: 65002, passwordSecret: { name: 'pw' } });
  const lonely = heraldObject('BGPPeer', 'lonely', { peerAddress: '192.0.2.3', peerASN: 65003, nodeSelectors: [{ matchLabels: { rack: 'z' } }] });
  const statuses = [nodeStatus('n1', { sessions: [], problems: ['md5: Secret herald-system/pw not found'] }), nodeStatus('n2', { sessions: [session('md5', 'Connect')] })];
  const updates = objectStatuses(inputs({ BGPPeer: [peer, lonely] }, { nodes: [node('n1'), node('n2')], statuses }));
  const md5 = find(updates, 'BGPPeer', 'md5');
  t.match(cond(md5, 'InUse'), { status: 'False', reason: 'NotEstablished', message: 'Established on 0 of 2 selected nodes; not Established: n1 (Secret herald-system/pw not found), n2.' });
  t.same([md5.status.nodes, md5.status.establishedNodes], [2, 0]);
  t.match(cond(find(updates, 'BGPPeer', 'lonely'), 'InUse'), { status: 'False', reason: 'NoSelectedNodes', message: 'Selects no node: no node running Herald matches spec.nodeSelectors.' });
});

t.test('an invalid object: Valid False naming the field and the fix, InUse False, counts 0', async (t) => {
  // The file already uses 192.0.2.1:179: the merge rejects the object (a rule the apiserver cannot check).
  const dup = heraldObject('BGPPeer', 'dup', { peerAddress: '192.0.2.1', peerASN: 65100 }, { generation: 2 });
  const badPool = heraldObject('IPAddressPool', 'bad', { addresses: ['10.1.0.0/24'], bogus: true }, { generation: 7 });
  const updates = objectStatuses(inputs({ BGPPeer: [dup], IPAddressPool: [badPool] }, { nodes: [node('n1')], statuses: [nodeStatus('n1', { sessions: [] })] }));
  const d = find(updates, 'BGPPeer', 'dup');
  t.match(cond(d, 'Valid'), { status: 'False', reason: 'Invalid', observedGeneration: 2 });
  t.match(cond(d, 'Valid')?.message, /^spec\.peerAddress: peer "core" \(in the configuration file\) already uses 192\.0\.2\.1 port 179\. Every node ignores this BGPPeer until it is fixed/);
  t.match(cond(d, 'InUse'), { status: 'False', reason: 'Invalid' });
  t.same([d.status.nodes, d.status.establishedNodes], [0, 0]);
  const p = find(updates, 'IPAddressPool', 'bad');
  t.match(cond(p, 'Valid'), { status: 'False', reason: 'Invalid', observedGeneration: 7, message: /^spec\.bogus: unknown field\./ });
  t.same([p.status.assignedIPv4, p.status.assignedIPv6], [0, 0]);
});

t.test('BGPAdvertisement: from how many nodes VIPs are announced through it, the most by one node; none', async (t) => {
  const ads = [heraldObject('BGPAdvertisement', 'lb', { addressKinds: ['loadBalancer'] }), heraldObject('BGPAdvertisement', 'quiet', { addressKinds: ['externalIP'] })];
  const statuses = [
    nodeStatus('n1', { vipsAnnounced: 2, advertisements: [{ name: 'lb', vipsAnnounced: 2 }] }),
    nodeStatus('n2', { vipsAnnounced: 1, vipsNotAnnounced: 1, advertisements: [{ name: 'lb', vipsAnnounced: 1 }] }),
    nodeStatus('n3', { vipsAnnounced: 5, advertisements: [{ name: 'lb', vipsAnnounced: 5 }] }), // its pod is not Ready: not counted
  ];
  const updates = objectStatuses(inputs({ BGPAdvertisement: ads }, { nodes: [node('n1'), node('n2'), node('n3')], statuses, notReady: ['n3'] }));
  const lb = find(updates, 'BGPAdvertisement', 'lb');
  t.same([lb.status.announcedVIPs, lb.status.nodes], [2, 2]);
  t.match(cond(lb, 'InUse'), { status: 'True', reason: 'Announced', message: 'VIPs announced through it from 2 nodes (at most 2 by one node).' });
  t.match(cond(find(updates, 'BGPAdvertisement', 'quiet'), 'InUse'), { status: 'False', reason: 'NotAnnounced', message: /^No node announces a VIP through it: `herald services --all-nodes` gives each node's reason/ });
});

t.test('IPAddressPool: addresses assigned per family, from the pool usage', async (t) => {
  const pools = [heraldObject('IPAddressPool', 'dual', { addresses: ['198.51.100.0/28', '2001:db8::/124'] }), heraldObject('IPAddressPool', 'idle', { addresses: ['203.0.113.0/30'] })];
  const usage: PoolUsage[] = [
    { pool: 'dual', family: 'IPv4', allocated: 3, available: 13 },
    { pool: 'dual', family: 'IPv6', allocated: 1, available: 15 },
    { pool: 'idle', family: 'IPv4', allocated: 0, available: 4 },
  ];
  const updates = objectStatuses(inputs({ IPAddressPool: pools }, { usage }));
  const dual = find(updates, 'IPAddressPool', 'dual');
  t.same([dual.status.assignedIPv4, dual.status.assignedIPv6], [3, 1]);
  t.match(cond(dual, 'InUse'), { status: 'True', reason: 'Allocated', message: '4 addresses assigned to Services (IPv4 3 assigned, 13 available; IPv6 1 assigned, 15 available).' });
  t.match(cond(find(updates, 'IPAddressPool', 'idle'), 'InUse'), { status: 'False', reason: 'NoneAllocated', message: 'No address assigned to a Service yet (IPv4 0 assigned, 4 available).' });
});

t.test('BGPNodeConfigOverride: in force on its node, or no such node', async (t) => {
  const o = [heraldObject('BGPNodeConfigOverride', 'n1', { myASN: 64601 }), heraldObject('BGPNodeConfigOverride', 'nowhere', { myASN: 64602 })];
  const updates = objectStatuses(inputs({ BGPNodeConfigOverride: o }, { nodes: [node('n1')], statuses: [nodeStatus('n1', { override: 'n1' })] }));
  t.match(cond(find(updates, 'BGPNodeConfigOverride', 'n1'), 'InUse'), { status: 'True', reason: 'InForce' });
  t.match(cond(find(updates, 'BGPNodeConfigOverride', 'nowhere'), 'InUse'), { status: 'False', reason: 'NoSuchNode' });
  const unknown = objectStatuses(inputs({ BGPNodeConfigOverride: o }, { nodes: [node('n1')], statuses: [nodeStatus('n1', { override: 'n1' })], notReady: ['n1'] }));
  t.match(cond(find(unknown, 'BGPNodeConfigOverride', 'n1'), 'InUse'), { status: 'Unknown', reason: 'NodeNotReady' }, 'its node\'s Herald pod is not Ready: not known');
});

t.test('lastTransitionTime moves only when the status changes; hasStatus compares before a write', async (t) => {
  const peer = heraldObject('BGPPeer', 'tor-a', { peerAddress: '192.0.2.2', peerASN: 65002 }, { generation: 1 });
  const up = [nodeStatus('n1', { sessions: [session('tor-a', 'Established')] }), nodeStatus('n2', { sessions: [session('tor-a', 'Established')] })];
  const first = find(objectStatuses(inputs({ BGPPeer: [peer] }, { nodes: [node('n1'), node('n2')], statuses: up })), 'BGPPeer', 'tor-a');
  t.notOk(hasStatus(peer, first.status), 'an object without status needs a write');
  // Written an hour ago: the stored object carries it.
  const written = { ...first.status, conditions: first.status.conditions.map((c) => ({ ...c, lastTransitionTime: '2026-12-01T11:00:00Z' })) };
  const stored: HeraldObject = { ...peer, status: written };
  const same = find(objectStatuses(inputs({ BGPPeer: [stored] }, { nodes: [node('n1'), node('n2')], statuses: up })), 'BGPPeer', 'tor-a');
  t.ok(hasStatus(stored, same.status), 'nothing changed: no write');
  // One session drops: the message and count change, InUse stays True, so its transition time stays.
  const half = [up[0]!, nodeStatus('n2', { sessions: [session('tor-a', 'Idle')] })];
  const changed = find(objectStatuses(inputs({ BGPPeer: [stored] }, { nodes: [node('n1'), node('n2')], statuses: half })), 'BGPPeer', 'tor-a');
  t.notOk(hasStatus(stored, changed.status), 'a count changed: written');
  t.match(cond(changed, 'InUse'), { status: 'True', lastTransitionTime: '2026-12-01T11:00:00Z', message: /^Established on 1 of 2/ });
  // Both drop: InUse turns False, now.
  const down = [nodeStatus('n1', { sessions: [session('tor-a', 'Active')] }), half[1]!];
  const off = find(objectStatuses(inputs({ BGPPeer: [stored] }, { nodes: [node('n1'), node('n2')], statuses: down })), 'BGPPeer', 'tor-a');
  t.match(cond(off, 'InUse'), { status: 'False', reason: 'NotEstablished', lastTransitionTime: '2026-12-01T12:00:00Z' });
  t.match(cond(off, 'Valid'), { lastTransitionTime: '2026-12-01T11:00:00Z' }, 'Valid did not change: its time stays');
});

t.test('an object the merge has not judged yet gets no status; a malformed node status is read leniently', async (t) => {
  const peer = heraldObject('BGPPeer', 'new', { peerAddress: '192.0.2.2', peerASN: 65002 });
  const i = inputs({ BGPPeer: [] });
  t.same(objectStatuses({ ...i, objects: { ...NO_OBJECTS, BGPPeer: [peer] } }), [], 'no verdict: nothing written');
  const d = nodeDigestOf(nodeStatus('odd', { lastChange: 'yesterday', sessions: [{ state: 'Established' }, 'x', session('p', 'Established')], advertisements: 'many', problems: [1, 'p: why'] }));
  t.same(d, { node: 'odd', sessions: [{ peer: 'p', source: 'BGPPeer', state: 'Established' }], problems: ['p: why'], announcedBy: new Map(), advertisementsOmitted: false });
  const e = nodeDigestOf(nodeStatus('e', { advertisements: [{ name: 'lb', vipsAnnounced: 3 }, { name: 'x', vipsAnnounced: -1 }, { vipsAnnounced: 2 }], advertisementsOmitted: 4 }));
  t.same([...(e?.announcedBy ?? [])], [['lb', 3]], 'counts read, odd entries skipped');
  t.equal(e?.advertisementsOmitted, true);
});
