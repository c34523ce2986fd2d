/**
 * Tiering of a `herald decode` process (tools/decode/jit.ts): which inputs count as short (Maglev only), and that
 * bin/herald.js, which applies it, prints exactly what runDecode prints in-process.
 */
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SHORT_INPUT, isShortInput } from '../../../tools/decode/jit.ts';
import { KEEPALIVE, bgp4mpMessage, mrtRecord, simpleUpdate } from './build.ts';
import { runCli } from './run.ts';

const repo = fileURLToPath(new URL('../../..', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'herald-jit-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

t.test('short inputs: --hex and regular files up to SHORT_INPUT octets', async (t) => {
  const small = join(dir, 'small.mrt');
  writeFileSync(small, Buffer.alloc(100));
  const big = join(dir, 'big.mrt');
  writeFileSync(big, Buffer.alloc(SHORT_INPUT + 1));
  const edge = join(dir, 'edge.mrt');
  writeFileSync(edge, Buffer.alloc(SHORT_INPUT));
  t.equal(isShortInput(['--hex', 'ffff']), true, '--hex');
  t.equal(isShortInput([small]), true, 'a 100-octet file');
  t.equal(isShortInput(['--summary', edge]), true, 'a file of exactly SHORT_INPUT octets');
  t.equal(isShortInput([big]), false, 'a file over SHORT_INPUT octets');
  t.equal(isShortInput(['-']), false, 'standard input: size unknown');
  t.equal(isShortInput([dir]), false, 'a directory (runDecode reports it)');
  t.equal(isShortInput([join(dir, 'missing')]), false, 'a missing file (runDecode reports it)');
  t.equal(isShortInput(['--help']), false, '--help');
  t.equal(isShortInput(['--as2', '--as4', small]), false, 'bad arguments (runDecode reports them)');
});

t.test('bin/herald.js decode prints what runDecode prints, with the same exit code', async (t) => {
  const file = join(dir, 'dump.mrt');
  writeFileSync(file, Buffer.concat([mrtRecord(16, 4, bgp4mpMessage(true, 65001, 65000, simpleUpdate([65001, 65002], '192.0.2.1', ['10.0.0.0/8']))), mrtRecord(16, 4, bgp4mpMessage(true, 65001, 65000, KEEPALIVE))]));
  const inProcess = await runCli([file]);
  t.equal(inProcess.lines.length, 2, 'two lines in-process');
  const child = spawnSync(process.execPath, [join(repo, 'bin/herald.js'), 'decode', file], { encoding: 'utf8', timeout: 60_000 });
  t.equal(child.status, inProcess.code, 'same exit code');
  t.equal(child.stdout, inProcess.out, 'byte-identical output');
  const bad = spawnSync(process.execPath, [join(repo, 'bin/herald.js'), 'decode', '--as2', '--as4', file], { encoding: 'utf8', timeout: 60_000 });
  t.equal(bad.status, 2, 'a usage error still exits 2');
  t.match(bad.stderr, /--as2 and --as4 exclude each other/);
});

t.test('bin/herald.js decode: the tiering flag is set after the modules are compiled, so no code cache is rejected', async (t) => {
  // V8 rejects a code cache made under other flags. Node's own modules carry one built into the binary: when
  // --no-turbofan was set before node:zlib and node:fs/promises were loaded, those were compiled from source on every
  // run (NODE_DEBUG_NATIVE=CODE_CACHE printed "Code cache of zlib (BufferNotOwned) is rejected").
  const file = join(dir, 'one.mrt');
  writeFileSync(file, mrtRecord(16, 4, bgp4mpMessage(true, 65001, 65000, simpleUpdate([65001], '192.0.2.1', ['10.0.0.0/8']))));
  t.equal(isShortInput([file]), true, 'a short input: the flag is set');
  const child = spawnSync(process.execPath, [join(repo, 'bin/herald.js'), 'decode', file], { encoding: 'utf8', timeout: 60_000, env: { ...process.env, NODE_DEBUG_NATIVE: 'CODE_CACHE' } });
  t.equal(child.status, 0);
  const accepted = child.stderr.split('\n').filter((l) => /^Code cache of \S+ .* is accepted/.test(l));
  t.ok(accepted.some((l) => l.startsWith('Code cache of zlib ')), 'Node reports its code cache checks (zlib among them)');
  t.same(child.stderr.split('\n').filter((l) => / is rejected/.test(l)), [], 'no code cache rejected');
});

t.test('bin/herald.js decode: short and long inputs share the compile cache (no entry rejected when they alternate)', async (t) => {
  // The flag used to be set before the decoder's modules were compiled: their code cache then depended on the input's
  // size, and each switch between a short and a long input rejected and rewrote about 30 entries.
  const record = mrtRecord(16, 4, bgp4mpMessage(true, 65001, 65000, simpleUpdate([65001], '192.0.2.1', ['10.0.0.0/8'])));
  const short = join(dir, 'short.mrt');
  writeFileSync(short, record);
  const long = join(dir, 'long.mrt');
  writeFileSync(long, Buffer.concat(Array.from({ length: Math.ceil((SHORT_INPUT + 1) / record.length) }, () => record)));
  t.same([isShortInput([short]), isShortInput([long])], [true, false]);
  const env = { ...process.env, NODE_COMPILE_CACHE: join(dir, 'compile-cache'), NODE_DEBUG_NATIVE: 'COMPILE_CACHE' };
  const run = (file: string) => spawnSync(process.execPath, [join(repo, 'bin/herald.js'), 'decode', '--summary', file], { encoding: 'utf8', timeout: 60_000, env });
  const first = run(short);
  t.equal(first.status, 0);
  t.match(first.stderr, /\[compile cache\] .*tools\/decode\/mrt\.ts/, 'Node reports its compile cache (filled by this first run)');
  for (const [what, file] of [['long', long], ['short', short], ['long', long]] as const) {
    const r = run(file);
    t.equal(r.status, 0, `${what} input decoded`);
    t.match(r.stderr, /code cache for ESM \S+tools\/decode\/mrt\.ts was accepted/, `${what} input: the decoder's code cache is used`);
    t.same(r.stderr.split('\n').filter((l) => /rejected/.test(l)), [], `${what} input: no compile cache entry rejected`);
  }
});
