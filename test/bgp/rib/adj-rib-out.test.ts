// Adj-RIB-Out + packer: unit scenarios and fast-check invariants (architecture guide §6.5.4). Every message is decoded
// with an independent decoder (wire-decode.ts) and applied to a model of the peer's table.
import t from 'tap';
import fc from 'fast-check';
import { AdjRibOut } from '../../../bgp/rib/adj-rib-out.ts';
import { RouteTable } from '../../../bgp/rib/route-table.ts';
import { attributeSignature } from '../../../bgp/rib/export.ts';
import type { ExportPeer } from '../../../bgp/rib/export.ts';
import type { Route } from '../../../bgp/rib/route.ts';
import { decodeUpdate } from './wire-decode.ts';
import type { DecodedUpdate } from './wire-decode.ts';

const families = new Set(['ipv4-unicast', 'ipv6-unicast'] as const);
const peer: ExportPeer = { name: 'p', localAs: 65000, peerAs: 65001, fourOctetAs: true, families, localAddress: '127.0.0.2', nextHopIPv6: '2001:db8::1' };

/** A desired set: prefix → the route (a later duplicate wins, as in the Speaker) and its attribute signature. */
type Desired = Map<string, { key: string; route: Route; sig: string }>;
function records(routes: Route[]): Desired {
  const m: Desired = new Map();
  for (const r of routes) m.set(r.prefix, { key: r.prefix, route: r, sig: attributeSignature(r) });
  return m;
}

/** Each Adj-RIB-Out under test over its own route table, as the Speaker has one (bgp/speaker.ts). */
const tables = new WeakMap<AdjRibOut, RouteTable>();
function newRib(opts?: ConstructorParameters<typeof AdjRibOut>[1]): AdjRibOut {
  const table = new RouteTable();
  const rib = new AdjRibOut(table, opts);
  tables.set(rib, table);
  return rib;
}
/** The whole desired set replaced, as Speaker.setRoutes does: the table's diff goes to the Adj-RIB-Out. */
function desire(rib: AdjRibOut, set: Desired): void {
  rib.setDesired(tables.get(rib)!.replace([...set.values()].map((r) => r.route)));
}

/** Pulls every pending message; returns them decoded, in order. */
function flush(rib: AdjRibOut, max: number): DecodedUpdate[] {
  const out: DecodedUpdate[] = [];
  for (let i = 0; i < 1_000_000; i++) {
    const m = rib.nextMessage(max);
    if (m === undefined) return out;
    if (m.length > max) throw new Error(`message of ${m.length} > ${max}`);
    out.push(decodeUpdate(m));
  }
  throw new Error('nextMessage never ran dry');
}

/** The peer's table: prefix (the records' key) -> attribute signature. */
function apply(table: Map<string, string>, msgs: DecodedUpdate[]): void {
  const bare = (k: string) => k.slice(k.indexOf(' ') + 1);
  for (const m of msgs) {
    for (const w of m.withdrawn) table.delete(bare(w));
    for (const a of m.announced) table.set(bare(a), m.attrSignature);
  }
}

const v4 = (i: number, len: 8 | 16 | 24): Route => ({
  prefix: len === 8 ? `${i & 255}.0.0.0/8` : len === 16 ? `10.${i & 255}.0.0/16` : `10.0.${i & 255}.0/24`,
  family: 'ipv4-unicast',
});
const host = (i: number): Route => ({ prefix: `10.0.${(i >> 8) & 255}.${i & 255}/32`, family: 'ipv4-unicast' });
const host6 = (i: number): Route => ({ prefix: `2001:db8::${i.toString(16)}/128`, family: 'ipv6-unicast' });

