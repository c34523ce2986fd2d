import t from 'tap';
import { FakeClock } from '../../../bgp/index.ts';
import { WorkQueue } from '../../../src/controller/workqueue.ts';

/** Delays of the pending timers of the shared fake clock (at most one retry timer per key here). */
const pendingDelays = (clock: FakeClock): number[] => (clock.pending === 0 ? [] : [clock.nextDueInMs() as number]);

const deferred = (): { promise: Promise<void>; resolve: () => void } => {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
};

t.test('queued keys are deduplicated', async (tt) => {
  const seen: string[] = [];
  const q = new WorkQueue((k) => void seen.push(k));
  q.add('a');
  q.add('b');
  q.add('a');
  q.add('a');
  tt.equal(q.length, 2);
  await q.whenIdle();
  tt.strictSame(seen, ['a', 'b']);
  tt.equal(q.processed, 2);
});

t.test('a key added while it runs is run again afterwards, never concurrently', async (tt) => {
  const gate = deferred();
  let running = 0;
  let maxRunning = 0;
  const seen: string[] = [];
  const q = new WorkQueue(
    async (k) => {
      running++;
      maxRunning = Math.max(maxRunning, running);
      seen.push(k);
      if (seen.length === 1) await gate.promise;
      running--;
    },
    { concurrency: 4 },
  );
  q.add('a');
  await new Promise((r) => setImmediate(r));
  tt.equal(running, 1, 'first run started');
  q.add('a');
  q.add('a');
  await new Promise((r) => setImmediate(r));
  tt.equal(running, 1, 'second run waits for the first');
  gate.resolve();
  await q.whenIdle();
  tt.strictSame(seen, ['a', 'a'], 'coalesced into exactly one more run');
  tt.equal(maxRunning, 1);
});

t.test('different keys run concurrently up to the limit', async (tt) => {
  const gate = deferred();
  let running = 0;
  let maxRunning = 0;
  const q = new WorkQueue(
    async () => {
      running++;
      maxRunning = Math.max(maxRunning, running);
      await gate.promise;
      running--;
    },
    { concurrency: 2 },
  );
  for (const k of ['a', 'b', 'c', 'd']) q.add(k);
  await new Promise((r) => setImmediate(r));
  tt.equal(running, 2);
  tt.equal(q.length, 2);
  gate.resolve();
  await q.whenIdle();
  tt.equal(maxRunning, 2);
  tt.equal(q.processed, 4);
});

t.test('failures are retried with capped exponential backoff; success resets', async (tt) => {
  const clock = new FakeClock();
  let failUntil = 5;
  let calls = 0;
  const errors: Array<[string, number]> = [];
  const q = new WorkQueue(
    () => {
      calls++;
      if (calls <= failUntil) throw new Error(`boom ${calls}`);
    },
    { clock, baseDelayMs: 10, maxDelayMs: 50 },
  );
  q.on('error', (k: string, _e: unknown, d: number) => errors.push([k, d]));
  q.add('k');
  await q.whenIdle();
  tt.equal(calls, 1);
  tt.strictSame(pendingDelays(clock), [10]);
  tt.equal(q.pendingRetries, 1);
  const expected = [20, 40, 50, 50];
  for (const d of expected) {
    clock.advance(clock.nextDueInMs() as number);
    await q.whenIdle();
    tt.strictSame(pendingDelays(clock), [d]);
  }
  tt.equal(q.failures('k'), 5);
  clock.advance(50);
  await q.whenIdle();
  tt.equal(calls, 6);
  tt.strictSame(pendingDelays(clock), [], 'no retry after success');
  tt.equal(q.failures('k'), 0, 'success resets the failure count');
  tt.strictSame(errors.map((e) => e[1]), [10, 20, 40, 50, 50]);
  tt.equal(q.failed, 5);
  // after reset, a new failure starts at the base delay again
  failUntil = 7;
  q.add('k');
  await q.whenIdle();
  tt.strictSame(pendingDelays(clock), [10]);
  await q.shutDown();
  tt.strictSame(pendingDelays(clock), [], 'shutDown cancels retries');
});

t.test('an add during a failing run is processed at once, not after the backoff', async (tt) => {
  const clock = new FakeClock();
  const gate = deferred();
  let calls = 0;
  const q = new WorkQueue(
    async () => {
      calls++;
      if (calls === 1) {
        await gate.promise;
        throw new Error('fail');
      }
    },
    { clock, baseDelayMs: 1000 },
  );
  q.add('k');
  await new Promise((r) => setImmediate(r));
  q.add('k');
  gate.resolve();
  await q.whenIdle();
  tt.equal(calls, 2);
  tt.strictSame(pendingDelays(clock), []);
});

t.test('shutDown waits for running handlers and ignores later adds', async (tt) => {
  const gate = deferred();
  let done = false;
  const seen: string[] = [];
  const q = new WorkQueue(async (k) => {
    seen.push(k);
    await gate.promise;
    done = true;
  });
  q.add('a');
  q.add('b');
  await new Promise((r) => setImmediate(r));
  const p = q.shutDown();
  q.add('c');
  setImmediate(() => gate.resolve());
  await p;
  tt.equal(done, true);
  tt.strictSame(seen, ['a'], 'queued b dropped, c ignored');
});
