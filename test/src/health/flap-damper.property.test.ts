// fast-check properties of FlapDamper: bounds that must hold for any withdrawal history.
import fc from 'fast-check';
import t from 'tap';
import { FlapDamper } from '../../../src/health/flap-damper.ts';
import type { FlapControlParams } from '../../../src/health/flap-damper.ts';

const params = fc
  .record({
    holdDownSec: fc.double({ min: 0, max: 60, noNaN: true }),
    penalty: fc.double({ min: 0, max: 5000, noNaN: true }),
    reuseThreshold: fc.double({ min: 1, max: 2000, noNaN: true }),
    extra: fc.double({ min: 1, max: 5000, noNaN: true }),
    halfLifeSec: fc.double({ min: 0.5, max: 900, noNaN: true }),
    maxSuppressSec: fc.double({ min: 1, max: 3600, noNaN: true }),
  })
  .map(({ extra, ...p }): FlapControlParams => ({ ...p, suppressThreshold: p.reuseThreshold + extra }));

// Gaps between withdrawals, ms.
const gaps = fc.array(fc.integer({ min: 0, max: 600_000 }), { minLength: 1, maxLength: 40 });

t.test('blocked never beyond max(holdDown, maxSuppress) after the last withdrawal', async (t) => {
  let runs = 0;
  fc.assert(
    fc.property(params, gaps, (p, gs) => {
      runs++;
      const d = new FlapDamper(p);
      let now = 0;
      for (const g of gs) {
        now += g;
        d.recordWithdraw(now);
        const until = d.blockedUntil(now);
        const bound = now + Math.max(p.holdDownSec, p.maxSuppressSec) * 1000 + 1;
        if (until !== null && until > bound) return false;
        if (p.holdDownSec * 1000 >= 1 && until === null) return false; // hold-down (>= 1 ms) always blocks right after a withdrawal
      }
      return true;
    }),
    { numRuns: 300 },
  );
  t.equal(runs, 300, 'property ran 300 times');
});

t.test('penalty never exceeds the RFC 2439 ceiling and only decays between withdrawals', async (t) => {
  let runs = 0;
  fc.assert(
    fc.property(params, gaps, (p, gs) => {
      runs++;
      const d = new FlapDamper(p);
      const ceiling = p.reuseThreshold * 2 ** (p.maxSuppressSec / p.halfLifeSec);
      let now = 0;
      for (const g of gs) {
        const before = d.penaltyAt(now);
        const later = d.penaltyAt(now + g);
        if (later > before + 1e-9) return false;
        now += g;
        d.recordWithdraw(now);
        if (d.penaltyAt(now) > ceiling * (1 + 1e-9)) return false;
      }
      return true;
    }),
    { numRuns: 300 },
  );
  t.equal(runs, 300, 'property ran 300 times');
});

t.test('a suppressed key is released exactly when its penalty has decayed to reuseThreshold', async (t) => {
  let suppressedCases = 0;
  fc.assert(
    fc.property(params, gaps, (p, gs) => {
      const d = new FlapDamper({ ...p, holdDownSec: 0 });
      let now = 0;
      for (const g of gs) {
        now += g;
        d.recordWithdraw(now);
      }
      const st = d.status(now);
      if (!st.suppressed) return true;
      suppressedCases++;
      const until = st.suppressedUntilMs as number;
      return d.blockedUntil(until - 1) === until && d.blockedUntil(until) === null && d.penaltyAt(until) <= p.reuseThreshold * (1 + 1e-6);
    }),
    { numRuns: 300 },
  );
  t.ok(suppressedCases > 0, `${suppressedCases} suppressed histories checked`);
});
