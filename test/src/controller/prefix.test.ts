// Service routes are keyed by the controller's canonical prefix text and handed to the Speaker, which insists on the
// canonical form (bgp/rib/route.ts parsePrefix). Both now use the codec's canonicalPrefix; this pins that they agree,
// including the corner a second formatter got wrong: IPv4-mapped IPv6 addresses (mixed notation, RFC 5952 §5).
import t from 'tap';
import { canonicalCIDR, toPrefix } from '../../../src/controller/prefix.ts';
import { parsePrefix } from '../../../bgp/rib/route.ts';

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
    t.doesNotThrow(() => parsePrefix(p.prefix, p.family === 'ipv4' ? 'ipv4-unicast' : 'ipv6-unicast'), `${want} is canonical for the Speaker`);
  }
  t.same(toPrefix('2001:db8::7'), { prefix: '2001:db8::7/128', family: 'ipv6' });
  t.throws(() => toPrefix('not-an-ip'), /not an IP address/);
  t.throws(() => toPrefix('10.0.0.1', 33), /out of range/);
});
