// Shared values (src/k8s/terms.ts `sharedValue`): the small values many cached objects repeat word for word (an
// endpoint's conditions, a Service's ports and ipFamilies) are one frozen object for all of them, whatever number of
// parsed copies arrived. Object identity can be seen from JavaScript: the test compares identities.
import t from 'tap';
import { ObjectStore } from '../../../src/k8s/object-store.ts';
import { MAX_SHARED_JSON, MAX_SHARED_VALUES, sharedValue, sharedValueCount } from '../../../src/k8s/terms.ts';
import { trimObject } from '../../../src/k8s/trim.ts';
import type { EndpointSlice, Service } from '../../../src/k8s/types.ts';
import { servedService, servedSlice, service, slice } from '../../helpers/k8s-objects.ts';

const parsed = <T>(obj: T): T => JSON.parse(JSON.stringify(obj)) as T;

t.test('the conditions of every ready endpoint of 20 parsed slices are one frozen object; the addresses are not shared', async (t) => {
  const slices = Array.from({ length: 20 }, (_, i) =>
    trimObject('EndpointSlice', parsed(servedSlice(slice(`web-${i}`, `web-${i}`, [[`10.1.${i}.1`, 'n1', { ready: true, serving: true, terminating: false }], [`10.1.${i}.2`, 'n2', { ready: true, serving: true, terminating: false }]]), i))) as EndpointSlice,
  );
  const conditions = new Set(slices.flatMap((s) => (s.endpoints ?? []).map((e) => e.conditions)));
  t.equal(conditions.size, 1, 'one conditions object for 40 endpoints');
  const [shared] = conditions;
  t.same(shared, { ready: true, serving: true, terminating: false }, 'with the value they all had');
  t.ok(Object.isFrozen(shared), 'frozen');
  const addresses = new Set(slices.flatMap((s) => (s.endpoints ?? []).map((e) => e.addresses)));
  t.equal(addresses.size, 40, 'control: each endpoint keeps its own addresses');
});

t.test('the ports and ipFamilies of 20 parsed Services are one frozen array each; a different value is its own', async (t) => {
  const svcs = Array.from({ length: 20 }, (_, i) => trimObject('Service', parsed(servedService(service(`api-${i}`, { clusterIPs: [`10.96.1.${i}`] }), i))) as Service);
  t.equal(new Set(svcs.map((s) => s.spec?.ports)).size, 1, 'one ports array');
  t.equal(new Set(svcs.map((s) => s.spec?.ipFamilies)).size, 1, 'one ipFamilies array');
  t.same(svcs[0]?.spec?.ports, [{ port: 80, protocol: 'TCP' }, { port: 443, protocol: 'TCP' }], 'the trimmed ports (nodePort, name, targetPort dropped)');
  t.ok(Object.isFrozen(svcs[0]?.spec?.ports) && Object.isFrozen(svcs[0]?.spec?.ports?.[0]), 'frozen, elements too');
  const other = trimObject('Service', parsed({ ...service('dns'), spec: { ...service('dns').spec, ports: [{ port: 53, protocol: 'UDP' }] } })) as Service;
  t.same(other.spec?.ports, [{ port: 53, protocol: 'UDP' }]);
  t.not(other.spec?.ports, svcs[0]?.spec?.ports, 'different ports, a different array');
});

t.test('the store keeps shared values through updates; a value of the wrong shape is kept as it is, not frozen', async (t) => {
  const store = new ObjectStore();
  const eps = (i: number): EndpointSlice => parsed(slice(`s-${i}`, `s-${i}`, [[`10.2.0.${i}`, 'n1', { ready: true }]]));
  for (let i = 0; i < 5; i++) store.apply('EndpointSlice', eps(i));
  const kept = store.list('EndpointSlice') as EndpointSlice[];
  t.equal(new Set(kept.map((s) => s.endpoints?.[0]?.conditions)).size, 1);
  t.same(store.apply('EndpointSlice', { ...eps(0), metadata: { ...eps(0).metadata, resourceVersion: '9' } }), [], 'an update saying the same is no change');
  const odd: EndpointSlice = JSON.parse(JSON.stringify({ ...eps(7), endpoints: [{ addresses: ['10.2.0.7'], conditions: 'ready' }] }));
  const trimmed = trimObject('EndpointSlice', odd) as EndpointSlice;
  t.equal(trimmed.endpoints?.[0]?.conditions, 'ready', 'kept for the screening to quarantine');
});

t.test('the table returns the first copy, passes long values and scalars through and starts again when full', async (t) => {
  const long = ['x'.repeat(MAX_SHARED_JSON)];
  t.equal(sharedValue(long), long);
  t.notOk(Object.isFrozen(long), 'a long value is neither held nor frozen');
  t.equal(sharedValue('text'), 'text');
  const first = { a: 1 };
  t.equal(sharedValue(first), first);
  t.equal(sharedValue({ a: 1 }), first, 'the first copy');
  for (let i = 0; i <= MAX_SHARED_VALUES; i++) sharedValue({ v: i });
  t.ok(sharedValueCount() <= MAX_SHARED_VALUES, `${sharedValueCount()} values held, at most ${MAX_SHARED_VALUES}`);
});
