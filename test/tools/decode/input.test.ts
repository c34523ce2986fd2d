/**
 * `herald decode` tells the input format from the first octets and streams the rest: anything that is not a capture,
 * an MRT dump or hex text (/dev/zero, random octets, an empty file, a directory, a FIFO that never writes) gets one
 * clear error line at once, with bounded memory; compressed input is decompressed as it streams, and a cut or
 * corrupt layer is an error after what came before it; hex text files decode like --hex.
 */
import t from 'tap';
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, constants as fsConstants, mkdirSync, openSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { constants, gunzipSync, gzipSync } from 'node:zlib';
import { FIRST_OCTETS_TIMEOUT_MS } from '../../../tools/decode/input.ts';
import { KEEPALIVE, bgp4mpMessage, ethernet, ipv4Tcp, mrtRecord, pcapFile, simpleUpdate } from './build.ts';
import { runCli } from './run.ts';

const repo = fileURLToPath(new URL('../../../', import.meta.url));


const EXPECTED = /expected a pcap or pcapng capture, an MRT dump or BGP messages in hex \(plain, gzip or bzip2\)/;

/** A small MRT dump: `n` BGP4MP_MESSAGE_AS4 records, each an UPDATE for a different /24. */
function dump(n: number): Buffer {
  const records: Buffer[] = [];
  for (let i = 0; i < n; i++) records.push(mrtRecord(16, 4, bgp4mpMessage(true, 65001, 65000, simpleUpdate([65001], '192.0.2.1', [`10.${i >> 8}.${i & 255}`]))));
  return Buffer.concat(records);
}

