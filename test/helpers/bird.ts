/**
 * Test harness for a private BIRD 2 daemon on loopback (interop tests).
 *
 * Each `Bird` runs `bird -f -c CONF -s DIR/bird.ctl -P DIR/bird.pid` from a fresh temp dir, with a generated config
 * (log file, router id, `protocol device`, then the caller's body). It waits for the control socket, talks to it with
 * `birdc -s`, parses `show route all` and `show protocols all`, pauses/resumes it with SIGSTOP/SIGCONT, and stops it
 * by PID (SIGTERM, then SIGKILL after a timeout) removing the temp dir. A process 'exit' hook kills any BIRD still
 * running so a failing test never leaks a daemon.
 *
 * Facts this relies on (see ../shared/design/peers-on-one-machine.md): `strict bind yes` to listen only on the local
 * address; `multihop` for eBGP over 127.x; distinct 127.0.0.x addresses on each end; 127/8 next hops show as
 * `unreachable` but the routes are in the table; `connect delay time` >= 1 s.
 *
 * Usage:
 *   const addr = loopbackPair();                                   // { ours: '127.a.b.1', bird: '127.a.b.2' }
 *   const bird = await Bird.start(bgpProtocol({ name: 'herald', local: addr.bird, localPort: port, ... }));
 *   t.teardown(() => bird.stop());
 *   await bird.waitFor(async () => (await bird.protocol('herald'))?.bgpState === 'Established', 'Established');
 */
import { spawn, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run } from './daemon-process.ts';

/** True when the `bird` and `birdc` binaries are installed (Debian package bird2). */
export function birdAvailable(): boolean {
  return spawnSync('bird', ['--version'], { stdio: 'ignore' }).status === 0 && spawnSync('which', ['birdc'], { stdio: 'ignore' }).status === 0;
}

let pairCounter = 0;
/**
 * A fresh pair of distinct loopback addresses for one test: 127.A.B.1 (ours) and 127.A.B.2 (BIRD's), where A.B
 * comes from the process id and a counter, so parallel test files do not collide. Third address `.3` free for a
 * second peer.
 */
export function loopbackPair(): { ours: string; bird: string; third: string } {
  const n = (process.pid * 7 + pairCounter++) % 65000;
  const a = 100 + ((n >> 8) % 150);
  const b = n & 0xff;
  return { ours: `127.${a}.${b}.1`, bird: `127.${a}.${b}.2`, third: `127.${a}.${b}.3` };
}

/** Ports freePort has handed out in this process: the kernel may give a port back once it is closed again. */
const handedOut = new Set<number>();

/**
 * A TCP port that was free on `address` a moment ago (bind to port 0, read it, close), never one this process was
 * given before: several ports taken before any is bound (etcd's client and peer ports, then the apiserver's) could
 * otherwise be the same one (seen: the apiserver failed with "address already in use" on etcd's peer port).
 */
export async function freePort(address = '127.0.0.1'): Promise<number> {
  for (let i = 0; i < 100; i++) {
    const port = await new Promise<number>((resolve, reject) => {
      const srv = createServer();
      srv.once('error', reject);
      srv.listen(0, address, () => {
        const addr = srv.address();
        const p = typeof addr === 'object' && addr ? addr.port : 0;
        srv.close(() => resolve(p));
      });
    });
    if (!handedOut.has(port)) {
      handedOut.add(port);
      return port;
    }
  }
  throw new Error(`freePort: no port on ${address} that this process was not given before, in 100 tries`);
}

