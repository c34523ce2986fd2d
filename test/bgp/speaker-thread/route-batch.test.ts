// RouteBatch (bgp/speaker-thread/route-batch.ts): every Route field survives the channel form, in order, through a
// real structured clone with the transfer list; what the form cannot carry is refused with a RouteError; a batch
// that does not add up is refused with a RangeError.
import t from 'tap';
import fc from 'fast-check';
import { MessageChannel } from 'node:worker_threads';
import { decodeRouteBatch, decodePrefixes, encodePrefixes, encodeRouteBatch, exportedRoute, wireExportedRoute } from '../../../bgp/speaker-thread/route-batch.ts';
import type { RouteBatch } from '../../../bgp/speaker-thread/route-batch.ts';
import type { Route } from '../../../bgp/rib/route.ts';
import { ipv6AddressSpecific, linkBandwidth, twoOctetAsSpecific } from '../../../bgp/codec/ext-communities.ts';

/** Sends `batch` through a real MessagePort with its transfer list; resolves with what arrived. */
async function cross(batch: RouteBatch, transfer: ArrayBuffer[]): Promise<RouteBatch> {
  const { port1, port2 } = new MessageChannel();
  const got = new Promise<RouteBatch>((resolve) => port2.once('message', resolve));
  port1.postMessage(batch, transfer);
  const out = await got;
  port1.close();
  return out;
}

const u32 = fc.integer({ min: 0, max: 0xffffffff });
const routeArb: fc.Arbitrary<Route> = fc
  .record(
    {
      v6: fc.boolean(),
      i: fc.integer({ min: 0, max: 0xffff }),
      nextHop: fc.constantFrom('192.0.2.1', '2001:db8::1', 'fe80::1%eth0', 'line\nbreak "quoted"'),
      communities: fc.array(u32, { maxLength: 4 }),
      largeCommunities: fc.array(fc.tuple(u32, u32, u32), { maxLength: 3 }),
      extendedCommunities: fc.array(fc.constantFrom(linkBandwidth(65000, 1e9), twoOctetAsSpecific(2, 65000, 7, false)), { maxLength: 2 }),
      ipv6ExtendedCommunities: fc.array(fc.constantFrom(ipv6AddressSpecific(2, '2001:db8::1', 9)), { maxLength: 2 }),
      localPref: u32,
      med: fc.oneof(u32, fc.constantFrom(-1, 1.5, Number.NaN, 2 ** 40)),
      origin: fc.constantFrom(0, 1, 2),
      asPathPrepend: fc.oneof(fc.integer({ min: 0, max: 254 }), fc.constantFrom(-1, 2.5, 300)),
      peers: fc.array(fc.string({ maxLength: 6 }), { maxLength: 3 }),
    },
    { requiredKeys: ['v6', 'i'] },
  )
  .map(({ v6, i, ...rest }) => ({ prefix: v6 ? `2001:db8::${i.toString(16)}/128` : `10.0.${i >> 8}.${i & 255}/32`, family: v6 ? 'ipv6-unicast' : 'ipv4-unicast', ...rest }));

t.test('property: every field survives the channel, in order (duplicates too), out-of-range numbers unchanged', async (t) => {
  await fc.assert(
    fc.asyncProperty(fc.array(routeArb, { maxLength: 40 }), async (routes) => {
      const { batch, transfer } = encodeRouteBatch(routes, routes.length);
      const back = decodeRouteBatch(await cross(batch, transfer));
      t.same(back, routes);
      for (let i = 0; i < routes.length; i++) {
        for (const c of back[i]!.extendedCommunities ?? []) if (!Buffer.isBuffer(c.value)) throw new Error('extended community value is not a Buffer');
      }
    }),
    { numRuns: 200 },
  );
});

t.test('100,000 routes cross in one batch; a plain route is built with nothing but its prefix and family', async (t) => {
  const routes: Route[] = [];
  for (let i = 0; i < 100_000; i++) routes.push(i % 10 === 0 ? { prefix: `10.${i >> 16}.${(i >> 8) & 255}.${i & 255}/32`, family: 'ipv4-unicast', communities: [i] } : { prefix: `10.${i >> 16}.${(i >> 8) & 255}.${i & 255}/32`, family: 'ipv4-unicast' });
  const { batch, transfer } = encodeRouteBatch(routes.values(), routes.length);
  const got = await cross(batch, transfer);
  t.equal(batch.flags.byteLength, 0, 'the typed arrays were transferred, not copied');
  const back = decodeRouteBatch(got);
  t.equal(back.length, 100_000);
  t.same(back[1], { prefix: '10.0.0.1/32', family: 'ipv4-unicast' });
  t.same(Object.keys(back[1]!), ['prefix', 'family']);
  t.same(back[99_990], { prefix: '10.1.134.150/32', family: 'ipv4-unicast', communities: [99_990] });
});

