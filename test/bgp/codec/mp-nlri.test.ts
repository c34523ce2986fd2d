/**
 * Labeled (RFC 8277) and VPN (RFC 4364 §4.3.4) NLRI and Route Distinguisher text (RFC 4364 §4.2), as `herald decode`
 * reads them from MRT RIB_GENERIC records: label stacks ending at the Bottom-of-Stack bit or the withdrawal value,
 * RD types 0/1/2, and 3/10 errors on every truncation.
 */
import t from 'tap';
import { decodeLabeledPrefixAt, formatRouteDistinguisher } from '../../../bgp/codec/mp-nlri.ts';
import { bgpErrorOf } from '../../helpers/bgp-error.ts';
import { hex } from '../../helpers/hex.ts';

t.test('RFC 8277: labeled IPv4 and IPv6 prefixes, one label and a stack', async (t) => {
  // 48 bits: label 16 with BoS (0x000101) then 10.1.0.0/24 → 24 + 24 bits.
  const one = hex`30 000101 0a0100  ff`;
  t.same(decodeLabeledPrefixAt(one, 0, one.length, 'ipv4-unicast', false), { entry: { labels: [16], prefix: '10.1.0.0/24' }, next: 7 });
  // Two labels (1000, then 2000 with BoS), then 2001:db8::/32.
  const stack = hex`50 003e80 007d01 20010db8`;
  t.same(decodeLabeledPrefixAt(stack, 0, stack.length, 'ipv6-unicast', false), { entry: { labels: [1000, 2000], prefix: '2001:db8::/32' }, next: 11 });
  // The withdrawal value 0x800000 ends the stack without BoS (RFC 8277 §2.4).
  const withdrawn = hex`20 800000 0a`;
  t.same(decodeLabeledPrefixAt(withdrawn, 0, withdrawn.length, 'ipv4-unicast', false).entry, { labels: [0x80000], prefix: '10.0.0.0/8' });
});

t.test('RFC 4364 §4.3.4: VPN prefixes with each Route Distinguisher type', async (t) => {
  // 24 (label) + 64 (RD) + 24 (prefix) = 112 bits.
  const type0 = hex`70 000011 0000 fde8 00000064 c00002`;
  t.same(decodeLabeledPrefixAt(type0, 0, type0.length, 'ipv4-unicast', true).entry, { labels: [1], routeDistinguisher: '65000:100', prefix: '192.0.2.0/24' });
  t.equal(formatRouteDistinguisher(hex`0001 c0000201 0007`, 0), '192.0.2.1:7');
  t.equal(formatRouteDistinguisher(hex`0002 fa56ea00 0009`, 0), '4200000000:9');
  t.equal(formatRouteDistinguisher(hex`0003 0102030405 06`, 0), '0003010203040506', 'unknown type as hex');
});

t.test('truncations and bad lengths are 3/10 Invalid Network Field', async (t) => {
  const bad = { code: 3, subcode: 10, data: '' };
  t.same(bgpErrorOf(() => decodeLabeledPrefixAt(hex``, 0, 0, 'ipv4-unicast', false)), bad, 'no length octet');
  t.same(bgpErrorOf(() => decodeLabeledPrefixAt(hex`30 000101 0a`, 0, 5, 'ipv4-unicast', false)), bad, 'NLRI past end');
  t.same(bgpErrorOf(() => decodeLabeledPrefixAt(hex`30 000100 000100`, 0, 7, 'ipv4-unicast', false)), bad, 'no Bottom-of-Stack within the length');
  t.same(bgpErrorOf(() => decodeLabeledPrefixAt(hex`38 000011 00000000`, 0, 8, 'ipv4-unicast', true)), bad, 'truncated RD');
  t.same(bgpErrorOf(() => decodeLabeledPrefixAt(hex`10 0001`, 0, 3, 'ipv4-unicast', false)), bad, 'length shorter than one label');
  const long = Buffer.concat([hex`c0 000101`, Buffer.alloc(21)]);
  t.same(bgpErrorOf(() => decodeLabeledPrefixAt(long, 0, long.length, 'ipv4-unicast', false)), bad, 'prefix of 168 bits for IPv4');
});