t.test('initial table: announcements grouped by attributes, then End-of-RIB only after markInitialSyncDone', async (t) => {
  const rib = newRib();
  desire(rib, records([host(1), host(2), { ...host(3), med: 5 }, host6(1)]));
  t.equal(rib.nextMessage(4096), undefined, 'nothing before the session is up');
  rib.start(peer);
  const msgs = flush(rib, 4096);
  t.equal(msgs.length, 3, 'three attribute groups, three UPDATEs');
  t.same(msgs[0]!.announced, ['ipv4-unicast 10.0.0.1/32', 'ipv4-unicast 10.0.0.2/32']);
  t.same(msgs[1]!.announced, ['ipv4-unicast 10.0.0.3/32']);
  t.same(msgs[1]!.attrs.get(4)!.value.readUInt32BE(0), 5, 'MED');
  t.same(msgs[2]!.announced, ['ipv6-unicast 2001:db8::1/128']);
  t.equal(msgs[2]!.mpNextHop, '2001:db8::1');
  t.equal(msgs.filter((m) => m.endOfRib).length, 0, 'no End-of-RIB before markInitialSyncDone');
  rib.markInitialSyncDone();
  const eor = flush(rib, 4096);
  t.same(eor.map((m) => m.endOfRib), ['ipv4-unicast', 'ipv6-unicast']);
  t.equal(flush(rib, 4096).length, 0, 'End-of-RIB sent once');
  t.equal(rib.advertisedCount, 4);
});

t.test('withdrawals first; latest change wins; announce-then-withdraw of a never-sent route sends nothing', async (t) => {
  const rib = newRib();
  rib.markInitialSyncDone();
  rib.start(peer);
  desire(rib, records([host(1), host(2)]));
  flush(rib, 4096);
  desire(rib, records([host(2), { ...host(3), med: 1 }]));
  desire(rib, records([host(2), { ...host(3), med: 2 }, host(4)]));
  desire(rib, records([host(2), { ...host(3), med: 3 }]));
  const msgs = flush(rib, 4096);
  t.same(msgs.map((m) => [m.withdrawn, m.announced]), [
    [['ipv4-unicast 10.0.0.1/32'], []],
    [[], ['ipv4-unicast 10.0.0.3/32']],
  ]);
  t.equal(msgs[1]!.attrs.get(4)!.value.readUInt32BE(0), 3, 'only the latest MED is sent');
});

t.test('withdraw queued, then the route comes back unchanged before sending: nothing is sent', async (t) => {
  const rib = newRib();
  rib.start(peer);
  desire(rib, records([host(1), host(2)]));
  flush(rib, 4096);
  desire(rib, records([host(2)]));
  desire(rib, records([host(1), host(2)]));
  t.same(flush(rib, 4096), [], 'no withdraw, no announce');
  t.equal(rib.advertisedCount, 2);
  desire(rib, records([host(2)]));
  desire(rib, records([{ ...host(1), med: 9 }, host(2)]));
  t.same(flush(rib, 4096).map((m) => [m.withdrawn, m.announced]), [[[], ['ipv4-unicast 10.0.0.1/32']]], 'changed: one announce, no withdraw');
});

t.test('packing: 100,000 /32 fill 4096-octet and 65535-octet UPDATEs; session reset resends everything', async (t) => {
  const routes: Route[] = [];
  for (let i = 0; i < 100_000; i++) routes.push({ prefix: `10.${i >> 16}.${(i >> 8) & 255}.${i & 255}/32`, family: 'ipv4-unicast' });
  const rib = newRib();
  desire(rib, records(routes));
  rib.start(peer);
  const small = flush(rib, 4096);
  const n = small.reduce((s, m) => s + m.announced.length, 0);
  t.equal(n, 100_000);
  // 4096 - 23 fixed - 20 attribute octets (ORIGIN 4, AS_PATH 9, NEXT_HOP 7) = 4053 for NLRI; 5 octets per /32 = 810
  t.equal(small[0]!.announced.length, 810);
  t.equal(small.length, Math.ceil(100_000 / 810));
  rib.reset();
  t.equal(rib.nextMessage(4096), undefined, 'nothing while down');
  rib.start(peer);
  const big = flush(rib, 65535);
  t.equal(big.reduce((s, m) => s + m.announced.length, 0), 100_000, 'full resend after reset');
  t.ok(big.every((m) => m.length <= 65535));
  t.equal(big.length, Math.ceil(100_000 / Math.floor((65535 - 23 - 20) / 5)));
  desire(rib, records([]));
  const w = flush(rib, 4096);
  t.equal(w.reduce((s, m) => s + m.withdrawn.length, 0), 100_000, 'withdraw all');
  t.equal(w[0]!.withdrawn.length, Math.floor((4096 - 23) / 5));
});

