// The published node set's wire format (src/k8s/node-set.ts, issue 31 item 4): what the status leader renders into
// the ConfigMaps herald-node-set-<xx> and what every node parses back. Round trip, only the carried label keys,
// deterministic text (so an unchanged set is never rewritten), the shard function pinned, the label keys' intersection
// across shards, and a specific error naming the field for each malformed shard.
import t from 'tap';
import fc from 'fast-check';
import type { NodeLabels, NodeSetEntry, NodeSetShard } from '../../../src/k8s/node-set.ts';
import { mergeNodeSet, NODE_SET_PREFIX, NODE_SET_SHARDS, nodeSetObjectName, nodeSetShard, parseNodeSetShard, renderNodeSet } from '../../../src/k8s/node-set.ts';

/** The shard objects of a rendering, as the nodes read them (ConfigMaps with this `data`). */
function readBack(rendered: Map<string, Record<string, string>>): Map<string, NodeSetShard> {
  return new Map([...rendered].map(([name, data]) => [name, parseNodeSetShard({ metadata: { name }, data })]));
}

const plain = (m: ReadonlyMap<string, NodeLabels>): Record<string, NodeLabels> => Object.fromEntries([...m].sort(([a], [b]) => (a < b ? -1 : 1)));

// 'node-a', 'node-117' and 'ip-10-0-0-1.ec2.internal' share shard 147 (pinned below); the others are alone in theirs.
const NODES: NodeSetEntry[] = [
  { name: 'node-a', eligible: true, labels: { zone: 'a', rack: 'r1', 'kubernetes.io/hostname': 'node-a' } },
  { name: 'node-117', eligible: true, labels: { zone: 'c' } },
  { name: 'ip-10-0-0-1.ec2.internal', eligible: false, labels: { zone: 'a' } },
  { name: 'n1', eligible: true, labels: { zone: 'b' } },
  { name: 'worker-0042', eligible: true, labels: { rack: 'r2' } },
];

t.test('nodeSetShard: FNV-1a 32 modulo 256, pinned', async (t) => {
  // FNV-1a 32 test vectors (the FNV reference: "" → 0x811c9dc5, "a" → 0xe40c292c, "foobar" → 0xbf9cf968): the shard
  // is the low byte. Node names, computed with an independent FNV-1a (Python) when this test was written.
  const golden: Array<[string, number]> = [
    ['', 0xc5],
    ['a', 0x2c],
    ['foobar', 0x68],
    ['node-a', 147],
    ['node-117', 147],
    ['ip-10-0-0-1.ec2.internal', 147],
    ['n1', 0],
    ['worker-0042', 196],
  ];
  for (const [name, shard] of golden) t.equal(nodeSetShard(name), shard, `shard of ${JSON.stringify(name)}`);
  t.equal(NODE_SET_SHARDS, 256, 'the number of shards is part of the format');
  t.equal(nodeSetObjectName(0), `${NODE_SET_PREFIX}00`);
  t.equal(nodeSetObjectName(10), 'herald-node-set-0a', 'two lower-case hex digits');
  t.equal(nodeSetObjectName(255), 'herald-node-set-ff');
  fc.assert(
    fc.property(fc.string({ maxLength: 64 }), (name) => {
      const i = nodeSetShard(name);
      return Number.isInteger(i) && i >= 0 && i < NODE_SET_SHARDS && /^herald-node-set-[0-9a-f]{2}$/.test(nodeSetObjectName(i));
    }),
    { numRuns: 500, seed: 31 },
  );
});

t.test('render → parse → merge: one object per non-empty shard, every Node listed, only the carried label keys', async (t) => {
  const rendered = renderNodeSet(NODES, ['zone', 'rack']);
  t.strictSame([...rendered.keys()], ['herald-node-set-00', 'herald-node-set-93', 'herald-node-set-c4'], 'the shards that hold a Node, in order');
  t.strictSame(rendered.get('herald-node-set-93'), {
    eligible: '{"node-117":{"zone":"c"},"node-a":{"rack":"r1","zone":"a"}}',
    ineligible: '["ip-10-0-0-1.ec2.internal"]',
    labelKeys: '["rack","zone"]',
  }, 'the text as written: three Nodes of one shard, Nodes and labels sorted, kubernetes.io/hostname not carried');
  const set = mergeNodeSet(readBack(rendered));
  t.strictSame(plain(set.eligible), { n1: { zone: 'b' }, 'node-117': { zone: 'c' }, 'node-a': { rack: 'r1', zone: 'a' }, 'worker-0042': { rack: 'r2' } }, 'eligible Nodes with the carried labels they have');
  t.strictSame([...set.listed].sort(), NODES.map((n) => n.name).sort(), 'every Node listed, the ineligible one too');
  t.notOk(set.eligible.has('ip-10-0-0-1.ec2.internal'), 'an ineligible Node is not eligible');
  t.strictSame([...set.labelKeys].sort(), ['rack', 'zone']);
  t.strictSame(set.problems, []);

  const none = mergeNodeSet(readBack(renderNodeSet(NODES, [])));
  t.strictSame(plain(none.eligible), { n1: {}, 'node-117': {}, 'node-a': {}, 'worker-0042': {} }, 'no carried key: no label published');
  t.strictSame(renderNodeSet([], ['zone']).size, 0, 'no Node: no shard');
});

