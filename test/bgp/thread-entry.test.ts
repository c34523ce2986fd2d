// bgp/thread-entry.js, the entry of the speaker and BFD threads: the thread gets the module compile cache on before
// it loads the TypeScript module named by its `argv`, and that module runs with the Worker's workerData. Without the
// cache, each thread type-stripped every bgp/ module again (docs/architecture.md "Threads").
import t from 'tap';
import { once } from 'node:events';
import { Worker } from 'node:worker_threads';

t.test('a thread started through thread-entry.js runs its module with the compile cache on', { timeout: 30_000 }, async (t) => {
  const probe = new URL('./fixtures/thread-entry-probe.ts', import.meta.url).href;
  const worker = new Worker(new URL('../../bgp/thread-entry.js', import.meta.url), { argv: [probe], workerData: { localAs: 65000 } });
  try {
    const [m] = (await once(worker, 'message')) as [{ cacheDir: string | undefined; workerData: unknown }];
    t.type(m.cacheDir, 'string', 'the compile cache is on in the thread');
    t.not(m.cacheDir, '', 'with a directory');
    t.same(m.workerData, { localAs: 65000 }, 'the module sees the workerData');
  } finally {
    await worker.terminate();
  }
});