/** Options of one generated `protocol bgp NAME { ... }` block. */
export interface BgpProtocolOptions {
  /** Protocol name (must not be a BIRD keyword). */
  name: string;
  /** BIRD's own address and port for this session (strict bind). */
  local: string;
  localPort: number;
  localAs: number;
  /** The peer (Herald) address, port and AS. */
  neighbor: string;
  neighborPort: number;
  neighborAs: number;
  /** BIRD waits for us to connect. */
  passive?: boolean;
  /** Hold time offered by BIRD, seconds (BIRD default 240). */
  holdTimeSec?: number;
  /** Channels; default ['ipv4', 'ipv6'], each `import all; export none;` unless `channelBody` is given. */
  families?: ('ipv4' | 'ipv6')[];
  /** Replaces the body of each channel block. */
  channelBody?: string;
  /** TCP MD5 password (RFC 2385). */
  password?: string;
  /** Do not offer 4-octet AS (`disable as4 yes`): we must use AS_TRANS in our OPEN's My AS field. */
  disableAs4?: boolean;
  /** Extra statements inside the protocol block. */
  extra?: string;
  /** `debug { states, routes, events }`: every route BIRD adds or removes is logged (see Bird.routeTrace()). */
  trace?: boolean;
}

/** Renders a `protocol bgp` block for Bird.start(). Uses `multihop` for eBGP and `connect delay time 1`. */
export function bgpProtocol(o: BgpProtocolOptions): string {
  const families = o.families ?? ['ipv4', 'ipv6'];
  const body = o.channelBody ?? 'import all; export none;';
  const lines = [
    `protocol bgp ${o.name} {`,
    `  local ${o.local} port ${o.localPort} as ${o.localAs};`,
    `  neighbor ${o.neighbor} port ${o.neighborPort} as ${o.neighborAs};`,
    '  strict bind yes;',
    o.localAs !== o.neighborAs ? '  multihop;' : '',
    '  connect delay time 1;',
    '  connect retry time 1;',
    '  error wait time 1, 5;',
    o.passive ? '  passive on;' : '',
    o.holdTimeSec !== undefined ? `  hold time ${o.holdTimeSec};` : '',
    o.password !== undefined ? `  password "${o.password}";` : '',
    o.disableAs4 ? '  enable as4 no;' : '',
    o.extra ?? '',
    o.trace ? '  debug { states, routes, events };' : '',
    ...families.map((f) => `  ${f} { ${body} };`),
    '}',
  ];
  return lines.filter((l) => l !== '').join('\n') + '\n';
}

/** One route entry of `show route all` (one path; several entries may share a prefix). */
export interface BirdRoute {
  table: string;
  prefix: string;
  /** 'unicast', 'unreachable', 'blackhole', 'prohibit' ... */
  type: string;
  protocol: string;
  /** The neighbour the route came from (`from A`), if shown. */
  from?: string;
  /** Marked `*` (best/primary). */
  primary: boolean;
  preference: number;
  /** Gateways of the route (`via X` lines; several for ECMP). Empty for unreachable. */
  nextHops: string[];
  origin?: string;
  /** BGP.as_path as numbers (AS_SET members flattened). */
  bgpPath: number[];
  /** BGP.community as "AS:value" strings. */
  communities: string[];
  /** BGP.large_community as "G:L1:L2" strings. */
  largeCommunities: string[];
  localPref?: number;
  med?: number;
  /** BGP.next_hop addresses (two for an IPv6 global + link-local next hop). */
  bgpNextHop: string[];
  /** Every `Key: value` attribute line, e.g. attrs['BGP.origin'] = 'IGP'. */
  attrs: Record<string, string>;
}

