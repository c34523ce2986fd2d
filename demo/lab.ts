/**
 * The demo lab: one BIRD 2 router and N Herald "nodes", each node in its own network namespace joined to the router
 * by a veth pair on a bridge (or, where namespaces are not available, on distinct 127.0.10.x loopback addresses).
 * Every process started is tracked by PID and stopped by PID; every namespace created is deleted — also on Ctrl-C.
 *
 * Addresses (all inside namespaces this lab creates, or on loopback): router 192.0.2.1, nodes 192.0.2.11..;
 * VIPs from 203.0.113.0/24 (RFC 5737 documentation ranges).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync, existsSync, readFileSync, openSync, closeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export type LabMode = 'netns' | 'loopback';

export interface LabNode {
  readonly name: string;
  /** The node's address toward the router (its InternalIP in the manifests). */
  readonly ip: string;
  /** Network namespace, in netns mode. */
  readonly netns?: string;
}

export interface Lab {
  readonly mode: LabMode;
  readonly dir: string;
  readonly routerIp: string;
  readonly routerPort: number;
  readonly routerAs: number;
  readonly nodeAs: number;
  readonly nodes: readonly LabNode[];
  readonly routerNetns?: string;
}

const PREFIX = `hd${process.pid % 100000}`;
const children = new Set<ChildProcess>();
const namespaces: string[] = [];
let cleanedUp = false;

function run(cmd: string, args: string[], opts: { quiet?: boolean } = {}): string {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  if (r.status !== 0) {
    if (opts.quiet) return '';
    throw new Error(`${cmd} ${args.join(' ')} failed: ${(r.stderr || r.stdout || String(r.error)).trim()}`);
  }
  return r.stdout;
}

