/**
 * bench/speaker-thread.ts — what moving the Speaker to its own thread costs and buys (`npm run bench:speaker-thread`).
 * Not a test: prints figures, asserts nothing.
 *
 * 1. Route handoff: the main thread's cost of handing N routes to a worker thread, four ways, each timed on the
 *    sending thread (min and median of 5): a structured clone of the Route objects (postMessage of the array); the
 *    columnar RouteBatch of bgp/speaker-thread/route-batch.ts (flags and numbers in transferred typed arrays, texts
 *    and prefixes as two strings); routes grouped by attribute signature (each distinct attribute set once, one
 *    index per route in a transferred Uint32Array, the prefixes as one string); prefixes parsed into a packed,
 *    transferred ArrayBuffer (5 octets per IPv4 prefix) plus the same grouping. Also the receiving thread's decode
 *    time of a RouteBatch.
 *    Two route sets: "plain" (N /32, no attributes) and "services" (N /32, 1,000 community sets, fresh arrays).
 * 2. Main-loop block while a Speaker announces N routes to BIRD, in a child process per mode: "in-process" (the
 *    Speaker on the main thread, as before) and "thread" (SpeakerProxy, Speaker in a worker): the setRoutes() call,
 *    then the longest event-loop delay (perf_hooks monitorEventLoopDelay, 1 ms resolution) from the call until BIRD
 *    holds all N routes, and how long that took.
 * 3. Memory: RSS of each child before the speaker starts, once the session is Established with nothing sent, and
 *    after the N routes are out. The difference between the modes is the speaker thread's own cost (a V8 isolate).
 *
 * Environment: N (default 100000). Needs bird2 for parts 2 and 3.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { availableParallelism, loadavg } from 'node:os';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { Bird, bgpProtocol, birdAvailable, freePort, loopbackPair } from '../test/helpers/bird.ts';
import { Speaker } from '../bgp/speaker.ts';
import { SpeakerProxy } from '../bgp/speaker-thread/proxy.ts';
import { encodeRouteBatch } from '../bgp/speaker-thread/route-batch.ts';
import { attributeSignature } from '../bgp/rib/export.ts';
import type { Route } from '../bgp/rib/route.ts';

const N = Number(process.env.N ?? 100_000);
const MiB = 1024 * 1024;

function routeSet(kind: 'plain' | 'services', base = 0x0a000000, salt = 0): Route[] {
  const out: Route[] = new Array(N);
  for (let i = 0; i < N; i++) {
    const v = (base + i) >>> 0;
    const prefix = `${v >>> 24}.${(v >>> 16) & 255}.${(v >>> 8) & 255}.${v & 255}/32`;
    out[i] = kind === 'plain' ? { prefix, family: 'ipv4-unicast' } : { prefix, family: 'ipv4-unicast', communities: [65001 * 65536 + ((i + salt) % 1000)], med: 10 };
  }
  return out;
}

function stats(xs: number[]): string {
  const s = [...xs].sort((a, b) => a - b);
  return `min ${s[0]!.toFixed(1)} ms, median ${s[Math.floor(s.length / 2)]!.toFixed(1)} ms`;
}

/** The grouped alternative: each distinct attribute set once (by signature), one index per route, prefixes as one string. */
function grouped(routes: readonly Route[]): { attributes: Route[]; attributeOf: Uint32Array<ArrayBuffer>; prefixes: string } {
  const attributeOf = new Uint32Array(routes.length);
  const attributes: Route[] = [];
  const indexOf = new Map<string, number>();
  let prefixes = '';
  for (let i = 0; i < routes.length; i++) {
    const r = routes[i]!;
    const sig = attributeSignature(r);
    let index = indexOf.get(sig);
    if (index === undefined) indexOf.set(sig, (index = attributes.push({ ...r, prefix: '' }) - 1));
    attributeOf[i] = index;
    prefixes += r.prefix + '\n';
  }
  return { attributes, attributeOf, prefixes };
}

