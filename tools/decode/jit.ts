/**
 * JIT tiering of a `herald decode` process. V8 compiles a hot function with Maglev, then again with TurboFan on
 * background threads; those threads' CPU counts in the process's CPU time. On a short input the TurboFan compiles
 * cost more than their faster code saves: on the 5-minute RIS dump of issue 12 (390 KB gzip, 17,406 records) the
 * first decode pass took about 300 ms of CPU with TurboFan and 220 ms with Maglev only, while a 12 MB dump takes 3.5 s
 * with TurboFan and 5.0 s without (docs/decode.md, "Performance"). So an input file of up to {@link SHORT_INPUT}
 * octets (and `--hex`) runs with Maglev only; standard input, FIFOs and larger files keep V8's default tiering.
 */
import { statSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';
import { parseDecodeArgs } from './cli.ts';

/** Largest input file (octets on disk, compressed or not) decoded with Maglev only. */
export const SHORT_INPUT = 1024 * 1024;

/**
 * Whether decoding `argv` (the arguments after "decode") is a short job: `--hex`, or a regular input file of up to
 * {@link SHORT_INPUT} octets. False for standard input, FIFOs, bigger files, `--help` and bad arguments (left for
 * runDecode to report). Never throws.
 */
export function isShortInput(argv: readonly string[]): boolean {
  try {
    const args = parseDecodeArgs(argv);
    if (args === 'help') return false;
    if (args.hex !== undefined) return true;
    if (args.file === undefined || args.file === '-') return false;
    const st = statSync(args.file, { throwIfNoEntry: false });
    return st !== undefined && st.isFile() && st.size <= SHORT_INPUT;
  } catch {
    return false;
  }
}

/**
 * Sets V8's tiering for decoding `argv`: Maglev only when {@link isShortInput}. Call once, in the process that runs
 * `herald decode` (bin/herald.js), after the decoder's modules are loaded and before it decodes (runDecode's
 * `beforeDecoding`): it changes V8 flags for the whole process, and V8 rejects a code cache made under other flags,
 * so the modules (Node's own, whose code cache is built into the binary, and the decoder's, from the compile cache)
 * must be compiled before the change. Returns whether TurboFan was turned off. Never throws.
 */
export function tierForInput(argv: readonly string[]): boolean {
  const short = isShortInput(argv);
  if (short) setFlagsFromString('--no-turbofan');
  return short;
}
