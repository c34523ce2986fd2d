// Rendezvous choice (src/controller/rendezvous.ts): the hash against the published FNV-1a vectors and an independent
// bigint reference (so another implementation can reproduce it), pinned weights (stable across versions), and the
// fast-check properties issue 18 asks for: each VIP on exactly min(N, eligible) nodes; removing a node moves only its
// VIPs; adding one moves only the VIPs it wins; the result does not depend on input order. Plus fairness over a fixed
// data set and argument errors.
import t from 'tap';
import fc from 'fast-check';
import { chooseNodes, fnv1a64Hash, rendezvousWeight } from '../../../src/controller/rendezvous.ts';

const MASK = (1n << 64n) - 1n;

/** Reference FNV-1a 64 (draft-eastlake-fnv) over TextEncoder's UTF-8, with bigints. */
function refFnv(s: string): bigint {
  let h = 0xcbf29ce484222325n;
  for (const b of new TextEncoder().encode(s)) h = ((h ^ BigInt(b)) * 0x100000001b3n) & MASK;
  return h;
}

/** Reference MurmurHash3 fmix64, with bigints. */
function refFmix(k: bigint): bigint {
  k ^= k >> 33n;
  k = (k * 0xff51afd7ed558ccdn) & MASK;
  k ^= k >> 33n;
  k = (k * 0xc4ceb9fe1a85ec53n) & MASK;
  k ^= k >> 33n;
  return k;
}

const refWeight = (vip: string, node: string): bigint => refFmix(refFnv(vip) ^ refFmix(refFnv(node)));

/** Reference choice: sort every distinct node by (weight desc, name asc), take n. */
function refChoose(vip: string, nodes: readonly string[], n: number): string[] {
  return [...new Set(nodes)]
    .map((node) => ({ node, w: refWeight(vip, node) }))
    .sort((a, b) => (a.w !== b.w ? (a.w > b.w ? -1 : 1) : a.node < b.node ? -1 : a.node > b.node ? 1 : 0))
    .slice(0, n)
    .map((x) => x.node);
}

t.test('FNV-1a 64: the published test vectors and UTF-8 of any string', async (t) => {
  t.equal(fnv1a64Hash(''), 0xcbf29ce484222325n);
  t.equal(fnv1a64Hash('a'), 0xaf63dc4c8601ec8cn);
  t.equal(fnv1a64Hash('foobar'), 0x85944171f73967e8n);
  let checked = 0;
  fc.assert(
    fc.property(fc.string({ unit: fc.constantFrom('a', 'é', '€', '𝄞', '\ud800', '\udc00', '-', '.', ':'), maxLength: 20 }), (s) => {
      if (fnv1a64Hash(s) !== refFnv(s)) throw new Error(`fnv1a64(${JSON.stringify(s)})`);
      checked++;
    }),
    { numRuns: 500 },
  );
  t.equal(checked, 500, 'ASCII, 2-, 3- and 4-octet UTF-8 and lone surrogates (U+FFFD) agree with TextEncoder');
});

t.test('weight: equals the bigint reference, and is pinned (stable across versions and machines)', async (t) => {
  let checked = 0;
  fc.assert(
    fc.property(fc.string({ maxLength: 40 }), fc.string({ maxLength: 64 }), (vip, node) => {
      if (rendezvousWeight(vip, node) !== refWeight(vip, node)) throw new Error(`weight(${JSON.stringify(vip)}, ${JSON.stringify(node)})`);
      checked++;
    }),
    { numRuns: 1000 },
  );
  t.equal(checked, 1000);
  // Pinned values: a change here changes which nodes announce which VIPs in a running cluster during an upgrade.
  t.same(
    [
      ['192.0.2.10', 'node-a'],
      ['192.0.2.10', 'node-b'],
      ['2001:db8::10', 'worker-0001.example.net'],
    ].map(([v, n]) => rendezvousWeight(v as string, n as string).toString(16).padStart(16, '0')),
    PINNED,
  );
});

const PINNED = ['651dc0ef3bb7839e', '37fc3397a501147d', '09df423fc88c78f6'];

const nodeName = fc.stringMatching(/^[a-z][a-z0-9-]{0,12}$/);
const nodeSet = fc.uniqueArray(nodeName, { minLength: 0, maxLength: 30 });
const vipArb = fc.oneof(fc.ipV4(), fc.ipV6());

t.test('property: exactly min(N, eligible) distinct nodes, all eligible, ranked as the reference ranks them', async (t) => {
  let checked = 0;
  fc.assert(
    fc.property(vipArb, nodeSet, fc.integer({ min: 0, max: 40 }), (vip, nodes, n) => {
      const got = chooseNodes(vip, nodes, n);
      if (got.length !== Math.min(n, nodes.length)) throw new Error(`${got.length} chosen of ${nodes.length}, n=${n}`);
      if (new Set(got).size !== got.length || !got.every((x) => nodes.includes(x))) throw new Error('not distinct eligible nodes');
      t.same(got, refChoose(vip, nodes, n));
      checked++;
    }),
    { numRuns: 400 },
  );
  t.equal(checked, 400);
  t.same(chooseNodes('192.0.2.1', ['a', 'b', 'a', 'b', 'a'], 5).sort(), ['a', 'b'], 'duplicates count once');
  t.same(chooseNodes('192.0.2.1', ['a', 'b', 'c'], Infinity), refChoose('192.0.2.1', ['a', 'b', 'c'], 3), 'Infinity: every node, ranked');
  const many = Array.from({ length: 60 }, (_, i) => `n${i}`);
  t.same(chooseNodes('192.0.2.1', many, 40), refChoose('192.0.2.1', many, 40), 'large N (the sorting path) ranks the same');
});

