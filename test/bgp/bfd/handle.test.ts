// BfdHandle: the engine in a worker thread keeps sessions Up while the main event loop is blocked; the same engine
// on the main thread (the control) does not. Also the typed channel: errors, status, restart after a worker crash.
import t from 'tap';
import { realClock } from '../../../bgp/clock.ts';
import { BfdHandle } from '../../../bgp/bfd/handle.ts';
import type { BfdChange, BfdPeerConfig, BfdSessionInfo } from '../../../bgp/bfd/engine.ts';

let counter = 0;
function addresses(): { a: string; b: string } {
  const n = (process.pid * 17 + 7 + counter++) % 60000;
  const p = `127.${100 + ((n >> 8) % 150)}.${n & 0xff}`;
  return { a: `${p}.1`, b: `${p}.2` };
}

const cfg = (remoteAddress: string, localAddress: string, ms = 100): BfdPeerConfig => ({
  remoteAddress,
  localAddress,
  multihop: false,
  transmitIntervalMs: ms,
  receiveIntervalMs: ms,
  detectMultiplier: 3,
  passive: false,
});

function record(h: BfdHandle): { to: string; diag: number }[] {
  const out: { to: string; diag: number }[] = [];
  h.on('update', (_id: string, c: BfdChange, _i: BfdSessionInfo) => {
    if (c.kind === 'state') out.push({ to: c.to, diag: c.diag });
  });
  return out;
}

async function waitFor(f: () => boolean, what: string, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!f()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Two handles (a: `first`, default a worker; b: a worker) closed at teardown, with fresh addresses. */
function handles(t: { teardown(fn: () => unknown): void }, first: BfdHandle = BfdHandle.start()) {
  const ip = addresses();
  const a = first;
  const b = BfdHandle.start();
  t.teardown(async () => {
    await a.close();
    await b.close();
  });
  return { ip, a, b };
}

function blockMainLoop(ms: number): void {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    /* busy: nothing else runs on this thread */
  }
}

t.test('worker thread: Up at 100 ms × 3 through 500 ms and 2 s main-loop blocks', async (t) => {
  const { ip, a, b } = handles(t);
  const changesA = record(a);
  const changesB = record(b);
  await a.add('b', cfg(ip.b, ip.a));
  await b.add('a', cfg(ip.a, ip.b));
  await waitFor(() => a.info('b')?.state === 'Up' && b.info('a')?.state === 'Up' && a.info('b')?.transmitIntervalMs === 100, 'both Up at 100 ms');
  const before = (await a.status()).sessions['b']?.packetsReceived ?? 0;
  blockMainLoop(500);
  await new Promise((r) => setTimeout(r, 50));
  blockMainLoop(2000);
  await new Promise((r) => setTimeout(r, 100)); // let queued notices arrive
  const after = (await a.status()).sessions['b'];
  t.equal(after?.state, 'Up', 'a stayed Up');
  t.equal((await b.status()).sessions['a']?.state, 'Up', 'b stayed Up');
  t.same(changesA.slice(-1), [{ to: 'Up', diag: 0 }], 'no state change of a since Up');
  t.same(changesB.slice(-1), [{ to: 'Up', diag: 0 }], 'nor of b');
  t.ok((after?.packetsReceived ?? 0) - before >= 20, `packets kept flowing while blocked (${(after?.packetsReceived ?? 0) - before} in ~2.6 s)`);
});

t.test('control: the same engine on the main thread loses its session during a 2 s block', async (t) => {
  const { ip, a, b } = handles(t, BfdHandle.start({ thread: 'main', clock: realClock }));
  const changesB = record(b);
  await a.add('b', cfg(ip.b, ip.a));
  await b.add('a', cfg(ip.a, ip.b));
  await waitFor(() => a.info('b')?.state === 'Up' && b.info('a')?.state === 'Up' && b.info('a')?.detectionTimeMs === 300, 'both Up');
  blockMainLoop(2000);
  await waitFor(() => changesB.some((c) => c.to === 'Down'), 'b saw the main-thread side go silent');
  t.same(changesB.find((c) => c.to === 'Down'), { to: 'Down', diag: 1 }, 'b: Control Detection Time Expired');
  await waitFor(() => a.info('b')?.state === 'Up' && b.info('a')?.state === 'Up', 'back Up afterwards');
});

t.test('the channel: rejected config, status, remove, adminDown across threads', async (t) => {
  const { ip, a, b } = handles(t);
  await t.rejects(a.add('x', { ...cfg(ip.b, ip.a), detectMultiplier: 0 }), /detectMultiplier must be 1\.\.255/);
  t.equal(a.info('x'), undefined);
  await a.add('b', cfg(ip.b, ip.a));
  await b.add('a', cfg(ip.a, ip.b));
  await waitFor(() => a.info('b')?.state === 'Up' && b.info('a')?.state === 'Up', 'both Up');
  const s = await a.status();
  t.same(Object.keys(s.sessions), ['b']);
  t.equal(s.sessions['b']?.ttlCheck, 'kernel');
  await a.adminDown();
  t.equal((await a.status()).sessions['b']?.state, 'AdminDown');
  await waitFor(() => b.info('a')?.state === 'Down', 'b Down');
  t.equal(b.info('a')?.remoteState, 'AdminDown');
  await a.adminUp();
  await waitFor(() => b.info('a')?.state === 'Up', 'b Up again');
  await a.remove('b');
  t.equal(a.info('b'), undefined);
  await a.close();
  await t.rejects(a.add('c', cfg(ip.b, ip.a)), /closed/);
});
