/**
 * The fast path for a big static route list in the configuration file (issue 12: 100,000 routes).
 *
 * The `yaml` library spends ~30 µs and ~3 KiB of syntax tree per route entry; at 100,000 routes that is seconds of
 * CPU and hundreds of MiB. Route lists are homogeneous, one short mapping per route, so this module reads the
 * top-level `routes:` block line by line instead:
 *
 *     routes:
 *       - prefix: 192.0.2.1/32          # a comment
 *         nextHop: 198.51.100.1
 *         communities: [65000:1, no-export]
 *       - prefix: "192.0.2.2/32"
 *
 * An entry whose lines all have the simple shapes above — `key: scalar` or `key: [scalar, ...]` on one line, plain
 * scalars of letters, digits and `. / : _ -`, quoted strings without escapes — is read here; any other entry
 * (nested mappings, block lists, anchors, ...) is parsed by the library, in batches, so only a batch's syntax tree
 * is in memory at a time. The rest of the file is parsed by the library with `routes: []` in place of the block, and
 * the split is used only when that parse confirms that the block is the value of the root mapping's `routes` key.
 *
 * Scalars resolve as YAML 1.2's core schema does (the library's default): a plain scalar that the schema would read
 * as a number, boolean or null other than a short decimal integer sends its entry to the library. The result equals
 * the library's parse of the whole file (property-tested in test/src/config/routes-block.test.ts); a file this module
 * cannot split (no single column-0 `routes:` line, tabs, `%` directives) takes the library's path whole.
 */
import { isMap, isScalar, isSeq } from 'yaml';
import { isCanonicalIPv4Prefix } from '../../bgp/main-thread.ts';
import type { YamlProblem } from './yaml.ts';
import { documentData, LineIndex, parseSingleDocument } from './yaml.ts';
import type { Steps } from './slices.ts';

/** A JS value as the library's `toJS` gives it for the shapes read here. */
type Plain = string | number | (string | number)[];

/** Result of {@link parseWithRoutesBlock}: the file's data, YAML problems, or `undefined` (take the library's path). */
export type SplitParse = { ok: true; data: Record<string, unknown> } | { ok: false; problems: YamlProblem[] } | undefined;

/**
 * A text up to this size with a YAML error is parsed again whole by the caller, for the library's complete list of
 * errors; a bigger one reports the errors of the part that has them, worded and lined as the library does (inside
 * an entry the column may differ: its batch is parsed without the parents) — the whole parse would need ~100 bytes
 * of memory per byte of text.
 */
const WHOLE_ON_ERROR_MAX = 1024 * 1024;
/** Library batches of the entries not read here: at most this many characters of text per batch. */
const BATCH_CHARS = 256 * 1024;
/** Entries read between two pauses, and lines scanned (about a millisecond each on an idle core). */
const ENTRIES_PER_STEP = 250;
const LINES_PER_STEP = 1000;

