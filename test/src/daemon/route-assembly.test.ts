// Route assembly: route pieces merged per prefix, static routes winning over Service VIPs, whole sets on a full
// flush and exactly the changed routes otherwise, unchanged routes keeping their Speaker Route objects.
import t from 'tap';
import fc from 'fast-check';
import type { Route } from '../../../bgp/index.ts';
import { validateConfig } from '../../../src/config/load.ts';
import type { RouteContribution } from '../../../src/controller/route-merge.ts';
import { RouteAssembly } from '../../../src/daemon/route-assembly.ts';
import { FakeClock } from '../../../bgp/index.ts';

function sink() {
  const calls: Array<{ kind: 'set'; routes: Route[] } | { kind: 'update'; changed: Route[]; removed: string[] }> = [];
  return {
    calls,
    setRoutes: (routes: readonly Route[]) => void calls.push({ kind: 'set', routes: [...routes] }),
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
  t.same(a.flush(true), { routes: 2, changed: 2, removed: 0, held: 0 });
  const first = s.calls[0];
  t.equal(first?.kind, 'set');
  const byPrefix = new Map((first?.kind === 'set' ? first.routes : []).map((r) => [r.prefix, r]));
  t.same(byPrefix.get('192.0.2.1/32'), { prefix: '192.0.2.1/32', family: 'ipv4-unicast', communities: [65000 * 65536 + 7, 65000 * 65536 + 9], med: 5 }, 'two Services merged');
  t.same(byPrefix.get('192.0.2.2/32'), { prefix: '192.0.2.2/32', family: 'ipv4-unicast', communities: [65000 * 65536 + 1] }, 'the static route wins');
  // Nothing changed: nothing handed over.
  a.setStatic(staticRoutes);
  t.same(a.flush(false), { routes: 2, changed: 0, removed: 0, held: 0 });
  t.equal(s.calls.length, 1);
  // ns/b goes: the merged route changes, the static one is untouched.
  a.setService('ns/b', []);
  a.setStatic(staticRoutes);
  t.same(a.flush(false), { routes: 2, changed: 1, removed: 0, held: 0 });
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
  t.same(a.flush(false), { routes: 2, changed: 0, removed: 1, held: 0 });
  t.same(s.calls.at(-1), { kind: 'update', changed: [], removed: ['192.0.2.1/32'] });
  // A full flush looks at everything again and hands over only what changed: here nothing (issue 34: the Speaker
  // holds the whole table); what the sink holds is the whole set, with the same Route objects.
  const before = s.calls.length;
  t.same(a.flush(true), { routes: 2, changed: 0, removed: 0, held: 0 });
  t.equal(s.calls.length, before, 'nothing handed over');
  const held = new Map<string, Route>();
  for (const c of s.calls) {
    if (c.kind === 'set') held.clear();
    for (const r of c.kind === 'set' ? c.routes : c.changed) held.set(r.prefix, r);
    if (c.kind === 'update') for (const p of c.removed) held.delete(p);
  }
  t.same([...held.keys()].sort(), ['192.0.2.2/32', '192.0.2.3/32']);
});

