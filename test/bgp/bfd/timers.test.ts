// RFC 5880 §6.8.2–§6.8.4, §6.8.7 timer negotiation as pure functions.
import t from 'tap';
import { SLOW_TX_INTERVAL_US, advertisedTxIntervalUs, detectionTimeUs, jitteredIntervalUs, transmitIntervalUs } from '../../../bgp/bfd/timers.ts';

t.test('DesiredMinTx is at least 1 s while not Up (§6.8.3)', async (t) => {
  t.equal(SLOW_TX_INTERVAL_US, 1_000_000);
  for (const s of ['Down', 'Init', 'AdminDown'] as const) t.equal(advertisedTxIntervalUs(300_000, s), 1_000_000, s);
  t.equal(advertisedTxIntervalUs(300_000, 'Up'), 300_000);
  t.equal(advertisedTxIntervalUs(2_000_000, 'Down'), 2_000_000, 'a slower configured value stays');
});

t.test('transmit interval = max(DesiredMinTx, RemoteMinRx); none when RemoteMinRx is 0 (§6.8.7)', async (t) => {
  t.equal(transmitIntervalUs(300_000, 100_000), 300_000);
  t.equal(transmitIntervalUs(100_000, 300_000), 300_000);
  t.equal(transmitIntervalUs(100_000, 0), 0);
});

t.test('jitter: 75–100 %, or 75–90 % with Detect Mult 1 (§6.8.7)', async (t) => {
  t.equal(jitteredIntervalUs(100_000, 3, () => 0), 75_000);
  t.ok(jitteredIntervalUs(100_000, 3, () => 0.999999) < 100_000 && jitteredIntervalUs(100_000, 3, () => 0.999999) > 99_990);
  t.equal(jitteredIntervalUs(100_000, 1, () => 0), 75_000);
  t.ok(jitteredIntervalUs(100_000, 1, () => 0.999999) < 90_000);
  t.equal(jitteredIntervalUs(100_000, 3, () => 2), 100_000, 'a random() out of range is clamped to the interval');
  t.ok(jitteredIntervalUs(100_000, 1, () => 2) <= 90_000, 'and to 90 % with Detect Mult 1');
  t.equal(jitteredIntervalUs(100_000, 3, () => -1), 75_000, 'and a negative one to 75 %');
});

t.test('Detection Time = remote Detect Mult × max(RequiredMinRx, remote DesiredMinTx) (§6.8.4)', async (t) => {
  t.equal(detectionTimeUs(3, 300_000, 100_000), 900_000);
  t.equal(detectionTimeUs(5, 100_000, 1_000_000), 5_000_000);
});