t.test('deterministic: the same set in another order renders to the same text; an unchanged set to the same objects', async (t) => {
  const a = renderNodeSet(NODES, ['zone', 'rack']);
  const shuffled = [...NODES].reverse().map((n) => ({ ...n, labels: Object.fromEntries(Object.entries(n.labels).reverse()) }));
  const b = renderNodeSet(shuffled, ['rack', 'zone', 'rack']);
  t.strictSame([...b], [...a], 'Nodes, labels and keys in another order, a key twice: identical objects and text');
  t.equal(JSON.stringify([...b]), JSON.stringify([...a]), 'byte for byte');

  // What a heartbeat or an uncarried label does: nothing to write.
  const heartbeat = NODES.map((n) => ({ ...n, labels: { ...n.labels, 'kubernetes.io/hostname': `${n.name}-renamed`, 'node.kubernetes.io/instance-type': 'm5.large' } }));
  t.strictSame([...renderNodeSet(heartbeat, ['zone', 'rack'])], [...a], 'a label outside the carried keys changes no text');

  // A carried label of one Node: exactly its shard's text changes.
  const relabelled = NODES.map((n) => (n.name === 'worker-0042' ? { ...n, labels: { rack: 'r3' } } : n));
  const c = renderNodeSet(relabelled, ['zone', 'rack']);
  const changed = [...c.keys()].filter((k) => JSON.stringify(c.get(k)) !== JSON.stringify(a.get(k)));
  t.strictSame(changed, [nodeSetObjectName(nodeSetShard('worker-0042'))], "only worker-0042's shard differs");
  const flipped = NODES.map((n) => (n.name === 'n1' ? { ...n, eligible: false } : n));
  const d = renderNodeSet(flipped, ['zone', 'rack']);
  t.strictSame([...d.keys()].filter((k) => JSON.stringify(d.get(k)) !== JSON.stringify(a.get(k))), ['herald-node-set-00'], "a Node turning ineligible changes its shard's text alone");
});

t.test('mergeNodeSet: the label keys every shard carries (a key one shard lacks is not known for its Nodes)', async (t) => {
  const shard = (labelKeys: string[], node: string): NodeSetShard => ({ eligible: new Map([[node, {}]]), ineligible: [], labelKeys });
  const set = mergeNodeSet(new Map<string, NodeSetShard>([
    ['herald-node-set-01', shard(['rack', 'zone'], 'x')],
    ['herald-node-set-02', shard(['zone'], 'y')],
    ['herald-node-set-03', shard(['zone', 'tier'], 'z')],
  ]));
  t.strictSame([...set.labelKeys], ['zone'], 'the intersection');
  t.strictSame([...mergeNodeSet(new Map()).labelKeys], [], 'no shard: no key');
  t.strictSame([...mergeNodeSet(new Map([['herald-node-set-01', shard(['zone'], 'x')], ['herald-node-set-02', shard([], 'y')]])).labelKeys], [], 'a shard carrying none: none known');

  const withProblem = mergeNodeSet(new Map<string, NodeSetShard | { problem: string }>([
    ['herald-node-set-02', { problem: 'data.eligible is missing' }],
    ['herald-node-set-01', shard(['zone'], 'x')],
  ]));
  t.strictSame(withProblem.problems, ['herald-node-set-02: data.eligible is missing'], 'an unreadable shard is named with why');
  t.strictSame([...withProblem.listed], ['x'], 'its Nodes are not listed');
  t.strictSame([...withProblem.labelKeys], ['zone'], "and it does not empty the readable shards' keys");
});

