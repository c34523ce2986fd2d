// The store's slice index (src/k8s/object-store.ts): one array per Service, replaced on every change, never changed
// in place, so a list handed out by `endpointSlicesFor` stays what it was. An update saying the same replaces the
// slice in its place; a changed slice is removed and added again, last.
import t from 'tap';
import { ObjectStore } from '../../../src/k8s/object-store.ts';
import type { EndpointSlice } from '../../../src/k8s/types.ts';
import { slice } from '../../helpers/k8s-objects.ts';

const names = (list: readonly EndpointSlice[]) => list.map((s) => s.metadata?.name);

t.test('slices of one Service: added in order, replaced in place, removed, moved to another Service', async (t) => {
  const store = new ObjectStore();
  for (const n of ['a', 'b', 'c']) t.same(store.apply('EndpointSlice', slice(`web-${n}`, 'web', [[`10.0.0.${n.charCodeAt(0)}`, 'n1']])), ['service:default/web']);
  const first = store.endpointSlicesFor('default/web');
  t.same(names(first), ['web-a', 'web-b', 'web-c']);
  t.equal(store.endpointSlicesFor('default/web'), first, 'the same list while nothing changed (no copy per read)');

  store.apply('EndpointSlice', slice('web-b', 'web', [['10.0.0.99', 'n2']]));
  const second = store.endpointSlicesFor('default/web');
  t.same(names(second), ['web-a', 'web-c', 'web-b'], 'a changed slice is listed last (removed and added again)');
  t.same(second[2]?.endpoints?.[0]?.addresses, ['10.0.0.99']);
  t.same(first[1]?.endpoints?.[0]?.addresses, ['10.0.0.98'], 'a list handed out before is not changed');

  const rv = { ...slice('web-a', 'web', [['10.0.0.97', 'n1']]), metadata: { ...slice('web-a', 'web', []).metadata, resourceVersion: '7' } };
  t.same(store.apply('EndpointSlice', rv), [], 'a new resourceVersion only: no change');
  t.same(names(store.endpointSlicesFor('default/web')), ['web-a', 'web-c', 'web-b'], 'in its place');
  t.equal(store.endpointSlicesFor('default/web')[0]?.metadata?.resourceVersion, '7', 'the stored object is the new one');

  t.same(store.remove('EndpointSlice', slice('web-a', 'web', [])), ['service:default/web']);
  t.same(names(store.endpointSlicesFor('default/web')), ['web-c', 'web-b']);

  t.same(store.apply('EndpointSlice', slice('web-c', 'api', [['10.0.1.1', 'n1']])).sort(), ['service:default/api', 'service:default/web'], 'relabelled: both Services change');
  t.same(names(store.endpointSlicesFor('default/web')), ['web-b']);
  t.same(names(store.endpointSlicesFor('default/api')), ['web-c']);

  store.remove('EndpointSlice', slice('web-b', 'web', []));
  t.same(store.endpointSlicesFor('default/web'), [], 'no slice left');
  t.same(store.remove('EndpointSlice', slice('web-b', 'web', [])), [], 'removing it again changes nothing');
  t.equal(store.counts().EndpointSlice, 1);
});
