/**
 * One BGP message through the codec for `herald decode`: decode (with the AS-width guess when the session's OPENs
 * are unknown), JSON form, and the RFC 7606 outcome (problems that do not reset a session but still mean the
 * message was malformed).
 */
import { decodeMessageDetailed, messageJsonText } from './codec.ts';
import type { BgpMessage, CodecContext, UpdateDecodeResult } from './codec.ts';

/** A decoded message ready for output. */
export interface DecodedForOutput {
  readonly msg: BgpMessage;
  /** JSON text of the message (messageJsonText), plus `problems` and `treatAsWithdraw` when RFC 7606 repaired the UPDATE. */
  readonly text: string;
  /** Non-fatal RFC 7606 problems (empty when clean). */
  readonly problems: readonly string[];
  readonly treatAsWithdraw: boolean;
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
export function decodeForOutput(bytes: Buffer, candidates: readonly CodecContext[]): DecodedForOutput {
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
  let text = messageJsonText(d.message);
  const u = d.update;
  if (u && (u.problems.length > 0 || u.treatAsWithdraw)) {
    text = text.slice(0, -1) + ',"problems":' + JSON.stringify(u.problems) + ',"treatAsWithdraw":' + u.treatAsWithdraw + '}';
  }
  return { msg: d.message, text, problems: u?.problems ?? [], treatAsWithdraw: u?.treatAsWithdraw ?? false };
}

/**
 * The error line for a message that RFC 7606 repaired: code 3 (UPDATE Message Error); subcode null because the
 * repair is not a NOTIFICATION; `action` tells what a session would have done.
 */
export function problemError(d: DecodedForOutput, offset: number, extra: Record<string, unknown>): { error: string; offset: number; code: number; subcode: null; action: string; [k: string]: unknown } {
  return { error: `RFC 7606: ${d.problems.join('; ')}`, offset, code: 3, subcode: null, action: d.treatAsWithdraw ? 'treat-as-withdraw' : 'attribute-discard', ...extra };
}
