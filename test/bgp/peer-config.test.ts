// A peer's options as data (bgp/peer-config.ts): what a change of each does, the one rule the Speaker and the
// daemon's reload diff read; the ranges as text; the defaults the Speaker applies.
import t from 'tap';
import { BFD_OPTIONS, changedFields, changeOf, GRACEFUL_RESTART_OPTIONS, inRange, PEER_OPTIONS, rangeText, resetsSession } from '../../bgp/peer-config.ts';
import { PeerBfd } from '../../bgp/bfd/peers.ts';

t.test('what a change does: session, export or bfd; a field the table does not know resets', async (t) => {
  t.equal(changeOf('holdTimeSec'), 'session');
  t.equal(changeOf('nextHopIPv4'), 'export');
  t.equal(changeOf('nextHopIPv6'), 'export');
  t.equal(changeOf('bfd'), 'bfd');
  t.equal(changeOf('someFutureOption'), 'session', 'unknown: resets');
  t.equal(changeOf('toString'), 'session', 'a name of Object.prototype is no row');
  t.same(Object.entries(PEER_OPTIONS).filter(([, o]) => o.change !== 'session').map(([k]) => k).sort(), ['bfd', 'nextHopIPv4', 'nextHopIPv6'], 'only next hops and BFD keep the session');
  t.notOk(resetsSession(['nextHopIPv4', 'bfd']));
  t.ok(resetsSession(['nextHopIPv4', 'holdTimeSec']));
  t.ok(resetsSession(['someFutureOption']));
  t.notOk(resetsSession([]));
});

t.test('changedFields compares values, whatever the key order inside them', async (t) => {
  const a = { name: 'p', address: '192.0.2.1', peerAs: 1, families: ['ipv4-unicast' as const], bfd: { passive: true } };
  t.same(changedFields(a, { ...a }), []);
  t.same(changedFields(a, { ...a, holdTimeSec: 30, bfd: { passive: false } }), ['bfd', 'holdTimeSec']);
  t.same(changedFields({ ...a, ttlSecurity: true }, a), ['ttlSecurity'], 'a field removed is a change');
});

t.test('ranges as text and as a check', async (t) => {
  t.equal(rangeText(PEER_OPTIONS.holdTimeSec), '0 or 3..65535');
  t.equal(rangeText(PEER_OPTIONS.ebgpMultihop), '1..255');
  t.equal(rangeText(GRACEFUL_RESTART_OPTIONS.restartTimeSec), '0..4095');
  t.equal(rangeText(BFD_OPTIONS.transmitIntervalMs), '10..60000');
  t.equal(rangeText({ min: 1, max: 5, not: [1, 3, 5] }), '2 or 4');
  t.equal(rangeText(PEER_OPTIONS.passive), undefined, 'a flag has no range');
  for (const [n, ok] of [[0, true], [1, false], [2, false], [3, true], [65535, true], [65536, false], [-1, false]] as const) t.equal(inRange(PEER_OPTIONS.holdTimeSec, n), ok, `hold time ${n}`);
});

t.test("a peer's BFD session gets the table's defaults", async (t) => {
  t.same(PeerBfd.sessionConfig({ name: 'p', address: '192.0.2.1', bfd: {} }), {
    remoteAddress: '192.0.2.1',
    multihop: false,
    transmitIntervalMs: BFD_OPTIONS.transmitIntervalMs.default,
    receiveIntervalMs: BFD_OPTIONS.receiveIntervalMs.default,
    detectMultiplier: BFD_OPTIONS.detectMultiplier.default,
    passive: false,
  });
  t.equal(BFD_OPTIONS.transmitIntervalMs.default, 300, 'MetalLB and FRR use 300 ms');
});
