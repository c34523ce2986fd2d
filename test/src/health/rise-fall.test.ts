import t from 'tap';
import { RiseFall } from '../../../src/health/rise-fall.ts';
import type { ProbeResult } from '../../../src/health/types.ts';

const OK: ProbeResult = { ok: true, message: 'ok', latencyMs: 1 };
const BAD: ProbeResult = { ok: false, code: 'ConnectionRefused', message: 'refused', latencyMs: 1 };

// Each row: rise, fall, a sequence of results ('+' pass, '-' fail), the state after each result.
const rows: Array<{ name: string; rise: number; fall: number; seq: string; states: string }> = [
  { name: 'unknown until rise passes', rise: 2, fall: 2, seq: '++', states: 'U,up' },
  { name: 'unknown until fall failures', rise: 2, fall: 3, seq: '---', states: 'U,U,down' },
  { name: 'a failure resets the rise run', rise: 3, fall: 3, seq: '++-+++', states: 'U,U,U,U,U,up' },
  { name: 'up survives fall-1 failures', rise: 1, fall: 3, seq: '+--+--', states: 'up,up,up,up,up,up' },
  { name: 'up goes down after fall failures', rise: 1, fall: 2, seq: '+--', states: 'up,up,down' },
  { name: 'down needs rise passes to come back', rise: 3, fall: 1, seq: '-++-+++', states: 'down,down,down,down,down,down,up' },
  { name: 'rise 1 fall 1 follows every result', rise: 1, fall: 1, seq: '+-+-', states: 'up,down,up,down' },
  { name: 'mixed results while unknown stay unknown', rise: 2, fall: 2, seq: '+-+-+-', states: 'U,U,U,U,U,U' },
];

t.test('rise/fall table', async (t) => {
  t.equal(rows.length, 8, 'all rows present');
  for (const row of rows) {
    const rf = new RiseFall(row.rise, row.fall, 0);
    const got: string[] = [];
    let now = 0;
    for (const c of row.seq) {
      now += 1000;
      rf.record(c === '+' ? OK : BAD, now);
      got.push(rf.state === 'unknown' ? 'U' : rf.state);
    }
    t.equal(got.join(','), row.states, row.name);
  }
});

t.test('snapshot keeps counts, last result, last failure and since', async (t) => {
  const rf = new RiseFall(2, 2, 100);
  t.equal(rf.snapshot().state, 'unknown');
  t.equal(rf.snapshot().sinceMs, 100);
  t.equal(rf.record(OK, 200), false);
  t.equal(rf.record(OK, 300), true, 'state change reported');
  let s = rf.snapshot();
  t.same([s.state, s.sinceMs, s.consecutiveOk, s.consecutiveFail, s.failures, s.probes], ['up', 300, 2, 0, 0, 2]);
  rf.record(BAD, 400);
  rf.record(BAD, 500);
  rf.record(OK, 600);
  s = rf.snapshot();
  t.same([s.state, s.sinceMs, s.consecutiveOk, s.consecutiveFail, s.failures, s.probes], ['down', 500, 1, 0, 2, 5]);
  t.equal(s.lastResult, OK);
  t.equal(s.lastFailure, BAD, 'last failure kept after a success');
  t.equal(s.lastProbeAtMs, 600);
});

t.test('setThresholds keeps state and applies on the next result', async (t) => {
  const rf = new RiseFall(5, 5, 0);
  rf.record(OK, 1);
  rf.record(OK, 2);
  rf.setThresholds(2, 5);
  t.equal(rf.state, 'unknown');
  rf.record(OK, 3);
  t.equal(rf.state, 'up');
});

t.test('invalid thresholds throw RangeError', async (t) => {
  t.throws(() => new RiseFall(0, 1, 0), RangeError);
  t.throws(() => new RiseFall(1, 1.5, 0), RangeError);
  t.throws(() => new RiseFall(1, 1, 0).setThresholds(1, 0), RangeError);
});
