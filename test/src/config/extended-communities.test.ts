// Extended community text in the config (src/config/extended-communities.ts): every form to its octets, bad text to
// one specific message, the config path naming the bad item, and static routes mapped to Speaker routes with the
// IPv6 address specific ones split into their own attribute (src/daemon/mapping.ts staticRoute).
import t from 'tap';
import { parseExtendedCommunityText } from '../../../src/config/extended-communities.ts';
import { validateConfig } from '../../../src/config/load.ts';
import { staticRoute } from '../../../src/daemon/mapping.ts';

function octets(text: string): string {
  const r = parseExtendedCommunityText(text);
  if ('error' in r) throw new Error(r.error);
  return `${r.attribute} ${r.community.value.toString('hex')}`;
}

t.test('forms → octets', async (t) => {
  const rows: [string, string][] = [
    ['rt:65000:100', 'extended 0002fde800000064'],
    ['RT:65000:4294967295', 'extended 0002fde8ffffffff'],
    ['ro:65000:7', 'extended 0003fde800000007'],
    ['soo:65000:7', 'extended 0003fde800000007'],
    ['rt:4200000000:5', 'extended 0202fa56ea000005'],
    ['rt:65536:5', 'extended 0202000100000005'],
    ['ro:192.0.2.1:7', 'extended 0103c00002010007'],
    ['rt:[2001:db8::1]:100', 'ipv6 000220010db80000000000000000000000010064'],
    ['ro:[2001:DB8::2]:7', 'ipv6 000320010db80000000000000000000000020007'],
    ['lb:65001:125000', 'extended 0004fde947f42400'],
    ['lb:65001:1mbps', 'extended 0004fde947f42400'],
    ['lb:65001:1Gbps', 'extended 0004fde94cee6b28'],
    ['lb:65001:10kbps', 'extended 0004fde9449c4000'],
    ['lb:65001:1mbps:non-transitive', 'extended 4004fde947f42400'],
    ['lb:65001:1mbps:transitive', 'extended 0004fde947f42400'],
    ['lb:4200000000:1mbps', 'extended 00045ba047f42400'],
    ['0x4300000000000002', 'extended 4300000000000002'],
    [' 0x000220010DB80000000000000000000000010064 ', 'ipv6 000220010db80000000000000000000000010064'],
  ];
  for (const [text, want] of rows) t.equal(octets(text), want, text);
});

t.test('bad text: one message naming the problem and the accepted forms', async (t) => {
  const rows: [string, RegExp][] = [
    ['rt:65000', /needs GLOBAL:LOCAL/],
    ['rt:65000:4294967296', /the local part after a 2-octet AS must be an integer 0\.\.4294967295/],
    ['rt:4200000000:65536', /the local part after a 4-octet AS must be an integer 0\.\.65535/],
    ['rt:4294967296:1', /the AS must be an integer 0\.\.4294967295/],
    ['rt:192.0.2.300:1', /"192\.0\.2\.300" is not an IPv4 address/],
    ['rt:192.0.2.0/24:1', /is not an IPv4 address/],
    ['rt:[2001:db8::g]:1', /is not an IPv6 address/],
    ['rt:[fe80::1%eth0]:1', /is not an IPv6 address/],
    ['rt:[2001:db8::1]:70000', /after an IPv6 address must be an integer 0\.\.65535/],
    ['lb:65001', /link bandwidth must be bytes per second/],
    ['lb:65001:-1', /link bandwidth must be bytes per second/],
    ['lb:65001:1tbps', /link bandwidth must be bytes per second/],
    ['lb:65001:1e40', /link bandwidth must be bytes per second/],
    ['lb:65001:1mbps:nontransitive', /optionally followed by :non-transitive/],
    ['0x0002', /raw hex must be 16 digits/],
    ['target:65000:1', /unknown form "target"/],
    ['65000:1', /unknown form "65000"/],
    ['', /unknown form/],
  ];
  for (const [text, re] of rows) {
    const r = parseExtendedCommunityText(text);
    t.ok('error' in r, `${JSON.stringify(text)} rejected`);
    if (!('error' in r)) continue;
    t.match(r.error, re, text);
    t.match(r.error, /\(forms: rt:AS:N/, 'lists the forms');
  }
  // A bandwidth past the float32 range is refused by the codec builder with its own reason.
  const big = parseExtendedCommunityText(`lb:1:${'9'.repeat(40)}`);
  t.match('error' in big ? big.error : '', /exceeds the largest IEEE 754 single-precision value/);
});

t.test('config: routes[].extendedCommunities validated per item; static route mapping', async (t) => {
  const bad = validateConfig({ bgp: { localAs: 65000, routerId: '10.0.0.1' }, routes: [{ prefix: '192.0.2.1/32', extendedCommunities: ['rt:65000:1', 'lb:x:1'] }] });
  t.equal(bad.ok, false);
  if (!bad.ok) {
    t.equal(bad.errors.length, 1);
    t.equal(bad.errors[0]?.path, 'routes[0].extendedCommunities[1]');
    t.match(bad.errors[0]?.message, /must be an extended community: "lb:x:1": the AS must be an integer/);
  }
  const ok = validateConfig({
    bgp: { localAs: 65000, routerId: '10.0.0.1' },
    routes: [{ prefix: '192.0.2.1/32', extendedCommunities: ['rt:65000:1', 'rt:[2001:db8::1]:2', 'lb:65000:1gbps'] }, { prefix: '192.0.2.2/32' }],
  });
  t.ok(ok.ok);
  if (!ok.ok) return;
  const r = staticRoute(ok.config.routes[0]!);
  t.same(r.extendedCommunities?.map((c) => c.value.toString('hex')), ['0002fde800000001', '0004fde84cee6b28']);
  t.same(r.ipv6ExtendedCommunities?.map((c) => c.value.toString('hex')), ['000220010db80000000000000000000000010002']);
  const plain = staticRoute(ok.config.routes[1]!);
  t.notOk('extendedCommunities' in plain || 'ipv6ExtendedCommunities' in plain, 'no communities, no fields');
});
