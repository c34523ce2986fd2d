// The controller path under arbitrary input (issue 19): fast-check generates Services, EndpointSlices and Nodes,
// well-formed and malformed (nulls in lists, wrong types, junk), as sequences of applies and removes. Invariants:
// - nothing throws out of the controller (no 'error' event, a candidate set after every burst);
// - a VIP is never a candidate from this node unless the snapshot shows a ready endpoint for it: on this node for
//   policy Local, anywhere for Cluster (an independent, lenient oracle: an unreadable slice can only hide endpoints);
// - the result depends only on the final objects, not on the order of the events that led there.
// Plus the regression of the frozen decision: `endpoints: [null]` is quarantined, not retried, and the VIP is
// withdrawn when the real endpoint goes unready.
import t from 'tap';
import fc from 'fast-check';
import { EventEmitter } from 'node:events';
import { Controller } from '../../../src/controller/controller.ts';
import type { CandidateSet } from '../../../src/controller/controller.ts';
import { ObjectStore } from '../../../src/k8s/object-store.ts';
import type { Snapshot } from '../../../src/k8s/object-store.ts';
import type { Source, SourceStatus } from '../../../src/sources/source.ts';
import type { KubeObject, ResourceKind } from '../../../src/k8s/types.ts';
import { DOCUMENTATION_PREFIXES, node, service, slice } from '../../helpers/k8s-objects.ts';

const ME = 'node-a';
const NODES = [ME, 'node-b'];
const SERVICES = ['s1', 's2', 's3'];
const SLICES = ['e1', 'e2', 'e3', 'e4'];
const V4 = ['192.0.2.1', '192.0.2.2'];
const V6 = ['2001:db8::1'];

class StoreSource extends EventEmitter implements Source {
  readonly store = new ObjectStore();
  async start(): Promise<void> {}
  async stop(): Promise<void> {}
  synced(): boolean {
    return true;
  }
  snapshot(): Snapshot {
    return this.store;
  }
  status(): SourceStatus {
    return { type: 'manifests', synced: true, resources: [] };
  }
  apply(kind: ResourceKind, o: KubeObject): void {
    this.emit('change', this.store.apply(kind, o));
  }
  remove(kind: ResourceKind, o: KubeObject): void {
    this.emit('change', this.store.remove(kind, o));
  }
}

type Event = { readonly op: 'apply' | 'remove'; readonly kind: ResourceKind; readonly obj: KubeObject };

/** Something in place of a well-formed value: what a broken producer or a hand-edited manifest may hold. */
const junk = fc.oneof(fc.constant(null), fc.constant([null]), fc.constant('x'), fc.constant(7), fc.constant({}), fc.constant([{}]), fc.anything({ maxDepth: 2 }));
/** A well-formed value, or sometimes junk. */
const orJunk = <T>(a: fc.Arbitrary<T>): fc.Arbitrary<unknown> => fc.oneof({ weight: 6, arbitrary: a }, { weight: 1, arbitrary: junk });

const serviceArb: fc.Arbitrary<KubeObject> = fc
  .record({
    name: fc.constantFrom(...SERVICES),
    type: fc.constantFrom('LoadBalancer', 'ClusterIP'),
    etp: fc.constantFrom('Local', 'Cluster', undefined),
    itp: fc.constantFrom('Local', 'Cluster', undefined),
    lb: fc.subarray([...V4, ...V6]),
    external: fc.subarray(V4),
    clusterIP: fc.constantFrom('10.96.0.10', '10.96.0.11', 'None'),
    breakField: fc.option(fc.constantFrom('spec', 'spec.ports', 'spec.externalIPs', 'status.loadBalancer.ingress', 'metadata.annotations', 'spec.type'), { nil: undefined }),
    junkValue: junk,
  })
  .map((s) => {
    const svc = service(s.name, { type: s.type, lbIPs: s.lb, clusterIPs: [s.clusterIP], ...(s.etp ? { etp: s.etp } : {}) });
    const spec: Record<string, unknown> = { ...svc.spec, ...(s.itp ? { internalTrafficPolicy: s.itp } : {}), ...(s.external.length > 0 ? { externalIPs: s.external } : {}), ports: [{ port: 80, protocol: 'TCP' }] };
    const out: Record<string, unknown> = { ...svc, spec };
    if (s.breakField === 'spec') out['spec'] = s.junkValue;
    else if (s.breakField === 'status.loadBalancer.ingress') out['status'] = { loadBalancer: { ingress: s.junkValue } };
    else if (s.breakField === 'metadata.annotations') out['metadata'] = { ...svc.metadata, annotations: { a: s.junkValue } };
    else if (s.breakField !== undefined) spec[s.breakField.slice('spec.'.length)] = s.junkValue;
    return out;
  });