t.test('rate limit: at most one attribute change per prefix per interval, the latest value sent when it ends', async (t) => {
  const s = sink();
  const clock = new FakeClock(0);
  let due = 0;
  const a = new RouteAssembly(s, { clock, attributeChangeIntervalMs: 5000, onDue: () => due++ });
  const lb = (bytesPerSecond: number) => piece('192.0.2.1/32', 'ns/a', { linkBandwidth: { asn: 65000, bytesPerSecond, vip: 'ns/a 192.0.2.1' } });
  const sent = () => s.calls.flatMap((c) => (c.kind === 'update' ? c.changed : c.routes)).map((r) => r.extendedCommunities?.[0]?.value.readFloatBE(4));
  // First announcement: at once.
  a.setService('ns/a', [lb(1e6)]);
  t.same(a.flush(false), { routes: 1, changed: 1, removed: 0, held: 0 });
  // Two changes within the interval: held, no UPDATE; the timer asks for a flush when the interval ends.
  clock.advance(1000);
  a.setService('ns/a', [lb(2e6)]);
  t.same(a.flush(false), { routes: 1, changed: 0, removed: 0, held: 1 }, 'second change within 5 s: held');
  clock.advance(1000);
  a.setService('ns/a', [lb(3e6)]);
  t.same(a.flush(false), { routes: 1, changed: 0, removed: 0, held: 1 }, 'third: still held, latest kept');
  t.equal(due, 0);
  clock.advance(2999);
  t.equal(due, 0, 'not before the interval ends');
  clock.advance(1);
  t.equal(due, 1, 'due when 5 s have passed since the last change went out');
  t.same(a.flush(false), { routes: 1, changed: 1, removed: 0, held: 0 });
  t.same(sent(), [1e6, 3e6], 'the latest value went out, the intermediate one never');
  // A withdrawal is never held; the next announcement is a first announcement, never held either.
  clock.advance(100);
  a.setService('ns/a', []);
  t.same(a.flush(false), { routes: 0, changed: 0, removed: 1, held: 0 }, 'withdrawal at once');
  a.setService('ns/a', [lb(4e6)]);
  t.same(a.flush(false), { routes: 1, changed: 1, removed: 0, held: 0 }, 'first announcement at once');
  // A change held and then undone before its interval ends sends nothing.
  clock.advance(100);
  a.setService('ns/a', [lb(5e6)]);
  t.equal(a.flush(false).held, 1);
  a.setService('ns/a', [lb(4e6)]);
  a.flush(false);
  const calls = s.calls.length;
  clock.advance(10_000);
  t.same(a.flush(false), { routes: 1, changed: 0, removed: 0, held: 0 });
  t.equal(s.calls.length, calls, 'nothing handed over');
  // A full flush keeps a held change held (the previous route is in the whole set).
  clock.advance(10_000);
  a.setService('ns/a', [lb(6e6)]);
  a.flush(false);
  a.setService('ns/a', [lb(7e6)]);
  t.same(a.flush(true), { routes: 1, changed: 0, removed: 0, held: 1 });
  t.same(sent().at(-1), 6e6, 'the value last sent stays (nothing handed over while the change is held)');
  clock.advance(5000);
  a.flush(false);
  t.same(sent().at(-1), 7e6, 'then the held one');
  // 0 disables the limit.
  a.setAttributeChangeInterval(0);
  a.setService('ns/a', [lb(8e6)]);
  t.equal(a.flush(false).changed, 1);
  a.setService('ns/a', [lb(9e6)]);
  t.equal(a.flush(false).changed, 1, 'every change at once');
  a.close();
});

t.test('rate limit: static routes and a route that only changes the Services behind it are not held', async (t) => {
  const s = sink();
  const clock = new FakeClock(0);
  const a = new RouteAssembly(s, { clock, attributeChangeIntervalMs: 5000, onDue: () => {} });
  a.setService('ns/a', [piece('192.0.2.2/32', 'ns/a', { med: 1 })]);
  a.flush(false);
  a.setStatic(staticRoutes); // the static route takes the prefix over at once
  t.same(a.flush(false), { routes: 1, changed: 1, removed: 0, held: 0 });
  const made = a.stats.routesMade;
  a.setService('ns/b', [piece('192.0.2.5/32', 'ns/b')]);
  a.flush(false);
  a.setService('ns/c', [piece('192.0.2.5/32', 'ns/c')]);
  t.same(a.flush(false), { routes: 2, changed: 0, removed: 0, held: 0 }, 'a second Service on the same prefix: the same Route, nothing to send');
  t.equal(a.stats.routesMade, made + 1);
  a.close();
});

t.test('property: the sink, fed by full and incremental flushes, always holds what a full flush of the same inputs gives', async (t) => {
  // Covers the static routes' dirty tracking (route-assembly.ts `#staticDirty`, 'all' after an empty set), static
  // routes winning over and giving way to Service routes of the same prefix, and several setStatic between flushes.
  const prefixes = ['192.0.2.1/32', '192.0.2.2/32', '192.0.2.3/32', '192.0.2.4/32', '192.0.2.5/32'];
  // two variants per prefix, from two configs (one config may not list a prefix twice)
  const pool = [undefined, ['65000:1']].map((communities) => {
    const r = validateConfig({ bgp: { localAs: 65000, routerId: '10.0.0.1' }, routes: prefixes.map((prefix) => ({ prefix, ...(communities ? { communities } : {}) })) });
    if (!r.ok) throw new Error(JSON.stringify(r.errors));
    return r.config.routes;
  }).flatMap((routes) => routes).sort((x, y) => x.prefix.localeCompare(y.prefix));
  t.equal(pool.length, 10, 'the static route pool');
  const step = fc.oneof(
    fc.record({ kind: fc.constant('static' as const), pick: fc.uniqueArray(fc.integer({ min: 0, max: 9 }), { maxLength: 10, selector: (i) => i >> 1 }) }),
    fc.record({ kind: fc.constant('service' as const), name: fc.constantFrom('ns/a', 'ns/b'), on: fc.subarray(prefixes), med: fc.integer({ min: 0, max: 2 }) }),
    fc.record({ kind: fc.constant('flush' as const), full: fc.boolean() }),
  );
  let runs = 0;
  fc.assert(
    fc.property(fc.array(step, { maxLength: 14 }), (steps) => {
      runs++;
      const s = sink();
      const a = new RouteAssembly(s);
      let statics: typeof pool = [];
      const services = new Map<string, RouteContribution[]>();
      const view = new Map<string, Route>();
      const check = () => {
        const ref = sink();
        const b = new RouteAssembly(ref);
        for (const [name, pieces] of services) b.setService(name, pieces);
        b.setStatic(statics);
        b.flush(true);
        const want = ref.calls[0]?.kind === 'set' ? ref.calls[0].routes : [];
        t.same(Object.fromEntries(view), Object.fromEntries(want.map((r) => [r.prefix, r])));
      };
      for (const st of [...steps, { kind: 'flush' as const, full: false }]) {
        if (st.kind === 'static') {
          statics = st.pick.map((i) => pool[i]!);
          a.setStatic(statics);
        } else if (st.kind === 'service') {
          const pieces = st.on.map((p) => piece(p, st.name, { med: st.med }));
          services.set(st.name, pieces);
          a.setService(st.name, pieces);
        } else {
          a.flush(st.full);
          for (const c of s.calls.splice(0)) {
            if (c.kind === 'set') view.clear();
            for (const r of c.kind === 'set' ? c.routes : c.changed) view.set(r.prefix, r);
            if (c.kind === 'update') for (const p of c.removed) view.delete(p);
          }
          check();
        }
      }
    }),
    { numRuns: 300 },
  );
  t.equal(runs, 300);
});

