/**
 * Decoding a large MRT dump on several threads for `herald decode`: the main thread reads, decompresses and frames
 * the records (MrtReader); each batch of whole records is decoded by the main thread's own MrtDecoder or by one of
 * the worker threads (mrt-worker.ts), whichever is free; the text of the batches is written in input order, so the
 * output is the same octets as decoding on one thread.
 *
 * Decoder state: an MrtDecoder remembers the latest PEER_INDEX_TABLE and the ADD-PATH families of each session's
 * OPEN. Those records (changesDecoderState) are decoded, in order, by the decoder their batch goes to, and replayed
 * silently by every other decoder before its next batch, so every decoder has the state a single one would have.
 *
 * Workers start only once the input has shown more than one chunk (a small dump is decoded on the main thread
 * alone, without the start-up cost of a worker, about 0.1 s of CPU), and until they are loaded the main thread
 * decodes everything. At most `maxQueued` batches wait to be written; the reader waits for that (`settle`).
 */
import { Worker } from 'node:worker_threads';
import { MrtDecoder, changesDecoderState } from './mrt.ts';
import type { MrtRecordTarget } from './mrt.ts';
import type { BatchReply, BatchRequest } from './mrt-worker.ts';
import { TextSink } from './sink.ts';
import type { DecodeSink, ErrorLine, LineStats } from './sink.ts';

/** Where the pool writes: text that is already whole lines, in order. */
export interface TextOut {
  /** Writes `text` (lines, each ending in "\n"), which holds `errors` error lines. */
  text(text: string | Uint8Array, errors: number): void;
}

export interface PoolOptions {
  /** Worker threads to start (0: decode on the main thread only). */
  readonly workers: number;
  /** Start the workers once this many octets have been framed. */
  readonly workersAfter: number;
  /** A batch is sent once it holds this many octets of records (and at the end of every chunk read). */
  readonly batchOctets: number;
  /** Batches each worker may have in hand; when all are busy the main thread decodes. */
  readonly perWorker: number;
  /** Batches decoded or in flight that wait to be written, at most, before `settle` waits. */
  readonly maxQueued: number;
}

/** A batch's place in the output: written once done, after every batch before it. */
interface Slot {
  done: boolean;
  text: string | Uint8Array;
  errors: number;
}

interface WorkerDecoder {
  readonly worker: Worker;
  ready: boolean;
  failed: boolean;
  /** Batches in hand, oldest first. */
  readonly inHand: Slot[];
  /** State records of batches decoded elsewhere since its last batch. */
  replay: Buffer[];
}

const EMPTY = new Uint8Array(0);

function count(counts: number[], i: number): void {
  counts[i] = (counts[i] ?? 0) + 1;
}

/** Joins buffers into one fresh Uint8Array (its own ArrayBuffer, so it can be transferred). */
function joined(parts: readonly Buffer[]): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/**
 * The MrtRecordTarget (and, for the reader's own error lines, the DecodeSink) of an MrtReader whose records are
 * decoded by a pool of decoders. Call `settle()` between chunks and `finish()` at the end; `close()` always.
 */
export class MrtDecoderPool implements MrtRecordTarget, DecodeSink {
  private readonly out: TextOut;
  private readonly options: PoolOptions;
  private readonly localSink = new TextSink();
  private readonly local = new MrtDecoder(this.localSink);
  private localReplay: Buffer[] = [];
  private readonly workers: WorkerDecoder[] = [];
  private readonly queue: Slot[] = [];
  private framed = 0;
  /** State records framed before the workers start: each worker replays them before its first batch. */
  private history: Buffer[] = [];
  private nextId = 0;
  private failure: Error | undefined;
  private wake: (() => void) | undefined;
  /** The batch being gathered: records `buf[start, end)` from stream offset `base`, its state records. */
  private batch: { buf: Buffer; start: number; end: number; base: number; state: Buffer[] } | undefined;
  /** Batches decoded by each decoder: [main thread, worker 1, ...] (for tests and the bench). */
  readonly decodedBy: number[];

  constructor(out: TextOut, options: PoolOptions) {
    this.out = out;
    this.options = options;
    this.decodedBy = new Array<number>(options.workers + 1).fill(0);
  }

  recordAt(buf: Buffer, start: number, end: number, offset: number): void {
    const b = this.batch;
    if (b && b.buf === buf && b.end === start) b.end = end;
    else {
      if (b) this.dispatch();
      this.batch = { buf, start, end, base: offset, state: [] };
    }
    // Copied: the view must not outlive this chunk (the other decoders get it with their next batch).
    if (changesDecoderState(buf, start, end)) this.batch?.state.push(Buffer.from(buf.subarray(start, end)));
    this.framed += end - start;
    const cur = this.batch as NonNullable<typeof this.batch>;
    if (cur.end - cur.start >= this.options.batchOctets) this.dispatch();
  }