t.test('route refresh resends the family; export context change resends changed routes only', async (t) => {
  const rib = newRib();
  rib.start(peer);
  desire(rib, records([host(1), host6(1)]));
  flush(rib, 4096);
  rib.refresh('ipv6-unicast');
  t.same(flush(rib, 4096).map((m) => m.announced), [['ipv6-unicast 2001:db8::1/128']]);
  rib.setExportPeer({ ...peer, nextHopIPv6: '2001:db8::1' });
  t.equal(flush(rib, 4096).length, 0, 'same attributes: nothing resent');
  rib.setExportPeer({ ...peer, gracefulShutdown: true });
  const gs = flush(rib, 4096);
  t.equal(gs.length, 2);
  t.ok(gs.every((m) => m.attrs.get(8)?.value.toString('hex') === 'ffff0000'), 'GRACEFUL_SHUTDOWN community on every route');
  t.same(rib.advertisedRoutes().map((r) => r.communities), [[0xffff0000], [0xffff0000]]);
});

t.test('IPv6 withdraw via MP_UNREACH_NLRI; families not negotiated are not sent', async (t) => {
  const rib = newRib();
  rib.start({ ...peer, families: new Set(['ipv6-unicast'] as const) });
  desire(rib, records([host(1), host6(1), host6(2)]));
  const a = flush(rib, 4096);
  t.same(a.flatMap((m) => m.announced), ['ipv6-unicast 2001:db8::1/128', 'ipv6-unicast 2001:db8::2/128']);
  desire(rib, records([host(1)]));
  const w = flush(rib, 4096);
  t.same(w.map((m) => [m.withdrawn, m.attrs.has(15)]), [[['ipv6-unicast 2001:db8::1/128', 'ipv6-unicast 2001:db8::2/128'], true]]);
});

