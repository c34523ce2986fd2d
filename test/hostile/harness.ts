/**
 * The hostile-input suite's harness (issue 35): `herald run` started the way the container image starts it —
 * through deploy/herald with the DaemonSet's `HERALD_MEMORY_LIMIT_MIB=320`, so with its V8 flags
 * (`--max-semi-space-size=1 --max-opt=2 --max-old-space-size=160`) and its malloc settings — under a memory cap of
 * 320 MiB: a memory cgroup of that limit when this machine lets the test make one (cgroup v1 or v2, as root), and in
 * every case a watchdog that samples the process's RSS every 50 ms and fails the test if it ever reaches the limit.
 * Optionally one private BIRD 2 peer (the reference router), a manifests directory and a fake kube-proxy.
 *
 * Everything started is stopped by PID when the test ends (DaemonProcess, Bird).
 */
import { existsSync, mkdirSync, readFileSync, renameSync, rmdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Test } from 'tap';
import { stringify } from 'yaml';
import { Bird, bgpProtocol, freePort } from '../helpers/bird.ts';
import { DaemonProcess, sleep } from '../helpers/daemon-process.ts';
import { loopbackBlock, pathsFor, ROOT } from '../e2e/harness.ts';

export { sleep };

/** The DaemonSet's container memory limit (deploy/kubernetes/daemonset.yaml `limits.memory`), MiB. */
export const POD_LIMIT_MIB = 320;
export const HERALD_AS = 65000;
export const BIRD_AS = 65100;

