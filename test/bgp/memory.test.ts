// bgp/memory.ts: a full collection once enough items changed and the thread was quiet (issue 35 N3).
import t from 'tap';
import { collectGarbage, MemoryReducer } from '../../bgp/index.ts';

t.test('collectGarbage runs V8\'s full collection without --expose-gc', async (t) => {
  t.equal(collectGarbage(), true);
});

t.test('MemoryReducer: one collection after the threshold and the quiet time; none below it', async (t) => {
  const seen: number[] = [];
  const r = new MemoryReducer({ thresholdItems: 100, quietMs: 50, onCollect: (items) => seen.push(items) });
  t.teardown(() => r.stop());
  r.note(60);
  await new Promise((res) => setTimeout(res, 120));
  t.same(seen, [], 'below the threshold: nothing');
  r.note(60);
  r.note(10);
  await new Promise((res) => setTimeout(res, 30));
  r.note(5);
  t.same(seen, [], 'notes move the quiet time');
  await new Promise((res) => setTimeout(res, 150));
  t.same(seen, [135], 'one collection for everything noted');
  t.equal(r.collections, 1);
});
