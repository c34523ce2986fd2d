// The health checks run on the shared clock (bgp/index.ts): hold-downs and probe schedules are computed from its
// now(), which must never go backwards, and from its timers, which fire in due order (the fake one only when advanced).
import t from 'tap';
import { FakeClock, realClock } from '../../../bgp/index.ts';

t.test('FakeClock fires timers in due order, only inside advance', async (t) => {
  const c = new FakeClock(0);
  const fired: string[] = [];
  c.setTimer(() => fired.push('b@20'), 20);
  c.setTimer(() => fired.push('a@10'), 10);
  c.setTimer(() => fired.push('c@10'), 10);
  const h = c.setTimer(() => fired.push('cancelled'), 15);
  c.clearTimer(h);
  t.same(fired, [], 'nothing fires without advance');
  c.advance(10);
  t.same(fired, ['a@10', 'c@10'], 'ties in creation order');
  t.equal(c.now(), 10);
  c.setTimer(() => {
    fired.push('d@15');
    c.setTimer(() => fired.push('e@18'), 3); // created while advancing, due inside the window
  }, 5);
  c.advance(100);
  t.same(fired, ['a@10', 'c@10', 'd@15', 'e@18', 'b@20']);
  t.equal(c.now(), 110);
  t.equal(c.pending, 0);
});

t.test('realClock is monotonic epoch time and its timers fire', async (t) => {
  const keep = setInterval(() => {}, 1000); // realClock timers are unref'd
  t.teardown(() => clearInterval(keep));
  const a = realClock.now();
  t.ok(Math.abs(a - Date.now()) < 60_000, 'on the epoch time line');
  let last = a;
  let backwards = 0;
  for (let i = 0; i < 10_000; i++) {
    const n = realClock.now();
    if (n < last) backwards++;
    last = n;
  }
  t.equal(backwards, 0, 'never goes backwards');
  await new Promise<void>((resolve) => realClock.setTimer(resolve, 5));
  t.ok(realClock.now() >= a + 4, 'time moved on while waiting');
  let fired = false;
  const h = realClock.setTimer(() => (fired = true), 1);
  realClock.clearTimer(h);
  await new Promise((r) => setTimeout(r, 20));
  t.equal(fired, false, 'cleared timer does not fire');
});
