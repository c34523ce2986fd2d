/**
 * Regression tests for codec bugs found in review (each test names the bug and the RFC text it broke).
 * Vectors are annotated hex UPDATE bodies (after the 19-octet header) unless noted.
 */
import t from 'tap';
import { BgpError } from '../../../bgp/errors.ts';
import { effectiveAsPath, mergeAs4Path } from '../../../bgp/codec/as-path.ts';
import { decodeMessage, decodeMessageDetailed, encodeMessage } from '../../../bgp/codec/message.ts';
import { notificationFromError } from '../../../bgp/codec/notification.ts';
import { decodeUpdate, endOfRibFamily, validateUpdateStrict } from '../../../bgp/codec/update.ts';
import * as b from '../../../bgp/codec/build.ts';
import type { CodecContext } from '../../../bgp/codec/types.ts';
import { hex } from '../../helpers/hex.ts';
import * as w from '../../helpers/wire.ts';

const as2: CodecContext = { fourOctetAs: false, extendedMessage: false, addPath: {} };
const as4: CodecContext = { fourOctetAs: true, extendedMessage: false, addPath: {} };

t.test('bug: a bad NEXT_HOP withdrew the IPv6 routes of an MP-only UPDATE (RFC 4760 §3: ignore NEXT_HOP without IPv4 NLRI)', async (t) => {
  const body = hex`
    0000                                          # Withdrawn Routes Length 0
    002f                                          # Total Path Attribute Length 47
    40 01 01 00                                   # ORIGIN IGP
    40 02 04 02 01 fde8                           # AS_PATH 65000
    40 03 04 00000000                             # NEXT_HOP 0.0.0.0 (invalid, but unused: no IPv4 NLRI)
    80 0e 1a 0002 01 10 20010db8000000000000000000000001 00   # MP_REACH_NLRI IPv6, next hop 2001:db8::1
       20 20010db8                                # NLRI 2001:db8::/32
  `;
  const r = decodeUpdate(body, as2);
  t.equal(r.treatAsWithdraw, false, 'the IPv6 route is not withdrawn');
  t.match(r.problems, [/NEXT_HOP 0\.0\.0\.0 .*ignored/], 'the bad NEXT_HOP is still reported');
  const mp = r.message.pathAttributes.find((a) => a.type === 'MP_REACH_NLRI');
  t.same(mp?.type === 'MP_REACH_NLRI' ? mp.nlri : undefined, [{ prefix: '2001:db8::/32' }]);

  // With IPv4 NLRI the same NEXT_HOP still means treat-as-withdraw (RFC 7606 §7.3).
  const withV4 = Buffer.concat([body, hex`18 c63364  # NLRI 198.51.100.0/24`]);
  t.equal(decodeUpdate(withV4, as2).treatAsWithdraw, true, 'IPv4 NLRI with a bad NEXT_HOP are withdrawn');
});

t.test('bug: an UPDATE whose only attribute was discarded (RFC 7606) was taken for an IPv4 End-of-RIB (RFC 4724 §2)', async (t) => {
  const body = hex`
    0000              # Withdrawn Routes Length 0
    0004              # Total Path Attribute Length 4
    40 06 01 00       # ATOMIC_AGGREGATE with length 1 (must be 0) → attribute-discard, RFC 7606 §7.6
  `;
  const r = decodeUpdate(body, as2);
  t.same(r.discardedAttributes, [6]);
  t.same(r.message.pathAttributes, [], 'the attribute is gone from the message');
  t.equal(endOfRibFamily(r), undefined, 'the decode result is not an End-of-RIB');
  const eor = decodeUpdate(hex`0000 0000  # the real IPv4 End-of-RIB: nothing at all`, as2);
  t.equal(endOfRibFamily(eor), 'ipv4-unicast', 'a real End-of-RIB result still is one');
  t.equal(endOfRibFamily(eor.message), 'ipv4-unicast', 'and so is its message');
  const v6 = decodeUpdate(hex`0000 0006  80 0f 03 0002 01  # MP_UNREACH_NLRI IPv6, empty`, as2);
  t.equal(endOfRibFamily(v6), 'ipv6-unicast', 'IPv6 End-of-RIB from a result');
});

t.test('bug: AS4_PATH / AS4_AGGREGATOR were kept on a 4-octet AS session (RFC 6793 §3: MUST be discarded)', async (t) => {
  const body = hex`
    0000                               # Withdrawn Routes Length 0
    002c                               # Total Path Attribute Length 44
    40 01 01 00                        # ORIGIN IGP
    40 02 0a 02 02 00030d40 00030d41   # AS_PATH 200000 200001 (4-octet ASes)
    40 03 04 c0000201                  # NEXT_HOP 192.0.2.1
    c0 11 06 02 01 00000001            # AS4_PATH 1 (must not appear between NEW speakers)
    c0 12 08 00000001 c0000202         # AS4_AGGREGATOR 1, 192.0.2.2
    18 0a0000                          # NLRI 10.0.0.0/24
  `;
  const r = decodeUpdate(body, as4);
  t.same(r.discardedAttributes, [17, 18]);
  t.equal(r.treatAsWithdraw, false);
  t.notOk(
    r.message.pathAttributes.some((a) => a.type === 'AS4_PATH' || a.type === 'AS4_AGGREGATOR'),
    'both attributes are dropped',
  );
  t.same(effectiveAsPath(r.message.pathAttributes), [{ type: 2, asns: [200000, 200001] }], 'the 4-octet AS_PATH stands alone');
  t.equal(validateUpdateStrict(body, as4), undefined, 'not an RFC 4271 error');
});

