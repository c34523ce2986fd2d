/**
 * A Herald Speaker in a child process, for tests that kill it (graceful restart: kill -9 and restart) and for
 * bench/peers.ts (Herald's own peak RSS).
 *
 * Run: `node test/helpers/speaker-child.ts '<json ChildConfig>'`. Commands arrive on stdin, one JSON object per line;
 * events and replies leave on stdout, one JSON object per line, each with `t` = wall time in ms (performance
 * timeOrigin + now, comparable across processes on this machine) and `cpuMs` = this process's CPU time so far.
 *
 * Commands: {cmd:'setRoutes', routes} | {cmd:'generate', count, base?, nextHop?} (count IPv4 /32 from base, default
 * 10.0.0.0) | {cmd:'markInitialSyncDone'} | {cmd:'drain', waitTimeSec} | {cmd:'undrain'} |
 * {cmd:'stop', mode, message?, waitTimeSec?} (Speaker.stop, replies with its StopOutcome, exits after) |
 * {cmd:'peers'} | {cmd:'rss'} | {cmd:'cpu'} | {cmd:'exit'} |
 * {cmd:'block', ms} (busy-loops the main thread) | {cmd:'bfdAdminDown', timeoutMs?} | {cmd:'bfdAdminUp'}.
 * Events: {event:'ready'} {event:'peerState', peer, from, to, reason} {event:'idle', peer} (nothing pending after UPDATEs)
 * {event:'bfdState', ...BfdStateEvent} {event:'reply', cmd, value}.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { performance } from 'node:perf_hooks';
import { Speaker } from '../../bgp/speaker.ts';
import type { PeerConfig, SpeakerOptions } from '../../bgp/speaker.ts';
import type { StopMode } from '../../bgp/stop-modes.ts';
import type { Route } from '../../bgp/rib/route.ts';

export interface ChildConfig {
  speaker: Pick<SpeakerOptions, 'localAs' | 'bgpIdentifier' | 'listen' | 'gracefulRestart'>;
  peers: PeerConfig[];
  routes?: Route[];
  generate?: { count: number; base?: string };
  markInitialSyncDone?: boolean;
}

const now = (): number => performance.timeOrigin + performance.now();
const cpuMs = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const send = (o: Record<string, unknown>): void => {
  process.stdout.write(JSON.stringify({ t: now(), cpuMs: cpuMs(), ...o }) + '\n');
};

/** count IPv4 /32 routes from `base` upward. */
export function generateRoutes(count: number, base = '10.0.0.0'): Route[] {
  const [a, b, c, d] = base.split('.').map(Number) as [number, number, number, number];
  const start = ((a << 24) | (b << 16) | (c << 8) | d) >>> 0;
  const out: Route[] = new Array(count);
  for (let i = 0; i < count; i++) {
    const v = (start + i) >>> 0;
    out[i] = { prefix: `${v >>> 24}.${(v >>> 16) & 255}.${(v >>> 8) & 255}.${v & 255}/32`, family: 'ipv4-unicast' };
  }
  return out;
}

async function main(): Promise<void> {
  const cfg = JSON.parse(process.argv[2] ?? '{}') as ChildConfig;
  const speaker = new Speaker(cfg.speaker);
  let sent = 0;
  speaker.on('peerState', (ev: { peer: string; from: string; to: string; reason?: unknown }) => send({ event: 'peerState', peer: ev.peer, from: ev.from, to: ev.to, reason: ev.reason }));
  speaker.on('bfdState', (ev: Record<string, unknown>) => send({ ...ev, event: 'bfdState' }));
  speaker.on('updateSent', (ev: { peer: string; prefixes: number; kind: string }) => {
    sent += ev.prefixes;
    if (ev.kind === 'endOfRib') send({ event: 'endOfRibSent', peer: ev.peer });
  });
  speaker.on('error', (err: unknown) => send({ event: 'error', message: String(err) }));
  await speaker.ready();
  if (cfg.routes) speaker.setRoutes(cfg.routes);
  if (cfg.generate) speaker.setRoutes(generateRoutes(cfg.generate.count, cfg.generate.base));
  if (cfg.markInitialSyncDone) speaker.markInitialSyncDone();
  for (const p of cfg.peers) speaker.addPeer(p);
  send({ event: 'ready' });
  const rl = createInterface({ input: process.stdin });
  rl.on('line', (line) => {
    void (async () => {
      const c = JSON.parse(line) as { cmd: string; [k: string]: unknown };
      switch (c.cmd) {
        case 'setRoutes':
          speaker.setRoutes(c.routes as Route[]);
          break;
        case 'generate':
          speaker.setRoutes(generateRoutes(c.count as number, c.base as string | undefined));
          break;
        case 'markInitialSyncDone':
          speaker.markInitialSyncDone();
          break;
        case 'drain':
          await speaker.drain({ waitTimeSec: c.waitTimeSec as number });
          break;
        case 'undrain':
          speaker.undrain();
          break;
        case 'stop': {
          const outcome = await speaker.stop({ mode: c.mode as StopMode, message: c.message as string | undefined, waitTimeSec: c.waitTimeSec as number | undefined });
          send({ event: 'reply', cmd: c.cmd, value: outcome });
          process.exit(0);
          break;
        }
        case 'peers':
          send({ event: 'reply', cmd: c.cmd, value: speaker.peers() });
          return;
        case 'cpu': {
          // CPU time of this process in ms (user + system), load-independent unlike wall time
          const u = process.cpuUsage();
          send({ event: 'reply', cmd: c.cmd, value: (u.user + u.system) / 1000 });
          return;
        }
        case 'rss':
          // maxRSS is in KiB (getrusage)
          send({ event: 'reply', cmd: c.cmd, value: { maxRssBytes: process.resourceUsage().maxRSS * 1024, rssBytes: process.memoryUsage().rss, sentPrefixes: sent } });
          return;
        case 'block': {
          const end = Date.now() + (c.ms as number);
          while (Date.now() < end) {
            /* the main event loop is blocked on purpose */
          }
          break;
        }
        case 'bfdAdminDown':
          await speaker.bfdAdminDown({ ...(c.timeoutMs !== undefined ? { timeoutMs: c.timeoutMs as number } : {}) });
          break;
        case 'bfdAdminUp':
          await speaker.bfdAdminUp();
          break;
        case 'exit':
          process.exit(0);
      }
      send({ event: 'reply', cmd: c.cmd, value: true });
    })().catch((err: unknown) => send({ event: 'error', message: String(err) }));
  });
  rl.on('close', () => process.exit(0));
}