function which(cmd: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${cmd}`], { encoding: 'utf8' }).status === 0;
}

/**
 * Checks what the demo needs. Returns human-readable problems, each with the exact command that fixes it.
 * Namespaces are optional: without root or `ip netns`, the lab runs on loopback addresses instead.
 */
export function checkPrerequisites(): { problems: string[]; mode: LabMode } {
  const problems: string[] = [];
  if (!which('bird') || !which('birdc')) problems.push('BIRD 2 is missing: sudo apt-get install -y bird2   (or: bash scripts/setup.sh)');
  if (!which('ip')) problems.push('iproute2 is missing: sudo apt-get install -y iproute2');
  const major = Number(process.versions.node.split('.')[0]);
  if (major < 24) problems.push(`Node.js ${process.versions.node} is too old: run the demo through npm (npm ci && npm run demo), which brings Node 24`);
  let mode: LabMode = 'loopback';
  if (problems.length === 0 && process.getuid?.() === 0 && process.env.HERALD_DEMO_LOOPBACK !== '1') {
    const probe = `${PREFIX}probe`;
    if (spawnSync('ip', ['netns', 'add', probe]).status === 0) {
      spawnSync('ip', ['netns', 'del', probe]);
      mode = 'netns';
    }
  }
  return { problems, mode };
}

/** Creates the lab topology (no processes yet). */
export function createLab(mode: LabMode, nodeCount: number): Lab {
  const dir = mkdtempSync(join(tmpdir(), 'herald-demo-'));
  const nodes: LabNode[] = [];
  if (mode === 'netns') {
    const router = `${PREFIX}-router`;
    run('ip', ['netns', 'add', router]);
    namespaces.push(router);
    run('ip', ['-n', router, 'link', 'set', 'lo', 'up']);
    run('ip', ['-n', router, 'link', 'add', 'br0', 'type', 'bridge']);
    run('ip', ['-n', router, 'addr', 'add', '192.0.2.1/24', 'dev', 'br0']);
    run('ip', ['-n', router, 'link', 'set', 'br0', 'up']);
    for (let i = 1; i <= nodeCount; i++) {
      const ns = `${PREFIX}-node${i}`;
      const ip = `192.0.2.${10 + i}`;
      run('ip', ['netns', 'add', ns]);
      namespaces.push(ns);
      run('ip', ['-n', ns, 'link', 'set', 'lo', 'up']);
      // Create the pair inside the node namespace, then move one end to the router and enslave it to the bridge.
      run('ip', ['-n', ns, 'link', 'add', 'eth0', 'type', 'veth', 'peer', 'name', `n${i}`]);
      run('ip', ['-n', ns, 'link', 'set', `n${i}`, 'netns', router]);
      run('ip', ['-n', router, 'link', 'set', `n${i}`, 'master', 'br0']);
      run('ip', ['-n', router, 'link', 'set', `n${i}`, 'up']);
      run('ip', ['-n', ns, 'addr', 'add', `${ip}/24`, 'dev', 'eth0']);
      run('ip', ['-n', ns, 'link', 'set', 'eth0', 'up']);
      nodes.push({ name: `node${i}`, ip, netns: ns });
    }
    return { mode, dir, routerIp: '192.0.2.1', routerPort: 179, routerAs: 64500, nodeAs: 64512, nodes, routerNetns: router };
  }
  for (let i = 1; i <= nodeCount; i++) nodes.push({ name: `node${i}`, ip: `127.0.10.${10 + i}` });
  return { mode, dir, routerIp: '127.0.10.1', routerPort: 11790, routerAs: 64500, nodeAs: 64512, nodes };
}

/** Spawns a tracked process, in `netns` when given. Output goes to `logFile`. */
export function spawnTracked(cmd: string, args: string[], opts: { netns?: string; logFile: string; env?: NodeJS.ProcessEnv }): ChildProcess {
  const argv = opts.netns ? ['ip', ['netns', 'exec', opts.netns, cmd, ...args]] as const : [cmd, args] as const;
  const out = openLog(opts.logFile);
  const child = spawn(argv[0], argv[1], { stdio: ['ignore', out, out], env: { ...process.env, ...opts.env } });
  closeSync(out);
  children.add(child);
  child.on('exit', () => children.delete(child));
  return child;
}

/** A file descriptor for a child's stdout/stderr, in append mode so a restarted process keeps the earlier log. */
function openLog(file: string): number {
  return openSync(file, 'a');
}

/** Stops one process by PID: SIGTERM, then SIGKILL after `graceMs`. */
export async function stopProcess(child: ChildProcess, graceMs = 5000, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const done = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill(signal);
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await done;
  clearTimeout(timer);
}

/** Writes the BIRD config for the lab and starts BIRD. */
export async function startBird(lab: Lab): Promise<{ child: ChildProcess; birdc: (cmd: string) => string }> {
  const conf = join(lab.dir, 'bird.conf');
  const sock = join(lab.dir, 'bird.ctl');
  const loopback = lab.mode === 'loopback';
  const peers = lab.nodes
    .map(
      (n) => `protocol bgp ${n.name} from nodes {
  neighbor ${n.ip} as ${lab.nodeAs};
}`,
    )
    .join('\n');
  writeFileSync(
    conf,
    `# BIRD 2 router of the Herald demo
router id 192.0.2.1;
log "${join(lab.dir, 'bird.log')}" all;
protocol device {}
template bgp nodes {
  local ${lab.routerIp} ${loopback ? `port ${lab.routerPort} ` : ''}as ${lab.routerAs};
  ${loopback ? 'multihop;\n  strict bind yes;' : ''}
  passive yes;
  graceful restart on;
  long lived graceful restart off;
  ipv4 { import all; export none; };
}
${peers}
`,
  );
  const child = spawnTracked('bird', ['-f', '-c', conf, '-s', sock, '-P', join(lab.dir, 'bird.pid')], { netns: lab.routerNetns, logFile: join(lab.dir, 'bird.out') });
  const birdc = (cmd: string): string => {
    const r = spawnSync('birdc', ['-s', sock, ...cmd.split(' ')], { encoding: 'utf8' });
    return r.stdout ?? '';
  };
  for (let i = 0; i < 100 && !existsSync(sock); i++) await sleep(100);
  if (!existsSync(sock)) throw new Error(`BIRD did not start; see ${join(lab.dir, 'bird.out')}: ${safeRead(join(lab.dir, 'bird.out'))}`);
  return { child, birdc };
}

function safeRead(file: string): string {
  try {
    return readFileSync(file, 'utf8').slice(-2000);
  } catch {
    return '';
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Stops every tracked process (by PID) and deletes every namespace this lab created. Idempotent. */
export async function cleanup(lab?: Lab, keepDir = false): Promise<void> {
  if (cleanedUp) return;
  cleanedUp = true;
  await Promise.all([...children].map((c) => stopProcess(c, 3000)));
  for (const ns of namespaces.splice(0)) run('ip', ['netns', 'del', ns], { quiet: true });
  if (lab && !keepDir) rmSync(lab.dir, { recursive: true, force: true });
}

/** One path of a route in BIRD's `show route all` output. */
export interface BirdPath {
  readonly protocol: string;
  readonly nextHop?: string;
  readonly communities: string[];
  readonly best: boolean;
  readonly stale: boolean;
}

/** Parses `birdc show route all` into prefix → paths. */
export function parseBirdRoutes(text: string): Map<string, BirdPath[]> {
  const routes = new Map<string, BirdPath[]>();
  let current: string | undefined;
  let path: { protocol: string; nextHop?: string; communities: string[]; best: boolean; stale: boolean } | undefined;
  for (const line of text.split('\n')) {
    const head = /^(\S+\/\d+)\s+\S+\s+\[(\S+)[^\]]*\]\s*(\*)?/.exec(line);
    const more = /^\s+(?:unicast|unreachable|blackhole|prohibit)\s+\[(\S+)[^\]]*\]\s*(\*)?/.exec(line);
    if (head) {
      current = head[1] as string;
      path = { protocol: head[2] as string, communities: [], best: !!head[3], stale: /stale/i.test(line) };
      routes.set(current, [...(routes.get(current) ?? []), path]);
    } else if (more && current) {
      path = { protocol: more[1] as string, communities: [], best: !!more[2], stale: /stale/i.test(line) };
      routes.set(current, [...(routes.get(current) ?? []), path]);
    } else if (path) {
      const nh = /BGP\.next_hop:\s+(\S+)/.exec(line);
      if (nh) path.nextHop = nh[1];
      const comm = /BGP\.community:\s+(.*)$/.exec(line);
      if (comm) path.communities = (comm[1] as string).match(/\(\d+,\d+\)/g)?.map((c) => c.slice(1, -1).replace(',', ':')) ?? [];
    }
  }
  return routes;
}

/** Last resort on any exit path (uncaught error, a closed stdout pipe): kill by PID and delete namespaces, synchronously. */
function cleanupSync(): void {
  for (const c of children) c.kill('SIGKILL');
  for (const ns of namespaces.splice(0)) spawnSync('ip', ['netns', 'del', ns]);
}
process.on('exit', cleanupSync);
// `npm run demo | head` closes the pipe early: keep going (and clean up at the end) instead of dying on EPIPE.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code !== 'EPIPE') throw err;
});

process.once('SIGINT', () => {
  void cleanup().then(() => process.exit(130));
});
process.once('SIGTERM', () => {
  void cleanup().then(() => process.exit(143));
});
