/** What a codec call throws, in a form tests compare with t.same: a BgpError's code, subcode and data hex. */
import { BgpError } from '../../bgp/errors.ts';
import { toHex } from './hex.ts';

/** `{code, subcode, data}` of the BgpError `f` throws; the text of anything else it throws; 'no throw' otherwise. */
export function bgpErrorOf(f: () => unknown): { code: number; subcode: number; data: string } | string {
  try {
    f();
    return 'no throw';
  } catch (e) {
    return e instanceof BgpError ? { code: e.code, subcode: e.subcode, data: toHex(e.data) } : String(e);
  }
}