/** Parses the output of `birdc show route all` (BIRD 2.0). */
export function parseRoutes(text: string): BirdRoute[] {
  const routes: BirdRoute[] = [];
  let table = '';
  let prefix = '';
  let cur: BirdRoute | undefined;
  const header = /^(\S+)?\s+(?:(unicast|unreachable|blackhole|prohibit|multicast)|via (\S+) on \S+)\s+\[(\S+)(?: \S+)*?(?: from (\S+))?\]\s+(\*)?\s*\((\d+)(?:\/\S+)?\)/;
  for (const raw of text.split('\n')) {
    const line = raw.replace(/\r$/, '');
    if (line === '' || line.startsWith('BIRD ')) continue;
    const tm = /^Table (\S+):$/.exec(line);
    if (tm) {
      table = tm[1] ?? '';
      continue;
    }
    const hm = header.exec(line);
    if (hm) {
      if (hm[1]) prefix = hm[1];
      cur = {
        table,
        prefix,
        type: hm[2] ?? 'unicast',
        protocol: hm[4] ?? '',
        primary: hm[6] === '*',
        preference: Number(hm[7]),
        nextHops: hm[3] ? [hm[3]] : [],
        bgpPath: [],
        communities: [],
        largeCommunities: [],
        bgpNextHop: [],
        attrs: {},
      };
      if (hm[5]) cur.from = hm[5];
      routes.push(cur);
      continue;
    }
    if (!cur) continue;
    const via = /^\s+via (\S+)/.exec(line);
    if (via) {
      cur.nextHops.push(via[1] ?? '');
      continue;
    }
    const am = /^\s+([A-Za-z][\w.]*): ?(.*)$/.exec(line);
    if (!am) continue;
    const key = am[1] ?? '';
    const value = (am[2] ?? '').trim();
    cur.attrs[key] = value;
    switch (key) {
      case 'BGP.origin':
        cur.origin = value;
        break;
      case 'BGP.as_path':
        cur.bgpPath = (value.match(/\d+/g) ?? []).map(Number);
        break;
      case 'BGP.community':
        cur.communities = [...value.matchAll(/\((\d+),(\d+)\)/g)].map((m) => `${m[1]}:${m[2]}`);
        break;
      case 'BGP.large_community':
        cur.largeCommunities = [...value.matchAll(/\((\d+), (\d+), (\d+)\)/g)].map((m) => `${m[1]}:${m[2]}:${m[3]}`);
        break;
      case 'BGP.local_pref':
        cur.localPref = Number(value);
        break;
      case 'BGP.med':
        cur.med = Number(value);
        break;
      case 'BGP.next_hop':
        cur.bgpNextHop = value.split(/\s+/).filter((s) => s !== '');
        break;
    }
  }
  return routes;
}

/** Milliseconds into the day of a BIRD `since` ("HH:MM:SS.mmm", possibly after a date), NaN when not that shape. */
function sinceMs(since: string): number {
  const m = /(\d\d):(\d\d):(\d\d)(?:\.(\d{1,3}))?$/.exec(since);
  return m ? ((Number(m[1]) * 60 + Number(m[2])) * 60 + Number(m[3])) * 1000 + Number((m[4] ?? '0').padEnd(3, '0')) : NaN;
}

/**
 * Whether a BIRD `since` (of a protocol or a BFD session) moved between two readings, i.e. the state changed in
 * between. BIRD prints `since` as the real time now minus the monotonic time since the change, so one unchanged state
 * can read a millisecond apart in two calls (seen in CI: 06:46:03.609, then .610; 21:06:20.999, then 21:06:21.000);
 * a change is a real event, at least a few hundred milliseconds later. So: moved by more than `toleranceMs`, or
 * either reading missing or not a time.
 */
export function sinceMoved(before: string | undefined, after: string | undefined, toleranceMs = 100): boolean {
  if (before === undefined || after === undefined) return true;
  return !(Math.abs(sinceMs(after) - sinceMs(before)) <= toleranceMs);
}

/** One protocol of `show protocols all`. BGP fields are set for BGP protocols only. */
export interface BirdProtocol {
  name: string;
  proto: string;
  table: string;
  /** 'up', 'start', 'down' ... */
  state: string;
  since: string;
  /** The Info column, e.g. 'Established', 'Active', 'Received: Administrative shutdown'. */
  info: string;
  bgpState?: string;
  neighborAddress?: string;
  neighborAs?: number;
  localAs?: number;
  neighborId?: string;
  /** `Last error:` line, e.g. 'Received: Administrative shutdown' or 'Hold timer expired'. */
  lastError?: string;
  /** `Message:` line: the RFC 9003 shutdown communication BIRD received. */
  message?: string;
  /** `Session:` line, e.g. 'external multihop AS4'. */
  session?: string;
  holdTimer?: string;
  keepaliveTimer?: string;
  localCapabilities: string[];
  neighborCapabilities: string[];
  /** Channel name → its key/value lines (e.g. channels.ipv4['State'] = 'UP', ['Routes'] = '1 imported, ...'). */
  channels: Record<string, Record<string, string>>;
  /** All lines of this protocol, for debugging. */
  raw: string;
}