/** A well-formed endpoint (discovery.k8s.io/v1), or junk in its place. */
const endpointArb: fc.Arbitrary<unknown> = orJunk(
  fc
    .record({
      address: fc.constantFrom(...V4, '10.2.0.1', '10.2.0.2', ...V6, '2001:db8:2::1'),
      nodeName: fc.option(fc.constantFrom(...NODES), { nil: undefined }),
      ready: fc.option(fc.boolean(), { nil: undefined }),
      terminating: fc.option(fc.boolean(), { nil: undefined }),
    })
    .map((e) => ({
      addresses: [e.address],
      ...(e.nodeName !== undefined ? { nodeName: e.nodeName } : {}),
      conditions: { ...(e.ready !== undefined ? { ready: e.ready } : {}), ...(e.terminating !== undefined ? { terminating: e.terminating } : {}) },
    })),
);

const sliceArb: fc.Arbitrary<KubeObject> = fc
  .record({
    name: fc.constantFrom(...SLICES),
    svc: fc.constantFrom(...SERVICES),
    v6: fc.boolean(),
    endpoints: fc.oneof({ weight: 9, arbitrary: fc.array(endpointArb, { maxLength: 3 }) }, { weight: 1, arbitrary: junk }),
  })
  .map((s) => ({ ...slice(s.name, s.svc, [], { addressType: s.v6 ? 'IPv6' : 'IPv4' }), endpoints: s.endpoints }));

const nodeArb: fc.Arbitrary<KubeObject> = fc
  .record({ name: fc.constantFrom(...NODES), ready: fc.constantFrom('True', 'False', 'Unknown'), broken: fc.option(junk, { freq: 8, nil: undefined }) })
  .map((n) => {
    const obj = node(n.name, { ready: n.ready });
    return n.broken === undefined ? obj : { ...obj, status: { conditions: n.broken } };
  });

const eventArb: fc.Arbitrary<Event> = fc.oneof(
  { weight: 3, arbitrary: serviceArb.map((obj) => ({ op: 'apply' as const, kind: 'Service' as const, obj })) },
  { weight: 4, arbitrary: sliceArb.map((obj) => ({ op: 'apply' as const, kind: 'EndpointSlice' as const, obj })) },
  { weight: 1, arbitrary: nodeArb.map((obj) => ({ op: 'apply' as const, kind: 'Node' as const, obj })) },
  { weight: 1, arbitrary: fc.oneof(serviceArb.map((obj) => ({ kind: 'Service' as const, obj })), sliceArb.map((obj) => ({ kind: 'EndpointSlice' as const, obj }))).map((e) => ({ ...e, op: 'remove' as const })) },
);

const clusterIPService = service('s1', { type: 'ClusterIP', clusterIPs: ['10.96.0.10'] });
const exampleService: Record<string, unknown> = { ...clusterIPService, spec: { ...clusterIPService.spec, ports: [{ port: 80, protocol: 'TCP' }] } };
/** Events that give a candidate VIP: a ClusterIP Service and a ready endpoint of it (fast-check `examples`). */
const CANDIDATE_EXAMPLE: Event[] = [
  { op: 'apply', kind: 'Service', obj: exampleService },
  { op: 'apply', kind: 'EndpointSlice', obj: slice('e1', 's1', [['10.2.0.1', ME, { ready: true }]]) },
];

