/**
 * `npm run bench:decode`: `herald decode` against `bgpdump -m` on the RIPE RIS update dumps in
 * ../shared/data/bgp/mrt/bgpdump/test_data/ (updates.*.gz; updates.20160811.1600.gz is the 5-minute RIS dump of
 * issue 12; SHARED_DATA=DIR reads them from DIR/bgp/... instead).
 *
 * Whole processes first: `node bin/herald.js decode FILE` and `bgpdump -m FILE`, stdout to /dev/null, run in turn
 * (herald, bgpdump, herald, ...) after one warm-up each (which also fills Node's compile cache), ROUNDS counted runs.
 * Each run is timed: wall from here, user + system CPU from bash's `times` (the children's rusage, in ms), peak RSS
 * from /usr/bin/time (GNU time) when it is installed. The figures are min / median / max, and the ratio
 * herald/bgpdump is taken pair by pair (median of the pairs), so it holds when the machine's speed drifts.
 *
 * Then the same on longer dumps: COPIES copies of the 5-minute RIS dump back to back (default 2, 4 and 8: 10, 20 and 40
 * minutes of updates), written to a temporary folder and removed afterwards.
 *
 * Then an in-process breakdown of herald on the same files (best of ROUNDS, after a JIT warm-up): gunzip, MRT framing
 * + BGP decoding, and JSON.stringify of every line, each added in turn. Prints figures, asserts nothing; the figures
 * in docs/decode.md come from here.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { feedAll } from '../tools/decode/framing.ts';
import { MrtReader } from '../tools/decode/mrt.ts';
import type { DecodeSink, ErrorLine, LineStats } from '../tools/decode/sink.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const repo = fileURLToPath(new URL('..', import.meta.url));
/** The shared data: SHARED_DATA, else ../shared/data beside the repository (a worktree elsewhere sets SHARED_DATA). */
const dataDir = join(process.env.SHARED_DATA ?? join(repo, '../shared/data'), 'bgp/mrt/bgpdump/test_data');
const GNU_TIME = '/usr/bin/time';
/** The 5-minute RIS dump of issue 12. */
const RIS_DUMP = 'updates.20160811.1600.gz';
/** Copies of it in the longer dumps (`COPIES=2,4,8`; empty for none). */
const COPIES = (process.env.COPIES ?? '2,4,8').split(',').filter((c) => c.trim() !== '').map(Number);
if (COPIES.some((n) => !Number.isInteger(n) || n < 1 || n > 64)) {
  console.error(`bench:decode: COPIES=${process.env.COPIES}: give whole numbers of copies from 1 to 64, comma-separated (e.g. COPIES=2,4,8)`);
  process.exit(2);
}

/** One whole-process run: wall seconds, and (with GNU time) CPU seconds and peak RSS in MiB. */
interface Run {
  wall: number;
  cpu?: number;
  peakMiB?: number;
  status: number | null;
}

/** bash's `times` prints the user and system time of the shell's waited-for children with millisecond precision. */
const TIMES = /(\d+)m([\d.]+)s\s+(\d+)m([\d.]+)s\s*$/;

