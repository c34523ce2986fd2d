/**
 * YAML parsing for Herald's inputs (the configuration file, manifest files) with the `yaml` library, in slices and
 * in linear time:
 * - {@link composeDocuments} drives the library's own stages (Lexer → Parser → Composer, its documented streaming
 *   API) and pauses every few hundred tokens (see slices.ts), handing each document over as soon as it is complete,
 *   so only one document's syntax tree is alive at a time;
 * - positions are turned into 1-based line and column through one {@link LineIndex} per text (binary search), never
 *   by counting from the start of the text for each document;
 * - an error is reported as the library words it, followed by ` at line L, column C` (the form of the library's
 *   `prettyErrors`, without the quoted source line: a line of the file may hold a secret).
 */
import { Composer, Lexer, Parser } from 'yaml';
import type { Document, DocumentOptions, ParseOptions, SchemaOptions, YAMLError } from 'yaml';
import type { Steps } from './slices.ts';

/** The options Herald parses every YAML input with: YAML 1.2 core schema, duplicate keys are errors. */
export const YAML_OPTIONS: ParseOptions & DocumentOptions & SchemaOptions = { uniqueKeys: true, prettyErrors: false };

/** Tokens between two pauses of {@link composeDocuments}. */
const TOKENS_PER_STEP = 512;

/** Line starts of a text: offset → 1-based line and column in O(log lines). */
export class LineIndex {
  readonly #starts: number[] = [0];

  constructor(text: string) {
    for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) this.#starts.push(i + 1);
  }

  /** Number of lines (a final line without a newline counts). */
  get lines(): number {
    return this.#starts.length;
  }

  /** Offset of the first character of 1-based `line`. */
  lineStart(line: number): number {
    return this.#starts[line - 1] ?? Infinity;
  }

  /** 1-based line and column of `offset`. */
  position(offset: number): { line: number; column: number } {
    const s = this.#starts;
    let lo = 0;
    let hi = s.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if ((s[mid] as number) <= offset) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo + 1, column: offset - (s[lo] as number) + 1 };
  }
}

/** A YAML syntax error, positioned (1-based) when the library gave an offset. */
export interface YamlProblem {
  message: string;
  line?: number;
  column?: number;
}

/**
 * A library error as a {@link YamlProblem}: its first line, positions from `index` shifted by `offset` (the place of
 * the parsed text inside the file) and `lineShift` lines (lines of the file left out of the parsed text before it).
 */
export function yamlProblem(e: YAMLError, index: LineIndex, offset = 0, lineShift: (line: number) => number = (l) => l): YamlProblem {
  const message = e.message.split('\n')[0] ?? e.message;
  if (e.pos[0] < 0) return { message };
  const p = index.position(offset + e.pos[0]);
  return { message, line: lineShift(p.line), column: p.column };
}

/** "message at line L, column C" (the library's prettyErrors wording), or the message alone without a position. */
export function problemText(p: YamlProblem): string {
  return p.line === undefined ? p.message : `${p.message} at line ${p.line}, column ${p.column ?? 1}`;
}

/**
 * Composes the YAML documents of `text` one at a time, pausing (`yield`) every few hundred tokens. `onDocument` gets
 * each document as soon as it is complete (errors in `doc.errors`, offsets relative to `text`); returning `false`
 * stops the parse. Same documents as the library's `parseAllDocuments(text, options)`.
 */
export function* composeDocuments(text: string, onDocument: (doc: Document.Parsed) => boolean | void, options = YAML_OPTIONS): Steps<void> {
  const parser = new Parser();
  const composer = new Composer(options);
  let tokens = 0;
  for (const lexeme of new Lexer().lex(text)) {
    for (const token of parser.next(lexeme)) {
      for (const doc of composer.next(token)) if (onDocument(doc) === false) return;
    }
    if (++tokens % TOKENS_PER_STEP === 0) yield;
  }
  for (const token of parser.end()) {
    for (const doc of composer.next(token)) if (onDocument(doc) === false) return;
  }
  for (const doc of composer.end()) if (onDocument(doc) === false) return;
}

/**
 * The data of a parsed document (the library's `toJS`), or the problem when the library refuses to convert it: an
 * alias without its anchor (`bgp: *x`), or more than 100 aliases (an alias bomb). Never throws (issue 35).
 */
