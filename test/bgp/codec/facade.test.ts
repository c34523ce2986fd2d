/**
 * bgp/codec/index.ts, the codec's own public entry: `bgp/index.ts` re-exports every name of it unchanged, and what it
 * loads stays the codec (constants, errors, wire reader/writer, codec modules): never the speaker, sessions, RIB, FSM
 * or BFD, which `herald decode` (tools/decode/) must not pay for at start-up.
 */
import t from 'tap';
import { readFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as bgp from '../../../bgp/index.ts';
import * as codec from '../../../bgp/codec/index.ts';

const BGP_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '../../../bgp');

t.test('bgp/index.ts re-exports every name of the codec façade, the same values', async (t) => {
  const names = Object.keys(codec);
  t.ok(names.length > 80, `the façade exports ${names.length} names`);
  for (const name of ['decodeMessageDetailed', 'decodePathAttributes', 'messageToJson', 'attributesToJson', 'formatAddress', 'BgpError', 'MessageType', 'build']) {
    t.ok(names.includes(name), `${name} is in the façade`);
  }
  const all = bgp as Record<string, unknown>;
  t.same(names.filter((n) => all[n] !== (codec as Record<string, unknown>)[n]), [], 'each name is the same binding in bgp/index.ts');
  t.notOk('Speaker' in codec || 'Session' in codec || 'BfdHandle' in codec, 'no speaker, session or BFD in the façade');
});

/** Relative static imports of a module (`from '...'`, `import '...'`), comments removed. */
function relativeImports(file: string): string[] {
  const code = readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  const out: string[] = [];
  for (const m of code.matchAll(/\b(?:from|import)\s*['"](\.[^'"]+)['"]/g)) out.push(resolve(dirname(file), m[1] as string));
  return out;
}

t.test('the codec façade loads only the codec, constants, errors and the wire reader/writer', async (t) => {
  const seen = new Set<string>();
  const todo = [resolve(BGP_DIR, 'codec/index.ts')];
  while (todo.length > 0) {
    const file = todo.pop() as string;
    if (seen.has(file)) continue;
    seen.add(file);
    todo.push(...relativeImports(file));
  }
  const loaded = [...seen].map((f) => relative(BGP_DIR, f)).sort();
  t.ok(loaded.includes('codec/update.ts') && loaded.includes('codec/attributes-json.ts'), `walked ${loaded.length} modules`);
  const allowed = (m: string): boolean => m.startsWith('codec/') || m === 'constants.ts' || m === 'errors.ts' || m === 'wire/reader.ts' || m === 'wire/writer.ts';
  t.same(loaded.filter((m) => !allowed(m)), [], 'nothing outside the codec is loaded');
});
