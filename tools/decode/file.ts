/**
 * `herald decode <file>`: opens the input, decides its format from the first octets (input.ts) and streams it through
 * the reader of that format, waiting for the output to drain between chunks. Memory stays at about one chunk plus
 * the largest record, whatever the size of the input.
 */
import type { Writable } from 'node:stream';
import { captureReader } from './capture.ts';
import { pump } from './framing.ts';
import type { UnitParser } from './framing.ts';
import { HexReader } from './hex.ts';
import { InputError, OpenError, openInput, sniff } from './input.ts';
import type { OpenedInput } from './input.ts';
import { MrtReader } from './mrt.ts';
import type { DecodeSink } from './sink.ts';
import type { StreamOptions } from './stream.ts';

/** The output side the file decoder waits for. */
export interface Drainable {
  /** Flushes and resolves once the output can take more. */
  drain(): Promise<void>;
  /** True once the output is gone (e.g. EPIPE from `| head`): reading stops. */
  readonly closed: boolean;
}

/**
 * Decodes `file` ("-" = standard input) into `sink`. Problems with the content (unknown format, empty input,
 * corrupt compression) are error lines; a file that cannot be opened is written to `err` and resolves to exit code
 * 2. Resolves to undefined otherwise (the exit code then follows from the error lines).
 */
export async function decodeFile(file: string, sink: DecodeSink, out: Drainable, options: StreamOptions, err: Writable): Promise<number | undefined> {
  let input: OpenedInput;
  try {
    input = await openInput(file);
  } catch (e) {
    if (!(e instanceof OpenError)) throw e;
    err.write(`herald decode: ${e.message}\n`);
    return 2;
  }
  const name = file === '-' ? 'standard input' : file;
  let finish = (): void => {};
  try {
    const { format, chunks } = await sniff(input, name);
    let parser: UnitParser;
    if (format === 'empty') {
      // An empty dump (RIS writes empty update files in quiet periods) holds no records: not an error.
      sink.note({ note: 'input is empty', offset: 0 });
      return undefined;
    } else if (format === 'mrt') {
      parser = new MrtReader(sink);
    } else if (format === 'hex') {
      // TCP and BGP-stream decoding (stream.ts) is loaded only for the inputs that need it.
      const { BgpMessageStream } = await import('./stream.ts');
      const messages = new BgpMessageStream(sink, options);
      parser = new HexReader(messages, (error, offset) => sink.error({ error, offset, code: null, subcode: null }));
    } else {
      const { captureDecoder } = await import('./stream.ts');
      const decoder = captureDecoder(sink, options);
      parser = captureReader(format, (item) => decoder.item(item));
      finish = () => decoder.end();
    }
    await pump(chunks, parser, async () => {
      await out.drain();
      return !out.closed;
    });
    finish();
  } catch (e) {
    if (!(e instanceof InputError)) throw e;
    finish(); // what the capture's TCP streams still hold was read before the problem
    sink.error({ error: e.message, offset: e.offset, code: null, subcode: null });
  } finally {
    input.close();
  }
  return undefined;
}
