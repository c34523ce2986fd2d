import t from 'tap';
import { FakeClock, realClock } from '../../bgp/clock.ts';

t.test('FakeClock fires timers in time order only when advanced', async (t) => {
  const clock = new FakeClock();
  const fired: string[] = [];
  clock.setTimer(() => fired.push('b@200'), 200);
  clock.setTimer(() => fired.push('a@100'), 100);
  const c = clock.setTimer(() => fired.push('c@150'), 150);
  clock.clearTimer(c);
  clock.advance(99);
  t.same(fired, []);
  t.equal(clock.nextDueInMs(), 1);
  clock.advance(1);
  t.same(fired, ['a@100']);
  t.equal(clock.now(), 100);
  clock.advance(1000);
  t.same(fired, ['a@100', 'b@200']);
  t.equal(clock.now(), 1100);
  t.equal(clock.pending, 0);
});

t.test('FakeClock runs timers scheduled by timers within the same advance', async (t) => {
  const clock = new FakeClock(5);
  const at: number[] = [];
  const tick = () => {
    at.push(clock.now());
    if (at.length < 3) clock.setTimer(tick, 10);
  };
  clock.setTimer(tick, 10);
  clock.advance(100);
  t.same(at, [15, 25, 35]);
});

t.test('realClock timers fire and can be cleared', async (t) => {
  // realClock timers are unref'd: keep the event loop alive meanwhile.
  const keep = setInterval(() => {}, 1000);
  const ok = await new Promise<boolean>((resolve) => {
    const h = realClock.setTimer(() => resolve(false), 5);
    realClock.clearTimer(h);
    realClock.setTimer(() => resolve(true), 10);
  });
  clearInterval(keep);
  t.equal(ok, true);
  t.ok(realClock.now() > 1.7e12);
});
