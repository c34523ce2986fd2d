/**
 * LineOut (tools/decode/cli.ts), the batching line writer of `herald decode`: with `reuseBatch` (standard output),
 * a stream that writes each batch at once gets the same buffer again (no 64 KiB allocation per batch), and one that
 * queues its batches keeps what it was given intact until it writes it (the writer takes a new buffer instead of
 * overwriting a queued one); without it (in-process streams), a PassThrough's reader keeps every chunk intact.
 */
import t from 'tap';
import { PassThrough, Writable } from 'node:stream';
import { LineOut } from '../../../tools/decode/cli.ts';

/** Lines of about 1 KiB, enough for several 64 KiB batches; each line is unique so a lost or overwritten one shows. */
function lines(n: number): string[] {
  return Array.from({ length: n }, (_, i) => `{"line":${i},"pad":"${String(i).padStart(8, '0').repeat(120)}"}`);
}

t.test('reuseBatch: a stream that writes at once gets the batch buffer again, and every line intact', async (t) => {
  const chunks: Buffer[] = [];
  const backing = new Set<ArrayBufferLike>();
  const out = new Writable({
    write(chunk: Buffer, _enc, cb) {
      backing.add(chunk.buffer);
      chunks.push(Buffer.from(chunk)); // a copy: the writer may fill the buffer again once this returns
      cb();
    },
  });
  const w = new LineOut(out, true, true);
  const want = lines(300);
  for (const l of want) w.line(l, {});
  await w.drain();
  t.ok(chunks.length >= 4, `several batches written (${chunks.length})`);
  t.equal(backing.size, 1, 'one buffer for every batch');
  t.same(Buffer.concat(chunks).toString('utf8').split('\n').slice(0, -1), want, 'every line, in order');
});

t.test('reuseBatch: a stream that queues its batches keeps each one as it was given', async (t) => {
  const held: Buffer[] = [];
  const out = new Writable({
    highWaterMark: 1 << 20,
    write(chunk: Buffer, _enc, cb) {
      held.push(chunk); // no copy: it must not change after this
      setImmediate(cb);
    },
  });
  const w = new LineOut(out, true, true);
  const want = lines(300);
  for (const l of want) w.line(l, {});
  await w.drain();
  await new Promise<void>((resolve) => out.end(resolve));
  t.ok(held.length >= 4, `several batches written (${held.length})`);
  t.equal(new Set(held.map((c) => c.buffer)).size, held.length, 'a new buffer for each queued batch');
  t.same(Buffer.concat(held).toString('utf8').split('\n').slice(0, -1), want, 'every line, in order, none overwritten');
});

// Regression: a PassThrough completes each write at once (nothing queued) yet hands the very buffer to its reader, so
// a reused batch overwrote the lines the reader had kept (test/tools/decode/run.ts reads this way).
t.test('without reuseBatch, a PassThrough reader keeps every chunk intact', async (t) => {
  const out = new PassThrough();
  const held: Buffer[] = [];
  out.on('data', (c: Buffer) => held.push(c));
  const w = new LineOut(out, true);
  const want = lines(300);
  for (const l of want) w.line(l, {});
  await w.drain();
  t.ok(held.length >= 4, `several batches written (${held.length})`);
  t.same(Buffer.concat(held).toString('utf8').split('\n').slice(0, -1), want, 'every line, in order, none overwritten');
});