/** Parses the output of `birdc show protocols all` (BIRD 2.0). */
export function parseProtocols(text: string): BirdProtocol[] {
  const out: BirdProtocol[] = [];
  let cur: BirdProtocol | undefined;
  let section: 'none' | 'local' | 'neighbor' | 'channel' = 'none';
  let channel = '';
  for (const raw of text.split('\n')) {
    const line = raw.replace(/\r$/, '');
    if (line.startsWith('BIRD ') || line.startsWith('Name ') || line.trim() === '') continue;
    const head = /^(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s*(.*)$/.exec(line);
    if (head && !line.startsWith(' ')) {
      cur = {
        name: head[1] ?? '',
        proto: head[2] ?? '',
        table: head[3] ?? '',
        state: head[4] ?? '',
        since: head[5] ?? '',
        info: (head[6] ?? '').trim(),
        localCapabilities: [],
        neighborCapabilities: [],
        channels: {},
        raw: line,
      };
      out.push(cur);
      section = 'none';
      continue;
    }
    if (!cur) continue;
    cur.raw += '\n' + line;
    const trimmed = line.trim();
    if (trimmed === 'Local capabilities') {
      section = 'local';
      continue;
    }
    if (trimmed === 'Neighbor capabilities') {
      section = 'neighbor';
      continue;
    }
    const ch = /^\s{2}Channel (\S+)$/.exec(line);
    if (ch) {
      section = 'channel';
      channel = ch[1] ?? '';
      cur.channels[channel] = {};
      continue;
    }
    const kv = /^\s+([A-Za-z][A-Za-z0-9 ]*?):\s+(.*)$/.exec(line);
    if ((section === 'local' || section === 'neighbor') && /^\s{6}/.test(line)) {
      (section === 'local' ? cur.localCapabilities : cur.neighborCapabilities).push(trimmed);
      continue;
    }
    if (section === 'channel' && kv) {
      const chan = cur.channels[channel];
      if (chan) chan[kv[1] ?? ''] = (kv[2] ?? '').trim();
      continue;
    }
    if (!kv) continue;
    section = section === 'local' || section === 'neighbor' ? 'none' : section;
    const key = kv[1] ?? '';
    const value = (kv[2] ?? '').trim();
    switch (key) {
      case 'BGP state':
        cur.bgpState = value;
        break;
      case 'Neighbor address':
        cur.neighborAddress = value;
        break;
      case 'Neighbor AS':
        cur.neighborAs = Number(value);
        break;
      case 'Local AS':
        cur.localAs = Number(value);
        break;
      case 'Neighbor ID':
        cur.neighborId = value;
        break;
      case 'Last error':
        cur.lastError = value;
        break;
      case 'Message':
        cur.message = value;
        break;
      case 'Session':
        cur.session = value;
        break;
      case 'Hold timer':
        cur.holdTimer = value;
        break;
      case 'Keepalive timer':
        cur.keepaliveTimer = value;
        break;
    }
  }
  return out;
}

/** One line of BIRD's route trace (`debug { routes }`): a route imported into the table from a protocol's channel. */
export interface BirdRouteEvent {
  /** BIRD's timestamp, e.g. '2024-01-01 10:00:00.123'. */
  at: string;
  protocol: string;
  /** 'ipv4', 'ipv6'. */
  channel: string;
  /** 'added', 'removed', 'ignored', 'filtered' ... */
  action: string;
  prefix: string;
  line: string;
}

/**
 * Parses the route trace lines of a BIRD log (`<TRACE> herald.ipv4 > removed [sole] 192.0.2.1/32 ...`): imports only
 * (the `>` direction), in log order.
 */
export function parseRouteTrace(log: string): BirdRouteEvent[] {
  const out: BirdRouteEvent[] = [];
  const re = /^(\S+ \S+) <TRACE> ([^.\s]+)\.(\S+) > (\w+)(?: \[[^\]]*\])? (\S+)/;
  for (const line of log.split('\n')) {
    const m = re.exec(line);
    if (m) out.push({ at: m[1] ?? '', protocol: m[2] ?? '', channel: m[3] ?? '', action: m[4] ?? '', prefix: m[5] ?? '', line });
  }
  return out;
}