/** A memory cgroup of `limitMib` this process may create, or undefined (not root, no controller). */
function makeMemoryCgroup(limitMib: number): { procs: string; remove(): void; oomKills(): number } | undefined {
  const name = `herald-hostile-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  const bytes = String(limitMib * 1024 * 1024);
  // cgroup v2 (unified at /sys/fs/cgroup or /sys/fs/cgroup/unified with the memory controller), then v1.
  for (const root of ['/sys/fs/cgroup', '/sys/fs/cgroup/unified']) {
    try {
      if (!readFileSync(join(root, 'cgroup.controllers'), 'utf8').split(/\s+/).includes('memory')) continue;
      const dir = join(root, name);
      mkdirSync(dir);
      writeFileSync(join(dir, 'memory.max'), bytes);
      try {
        writeFileSync(join(dir, 'memory.swap.max'), '0');
      } catch {
        /* no swap accounting */
      }
      return { procs: join(dir, 'cgroup.procs'), remove: () => rmdirQuiet(dir), oomKills: () => Number(/oom_kill (\d+)/.exec(readQuiet(join(dir, 'memory.events')))?.[1] ?? 0) };
    } catch {
      /* not this one */
    }
  }
  try {
    const dir = join('/sys/fs/cgroup/memory', name);
    mkdirSync(dir);
    writeFileSync(join(dir, 'memory.limit_in_bytes'), bytes);
    return { procs: join(dir, 'cgroup.procs'), remove: () => rmdirQuiet(dir), oomKills: () => Number(/oom_kill (\d+)/.exec(readQuiet(join(dir, 'memory.oom_control')))?.[1] ?? 0) };
  } catch {
    return undefined;
  }
}

function readQuiet(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

function rmdirQuiet(dir: string): void {
  for (let i = 0; i < 20; i++) {
    try {
      rmdirSync(dir);
      return;
    } catch {
      // processes still leaving it
    }
  }
}

/** RSS of `pid` in MiB from /proc (0 when gone). */
export function rssMib(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readQuiet(`/proc/${pid}/status`));
  return m ? Number(m[1]) / 1024 : 0;
}

/** Options of {@link startHostileHerald}. */
export interface HostileOptions {
  /** Extra configuration (merged over the base: bgp, admin, stateDir, and the BIRD peer when `bird`); a function gets the addresses. */
  config?: Record<string, unknown> | ((a: { nodeIp: string; birdIp: string; adminPort: number }) => Record<string, unknown>);
  /**
   * Start one BIRD peer (hold time 3 s, eBGP) and put it in the config as peer `bird`: `extra` goes into its BGP
   * protocol, `protocols` (e.g. `protocol bfd {...}`) before it, `peer` is merged into Herald's peer `bird`.
   */
  bird?: boolean | { extra?: string; holdTimeSec?: number; protocols?: string; peer?: Record<string, unknown> };
  /** A manifests directory as the source (`source: {manifests}`), with these files first. */
  manifests?: Record<string, string>;
  /** Memory cap, MiB (default the DaemonSet's 320). */
  limitMib?: number;
  /** More environment for the daemon. */
  env?: Record<string, string>;
  /** Do not wait for /healthz (a start expected to fail). */
  noWait?: boolean;
}

/** A running `herald run` under the pod's memory settings, with its peer and files. */
export interface HostileHerald {
  proc: DaemonProcess;
  dir: string;
  adminPort: number;
  nodeIp: string;
  configPath: string;
  manifests: string;
  bird: Bird | undefined;
  birdIp: string;
  /** Highest RSS sampled so far, MiB. */
  peakRssMib(): number;
  /** Whether the process was put in a real memory cgroup (else only the watchdog). */
  cgroup: boolean;
  /** Writes the config file (atomically) and sends SIGHUP. */
  reload(config: Record<string, unknown>): Promise<void>;
  /** The base config, for reload(): bgp, admin, stateDir, peer and source. */
  baseConfig: Record<string, unknown>;
  /** Writes a manifest file atomically. */
  put(name: string, text: string): void;
  /** GET an admin path as JSON (status code too). */
  get<T = unknown>(path: string): Promise<{ status: number; body: T }>;
  /** GET /metrics text. */
  metrics(): Promise<string>;
  /** Waits until `check` is truthy (the daemon must stay up meanwhile). */
  waitFor<T>(check: () => Promise<T | undefined | null | false> | T | undefined | null | false, what: string, timeoutMs?: number): Promise<T>;
  /** The BGP session with BIRD: Established and its `since`. */
  session(): Promise<{ state: string | undefined; since: string | undefined }>;
  /** Whether BIRD holds a path for `prefix` from Herald. */
  birdHas(prefix: string): Promise<boolean>;
  /** The daemon is alive and /healthz answers within 2 s. */
  healthy(): Promise<boolean>;
  /** Log lines (JSON) so far. */
  logLines(): Record<string, unknown>[];
  /** Asserts the memory stayed under the cap, the process alive. */
  assertContained(t: Test, what: string): void;
}

/**
 * Starts `herald run` as deploy/herald starts it in the DaemonSet (see the module comment), with a BIRD peer and a
 * manifests directory when asked; stopped when `t` ends.
 */
export async function startHostileHerald(t: Test, o: HostileOptions = {}): Promise<HostileHerald> {
  const block = loopbackBlock();
  const nodeIp = `${block}1`;
  const birdIp = `${block}100`;
  const proc = new DaemonProcess('hostile');
  const dir = proc.dir;
  const manifests = join(dir, 'manifests');
  mkdirSync(manifests);
  const put = (name: string, text: string) => {
    writeFileSync(join(dir, `.${name}.tmp`), text);
    renameSync(join(dir, `.${name}.tmp`), join(manifests, name));
  };
  for (const [name, text] of Object.entries(o.manifests ?? {})) put(name, text);
  let bird: Bird | undefined;
  const peers: unknown[] = [];
  if (o.bird) {
    const opt = typeof o.bird === 'object' ? o.bird : {};
    const birdPort = await freePort(birdIp);
    const hold = opt.holdTimeSec ?? 3;
    bird = await Bird.start((opt.protocols ?? '') + bgpProtocol({ name: 'herald', local: birdIp, localPort: birdPort, localAs: BIRD_AS, neighbor: nodeIp, neighborPort: 179, neighborAs: HERALD_AS, passive: true, holdTimeSec: hold, families: ['ipv4'], ...(opt.extra ? { extra: opt.extra } : {}) }));
    t.teardown(() => bird?.stop());
    peers.push({ name: 'bird', address: birdIp, port: birdPort, peerAs: BIRD_AS, localAddress: nodeIp, holdTime: hold, connectRetryTime: 1, ebgpMultihop: 2, families: ['ipv4-unicast'], ...opt.peer });
  }
  const adminPort = await freePort('127.0.0.1');
  const configPath = join(dir, 'herald.yaml');
  const baseConfig: Record<string, unknown> = {
    bgp: { localAs: HERALD_AS },
    peers,
    ...(o.manifests !== undefined ? { source: { manifests } } : {}),
    flapControl: { holdDown: 0, penalty: 0 },
    admin: { address: '127.0.0.1', port: adminPort },
    stateDir: join(dir, 'state'),
  };
  const writeConfig = (c: Record<string, unknown>) => {
    writeFileSync(`${configPath}.tmp`, stringify(c));
    renameSync(`${configPath}.tmp`, configPath);
  };
  writeConfig({ ...baseConfig, ...(typeof o.config === 'function' ? o.config({ nodeIp, birdIp, adminPort }) : o.config) });

  const limitMib = o.limitMib ?? POD_LIMIT_MIB;
  const cg = makeMemoryCgroup(limitMib);
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    PATH: `${dirname(process.execPath)}:${process.env['PATH'] ?? ''}`,
    HERALD_HOME: ROOT,
    HERALD_MEMORY_LIMIT_MIB: String(limitMib),
    ...o.env,
  };
  // The shell puts itself in the cgroup, then becomes deploy/herald, which becomes node: one PID throughout.
  const script = `${cg ? `echo $$ > ${JSON.stringify(cg.procs)} && ` : ''}exec sh ${JSON.stringify(join(ROOT, 'deploy', 'herald'))} "$@"`;
  proc.spawn('sh', ['-c', script, 'herald', 'run', '--config', configPath, '--node-name', 'node-a', '--node-ip', nodeIp], { env });
  t.teardown(async () => {
    await proc.stop(5000);
    cg?.remove();
  });
  let peak = 0;
  const pid = proc.child?.pid as number;
  const sampler = setInterval(() => {
    peak = Math.max(peak, rssMib(pid));
  }, 50);
  t.teardown(() => clearInterval(sampler));

  const get = async <T>(path: string): Promise<{ status: number; body: T }> => {
    const r = await fetch(`http://127.0.0.1:${adminPort}${path}`, { signal: AbortSignal.timeout(10_000) });
    return { status: r.status, body: (await r.json()) as T };
  };
  const h: HostileHerald = {
    proc,
    dir,
    adminPort,
    nodeIp,
    configPath,
    manifests,
    bird,
    birdIp,
    cgroup: cg !== undefined,
    peakRssMib: () => peak,
    baseConfig,
    async reload(c) {
      writeConfig(c);
      proc.child?.kill('SIGHUP');
    },
    put,
    get,
    async metrics() {
      const r = await fetch(`http://127.0.0.1:${adminPort}/metrics`, { signal: AbortSignal.timeout(10_000) });
      return r.text();
    },
    waitFor: (check, what, timeoutMs = 60_000) => proc.waitFor(check, what, timeoutMs, 100),
    async session() {
      const p = await bird?.protocol('herald');
      return { state: p?.bgpState, since: p?.since };
    },
    async birdHas(prefix) {
      return bird !== undefined && (await pathsFor(bird, prefix)).length > 0;
    },
    async healthy() {
      if (!proc.alive) return false;
      try {
        const r = await fetch(`http://127.0.0.1:${adminPort}/healthz`, { signal: AbortSignal.timeout(2000) });
        return r.ok;
      } catch {
        return false;
      }
    },
    logLines() {
      return proc.stdout
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>);
    },
    assertContained(tt, what) {
      tt.ok(proc.alive, `${what}: the daemon is still running`, { stderr: proc.alive ? '' : proc.stderr.slice(-3000) });
      tt.ok(peak < limitMib, `${what}: RSS peaked at ${peak.toFixed(0)} MiB, under the pod's ${limitMib} MiB${cg ? ' (in a memory cgroup of that limit)' : ''}`);
      if (cg) tt.equal(cg.oomKills(), 0, `${what}: no OOM kill in the cgroup`);
    },
  };
  if (!o.noWait) {
    await proc.waitFor(async () => (await h.healthy()) || undefined, `herald admin API on port ${adminPort}`, 60_000, 200);
    if (bird) await h.waitFor(async () => (await h.session()).state === 'Established' || undefined, 'the BGP session with BIRD Established');
  }
  return h;
}

/** True when `path` exists (a helper for fixtures). */
export function exists(path: string): boolean {
  return existsSync(path);
}
