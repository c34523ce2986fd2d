// Export rules as a table: (route, peer) -> attributes toward that peer, or a skip reason (bgp/rib/export.ts).
import t from 'tap';
import { attributeSignature, exportRoute } from '../../../bgp/rib/export.ts';
import type { ExportPeer } from '../../../bgp/rib/export.ts';
import type { Route } from '../../../bgp/rib/route.ts';
import { MAX_AS_PATH_PREPEND, RouteError } from '../../../bgp/rib/route.ts';
import { validateRoute } from '../../../bgp/rib/route-table.ts';
import { encodeAttributes } from '../../../bgp/rib/packer.ts';

const both = new Set(['ipv4-unicast', 'ipv6-unicast'] as const);
const v4only = new Set(['ipv4-unicast'] as const);
const ebgp: ExportPeer = { name: 'e', localAs: 65000, peerAs: 65001, fourOctetAs: true, families: both, localAddress: '127.0.0.2' };
const ibgp: ExportPeer = { ...ebgp, name: 'i', peerAs: 65000 };
const r4: Route = { prefix: '192.0.2.10/32', family: 'ipv4-unicast' };
const r6: Route = { prefix: '2001:db8::10/128', family: 'ipv6-unicast' };

type Row = [name: string, route: Route, peer: ExportPeer, expect: Record<string, unknown> | string];
const rows: Row[] = [
  ['eBGP prepends local AS, no LOCAL_PREF, next hop = session local address', r4, ebgp,
    { ORIGIN: 0, AS_PATH: [[2, [65000]]], NEXT_HOP: '127.0.0.2' }],
  ['iBGP: empty AS_PATH, LOCAL_PREF 100 default', r4, ibgp, { ORIGIN: 0, AS_PATH: [], NEXT_HOP: '127.0.0.2', LOCAL_PREF: 100 }],
  ['iBGP: route LOCAL_PREF wins', { ...r4, localPref: 250 }, ibgp, { ORIGIN: 0, AS_PATH: [], NEXT_HOP: '127.0.0.2', LOCAL_PREF: 250 }],
  ['eBGP: route LOCAL_PREF not sent', { ...r4, localPref: 250 }, ebgp, { ORIGIN: 0, AS_PATH: [[2, [65000]]], NEXT_HOP: '127.0.0.2' }],
  ['route next hop wins over peer config and session', { ...r4, nextHop: '198.51.100.1' }, { ...ebgp, nextHopIPv4: '198.51.100.9' },
    { ORIGIN: 0, AS_PATH: [[2, [65000]]], NEXT_HOP: '198.51.100.1' }],
  ['peer-configured next hop wins over session address', r4, { ...ebgp, nextHopIPv4: '198.51.100.9' },
    { ORIGIN: 0, AS_PATH: [[2, [65000]]], NEXT_HOP: '198.51.100.9' }],
  ['MED, communities, large communities from the route', { ...r4, med: 7, communities: [0xfde80001], largeCommunities: [[65000, 1, 2]] }, ebgp,
    { ORIGIN: 0, AS_PATH: [[2, [65000]]], NEXT_HOP: '127.0.0.2', MULTI_EXIT_DISC: 7, COMMUNITIES: [0xfde80001], LARGE_COMMUNITY: [[65000, 1, 2]] }],
  ['4-octet local AS toward a 2-octet peer: AS_TRANS + AS4_PATH', r4, { ...ebgp, localAs: 4200000001, fourOctetAs: false },
    { ORIGIN: 0, AS_PATH: [[2, [23456]]], NEXT_HOP: '127.0.0.2', AS4_PATH: [[2, [4200000001]]] }],
  ['4-octet local AS toward a 4-octet peer: plain AS_PATH', r4, { ...ebgp, localAs: 4200000001 },
    { ORIGIN: 0, AS_PATH: [[2, [4200000001]]], NEXT_HOP: '127.0.0.2' }],
  ['IPv6 over IPv4 session without IPv6 next hop: unsent, with the fix (issue 35)', r6, ebgp,
    { skip: "ipv6-unicast has no IPv6 next hop toward e: the session's local address 127.0.0.2 is not IPv6 and neither the route nor the peer configures an IPv6 next hop; configure one for the peer", unsent: true }],
  ['IPv6 over IPv4 session with configured IPv6 next hop', r6, { ...ebgp, nextHopIPv6: '2001:db8::1' },
    { ORIGIN: 0, AS_PATH: [[2, [65000]]], nextHop: '2001:db8::1' }],
  ['IPv6 over IPv6 session: session address', r6, { ...ebgp, localAddress: '::1' }, { ORIGIN: 0, AS_PATH: [[2, [65000]]], nextHop: '::1' }],
  ['family not negotiated: skipped', r6, { ...ebgp, families: v4only, nextHopIPv6: '2001:db8::1' }, 'ipv6-unicast not negotiated with e'],
  ['route.peers excludes the peer', { ...r4, peers: ['other'] }, ebgp, 'route.peers excludes e'],
  ['route.peers includes the peer', { ...r4, peers: ['e'] }, ebgp, { ORIGIN: 0, AS_PATH: [[2, [65000]]], NEXT_HOP: '127.0.0.2' }],
  ['graceful shutdown eBGP: 65535:0 added', { ...r4, communities: [1] }, { ...ebgp, gracefulShutdown: true },
    { ORIGIN: 0, AS_PATH: [[2, [65000]]], NEXT_HOP: '127.0.0.2', COMMUNITIES: [1, 0xffff0000] }],
  ['graceful shutdown iBGP: 65535:0 and LOCAL_PREF 0', { ...r4, localPref: 300 }, { ...ibgp, gracefulShutdown: true },
    { ORIGIN: 0, AS_PATH: [], NEXT_HOP: '127.0.0.2', LOCAL_PREF: 0, COMMUNITIES: [0xffff0000] }],
  ['ORIGIN from the route', { ...r4, origin: 2 }, ebgp, { ORIGIN: 2, AS_PATH: [[2, [65000]]], NEXT_HOP: '127.0.0.2' }],
  ['eBGP: AS path prepend adds copies of the local AS', { ...r4, asPathPrepend: 2 }, ebgp, { ORIGIN: 0, AS_PATH: [[2, [65000, 65000, 65000]]], NEXT_HOP: '127.0.0.2' }],
  ['iBGP: AS path prepend ignored (the peer would drop a path with its own AS)', { ...r4, asPathPrepend: 2 }, ibgp, { ORIGIN: 0, AS_PATH: [], NEXT_HOP: '127.0.0.2', LOCAL_PREF: 100 }],
  ['prepend with a 4-octet local AS toward a 2-octet peer: AS_TRANS and AS4_PATH both repeated', { ...r4, asPathPrepend: 1 }, { ...ebgp, localAs: 4200000001, fourOctetAs: false },
    { ORIGIN: 0, AS_PATH: [[2, [23456, 23456]]], NEXT_HOP: '127.0.0.2', AS4_PATH: [[2, [4200000001, 4200000001]]] }],
  ['prepend 0 is no prepend', { ...r4, asPathPrepend: 0 }, ebgp, { ORIGIN: 0, AS_PATH: [[2, [65000]]], NEXT_HOP: '127.0.0.2' }],
];

