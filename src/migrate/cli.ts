/**
 * `herald migrate metallb FILE|-` (docs/cli.md, docs/metallb-migration.md): reads MetalLB's objects as
 * `kubectl get -o yaml` writes them (documents, or a List), writes Herald's objects on standard output as YAML
 * documents and the notes (src/migrate/metallb.ts) on standard error.
 *
 * Exit codes: 0 everything carried (notes may remain), 1 something not carried, 2 an unreadable
 * file or input that is not YAML.
 */
import { parseAllDocuments, stringify } from 'yaml';
import { readFailure, readTextFile } from '../files/read.ts';
import { formatNotes, inputObjects, migrateMetalLB } from './metallb.ts';

/** The most input read: a cluster's MetalLB objects are a few hundred KiB at most. */
const MAX_INPUT_BYTES = 16 * 1024 * 1024;

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of process.stdin) {
    const b = Buffer.isBuffer(c) ? c : Buffer.from(String(c));
    size += b.length;
    if (size > MAX_INPUT_BYTES) throw new Error(`standard input is larger than ${MAX_INPUT_BYTES} bytes`);
    chunks.push(b);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Where the command writes and reads (src/cli/main.ts's CliContext is one). */
export interface MigrateContext {
  readonly out: { write(s: string): unknown };
  readonly err: { write(s: string): unknown };
  /** Standard input, read whole (default the process's). */
  readonly stdin?: (() => Promise<string>) | undefined;
}

/** Run the command; see the module comment for the exit codes. */
export async function runMigrateMetalLB(file: string, namespace: string | undefined, ctx: MigrateContext): Promise<number> {
  let text: string;
  try {
    text = file === '-' ? await (ctx.stdin ?? readStdin)() : await readTextFile(file, { maxBytes: MAX_INPUT_BYTES, timeoutMs: 10_000 });
  } catch (err) {
    ctx.err.write(`herald migrate metallb: ${file === '-' ? 'standard input' : file}: ${readFailure(err)}\n`);
    return 2;
  }
  const docs = parseAllDocuments(text);
  const list = Array.isArray(docs) ? docs : [docs];
  const bad = list.flatMap((d) => d.errors.map((e) => e.message));
  if (bad.length > 0) {
    ctx.err.write(`herald migrate metallb: ${file === '-' ? 'standard input' : file} is not YAML: ${bad[0]}\n`);
    return 2;
  }
  const m = migrateMetalLB(inputObjects(list.map((d) => d.toJS() as unknown)), namespace !== undefined ? { namespace } : {});
  ctx.out.write(m.objects.map((o) => stringify(o)).join('---\n'));
  const lost = m.notes.filter((n) => n.level === 'refused').length;
  ctx.err.write(`herald migrate metallb: ${m.objects.length} Herald object(s) written; ${lost} thing(s) not carried, ${m.notes.length - lost} note(s)${m.notes.length > 0 ? ':' : ''}\n${formatNotes(m.notes)}`);
  return lost > 0 ? 1 : 0;
}
