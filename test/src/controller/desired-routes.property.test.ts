// Property tests of computeDesiredRoutes over random small clusters (fast-check).
import t from 'tap';
import fc from 'fast-check';
import { ObjectStore } from '../../../src/k8s/object-store.ts';
import { computeDesiredRoutes } from '../../../src/controller/desired-routes.ts';
import type { KubeObject, ResourceKind } from '../../../src/k8s/types.ts';
import { DOCUMENTATION_PREFIXES, node, service, slice } from '../../helpers/k8s-objects.ts';

const ME = 'n1';

type Infer<A> = A extends fc.Arbitrary<infer U> ? U : never;

const svcArb = fc.record({
  name: fc.constantFrom('a', 'b', 'c', 'd'),
  // 198.18.0.1 and 2001:db9::1 lie outside the allowed space (DOCUMENTATION_PREFIXES): never announced.
  lb: fc.subarray(['192.0.2.1', '192.0.2.2', '2001:db8::1', '198.18.0.1', '2001:db9::1']),
  etp: fc.constantFrom('Local', 'Cluster', undefined),
});
const sliceArb = fc.record({
  name: fc.constantFrom('x', 'y'),
  svc: fc.constantFrom('a', 'b', 'c', 'd'),
  v6: fc.boolean(),
  eps: fc.array(fc.record({ n: fc.constantFrom(ME, ME, 'n2', undefined), ready: fc.constantFrom(true, true, false, undefined), term: fc.constantFrom(true, false, undefined, undefined) }), { minLength: 1, maxLength: 3 }),
});
// biased towards an eligible node so that enough cases announce something
const rarely = fc.integer({ min: 0, max: 5 }).map((x) => x === 0);
const nodeArb = fc.record({ ready: fc.constantFrom('True', 'True', 'True', 'False', 'Unknown'), excluded: rarely, present: rarely.map((x) => !x) });

type Op = [ResourceKind, KubeObject];

function build(svcs: Infer<typeof svcArb>[], slices: Infer<typeof sliceArb>[], n: Infer<typeof nodeArb>): Op[] {
  const ops: Op[] = [];
  for (const s of svcs) ops.push(['Service', service(s.name, { lbIPs: s.lb, ...(s.etp ? { etp: s.etp } : {}) })]);
  for (const s of slices) {
    ops.push([
      'EndpointSlice',
      slice(
        `${s.svc}-${s.name}-${s.v6 ? 6 : 4}`,
        s.svc,
        s.eps.map((e, i) => [s.v6 ? `fd00::${i + 1}` : `10.0.0.${i + 1}`, e.n, { ready: e.ready ?? null, terminating: e.term ?? null }]),
        { addressType: s.v6 ? 'IPv6' : 'IPv4' },
      ),
    ]);
  }
  if (n.present) ops.push(['Node', node(ME, { ready: n.ready, ...(n.excluded ? { labels: { 'node.kubernetes.io/exclude-from-external-load-balancers': '' } } : {}) })]);
  return ops;
}

function storeOf(ops: Op[]): ObjectStore {
  const s = new ObjectStore();
  for (const [k, o] of ops) s.apply(k, structuredClone(o));
  return s;
}

t.test('invariants over random clusters', async (tt) => {
  let runs = 0;
  let withRoutes = 0;
  fc.assert(
    fc.property(fc.array(svcArb, { minLength: 1, maxLength: 4 }), fc.array(sliceArb, { minLength: 1, maxLength: 6 }), nodeArb, fc.integer(), (svcs, slices, n, seed) => {
      runs++;
      const ops = build(svcs, slices, n);
      const res = computeDesiredRoutes(storeOf(ops), { nodeName: ME, allowedPrefixes: DOCUMENTATION_PREFIXES });
      if (res.routes.length > 0) withRoutes++;
      // 1. order of arrival does not matter (last write per object is what counts)
      const shuffled = [...ops.entries()].sort((a, b) => ((a[0] * 7919 + seed) % 13) - ((b[0] * 7919 + seed) % 13));
      const sameLast = new Map<string, number>();
      ops.forEach(([k, o], i) => sameLast.set(`${k} ${o.metadata?.namespace}/${o.metadata?.name}`, i));
      const reordered = shuffled.filter(([i, [k, o]]) => sameLast.get(`${k} ${o.metadata?.namespace}/${o.metadata?.name}`) === i).map(([, op]) => op);
      if (JSON.stringify(computeDesiredRoutes(storeOf(reordered), { nodeName: ME, allowedPrefixes: DOCUMENTATION_PREFIXES })) !== JSON.stringify(res)) return false;
      // 2. an ineligible node announces nothing
      if (!res.node.eligible && res.routes.length > 0) return false;
      // 3. routes <-> announced VIPs
      const announced = new Map<string, Set<string>>();
      for (const s of res.services) {
        for (const v of s.vips) {
          if (v.announced !== (v.reasons.length > 0 && !v.reasons.some((r) => /^(Node|No|Foreign|IPMode|Invalid|Health|ServiceProxy|PrefixNotAllowed)/.test(r.code)))) return false;
          if (!v.announced) continue;
          const p = v.address.includes(':') ? `${v.address}/128` : `${v.address}/32`;
          if (!announced.has(p)) announced.set(p, new Set());
          announced.get(p)!.add(s.service);
        }
      }
      if (res.routes.length !== announced.size) return false;
      for (const r of res.routes) {
        const want = announced.get(r.prefix);
        if (!want || JSON.stringify([...want].sort()) !== JSON.stringify(r.services)) return false;
      }
      // 4. nothing outside the allowed space is announced, and it says why
      for (const r of res.routes) if (r.prefix.startsWith('198.18.') || r.prefix.startsWith('2001:db9:')) return false;
      for (const s of res.services) {
        for (const v of s.vips) if (v.kind === 'loadBalancer' && (v.address === '198.18.0.1' || v.address === '2001:db9::1') && !v.reasons.some((r) => r.code === 'PrefixNotAllowed')) return false;
      }
      // 5. Local VIPs are announced only with a usable local endpoint of their family
      for (const s of res.services) {
        const spec = svcs.filter((x) => `default/${x.name}` === s.service).at(-1);
        if (spec?.etp !== 'Local') continue;
        for (const v of s.vips) {
          if (!v.announced || v.kind !== 'loadBalancer') continue;
          const v6 = v.address.includes(':');
          const ok = slices.some((sl) => `default/${sl.svc}` === s.service && sl.v6 === v6 && sl.eps.some((e) => e.n === ME && e.ready !== false && e.term !== true));
          if (!ok) return false;
        }
      }
      return true;
    }),
    { numRuns: 400, seed: 42 },
  );
  tt.equal(runs, 400, 'ran every generated case');
  tt.ok(withRoutes > 40, `${withRoutes} cases announced something`);
});