t.test('export rules table', async (t) => {
  t.ok(rows.length > 0);
  for (const [name, route, peer, expect] of rows) {
    const res = exportRoute(route, peer);
    if (typeof expect === 'string') {
      t.same(res, { skip: expect }, name);
      continue;
    }
    if ('skip' in expect) {
      t.same(res, expect, name);
      continue;
    }
    t.notOk('skip' in res, `${name}: exported`);
    if ('skip' in res) continue;
    const got: Record<string, unknown> = {};
    for (const a of res.attributes) {
      if (a.type === 'ORIGIN') got.ORIGIN = a.origin;
      else if (a.type === 'AS_PATH' || a.type === 'AS4_PATH') got[a.type] = a.segments.map((s) => [s.type, s.asns]);
      else if (a.type === 'NEXT_HOP') got.NEXT_HOP = a.nextHop;
      else if (a.type === 'MULTI_EXIT_DISC') got.MULTI_EXIT_DISC = a.med;
      else if (a.type === 'LOCAL_PREF') got.LOCAL_PREF = a.localPref;
      else if (a.type === 'COMMUNITIES') got.COMMUNITIES = a.communities;
      else if (a.type === 'LARGE_COMMUNITY') got.LARGE_COMMUNITY = a.largeCommunities;
      else got[a.type] = true;
    }
    if (route.family === 'ipv6-unicast') got.nextHop = res.nextHop;
    t.same(got, expect, name);
    // attribute type codes ascend (RFC 4271 §5 recommends it; BIRD and FRR sort)
    const order = res.attributes.map((a) => a.type);
    t.ok(encodeAttributes(res.attributes, peer.fourOctetAs).length > 0, `${name}: encodes (${order.join(',')})`);
  }
});

t.test('the attribute signature tells prepends apart', async (t) => {
  t.not(attributeSignature({ ...r4, asPathPrepend: 1 }), attributeSignature(r4));
  t.not(attributeSignature({ ...r4, asPathPrepend: 1 }), attributeSignature({ ...r4, asPathPrepend: 2 }));
  t.equal(attributeSignature({ ...r4, asPathPrepend: 3 }), attributeSignature({ ...r4, prefix: '192.0.2.11/32', asPathPrepend: 3 }));
});

t.test('AS_PATH encoding: 2-octet vs 4-octet (RFC 6793)', async (t) => {
  const two = exportRoute(r4, { ...ebgp, fourOctetAs: false });
  const four = exportRoute(r4, ebgp);
  if ('skip' in two || 'skip' in four) throw new Error('unexpected skip');
  // ORIGIN 40 01 01 00 | AS_PATH 40 02 04 02 01 fd e8 | NEXT_HOP 40 03 04 7f 00 00 02
  t.equal(encodeAttributes(two.attributes, false).toString('hex'), '40010100' + '400204' + '0201fde8' + '4003047f000002');
  t.equal(encodeAttributes(four.attributes, true).toString('hex'), '40010100' + '400206' + '02010000fde8' + '4003047f000002');
  // A 4-octet AS in a 2-octet AS_PATH is written as AS_TRANS (RFC 6793 §4.2.2; the codec's attribute encoder).
  t.equal(encodeAttributes([{ type: 'AS_PATH', flags: 0x40, segments: [{ type: 2, asns: [70000] }] }], false).toString('hex'), '400204' + '02015ba0');
});

t.test('a route with a bad AS path prepend is refused naming the field', async (t) => {
  for (const bad of [-1, 1.5, 255, Number.NaN]) {
    t.throws(() => validateRoute({ ...r4, asPathPrepend: bad }), new RouteError(`192.0.2.10/32: AS path prepend must be an integer 0..${MAX_AS_PATH_PREPEND}, got ${bad}`), String(bad));
  }
  t.equal(validateRoute({ ...r4, asPathPrepend: MAX_AS_PATH_PREPEND }).asPathPrepend, 254);
});