t.test('property: packer and diff invariants over random change sequences', async (t) => {
  const routeArb = fc.record({
    i: fc.integer({ min: 0, max: 40 }),
    six: fc.boolean(),
    len: fc.constantFrom(8, 16, 24, 32),
    med: fc.option(fc.integer({ min: 0, max: 3 }), { nil: undefined }),
    comm: fc.option(fc.constantFrom([1], [1, 2], [0xfde80001]), { nil: undefined }),
    lc: fc.option(fc.constantFrom([[65000, 1, 2]] as [number, number, number][]), { nil: undefined }),
  }).map(({ i, six, len, med, comm, lc }): Route => {
    const base = six ? host6(i + 1) : len === 32 ? host(i) : v4(i, len as 8 | 16 | 24);
    const r: Route = { ...base };
    return { ...r, ...(med !== undefined ? { med } : {}), ...(comm ? { communities: comm } : {}), ...(lc ? { largeCommunities: lc } : {}) };
  });
  const setArb = fc.array(routeArb, { maxLength: 300 });
  let runs = 0;
  fc.assert(
    fc.property(fc.array(fc.tuple(setArb, fc.boolean(), fc.boolean()), { minLength: 1, maxLength: 5 }), fc.constantFrom(4096, 65535, 120), (steps, bigMax) => {
      runs++;
      const max = bigMax;
      const rib = newRib();
      rib.markInitialSyncDone();
      rib.start(peer);
      const table = new Map<string, string>();
      let eorSeen = 0;
      for (const [set, flushNow, resetSession] of steps) {
        const recs = records(set);
        desire(rib, recs);
        if (resetSession) {
          // session flap: the peer forgot everything; the rebuilt queue takes the trusted fast path
          rib.reset();
          table.clear();
          eorSeen = 0;
          rib.start(peer);
        }
        if (!flushNow) continue;
        const msgs = flush(rib, max);
        // withdrawals before announcements, End-of-RIB last
        const kinds = msgs.map((m) => (m.endOfRib ? 2 : m.withdrawn.length > 0 ? 0 : 1));
        for (let k = 1; k < kinds.length; k++) if (kinds[k]! < kinds[k - 1]!) throw new Error(`order ${kinds.join()}`);
        // no prefix both withdrawn and announced in one flush; each announced at most once
        const w = new Set(msgs.flatMap((m) => m.withdrawn));
        const a = msgs.flatMap((m) => m.announced);
        if (new Set(a).size !== a.length) throw new Error('a prefix announced twice in one flush');
        for (const p of a) if (w.has(p)) throw new Error(`${p} withdrawn and announced in one flush`);
        for (const m of msgs) {
          if (m.length > max) throw new Error('too long');
          if (m.withdrawn.length > 0 && m.announced.length > 0) throw new Error('mixed message');
        }
        eorSeen += msgs.filter((m) => m.endOfRib).length;
        apply(table, msgs);
        // diff invariant: the peer's table equals the desired set, each route with its own attributes
        const want = [...recs.keys()].sort();
        const got = [...table.keys()].sort();
        if (JSON.stringify(want) !== JSON.stringify(got)) throw new Error(`table mismatch\n${want}\n${got}`);
        const byAttrs = new Map<string, string>();
        for (const rec of recs.values()) {
          const s = table.get(rec.key)!;
          const prev = byAttrs.get(rec.sig);
          if (prev !== undefined && prev !== s) throw new Error('same route attributes, different wire attributes');
          byAttrs.set(rec.sig, s);
        }
      }
      // the final flush always sends everything
      apply(table, flush(rib, max));
      const last = steps[steps.length - 1]![0];
      const wantFinal = [...records(last).keys()].sort();
      if (JSON.stringify([...table.keys()].sort()) !== JSON.stringify(wantFinal)) throw new Error('final table mismatch');
      if (table.size !== rib.advertisedCount) throw new Error('advertisedCount mismatch');
      if (eorSeen > 2) throw new Error('End-of-RIB repeated');
    }),
    { numRuns: 150 },
  );
  t.equal(runs, 150);
});