/** Runs a controller over `events` (in bursts of `burst`); resolves with its last set and every error it reported. */
async function run(events: readonly Event[], burst: number): Promise<{ set: CandidateSet | undefined; errors: unknown[]; source: StoreSource }> {
  const source = new StoreSource();
  source.apply('Node', node(ME));
  let set: CandidateSet | undefined;
  const errors: unknown[] = [];
  const controller = new Controller({ source, context: { nodeName: ME, allowedPrefixes: DOCUMENTATION_PREFIXES, advertisements: [{ name: 'all', addressKinds: ['loadBalancer', 'externalIP', 'clusterIP'] }] }, sink: { onCandidates: (s) => void (set = s) }, resyncIntervalMs: 0 });
  controller.on('error', (_key: string, err: unknown) => errors.push(err));
  await controller.start();
  for (let i = 0; i < events.length; i += burst) {
    for (const e of events.slice(i, i + burst)) (e.op === 'apply' ? source.apply : source.remove).call(source, e.kind, e.obj);
    await controller.whenIdle();
  }
  await controller.whenIdle();
  await controller.stop();
  return { set, errors, source };
}

/** A field of an object of unknown shape (undefined when it is no object). */
const field = (o: unknown, k: string): unknown => (typeof o === 'object' && o !== null ? (o as Record<string, unknown>)[k] : undefined);

/** Independent oracle: a ready endpoint of `family` for Service `svc` in the snapshot (on `onNode` when given). */
function readyEndpoint(snap: Snapshot, svc: string, family: 'IPv4' | 'IPv6', onNode: string | undefined): boolean {
  for (const s of snap.endpointSlicesFor(svc)) {
    const endpoints: unknown = s.endpoints;
    if (s.addressType !== family || !Array.isArray(endpoints)) continue;
    for (const e of endpoints) {
      const addresses = field(e, 'addresses');
      if (!Array.isArray(addresses) || typeof addresses[0] !== 'string') continue;
      if (onNode !== undefined && field(e, 'nodeName') !== onNode) continue;
      const c = field(e, 'conditions');
      if (field(c, 'ready') === false || field(c, 'terminating') === true) continue;
      return true;
    }
  }
  return false;
}

/** The decisions of a set, by Service, as comparable data. */
function outcome(set: CandidateSet | undefined): unknown {
  if (!set) return undefined;
  const services = [...set.services()].map((c) => ({ service: c.service, vips: c.vips.map((v) => ({ ...v.decision, candidate: v.candidate })), reasons: c.decision.reasons, contributions: c.contributions }));
  services.sort((a, b) => (a.service < b.service ? -1 : 1));
  return { node: set.node, services };
}

t.test('property: nothing throws out of the controller; no VIP without a ready endpoint; order of events does not matter', async (t) => {
  let checked = 0;
  await fc.assert(
    fc.asyncProperty(fc.array(eventArb, { minLength: 1, maxLength: 25 }), fc.integer({ min: 1, max: 5 }), fc.integer(), async (events, burst, seed) => {
      const first = await run(events, burst);
      if (first.errors.length > 0) throw new Error(`controller error: ${String(first.errors[0])}`);
      if (!first.set) throw new Error('no candidate set');
      const snap = first.source.snapshot();
      for (const c of first.set.services()) {
        const spec: unknown = snap.service(c.service)?.spec;
        for (const v of c.vips) {
          if (!v.candidate) continue;
          checked++;
          const family = v.decision.address.includes(':') ? 'IPv6' : 'IPv4';
          const policy = field(spec, v.decision.kind === 'clusterIP' ? 'internalTrafficPolicy' : 'externalTrafficPolicy');
          if (!readyEndpoint(snap, c.service, family, policy === 'Local' ? ME : undefined)) {
            throw new Error(`${c.service} ${v.decision.address} (${v.decision.kind}, policy ${String(policy)}) is a candidate without a ready ${policy === 'Local' ? 'local ' : ''}endpoint`);
          }
        }
      }
      // the same final objects, applied in another order (one burst each), give the same result
      const final = new Map<string, Event>();
      for (const e of events) {
        const id = `${e.kind} ${e.obj.metadata?.namespace ?? ''}/${e.obj.metadata?.name ?? ''}`;
        if (e.op === 'apply') final.set(id, e);
        else final.delete(id);
      }
      const shuffled = [...final.values()];
      let r = seed;
      for (let i = shuffled.length - 1; i > 0; i--) {
        r = (r * 1103515245 + 12345) & 0x7fffffff;
        const j = r % (i + 1);
        [shuffled[i], shuffled[j]] = [shuffled[j]!, shuffled[i]!];
      }
      const second = await run(shuffled, 1);
      t.strictSame(outcome(second.set), outcome(first.set));
    }),
    // One run that surely has a candidate (a ClusterIP Service with a ready endpoint), so `checked` never depends on
    // what the random runs happened to draw.
    { numRuns: 150, examples: [[CANDIDATE_EXAMPLE, 1, 0]] },
  );
  t.ok(checked > 0, `the invariant was checked on ${checked} candidate VIPs`);
});