if (process.argv[1] === import.meta.filename) {
  void main();
}

/** Parent side: spawns speaker-child.ts, collects its events, sends commands, kills it by PID. */
export class SpeakerChild {
  readonly events: Record<string, unknown>[] = [];
  private readonly child: ChildProcess;
  private readonly waiters = new Set<() => void>();
  private exited = false;
  readonly exit: Promise<number | null>;

  private constructor(child: ChildProcess) {
    this.child = child;
    let buf = '';
    child.stdout?.on('data', (d: Buffer) => {
      buf += d.toString();
      let i: number;
      while ((i = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        try {
          this.events.push(JSON.parse(line) as Record<string, unknown>);
        } catch {
          this.events.push({ event: 'stdout', line });
        }
        for (const w of this.waiters) w();
      }
    });
    child.stderr?.on('data', (d: Buffer) => this.events.push({ event: 'stderr', text: d.toString() }));
    this.exit = new Promise((resolve) =>
      child.once('exit', (code) => {
        this.exited = true;
        for (const w of this.waiters) w();
        resolve(code);
      }),
    );
    process.once('exit', () => this.kill('SIGKILL'));
  }

  /** Starts a child speaker with `cfg` (inside network namespace `netns` when given) and waits for its 'ready' event. */
  static async start(cfg: ChildConfig, timeoutMs = 20_000, netns?: string): Promise<SpeakerChild> {
    const script = new URL(import.meta.url).pathname;
    const args = [script, JSON.stringify(cfg)];
    // `ip netns exec` execs the command: the PID stays the speaker's
    const child = netns === undefined ? spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'pipe'] }) : spawn('ip', ['netns', 'exec', netns, process.execPath, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
    const c = new SpeakerChild(child);
    await c.waitEvent((e) => e.event === 'ready', 'child ready', timeoutMs);
    return c;
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** Resolves with the first event (already seen or future) matching `pred`. */
  waitEvent(pred: (e: Record<string, unknown>) => boolean, what: string, timeoutMs = 20_000, from = 0): Promise<Record<string, unknown>> {
    return new Promise((resolve, reject) => {
      const check = (): void => {
        const e = this.events.slice(from).find(pred);
        if (e !== undefined) {
          cleanup();
          resolve(e);
        } else if (this.exited) {
          cleanup();
          reject(new Error(`speaker child exited while waiting for ${what}: ${JSON.stringify(this.events.slice(-10))}`));
        }
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`timed out waiting for ${what}: ${JSON.stringify(this.events.slice(-10))}`));
      }, timeoutMs);
      const cleanup = (): void => {
        clearTimeout(timer);
        this.waiters.delete(check);
      };
      this.waiters.add(check);
      check();
    });
  }

  /** Sends a command; resolves with its reply's value. */
  async command(cmd: Record<string, unknown>, timeoutMs = 30_000): Promise<unknown> {
    const from = this.events.length;
    this.child.stdin?.write(JSON.stringify(cmd) + '\n');
    const r = await this.waitEvent((e) => e.event === 'reply' && e.cmd === cmd.cmd, `reply to ${String(cmd.cmd)}`, timeoutMs, from);
    return r.value;
  }

  /** Kills the child (default SIGKILL, i.e. kill -9: no NOTIFICATION, the TCP connection just drops). */
  kill(signal: NodeJS.Signals = 'SIGKILL'): void {
    if (!this.exited) this.child.kill(signal);
  }

  async stop(): Promise<void> {
    this.kill('SIGKILL');
    await this.exit;
  }
}