t.test('property: partial drains interleaved with changes; what the peer holds is what the Adj-RIB-Out says it holds', async (t) => {
  // The initial table's fast path enters packed routes in `advertised` only later (adj-rib-out.ts `deferred`):
  // every step below may come between two UPDATEs of that table.
  const routeArb = fc.record({ i: fc.integer({ min: 0, max: 300 }), med: fc.option(fc.integer({ min: 0, max: 2 }), { nil: undefined }) }).map(({ i, med }): Route => ({ ...host(i), ...(med !== undefined ? { med } : {}) }));
  const stepArb = fc.oneof(
    fc.record({ kind: fc.constant('set' as const), routes: fc.array(routeArb, { maxLength: 400 }) }),
    fc.record({ kind: fc.constant('send' as const), n: fc.integer({ min: 0, max: 4 }) }),
    fc.record({ kind: fc.constant('reset' as const) }),
    // a flap with the table packed while down (bgp/rib/packed-table.ts): for the coming context or another one,
    // maybe a change before the session is back
    fc.record({ kind: fc.constant('flap' as const), prepare: fc.constantFrom('same', 'otherNextHop', 'otherLength'), routes: fc.option(fc.array(routeArb, { maxLength: 400 }), { nil: undefined }) }),
    fc.record({ kind: fc.constant('refresh' as const) }),
    fc.record({ kind: fc.constant('nextHop' as const), nh: fc.constantFrom('127.0.0.2', '127.0.0.3') }),
    fc.record({ kind: fc.constant('read' as const) }),
  );
  let runs = 0;
  fc.assert(
    fc.property(fc.array(routeArb, { maxLength: 400 }), fc.array(stepArb, { maxLength: 12 }), (initial, steps) => {
      runs++;
      const max = 120; // a few NLRI per UPDATE: many partial states
      const rib = newRib();
      let recs = records(initial);
      desire(rib, recs);
      let exportPeer: ExportPeer = peer;
      rib.start(exportPeer);
      const table = new Map<string, string>();
      const check = (when: string) => {
        if (rib.advertisedCount !== table.size) throw new Error(`${when}: advertisedCount ${rib.advertisedCount}, the peer holds ${table.size}`);
      };
      for (const step of steps) {
        if (step.kind === 'set') {
          recs = records(step.routes);
          desire(rib, recs);
        } else if (step.kind === 'send') {
          for (let k = 0; k < step.n; k++) {
            const m = rib.nextMessage(max);
            if (m !== undefined) apply(table, [decodeUpdate(m)]);
          }
        } else if (step.kind === 'reset') {
          rib.reset();
          table.clear();
          rib.start(exportPeer);
        } else if (step.kind === 'flap') {
          rib.reset();
          table.clear();
          if (step.prepare === 'same') rib.prepare(exportPeer, max);
          else if (step.prepare === 'otherLength') rib.prepare(exportPeer, 4096);
          else rib.prepare({ ...exportPeer, localAddress: '127.0.0.4' }, max);
          if (step.routes !== undefined) {
            recs = records(step.routes);
            desire(rib, recs);
          }
          rib.start(exportPeer, max);
        } else if (step.kind === 'refresh') {
          rib.refresh('ipv4-unicast');
        } else if (step.kind === 'nextHop') {
          exportPeer = { ...peer, localAddress: step.nh };
          rib.setExportPeer(exportPeer);
        } else {
          const held = rib.advertisedRoutes().map((r) => r.prefix).sort();
          if (JSON.stringify(held) !== JSON.stringify([...table.keys()].sort())) throw new Error('advertisedRoutes() is not what the peer holds');
        }
        check(step.kind);
      }
      apply(table, flush(rib, max));
      check('final flush');
      if (JSON.stringify([...table.keys()].sort()) !== JSON.stringify([...recs.keys()].sort())) throw new Error('final table mismatch');
      const held = new Map(rib.advertisedRoutes().map((r) => [r.prefix, r]));
      for (const rec of recs.values()) {
        if (held.get(rec.key)?.med !== rec.route.med) throw new Error(`${rec.key}: held with MED ${held.get(rec.key)?.med}, desired ${rec.route.med}`);
        if (held.get(rec.key)?.nextHop !== exportPeer.localAddress) throw new Error(`${rec.key}: held with an old next hop`);
      }
    }),
    { numRuns: 300 },
  );
  t.equal(runs, 300);
});

t.test('cross-check: the codec decodes every packed UPDATE strictly, with the exported attributes', async (t) => {
  const { decodeMessageDetailed } = await import('../../../bgp/codec/message.ts');
  const rib = newRib();
  rib.markInitialSyncDone();
  rib.start({ ...peer, fourOctetAs: false, localAs: 4200000001 });
  const routes: Route[] = [];
  for (let i = 0; i < 3000; i++) routes.push({ ...host(i), communities: [i % 3], largeCommunities: [[1, 2, i % 2]], med: 1 });
  for (let i = 1; i < 300; i++) routes.push(host6(i));
  desire(rib, records(routes));
  const ctx = { fourOctetAs: false, extendedMessage: false, addPath: {} };
  const seen = new Set<string>();
  let n = 0;
  for (let m = rib.nextMessage(4096); m !== undefined; m = rib.nextMessage(4096)) {
    n++;
    const d = decodeMessageDetailed(m, ctx);
    if (d.message.type !== 'UPDATE') throw new Error('not an UPDATE');
    const u = d.message;
    if ((d.update?.problems?.length ?? 0) > 0) t.fail(`problems: ${d.update?.problems}`);
    for (const e of u.nlri) seen.add(`ipv4-unicast ${e.prefix}`);
    for (const a of u.pathAttributes) if (a.type === 'MP_REACH_NLRI') for (const e of a.nlri) seen.add(`ipv6-unicast ${e.prefix}`);
    if (u.nlri.length > 0) {
      const asPath = u.pathAttributes.find((a) => a.type === 'AS_PATH');
      const as4 = u.pathAttributes.find((a) => a.type === 'AS4_PATH');
      if (asPath?.type !== 'AS_PATH' || asPath.segments[0]?.asns[0] !== 23456) t.fail('AS_TRANS expected in AS_PATH');
      if (as4?.type !== 'AS4_PATH' || as4.segments[0]?.asns[0] !== 4200000001) t.fail('AS4_PATH expected');
    }
  }
  t.equal(seen.size, routes.length, 'codec sees every route');
  t.ok(n >= 5);
});

