// The Speaker's route table (bgp/rib/route-table.ts): the in-place IPv4 parser agrees with parseRoutePrefix on every
// text, batches apply all or nothing, later duplicates win, attribute sets are shared and dropped with their last
// route, and a slot a peer holds stays (with its prefix) until released, then is freed and reused.
import t from 'tap';
import fc from 'fast-check';
import { RouteTable } from '../../../bgp/rib/route-table.ts';
import { parseRoutePrefix, RouteError } from '../../../bgp/rib/route.ts';
import type { Route } from '../../../bgp/rib/route.ts';

const v4 = (prefix: string, extra: Partial<Route> = {}): Route => ({ prefix, family: 'ipv4-unicast', ...extra });

t.test('IPv4 text parsed in place: accepted exactly when parseRoutePrefix accepts it, to the same prefix', async (t) => {
  const octet = fc.oneof(fc.integer({ min: 0, max: 255 }).map(String), fc.constantFrom('00', '01', '256', '1000', '', 'a', '-1', ' 1'));
  const text = fc.oneof(
    fc.tuple(octet, octet, octet, octet, fc.oneof(fc.integer({ min: 0, max: 33 }).map(String), fc.constantFrom('08', '', '032', 'x', '3 2'))).map(([a, b, c, d, l]) => `${a}.${b}.${c}.${d}/${l}`),
    fc.tuple(fc.integer({ min: 0, max: 0xffffffff }), fc.integer({ min: 0, max: 32 })).map(([x, l]) => {
      const v = l === 0 ? 0 : (x & (0xffffffff << (32 - l))) >>> 0; // host bits zero: a valid prefix
      return `${v >>> 24}.${(v >>> 16) & 255}.${(v >>> 8) & 255}.${v & 255}/${l}`;
    }),
    fc.string({ maxLength: 20 }),
  );
  let accepted = 0;
  fc.assert(
    fc.property(text, (p) => {
      let want: string | undefined;
      try {
        parseRoutePrefix(p, 'ipv4-unicast');
        want = p;
      } catch (err) {
        if (!(err instanceof RouteError)) throw err;
      }
      const table = new RouteTable();
      const e = table.edit();
      // the text in the middle of a longer one, as a route batch carries it
      const wrapped = `x\n${p}\ny`;
      e.addText(wrapped, 2, 2 + p.length, 'ipv4-unicast', undefined);
      if (want === undefined) {
        if (e.problems.length !== 1) throw new Error(`${JSON.stringify(p)} accepted, parseRoutePrefix refuses it`);
        let expected = '';
        try {
          parseRoutePrefix(p, 'ipv4-unicast');
        } catch (err) {
          expected = (err as Error).message;
        }
        if (e.problems[0] !== expected) throw new Error(`${JSON.stringify(p)}: "${e.problems[0]}", want "${expected}"`);
        return;
      }
      accepted++;
      const d = table.apply(e, { replace: false });
      if (d.changed.length !== 1 || table.prefixText(d.changed[0]!) !== want) throw new Error(`${p} → ${d.changed.map((s) => table.prefixText(s))}`);
      if (table.slotOf(p) !== d.changed[0]) throw new Error(`slotOf(${p})`);
    }),
    { numRuns: 3000 },
  );
  t.ok(accepted > 300, `${accepted} texts accepted`);
});

t.test('a batch applies all or nothing; a later duplicate wins; the diff lists what changed and what left', async (t) => {
  const table = new RouteTable();
  const d0 = table.replace([v4('10.0.0.1/32'), v4('10.0.0.2/32', { med: 1 }), v4('10.0.0.2/32', { med: 2 }), { prefix: '2001:db8::/64', family: 'ipv6-unicast' }]);
  t.equal(table.size, 3);
  t.same(d0.changed.map((s) => table.prefixText(s)).sort(), ['10.0.0.1/32', '10.0.0.2/32', '2001:db8::/64']);
  t.same(table.routes().find((r) => r.prefix === '10.0.0.2/32')?.med, 2, 'the later duplicate wins');
  t.throws(() => table.update([v4('10.0.0.3/32'), v4('10.0.0.5/31'), v4('10.0.0.5/32', { med: -1 })]), /2 invalid route\(s\): host bits set in "10\.0\.0\.5\/31"; 10\.0\.0\.5\/32: MED must be/);
  t.equal(table.size, 3, 'nothing of the bad batch applied');
  t.equal(table.slotOf('10.0.0.3/32'), -1);
  const d1 = table.update([v4('10.0.0.2/32', { med: 2 }), v4('10.0.0.3/32')], ['10.0.0.1/32', '10.9.9.9/32', 'not a prefix']);
  t.same(d1.changed.map((s) => table.prefixText(s)), ['10.0.0.3/32'], 'an unchanged route is no change');
  t.same(d1.removed.map((s) => table.prefixText(s)), ['10.0.0.1/32']);
  const d2 = table.update([v4('10.0.0.7/32')], ['10.0.0.7/32']);
  t.same([d2.changed, d2.removed], [[], []], 'added and removed in one batch: nothing');
  const two = table.slotOf('10.0.0.2/32');
  const six = table.slotOf('2001:db8::/64');
  t.same([...table.replace([v4('10.0.0.3/32')]).removed].sort(), [two, six].sort(), 'replace removes what it does not list');
  t.same(table.familySize('ipv6-unicast'), 0);
});

