/**
 * bench/peers.ts — how fast BIRD 2 learns N IPv4 /32 routes from Herald, GoBGP and ExaBGP (`npm run bench:peers`).
 *
 * For each sender, on loopback, with BIRD as the receiver:
 * - connect:  the sender holds N routes before the session exists; seconds from BIRD's "BGP session established"
 *             log line until `birdc show route count` reports N;
 * - withdraw: seconds from the sender's withdraw-all command until BIRD reports 0 routes;
 * - announce: seconds from the sender's announce-all command until BIRD reports N;
 * - peak RSS of the sender process (Herald: getrusage maxRSS of the child speaker; others: VmHWM).
 * BIRD is polled with back-to-back `birdc show route count` calls (a few ms each), so small figures carry a few ms
 * of polling error. Targets for Herald: connect ≤ 0.05 s, bursts ≤ 0.1 s, peak RSS ≤ 100 MiB.
 *
 * Two more rows separate what Herald controls from what BIRD does:
 * - sink: Herald (same child speaker) sending to a trivial receiver in this process that only frames messages and
 *         counts NLRI — Herald's own time to build and hand over all UPDATE bytes, no BIRD involved;
 * - raw:  a trivial sender replaying Herald's UPDATE bytes (packed beforehand) to BIRD in single writes — BIRD's own
 *         ingest time on this machine, the floor any sender can reach.
 * Environment: N (default 100000), SENDERS (default "herald,sink,raw,gobgp,exabgp"), RUNS (default 1; the median is
 * printed).
 * Not a test: prints a table, asserts nothing. Needs bird2, gobgpd and exabgp installed (missing ones are skipped).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { spawnSync } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { Bird, bgpProtocol, birdAvailable, freePort } from '../test/helpers/bird.ts';
import { Gobgp, gobgpAvailable } from '../test/helpers/gobgp.ts';
import { Exabgp, exabgpAvailable } from '../test/helpers/exabgp.ts';
import { generateRoutes, SpeakerChild } from '../test/helpers/speaker-child.ts';
import { capability, keepalive, open, param } from '../test/helpers/wire.ts';
import { createServer, connect } from 'node:net';
import type { Socket } from 'node:net';
import { AdjRibOut } from '../bgp/rib/adj-rib-out.ts';
import { RouteTable } from '../bgp/rib/route-table.ts';
import { sleep } from '../test/helpers/daemon-process.ts';

const N = Number(process.env.N ?? 100_000);
const RUNS = Number(process.env.RUNS ?? 1);
const SENDERS = (process.env.SENDERS ?? 'herald,sink,raw,gobgp,exabgp').split(',').map((s) => s.trim());
const BASE = 0x0a000000; // 10.0.0.0

const wall = (): number => performance.timeOrigin + performance.now();

/** One sender's figures (seconds; MiB). */
export interface Result {
  connectSec: number;
  withdrawSec: number;
  announceSec: number;
  peakRssMiB: number;
  /** Herald only: CPU seconds the speaker process spent in each phase (load-independent). */
  cpu?: { connect: number; withdraw: number; announce: number };
}

function prefixOf(i: number): string {
  const v = (BASE + i) >>> 0;
  return `${v >>> 24}.${(v >>> 16) & 255}.${(v >>> 8) & 255}.${v & 255}`;
}

/** BIRD route count of master4 (from `show route count`). */
async function birdCount(bird: Bird): Promise<number> {
  const out = await bird.birdc('show route count');
  const m = /(\d+) of \d+ routes for \d+ networks in table master4/.exec(out);
  return m ? Number(m[1]) : 0;
}

/** Polls BIRD back to back until `pred(count)`; returns the wall time (ms) of the poll that saw it. */
export async function pollUntil(bird: Bird, pred: (n: number) => boolean, timeoutMs: number): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  let last = -1;
  while (Date.now() < deadline) {
    last = await birdCount(bird);
    if (pred(last)) return wall();
  }
  throw new Error(`BIRD did not reach the expected count (last ${last}) within ${timeoutMs} ms`);
}