t.test('largest allowed attributes still fit a 4096-octet UPDATE (IPv6, AS4_PATH, iBGP, all attributes)', async (t) => {
  const rib = newRib();
  rib.start({ ...peer, peerAs: 65000, localAs: 65000, fourOctetAs: false });
  const big: Route = { ...host6(1), med: 1, localPref: 1, communities: new Array(250).fill(7), largeCommunities: new Array(233).fill([1, 2, 3]) };
  desire(rib, records([big, { ...host6(2), ...big, prefix: '2001:db8::2/128' }]));
  const msgs = flush(rib, 4096);
  t.equal(msgs.flatMap((m) => m.announced).length, 2);
  t.ok(msgs.every((m) => m.length <= 4096));
});

t.test('a next hop the encoder rejects keeps only its own routes back, says why, and the others are sent', async (t) => {
  // Regression (issue 19): an IPv6 next hop with a zone id passed the export rules (isIPv6 accepts zones) and threw in
  // the encoder; the throw ended the session with Cease / Out of Resources before any route, IPv4 included, was sent.
  const reported: [string, string][] = [];
  const rib = newRib({ onUnsendable: (reason, example) => reported.push([reason, example]) });
  const zoned: ExportPeer = { ...peer, nextHopIPv6: 'fe80::1%eth0' };
  desire(rib, records([host(1), host(2), host6(1), host6(2), { ...host6(3), nextHop: '2001:db8::99' }]));
  rib.start(zoned);
  const table = new Map<string, string>();
  apply(table, flush(rib, 4096));
  t.same([...table.keys()].sort(), ['10.0.0.1/32', '10.0.0.2/32', '2001:db8::3/128'], 'IPv4 and the IPv6 route with its own next hop are sent');
  const reason = 'ipv6-unicast next hop "fe80::1%eth0" cannot be encoded: not an IPv6 address: "fe80::1%eth0"';
  t.same(reported, [[reason, '2001:db8::1/128']], 'reported once, with an example');
  t.same(rib.unsentRoutes(), [{ reason, prefixes: 2, example: '2001:db8::1/128' }]);

  // one of them goes away, one more comes: the count follows, nothing is reported twice
  const next = records([host(1), host(2), host6(2), { ...host6(3), nextHop: '2001:db8::99' }, host6(4)]);
  desire(rib, next);
  apply(table, flush(rib, 4096));
  t.same(rib.unsentRoutes(), [{ reason, prefixes: 2, example: '2001:db8::2/128' }]);
  t.equal(reported.length, 1);

  // the next hop is fixed: the held-back routes go out, and nothing is unsent any more
  rib.setExportPeer({ ...peer, nextHopIPv6: '2001:db8::1' });
  apply(table, flush(rib, 4096));
  t.same([...table.keys()].sort(), ['10.0.0.1/32', '10.0.0.2/32', '2001:db8::2/128', '2001:db8::3/128', '2001:db8::4/128']);
  t.same(rib.unsentRoutes(), []);

  // and broken again while the peer has them: they are withdrawn, not left with a stale next hop
  rib.setExportPeer(zoned);
  apply(table, flush(rib, 4096));
  t.same([...table.keys()].sort(), ['10.0.0.1/32', '10.0.0.2/32', '2001:db8::3/128']);
  t.same(rib.unsentRoutes().map((u) => u.prefixes), [2]);
  rib.reset();
  t.same(rib.unsentRoutes(), [], 'nothing unsent without a session');
});