/** The packed alternative: IPv4 prefixes parsed on the sending thread into 5 octets each, grouped by signature. */
function packBinary(routes: readonly Route[]): { buf: ArrayBuffer; attributeOf: Uint32Array<ArrayBuffer>; attributes: number } {
  const buf = new ArrayBuffer(routes.length * 5);
  const view = new DataView(buf);
  const attributeOf = new Uint32Array(routes.length);
  const indexOf = new Map<string, number>();
  for (let i = 0; i < routes.length; i++) {
    const r = routes[i]!;
    const sig = attributeSignature(r);
    let index = indexOf.get(sig);
    if (index === undefined) indexOf.set(sig, (index = indexOf.size));
    attributeOf[i] = index;
    const slash = r.prefix.indexOf('/');
    let v = 0;
    let octet = 0;
    for (let c = 0; c < slash; c++) {
      const ch = r.prefix.charCodeAt(c);
      if (ch === 46) {
        v = v * 256 + octet;
        octet = 0;
      } else octet = octet * 10 + (ch - 48);
    }
    view.setUint32(i * 5, (v * 256 + octet) >>> 0);
    view.setUint8(i * 5 + 4, Number(r.prefix.slice(slash + 1)));
  }
  return { buf, attributeOf, attributes: indexOf.size };
}

async function handoff(): Promise<void> {
  const receiver = new Worker(
    `const { parentPort } = require('node:worker_threads');
     parentPort.on('message', async (m) => {
       let ms = 0;
       if (m.batch) {
         const { decodeRouteBatch } = await import(${JSON.stringify(new URL('../bgp/speaker-thread/route-batch.ts', import.meta.url).href)});
         const t0 = performance.now();
         decodeRouteBatch(m.batch);
         ms = performance.now() - t0;
       }
       parentPort.postMessage(ms);
     });`,
    { eval: true },
  );
  const roundTrip = (m: unknown, transfer: ArrayBuffer[] = []): { sendMs: number; answer: Promise<number> } => {
    const answer = new Promise<number>((resolve) => receiver.once('message', resolve));
    const t0 = performance.now();
    receiver.postMessage(m, transfer);
    return { sendMs: performance.now() - t0, answer };
  };
  console.log(`\n1. Route handoff of ${N} routes to a worker thread (sending thread's time)`);
  for (const kind of ['plain', 'services'] as const) {
    const clone: number[] = [];
    const columnar: number[] = [];
    const group: number[] = [];
    const binary: number[] = [];
    const decode: number[] = [];
    for (let run = 0; run < 5; run++) {
      const routes = routeSet(kind);
      const c = roundTrip({ routes });
      clone.push(c.sendMs);
      await c.answer;
      let t0 = performance.now();
      const { batch, transfer } = encodeRouteBatch(routes, routes.length);
      const encodeMs = performance.now() - t0;
      const b = roundTrip({ batch }, transfer);
      columnar.push(encodeMs + b.sendMs);
      decode.push(await b.answer);
      t0 = performance.now();
      const g = grouped(routes);
      const groupMs = performance.now() - t0;
      const gr = roundTrip({ g }, [g.attributeOf.buffer]);
      group.push(groupMs + gr.sendMs);
      await gr.answer;
      t0 = performance.now();
      const packed = packBinary(routes);
      const packMs = performance.now() - t0;
      const p = roundTrip({ packed }, [packed.buf, packed.attributeOf.buffer]);
      binary.push(packMs + p.sendMs);
      await p.answer;
    }
    console.log(`  ${kind}:`);
    console.log(`    structured clone of Route[]          ${stats(clone)}`);
    console.log(`    RouteBatch (columnar)                ${stats(columnar)}`);
    console.log(`    grouped by attribute signature       ${stats(group)}`);
    console.log(`    packed ArrayBuffer (parse on sender) ${stats(binary)}`);
    console.log(`    RouteBatch decode (receiving thread) ${stats(decode)}`);
  }
  await receiver.terminate();
}

/** Child: one speaker in `mode`, driven by the parent over stdin/stdout (JSON lines). */
async function child(mode: 'in-process' | 'thread', peer: { address: string; port: number; local: string }): Promise<void> {
  const say = (o: Record<string, unknown>): void => void process.stdout.write(JSON.stringify(o) + '\n');
  const rss = (): number => Math.round((process.memoryUsage().rss / MiB) * 10) / 10;
  const rss0 = rss();
  const options = { localAs: 65001, bgpIdentifier: '10.9.9.9' };
  const speaker = mode === 'thread' ? SpeakerProxy.start(options) : new Speaker(options);
  await speaker.ready();
  const established = new Promise<void>((resolve) => speaker.on('peerState', (e: { to: string }) => e.to === 'Established' && resolve()));
  speaker.markInitialSyncDone();
  speaker.addPeer({ name: 'bird', address: peer.address, port: peer.port, peerAs: 65000, localAddress: peer.local, connectRetryTimeSec: 1, holdTimeSec: 90 });
  await established;
  await new Promise((r) => setTimeout(r, 1000));
  say({ event: 'established', rss0, rssIdle: rss() });
  const sets = { first: routeSet('services'), same: [] as Route[], changed: routeSet('services', 0x0a000000, 1) };
  const lines = createInterface({ input: process.stdin });
  let histogram = monitorEventLoopDelay({ resolution: 1 });
  for await (const line of lines) {
    const cmd = JSON.parse(line) as { cmd: 'set' | 'done' | 'exit'; set?: keyof typeof sets };
    if (cmd.cmd === 'set') {
      const routes = cmd.set === 'same' ? sets.first : sets[cmd.set ?? 'first'];
      histogram = monitorEventLoopDelay({ resolution: 1 });
      histogram.enable();
      const t0 = performance.now();
      speaker.setRoutes(routes);
      say({ event: 'set', callMs: performance.now() - t0 });
    } else if (cmd.cmd === 'done') {
      histogram.disable();
      say({ event: 'done', maxDelayMs: histogram.max / 1e6, p99DelayMs: histogram.percentile(99) / 1e6, rss: rss() });
    } else {
      await speaker.stop({ mode: 'departure', waitTimeSec: 0 });
      process.exit(0);
    }
  }
}