const ROUTES_LINE = /^routes:( +#[^\n]*| *)\r?$/gm;
const KEY = /^[a-z][A-Za-z0-9]*$/;
const PLAIN = /^[A-Za-z0-9][A-Za-z0-9._/:-]*$/;
const DECIMAL = /^[0-9]{1,15}$/;
/** Plain scalars YAML 1.2's core schema reads as something other than a string (spec §10.3.2). */
const CORE_NOT_STRING = /^(?:null|Null|NULL|true|True|TRUE|false|False|FALSE|0o[0-7]+|0x[0-9a-fA-F]+|[0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?)$/;
const KEY_WORDS: ReadonlySet<string> = new Set(['null', 'true', 'false']);
const TRAILER = /^(?: +#.*)? *$/;

/** A plain scalar's value, or undefined when the library must read it. */
function plainValue(tok: string): string | number | undefined {
  if (!PLAIN.test(tok) || tok.endsWith(':')) return undefined;
  if (DECIMAL.test(tok)) return Number(tok);
  return CORE_NOT_STRING.test(tok) ? undefined : tok;
}

/** `"text"` or `'text'` without escapes: [value, rest of the line], or undefined. */
function quoted(s: string): [string, string] | undefined {
  const q = s[0];
  const end = s.indexOf(q as string, 1);
  if (end < 0) return undefined;
  const body = s.slice(1, end);
  if (!/^[\x20-\x7e]*$/.test(body) || (q === '"' && body.includes('\\')) || s[end + 1] === q) return undefined;
  return [body, s.slice(end + 1)];
}

/** The value of `key: VALUE` (everything after ": "), or undefined when the library must read it. */
function scalarOrList(s: string): Plain | undefined {
  let value: Plain;
  let rest: string;
  if (s.startsWith('"') || s.startsWith("'")) {
    const q = quoted(s);
    if (q === undefined) return undefined;
    [value, rest] = q;
  } else if (s.startsWith('[')) {
    const end = s.indexOf(']');
    if (end < 0) return undefined;
    const inner = s.slice(1, end).trim();
    const items: (string | number)[] = [];
    if (inner !== '') {
      for (const part of inner.split(',')) {
        const v = plainValue(part.trim());
        if (v === undefined) return undefined;
        items.push(v);
      }
    }
    value = items;
    rest = s.slice(end + 1);
  } else {
    const space = s.indexOf(' ');
    const tok = space < 0 ? s : s.slice(0, space);
    const v = plainValue(tok);
    if (v === undefined) return undefined;
    value = v;
    rest = space < 0 ? '' : s.slice(space);
  }
  return TRAILER.test(rest) ? value : undefined;
}

/** `key: value` at the start of `s` into `out`; false when the library must read it. */
function pair(s: string, out: Record<string, Plain>): boolean {
  const colon = s.indexOf(': ');
  if (colon < 0) return false;
  const key = s.slice(0, colon);
  if (!KEY.test(key) || KEY_WORDS.has(key) || Object.hasOwn(out, key)) return false;
  const v = scalarOrList(s.slice(colon + 2).replace(/^ +/, ''));
  if (v === undefined) return false;
  out[key] = v;
  return true;
}

/** The line of `text` at [start, end) without its newline and carriage return. */
function lineAt(text: string, start: number, end: number): string {
  return text.charCodeAt(end - 1) === 13 ? text.slice(start, end - 1) : text.slice(start, end);
}

function indentOf(line: string): number {
  let i = 0;
  while (line.charCodeAt(i) === 32) i++;
  return i;
}

/** One entry of the block, [start, end) in the file, with its value when read here. */
interface Entry {
  start: number;
  end: number;
  value: Record<string, Plain> | undefined;
}

const BARE = '- prefix: ';

/**
 * The entry `- prefix: P` alone on its line, P a canonical IPv4 prefix (the bulk of a big table): `{ prefix: P }`,
 * read without splitting the line (such a plain scalar is a string in the core schema: it has a `/`). Undefined
 * for anything else (more lines, a comment, another shape).
 */
function barePrefixEntry(text: string, start: number, end: number, indent: number): Record<string, Plain> | undefined {
  const from = start + indent + BARE.length;
  if (!text.startsWith(BARE, start + indent)) return undefined;
  let stop = end;
  if (text.charCodeAt(stop - 1) === 10) stop--;
  if (text.charCodeAt(stop - 1) === 13) stop--;
  const nl = text.indexOf('\n', from);
  if (nl >= 0 && nl < stop) return undefined;
  const prefix = text.slice(from, stop);
  return isCanonicalIPv4Prefix(prefix) ? { prefix } : undefined;
}

/** Reads the entry of lines [start, end) with the sequence indent `indent`; undefined when the library must. */
function fastEntry(text: string, start: number, end: number, indent: number): Record<string, Plain> | undefined {
  const bare = barePrefixEntry(text, start, end, indent);
  if (bare !== undefined) return bare;
  const out: Record<string, Plain> = {};
  let pos = start;
  let first = true;
  while (pos < end) {
    let nl = text.indexOf('\n', pos);
    if (nl < 0 || nl > end) nl = end;
    const line = lineAt(text, pos, nl);
    pos = nl + 1;
    const ind = indentOf(line);
    const content = line.slice(ind);
    if (first) {
      if (!content.startsWith('- ') || !pair(content.slice(2), out)) return undefined;
      first = false;
    } else if (content === '' || content.startsWith('#')) {
      continue;
    } else if (ind !== indent + 2 || !pair(content, out)) {
      return undefined;
    }
  }
  return out;
}

/** The block after `routes:`: its entries and where it ends, or undefined when the lines are not a plain block list. */
function* scanBlock(text: string, from: number): Steps<{ entries: Entry[]; end: number; indent: number } | undefined> {
  const entries: Entry[] = [];
  let indent = -1;
  let pos = from;
  let lines = 0;
  while (pos < text.length) {
    if (++lines % LINES_PER_STEP === 0) yield;
    let nl = text.indexOf('\n', pos);
    if (nl < 0) nl = text.length;
    const line = lineAt(text, pos, nl);
    if (line.includes('\t')) return undefined;
    const ind = indentOf(line);
    const content = line.slice(ind);
    const isEntry = content === '-' || content.startsWith('- ');
    if (content !== '' && !content.startsWith('#')) {
      if (ind === 0 && !(isEntry && indent <= 0)) break; // the next root key (or a document marker)
      if (indent < 0) {
        if (!isEntry) return undefined;
        indent = ind;
      }
      if (ind === indent && isEntry) {
        const last = entries[entries.length - 1];
        if (last) last.end = pos;
        entries.push({ start: pos, end: nl, value: undefined });
      } else if (ind <= indent) {
        return undefined;
      }
    }
    pos = nl + 1;
  }
  const end = Math.min(pos, text.length);
  const last = entries[entries.length - 1];
  if (last) last.end = end;
  return entries.length > 0 ? { entries, end, indent } : undefined;
}

/**
 * Parses a configuration text whose root mapping has a big `routes:` block, reading simple entries directly and the
 * rest with the library (see the module doc). Positions of problems are the file's.
 * @param opts.maxRestChars the longest rest of the file (without the block) to parse with the library; longer: undefined
 * @returns the data (what the library's `toJS` of the whole file gives), the YAML problems found (texts over 1 MiB),
 *   or `undefined` when the text cannot be split this way or has a YAML error (the caller parses it whole).
 */
export function* parseWithRoutesBlock(text: string, index: LineIndex, opts: { maxRestChars?: number } = {}): Steps<SplitParse> {
  if (/^%/m.test(text)) return undefined; // directives (%YAML 1.1, %TAG) change how scalars resolve
  const lines = [...text.matchAll(ROUTES_LINE)];
  const found = lines[0];
  if (lines.length !== 1 || found === undefined) return undefined;
  const keyOffset = found.index;
  const lineEnd = text.indexOf('\n', keyOffset);
  if (lineEnd < 0) return undefined;
  const block = yield* scanBlock(text, lineEnd + 1);
  if (block === undefined) return undefined;
  // the rest of the file goes to the library whole: a caller bounding its memory bounds that part's size
  if (opts.maxRestChars !== undefined && text.length - (block.end - lineEnd - 1) > opts.maxRestChars) return undefined;

  const routes: unknown[] = [];
  let batch: Entry[] = [];
  const flush = function* (): Steps<YamlProblem[] | 'whole' | undefined> {
    const first = batch[0];
    const last = batch[batch.length - 1];
    if (first === undefined || last === undefined) return undefined;
    const part = text.slice(first.start, last.end);
    if (/[&*]/.test(part)) return 'whole'; // anchors and aliases may reach across the split
    const r = yield* parseSingleDocument(part, index, first.start);
    if (!r.ok) return r.problems;
    const items: unknown = r.doc?.toJS();
    if (!Array.isArray(items) || items.length !== batch.length) return 'whole';
    for (const item of items) routes.push(item);
    batch = [];
    return undefined;
  };
  let chars = 0;
  let n = 0;
  for (const e of block.entries) {
    e.value = fastEntry(text, e.start, e.end, block.indent);
    if (e.value === undefined) {
      batch.push(e);
      chars += e.end - e.start;
      if (chars >= BATCH_CHARS) {
        const bad = yield* flush();
        if (bad === 'whole' || (bad && text.length <= WHOLE_ON_ERROR_MAX)) return undefined;
        if (bad) return { ok: false, problems: bad };
        chars = 0;
      }
    } else {
      if (batch.length > 0) {
        const bad = yield* flush();
        if (bad === 'whole' || (bad && text.length <= WHOLE_ON_ERROR_MAX)) return undefined;
        if (bad) return { ok: false, problems: bad };
        chars = 0;
      }
      routes.push(e.value);
    }
    if (++n % ENTRIES_PER_STEP === 0) yield;
  }
  const bad = yield* flush();
  if (bad === 'whole' || (bad && text.length <= WHOLE_ON_ERROR_MAX)) return undefined;
  if (bad) return { ok: false, problems: bad };

  // The rest of the file, `routes: []` in place of the block; lines after the block shift back by the lines cut.
  const rest = `${text.slice(0, keyOffset)}routes: []\n${text.slice(block.end)}`;
  const keyLine = index.position(keyOffset).line;
  const cut = index.position(block.end).line - (keyLine + 1);
  const r = yield* parseSingleDocument(rest, new LineIndex(rest), 0, (l) => (l > keyLine ? l + cut : l));
  if (!r.ok) return text.length <= WHOLE_ON_ERROR_MAX ? undefined : { ok: false, problems: r.problems };
  const root = r.doc?.contents;
  if (!isMap(root) || root.flow) return undefined;
  const routesPair = root.items.find((p) => isScalar(p.key) && p.key.value === 'routes');
  const key = routesPair?.key;
  const value = routesPair?.value;
  if (!isScalar(key) || key.range?.[0] !== keyOffset || !isSeq(value) || !value.flow || value.items.length !== 0) return undefined;
  const converted = documentData(r.doc);
  if (!converted.ok) return text.length <= WHOLE_ON_ERROR_MAX ? undefined : converted;
  const data = converted.data;
  if (data === null || typeof data !== 'object' || Array.isArray(data)) return undefined;
  (data as Record<string, unknown>)['routes'] = routes;
  return { ok: true, data: data as Record<string, unknown> };
}