function runOnce(cmd: string, args: string[]): Run {
  const withTime = existsSync(GNU_TIME);
  const report = join(tmpdir(), `bench-decode-${process.pid}.time`);
  const argv = withTime ? ['-o', report, '-f', '%M', cmd, ...args] : [cmd, ...args];
  // CPU from bash's `times` (the kernel's rusage of the children, in ms), not from GNU time's %U %S (10 ms steps:
  // 5 % of a 0.2 s run). The children are GNU time (about 1 ms) and the command.
  const start = process.hrtime.bigint();
  const r = spawnSync('bash', ['-c', '"$@" > /dev/null; status=$?; times >&2; exit $status', 'bash', ...(withTime ? [GNU_TIME] : []), ...argv], { stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' });
  const wall = Number(process.hrtime.bigint() - start) / 1e9;
  const m = TIMES.exec(r.stderr.trim());
  const cpu = m ? 60 * Number(m[1]) + Number(m[2]) + 60 * Number(m[3]) + Number(m[4]) : undefined;
  if (!withTime) return { wall, ...(cpu !== undefined ? { cpu } : {}), status: r.status };
  // The last line holds the figure ("Command exited with non-zero status N" may come before it).
  const kib = Number(readFileSync(report, 'utf8').trim().split('\n').at(-1) ?? NaN);
  rmSync(report, { force: true });
  return { wall, ...(cpu !== undefined ? { cpu } : {}), peakMiB: kib / 1024, status: r.status };
}

function stats(xs: number[]): { min: number; median: number; max: number } {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  const median = s.length % 2 === 1 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
  return { min: s[0] as number, median, max: s[s.length - 1] as number };
}

function row(label: string, xs: number[], digits: number): string {
  if (xs.some((x) => !Number.isFinite(x))) return `${label.padEnd(30)} n/a`;
  const { min, median, max } = stats(xs);
  return `${label.padEnd(30)} ${min.toFixed(digits).padStart(9)} ${median.toFixed(digits).padStart(9)} ${max.toFixed(digits).padStart(9)}`;
}

/** Serialises every line like the CLI does, and counts. */
class StringifySink implements DecodeSink {
  lines = 0;
  chars = 0;
  line(json: string, _stats: LineStats): void {
    this.lines++;
    this.chars += json.length + 1;
  }
  error(line: ErrorLine): void {
    this.chars += JSON.stringify(line).length + 1;
  }
  note(line: Record<string, unknown>): void {
    this.chars += JSON.stringify(line).length + 1;
  }
}

/** A sink that drops everything (decoding without the JSON text). */
const dropSink: DecodeSink = { line: () => {}, error: () => {}, note: () => {} };

function bestMs(f: () => void): number {
  let best = Infinity;
  for (let i = 0; i < ROUNDS; i++) {
    const start = process.hrtime.bigint();
    f();
    best = Math.min(best, Number(process.hrtime.bigint() - start) / 1e6);
  }
  return best;
}

if (!existsSync(dataDir)) {
  console.log(`bench:decode: shared data not found at ${dataDir}; nothing to measure`);
  process.exit(0);
}
const bgpdump = spawnSync('bgpdump', ['-h'], { stdio: 'ignore' }).error ? undefined : 'bgpdump';
const files = readdirSync(dataDir).filter((f) => f.startsWith('updates.')).sort();
const herald = join(repo, 'bin/herald.js');

console.log(`herald decode vs bgpdump -m: whole processes, ${ROUNDS} runs each in turn after one warm-up, node ${process.version}`);
console.log(`(wall from the parent; CPU = user + system from bash's times; ${existsSync(GNU_TIME) ? 'peak RSS from /usr/bin/time' : 'no /usr/bin/time: no peak RSS'})`);
/** Times `herald decode FILE` and `bgpdump -m FILE` in turn and prints their figures under `label`. */
function compare(label: string, file: string): void {
  const h: Run[] = [];
  const b: Run[] = [];
  runOnce(process.execPath, [herald, 'decode', file]);
  if (bgpdump) runOnce(bgpdump, ['-m', file]);
  for (let i = 0; i < ROUNDS; i++) {
    h.push(runOnce(process.execPath, [herald, 'decode', file]));
    if (bgpdump) b.push(runOnce(bgpdump, ['-m', file]));
  }
  console.log(`\n${label}  (herald exit ${h[0]?.status}${bgpdump ? `, bgpdump exit ${b[0]?.status}` : ''})`);
  console.log(`${''.padEnd(30)} ${'min'.padStart(9)} ${'median'.padStart(9)} ${'max'.padStart(9)}`);
  console.log(row('herald decode wall s', h.map((r) => r.wall), 3));
  console.log(row('herald decode cpu s', h.map((r) => r.cpu ?? NaN), 3));
  console.log(row('herald decode peak RSS MiB', h.map((r) => r.peakMiB ?? NaN), 1));
  if (!bgpdump) {
    console.log('bgpdump not installed: no comparison');
    return;
  }
  console.log(row('bgpdump -m wall s', b.map((r) => r.wall), 3));
  console.log(row('bgpdump -m cpu s', b.map((r) => r.cpu ?? NaN), 3));
  console.log(row('bgpdump -m peak RSS MiB', b.map((r) => r.peakMiB ?? NaN), 1));
  console.log(row('ratio herald/bgpdump wall', h.map((r, i) => r.wall / (b[i] as Run).wall), 2));
  console.log(row('ratio herald/bgpdump cpu', h.map((r, i) => (r.cpu ?? NaN) / ((b[i] as Run).cpu ?? NaN)), 2));
}

for (const name of files) compare(name, join(dataDir, name));

// Longer dumps: N copies of the 5-minute RIS dump back to back (concatenated gzip members, which both tools read as
// one stream), where Node's start-up and V8's tier-up weigh less than on the one file (docs/decode.md "Performance").
if (files.includes(RIS_DUMP)) {
  const gz = readFileSync(join(dataDir, RIS_DUMP));
  const dir = mkdtempSync(join(tmpdir(), 'bench-decode-'));
  try {
    for (const n of COPIES) {
      const file = join(dir, `${n}x.${RIS_DUMP}`);
      writeFileSync(file, Buffer.concat(Array.from({ length: n }, () => gz)));
      compare(`${n} copies of ${RIS_DUMP} (${(n * gz.length / 1e6).toFixed(1)} MB)`, file);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

console.log(`\nin-process breakdown (herald, best of ${ROUNDS} after a warm-up; ms):`);
console.log(`${'file'.padEnd(36)} ${'records'.padStart(8)} ${'gunzip'.padStart(8)} ${'+decode'.padStart(8)} ${'+JSON'.padStart(8)} ${'records/s'.padStart(10)}`);
const first = files[0];
if (first) feedAll(gunzipSync(readFileSync(join(dataDir, first))), new MrtReader(new StringifySink())); // JIT warm-up
for (const name of files) {
  const raw = readFileSync(join(dataDir, name));
  let records = 0;
  const gunzip = bestMs(() => void gunzipSync(raw));
  const decode = bestMs(() => void feedAll(gunzipSync(raw), new MrtReader(dropSink)));
  const json = bestMs(() => {
    records = feedAll(gunzipSync(raw), new MrtReader(new StringifySink())).records;
  });
  console.log(
    `${name.padEnd(36)} ${String(records).padStart(8)} ${gunzip.toFixed(1).padStart(8)} ${decode.toFixed(1).padStart(8)} ${json.toFixed(1).padStart(8)} ${Math.round((records / json) * 1000).toString().padStart(10)}`,
  );
}
