// Extended communities through the RIB: export rules (bgp/rib/export.ts: sent to eBGP and iBGP as given, non-transitive
// ones included; the IPv6 Address Specific attribute in type-code order), route validation, the attribute signature and
// the packer's grouping (byte-identical attributes share an UPDATE), decoded back with the codec.
import t from 'tap';
import { decodeMessageDetailed } from '../../../bgp/codec/message.ts';
import * as ec from '../../../bgp/codec/ext-communities.ts';
import type { CodecContext, PathAttribute } from '../../../bgp/codec/types.ts';
import { AdjRibOut } from '../../../bgp/rib/adj-rib-out.ts';
import { RouteTable, validateRoute } from '../../../bgp/rib/route-table.ts';
import { attributeSignature, exportRoute } from '../../../bgp/rib/export.ts';
import type { ExportPeer } from '../../../bgp/rib/export.ts';
import type { Route } from '../../../bgp/rib/route.ts';
import { RouteError } from '../../../bgp/rib/route.ts';

const families = new Set(['ipv4-unicast', 'ipv6-unicast'] as const);
const ebgp: ExportPeer = { name: 'e', localAs: 65000, peerAs: 65001, fourOctetAs: true, families, localAddress: '127.0.0.2', nextHopIPv6: '2001:db8::1' };
const ibgp: ExportPeer = { ...ebgp, name: 'i', peerAs: 65000 };
const CTX: CodecContext = { fourOctetAs: true, extendedMessage: false, addPath: {} };

const rt = ec.twoOctetAsSpecific(ec.ExtCommunitySubtype.RouteTarget, 65000, 100);
const lbNonTransitive = ec.linkBandwidth(65000, 125_000, false);
const lb = (bytesPerSecond: number) => ec.linkBandwidth(65000, bytesPerSecond);
const rt6 = ec.ipv6AddressSpecific(ec.ExtCommunitySubtype.RouteTarget, '2001:db8::1', 100);


function attrsOf(route: Route, peer: ExportPeer): PathAttribute[] {
  const res = exportRoute(route, peer);
  if ('skip' in res) throw new Error(res.skip);
  return [...res.attributes];
}

/** Every UPDATE the Adj-RIB-Out sends, decoded by the codec: announced prefixes and the path attributes. */
function drain(rib: AdjRibOut): { nlri: string[]; attrs: readonly PathAttribute[] }[] {
  const out: { nlri: string[]; attrs: readonly PathAttribute[] }[] = [];
  for (let m = rib.nextMessage(4096); m !== undefined; m = rib.nextMessage(4096)) {
    const d = decodeMessageDetailed(m, CTX);
    if (d.message.type !== 'UPDATE') throw new Error('not an UPDATE');
    if ((d.update?.problems.length ?? 0) > 0) throw new Error(`problems: ${d.update?.problems.join('; ')}`);
    const u = d.message;
    const mp = u.pathAttributes.find((a) => a.type === 'MP_REACH_NLRI');
    const nlri = [...u.nlri.map((e) => e.prefix), ...(mp?.type === 'MP_REACH_NLRI' ? mp.nlri.map((e) => e.prefix) : [])];
    if (nlri.length > 0) out.push({ nlri, attrs: u.pathAttributes });
  }
  return out;
}

t.test('export: extended communities go to eBGP and iBGP exactly as given, non-transitive ones included', async (t) => {
  const route: Route = { prefix: '192.0.2.10/32', family: 'ipv4-unicast', extendedCommunities: [rt, lbNonTransitive, lb(1e6)] };
  for (const peer of [ebgp, ibgp]) {
    const ext = attrsOf(route, peer).find((a) => a.type === 'EXTENDED_COMMUNITIES');
    t.ok(ext, `${peer.name}: EXTENDED_COMMUNITIES sent`);
    if (ext?.type !== 'EXTENDED_COMMUNITIES') continue;
    t.equal(ext.flags, 0xc0, 'optional transitive (RFC 4360 §2)');
    t.same(ext.extendedCommunities.map((c) => c.value.toString('hex')), ['0002fde800000064', '4004fde847f42400', '0004fde849742400']);
  }
  t.notOk(attrsOf({ ...route, extendedCommunities: [] }, ebgp).some((a) => a.type === 'EXTENDED_COMMUNITIES'), 'an empty list sends no attribute (RFC 7606 §7.14)');
});

t.test('export: the IPv6 Address Specific attribute (type 25) in type-code order, for IPv4 and IPv6 routes', async (t) => {
  const v4: Route = { prefix: '192.0.2.10/32', family: 'ipv4-unicast', extendedCommunities: [rt], ipv6ExtendedCommunities: [rt6], largeCommunities: [[1, 2, 3]] };
  const twoOctetPeer = { ...ebgp, localAs: 4200000001, fourOctetAs: false };
  t.same(attrsOf(v4, twoOctetPeer).map((a) => a.type), ['ORIGIN', 'AS_PATH', 'NEXT_HOP', 'EXTENDED_COMMUNITIES', 'AS4_PATH', 'IPV6_ADDRESS_SPECIFIC_EXTENDED_COMMUNITY', 'LARGE_COMMUNITY']);
  const v6: Route = { prefix: '2001:db8::10/128', family: 'ipv6-unicast', ipv6ExtendedCommunities: [rt6] };
  const a = attrsOf(v6, ibgp).find((x) => x.type === 'IPV6_ADDRESS_SPECIFIC_EXTENDED_COMMUNITY');
  t.equal(a?.flags, 0xc0, 'optional transitive (RFC 5701 §2)');
  t.same(a?.type === 'IPV6_ADDRESS_SPECIFIC_EXTENDED_COMMUNITY' ? a.ipv6ExtendedCommunities : undefined, [rt6]);
});

