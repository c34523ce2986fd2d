import t from 'tap';
import { Semaphore } from '../../../src/health/semaphore.ts';

t.test('bounds holders, FIFO hand-over, idempotent release', async (t) => {
  const sem = new Semaphore(2);
  const order: number[] = [];
  const releases: Array<() => void> = [];
  const waiters = [0, 1, 2, 3, 4].map((i) =>
    sem.acquire().then((rel) => {
      order.push(i);
      releases.push(rel);
    }),
  );
  await new Promise((r) => setImmediate(r));
  t.same(order, [0, 1], 'two holders');
  t.equal(sem.inFlight, 2);
  t.equal(sem.waiting, 3);
  releases[0]?.();
  releases[0]?.(); // second call is a no-op
  await new Promise((r) => setImmediate(r));
  t.same(order, [0, 1, 2], 'one released, exactly one more admitted');
  t.equal(sem.inFlight, 2);
  for (let i = 1; i < 5; i++) {
    releases[i]?.();
    await new Promise((r) => setImmediate(r));
  }
  await Promise.all(waiters);
  t.same(order, [0, 1, 2, 3, 4], 'FIFO');
  releases[4]?.();
  t.equal(sem.inFlight, 0);
  t.equal(sem.waiting, 0);
});

t.test('many waiters (queue compaction keeps order)', async (t) => {
  const sem = new Semaphore(1);
  const got: number[] = [];
  const n = 5000;
  const all = Array.from({ length: n }, (_, i) =>
    sem.acquire().then((rel) => {
      got.push(i);
      rel();
    }),
  );
  await Promise.all(all);
  t.equal(got.length, n);
  t.ok(got.every((v, i) => v === i), 'in order');
  t.equal(sem.inFlight, 0);
});

t.test('size must be a positive integer', async (t) => {
  t.throws(() => new Semaphore(0), RangeError);
  t.throws(() => new Semaphore(1.5), RangeError);
});