t.test('what the channel form cannot carry is a RouteError naming the route; a wrong count or batch a RangeError', async (t) => {
  const bad = (r: object): Route[] => [{ prefix: '10.0.0.1/32', family: 'ipv4-unicast' }, { prefix: '10.0.0.2/32', family: 'ipv4-unicast', ...r }];
  const refuse = (routes: Route[], message: RegExp, name: string) => t.throws(() => encodeRouteBatch(routes, routes.length), { name: 'RouteError', message }, name);
  const ipv9: Route = JSON.parse('{"prefix":"10.0.0.1/32","family":"ipv9-unicast"}');
  refuse([ipv9], /10\.0\.0\.1\/32: unsupported family "ipv9-unicast"/, 'family');
  refuse(bad({ med: '5' }), /10\.0\.0\.2\/32: MED must be a number, got "5"/, 'MED as text');
  refuse(bad({ asPathPrepend: '2' }), /10\.0\.0\.2\/32: AS path prepend must be a number, got "2"/, 'prepend as text');
  refuse(bad({ origin: 3 }), /ORIGIN must be 0, 1 or 2, got 3/, 'ORIGIN');
  refuse(bad({ largeCommunities: [[1, 2]] }), /large communities must be three 32-bit unsigned integers/, 'large community of two');
  refuse(bad({ communities: [1, null] }), /a community must be a number, got null/, 'community');
  t.throws(() => encodeRouteBatch(bad({}), 3), RangeError, 'fewer routes than announced');
  t.throws(() => encodeRouteBatch(bad({}), 1), RangeError, 'more routes than announced');
  const { batch } = encodeRouteBatch(bad({ med: 1 }), 2);
  t.throws(() => decodeRouteBatch({ ...batch, prefixes: '10.0.0.1/32\n' }), RangeError, 'prefixes missing');
  t.throws(() => decodeRouteBatch({ ...batch, numberCount: 0 }), RangeError, 'numbers missing');
});

t.test('prefix lists and exported routes cross too', async (t) => {
  t.same(decodePrefixes(encodePrefixes([])), []);
  t.same(decodePrefixes(encodePrefixes(['10.0.0.0/8', '2001:db8::/32'])), ['10.0.0.0/8', '2001:db8::/32']);
  const ex = { prefix: '10.0.0.1/32', family: 'ipv4-unicast' as const, nextHop: '192.0.2.1', asPath: [65000], extendedCommunities: [linkBandwidth(65000, 1e6)] };
  const { port1, port2 } = new MessageChannel();
  const got = new Promise<ReturnType<typeof wireExportedRoute>>((resolve) => port2.once('message', resolve));
  port1.postMessage(wireExportedRoute(ex));
  const back = exportedRoute(await got);
  port1.close();
  t.same(back, ex);
  t.ok(Buffer.isBuffer(back.extendedCommunities?.[0]?.value), 'a Buffer again');
});

t.test('property: a batch staged in a route table gives the table its decoded routes give, errors included', async (t) => {
  const { RouteTable } = await import('../../../bgp/rib/route-table.ts');
  const { stageRouteBatch, stageRemovals } = await import('../../../bgp/speaker-thread/route-batch.ts');
  const plain = fc.integer({ min: 0, max: 300 }).map((i): Route => ({ prefix: `10.0.${i >> 8}.${i & 255}/32`, family: 'ipv4-unicast' }));
  let compared = 0;
  fc.assert(
    fc.property(fc.array(fc.oneof(routeArb, plain), { maxLength: 40 }), fc.array(plain, { maxLength: 10 }), (routes, removed) => {
      const { batch } = encodeRouteBatch(routes, routes.length);
      const staged = new RouteTable();
      const decoded = new RouteTable();
      let stagedErr: string | undefined;
      let decodedErr: string | undefined;
      try {
        const e = staged.edit();
        stageRouteBatch(batch, e);
        stageRemovals(encodePrefixes(removed.map((r) => r.prefix)), e);
        staged.apply(e, { replace: false });
      } catch (err) {
        stagedErr = (err as Error).message;
      }
      try {
        decoded.update(decodeRouteBatch(batch), decodePrefixes(encodePrefixes(removed.map((r) => r.prefix))));
      } catch (err) {
        decodedErr = (err as Error).message;
      }
      if (stagedErr !== decodedErr) throw new Error(`errors differ: ${stagedErr} / ${decodedErr}`);
      const view = (tb: InstanceType<typeof RouteTable>) => JSON.stringify(tb.routes().map((r) => ({ ...r, extendedCommunities: r.extendedCommunities?.map((c) => c.value.toString('hex')), ipv6ExtendedCommunities: r.ipv6ExtendedCommunities?.map((c) => c.value.toString('hex')) })));
      if (view(staged) !== view(decoded)) throw new Error(`tables differ:\n${view(staged)}\n${view(decoded)}`);
      if (stagedErr === undefined) compared++;
    }),
    { numRuns: 300 },
  );
  t.ok(compared > 20, `${compared} batches applied the same`);
});