export function documentData(doc: Document | undefined): { ok: true; data: unknown } | { ok: false; problems: YamlProblem[] } {
  try {
    return { ok: true, data: doc?.toJS() };
  } catch (e) {
    return { ok: false, problems: [{ message: `document not usable: ${e instanceof Error ? e.message : String(e)}` }] };
  }
}

/** Outcome of {@link parseSingleDocument}. */
export type SingleDocument = { ok: true; doc: Document.Parsed | undefined } | { ok: false; problems: YamlProblem[] };

/**
 * Parses `text` as one YAML document (a configuration file): every syntax error of it, or the document (undefined
 * for an empty text). A second document (after a `---` line) is an error. `offset`/`lineShift` place the
 * positions in the file when `text` is a part of it (see {@link yamlProblem}).
 */
export function* parseSingleDocument(text: string, index: LineIndex, offset = 0, lineShift?: (line: number) => number): Steps<SingleDocument> {
  let doc: Document.Parsed | undefined;
  let second: Document.Parsed | undefined;
  yield* composeDocuments(text, (d) => {
    if (doc === undefined) {
      doc = d;
      return true;
    }
    second = d;
    return false;
  });
  const problems = doc?.errors.map((e) => yamlProblem(e, index, offset, lineShift)) ?? [];
  if (second !== undefined) {
    const at = second.range[0];
    const p = index.position(offset + at);
    problems.push({ message: 'a second YAML document starts here (after "---"); a configuration file is one document', line: lineShift ? lineShift(p.line) : p.line, column: p.column });
  }
  return problems.length > 0 ? { ok: false, problems } : { ok: true, doc };
}

/**
 * A text that is one JSON object or array (`kubectl get -o json`, a generated configuration), parsed with JSON.parse:
 * JSON is YAML 1.2 and its core schema gives the same values, at a small part of the YAML library's memory and time
 * (the library needs about 100 bytes per byte and 4 µs per byte for flow collections; issue 35 N3: a 3 MB JSON-style
 * configuration ran `config check` out of memory). Duplicate keys are errors, as with {@link YAML_OPTIONS}.
 * @returns the value, the duplicate key's problem, or undefined when the text is not JSON (the YAML library then
 *   parses it, with its own messages)
 */
export function parseJsonText(text: string, index: LineIndex): { ok: true; value: unknown } | { ok: false; problems: YamlProblem[] } | undefined {
  const first = text.search(/\S/);
  if (first < 0 || (text[first] !== '{' && text[first] !== '[')) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  const at = duplicateKeyOffset(text);
  if (at !== undefined) return { ok: false, problems: [{ message: 'Map keys must be unique', ...index.position(at) }] };
  return { ok: true, value };
}

/** Offset of the first key repeated in its object, in a text JSON.parse took; undefined when there is none. */
function duplicateKeyOffset(text: string): number | undefined {
  const stack: (Set<string> | null)[] = []; // keys seen per open object; null for an array
  let expectKey = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      const start = i;
      for (i++; i < text.length; i++) {
        const d = text.charCodeAt(i);
        if (d === 0x5c /* \ */) i++;
        else if (d === 0x22) break;
      }
      const keys = stack[stack.length - 1];
      if (expectKey && keys) {
        const raw = text.slice(start, i + 1);
        const key = raw.includes('\\') ? (JSON.parse(raw) as string) : raw.slice(1, -1);
        if (keys.has(key)) return start;
        keys.add(key);
        expectKey = false;
      }
    } else if (c === 0x7b /* { */) {
      stack.push(new Set());
      expectKey = true;
    } else if (c === 0x5b /* [ */) {
      stack.push(null);
      expectKey = false;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      stack.pop();
      expectKey = false;
    } else if (c === 0x2c /* , */) {
      expectKey = (stack[stack.length - 1] ?? null) !== null;
    }
  }
  return undefined;
}

/**
 * Bytes of the largest YAML document of `text`: the longest stretch between document markers (a `---` or `...` line),
 * an upper bound of what the library composes at once (a marker inside a block scalar only splits a stretch).
 */
export function largestDocumentBytes(text: string): number {
  let largest = 0;
  let start = 0;
  const marker = /^(?:---|\.\.\.)(?:[ \t]|$)/gm;
  for (let m = marker.exec(text); m !== null; m = marker.exec(text)) {
    largest = Math.max(largest, m.index - start);
    start = m.index;
  }
  return Math.max(largest, text.length - start);
}
