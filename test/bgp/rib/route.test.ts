// Route identity: canonical prefix parsing (bgp/rib/route.ts). Bad input gets a RouteError naming the problem.
import t from 'tap';
import { formatIPv6 } from '../../../bgp/codec/nlri.ts';
import { parseIPv6, parseRoutePrefix, routeLabel } from '../../../bgp/rib/route.ts';

t.test('IPv4 prefixes', async (t) => {
  t.equal(parseRoutePrefix('10.0.0.0/8', 'ipv4-unicast').v4, 0x0a000000);
  t.equal(parseRoutePrefix('0.0.0.0/0', 'ipv4-unicast').v4, 0);
  t.equal(parseRoutePrefix('255.255.255.255/32', 'ipv4-unicast').v4, 0xffffffff);
  const bad: [string, RegExp][] = [
    ['10.0.0.1/8', /host bits/],
    ['10.0.0/24', /not an IPv4/],
    ['010.0.0.0/8', /not an IPv4/],
    ['256.0.0.0/8', /not an IPv4/],
    ['1.2.3.4.5/32', /not an IPv4/],
    ['1..2.3/32', /not an IPv4/],
    ['10.0.0.0/33', /prefix length/],
    ['10.0.0.0/', /prefix length/],
    ['10.0.0.0/08', /prefix length/],
    ['10.0.0.0', /without length/],
    ['2001:db8::/32', /not an IPv4/],
  ];
  for (const [p, re] of bad) t.throws(() => parseRoutePrefix(p, 'ipv4-unicast'), { name: 'RouteError', message: re }, p);
});

t.test('IPv6 prefixes and RFC 5952 form', async (t) => {
  for (const a of ['::', '::1', '2001:db8::10', '1:2:3:4:5:6:7:8', '1::', 'fe80::1:2']) t.equal(formatIPv6(parseIPv6(a)), a, a);
  // IPv4-mapped addresses in mixed notation (RFC 5952 §5), as the codec and Node's net module print them.
  t.equal(formatIPv6(parseIPv6('::ffff:1.2.3.4')), '::ffff:1.2.3.4');
  t.equal(parseRoutePrefix('2001:db8::/32', 'ipv6-unicast').length, 32);
  t.throws(() => parseRoutePrefix('2001:db8::1/32', 'ipv6-unicast'), { message: /host bits/ });
  t.throws(() => parseRoutePrefix('2001:DB8::/32', 'ipv6-unicast'), { message: /RFC 5952/ });
  t.throws(() => parseRoutePrefix('2001:db8::/129', 'ipv6-unicast'), { message: /prefix length/ });
  t.throws(() => parseRoutePrefix('10.0.0.0/8', 'ipv6-unicast'), { message: /not an IPv6/ });
  t.equal(routeLabel({ family: 'ipv6-unicast', prefix: '2001:db8::/32' }), 'ipv6-unicast 2001:db8::/32');
});

t.test('attribute validation in validateRoute', async (t) => {
  const { validateRoute: makeRecord } = await import('../../../bgp/rib/route-table.ts');
  const base = { prefix: '10.0.0.0/8', family: 'ipv4-unicast' as const };
  t.throws(() => makeRecord({ ...base, communities: [(65001 << 16) + 100] }), { name: 'RouteError', message: /communities/ }, 'negative community (a << overflow)');
  t.throws(() => makeRecord({ ...base, med: -1 }), { message: /MED/ });
  t.throws(() => makeRecord({ ...base, localPref: 1.5 }), { message: /LOCAL_PREF/ });
  t.throws(() => makeRecord({ ...base, largeCommunities: [[1, 2, 2 ** 32]] }), { message: /large/ });
  t.throws(() => makeRecord({ ...base, nextHop: 'x' }), { message: /next hop/ });
  t.equal(makeRecord({ ...base, communities: [65001 * 65536 + 100], med: 0 }).prefix, '10.0.0.0/8');
  t.throws(() => makeRecord({ ...base, communities: new Array(951).fill(1) }), { message: /fit a 4096-octet UPDATE/ }, 'too many communities');
  t.ok(makeRecord({ ...base, communities: new Array(950).fill(1), largeCommunities: [] }), '950 communities fit');
});
