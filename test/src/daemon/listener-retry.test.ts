// The BGP listener's bind on its own (src/daemon/listener-retry.ts): a first bind that fails does not stop Herald;
// it is retried with capped exponential backoff on the clock, each failure logged once (message and code, no stack)
// and shown in readiness until it binds; stop() ends the retries.
import t from 'tap';
import { pino } from 'pino';
import { FakeClock } from '../../../bgp/index.ts';
import { ListenerRetry } from '../../../src/daemon/listener-retry.ts';

function make(failures: number) {
  const clock = new FakeClock(0);
  const lines: Record<string, unknown>[] = [];
  const log = pino({ level: 'info' }, { write: (l: string) => void lines.push(JSON.parse(l) as Record<string, unknown>) });
  let attempts = 0;
  const speaker = {
    listen: async () => {
      attempts++;
      if (attempts <= failures) throw Object.assign(new Error('listen EADDRINUSE: address already in use 127.0.0.1:179'), { code: 'EADDRINUSE', syscall: 'listen' });
    },
  };
  const retry = new ListenerRetry({ speaker, log, backoff: { firstMs: 1000, maxMs: 4000 }, clock });
  return { clock, lines, retry, attempts: () => attempts };
}

const settle = () => new Promise((r) => setImmediate(r));

t.test('not bound yet, then bound', async (t) => {
  const { retry } = make(0);
  t.equal(retry.problem(), 'BGP listener not bound yet');
  await retry.start();
  t.equal(retry.problem(), undefined);
});

t.test('a failing bind is retried at 1, 2, 4, 4 s and shown until it binds', async (t) => {
  const { clock, lines, retry, attempts } = make(4);
  await retry.start();
  t.equal(retry.problem(), 'BGP listener: listen EADDRINUSE: address already in use 127.0.0.1:179 (attempt 1; retrying in 1 s)');
  const delays = [1000, 2000, 4000, 4000];
  for (const [i, ms] of delays.entries()) {
    clock.advance(ms - 1);
    await settle();
    t.equal(attempts(), i + 1, `no retry before ${ms} ms`);
    clock.advance(1);
    await settle();
    t.equal(attempts(), i + 2, `retry ${i + 1} after ${ms} ms`);
  }
  t.equal(retry.problem(), undefined, 'bound at the fifth attempt');
  const errors = lines.filter((l) => l['msg'] === 'BGP listener cannot bind');
  t.equal(errors.length, 4, 'each failure logged once');
  t.match(errors[0], { code: 'EADDRINUSE', attempt: 1, retryInSec: 1 });
  t.notOk(errors.some((l) => 'stack' in l || 'err' in l), 'no stack');
  t.ok(lines.some((l) => l['msg'] === 'BGP listener bound' && l['attempt'] === 5));
});

t.test('stop() ends the retries', async (t) => {
  const { clock, retry, attempts } = make(10);
  await retry.start();
  retry.stop();
  clock.advance(60_000);
  await settle();
  t.equal(attempts(), 1);
});
