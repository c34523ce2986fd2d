import t from 'tap';
import { EventEmitter } from 'node:events';
import { Controller } from '../../../src/controller/controller.ts';
import type { DesiredResult } from '../../../src/controller/desired-routes.ts';
import type { DesiredChanges } from '../../../src/controller/controller.ts';
import { computeDesiredRoutes } from '../../../src/controller/desired-routes.ts';
import { ObjectStore } from '../../../src/k8s/object-store.ts';
import type { Snapshot } from '../../../src/k8s/object-store.ts';
import type { Source, SourceStatus } from '../../../src/sources/source.ts';
import type { KubeObject, ResourceKind } from '../../../src/k8s/types.ts';
import { node, service, slice } from '../../helpers/k8s-objects.ts';

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
const prefixes = (r: DesiredResult | undefined): string[] => (r?.routes ?? []).map((x) => x.prefix);

t.test('nothing reaches the sink before sync; then the full result; then incremental updates', async (tt) => {
  const src = new FakeSource();
  const results: DesiredResult[] = [];
  const changes: DesiredChanges[] = [];
  const c = new Controller({
    source: src,
    context: { nodeName: ME },
    sink: {
      onDesired: (r, ch) => {
        results.push(r);
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
  tt.equal(results.length, 0, 'no result before sync');
  src.markSynced();
  await c.whenIdle();
  tt.equal(results.length, 1);
  tt.strictSame(prefixes(results[0]), ['192.0.2.1/32']);
  // burst of changes coalesces into one result
  src.apply('Service', service('b', { lbIPs: ['192.0.2.2'] }));
  src.apply('EndpointSlice', slice('b-1', 'b', [['10.0.0.2', 'n2']]));
  src.apply('Service', service('c', { lbIPs: ['192.0.2.3'], etp: 'Local' }));
  src.apply('EndpointSlice', slice('c-1', 'c', [['10.0.0.3', 'n2']]));
  await c.whenIdle();
  tt.equal(results.length, 2, 'one result for the burst');
  tt.strictSame(prefixes(results[1]), ['192.0.2.1/32', '192.0.2.2/32']);
  // the incremental result equals a from-scratch computation
  tt.strictSame(results[1], computeDesiredRoutes(src.store, { nodeName: ME }));
  // another node's change does not recompute services
  const before = c.stats.servicesComputed;
  src.apply('Node', node('n2', { ready: 'False' }));
  await c.whenIdle();
  tt.equal(c.stats.servicesComputed, before, 'other node ignored');
  // a heartbeat-only update of this node does not recompute anything
  const hb = node(ME);
  hb.status!.conditions![0]!.reason = 'KubeletReady';
  src.apply('Node', hb);
  await c.whenIdle();
  tt.equal(c.stats.servicesComputed, before, 'irrelevant update of this node ignored');
  // one slice change recomputes one service only
  src.apply('EndpointSlice', slice('c-1', 'c', [['10.0.0.3', ME]]));
  await c.whenIdle();
  tt.equal(c.stats.servicesComputed, before + 1, 'only the touched service recomputed');
  tt.strictSame(prefixes(results.at(-1)), ['192.0.2.1/32', '192.0.2.2/32', '192.0.2.3/32']);
  tt.strictSame(changes.at(-1), { all: false, services: ['default/c'], prefixes: ['192.0.2.3/32'] }, 'changes name only what was touched');
  tt.equal(changes[0]?.all, true, 'first result is a full one');
  const prev = results.at(-2)!;
  const prevRoutes = [...prev.routes];
  tt.equal(results.at(-1)!.routes[0], prev.routes[0], 'unchanged route keeps its identity');
  tt.equal(results.at(-1)!.services[0], prev.services[0], 'unchanged decision keeps its identity');
  tt.not(results.at(-1)!.routes, prev.routes, 'each result has its own array');
  // this node going NotReady recomputes everything and withdraws all
  src.apply('Node', node(ME, { ready: 'False' }));
  await c.whenIdle();
  tt.strictSame(prefixes(results.at(-1)), []);
  tt.equal(results.at(-1)?.node.eligible, false);
  src.apply('Node', node(ME));
  src.remove('Service', service('a'));
  await c.whenIdle();
  tt.strictSame(prefixes(results.at(-1)), ['192.0.2.2/32', '192.0.2.3/32']);
  tt.strictSame(results.at(-1), computeDesiredRoutes(src.store, { nodeName: ME }));
  tt.strictSame(prev.routes, prevRoutes, 'an earlier result is never mutated');
  tt.equal(c.last(), results.at(-1));
  const st = c.status();
  tt.equal(st.synced, true);
  tt.equal(st.stats.emits, results.length);
  tt.equal(st.queued, 0);
});

t.test('context change and invalidate recompute; health gate consulted', async (tt) => {
  const src = new FakeSource();
  const results: DesiredResult[] = [];
  const c = new Controller({ source: src, context: { nodeName: ME }, sink: { onDesired: (r) => void results.push(r) }, resyncIntervalMs: 0 });
  tt.teardown(() => c.stop());
  src.apply('Node', node(ME));
  src.apply('Service', service('a', { lbIPs: ['192.0.2.1'], clusterIPs: ['10.96.0.1'] }));
  src.apply('EndpointSlice', slice('a-1', 'a', [['10.0.0.1', ME]]));
  src.markSynced();
  await c.start();
  await c.whenIdle();
  tt.strictSame(prefixes(results.at(-1)), ['192.0.2.1/32'], 'already synced at start: full pass');
  let healthy = true;
  c.setContext({ nodeName: ME, advertisements: [{ name: 'x', addressKinds: ['clusterIP', 'loadBalancer'] }], healthGate: () => ({ pass: healthy, reason: 'probe failed' }) });
  await c.whenIdle();
  tt.strictSame(prefixes(results.at(-1)), ['10.96.0.1/32', '192.0.2.1/32']);
  healthy = false;
  c.invalidate('default/a');
  await c.whenIdle();
  tt.strictSame(prefixes(results.at(-1)), []);
  tt.equal(results.at(-1)?.services[0]?.vips[0]?.reasons[0]?.code, 'HealthCheckFailing');
});

t.test('a failing sink is retried and gets the newest result', async (tt) => {
  const src = new FakeSource();
  let fail = 2;
  const seen: string[][] = [];
  const allFlags: boolean[] = [];
  const errors: string[] = [];
  const c = new Controller({
    source: src,
    context: { nodeName: ME },
    sink: {
      onDesired: async (r, ch) => {
        seen.push(prefixes(r));
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
  await new Promise<void>((resolve) => c.once('desired', () => resolve()));
  clearInterval(keepAlive);
  tt.strictSame(errors, ['emit', 'emit']);
  tt.equal(seen.length, 3);
  tt.strictSame(prefixes(c.last()), ['192.0.2.1/32']);
  tt.equal(c.stats.sinkErrors, 2);
  tt.strictSame(allFlags, [true, true, true], 'unaccepted changes are reported again');
  tt.equal(c.stats.emits, 1);
});

t.test('incremental results always equal a from-scratch computation (seeded random operations)', async (tt) => {
  const src = new FakeSource();
  const ctx = {
    nodeName: ME,
    serviceCIDRs: ['10.96.0.0/12'],
    advertisements: [
      { name: 'lb', addressKinds: ['loadBalancer' as const], aggregationLength: 31 },
      { name: 'ext', addressKinds: ['externalIP' as const, 'clusterIP' as const], serviceSelector: { matchLabels: { ext: 'yes' } }, communities: ['65000:1'] },
      { name: 'cidr', addressKinds: ['serviceCIDR' as const], nodeSelector: { matchLabels: { gw: 'true' } } },
    ],
  };
  // The change report must cover every difference from the previous accepted result.
  let prevResult: DesiredResult | undefined;
  let missed = 0;
  let reports = 0;
  const sink = {
    onDesired: (r: DesiredResult, ch: DesiredChanges): void => {
      if (prevResult && !ch.all) {
        reports++;
        const before = new Map(prevResult.services.map((d) => [d.service, JSON.stringify(d)]));
        const after = new Map(r.services.map((d) => [d.service, JSON.stringify(d)]));
        for (const k of new Set([...before.keys(), ...after.keys()])) if (before.get(k) !== after.get(k) && !ch.services.includes(k)) missed++;
        const rb = new Map(prevResult.routes.map((x) => [x.prefix, JSON.stringify(x)]));
        const ra = new Map(r.routes.map((x) => [x.prefix, JSON.stringify(x)]));
        for (const k of new Set([...rb.keys(), ...ra.keys()])) if (rb.get(k) !== ra.get(k) && !ch.prefixes.includes(k)) missed++;
      }
      prevResult = r;
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
      tt.strictSame(c.last(), computeDesiredRoutes(src.store, ctx), `step ${step}`);
      compared++;
      if ((c.last()?.routes.length ?? 0) >= 2) nonTrivial++;
    }
  }
  tt.ok(compared > 100, `${compared} comparisons`);
  tt.ok(nonTrivial > 20, `${nonTrivial} comparisons with at least 2 routes`);
  tt.equal(missed, 0, 'every difference was reported in changes');
  tt.ok(reports > 50, `${reports} incremental change reports checked`);
});
