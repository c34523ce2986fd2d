import t from 'tap';
import { Backoff } from '../../../bgp/session/backoff.ts';

t.test('delays double from the base up to the cap, within the jitter bounds', async (t) => {
  for (const r of [0, 0.5, 0.999999]) {
    const b = new Backoff({ baseMs: 1000, capMs: 30_000, jitter: 0.25, random: () => r });
    const centres = [1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000];
    for (const centre of centres) {
      const d = b.next();
      t.ok(d >= centre * 0.75 && d <= centre * 1.25, `random ${r}: ${d} within ±25 % of ${centre}`);
    }
  }
  const mid = new Backoff({ baseMs: 1000, capMs: 30_000, random: () => 0.5 });
  t.same([mid.next(), mid.next(), mid.next()], [1000, 2000, 4000], 'no jitter at random 0.5');
});

t.test('random delays stay in [0.75 base, 1.25 cap] over many draws', async (t) => {
  const b = new Backoff({ baseMs: 500, capMs: 8000 });
  let min = Infinity;
  let max = 0;
  for (let i = 0; i < 2000; i++) {
    if (i % 20 === 0) b.reset();
    const d = b.next();
    min = Math.min(min, d);
    max = Math.max(max, d);
  }
  t.ok(min >= 375, `min ${min}`);
  t.ok(max <= 10_000, `max ${max}`);
});

t.test('reset', async (t) => {
  const b = new Backoff({ baseMs: 1000, capMs: 120_000, random: () => 0.5 });
  b.next();
  b.next();
  t.equal(b.peekMs(), 4000);
  b.reset();
  t.equal(b.next(), 1000);
  t.equal(b.attempts, 1);
});

t.test('bad options throw RangeError', async (t) => {
  t.throws(() => new Backoff({ capMs: 0 }), RangeError);
  t.throws(() => new Backoff({ capMs: 10, jitter: 2 }), RangeError);
  t.throws(() => new Backoff({ capMs: 10, baseMs: 0 }), RangeError);
});
