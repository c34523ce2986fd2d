// Route assembly: route pieces merged per prefix, static routes winning over Service VIPs, whole sets on a full
// flush and exactly the changed routes otherwise, unchanged routes keeping their Speaker Route objects.
import t from 'tap';
import type { Route } from '../../../bgp/index.ts';
import { validateConfig } from '../../../src/config/load.ts';
import type { RouteContribution } from '../../../src/controller/route-merge.ts';
import { RouteAssembly } from '../../../src/daemon/route-assembly.ts';

function sink() {
  const calls: Array<{ kind: 'set'; routes: Route[] } | { kind: 'update'; changed: Route[]; removed: string[] }> = [];
  return {
    calls,
    setRoutes: (routes: ReadonlyMap<string, Route>) => void calls.push({ kind: 'set', routes: [...routes.values()] }),
    updateRoutes: (changed: readonly Route[], removed: readonly string[]) => void calls.push({ kind: 'update', changed: [...changed], removed: [...removed] }),
  };
}
const piece = (prefix: string, service: string, extra: Partial<RouteContribution> = {}): RouteContribution => ({
  prefix, family: 'ipv4-unicast', peers: 'all', communities: [], largeCommunities: [], service, advertisement: 'default', ...extra,
});
const staticRoutes = (() => {
  const r = validateConfig({ bgp: { localAs: 65000, routerId: '10.0.0.1' }, routes: [{ prefix: '192.0.2.2/32', communities: ['65000:1'] }] });
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return r.config.routes;
})();

t.test('merge, static wins, incremental updates, identity', async (t) => {
  const s = sink();
  const a = new RouteAssembly(s);
  a.setService('ns/a', [piece('192.0.2.1/32', 'ns/a', { communities: ['65000:7'] }), piece('192.0.2.2/32', 'ns/a')]);
  a.setService('ns/b', [piece('192.0.2.1/32', 'ns/b', { communities: ['65000:9'], med: 5 })]);
  a.setStatic(staticRoutes);
  t.same(a.flush(true), { routes: 2, changed: 2, removed: 0 });
  const first = s.calls[0];
  t.equal(first?.kind, 'set');
  const byPrefix = new Map((first?.kind === 'set' ? first.routes : []).map((r) => [r.prefix, r]));
  t.same(byPrefix.get('192.0.2.1/32'), { prefix: '192.0.2.1/32', family: 'ipv4-unicast', communities: [65000 * 65536 + 7, 65000 * 65536 + 9], med: 5 }, 'two Services merged');
  t.same(byPrefix.get('192.0.2.2/32'), { prefix: '192.0.2.2/32', family: 'ipv4-unicast', communities: [65000 * 65536 + 1] }, 'the static route wins');
  // Nothing changed: nothing handed over.
  a.setStatic(staticRoutes);
  t.same(a.flush(false), { routes: 2, changed: 0, removed: 0 });
  t.equal(s.calls.length, 1);
  // ns/b goes: the merged route changes, the static one is untouched.
  a.setService('ns/b', []);
  a.setStatic(staticRoutes);
  t.same(a.flush(false), { routes: 2, changed: 1, removed: 0 });
  t.same(s.calls[1], { kind: 'update', changed: [{ prefix: '192.0.2.1/32', family: 'ipv4-unicast', communities: [65000 * 65536 + 7] }], removed: [] });
  // The same pieces again (same array): no re-merge, no Route made.
  const made = a.stats.routesMade;
  const pieces = [piece('192.0.2.3/32', 'ns/c')];
  a.setService('ns/c', pieces);
  a.flush(false);
  a.setService('ns/c', pieces);
  a.flush(false);
  t.equal(a.stats.routesMade, made + 1, 'one Route for the new prefix, none for the repeat');
  // ns/a goes: its VIP is withdrawn, the static route stays.
  a.setService('ns/a', []);
  a.setStatic(staticRoutes);
  t.same(a.flush(false), { routes: 2, changed: 0, removed: 1 });
  t.same(s.calls.at(-1), { kind: 'update', changed: [], removed: ['192.0.2.1/32'] });
  // A full flush hands over the whole set with the same Route objects.
  const before = s.calls.at(-1);
  a.flush(true);
  const whole = s.calls.at(-1);
  t.not(whole, before);
  t.same(whole?.kind === 'set' ? whole.routes.map((r) => r.prefix).sort() : [], ['192.0.2.2/32', '192.0.2.3/32']);
});