t.test('parseNodeSetShard: each malformed field gives an error naming it', async (t) => {
  const good = { eligible: '{"n1":{"zone":"a"}}', ineligible: '["n2"]', labelKeys: '["zone"]' };
  const parse = (data: Record<string, unknown> | undefined) => () => parseNodeSetShard({ metadata: { name: 'herald-node-set-00' }, ...(data !== undefined ? { data } : {}) });
  t.strictSame(parse(good)(), { eligible: new Map([['n1', { zone: 'a' }]]), ineligible: ['n2'], labelKeys: ['zone'] }, 'the good one parses');
  const cases: Array<[string, Record<string, unknown> | undefined, RegExp]> = [
    ['no data', undefined, /^data\.eligible is missing$/],
    ['eligible missing', { ...good, eligible: undefined }, /^data\.eligible is missing$/],
    ['eligible not text', { ...good, eligible: 7 }, /^data\.eligible is missing$/],
    ['eligible not JSON', { ...good, eligible: '{"n1":' }, /^data\.eligible is not JSON \(/],
    ['eligible a list', { ...good, eligible: '["n1"]' }, /^data\.eligible is not an object of Node name → labels$/],
    ['eligible null', { ...good, eligible: 'null' }, /^data\.eligible is not an object of Node name → labels$/],
    ['eligible labels not an object', { ...good, eligible: '{"n1":["zone"]}' }, /^data\.eligible is not an object of Node name → labels$/],
    ['eligible label value not text', { ...good, eligible: '{"n1":{"zone":1}}' }, /^data\.eligible is not an object of Node name → labels$/],
    ['eligible Node without labels', { ...good, eligible: '{"n1":null}' }, /^data\.eligible is not an object of Node name → labels$/],
    ['ineligible missing', { ...good, ineligible: undefined }, /^data\.ineligible is missing$/],
    ['ineligible not JSON', { ...good, ineligible: '[' }, /^data\.ineligible is not JSON \(/],
    ['ineligible an object', { ...good, ineligible: '{"n2":true}' }, /^data\.ineligible is not a list of Node names$/],
    ['ineligible holds a number', { ...good, ineligible: '["n2",3]' }, /^data\.ineligible is not a list of Node names$/],
    ['labelKeys missing', { ...good, labelKeys: undefined }, /^data\.labelKeys is missing$/],
    ['labelKeys not JSON', { ...good, labelKeys: 'zone' }, /^data\.labelKeys is not JSON \(/],
    ['labelKeys text', { ...good, labelKeys: '"zone"' }, /^data\.labelKeys is not a list of label keys$/],
    ['labelKeys holds null', { ...good, labelKeys: '[null]' }, /^data\.labelKeys is not a list of label keys$/],
  ];
  for (const [what, data, error] of cases) {
    const clean = data === undefined ? undefined : Object.fromEntries(Object.entries(data).filter(([, v]) => v !== undefined));
    t.throws(parse(clean), error, what);
  }
});

// Names and keys as Kubernetes allows them (DNS subdomains; label keys with an optional prefix), values short.
const nameArb = fc.stringMatching(/^[a-z0-9]([-a-z0-9.]{0,14}[a-z0-9])?$/);
const keyArb = fc.constantFrom<string>('zone', 'rack', 'tier', 'topology.kubernetes.io/zone', 'kubernetes.io/hostname', 'example.com/pool');
const valueArb = fc.stringMatching(/^[A-Za-z0-9]([-A-Za-z0-9_.]{0,8}[A-Za-z0-9])?$/);
const entriesArb = fc.uniqueArray(fc.record({ name: nameArb, eligible: fc.boolean(), labels: fc.dictionary(keyArb, valueArb, { maxKeys: 4 }) }), { selector: (e) => e.name, maxLength: 60 });

/** Throws (so that fast-check shrinks) when `got` and `want` differ as JSON. */
function same(what: string, got: unknown, want: unknown): void {
  if (JSON.stringify(got) !== JSON.stringify(want)) throw new Error(`${what}: got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
}

t.test('property: parse(render(x)) gives back the eligible Nodes with their carried labels, and lists every Node', async (t) => {
  let runs = 0;
  let sharedShards = 0;
  fc.assert(
    fc.property(entriesArb, fc.uniqueArray(keyArb, { maxLength: 4 }), (entries, keys) => {
      runs++;
      const rendered = renderNodeSet(entries, keys);
      for (const [name, data] of rendered) {
        const shard = parseNodeSetShard({ metadata: { name }, data });
        const inIt = [...shard.eligible.keys(), ...shard.ineligible];
        if (inIt.length === 0) throw new Error(`${name} is empty`);
        if (inIt.some((n) => nodeSetObjectName(nodeSetShard(n)) !== name)) throw new Error(`${name} holds a Node of another shard`);
        if (inIt.length > 1) sharedShards++;
      }
      const set = mergeNodeSet(readBack(rendered));
      const want = Object.fromEntries(
        entries
          .filter((e) => e.eligible)
          .sort((a, b) => (a.name < b.name ? -1 : 1))
          .map((e) => [e.name, Object.fromEntries(Object.entries(e.labels).filter(([k]) => keys.includes(k)).sort(([a], [b]) => (a < b ? -1 : 1)))]),
      );
      same('eligible', plain(set.eligible), want);
      same('listed', [...set.listed].sort(), entries.map((e) => e.name).sort());
      same('labelKeys', [...set.labelKeys].sort(), entries.length === 0 ? [] : [...keys].sort());
      same('problems', set.problems, []);
    }),
    { numRuns: 200, seed: 4 },
  );
  t.equal(runs, 200, 'ran every generated case');
  t.ok(sharedShards > 0, `${sharedShards} shards held more than one Node`);
});
