// One address vocabulary for src/: IP families of addresses ('IPv4'/'IPv6'), route families of prefixes (bgp Family),
// canonical prefix text from the codec (so the Speaker accepts the controller's route keys verbatim), and the admin
// API's prefix filter.
import t from 'tap';
import { addressValue, canonicalIP, canonicalCIDR, formatAddressValue, ipFamilyOf, ipv4MappedAddress, prefixMatches, routeFamilyOf, toPrefix } from '../../../src/net/address.ts';
import { parseRoutePrefix } from '../../../bgp/rib/route.ts';

t.test('controller prefixes are accepted verbatim by the BGP layer', async (t) => {
  const cases: [string, string][] = [
    ['10.1.2.3/8', '10.0.0.0/8'],
    ['2001:DB8::1/32', '2001:db8::/32'],
    ['::ffff:1.2.3.4/128', '::ffff:1.2.3.4/128'],
    ['::/0', '::/0'],
    ['0.0.0.0/0', '0.0.0.0/0'],
  ];
  for (const [input, want] of cases) {
    const p = canonicalCIDR(input);
    t.equal(p.prefix, want, input);
    t.doesNotThrow(() => parseRoutePrefix(p.prefix, p.family), `${want} is canonical for the Speaker`);
  }
  t.same(toPrefix('2001:db8::7'), { prefix: '2001:db8::7/128', family: 'ipv6-unicast' });
  t.throws(() => toPrefix('not-an-ip'), /not an IP address/);
  t.throws(() => toPrefix('10.0.0.1', 33), /out of range/);
  t.throws(() => canonicalCIDR('10.0.0.1'), /missing \/len/);
});

t.test('IP families and address values', async (t) => {
  t.equal(ipFamilyOf('10.0.0.1'), 'IPv4');
  t.equal(ipFamilyOf('2001:db8::1'), 'IPv6');
  t.equal(ipFamilyOf('::ffff:1.2.3.4'), 'IPv6');
  for (const bad of ['10.0.0.1/32', '10.0.0', '', 'host']) t.equal(ipFamilyOf(bad), undefined, `${JSON.stringify(bad)} is no address literal`);
  t.equal(routeFamilyOf('IPv4'), 'ipv4-unicast');
  t.equal(routeFamilyOf('IPv6'), 'ipv6-unicast');
  t.same(addressValue('10.0.0.1'), { family: 'IPv4', value: 0x0a000001n });
  t.same(addressValue('::1'), { family: 'IPv6', value: 1n });
  t.equal(formatAddressValue('IPv4', 0x0a000001n), '10.0.0.1');
  t.equal(formatAddressValue('IPv6', 0xffff01020304n), '::ffff:1.2.3.4', 'IPv4-mapped in mixed notation, like the codec');
  t.throws(() => formatAddressValue('IPv4', 1n << 32n), RangeError);
  t.equal(canonicalIP(' 2001:DB8:0::1 '), '2001:db8::1');
  t.equal(canonicalIP('nope'), undefined);
  t.equal(ipv4MappedAddress('::ffff:192.0.2.1'), '192.0.2.1');
  t.equal(ipv4MappedAddress('::FFFF:c000:201'), '192.0.2.1', 'hex form');
  t.equal(ipv4MappedAddress('::192.0.2.1'), undefined, 'IPv4-compatible is not mapped');
  t.equal(ipv4MappedAddress('2001:db8::ffff:c000:201'), undefined);
  t.equal(ipv4MappedAddress('192.0.2.1'), undefined);
});

t.test('prefix filter', async (t) => {
  t.ok(prefixMatches('10.0.0.1/32', '10.0.0.0/24'));
  t.ok(prefixMatches('10.0.0.0/24', '10.0.0.0/24'));
  t.notOk(prefixMatches('10.0.0.0/16', '10.0.0.0/24'), 'a wider route is not inside the filter');
  t.ok(prefixMatches('10.0.0.0/16', '10.0.3.4'), 'an address matches the route containing it');
  t.notOk(prefixMatches('10.1.0.0/16', '10.0.3.4'));
  t.ok(prefixMatches('2001:db8::1/128', '2001:db8::/32'));
  t.notOk(prefixMatches('2001:db8::1/128', '10.0.0.0/8'), 'families never match');
  t.notOk(prefixMatches('10.0.0.1/32', 'garbage'));
  t.ok(prefixMatches('10.0.0.1/32', '0.0.0.0/0'));
  // Regression: the part after a second "/" was ignored, so "10.1.0.0/24/5" matched 10.1.0.0/24.
  t.notOk(prefixMatches('10.1.0.0/24', '10.1.0.0/24/5'), 'a filter with two "/" matches nothing');
  t.notOk(prefixMatches('10.1.0.0/24', '10.1.0.0/2x'), 'a non-numeric length matches nothing');
  t.notOk(prefixMatches('10.1.0.0/24', '10.1.0.0/'), 'an empty length matches nothing');
});

