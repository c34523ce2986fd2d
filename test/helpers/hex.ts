/**
 * Annotated hex: the format of test vectors (test/fixtures/bgp/*.hex and inline strings). Everything after `#` on a
 * line is a comment; whitespace, `:` and `|` separators are ignored; what is left must be an even number of hex
 * digits. Directive comments `# key: value` (at the start of a line) are collected by `readHexFixture`.
 */
import { readFileSync } from 'node:fs';

/** Parses annotated hex into bytes. Throws Error on a non-hex character or an odd digit count. */
export function hex(text: string | TemplateStringsArray, ...values: unknown[]): Buffer {
  const s = typeof text === 'string' ? text : text.reduce((acc, part, i) => acc + part + (i < values.length ? String(values[i]) : ''), '');
  const digits = s
    .split('\n')
    .map((line) => line.replace(/#.*$/, ''))
    .join('')
    .replace(/[\s:|]/g, '');
  if (!/^[0-9a-fA-F]*$/.test(digits)) throw new Error(`annotated hex: bad character in ${JSON.stringify(digits.slice(0, 80))}`);
  if (digits.length % 2 !== 0) throw new Error(`annotated hex: odd number of digits (${digits.length})`);
  return Buffer.from(digits, 'hex');
}

/** A fixture: its bytes and `# key: value` directives (e.g. `error: 2/1 0004`, `source: ...`). */
export interface HexFixture {
  readonly name: string;
  readonly bytes: Buffer;
  readonly directives: Readonly<Record<string, string>>;
}

/** Reads an annotated hex fixture file. Throws on unreadable files or bad hex. */
export function readHexFixture(path: string): HexFixture {
  const text = readFileSync(path, 'utf8');
  const directives: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const m = /^#\s*([a-z][a-z-]*):\s*(.*?)\s*$/.exec(line);
    if (m && m[1] !== undefined && m[2] !== undefined) directives[m[1]] = m[2];
  }
  const name = path.replace(/^.*\//, '').replace(/\.hex$/, '');
  return { name, bytes: hex(text), directives };
}

/** Lowercase hex of bytes, for readable assertions. */
export function toHex(b: Uint8Array): string {
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');
}
