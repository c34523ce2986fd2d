import t from 'tap';
import fc from 'fast-check';
import { LeaderElector, type LeaseStore } from '../../../src/leader/election.ts';
import { MemoryLeaseStore, Sim } from '../../helpers/sim.ts';

function cluster(n: number, sim: Sim, store: LeaseStore, random: () => number) {
  return Array.from({ length: n }, (_, i) => new LeaderElector({ identity: `node-${i}`, store, clock: sim.clockFor(`node-${i}`), random, leaseDurationSec: 15, renewDeadlineSec: 10, retryPeriodSec: 2 }));
}

t.test('rejects unsafe timing parameters', async (t) => {
  const store = new MemoryLeaseStore();
  t.throws(() => new LeaderElector({ identity: 'a', store, leaseDurationSec: 10, renewDeadlineSec: 10 }), /leaseDuration must be greater/);
  t.throws(() => new LeaderElector({ identity: 'a', store, leaseDurationSec: 15, renewDeadlineSec: 2, retryPeriodSec: 2 }), /renewDeadline must be greater/);
});

t.test('first candidate acquires; others follow the holder; transitions counted', async (t) => {
  const sim = new Sim();
  const store = new MemoryLeaseStore();
  const [a, b] = cluster(2, sim, store, () => 0.5);
  a!.start();
  await sim.run(1, () => {});
  b!.start();
  await sim.run(30_000, () => {});
  t.ok(a!.isLeader());
  t.notOk(b!.isLeader());
  t.equal(store.lease?.record.holderIdentity, 'node-0');
  t.equal(store.lease?.record.leaseTransitions, 0);
  t.equal(b!.observedHolder(), 'node-0');
  await a!.stop();
  t.equal(store.lease?.record.holderIdentity, '', 'released on stop');
  await sim.run(40_000, () => {});
  t.ok(b!.isLeader(), 'the other takes over after a release');
  t.equal(store.lease?.record.leaseTransitions, 1);
});

t.test('kill the leader: a new leader within leaseDuration + retry, never two at once', async (t) => {
  const sim = new Sim();
  const store = new MemoryLeaseStore();
  const els = cluster(3, sim, store, () => 0.3);
  for (const e of els) e.start();
  const check = () => { const leaders = els.filter((e) => !sim.killed.has(e.identity) && e.isLeader()); if (leaders.length > 1) t.fail(`two leaders at ${sim.now}`); };
  await sim.run(10_000, check);
  const first = els.find((e) => e.isLeader());
  t.ok(first, 'one leader');
  sim.killed.add(first!.identity);
  const killedAt = sim.now;
  let takeover = -1;
  await sim.run(60_000, () => { check(); if (takeover < 0 && els.some((e) => e !== first && e.isLeader())) takeover = sim.now; });
  t.ok(takeover > 0, 'someone took over');
  t.ok(takeover - killedAt <= 15_000 + 2_000 * 1.2 + 2_000, `takeover after ${takeover - killedAt} ms`);
});

t.test('paused leader (partition) steps down and cannot act when it resumes', async (t) => {
  const sim = new Sim();
  const store = new MemoryLeaseStore();
  const [a, b] = cluster(2, sim, store, () => 0);
  a!.start();
  await sim.run(100, () => {});
  b!.start();
  await sim.run(5_000, () => {});
  t.ok(a!.isLeader());
  sim.paused.add('node-0');
  await sim.run(40_000, () => { if (a!.isLeader() && b!.isLeader()) t.fail('two leaders'); });
  t.ok(b!.isLeader(), 'b took over while a was paused');
  t.notOk(a!.isLeader(), 'a, evaluated on the shared clock, is not leader');
  sim.paused.delete('node-0');
  await sim.run(60_000, () => { if (a!.isLeader() && b!.isLeader()) t.fail('two leaders after resume'); });
  t.notOk(a!.isLeader());
  t.ok(b!.isLeader());
});

t.test('randomised runs: never two leaders; leadership always recovers', async (t) => {
  let runs = 0;
  await fc.assert(
    fc.asyncProperty(fc.integer({ min: 2, max: 3 }), fc.array(fc.tuple(fc.integer({ min: 0, max: 2 }), fc.constantFrom('pause', 'resume', 'kill'), fc.integer({ min: 500, max: 20_000 })), { maxLength: 6 }), fc.integer({ min: 1, max: 1e9 }), async (n, script, seed) => {
      runs++;
      let s = seed;
      const random = () => ((s = (s * 1103515245 + 12345) % 2147483648) / 2147483648);
      const sim = new Sim();
      const store = new MemoryLeaseStore();
      const els = cluster(n, sim, store, random);
      for (const e of els) e.start();
      let twice = false;
      const check = () => { if (els.filter((e) => e.isLeader()).length > 1) twice = true; };
      for (const [who, what, after] of script) {
        await sim.run(sim.now + after, check);
        const id = `node-${who % n}`;
        if (what === 'pause') sim.paused.add(id);
        else if (what === 'resume') sim.paused.delete(id);
        else if (els.filter((e) => !sim.killed.has(e.identity)).length > 1) sim.killed.add(id);
      }
      sim.paused.clear();
      await sim.run(sim.now + 60_000, check);
      const alive = els.filter((e) => !sim.killed.has(e.identity));
      return !twice && alive.filter((e) => e.isLeader()).length === 1;
    }),
    { numRuns: 150 },
  );
  t.equal(runs >= 150, true, `${runs} randomised runs`);
});