const running = new Set<Bird>();
let exitHookInstalled = false;
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const b of running) b.killNow();
  });
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Options of Bird.start(). */
export interface BirdStartOptions {
  /** BIRD router id (default 10.255.x.y, distinct for every Bird started by this process). */
  routerId?: string;
  /** How long to wait for the control socket, ms (default 10000). */
  startTimeoutMs?: number;
  /** Run BIRD inside this network namespace (`ip netns exec`, which keeps the PID); birdc works from anywhere. */
  netns?: string;
}

let routerIdCounter = 0;
function defaultRouterId(): string {
  const n = (process.pid * 31 + routerIdCounter++) % 65000 + 1;
  return `10.255.${n >> 8}.${n & 0xff}`;
}

/** A private BIRD 2 daemon. */
export class Bird {
  /** BIRD's router id (dotted quad). */
  routerId = '';
  readonly dir: string;
  readonly configPath: string;
  readonly ctl: string;
  readonly logPath: string;
  private child: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();
  private paused = false;
  private stderr = '';
  private netns: string | undefined;

  private constructor(dir: string) {
    this.dir = dir;
    this.configPath = join(dir, 'bird.conf');
    this.ctl = join(dir, 'bird.ctl');
    this.logPath = join(dir, 'bird.log');
  }

  /** BIRD's process id (undefined once stopped). */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /**
   * Writes the config (log, router id, device protocol, then `body`) and starts BIRD; resolves once `birdc` answers.
   * Throws with BIRD's stderr and log when the config is rejected or the socket does not appear in time.
   */
  static async start(body: string, options: BirdStartOptions = {}): Promise<Bird> {
    const bird = new Bird(mkdtempSync(join(tmpdir(), 'herald-bird-')));
    bird.routerId = options.routerId ?? defaultRouterId();
    bird.netns = options.netns;
    bird.writeConfig(body, bird.routerId);
    await bird.spawn(options.startTimeoutMs ?? 10_000);
    return bird;
  }

  private writeConfig(body: string, routerId: string): void {
    writeFileSync(this.configPath, `log "${this.logPath}" all;\nrouter id ${routerId};\nprotocol device {}\n${body}`);
  }

