/**
 * `npm run bench:decode`: herald decode vs bgpdump on the RIPE RIS update dumps in
 * ../shared/data/bgp/mrt/bgpdump/test_data/ (updates.*.gz).
 *
 * Three measurements per file, in the same run, each the best of ROUNDS wall-clock runs:
 * - herald in-process: gunzip + MRT framing + BGP decoding + JSON.stringify of every output line (output discarded);
 * - herald CLI: a child `node` process running `herald decode FILE` (src/cli/main.ts) with stdout to /dev/null
 *   (includes Node start-up and the CLI dispatcher's own imports);
 * - decode entry: a child `node` process that imports tools/decode/cli.ts and calls runDecode (the same work without
 *   the dispatcher), to show where start-up time goes;
 * - bgpdump: `bgpdump -m FILE` (Debian's bgpdump) with stdout to /dev/null.
 * Prints MRT records (messages) per second and the ratios. Figures go to docs/decode.md.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, openSync, closeSync, readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { MrtReader } from '../tools/decode/mrt.ts';
import { feedAll } from '../tools/decode/framing.ts';
import type { DecodeSink, ErrorLine, LineStats } from '../tools/decode/sink.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const repo = fileURLToPath(new URL('..', import.meta.url));
const dataDir = join(repo, '../shared/data/bgp/mrt/bgpdump/test_data');

/** Serialises every line like the CLI does, and counts. */
class StringifySink implements DecodeSink {
  lines = 0;
  bytes = 0;
  line(line: Record<string, unknown>, _stats: LineStats): void {
    this.lines++;
    this.bytes += JSON.stringify(line).length + 1;
  }
  error(line: ErrorLine): void {
    this.bytes += JSON.stringify(line).length + 1;
  }
  note(line: Record<string, unknown>): void {
    this.bytes += JSON.stringify(line).length + 1;
  }
}

function inProcess(file: string): { records: number; ms: number } {
  const start = process.hrtime.bigint();
  const bytes = gunzipSync(readFileSync(file));
  const sink = new StringifySink();
  const reader = feedAll(bytes, new MrtReader(sink));
  return { records: reader.records, ms: Number(process.hrtime.bigint() - start) / 1e6 };
}

function timed(cmd: string, args: string[]): { ms: number; status: number | null } {
  const devnull = openSync('/dev/null', 'w');
  try {
    const start = process.hrtime.bigint();
    const r = spawnSync(cmd, args, { stdio: ['ignore', devnull, 'pipe'] });
    return { ms: Number(process.hrtime.bigint() - start) / 1e6, status: r.status };
  } finally {
    closeSync(devnull);
  }
}

function best<T extends { ms: number }>(f: () => T): T {
  let b: T | undefined;
  for (let i = 0; i < ROUNDS; i++) {
    const r = f();
    if (!b || r.ms < b.ms) b = r;
  }
  return b as T;
}

if (!existsSync(dataDir)) {
  console.log(`bench:decode: shared data not found at ${dataDir}; nothing to measure`);
  process.exit(0);
}
const bgpdump = spawnSync('bgpdump', ['-h'], { stdio: 'ignore' }).error ? undefined : 'bgpdump';
const files = readdirSync(dataDir).filter((f) => f.startsWith('updates.')).sort();
const cliMain = join(repo, 'src/cli/main.ts');
const entryArgs = (file: string): string[] => ['--input-type=module', '-e', `import { runDecode } from ${JSON.stringify(join(repo, 'tools/decode/cli.ts'))}; process.exitCode = await runDecode([${JSON.stringify(file)}], process.stdout, process.stderr);`];
const cliArgs = (file: string): string[] => (existsSync(cliMain) ? [cliMain, 'decode', file] : entryArgs(file));

inProcess(join(dataDir, files[0] as string)); // warm-up (JIT)
console.log(`herald decode vs bgpdump -m, best of ${ROUNDS} runs, node ${process.version}`);
console.log('file                               records  herald in-process     herald CLI            decode entry          bgpdump -m            speed vs bgpdump: in-process  CLI    entry');
let totRecords = 0;
let totIn = 0;
let totCli = 0;
let totDump = 0;
let totEntry = 0;
for (const name of files) {
  const file = join(dataDir, name);
  const ip = best(() => inProcess(file));
  const cli = best(() => timed(process.execPath, cliArgs(file)));
  const entry = best(() => timed(process.execPath, entryArgs(file)));
  const dump = bgpdump ? best(() => timed(bgpdump, ['-m', file])) : undefined;
  totRecords += ip.records;
  totIn += ip.ms;
  totCli += cli.ms;
  totEntry += entry.ms;
  totDump += dump?.ms ?? 0;
  const rate = (ms: number): string => `${Math.round((ip.records / ms) * 1000)
    .toString()
    .padStart(9)}/s ${ms.toFixed(1).padStart(7)}ms`;
  const ratio = (ms: number): string => (dump ? `${(dump.ms / ms).toFixed(2)}x` : 'n/a');
  console.log(
    `${name.padEnd(34)} ${String(ip.records).padStart(7)}  ${rate(ip.ms)}  ${rate(cli.ms)}  ${rate(entry.ms)}  ${dump ? rate(dump.ms) : 'n/a'.padStart(20)}  ${ratio(ip.ms).padStart(27)}  ${ratio(cli.ms).padStart(5)}  ${ratio(entry.ms).padStart(6)}`,
  );
}
const r = (ms: number): number => Math.round((totRecords / ms) * 1000);
console.log(`total ${totRecords} records: herald in-process ${r(totIn)}/s, herald CLI ${r(totCli)}/s, decode entry ${r(totEntry)}/s${bgpdump ? `, bgpdump ${r(totDump)}/s` : ' (bgpdump not installed)'}`);
if (bgpdump) console.log(`speed vs bgpdump (>1 = herald faster): in-process ${(totDump / totIn).toFixed(2)}x, CLI ${(totDump / totCli).toFixed(2)}x, decode entry ${(totDump / totEntry).toFixed(2)}x`);