t.test('static routes are diffed as lists: nothing for the same objects, the change for a reload that empties, fills or edits them', async (t) => {
  const cfgRoutes = (prefixes: string[]) => {
    const r = validateConfig({ bgp: { localAs: 65000, routerId: '10.0.0.1' }, routes: prefixes.map((prefix) => ({ prefix })) });
    if (!r.ok) throw new Error(JSON.stringify(r.errors));
    return r.config.routes;
  };
  const s = sink();
  const a = new RouteAssembly(s);
  const list = cfgRoutes(['192.0.2.1/32', '192.0.2.2/32', '192.0.2.3/32']);
  a.setStatic(list);
  t.same(a.flush(true), { routes: 3, changed: 3, removed: 0, held: 0 });
  t.equal(s.calls[0]?.kind, 'set', 'the first flush hands over the whole set');
  a.setStatic([...list]);
  t.same(a.flush(true), { routes: 3, changed: 0, removed: 0, held: 0 }, 'the same objects in the same places: nothing');
  t.equal(s.calls.length, 1);
  a.setStatic([]);
  t.same(a.flush(true), { routes: 0, changed: 0, removed: 3, held: 0 });
  t.same(s.calls.at(-1), { kind: 'update', changed: [], removed: ['192.0.2.1/32', '192.0.2.2/32', '192.0.2.3/32'] }, 'emptied: every prefix withdrawn');
  a.setStatic(list);
  t.same(a.flush(true), { routes: 3, changed: 3, removed: 0, held: 0 }, 'filled again: every route');
  const [inserted] = cfgRoutes(['192.0.2.9/32']);
  a.setStatic([list[0]!, inserted!, list[2]!]);
  t.same(a.flush(false), { routes: 3, changed: 1, removed: 1, held: 0 });
  t.same(s.calls.at(-1), { kind: 'update', changed: [{ prefix: '192.0.2.9/32', family: 'ipv4-unicast' }], removed: ['192.0.2.2/32'] }, 'an edit in the middle: only it');
  a.setStatic(cfgRoutes(['192.0.2.1/32', '192.0.2.9/32', '192.0.2.3/32']));
  t.same(a.flush(false), { routes: 3, changed: 0, removed: 0, held: 0 }, 'the same routes from a file parsed again: no change');
});

t.test('a hand-over that throws, or a failed pass, makes the next flush hand over the whole set', async (t) => {
  const s = sink();
  let failing = true;
  const a = new RouteAssembly({ setRoutes: s.setRoutes, updateRoutes: (c, r) => (failing ? (() => { throw new Error('encoder refused'); })() : s.updateRoutes(c, r)) });
  a.setStatic(staticRoutes);
  a.flush(true);
  a.setService('ns/a', [piece('192.0.2.1/32', 'ns/a')]);
  t.throws(() => a.flush(false), /encoder refused/);
  failing = false;
  t.same(a.flush(false), { routes: 2, changed: 2, removed: 0, held: 0 });
  t.same(s.calls.at(-1)?.kind, 'set', 'the whole set again after the throw');
  a.handOverWhole();
  a.flush(false);
  t.same(s.calls.at(-1)?.kind, 'set', 'and when asked (a failed pass)');
  t.equal(s.calls.length, 3);
});
