import t from 'tap';
import { DEFAULT_FLAP_CONTROL, FlapDamper, validateFlapControl } from '../../../src/health/flap-damper.ts';
import type { FlapControlParams } from '../../../src/health/flap-damper.ts';

const P: FlapControlParams = { holdDownSec: 10, penalty: 1000, suppressThreshold: 2000, reuseThreshold: 750, halfLifeSec: 60, maxSuppressSec: 300 };

t.test('hold-down only: blocked for holdDown seconds after each withdrawal', async (t) => {
  const d = new FlapDamper({ ...P, penalty: 0 });
  t.equal(d.blockedUntil(0), null, 'nothing blocked before any withdrawal');
  d.recordWithdraw(1_000);
  // Rows: time (ms) -> blocked until (ms) or null.
  const rows: Array<[number, number | null]> = [
    [1_000, 11_000],
    [10_999, 11_000],
    [11_000, null],
    [50_000, null],
  ];
  for (const [now, until] of rows) t.equal(d.blockedUntil(now), until, `at ${now} ms`);
  t.equal(d.status(5_000).suppressed, false, 'penalty 0 never suppresses');
  t.equal(d.idle(11_000), true);
});

t.test('penalty decays with the half-life', async (t) => {
  const d = new FlapDamper(P);
  d.recordWithdraw(0);
  const rows: Array<[number, number]> = [
    [0, 1000],
    [60_000, 500],
    [120_000, 250],
    [180_000, 125],
  ];
  for (const [now, p] of rows) t.ok(Math.abs(d.penaltyAt(now) - p) < 1e-6, `penalty at ${now / 1000} s is ${p}`);
});

t.test('repeated withdrawals suppress; reuse when decayed to reuseThreshold', async (t) => {
  const d = new FlapDamper(P);
  d.recordWithdraw(0);
  t.equal(d.status(0).suppressed, false, 'one withdrawal: hold-down only');
  d.recordWithdraw(20_000); // 1000 * 2^(-1/3) + 1000 = 1793.7
  t.equal(d.status(20_000).suppressed, false, 'two withdrawals 20 s apart: below 2000');
  d.recordWithdraw(40_000); // 1793.7 * 2^(-1/3) + 1000 = 2423.7
  const st = d.status(40_000);
  t.equal(st.suppressed, true, 'third withdrawal suppresses');
  t.equal(st.suppressedSinceMs, 40_000);
  const expectUntil = 40_000 + 60_000 * Math.log2(st.penalty / 750);
  t.ok(Math.abs((st.suppressedUntilMs as number) - expectUntil) <= 1, `until ~${Math.round(expectUntil)} ms`);
  t.equal(st.blockedUntilMs, st.suppressedUntilMs, 'suppression outlasts hold-down');
  const until = st.suppressedUntilMs as number;
  t.equal(d.blockedUntil(until - 1), until, 'still blocked 1 ms before');
  t.equal(d.blockedUntil(until), null, 'usable at the reuse time');
  t.ok(d.penaltyAt(until) <= 750 + 1e-6, 'penalty at reuse time is at most reuseThreshold');
  t.equal(d.status(until).suppressed, false);
  t.equal(d.status(until).withdrawals, 3);
});

t.test('maxSuppress caps the suppression after the last withdrawal', async (t) => {
  const d = new FlapDamper(P);
  for (let i = 0; i < 100; i++) d.recordWithdraw(i * 100);
  const st = d.status(9_900);
  t.equal(st.suppressed, true);
  t.ok((st.suppressedUntilMs as number) - 9_900 <= P.maxSuppressSec * 1000 + 1, 'at most maxSuppress after the last withdrawal');
  t.ok((st.suppressedUntilMs as number) - 9_900 >= P.maxSuppressSec * 1000 - 1, 'ceiling reached after 100 flaps');
});

t.test('idle after the penalty has decayed', async (t) => {
  const d = new FlapDamper(P);
  d.recordWithdraw(0);
  t.equal(d.idle(5_000), false);
  t.equal(d.idle(60_000 * 11), true, 'after 11 half-lives the penalty is below 1');
});

t.test('parameter validation names the field', async (t) => {
  t.doesNotThrow(() => validateFlapControl(DEFAULT_FLAP_CONTROL));
  t.throws(() => new FlapDamper({ ...P, halfLifeSec: 0 }), /flapControl\.halfLife/);
  t.throws(() => new FlapDamper({ ...P, holdDownSec: -1 }), /flapControl\.holdDown/);
  t.throws(() => new FlapDamper({ ...P, reuseThreshold: 3000 }), /suppressThreshold .* must be greater than reuseThreshold/);
  t.throws(() => new FlapDamper({ ...P, maxSuppressSec: Number.NaN }), /flapControl\.maxSuppress/);
});
