/** `herald decode` in-process for tests: runDecode with captured output, every stdout line parsed as JSON. */
import { PassThrough } from 'node:stream';
import { runDecode } from '../../../tools/decode/cli.ts';

export type Line = Record<string, unknown>;

/**
 * Runs `herald decode argv` through runDecode. Every output line must be JSON (JSON.parse throws and fails the test
 * otherwise), except with --help, which prints text. `ms` is the wall time of the run.
 */
export async function runCli(argv: string[]): Promise<{ code: number; lines: Line[]; out: string; stderr: string; ms: number }> {
  const out = new PassThrough();
  const err = new PassThrough();
  const chunks: Buffer[] = [];
  const errChunks: Buffer[] = [];
  out.on('data', (c: Buffer) => chunks.push(c));
  err.on('data', (c: Buffer) => errChunks.push(c));
  const start = Date.now();
  const code = await runDecode(argv, out, err);
  const ms = Date.now() - start;
  const text = Buffer.concat(chunks).toString('utf8');
  const lines = argv.includes('--help') ? [] : text.split('\n').filter((l) => l.length > 0).map((l) => JSON.parse(l) as Line);
  return { code, lines, out: text, stderr: Buffer.concat(errChunks).toString('utf8'), ms };
}
