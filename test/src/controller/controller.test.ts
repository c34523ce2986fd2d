import t from 'tap';
import { EventEmitter } from 'node:events';
import { Controller } from '../../../src/controller/controller.ts';
import type { CandidateChanges, CandidateSet } from '../../../src/controller/controller.ts';
import type { DesiredResult, ServiceCandidates } from '../../../src/controller/desired-routes.ts';
import { computeDesiredRoutes, gateService } from '../../../src/controller/desired-routes.ts';
import { mergeRoutes } from '../../../src/controller/route-merge.ts';
import { ObjectStore } from '../../../src/k8s/object-store.ts';
import type { Snapshot } from '../../../src/k8s/object-store.ts';
import type { Source, SourceStatus } from '../../../src/sources/source.ts';
import type { KubeObject, ResourceKind } from '../../../src/k8s/types.ts';
import { DOCUMENTATION_PREFIXES, node, service, slice } from '../../helpers/k8s-objects.ts';

/** In-memory Source: the test applies objects and decides when it is synced. */
class FakeSource extends EventEmitter implements Source {
  store = new ObjectStore();
  #synced = false;
  started = false;
  async start(): Promise<void> {
    this.started = true;
  }
  async stop(): Promise<void> {
    this.started = false;
  }
  synced(): boolean {
    return this.#synced;
  }
  snapshot(): Snapshot {
    return this.store;
  }
  status(): SourceStatus {
    return { type: 'manifests', synced: this.#synced, resources: [] };
  }
  markSynced(): void {
    this.#synced = true;
    this.emit('synced');
  }
  apply(kind: ResourceKind, o: KubeObject): void {
    const keys = this.store.apply(kind, o);
    this.emit('change', keys);
  }
  remove(kind: ResourceKind, o: KubeObject): void {
    this.emit('change', this.store.remove(kind, o));
  }
}

const ME = 'n1';

/** The candidates of a set at one moment (the set is a live view), by Service. */
const capture = (set: CandidateSet): Map<string, ServiceCandidates> => new Map([...set.services()].map((c) => [c.service, c]));

/** What a candidate set announces when every health gate passes: the same shape computeDesiredRoutes returns. */
function resultOf(set: CandidateSet | undefined): DesiredResult | undefined {
  if (!set) return undefined;
  const gated = [...set.services()].map((c) => gateService(c, () => ({ pass: true })));
  const services = gated.map((g) => g.decision).sort((a, b) => (a.service < b.service ? -1 : a.service > b.service ? 1 : 0));
  return { routes: mergeRoutes([...gated.flatMap((g) => g.contributions), ...set.serviceCIDRs.contributions]), services, serviceCIDRs: set.serviceCIDRs.decisions, node: set.node };
}
const prefixes = (r: DesiredResult | undefined): string[] => (r?.routes ?? []).map((x) => x.prefix);

t.test('nothing reaches the sink before sync; then every Service; then only what changed', async (tt) => {
  const src = new FakeSource();
  const results: DesiredResult[] = [];
  const captured: Map<string, ServiceCandidates>[] = [];
  const changes: CandidateChanges[] = [];
  const c = new Controller({
    source: src,
    context: { nodeName: ME, allowedPrefixes: DOCUMENTATION_PREFIXES },
    sink: {
      onCandidates: (set, ch) => {
        results.push(resultOf(set) as DesiredResult);
        captured.push(capture(set));
        changes.push(ch);
      },
    },
    resyncIntervalMs: 0,
  });
  tt.teardown(() => c.stop());
  await c.start();
  tt.equal(src.started, true, 'controller starts the source');
  src.apply('Node', node(ME));
  src.apply('Service', service('a', { lbIPs: ['192.0.2.1'] }));
  src.apply('EndpointSlice', slice('a-1', 'a', [['10.0.0.1', ME]]));
  await c.whenIdle();
  tt.equal(results.length, 0, 'no candidates before sync');
  src.markSynced();
  await c.whenIdle();
  tt.equal(results.length, 1);
  tt.strictSame(prefixes(results[0]), ['192.0.2.1/32']);
  tt.strictSame(changes[0], { all: true, services: ['default/a'], serviceCIDRs: true }, 'first set is a full one');
  // burst of changes coalesces into one set
  src.apply('Service', service('b', { lbIPs: ['192.0.2.2'] }));
  src.apply('EndpointSlice', slice('b-1', 'b', [['10.0.0.2', 'n2']]));
  src.apply('Service', service('c', { lbIPs: ['192.0.2.3'], etp: 'Local' }));
  src.apply('EndpointSlice', slice('c-1', 'c', [['10.0.0.3', 'n2']]));
  await c.whenIdle();
  tt.equal(results.length, 2, 'one set for the burst');
  tt.strictSame(prefixes(results[1]), ['192.0.2.1/32', '192.0.2.2/32']);
  // the incremental candidates give what a from-scratch computation gives
  tt.strictSame(results[1], computeDesiredRoutes(src.store, { nodeName: ME, allowedPrefixes: DOCUMENTATION_PREFIXES }));
  // another node's change does not recompute services
  const before = c.stats.servicesComputed;
  src.apply('Node', node('n2', { ready: 'False' }));
  await c.whenIdle();
  tt.equal(c.stats.servicesComputed, before, 'other node ignored');
  // a heartbeat-only update of this node does not recompute anything
  const hb = node(ME);
  Object.assign(hb.status!.conditions![0]!, { reason: 'KubeletReady', lastHeartbeatTime: '2026-11-30T08:00:10Z' });
  src.apply('Node', hb);
  await c.whenIdle();
  tt.equal(c.stats.servicesComputed, before, 'irrelevant update of this node ignored');
  // one slice change recomputes one service only
  src.apply('EndpointSlice', slice('c-1', 'c', [['10.0.0.3', ME]]));
  await c.whenIdle();
  tt.equal(c.stats.servicesComputed, before + 1, 'only the touched service recomputed');
  tt.strictSame(prefixes(results.at(-1)), ['192.0.2.1/32', '192.0.2.2/32', '192.0.2.3/32']);
  tt.strictSame(changes.at(-1), { all: false, services: ['default/c'], serviceCIDRs: false }, 'changes name only what was touched');
  const prev = captured.at(-2)!;
  const prevJson = JSON.stringify([...prev.values()]);
  tt.equal(captured.at(-1)!.get('default/a'), prev.get('default/a'), 'unchanged candidates keep their identity');
  tt.not(captured.at(-1)!.get('default/c'), prev.get('default/c'), 'changed ones are new objects');
  // this node going NotReady recomputes everything and withdraws all
  src.apply('Node', node(ME, { ready: 'False' }));
  await c.whenIdle();
  tt.strictSame(prefixes(results.at(-1)), []);
  tt.equal(results.at(-1)?.node.eligible, false);
  src.apply('Node', node(ME));
  src.remove('Service', service('a'));
  await c.whenIdle();
  tt.strictSame(prefixes(results.at(-1)), ['192.0.2.2/32', '192.0.2.3/32']);
  tt.strictSame(results.at(-1), computeDesiredRoutes(src.store, { nodeName: ME, allowedPrefixes: DOCUMENTATION_PREFIXES }));
  tt.equal(JSON.stringify([...prev.values()]), prevJson, 'earlier candidates are never mutated');
  tt.strictSame(resultOf(c.last()), results.at(-1));
  const st = c.status();
  tt.equal(st.synced, true);
  tt.equal(st.stats.emits, results.length);
  tt.equal(st.queued, 0);
});

t.test('a context change and invalidate recompute every Service', async (tt) => {
  const src = new FakeSource();
  const results: DesiredResult[] = [];
  const changes: CandidateChanges[] = [];
  const c = new Controller({ source: src, context: { nodeName: ME, allowedPrefixes: DOCUMENTATION_PREFIXES }, sink: { onCandidates: (set, ch) => void (results.push(resultOf(set) as DesiredResult), changes.push(ch)) }, resyncIntervalMs: 0 });
  tt.teardown(() => c.stop());
  src.apply('Node', node(ME));
  src.apply('Service', service('a', { lbIPs: ['192.0.2.1'], clusterIPs: ['10.96.0.1'] }));
  src.apply('EndpointSlice', slice('a-1', 'a', [['10.0.0.1', ME]]));
  src.markSynced();
  await c.start();
  await c.whenIdle();
  tt.strictSame(prefixes(results.at(-1)), ['192.0.2.1/32'], 'already synced at start: full pass');
  c.setContext({ nodeName: ME, allowedPrefixes: DOCUMENTATION_PREFIXES, advertisements: [{ name: 'x', addressKinds: ['clusterIP', 'loadBalancer'] }] });
  await c.whenIdle();
  tt.strictSame(prefixes(results.at(-1)), ['10.96.0.1/32', '192.0.2.1/32']);
  tt.equal(changes.at(-1)?.all, true);
  const computed = c.stats.servicesComputed;
  c.invalidate();
  await c.whenIdle();
  tt.equal(c.stats.servicesComputed, computed + 1, 'invalidate recomputes every Service');
  tt.equal(changes.at(-1)?.all, true);
});

t.test('a failing sink is retried and gets the newest candidates', async (tt) => {
  const src = new FakeSource();
  let fail = 2;
  const seen: string[][] = [];
  const allFlags: boolean[] = [];
  const errors: string[] = [];
  const c = new Controller({
    source: src,
    context: { nodeName: ME, allowedPrefixes: DOCUMENTATION_PREFIXES },
    sink: {
      onCandidates: async (set, ch) => {
        seen.push(prefixes(resultOf(set)));
        allFlags.push(ch.all);
        if (fail-- > 0) throw new Error('speaker busy');
      },
    },
    retryBaseMs: 5,
    resyncIntervalMs: 0,
  });
  c.on('error', (k: string) => errors.push(k));
  tt.teardown(() => c.stop());
  src.apply('Node', node(ME));
  src.apply('Service', service('a', { lbIPs: ['192.0.2.1'] }));
  src.apply('EndpointSlice', slice('a-1', 'a', [['10.0.0.1', ME]]));
  src.markSynced();
  await c.start();
  const keepAlive = setInterval(() => {}, 1000); // retry timers are unref'd
  await new Promise<void>((resolve) => c.once('candidates', () => resolve()));
  clearInterval(keepAlive);
  tt.strictSame(errors, ['emit', 'emit']);
  tt.equal(seen.length, 3);
  tt.strictSame(prefixes(resultOf(c.last())), ['192.0.2.1/32']);
  tt.equal(c.stats.sinkErrors, 2);
  tt.strictSame(allFlags, [true, true, true], 'unaccepted changes are reported again');
  tt.equal(c.stats.emits, 1);
});

t.test('incremental candidates always give the result of a from-scratch computation (seeded random operations)', async (tt) => {
  const src = new FakeSource();
  const ctx = {
    nodeName: ME,
    allowedPrefixes: DOCUMENTATION_PREFIXES,
    serviceCIDRs: ['10.96.0.0/12'],
    advertisements: [
      { name: 'lb', addressKinds: ['loadBalancer' as const], aggregationLength: 31 },
      { name: 'ext', addressKinds: ['externalIP' as const, 'clusterIP' as const], serviceSelector: { matchLabels: { ext: 'yes' } }, communities: ['65000:1'] },
      { name: 'cidr', addressKinds: ['serviceCIDR' as const], nodeSelector: { matchLabels: { gw: 'true' } } },
    ],
  };
  // The change report must cover every difference from the previous accepted set.
  let prev: Map<string, string> | undefined;
  let prevCidrs = '';
  let missed = 0;
  let reports = 0;
  const sink = {
    onCandidates: (set: CandidateSet, ch: CandidateChanges): void => {
      const now = new Map([...set.services()].map((x) => [x.service, JSON.stringify(x)]));
      const cidrs = JSON.stringify(set.serviceCIDRs);
      if (prev && !ch.all) {
        reports++;
        for (const k of new Set([...prev.keys(), ...now.keys()])) if (prev.get(k) !== now.get(k) && !ch.services.includes(k)) missed++;
        if (cidrs !== prevCidrs && !ch.serviceCIDRs) missed++;
      }
      prev = now;
      prevCidrs = cidrs;
    },
  };
  const c = new Controller({ source: src, context: ctx, sink, resyncIntervalMs: 0 });
  tt.teardown(() => c.stop());
  src.markSynced();
  await c.start();
  let seed = 12345;
  // mulberry32: small seeded PRNG with well-mixed low bits
  const rnd = (n: number): number => {
    seed = (seed + 0x6d2b79f5) | 0;
    let x = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) % n;
  };
  let compared = 0;
  let nonTrivial = 0;
  for (let step = 0; step < 400; step++) {
    const i = rnd(6);
    switch (rnd(6)) {
      case 0:
        src.apply(
          'Service',
          service(`s${i}`, {
            lbIPs: [`192.0.2.${rnd(4)}`],
            externalIPs: rnd(2) ? [`198.51.100.${rnd(3)}`] : [],
            clusterIPs: [`10.96.0.${i}`],
            etp: rnd(2) ? 'Local' : 'Cluster',
            labels: rnd(2) ? { ext: 'yes' } : {},
          }),
        );
        break;
      case 1:
        src.remove('Service', service(`s${i}`));
        break;
      case 2:
      case 3:
        src.apply('EndpointSlice', slice(`s${i}-${rnd(2)}`, `s${i}`, [[`10.0.0.${rnd(9)}`, rnd(2) ? ME : 'n2', { ready: rnd(4) > 0, terminating: rnd(5) === 0 }]]));
        break;
      case 4:
        src.remove('EndpointSlice', slice(`s${i}-${rnd(2)}`, `s${i}`, []));
        break;
      case 5:
        if (rnd(5) === 0) src.remove('Node', node(ME));
        else src.apply('Node', node(rnd(3) ? ME : 'n2', { ready: rnd(6) ? 'True' : 'False', labels: rnd(2) ? { gw: 'true' } : {} }));
        break;
    }
    if (rnd(3) === 0) {
      await c.whenIdle();
      const got = resultOf(c.last());
      tt.strictSame(got, computeDesiredRoutes(src.store, ctx), `step ${step}`);
      compared++;
      if ((got?.routes.length ?? 0) >= 2) nonTrivial++;
    }
  }
  tt.ok(compared > 100, `${compared} comparisons`);
  tt.ok(nonTrivial > 20, `${nonTrivial} comparisons with at least 2 routes`);
  tt.equal(missed, 0, 'every difference was reported in changes');
  tt.ok(reports > 50, `${reports} incremental change reports checked`);
});