async function blocking(): Promise<void> {
  if (!birdAvailable()) {
    console.log('\n2./3. skipped: bird2 is not installed');
    return;
  }
  console.log(`\n2./3. Main-loop block and RSS while announcing ${N} routes ("services" set) to BIRD`);
  for (const mode of ['in-process', 'thread'] as const) {
    const a = loopbackPair();
    const port = await freePort(a.bird);
    const bird = await Bird.start(bgpProtocol({ name: 'herald', local: a.bird, localPort: port, localAs: 65000, neighbor: a.ours, neighborPort: 179, neighborAs: 65001, passive: true, families: ['ipv4'] }));
    const proc = spawn(process.execPath, [import.meta.filename, 'child', mode, JSON.stringify({ address: a.bird, port, local: a.ours })], { stdio: ['pipe', 'pipe', 'inherit'] });
    const events: Record<string, unknown>[] = [];
    const waiters: (() => void)[] = [];
    createInterface({ input: proc.stdout }).on('line', (l) => {
      events.push(JSON.parse(l) as Record<string, unknown>);
      for (const w of waiters.splice(0)) w();
    });
    const next = async (event: string): Promise<Record<string, unknown>> => {
      for (;;) {
        const i = events.findIndex((e) => e.event === event);
        if (i >= 0) return events.splice(i, 1)[0]!;
        await new Promise<void>((r) => waiters.push(r));
      }
    };
    const send = (o: Record<string, unknown>): void => void proc.stdin.write(JSON.stringify(o) + '\n');
    try {
      const est = await next('established');
      console.log(`  ${mode}: RSS ${est.rss0} MiB before the speaker, ${est.rssIdle} MiB Established and idle`);
      for (const set of ['first', 'same', 'changed'] as const) {
        const t0 = performance.now();
        send({ cmd: 'set', set });
        const s = await next('set');
        await bird.waitFor(async () => {
          const out = await bird.birdc('show route count');
          const m = /(\d+) of \d+ routes/.exec(out);
          if (Number(m?.[1] ?? 0) !== N) return false;
          if (set !== 'changed') return true;
          const r = await bird.routes(`table master4 ${`10.0.0.0/32`}`);
          return r[0]?.communities.includes('65001:1') ?? false;
        }, `${N} routes in BIRD`, 180_000);
        const allMs = performance.now() - t0;
        send({ cmd: 'done' });
        const d = await next('done');
        const what = { first: 'new table', same: 'same Route objects again', changed: 'every route changed' }[set];
        console.log(`    setRoutes (${what}): call ${Number(s.callMs).toFixed(1)} ms, longest main-loop delay ${Number(d.maxDelayMs).toFixed(1)} ms (p99 ${Number(d.p99DelayMs).toFixed(1)} ms), in BIRD after ${(allMs / 1000).toFixed(2)} s, RSS ${d.rss} MiB`);
      }
      send({ cmd: 'exit' });
      await new Promise((r) => proc.once('exit', r));
    } finally {
      if (proc.exitCode === null) proc.kill('SIGKILL');
      await bird.stop();
    }
  }
}

if (process.argv[2] === 'child') {
  await child(process.argv[3] === 'thread' ? 'thread' : 'in-process', JSON.parse(process.argv[4] ?? '{}') as { address: string; port: number; local: string });
} else {
  console.log(`bench/speaker-thread.ts  N=${N}  cores=${availableParallelism()}  load=${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  await handoff();
  await blocking();
}
