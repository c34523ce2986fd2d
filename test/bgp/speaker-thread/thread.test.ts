// A speaker thread spawned ahead of its options (bgp/speaker-thread/thread.ts): it serves the Speaker it is given
// later, serves only one, keeps no process alive until then, and a death before it serves is reported when it does.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { SpeakerProxy } from '../../../bgp/speaker-thread/proxy.ts';
import { SpeakerThread } from '../../../bgp/speaker-thread/thread.ts';
import { once } from '../session/raw-peer.ts';

const options = { localAs: 65001, bgpIdentifier: '10.0.0.1' };

t.test('a thread spawned ahead serves the Speaker it is given once its modules have loaded', async (t) => {
  const thread = SpeakerThread.spawn();
  t.equal(thread.serving, false);
  await sleep(500);
  const proxy = SpeakerProxy.start(options, thread);
  t.teardown(() => proxy.stop({ mode: 'departure', waitTimeSec: 0 }));
  t.equal(thread.serving, true);
  await proxy.ready();
  t.same(proxy.peers(), []);
  t.same(await proxy.routes(), [], 'a query is answered by the Speaker in that thread');
  t.throws(() => SpeakerProxy.start(options, thread), /serves a Speaker already/, 'one Speaker per thread');
});

t.test('a thread spawned ahead and never served keeps no process alive', async (t) => {
  // A script file, not `node -e`: a worker inherits the process's execArgv, and would run the -e code itself.
  const dir = mkdtempSync(join(tmpdir(), 'herald-thread-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const script = join(dir, 'spawn-only.mjs');
  const url = new URL('../../../bgp/speaker-thread/thread.ts', import.meta.url).href;
  writeFileSync(script, `const { SpeakerThread } = await import(${JSON.stringify(url)});\nSpeakerThread.spawn();\nsetTimeout(() => {}, 300);\n`);
  const r = spawnSync(process.execPath, [script], { encoding: 'utf8', timeout: 20_000 });
  t.equal(r.signal, null, 'not killed at the 20 s bound');
  t.equal(r.status, 0, r.stderr);
});

t.test('a thread that ended before it was served is reported as a speaker thread death', async (t) => {
  const thread = SpeakerThread.spawn();
  await thread.end();
  const proxy = SpeakerProxy.start(options, thread);
  const errors: NodeJS.ErrnoException[] = [];
  proxy.on('error', (e: NodeJS.ErrnoException) => errors.push(e));
  const exit = await once<{ message: string }>(proxy, 'threadExit', () => true, 10_000);
  t.match(exit.message, /exit code/);
  t.match(proxy.failure, /exit code/, 'the proxy records the failure');
  t.same(errors.map((e) => e.code), ['ERR_SPEAKER_THREAD_EXIT']);
  await t.rejects(proxy.ready(), 'calls are rejected');
});
