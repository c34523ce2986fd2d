/**
 * Where decoders put their output lines. The CLI prints each line as JSON; `--summary` counts instead; the benchmark
 * and tests collect them.
 */
import { BgpError } from './codec.ts';
import type { BgpMessage, PathAttribute } from './codec.ts';

/** Facts about a decoded line that the summary counts (the JSON line itself is not re-read). */
export interface LineStats {
  /** MRT record kind, "TYPE/SUBTYPE" (e.g. "BGP4MP/BGP4MP_MESSAGE_AS4"). */
  readonly mrt?: string;
  /** The decoded BGP message, when the line carries one. */
  readonly message?: BgpMessage;
  /** Path attribute lists that are not inside a message (MRT RIB entries), one list per entry. */
  readonly entries?: readonly (readonly PathAttribute[])[];
}

/**
 * An error line: `{ error, offset, code, subcode, ... }`. `code`/`subcode` are the BgpError's NOTIFICATION code and
 * subcode (RFC 4271 §4.5), or null when the problem is in the container (truncated MRT record, bad capture block).
 */
export interface ErrorLine {
  readonly error: string;
  readonly offset: number;
  readonly code: number | null;
  readonly subcode: number | null;
  readonly [key: string]: unknown;
}

export interface DecodeSink {
  /** A decoded message or record, as the JSON text of one line (one object, no newline). */
  line(json: string, stats: LineStats): void;
  /** A malformed message or record; decoding goes on with the next one. */
  error(line: ErrorLine): void;
  /** Something skipped on purpose (unknown MRT type, bytes before the first header in a mid-session capture). */
  note(line: Record<string, unknown>): void;
}

/** Builds an error line from anything a decoder threw; never includes a stack trace. */
export function errorLine(err: unknown, offset: number, extra?: Record<string, unknown>): ErrorLine {
  if (err instanceof BgpError) {
    return { error: err.message, offset, code: err.code, subcode: err.subcode, ...(err.data.length > 0 ? { data: err.data.toString('hex') } : {}), ...extra };
  }
  const message = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  return { error: message, offset, code: null, subcode: null, ...extra };
}

/** A sink that keeps everything in arrays, the lines parsed (tests, in-process use). */
export class CollectingSink implements DecodeSink {
  readonly lines: Record<string, unknown>[] = [];
  readonly stats: LineStats[] = [];
  readonly errors: ErrorLine[] = [];
  readonly notes: Record<string, unknown>[] = [];
  line(json: string, stats: LineStats): void {
    this.lines.push(JSON.parse(json) as Record<string, unknown>);
    this.stats.push(stats);
  }
  error(line: ErrorLine): void {
    this.errors.push(line);
  }
  note(line: Record<string, unknown>): void {
    this.notes.push(line);
  }
}