t.test('herald decode /dev/zero: one error line, exit 1, within seconds and with bounded memory (issue: read 6.3 GB first)', async (t) => {
  const child = spawn(process.execPath, ['--import', join(repo, 'test/tools/decode/report-peak-rss.ts'), join(repo, 'bin/herald.js'), 'decode', '/dev/zero'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const start = Date.now();
  const killer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  clearTimeout(killer);
  const seconds = (Date.now() - start) / 1000;
  t.equal(code, 1, 'exit status 1');
  t.ok(seconds < 15, `ended after ${seconds.toFixed(2)} s (bound 15 s on this shared machine; it reads one chunk, not the device)`);
  const lines = stdout.split('\n').filter((l) => l.length > 0);
  t.equal(lines.length, 1, 'one line');
  t.match(JSON.parse(lines[0] ?? '{}'), { error: /^\/dev\/zero is not a known format: /, offset: 0, code: null, subcode: null });
  t.match(lines[0], EXPECTED);
  t.match(lines[0], /its first octets are 00 00 00 00/);
  const hwm = /VmHWM (\d+)/.exec(stderr);
  t.ok(hwm, 'the child reported its peak RSS');
  const mib = Number(hwm?.[1]) / 1024;
  t.ok(mib < 150, `peak RSS ${mib.toFixed(1)} MiB < 150 MiB`);
});

t.test('empty files, directories, random octets and text are refused at once with what was expected', async (t) => {
  const dir = t.testdir();
  const empty = join(dir, 'empty');
  writeFileSync(empty, '');
  const r = await runCli([empty]);
  t.equal(r.code, 1);
  t.same(r.lines.length, 1);
  t.match(r.lines[0], { error: new RegExp(`^${empty} is empty: `), offset: 0, code: null, subcode: null });
  t.match(r.lines[0]?.error, EXPECTED);

  const sub = join(dir, 'sub');
  mkdirSync(sub);
  const d = await runCli([sub]);
  t.equal(d.code, 2, 'a directory is a usage error');
  t.equal(d.lines.length, 0);
  t.match(d.stderr, /^herald decode: cannot read .*sub: is a directory \(expected a pcap/);
  t.equal(d.stderr.trim().split('\n').length, 1, 'one line');

  // Octets of a fixed pseudo-random sequence (no MRT type, no magic), and text that is not hex.
  const noise = Buffer.alloc(1 << 20);
  let x = 12345;
  for (let i = 0; i < noise.length; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    noise[i] = x >>> 24;
  }
  noise[0] = 0x77;
  noise[4] = 0x99;
  const random = join(dir, 'random.bin');
  writeFileSync(random, noise);
  const rr = await runCli([random]);
  t.equal(rr.code, 1);
  t.equal(rr.lines.length, 1);
  t.match(rr.lines[0], { error: /random\.bin is not a known format: .* its first octets are 77 /, offset: 0 });
  const gz = join(dir, 'random.gz');
  writeFileSync(gz, gzipSync(noise));
  const rg = await runCli([gz]);
  t.equal(rg.lines.length, 1);
  t.match(rg.lines[0], { error: /random\.gz \(after gzip\) is not a known format: / }, 'judged after decompression');
});

t.test('a FIFO that never writes: an error after the first-octets deadline, not a hang', { skip: spawnSync('mkfifo', ['--version']).error ? 'mkfifo not installed' : false }, async (t) => {
  const dir = t.testdir();
  const fifo = join(dir, 'fifo');
  t.equal(spawnSync('mkfifo', [fifo]).status, 0, 'mkfifo');
  // No writer at all.
  const r = await runCli([fifo]);
  t.equal(r.code, 1);
  t.equal(r.lines.length, 1);
  t.match(r.lines[0], { error: new RegExp(`^no data from ${fifo} within ${FIRST_OCTETS_TIMEOUT_MS / 1000} s: `), offset: 0 });
  t.match(r.lines[0]?.error, /give "-"/, 'names the way to wait for a slow writer');
  t.ok(r.ms < 10_000, `returned after ${r.ms} ms`);
  // A writer that holds the FIFO open and never writes (O_RDWR keeps both ends open on Linux).
  const holder = openSync(fifo, fsConstants.O_RDWR | fsConstants.O_NONBLOCK);
  try {
    const h = await runCli([fifo]);
    t.equal(h.code, 1);
    t.match(h.lines, [{ error: /^no data from .* within / }]);
  } finally {
    closeSync(holder);
  }
});

t.test('a FIFO that delivers a dump is decoded as it streams', { skip: spawnSync('mkfifo', ['--version']).error ? 'mkfifo not installed' : false }, async (t) => {
  const dir = t.testdir();
  const fifo = join(dir, 'fifo');
  t.equal(spawnSync('mkfifo', [fifo]).status, 0, 'mkfifo');
  const bytes = gzipSync(dump(300));
  // The writer opens the FIFO from this process once the decoder holds the read end (its open blocks until then),
  // so the first octets come at once even on a loaded machine.
  const decoding = runCli([fifo]);
  const writer = await open(fifo, 'w');
  await writer.write(bytes);
  await writer.close();
  const r = await decoding;
  t.equal(r.code, 0);
  t.equal(r.lines.length, 300);
  t.match(r.lines[299], { type: 'BGP4MP', message: { nlri: ['10.1.43.0/24'] } });
});

t.test('a truncated gzip: the records before the cut, then the gzip error', async (t) => {
  const dir = t.testdir();
  const whole = gzipSync(dump(3000), { level: 1 });
  const file = join(dir, 'cut.gz');
  const cut = whole.subarray(0, Math.floor(whole.length / 2));
  writeFileSync(file, cut);
  const r = await runCli([file]);
  t.equal(r.code, 1);
  const last = r.lines.at(-1);
  // The error names the file and the likely cause, at the offset where the decompressed input ends (trial
  // 2026-12-02: "gzip data is corrupt: unexpected end of file" at offset 0).
  const cutAt = gunzipSync(cut, { finishFlush: constants.Z_SYNC_FLUSH }).length;
  t.ok(cutAt > 0 && cutAt < dump(3000).length, `the cut file decompresses to ${cutAt} octets`);
  t.match(last, { error: `${file}: gzip stream ends early (unexpected end of file) after ${last?.offset} decompressed octets: the file is cut short (an interrupted download, or a dump still being written)`, code: null, subcode: null });
  t.ok(typeof last?.offset === 'number' && last.offset > 0 && last.offset <= cutAt, `offset ${last?.offset} is where the input ends (at most ${cutAt})`);
  const records = r.lines.filter((l) => 'message' in l);
  t.ok(records.length > 500 && records.length < 3000, `${records.length} records decoded before the cut`);
  t.equal(r.lines.length, records.length + 1, 'no other line: the record cut by the corruption is not reported on top');
  t.match(records.at(-1), { message: { type: 'UPDATE' } });
});

t.test('a truncated gzip inside another gzip: the same error at the same offset of the decoded input', async (t) => {
  const dir = t.testdir();
  const whole = gzipSync(dump(3000), { level: 1 });
  const cut = whole.subarray(0, Math.floor(whole.length / 2));
  writeFileSync(join(dir, 'cut.gz'), cut);
  writeFileSync(join(dir, 'cut.gz.gz'), gzipSync(cut));
  const one = (await runCli([join(dir, 'cut.gz')])).lines.at(-1);
  const two = (await runCli([join(dir, 'cut.gz.gz')])).lines.at(-1);
  t.match(two, { error: /cut\.gz\.gz: gzip stream ends early \(unexpected end of file\)/ });
  t.equal(two?.offset, one?.offset, `offset ${two?.offset}: octets of the decoded input, as with one layer`);
});

t.test('garbage after a valid pcap header: one framing error, reading stops', async (t) => {
  const dir = t.testdir();
  const header = pcapFile(1, []);
  t.equal(header.length, 24);
  const file = join(dir, 'garbage.pcap');
  writeFileSync(file, Buffer.concat([header, Buffer.alloc(4 << 20, 0xee)]));
  const r = await runCli([file]);
  t.equal(r.code, 1);
  t.equal(r.lines.length, 1);
  t.match(r.lines[0], { error: /^pcap: record 1 claims 4008636142 octets, more than 16777216/, offset: 24, code: null });
  // A valid frame first, then garbage: the frame's message is decoded, then the error.
  const good = pcapFile(1, [ethernet(ipv4Tcp({ seq: 1, syn: true, payload: KEEPALIVE }))]);
  const file2 = join(dir, 'frame-then-garbage.pcap');
  writeFileSync(file2, Buffer.concat([good, Buffer.alloc(1 << 20, 0xee)]));
  const r2 = await runCli([file2]);
  t.equal(r2.code, 1);
  t.match(r2.lines, [{ frame: 1, type: 'KEEPALIVE' }, { error: /^pcap: record 2 claims/, offset: good.length }]);
  t.equal(r2.lines.length, 2);
});

t.test('hex text files (plain or gzip) decode like --hex; other text is refused', async (t) => {
  const dir = t.testdir();
  const update = simpleUpdate([65001], '192.0.2.1', ['10.1.2'], false);
  const text = `0x${KEEPALIVE.toString('hex')}\n${update.toString('hex').replace(/(..)/g, '$1 ')}\n`;
  const file = join(dir, 'messages.txt');
  writeFileSync(file, text);
  const r = await runCli([file]);
  const hex = await runCli(['--hex', text]);
  t.equal(r.code, 0);
  t.same(r.lines, hex.lines, 'same lines as --hex');
  t.match(r.lines, [{ offset: 0, type: 'KEEPALIVE' }, { offset: 19, type: 'UPDATE', nlri: ['10.1.2.0/24'] }]);
  const gz = join(dir, 'messages.txt.gz');
  writeFileSync(gz, gzipSync(text));
  t.same((await runCli([gz])).lines, r.lines);
  const bad = join(dir, 'bad.txt');
  // A bad character past the first 512 (which must all be hex text to be taken as hex): the messages before it, then the error.
  writeFileSync(bad, `${KEEPALIVE.toString('hex')}\n`.repeat(20) + 'zz\n');
  const rb = await runCli([bad]);
  t.equal(rb.code, 1);
  t.equal(rb.lines.length, 21);
  t.match(rb.lines[19], { offset: 19 * 19, type: 'KEEPALIVE' });
  t.match(rb.lines[20], { error: 'hex text: not a hex digit: "z" at character 781', code: null });
  const words = join(dir, 'words.txt');
  writeFileSync(words, 'deadbeef is hex but no BGP marker\n');
  t.match((await runCli([words])).lines, [{ error: /words\.txt is not a known format/ }]);
});