  flush(): void {
    this.dispatch();
    if (this.workers.length === 0 && this.options.workers > 0 && this.framed >= this.options.workersAfter) this.startWorkers();
  }

  // The reader's own lines (framing errors): after the records before them.
  line(json: string, _stats: LineStats): void {
    this.dispatch();
    this.push({ done: true, text: json + '\n', errors: 0 });
  }
  error(line: ErrorLine): void {
    this.dispatch();
    this.push({ done: true, text: JSON.stringify(line) + '\n', errors: 1 });
  }
  note(line: Record<string, unknown>): void {
    this.dispatch();
    this.push({ done: true, text: JSON.stringify(line) + '\n', errors: 0 });
  }

  /** Resolves once at most `maxQueued` batches wait to be written; rejects if a worker failed. */
  async settle(): Promise<void> {
    while (!this.failure && this.queue.length > this.options.maxQueued) await new Promise<void>((resolve) => (this.wake = resolve));
    if (this.failure) throw this.failure;
  }

  /** Sends the last batch and resolves once everything is written; rejects if a worker failed. */
  async finish(): Promise<void> {
    this.dispatch();
    while (!this.failure && this.queue.length > 0) await new Promise<void>((resolve) => (this.wake = resolve));
    if (this.failure) throw this.failure;
  }

  /** Stops the workers (also after a failure or when the output went away). */
  close(): void {
    for (const w of this.workers) void w.worker.terminate();
  }

  private startWorkers(): void {
    for (let i = 0; i < this.options.workers; i++) {
      // A plain-JavaScript entry turns Node's compile cache on before the TypeScript module loads (as bin/herald.js
      // does for the CLI): the worker then starts without type-stripping its modules again.
      const entry = JSON.stringify(new URL('./mrt-worker.ts', import.meta.url).href);
      const worker = new Worker(`require('node:module').enableCompileCache?.(); import(${entry});`, { eval: true });
      const w: WorkerDecoder = { worker, ready: false, failed: false, inHand: [], replay: [...this.history] };
      worker.on('message', (m: BatchReply | 'ready') => {
        if (m === 'ready') {
          w.ready = true;
          return;
        }
        const slot = w.inHand.shift() as Slot;
        slot.done = true;
        slot.text = m.text;
        slot.errors = m.errors;
        this.write();
      });
      const fail = (e: unknown): void => {
        if (w.failed) return;
        w.failed = true;
        // Before it took a batch a worker is simply not used; after, its batches are lost: the run fails.
        if (w.inHand.length > 0 || w.ready) this.fail(new Error(`an MRT decoder thread failed: ${e instanceof Error ? e.message : String(e)}`));
      };
      worker.on('error', fail);
      worker.on('exit', (code) => fail(new Error(`exit code ${code}`)));
      this.workers.push(w);
    }
    this.history = [];
  }

  private fail(e: Error): void {
    this.failure ??= e;
    this.wake?.();
  }

  /** Sends the gathered batch to a free worker, or decodes it here. */
  private dispatch(): void {
    const b = this.batch;
    if (!b) return;
    this.batch = undefined;
    let target: WorkerDecoder | undefined;
    for (const w of this.workers) {
      if (w.ready && !w.failed && w.inHand.length < this.options.perWorker && (!target || w.inHand.length < target.inHand.length)) target = w;
    }
    const slot: Slot = { done: false, text: EMPTY, errors: 0 };
    if (target) {
      const req: BatchRequest = { id: this.nextId++, replay: joined(target.replay), records: new Uint8Array(b.buf.subarray(b.start, b.end)), base: b.base };
      target.replay = [];
      target.inHand.push(slot);
      target.worker.postMessage(req, [req.replay.buffer, req.records.buffer]);
      count(this.decodedBy, this.workers.indexOf(target) + 1);
    } else {
      for (const r of this.localReplay) this.local.replayAt(r, 0, r.length, 0);
      this.localReplay = [];
      for (let o = b.start; o < b.end; ) {
        const end = o + 12 + b.buf.readUInt32BE(o + 8);
        this.local.recordAt(b.buf, o, end, b.base + (o - b.start));
        o = end;
      }
      const { text, errors } = this.localSink.take();
      slot.done = true;
      slot.text = text;
      slot.errors = errors;
      count(this.decodedBy, 0);
    }
    if (b.state.length > 0) {
      if (this.workers.length === 0) this.history.push(...b.state);
      if (target) this.localReplay.push(...b.state);
      for (const w of this.workers) if (w !== target) w.replay.push(...b.state);
    }
    this.push(slot);
  }

  private push(slot: Slot): void {
    this.queue.push(slot);
    this.write();
  }

  /** Writes the done batches at the head of the queue. */
  private write(): void {
    while (this.queue.length > 0 && (this.queue[0] as Slot).done) {
      const slot = this.queue.shift() as Slot;
      if (slot.text.length > 0 || slot.errors > 0) this.out.text(slot.text, slot.errors);
    }
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }
}