t.test('an IPv6 route over an IPv4 session without an IPv6 next hop is unsent with a reason, not left out silently', async (t) => {
  // Regression (issue 35): the route was skipped like one of a family not negotiated, and the API said nothing.
  const reported: [string, string][] = [];
  const rib = newRib({ onUnsendable: (reason, example) => reported.push([reason, example]) });
  const { nextHopIPv6: _none, ...v4Session } = peer;
  desire(rib, records([host(1), host6(1), host6(2)]));
  rib.start(v4Session);
  const table = new Map<string, string>();
  apply(table, flush(rib, 4096));
  t.same([...table.keys()], ['10.0.0.1/32'], 'the IPv4 route is sent');
  t.equal(reported.length, 1, 'reported once');
  t.match(reported[0]?.[0], /no IPv6 next hop toward p: .* configure one for the peer/);
  t.same(rib.unsentRoutes().map((u) => u.prefixes), [2]);
  // a family the peer did not negotiate is no unsent route: the peer chose it
  const v4Only = newRib();
  desire(v4Only, records([host(1), host6(1)]));
  v4Only.start({ ...v4Session, families: new Set(['ipv4-unicast'] as const) });
  flush(v4Only, 4096);
  t.same(v4Only.unsentRoutes(), []);
});

/** Pulls every pending message, raw. */
function rawFlush(rib: AdjRibOut, max: number): Buffer[] {
  const out: Buffer[] = [];
  for (let m = rib.nextMessage(max); m !== undefined; m = rib.nextMessage(max)) out.push(m);
  return out;
}

t.test('packed table: prepare() packs what start() would send; a fitting session sends those very messages', async (t) => {
  const routes: Route[] = [];
  for (let i = 0; i < 3000; i++) routes.push({ ...host(i), ...(i % 3 === 0 ? { med: 7 } : {}) });
  routes.push(host6(1), host6(2));
  const recs = records(routes);
  const fresh = newRib();
  fresh.markInitialSyncDone();
  desire(fresh, recs);
  fresh.start(peer);
  const want = rawFlush(fresh, 4096);

  const rib = newRib();
  rib.markInitialSyncDone();
  desire(rib, recs);
  rib.prepare(peer, 4096);
  t.equal(rib.active, false, 'prepare() leaves no session');
  t.equal(rib.nextMessage(4096), undefined, 'and sends nothing');
  t.equal(rib.advertisedCount, 0);
  rib.start(peer, 4096);
  t.equal(rib.advertisedCount, 0, 'nothing counts as held before its message is sent');
  const first = rib.nextMessage(4096)!;
  t.equal(rib.advertisedCount, rib.lastSent!.prefixes, 'each message sent enters its routes');
  const got = [first, ...rawFlush(rib, 4096)];
  t.same(got.map((b) => b.toString('hex')), want.map((b) => b.toString('hex')), 'byte for byte what a fresh start sends, End-of-RIB included');
  t.equal(rib.advertisedCount, recs.size);
  t.same(rib.advertisedRoutes().map((r) => r.prefix).sort(), [...recs.keys()].sort());

  // the session flaps: the desired set did not change, so the same packed messages go out again
  const packed = got.slice(0, -2);
  rib.reset();
  rib.start(peer, 4096);
  const again = rawFlush(rib, 4096);
  t.ok(packed.every((b, i) => again[i] === b), 'the same Buffers, not packed again');
  t.equal(rib.advertisedCount, recs.size);
});