  private async spawn(timeoutMs: number): Promise<void> {
    installExitHook();
    const args = ['-f', '-c', this.configPath, '-s', this.ctl, '-P', join(this.dir, 'bird.pid')];
    const child = this.netns === undefined ? spawn('bird', args, { stdio: ['ignore', 'ignore', 'pipe'] }) : spawn('ip', ['netns', 'exec', this.netns, 'bird', ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
    this.child = child;
    running.add(this);
    child.stderr?.on('data', (d: Buffer) => (this.stderr += d.toString()));
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()));
    let dead = false;
    void this.exited.then(() => (dead = true));
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (dead) {
        running.delete(this);
        const msg = `bird exited at start: ${this.stderr.trim()} ${this.log().trim()}`;
        this.cleanupDir();
        throw new Error(msg);
      }
      if (existsSync(this.ctl)) {
        const r = spawnSync('birdc', ['-s', this.ctl, 'show', 'status'], { encoding: 'utf8', timeout: 2000 });
        if (r.status === 0 && r.stdout.includes('Daemon is up')) return;
      }
      await sleep(50);
    }
    await this.stop();
    throw new Error(`bird control socket did not come up within ${timeoutMs} ms`);
  }

  /** Runs one birdc command (words split on spaces unless an array is given); resolves with stdout. */
  async birdc(cmd: string | string[], timeoutMs = 5000): Promise<string> {
    if (this.paused) throw new Error('birdc while BIRD is paused (SIGSTOP) would hang');
    const args = Array.isArray(cmd) ? cmd : cmd.split(' ').filter((s) => s !== '');
    return run('birdc', ['-s', this.ctl, ...args], timeoutMs);
  }

  /** `show route all [args]` parsed, e.g. routes('table master6') or routes('protocol herald'). */
  async routes(args = ''): Promise<BirdRoute[]> {
    return parseRoutes(await this.birdc(`show route all ${args}`.trim()));
  }

  /** `show protocols all` parsed. */
  async protocols(): Promise<BirdProtocol[]> {
    return parseProtocols(await this.birdc('show protocols all'));
  }

  /** One protocol by name, or undefined. */
  async protocol(name: string): Promise<BirdProtocol | undefined> {
    return (await this.protocols()).find((p) => p.name === name);
  }

  /** Replaces the config body and runs `birdc configure`. */
  async reconfigure(body: string, routerId?: string): Promise<void> {
    if (routerId !== undefined) this.routerId = routerId;
    this.writeConfig(body, this.routerId);
    const out = await this.birdc('configure');
    if (!/Reconfigur|Reconfiguration in progress|Reconfigured/.test(out)) throw new Error(`birdc configure: ${out}`);
  }

  /**
   * Polls `check` every `intervalMs` (default 100) until it returns a truthy value, which is returned.
   * Throws `timed out waiting for WHAT` after `timeoutMs` (default 30000: a bound for loaded machines, not a timing assertion) with BIRD's last log lines.
   */
  async waitFor<T>(check: () => Promise<T | undefined | null | false>, what: string, timeoutMs = 30_000, intervalMs = 100): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    let lastError: unknown;
    while (Date.now() < deadline) {
      try {
        const v = await check();
        if (v) return v;
      } catch (e) {
        lastError = e;
      }
      await sleep(intervalMs);
    }
    const tail = this.log().split('\n').slice(-15).join('\n');
    throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${lastError ? ` (last error: ${String(lastError)})` : ''}\nBIRD log:\n${tail}`);
  }

  /** SIGSTOP: BIRD stops sending KEEPALIVEs (hold timer tests). birdc must not be used until resume(). */
  pause(): void {
    if (this.child?.pid) process.kill(this.child.pid, 'SIGSTOP');
    this.paused = true;
  }

  /** SIGCONT. */
  resume(): void {
    if (this.child?.pid) process.kill(this.child.pid, 'SIGCONT');
    this.paused = false;
  }

  /** Stops BIRD by PID (SIGTERM, SIGKILL after 3 s; resumes it first if paused) and restarts it with the same config. */
  async restart(timeoutMs = 10_000): Promise<void> {
    await this.stopProcess();
    await this.spawn(timeoutMs);
  }

  /** The route trace so far (protocols configured with `trace: true`), see parseRouteTrace. */
  routeTrace(): BirdRouteEvent[] {
    return parseRouteTrace(this.log());
  }

  /** The BIRD log so far ('' when none). */
  log(): string {
    try {
      return readFileSync(this.logPath, 'utf8');
    } catch {
      return '';
    }
  }

  private async stopProcess(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) {
      running.delete(this);
      return;
    }
    if (this.paused) this.resume();
    child.kill('SIGTERM');
    const killer = setTimeout(() => child.kill('SIGKILL'), 3000);
    await this.exited;
    clearTimeout(killer);
    running.delete(this);
  }

  private cleanupDir(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** Stops BIRD by PID and removes its temp dir. Idempotent. */
  async stop(): Promise<void> {
    await this.stopProcess();
    this.child = undefined;
    this.cleanupDir();
  }

  /** Synchronous SIGKILL + dir removal (process 'exit' hook). */
  killNow(): void {
    const child = this.child;
    if (child?.pid && child.exitCode === null && child.signalCode === null) {
      try {
        process.kill(child.pid, 'SIGCONT');
        process.kill(child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    this.cleanupDir();
  }
}