t.test('property: the result does not depend on input order (every node agrees given the same snapshot)', async (t) => {
  let checked = 0;
  fc.assert(
    fc.property(vipArb, nodeSet.chain((nodes) => fc.tuple(fc.constant(nodes), fc.shuffledSubarray(nodes, { minLength: nodes.length }))), fc.integer({ min: 1, max: 40 }), (vip, [nodes, shuffled], n) => {
      t.same(chooseNodes(vip, shuffled, n), chooseNodes(vip, nodes, n));
      t.same(chooseNodes(vip, [...nodes, ...shuffled], n), chooseNodes(vip, nodes, n), 'with duplicates too');
      checked++;
    }),
    { numRuns: 300 },
  );
  t.equal(checked, 300);
});

/** The VIPs (of `vips`) whose chosen set differs between two node sets. */
function moved(vips: readonly string[], a: readonly string[], b: readonly string[], n: number): { vip: string; before: string[]; after: string[] }[] {
  const out: { vip: string; before: string[]; after: string[] }[] = [];
  for (const vip of vips) {
    const before = chooseNodes(vip, a, n);
    const after = chooseNodes(vip, b, n);
    if ([...before].sort().join() !== [...after].sort().join()) out.push({ vip, before, after });
  }
  return out;
}

const vipList = fc.uniqueArray(fc.ipV4(), { minLength: 1, maxLength: 40 });

t.test('property: removing one node moves only the VIPs it held; each of them keeps its other nodes and gains the next one', async (t) => {
  let checked = 0;
  let movedTotal = 0;
  fc.assert(
    fc.property(vipList, fc.uniqueArray(nodeName, { minLength: 1, maxLength: 25 }), fc.integer({ min: 1, max: 8 }), fc.nat(), (vips, nodes, n, pick) => {
      const gone = nodes[pick % nodes.length] as string;
      const rest = nodes.filter((x) => x !== gone);
      for (const m of moved(vips, nodes, rest, n)) {
        if (!m.before.includes(gone)) throw new Error(`${m.vip} moved though ${gone} did not announce it`);
        const kept = m.before.filter((x) => x !== gone);
        if (!kept.every((x) => m.after.includes(x))) throw new Error(`${m.vip} lost a node other than ${gone}`);
        if (m.after.length !== Math.min(n, rest.length)) throw new Error(`${m.vip}: ${m.after.length} nodes after`);
        movedTotal++;
      }
      for (const vip of vips) if (chooseNodes(vip, nodes, n).includes(gone) && !moved(vips, nodes, rest, n).some((m) => m.vip === vip)) throw new Error(`${vip} should have moved`);
      checked++;
    }),
    { numRuns: 300 },
  );
  t.equal(checked, 300);
  t.ok(movedTotal > 0, `VIPs moved in the runs: ${movedTotal}`);
});

t.test('property: adding one node moves only the VIPs it wins, each losing exactly its lowest-ranked node', async (t) => {
  let checked = 0;
  let wins = 0;
  fc.assert(
    fc.property(vipList, fc.uniqueArray(nodeName, { minLength: 2, maxLength: 25 }), fc.integer({ min: 1, max: 8 }), (vips, all, n) => {
      const added = all[all.length - 1] as string;
      const before = all.slice(0, -1);
      const changes = moved(vips, before, all, n);
      for (const m of changes) {
        if (!m.after.includes(added)) throw new Error(`${m.vip} moved but ${added} does not announce it`);
        const dropped = m.before.filter((x) => !m.after.includes(x));
        if (before.length >= n && (dropped.length !== 1 || dropped[0] !== m.before[m.before.length - 1])) throw new Error(`${m.vip}: dropped ${dropped.join()}`);
        if (before.length < n && dropped.length !== 0) throw new Error(`${m.vip}: dropped ${dropped.join()} though there was room`);
        wins++;
      }
      const winners = vips.filter((vip) => chooseNodes(vip, all, n).includes(added));
      if (winners.length !== changes.length) throw new Error(`${winners.length} VIPs won by ${added}, ${changes.length} moved`);
      checked++;
    }),
    { numRuns: 300 },
  );
  t.equal(checked, 300);
  t.ok(wins > 0, `VIPs won by the added node in the runs: ${wins}`);
});

t.test('fairness over a fixed data set: 10,000 VIPs spread evenly over 10 nodes (N = 1 and N = 3)', async (t) => {
  const nodes = Array.from({ length: 10 }, (_, i) => `worker-${i}`);
  const vips = Array.from({ length: 10_000 }, (_, i) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`);
  for (const n of [1, 3]) {
    const count = new Map<string, number>(nodes.map((x) => [x, 0]));
    for (const vip of vips) for (const x of chooseNodes(vip, nodes, n)) count.set(x, (count.get(x) ?? 0) + 1);
    const expected = (vips.length * n) / nodes.length;
    const worst = Math.max(...[...count.values()].map((c) => Math.abs(c - expected) / expected));
    // Binomial spread: σ/mean is about 3 % (N = 1) and 1.5 % (N = 3); 10 % would be a badly mixed hash.
    t.ok(worst < 0.1, `N=${n}: every node within 10 % of ${expected} (worst ${(worst * 100).toFixed(1)} %)`);
  }
});

t.test('arguments', async (t) => {
  t.same(chooseNodes('192.0.2.1', ['a', 'b'], 0), []);
  t.same(chooseNodes('192.0.2.1', [], 3), []);
  for (const n of [-1, 1.5, Number.NaN, -Infinity]) t.throws(() => chooseNodes('192.0.2.1', ['a'], n), RangeError, String(n));
});