t.test('packed table: another context, message length or desired set packs afresh at start()', async (t) => {
  const recs = records([host(1), host(2), { ...host(3), med: 5 }]);
  const cases: [string, ExportPeer, number, (rib: AdjRibOut) => void][] = [
    ['another local address (next hop)', { ...peer, localAddress: '127.0.0.9' }, 4096, () => {}],
    ['2-octet AS numbers', { ...peer, fourOctetAs: false }, 4096, () => {}],
    ['extended messages', peer, 65535, () => {}],
    ['graceful shutdown', { ...peer, gracefulShutdown: true }, 4096, () => {}],
    ['a changed desired set', peer, 4096, (rib) => desire(rib, records([host(1), { ...host(3), med: 6 }]))],
  ];
  for (const [what, actual, max, between] of cases) {
    const rib = newRib();
    desire(rib, recs);
    rib.prepare(peer, 4096);
    between(rib);
    rib.start(actual, max);
    const table = new Map<string, string>();
    const msgs = flush(rib, max);
    apply(table, msgs);
    const check = newRib();
    desire(check, rib.desiredCount === recs.size ? recs : records([host(1), { ...host(3), med: 6 }]));
    check.start(actual);
    const expected = new Map<string, string>();
    apply(expected, flush(check, max));
    t.same([...table.entries()].sort(), [...expected.entries()].sort(), `${what}: what a fresh start sends`);
  }
  // an IPv6 family negotiated or not changes nothing for an IPv4-only table
  const rib = newRib();
  desire(rib, recs);
  rib.prepare(peer, 4096);
  const packedFirst = (() => {
    rib.start({ ...peer, families: new Set(['ipv4-unicast'] as const) }, 4096);
    return rib.nextMessage(4096);
  })();
  rib.reset();
  rib.start(peer, 4096);
  t.equal(rib.nextMessage(4096), packedFirst, 'IPv4-only table: the packed messages serve a session without IPv6');
});

t.test('packed table: changes while it is being sent are sent after it; the peer ends with the desired set', async (t) => {
  const recs = records([host(1), host(2), host(3), host(4), { ...host(5), med: 1 }]);
  const rib = newRib();
  desire(rib, recs);
  rib.prepare(peer, 120); // a few NLRI per UPDATE
  rib.start(peer, 120);
  const table = new Map<string, string>();
  apply(table, [decodeUpdate(rib.nextMessage(120)!)]);
  t.equal(rib.advertisedCount, table.size);
  const next = records([host(2), { ...host(4), med: 9 }, { ...host(5), med: 1 }, host(6)]);
  desire(rib, next);
  apply(table, flush(rib, 120));
  t.same([...table.keys()].sort(), [...next.keys()].sort(), 'removed routes withdrawn, new and changed ones sent');
  t.equal(rib.advertisedCount, next.size);
  t.same(
    rib.advertisedRoutes().map((r) => [r.prefix, r.med]).sort(),
    [...next.values()].map((r) => [r.key, r.route.med]).sort(),
    'held with the current attributes',
  );
});

t.test('packed table: routes that cannot be encoded are reported when a session adopts the table, not before', async (t) => {
  const reported: [string, string][] = [];
  const rib = newRib({ onUnsendable: (reason, example) => reported.push([reason, example]) });
  const zoned: ExportPeer = { ...peer, nextHopIPv6: 'fe80::1%eth0' };
  desire(rib, records([host(1), host6(1)]));
  rib.prepare(zoned, 4096);
  t.same(reported, [], 'nothing reported without a session');
  rib.start(zoned, 4096);
  t.equal(reported.length, 1, 'reported once the session is up');
  t.same(rib.unsentRoutes().map((u) => u.prefixes), [1]);
  const table = new Map<string, string>();
  apply(table, flush(rib, 4096));
  t.same([...table.keys()], ['10.0.0.1/32']);
  rib.reset();
  rib.start(zoned, 4096);
  t.equal(reported.length, 2, 'and again on the next session, as without a packed table');
});

t.test('packed table: prepare() never throws; what fails to pack fails at session start as without it', async (t) => {
  // 40 octets leave no room for an NLRI after the header and the attributes: nextMessage() throws RangeError
  const rib = newRib();
  desire(rib, records([host(1)]));
  t.doesNotThrow(() => rib.prepare(peer, 40), 'prepare() keeps nothing and returns');
  t.equal(rib.active, false);
  rib.start(peer, 40);
  t.throws(() => rib.nextMessage(40), RangeError, 'the session start meets the error itself');
});