t.test('a slot a peer holds keeps its prefix after it left the set, and is freed and reused once released', async (t) => {
  const table = new RouteTable();
  const [a] = table.replace([v4('192.0.2.1/32'), v4('192.0.2.2/32')]).changed;
  table.acquire(a!);
  const gone = table.replace([v4('192.0.2.2/32')]);
  t.same(gone.removed, [a]);
  t.equal(table.attrOf(a!), undefined, 'not desired');
  t.equal(table.prefixText(a!), '192.0.2.1/32', 'the prefix stays for the withdrawal');
  const back = table.update([v4('192.0.2.1/32', { med: 3 })]);
  t.same(back.changed, [a], 'the same prefix comes back into its held slot');
  table.replace([v4('192.0.2.2/32')]);
  table.release(a!);
  const next = table.update([v4('198.51.100.9/32')]);
  t.same(next.changed, [a], 'a slot neither desired nor held is reused');
  t.equal(table.prefixText(a!), '198.51.100.9/32');
  t.equal(table.slotOf('192.0.2.1/32'), -1);
});

t.test('attribute sets: shared by routes with the same attributes, dropped with their last route', async (t) => {
  const table = new RouteTable();
  const d = table.replace([v4('10.0.0.1/32', { communities: [1] }), v4('10.0.0.2/32', { communities: [1] }), v4('10.0.0.3/32')]);
  const [x, y, z] = d.changed;
  t.equal(table.attrOf(x!), table.attrOf(y!), 'one set for equal attributes');
  t.not(table.attrOf(x!), table.attrOf(z!));
  const set = table.attrOf(x!)!;
  t.equal(set.refs, 2);
  table.replace([v4('10.0.0.3/32')]);
  t.equal(set.refs, 0);
  const again = table.update([v4('10.0.0.4/32', { communities: [1] })]);
  t.not(table.attrOf(again.changed[0]!), set, 'a dropped set is made anew');
  t.same(new Map(table.routes().map((r) => [r.prefix, r.communities])), new Map([['10.0.0.3/32', undefined], ['10.0.0.4/32', [1]]]));
});

t.test('an edit that fails or is discarded leaves no attribute set behind', async (t) => {
  const table = new RouteTable();
  table.replace([v4('10.0.0.1/32', { med: 1 })]);
  const sets = table.attributeSets;
  t.equal(sets, 3, 'the two plain sets and one of med 1');
  t.throws(() => table.update([v4('10.0.0.2/32', { med: 2 }), v4('10.0.0.3/33')]), RouteError);
  t.equal(table.attributeSets, sets, 'a batch with a bad route interns nothing');
  // staging that throws halfway (a route batch that does not add up): the edit is dropped, never applied
  let staged = 0;
  const halfway = new RangeError('route batch: numbers run short');
  t.throws(() => table.change((e) => {
    e.add(v4('10.0.0.4/32', { med: 4 }));
    e.add(v4('10.0.0.5/32', { med: 1 }));
    staged = table.attributeSets;
    throw halfway;
  }, { replace: true }), halfway, 'the error goes on');
  t.equal(staged, sets + 1, 'staging interned the new set');
  t.equal(table.attributeSets, sets, 'dropped with the edit');
  t.equal(table.size, 1);
  t.equal(table.routes()[0]?.med, 1, 'the set in use stays');
  t.equal(table.update([v4('10.0.0.4/32', { med: 4 })]).changed.length, 1, 'the attributes are interned anew');
  t.equal(table.attributeSets, sets + 1);
});

t.test('routes without attributes share the plain set of their family, kept when no route uses it', async (t) => {
  const table = new RouteTable();
  const e = table.edit();
  e.addText('10.0.0.1/32\n2001:db8::/64\n', 0, 11, 'ipv4-unicast', undefined);
  e.addText('10.0.0.1/32\n2001:db8::/64\n', 12, 25, 'ipv6-unicast', undefined);
  e.add(v4('10.0.0.2/32'));
  const d = table.apply(e, { replace: true });
  const [a, b, c] = d.changed;
  t.equal(table.attrOf(a!), table.attrOf(c!), 'a plain Route and a plain text share the set');
  t.not(table.attrOf(a!), table.attrOf(b!), 'one per family');
  t.same(table.routes(), [v4('10.0.0.1/32'), { prefix: '2001:db8::/64', family: 'ipv6-unicast' }, v4('10.0.0.2/32')]);
  const plain = table.attrOf(a!);
  table.replace([]);
  t.equal(table.attributeSets, 2, 'the plain sets stay');
  t.equal(table.update([v4('10.0.0.9/32')]).changed.length, 1);
  t.equal(table.attrOf(table.slotOf('10.0.0.9/32')), plain, 'the same plain IPv4 set again');
});
