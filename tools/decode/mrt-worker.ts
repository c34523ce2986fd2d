/**
 * A worker thread of the MRT decoder pool (mrt-pool.ts): decodes batches of whole MRT records into the text that
 * `herald decode` prints for them, with its own MrtDecoder (so its own copy of the decoder state).
 *
 * In: {@link BatchRequest}. Out: `"ready"` once the decoder is loaded, then one {@link BatchReply} per request, in
 * order; the text is UTF-8 in a transferred buffer, so the main thread writes it without encoding or copying it.
 */
import { enableCompileCache } from 'node:module';
import { parentPort } from 'node:worker_threads';
import type { MrtDecoder as Decoder, forEachRecord as ForEachRecord } from './mrt.ts';
import type { TextSink as Sink } from './sink.ts';

/** One batch: `records` are whole records back to back from stream offset `base`; `replay` whole records too. */
export interface BatchRequest {
  readonly id: number;
  /** Records decoded elsewhere that change the decoder state (changesDecoderState): applied first, printing nothing. */
  readonly replay: Uint8Array<ArrayBuffer>;
  readonly records: Uint8Array<ArrayBuffer>;
  readonly base: number;
}

/** The lines of one batch as UTF-8 text (each ending in "\n"), and how many of them are error lines. */
export interface BatchReply {
  readonly id: number;
  readonly text: Uint8Array<ArrayBuffer>;
  readonly errors: number;
}

const port = parentPort;
if (port) {
  // Loaded after the compile cache is on, as the CLI loads its modules (src/cli/main.ts, tools/decode/cli.ts).
  enableCompileCache?.();
  const { MrtDecoder, forEachRecord } = (await import('./mrt.ts')) as { MrtDecoder: typeof Decoder; forEachRecord: typeof ForEachRecord };
  const { TextSink } = (await import('./sink.ts')) as { TextSink: typeof Sink };
  const sink = new TextSink();
  const decoder = new MrtDecoder(sink);
  const encoder = new TextEncoder();
  port.on('message', (req: BatchRequest) => {
    const replay = Buffer.from(req.replay.buffer, req.replay.byteOffset, req.replay.byteLength);
    forEachRecord(replay, (start, end) => decoder.replayAt(replay, start, end, 0));
    const records = Buffer.from(req.records.buffer, req.records.byteOffset, req.records.byteLength);
    forEachRecord(records, (start, end) => decoder.recordAt(records, start, end, req.base + start));
    const { text, errors } = sink.take();
    const bytes = encoder.encode(text);
    const reply: BatchReply = { id: req.id, text: bytes, errors };
    port.postMessage(reply, [bytes.buffer]);
  });
  port.postMessage('ready');
}
