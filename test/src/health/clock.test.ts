import t from 'tap';
import { FakeClock, systemClock } from '../../../src/health/clock.ts';

t.test('FakeClock fires timers in due order, only inside advance', async (t) => {
  const c = new FakeClock(0);
  const fired: string[] = [];
  c.setTimeout(() => fired.push('b@20'), 20);
  c.setTimeout(() => fired.push('a@10'), 10);
  c.setTimeout(() => fired.push('c@10'), 10);
  const h = c.setTimeout(() => fired.push('cancelled'), 15);
  c.clearTimeout(h);
  t.same(fired, [], 'nothing fires without advance');
  c.advance(10);
  t.same(fired, ['a@10', 'c@10'], 'ties in creation order');
  t.equal(c.nowMs(), 10);
  c.setTimeout(() => {
    fired.push('d@15');
    c.setTimeout(() => fired.push('e@18'), 3); // created while advancing, due inside the window
  }, 5);
  c.advance(100);
  t.same(fired, ['a@10', 'c@10', 'd@15', 'e@18', 'b@20']);
  t.equal(c.nowMs(), 110);
  t.equal(c.pending(), 0);
});

t.test('systemClock moves forward and its timers fire', async (t) => {
  const a = systemClock.nowMs();
  await new Promise<void>((resolve) => systemClock.setTimeout(resolve, 5));
  t.ok(systemClock.nowMs() >= a, 'monotonic');
  let fired = false;
  const h = systemClock.setTimeout(() => (fired = true), 1);
  systemClock.clearTimeout(h);
  await new Promise((r) => setTimeout(r, 20));
  t.equal(fired, false, 'cleared timer does not fire');
});
