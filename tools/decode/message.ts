/**
 * One BGP message through the codec for `herald decode`: decode (with the AS-width guess when the session's OPENs
 * are unknown), JSON form, and the RFC 7606 outcome (problems that do not reset a session but still mean the
 * message was malformed).
 */
import { JsonOut, decodeMessageDetailed, writeMessageJson } from './codec.ts';
import type { BgpMessage, CodecContext, UpdateDecodeResult } from './codec.ts';

/** A decoded message, its JSON text not written yet (writeOutputJson). */
export interface DecodedOutput {
  readonly msg: BgpMessage;
  /** Non-fatal RFC 7606 problems (empty when clean). */
  readonly problems: readonly string[];
  readonly treatAsWithdraw: boolean;
}

/** A decoded message ready for output, with its JSON text. */
export interface DecodedForOutput extends DecodedOutput {
  /** JSON text of the message (messageJsonText), plus `problems` and `treatAsWithdraw` when RFC 7606 repaired the UPDATE. */
  readonly text: string;
}

function problemCount(u: UpdateDecodeResult | undefined): number {
  return u ? u.problems.length : 0;
}

/**
 * Decodes one whole message (header included). An UPDATE is tried with each candidate context in turn (for sessions
 * whose OPENs are not all known: 2- vs 4-octet AS, ADD-PATH on or off); the first reading without RFC 7606 problems
 * wins, else the one with the fewest. Other messages use the first candidate. Throws BgpError (session-fatal
 * malformation) like the codec when every candidate throws (the first candidate's error).
 */
export function decodeOutput(bytes: Buffer, candidates: readonly CodecContext[]): DecodedOutput {
  let d: ReturnType<typeof decodeMessageDetailed> | undefined;
  const first = candidates[0] as CodecContext;
  if (candidates.length > 1 && bytes[18] === 2) {
    let firstError: unknown;
    for (let i = 0; i < candidates.length; i++) {
      try {
        const r = decodeMessageDetailed(bytes, candidates[i] as CodecContext);
        if (!d || problemCount(r.update) < problemCount(d.update)) d = r;
        if (problemCount(r.update) === 0) break;
      } catch (e) {
        if (i === 0) firstError = e;
      }
    }
    if (!d) throw firstError;
  } else d = decodeMessageDetailed(bytes, first);
  const u = d.update;
  return { msg: d.message, problems: u?.problems ?? [], treatAsWithdraw: u?.treatAsWithdraw ?? false };
}

/**
 * Writes the JSON text of a decoded message into `o`: the codec's JSON form (writeMessageJson), plus `problems` and
 * `treatAsWithdraw` as its last fields when RFC 7606 repaired the UPDATE.
 */
export function writeOutputJson(o: JsonOut, d: DecodedOutput): void {
  writeMessageJson(o, d.msg);
  if (d.problems.length === 0 && !d.treatAsWithdraw) return;
  o.pos--; // the closing brace of the message, written again after the two fields
  o.utf8(',"problems":' + JSON.stringify(d.problems) + ',"treatAsWithdraw":' + d.treatAsWithdraw + '}');
}

/** Scratch writer of decodeForOutput's text; single-threaded, reset on each use. */
const scratch = new JsonOut(1024);

/** decodeOutput, with the message's JSON text (writeOutputJson) as a string. Throws like decodeOutput. */
export function decodeForOutput(bytes: Buffer, candidates: readonly CodecContext[]): DecodedForOutput {
  const d = decodeOutput(bytes, candidates);
  scratch.reset();
  writeOutputJson(scratch, d);
  return { ...d, text: scratch.text() };
}

/**
 * The error line for a message that RFC 7606 repaired: code 3 (UPDATE Message Error); subcode null because the
 * repair is not a NOTIFICATION; `action` tells what a session would have done.
 */
export function problemError(d: DecodedOutput, offset: number, extra: Record<string, unknown>): { error: string; offset: number; code: number; subcode: null; action: string; [k: string]: unknown } {
  return { error: `RFC 7606: ${d.problems.join('; ')}`, offset, code: 3, subcode: null, action: d.treatAsWithdraw ? 'treat-as-withdraw' : 'attribute-discard', ...extra };
}