/** Wall time (ms) of BIRD's "BGP session established" log line for protocol `name` (timeformat with µs). */
export function establishedAt(bird: Bird, name: string): number | undefined {
  return establishedTimes(bird, name)[0];
}

/** Every "BGP session established" line of BIRD's protocol `name`, in log order, as epoch ms. */
export function establishedTimes(bird: Bird, name: string): number[] {
  const out: number[] = [];
  for (const l of readFileSync(bird.logPath, 'utf8').split('\n')) {
    if (!l.includes(`${name}: BGP session established`)) continue;
    const m = /^(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d)\.(\d+)/.exec(l);
    // BIRD logs local time, as Date.parse reads a timestamp without a zone
    if (m) out.push(Date.parse(`${m[1]}T${m[2]}`) + Number(`0.${m[3]}`) * 1000);
  }
  return out;
}

/** Peak RSS (VmHWM) of process `pid`, MiB; NaN when it cannot be read. */
export function vmHwmMiB(pid: number | undefined): number {
  if (pid === undefined) return NaN;
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

/** BIRD log timestamps with µs, for `establishedAt`. */
export const TIMEFORMAT = 'timeformat log "%F %T.%6f";\n';
let pairN = 0;
/** A fresh pair of loopback addresses: the receiving BIRD's (`.2`) and the sender's (`.1`). */
export function pair(): { bird: string; sender: string } {
  pairN++;
  const b = 200 + (process.pid % 50);
  return { bird: `127.${b}.${pairN}.2`, sender: `127.${b}.${pairN}.1` };
}

async function benchHerald(): Promise<Result> {
  const a = pair();
  const birdPort = await freePort(a.bird);
  const bird = await Bird.start(
    TIMEFORMAT +
      bgpProtocol({ name: 'sender', local: a.bird, localPort: birdPort, localAs: 65000, neighbor: a.sender, neighborPort: 179, neighborAs: 65001, passive: true, families: ['ipv4'], extra: '  debug { states, events };' }),
  );
  let child: SpeakerChild | undefined;
  try {
    child = await SpeakerChild.start({
      speaker: { localAs: 65001, bgpIdentifier: '10.254.1.1' },
      peers: [{ name: 'bird', address: a.bird, port: birdPort, peerAs: 65000, localAddress: a.sender, families: ['ipv4-unicast'], connectRetryTimeSec: 1 }],
      generate: { count: N, base: '10.0.0.0' },
      markInitialSyncDone: true,
    });
    const cpu = async (): Promise<number> => ((await child!.command({ cmd: 'cpu' })) as number) / 1000;
    const est0 = await child.waitEvent((e) => e.event === 'peerState' && e.to === 'Established', 'Established', 60_000);
    const cpu0 = (est0.cpuMs as number) / 1000;
    const full = await pollUntil(bird, (n) => n === N, 120_000);
    const cpu1 = await cpu();
    const est = establishedAt(bird, 'sender');
    if (est === undefined) throw new Error('no established line in the BIRD log');
    const connectSec = (full - est) / 1000;
    await sleep(500);
    let t0 = wall();
    void child.command({ cmd: 'setRoutes', routes: [] });
    const empty = await pollUntil(bird, (n) => n === 0, 120_000);
    const withdrawSec = (empty - t0) / 1000;
    const cpu2 = await cpu();
    await sleep(500);
    const cpu3 = await cpu();
    t0 = wall();
    void child.command({ cmd: 'generate', count: N, base: '10.0.0.0' });
    const again = await pollUntil(bird, (n) => n === N, 120_000);
    const announceSec = (again - t0) / 1000;
    const cpu4 = await cpu();
    const rss = (await child.command({ cmd: 'rss' })) as { maxRssBytes: number };
    return {
      connectSec,
      withdrawSec,
      announceSec,
      peakRssMiB: rss.maxRssBytes / 1048576,
      cpu: { connect: cpu1 - cpu0, withdraw: cpu2 - cpu1, announce: cpu4 - cpu3 },
    };
  } finally {
    await child?.stop();
    await bird.stop();
  }
}

/** OPEN of a trivial peer: AS `as` (2-octet), hold time 240 s, Multiprotocol IPv4 unicast and 4-octet AS (RFC 5492). */
export function trivialOpen(as: number, id: string): Buffer {
  const asBytes = Buffer.alloc(4);
  asBytes.writeUInt32BE(as);
  return open({ as, holdTime: 240, id, params: [param(2, capability(1, [0, 1, 0, 1])), param(2, capability(65, asBytes))] });
}

/** Counts the IPv4 NLRI of a stream of BGP messages (RFC 4271 §4.3): announced and withdrawn prefixes. */
export class NlriCounter {
  announced = 0;
  withdrawn = 0;
  bytes = 0;
  private pending = Buffer.alloc(0);
  /** Feeds bytes; returns the whole messages' types seen (for OPEN / KEEPALIVE handling). */
  push(chunk: Buffer): number[] {
    this.bytes += chunk.length;
    const buf = this.pending.length > 0 ? Buffer.concat([this.pending, chunk]) : chunk;
    const types: number[] = [];
    let off = 0;
    while (buf.length - off >= 19) {
      const len = buf.readUInt16BE(off + 16);
      if (buf.length - off < len) break;
      const type = buf[off + 18]!;
      types.push(type);
      if (type === 2) {
        const wl = buf.readUInt16BE(off + 19);
        this.withdrawn += countPrefixes(buf, off + 21, off + 21 + wl);
        const al = buf.readUInt16BE(off + 21 + wl);
        this.announced += countPrefixes(buf, off + 23 + wl + al, off + len);
      }
      off += len;
    }
    this.pending = Buffer.from(buf.subarray(off));
    return types;
  }
}

function countPrefixes(buf: Buffer, start: number, end: number): number {
  let n = 0;
  for (let i = start; i < end; i += 1 + ((buf[i]! + 7) >> 3)) n++;
  return n;
}

/**
 * Herald's own send time, without BIRD: the Speaker (child process) sends to a trivial receiver in this process that
 * only frames messages and counts NLRI. connect = from the receiver's KEEPALIVE (which makes Herald Established) until
 * it has counted N announced prefixes; bursts = from the command until N withdrawn / N announced are counted.
 */
async function benchSink(): Promise<Result> {
  const a = pair();
  const counter = new NlriCounter();
  let sock: Socket | undefined;
  let estAt = 0;
  const waiters = new Set<() => void>();
  const server = createServer((s) => {
    sock = s;
    s.on('data', (d: Buffer) => {
      for (const t of counter.push(d)) {
        if (t === 1) {
          s.write(Buffer.concat([trivialOpen(65000, '10.254.9.9'), keepalive()]));
          estAt = wall();
        }
      }
      for (const w of waiters) w();
    });
    s.on('error', () => {});
  });
  await new Promise<void>((r) => server.listen(0, a.bird, r));
  const port = (server.address() as { port: number }).port;
  const until = (pred: () => boolean, timeoutMs: number): Promise<number> =>
    new Promise((resolve, reject) => {
      const check = (): void => {
        if (!pred()) return;
        waiters.delete(check);
        clearTimeout(t);
        resolve(wall());
      };
      const t = setTimeout(() => {
        waiters.delete(check);
        reject(new Error(`sink: timed out (announced ${counter.announced}, withdrawn ${counter.withdrawn})`));
      }, timeoutMs);
      waiters.add(check);
      check();
    });
  let child: SpeakerChild | undefined;
  try {
    child = await SpeakerChild.start({
      speaker: { localAs: 65001, bgpIdentifier: '10.254.1.1' },
      peers: [{ name: 'sink', address: a.bird, port, peerAs: 65000, localAddress: a.sender, families: ['ipv4-unicast'], connectRetryTimeSec: 1 }],
      generate: { count: N, base: '10.0.0.0' },
      markInitialSyncDone: true,
    });
    const cpu = async (): Promise<number> => ((await child!.command({ cmd: 'cpu' })) as number) / 1000;
    const est0 = await child.waitEvent((e) => e.event === 'peerState' && e.to === 'Established', 'Established', 60_000);
    const cpu0 = (est0.cpuMs as number) / 1000;
    const full = await until(() => counter.announced >= N, 120_000);
    const connectSec = (full - estAt) / 1000;
    const cpu1 = await cpu();
    await sleep(300);
    let t0 = wall();
    void child.command({ cmd: 'setRoutes', routes: [] });
    const empty = await until(() => counter.withdrawn >= N, 120_000);
    const withdrawSec = (empty - t0) / 1000;
    const cpu2 = await cpu();
    await sleep(300);
    const cpu3 = await cpu();
    t0 = wall();
    void child.command({ cmd: 'generate', count: N, base: '10.0.0.0' });
    const again = await until(() => counter.announced >= 2 * N, 120_000);
    const announceSec = (again - t0) / 1000;
    const cpu4 = await cpu();
    const rss = (await child.command({ cmd: 'rss' })) as { maxRssBytes: number };
    return { connectSec, withdrawSec, announceSec, peakRssMiB: rss.maxRssBytes / 1048576, cpu: { connect: cpu1 - cpu0, withdraw: cpu2 - cpu1, announce: cpu4 - cpu3 } };
  } finally {
    await child?.stop();
    sock?.destroy();
    await new Promise<void>((r) => server.close(() => r()));
  }
}

/**
 * Herald's UPDATE bytes, packed in this process by an AdjRibOut exactly as the Speaker packs them toward a peer with
 * 4096-octet messages: the full table (announce) and its withdrawal. Also returns the packing time (ms).
 */
function heraldBytes(localAddress: string): { announce: Buffer; withdraw: Buffer; packMs: number; withdrawMs: number } {
  const table = new RouteTable();
  const rib = new AdjRibOut(table);
  rib.setDesired(table.replace(generateRoutes(N)));
  const drain = (): Buffer => {
    const out: Buffer[] = [];
    for (let m = rib.nextMessage(4096); m !== undefined; m = rib.nextMessage(4096)) out.push(m);
    return Buffer.concat(out);
  };
  let t = performance.now();
  rib.start({ name: 'raw', localAs: 65001, peerAs: 65000, fourOctetAs: true, families: new Set(['ipv4-unicast']), localAddress });
  const announce = drain();
  const packMs = performance.now() - t;
  t = performance.now();
  rib.setDesired(table.replace([]));
  const withdraw = drain();
  return { announce, withdraw, packMs, withdrawMs: performance.now() - t };
}

/**
 * BIRD's own ingest time: a trivial sender replays Herald's UPDATE bytes (built beforehand) to BIRD — OPEN, then on
 * BIRD's OPEN one write of KEEPALIVE + the whole table; bursts are one write of all withdrawals / announcements.
 * The figures are what BIRD needs to take in the bytes on this machine (plus `birdc` polling), whatever the sender.
 */
export async function benchRaw(): Promise<Result> {
  const a = pair();
  const birdPort = await freePort(a.bird);
  const bytes = heraldBytes(a.sender);
  console.log(`raw: Herald's AdjRibOut packs ${N} routes into ${bytes.announce.length} octets in ${bytes.packMs.toFixed(1)} ms, withdrawals (${bytes.withdraw.length} octets) in ${bytes.withdrawMs.toFixed(1)} ms`);
  const bird = await Bird.start(
    TIMEFORMAT +
      bgpProtocol({ name: 'sender', local: a.bird, localPort: birdPort, localAs: 65000, neighbor: a.sender, neighborPort: 179, neighborAs: 65001, passive: true, families: ['ipv4'], extra: '  debug { states, events };' }),
  );
  let s: Socket | undefined;
  let ka: NodeJS.Timeout | undefined;
  try {
    const counter = new NlriCounter();
    s = connect({ host: a.bird, port: birdPort, localAddress: a.sender });
    const sock = s;
    sock.on('error', () => {});
    sock.setNoDelay(true);
    await new Promise<void>((r) => sock.once('connect', r));
    sock.write(trivialOpen(65001, '10.254.4.1'));
    await new Promise<void>((resolve) => {
      const onData = (d: Buffer): void => {
        if (!counter.push(d).includes(1)) return;
        sock.off('data', onData);
        sock.write(Buffer.concat([keepalive(), bytes.announce]));
        resolve();
      };
      sock.on('data', onData);
    });
    ka = setInterval(() => sock.write(keepalive()), 30_000);
    const full = await pollUntil(bird, (n) => n === N, 120_000);
    const est = establishedAt(bird, 'sender');
    if (est === undefined) throw new Error('no established line in the BIRD log');
    const connectSec = (full - est) / 1000;
    await sleep(500);
    let t0 = wall();
    sock.write(bytes.withdraw);
    const empty = await pollUntil(bird, (n) => n === 0, 120_000);
    const withdrawSec = (empty - t0) / 1000;
    await sleep(500);
    t0 = wall();
    sock.write(bytes.announce);
    const again = await pollUntil(bird, (n) => n === N, 120_000);
    const announceSec = (again - t0) / 1000;
    return { connectSec, withdrawSec, announceSec, peakRssMiB: NaN };
  } finally {
    if (ka) clearInterval(ka);
    s?.destroy();
    await bird.stop();
  }
}

/** An MRT TABLE_DUMP_V2 file (RFC 6396 §4.3) of `count` /32 routes with ORIGIN IGP, empty AS_PATH, NEXT_HOP `nh`. */
function writeMrt(path: string, count: number, nh: string, pad: number): void {
  const chunks: Buffer[] = [];
  const header = (subtype: number, body: Buffer): Buffer => {
    const h = Buffer.alloc(12);
    h.writeUInt32BE(Math.floor(Date.now() / 1000), 0);
    h.writeUInt16BE(13, 4);
    h.writeUInt16BE(subtype, 6);
    h.writeUInt32BE(body.length, 8);
    return Buffer.concat([h, body]);
  };
  const nhBytes = Buffer.from(nh.split('.').map(Number));
  // PEER_INDEX_TABLE: collector id, view name length 0, 1 peer (type 2 = IPv4 address, 4-octet AS)
  const pit = Buffer.concat([Buffer.from([10, 254, 2, 1, 0, 0, 0, 1, 2]), Buffer.from([10, 254, 2, 1]), nhBytes, Buffer.from([0, 0, 0xfd, 0xe9])]);
  chunks.push(header(1, pit));
  const attrs = Buffer.concat([Buffer.from([0x40, 1, 1, 0, 0x40, 2, 0, 0x40, 3, 4]), nhBytes]);
  const rib = (seq: number, i: number): Buffer => {
    const v = (BASE + i) >>> 0;
    const b = Buffer.alloc(4 + 1 + 4 + 2 + 2 + 4 + 2);
    b.writeUInt32BE(seq, 0);
    b[4] = 32;
    b.writeUInt32BE(v, 5);
    b.writeUInt16BE(1, 9);
    b.writeUInt16BE(0, 11);
    b.writeUInt32BE(Math.floor(Date.now() / 1000), 13);
    b.writeUInt16BE(attrs.length, 17);
    return header(2, Buffer.concat([b, attrs]));
  };
  for (let i = 0; i < count; i++) chunks.push(rib(i, i));
  // GoBGP 3.10's `mrt inject` drops the last ~1000 paths (stream not closed): repeat the last record `pad` times
  for (let k = 0; k < pad; k++) chunks.push(rib(count + k, count - 1));
  writeFileSync(path, Buffer.concat(chunks));
}

/** GoBGP 3 as the sender: the table injected from an MRT file before BIRD connects (connect), then del/inject bursts. */
export async function benchGobgp(): Promise<Result> {
  const a = pair();
  const gPort = await freePort(a.sender);
  const birdPort = await freePort(a.bird);
  const g = await Gobgp.start({ local: a.sender, port: gPort, as: 65001, neighbor: a.bird, neighborAs: 65000, families: ['ipv4-unicast'], routerId: '10.254.2.1' });
  let bird: Bird | undefined;
  try {
    const mrt = join(g.proc.dir, 'routes.mrt');
    writeMrt(mrt, N, a.sender, 2048);
    await g.cli(['mrt', 'inject', 'global', mrt], 600_000);
    await g.proc.waitFor(async () => (await g.count('ipv4')) === N, 'GoBGP holds N routes', 120_000, 200);
    bird = await Bird.start(
      TIMEFORMAT + bgpProtocol({ name: 'sender', local: a.bird, localPort: birdPort, localAs: 65000, neighbor: a.sender, neighborPort: gPort, neighborAs: 65001, families: ['ipv4'], extra: '  debug { states, events };' }),
    );
    const b = bird;
    const full = await pollUntil(b, (n) => n === N, 300_000);
    const est = establishedAt(b, 'sender');
    if (est === undefined) throw new Error('no established line in the BIRD log');
    const connectSec = (full - est) / 1000;
    await sleep(500);
    let t0 = wall();
    const del = g.cli(['global', 'rib', '-a', 'ipv4', 'del', 'all'], 300_000);
    const empty = await pollUntil(b, (n) => n === 0, 300_000);
    await del;
    const withdrawSec = (empty - t0) / 1000;
    await sleep(500);
    t0 = wall();
    const inj = g.cli(['mrt', 'inject', 'global', mrt], 600_000);
    const again = await pollUntil(b, (n) => n === N, 300_000);
    await inj;
    const announceSec = (again - t0) / 1000;
    return { connectSec, withdrawSec, announceSec, peakRssMiB: vmHwmMiB(g.pid) };
  } finally {
    await bird?.stop();
    await g.stop();
  }
}

async function benchExabgp(): Promise<Result> {
  const a = pair();
  const xPort = await freePort(a.sender);
  const birdPort = await freePort(a.bird);
  const statics: { prefix: string; nextHop: string }[] = [];
  for (let i = 0; i < N; i++) statics.push({ prefix: `${prefixOf(i)}/32`, nextHop: a.sender });
  const x = await Exabgp.start({ local: a.sender, port: xPort, as: 65001, neighbor: a.bird, neighborAs: 65000, families: ['ipv4'], staticRoutes: statics, commands: true, routerId: '10.254.3.1' });
  let bird: Bird | undefined;
  try {
    bird = await Bird.start(
      TIMEFORMAT + bgpProtocol({ name: 'sender', local: a.bird, localPort: birdPort, localAs: 65000, neighbor: a.sender, neighborPort: xPort, neighborAs: 65001, families: ['ipv4'], extra: '  debug { states, events };' }),
    );
    const b = bird;
    const full = await pollUntil(b, (n) => n === N, 600_000);
    const est = establishedAt(b, 'sender');
    if (est === undefined) throw new Error('no established line in the BIRD log');
    const connectSec = (full - est) / 1000;
    await sleep(500);
    const lines = (verb: string): string[] => {
      const out: string[] = [];
      for (let i = 0; i < N; i += 500) {
        const ps: string[] = [];
        for (let k = i; k < Math.min(N, i + 500); k++) ps.push(`${prefixOf(k)}/32`);
        out.push(`${verb} attributes next-hop ${a.sender} nlri ${ps.join(' ')}`);
      }
      return out;
    };
    let t0 = wall();
    x.command(lines('withdraw').join('\n'));
    const empty = await pollUntil(b, (n) => n === 0, 600_000);
    const withdrawSec = (empty - t0) / 1000;
    await sleep(500);
    t0 = wall();
    x.command(lines('announce').join('\n'));
    const again = await pollUntil(b, (n) => n === N, 600_000);
    const announceSec = (again - t0) / 1000;
    return { connectSec, withdrawSec, announceSec, peakRssMiB: vmHwmMiB(x.pid) };
  } finally {
    await bird?.stop();
    await x.stop();
  }
}

function median(xs: number[]): number {
  const s = [...xs].sort((p, q) => p - q);
  return s[Math.floor(s.length / 2)]!;
}

/**
 * The daemon (bin/herald.js) runs with Node's module compile cache, which also caches the type-stripped sources: the
 * TypeScript stripper (~30 MiB of RSS) is then never loaded. Give the speaker child the same cache (same default
 * directory as `module.enableCompileCache()`), warmed once here, so its RSS matches the daemon's.
 * COMPILE_CACHE=0 measures without it.
 */
function useCompileCache(): void {
  if (process.env.COMPILE_CACHE === '0' || process.env.NODE_COMPILE_CACHE !== undefined) return;
  process.env.NODE_COMPILE_CACHE = join(tmpdir(), 'node-compile-cache');
  const child = new URL('../test/helpers/speaker-child.ts', import.meta.url).pathname;
  spawnSync(process.execPath, ['--input-type=module', '-e', `await import(${JSON.stringify(child)})`], { stdio: 'ignore', timeout: 60_000 });
}

async function main(): Promise<void> {
  useCompileCache();
  if (!birdAvailable()) {
    console.log('bird2 not installed: nothing to measure');
    return;
  }
  const runners: Record<string, { ok: () => boolean; run: () => Promise<Result> }> = {
    herald: { ok: () => true, run: benchHerald },
    sink: { ok: () => true, run: benchSink },
    raw: { ok: () => true, run: benchRaw },
    gobgp: { ok: gobgpAvailable, run: benchGobgp },
    exabgp: { ok: exabgpAvailable, run: benchExabgp },
  };
  const results = new Map<string, Result>();
  for (const name of SENDERS) {
    const r = runners[name];
    if (r === undefined) throw new Error(`unknown sender ${name}`);
    if (!r.ok()) {
      console.log(`${name}: not installed, skipped`);
      continue;
    }
    const runs: Result[] = [];
    for (let i = 0; i < RUNS; i++) {
      const res = await r.run();
      const cpuText = res.cpu ? ` (Herald CPU: connect ${res.cpu.connect.toFixed(3)} s, withdraw ${res.cpu.withdraw.toFixed(3)} s, announce ${res.cpu.announce.toFixed(3)} s incl. building the ${N} routes)` : '';
      console.log(`${name} run ${i + 1}: connect ${res.connectSec.toFixed(3)} s, withdraw ${res.withdrawSec.toFixed(3)} s, announce ${res.announceSec.toFixed(3)} s, peak RSS ${res.peakRssMiB.toFixed(0)} MiB${cpuText}`);
      runs.push(res);
    }
    results.set(name, {
      connectSec: median(runs.map((x) => x.connectSec)),
      withdrawSec: median(runs.map((x) => x.withdrawSec)),
      announceSec: median(runs.map((x) => x.announceSec)),
      peakRssMiB: median(runs.map((x) => x.peakRssMiB)),
      ...(runs[0]?.cpu ? { cpu: { connect: median(runs.map((x) => x.cpu!.connect)), withdraw: median(runs.map((x) => x.cpu!.withdraw)), announce: median(runs.map((x) => x.cpu!.announce)) } } : {}),
    });
  }
  const h = results.get('herald');
  const ratio = (v: number, hv: number | undefined): string => (hv === undefined || hv <= 0 ? '' : ` (${(v / hv).toFixed(1)}x)`);
  const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  console.log(`\nBIRD 2 receiving ${N} IPv4 /32 on loopback, median of ${RUNS} (ratio = sender / Herald); load average ${load}\n`);
  console.log('| sender | connect (s) | announce burst (s) | withdraw burst (s) | peak RSS (MiB) |');
  console.log('|---|---|---|---|---|');
  for (const [name, r] of results) {
    console.log(
      `| ${name} | ${r.connectSec.toFixed(3)}${ratio(r.connectSec, h?.connectSec)} | ${r.announceSec.toFixed(3)}${ratio(r.announceSec, h?.announceSec)} | ${r.withdrawSec.toFixed(3)}${ratio(r.withdrawSec, h?.withdrawSec)} | ${r.peakRssMiB.toFixed(0)}${ratio(r.peakRssMiB, h?.peakRssMiB)} |`,
    );
  }
  if (h !== undefined) {
    console.log(`\nHerald targets: connect ≤ 0.05 s ${h.connectSec <= 0.05 ? 'met' : 'MISSED'}, bursts ≤ 0.1 s ${h.announceSec <= 0.1 && h.withdrawSec <= 0.1 ? 'met' : 'MISSED'}, peak RSS ≤ 100 MiB ${h.peakRssMiB <= 100 ? 'met' : 'MISSED'}`);
  }
}

if (import.meta.main) await main();