t.test('bug: mergeAs4Path dropped the leading AS_CONFED_SEQUENCE when AS_PATH and AS4_PATH counted the same (RFC 6793 §4.2.3)', async (t) => {
  const asPath = [
    { type: 3 as const, asns: [65001] }, // AS_CONFED_SEQUENCE (65001): counts 0, AS4_PATH cannot carry it
    { type: 2 as const, asns: [23456, 100] },
  ];
  const merged = mergeAs4Path(asPath, [{ type: 2, asns: [200000, 100] }]);
  t.same(merged, [
    { type: 3, asns: [65001] },
    { type: 2, asns: [200000, 100] },
  ]);
  // Unchanged behaviour around it: one more AS in AS_PATH than in AS4_PATH takes that AS too.
  t.same(mergeAs4Path([{ type: 3, asns: [65001] }, { type: 2, asns: [7, 23456, 100] }], [{ type: 2, asns: [200000, 100] }]), [
    { type: 3, asns: [65001] },
    { type: 2, asns: [7, 200000, 100] },
  ]);
});

t.test('bug: AS 0 was accepted in AS_PATH, AGGREGATOR, AS4_PATH, AS4_AGGREGATOR (RFC 7607 §2: malformed)', async (t) => {
  const asPathZero = hex`
    0000 0012            # lengths: no withdrawn routes, 18 octets of attributes
    40 01 01 00          # ORIGIN IGP
    40 02 04 02 01 0000  # AS_PATH AS_SEQUENCE 0
    40 03 04 c0000201    # NEXT_HOP 192.0.2.1
    18 0a0000            # NLRI 10.0.0.0/24
  `;
  const r = decodeUpdate(asPathZero, as2);
  t.equal(r.treatAsWithdraw, true, 'AS_PATH with AS 0 → treat-as-withdraw (RFC 7606 §7.2)');
  const strict = validateUpdateStrict(asPathZero, as2);
  t.same({ code: strict?.code, subcode: strict?.subcode }, { code: 3, subcode: 11 }, 'strict: 3/11 Malformed AS_PATH');

  const aggregatorZero = hex`
    0000 001b                  # lengths: no withdrawn routes, 27 octets of attributes
    40 01 01 00                # ORIGIN IGP
    40 02 04 02 01 fde8        # AS_PATH 65000
    40 03 04 c0000201          # NEXT_HOP 192.0.2.1
    c0 07 06 0000 c0000202     # AGGREGATOR AS 0, 192.0.2.2
    18 0a0000                  # NLRI 10.0.0.0/24
  `;
  const ra = decodeUpdate(aggregatorZero, as2);
  t.equal(ra.treatAsWithdraw, false);
  t.same(ra.discardedAttributes, [7], 'AGGREGATOR with AS 0 → attribute-discard (RFC 7606 §7.7)');

  const as4Zero = hex`
    0000 0026                  # lengths: no withdrawn routes, 38 octets of attributes
    40 01 01 00                # ORIGIN IGP
    40 02 04 02 01 5ba0        # AS_PATH AS_TRANS
    40 03 04 c0000201          # NEXT_HOP 192.0.2.1
    c0 11 06 02 01 00000000    # AS4_PATH 0
    c0 12 08 00000000 c0000202 # AS4_AGGREGATOR 0, 192.0.2.2
    18 0a0000                  # NLRI 10.0.0.0/24
  `;
  const r4 = decodeUpdate(as4Zero, as2);
  t.equal(r4.treatAsWithdraw, false);
  t.same(r4.discardedAttributes, [17, 18], 'AS4_PATH / AS4_AGGREGATOR with AS 0 → attribute-discard (RFC 6793 §6)');
});

t.test('the fixes never turn arbitrary input into anything but a result or a BgpError', async (t) => {
  // A whole message through decodeMessageDetailed: the MP-only UPDATE with a bad NEXT_HOP decodes, not throws.
  const msg = hex`
    ffffffffffffffffffffffffffffffff 0046 02   # header, Length 70, UPDATE
    0000 002f
    40 01 01 00  40 02 04 02 01 fde8  40 03 04 ffffffff
    80 0e 1a 0002 01 10 20010db8000000000000000000000001 00 20 20010db8
  `;
  const d = decodeMessageDetailed(msg, as2);
  t.equal(d.update?.treatAsWithdraw, false);
  t.throws(() => decodeMessageDetailed(msg.subarray(0, 40), as2), BgpError, 'a truncated message is a BgpError');
  t.same(b.endOfRib('ipv4-unicast').pathAttributes, [], 'builders unchanged');
});

t.test('bug: NOTIFICATION Data copied whole could not be sent (a 4096-octet ROUTE-REFRESH → 7/1 of 4117 octets)', async (t) => {
  // RFC 7313 §5: a BoRR (subtype 1) whose body is not 4 octets → 7/1, Data = the complete message. A 4096-octet
  // one made the NOTIFICATION 19 + 2 + 4096 octets, and encodeMessage threw a plain Error on the session's error path.
  const rr = w.routeRefresh(1, 1, 1, Buffer.alloc(4096 - 23, 0xab));
  t.equal(rr.length, 4096);
  let err: unknown;
  try {
    decodeMessage(rr, as2);
  } catch (e) {
    err = e;
  }
  t.ok(err instanceof BgpError, 'a BgpError');
  const e = err as BgpError;
  t.same({ code: e.code, subcode: e.subcode, length: e.data.length }, { code: 7, subcode: 1, length: 4075 }, 'Data cut to 4075 octets');
  t.same(e.data, rr.subarray(0, 4075), 'the Data is the start of the message');
  const sent = encodeMessage(notificationFromError(e), as2);
  t.equal(sent.length, 4096, 'the NOTIFICATION fits 4096 octets');
  // Short Data is untouched.
  const small = BgpError.routeRefreshInvalidLength(w.routeRefresh(1, 1, 1, [0]));
  t.equal(small.data.length, 24);
});