t.test('regression: endpoints: [null] is quarantined, never retried, and the VIP is withdrawn when the real endpoint goes unready', async (t) => {
  const source = new StoreSource();
  source.apply('Node', node(ME));
  source.apply('Service', service('web', { etp: 'Local', lbIPs: ['198.51.100.1'] }));
  source.apply('EndpointSlice', slice('web-1', 'web', [['10.2.0.1', ME, { ready: true }]]));
  let set: CandidateSet | undefined;
  const errors: unknown[] = [];
  const controller = new Controller({ source, context: { nodeName: ME, allowedPrefixes: DOCUMENTATION_PREFIXES }, sink: { onCandidates: (s) => void (set = s) }, resyncIntervalMs: 0 });
  controller.on('error', (_k: string, err: unknown) => errors.push(err));
  await controller.start();
  await controller.whenIdle();
  const vip = () => set?.service('default/web')?.vips[0];
  t.equal(vip()?.candidate, true, 'announced with its ready local endpoint');

  const broken = Object.assign(slice('web-2', 'web', []), { endpoints: [null] });
  source.apply('EndpointSlice', broken);
  await controller.whenIdle();
  t.same(errors, [], 'no error, nothing retried');
  t.equal(controller.status().pendingRetries, 0);
  t.match(controller.quarantine.list(), [{ kind: 'EndpointSlice', name: 'default/web-2', reason: 'endpoints[0]: expected object, got null (its endpoints count as not ready)' }]);
  t.equal(vip()?.candidate, true, 'the other slice still counts');

  source.apply('EndpointSlice', slice('web-1', 'web', [['10.2.0.1', ME, { ready: false }]]));
  await controller.whenIdle();
  t.equal(vip()?.candidate, false, 'withdrawn once the only real endpoint is unready');
  t.match(vip()?.decision.reasons, [{ code: 'NoLocalReadyEndpoint' }]);

  // the same [null] inside the slice with the real endpoint: that slice counts as not ready (fail closed)
  source.apply('EndpointSlice', Object.assign(slice('web-1', 'web', []), { endpoints: [{ addresses: ['10.2.0.1'], nodeName: ME, conditions: { ready: true } }, null] }));
  await controller.whenIdle();
  t.equal(vip()?.candidate, false, 'a slice with a null endpoint does not count');
  t.equal(controller.quarantine.list().length, 2);

  // fixed: out of quarantine, announced again; the Service itself broken: no VIP, quarantined, the reason shown
  source.remove('EndpointSlice', broken);
  source.apply('EndpointSlice', slice('web-1', 'web', [['10.2.0.1', ME, { ready: true }]]));
  await controller.whenIdle();
  t.same(controller.quarantine.list(), []);
  t.equal(vip()?.candidate, true);
  source.apply('Service', Object.assign(service('web', { etp: 'Local', lbIPs: ['198.51.100.1'] }), { status: { loadBalancer: { ingress: [null] } } }));
  await controller.whenIdle();
  t.same(set?.service('default/web')?.vips, [], 'a quarantined Service has no VIP');
  t.match(set?.service('default/web')?.decision.reasons, [{ code: 'Quarantined', message: /status\.loadBalancer\.ingress\[0\]: expected object, got null/ }]);
  t.match(controller.quarantine.list(), [{ kind: 'Service', name: 'default/web' }]);
  // this node's Node broken: as if missing, nothing announced
  source.apply('Service', service('web', { etp: 'Local', lbIPs: ['198.51.100.1'] }));
  source.apply('Node', Object.assign(node(ME), { status: { conditions: 'Ready' } }));
  await controller.whenIdle();
  t.equal(set?.node.eligible, false);
  t.match(set?.node.reasons, [{ code: 'NodeQuarantined' }]);
  t.equal(vip()?.candidate, false);
  t.same(errors, []);
  await controller.stop();
});