t.test('routes: malformed extended communities are rejected with a RouteError naming the field', async (t) => {
  const base: Route = { prefix: '192.0.2.10/32', family: 'ipv4-unicast' };
  t.throws(() => validateRoute({ ...base, extendedCommunities: [{ type: 0, subtype: 2, value: Buffer.alloc(7) }] }), new RouteError('192.0.2.10/32: extended communities must be 8 octets'));
  t.throws(
    () => validateRoute({ ...base, ipv6ExtendedCommunities: [{ type: 0, subtype: 2, value: Buffer.alloc(19) }] }),
    new RouteError('192.0.2.10/32: IPv6 address specific extended communities must be 20 octets'),
  );
  const many = Array.from({ length: 191 }, () => rt6); // 3820 octets
  t.throws(() => validateRoute({ ...base, ipv6ExtendedCommunities: many }), /communities take 3820 octets; at most 3800/);
});

t.test('signature: equal communities share one, a different link bandwidth or IPv6 community does not', async (t) => {
  const r: Route = { prefix: '192.0.2.1/32', family: 'ipv4-unicast' };
  t.equal(attributeSignature({ ...r, extendedCommunities: [lb(1e6)] }), attributeSignature({ ...r, prefix: '192.0.2.2/32', extendedCommunities: [lb(1e6)] }));
  t.not(attributeSignature({ ...r, extendedCommunities: [lb(1e6)] }), attributeSignature({ ...r, extendedCommunities: [lb(2e6)] }));
  t.not(attributeSignature({ ...r, extendedCommunities: [lb(1e6)] }), attributeSignature({ ...r, extendedCommunities: [ec.linkBandwidth(65000, 1e6, false)] }), 'transitivity counts');
  t.not(attributeSignature({ ...r, ipv6ExtendedCommunities: [rt6] }), attributeSignature(r));
  t.not(attributeSignature({ ...r, ipv6ExtendedCommunities: [rt6] }), attributeSignature({ ...r, extendedCommunities: [rt] }));
  t.equal(attributeSignature({ ...r, extendedCommunities: [], ipv6ExtendedCommunities: [] }), attributeSignature(r), 'empty lists export like none');
});

t.test('packer: byte-identical attributes share an UPDATE; one route whose link bandwidth changes is re-sent alone', async (t) => {
  const table = new RouteTable();
  const rib = new AdjRibOut(table);
  rib.start(ebgp);
  const routes: Route[] = [];
  for (let i = 1; i <= 6; i++) routes.push({ prefix: `192.0.2.${i}/32`, family: 'ipv4-unicast', extendedCommunities: [rt, lb(i <= 4 ? 3e6 : 1e6)] });
  routes.push({ prefix: '2001:db8::7/128', family: 'ipv6-unicast', extendedCommunities: [lb(1e6)], ipv6ExtendedCommunities: [rt6] });
  rib.setDesired(table.replace(routes));
  const msgs = drain(rib);
  t.same(msgs.map((m) => m.nlri), [['192.0.2.1/32', '192.0.2.2/32', '192.0.2.3/32', '192.0.2.4/32'], ['192.0.2.5/32', '192.0.2.6/32'], ['2001:db8::7/128']]);
  const bandwidths = msgs.map((m) => {
    const a = m.attrs.find((x) => x.type === 'EXTENDED_COMMUNITIES');
    return a?.type === 'EXTENDED_COMMUNITIES' ? a.extendedCommunities.map((c) => ec.linkBandwidthOf(c)?.bytesPerSecond).filter((x) => x !== undefined) : [];
  });
  t.same(bandwidths, [[3e6], [1e6], [1e6]], 'each group carries its link bandwidth');
  const v6 = msgs[2]?.attrs.find((a) => a.type === 'IPV6_ADDRESS_SPECIFIC_EXTENDED_COMMUNITY');
  t.same(v6?.type === 'IPV6_ADDRESS_SPECIFIC_EXTENDED_COMMUNITY' ? v6.ipv6ExtendedCommunities.map((c) => c.value.toString('hex')) : [], [rt6.value.toString('hex')]);

  // One node's endpoint count changes: only that VIP's route changes signature, only it is re-announced.
  const changed = routes.map((r) => (r.prefix === '192.0.2.2/32' ? { ...r, extendedCommunities: [rt, lb(2e6)] } : r));
  const diff = table.replace(changed);
  t.same(diff.changed.map((s) => table.prefixText(s)), ['192.0.2.2/32'], 'diff: one changed route');
  rib.setDesired(diff);
  const again = drain(rib);
  t.same(again.map((m) => m.nlri), [['192.0.2.2/32']], 're-announced alone');
  t.same(rib.advertisedRoutes().find((r) => r.prefix === '192.0.2.2/32')?.extendedCommunities?.map((c) => ec.linkBandwidthOf(c)?.bytesPerSecond), [undefined, 2e6]);
  t.same(rib.advertisedRoutes().find((r) => r.prefix === '2001:db8::7/128')?.ipv6ExtendedCommunities, [rt6], 'advertised view shows the IPv6 communities');
});
