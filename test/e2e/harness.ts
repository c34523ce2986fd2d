/**
 * Shared pieces of the end-to-end tests (test/e2e/*.test.ts): a cluster of `herald run` child processes, one per
 * simulated node, each on its own 127.x address, all peering (eBGP) with ONE private BIRD 2; per-node fake kube-proxy
 * health servers; a kubeconfig for the fake apiserver; and small helpers that read the paths BIRD holds for a prefix.
 *
 * Addresses (see ../shared/design/peers-on-one-machine.md): nodes are 127.A.B.1, .2, .3 …; BIRD is 127.A.B.100 with
 * one passive `protocol bgp` per node (strict bind, multihop, same port). Every process is stopped by PID
 * (DaemonProcess / Bird harnesses), and each has a process-exit hook so a failing test leaks nothing.
 */
import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Test } from 'tap';
import { stringify } from 'yaml';
import { Bird, bgpProtocol, freePort, parseRoutes } from '../helpers/bird.ts';
import type { BirdRoute } from '../helpers/bird.ts';
import { DaemonProcess } from '../helpers/daemon-process.ts';
import { startFakeKubeProxy } from '../helpers/fake-kube-proxy.ts';
import type { FakeKubeProxy } from '../helpers/fake-kube-proxy.ts';

export const ROOT = join(import.meta.dirname, '..', '..');

let subnetCounter = 0;
/** A /24-ish block of loopback addresses private to this test process: `127.A.B.` (append the host number). */
export function loopbackBlock(): string {
  const n = (process.pid * 13 + 7919 + subnetCounter++) % 60000;
  const a = 100 + ((n >> 8) % 150);
  return `127.${a}.${n & 0xff}.`;
}

/**
 * Writes a kubeconfig (plain http with insecure-skip-tls-verify, which client-node requires for http; no credentials) pointing at `serverUrl` (the fake apiserver) to `path`.
 * @returns path
 */
export function writeKubeconfig(path: string, serverUrl: string): string {
  const kc = {
    apiVersion: 'v1',
    kind: 'Config',
    // client-node refuses plain http unless skipTLSVerify is set (KubeConfig.createDispatcherOptions).
    clusters: [{ name: 'fake', cluster: { server: serverUrl, 'insecure-skip-tls-verify': true } }],
    users: [{ name: 'tester', user: {} }],
    contexts: [{ name: 'fake', context: { cluster: 'fake', user: 'tester', namespace: 'default' } }],
    'current-context': 'fake',
  };
  writeFileSync(path, stringify(kc));
  return path;
}

/** One simulated node. */
export interface NodeSpec {
  /** Kubernetes node name, e.g. 'node-a'; also the BIRD protocol name with '-' removed. */
  name: string;
  /** Node IP (127.x): Herald's BGP localAddress and --node-ip. */
  ip: string;
}

/** BIRD protocol name for a node (protocol names must be identifiers and not BIRD keywords). */
export function protoName(node: string): string {
  return `h_${node.replace(/[^A-Za-z0-9]/g, '_')}`;
}

/**
 * Start ONE BIRD (AS `birdAs`, on `ip:port`) with a passive eBGP protocol per node (AS `heraldAs`). `gracefulRestart`:
 * BIRD helps our graceful restart (`graceful restart on`, 120 s); `trace`: BIRD logs every route it adds or removes
 * (Bird.routeTrace()).
 */
export async function startBird(o: { ip: string; port: number; birdAs: number; heraldAs: number; nodes: NodeSpec[]; gracefulRestart?: boolean; trace?: boolean }): Promise<Bird> {
  const body = o.nodes
    .map((n) =>
      bgpProtocol({
        name: protoName(n.name),
        local: o.ip,
        localPort: o.port,
        localAs: o.birdAs,
        neighbor: n.ip,
        neighborPort: 179,
        neighborAs: o.heraldAs,
        passive: true,
        holdTimeSec: 30,
        families: ['ipv4'],
        ...(o.gracefulRestart ? { extra: '  graceful restart on;\n  graceful restart time 120;' } : {}),
        ...(o.trace ? { trace: true } : {}),
      }),
    )
    .join('');
  return Bird.start(body, { routerId: '10.255.255.1' });
}

/**
 * The protocols (BIRD names) that currently give BIRD a path for `prefix`, sorted. Reads `show route all table master4`
 * (every path, best or not).
 */
export async function pathsFor(bird: Bird, prefix: string): Promise<string[]> {
  // The whole table, filtered here: `show route for P` exits non-zero with "Network not found" when P is absent.
  const out = await bird.birdc(['show', 'route', 'all', 'table', 'master4']);
  return pathsIn(out, prefix);
}

/** Parses `show route all` text and returns the protocols holding exactly `prefix`, sorted. */
export function pathsIn(text: string, prefix: string): string[] {
  return parseRoutes(text)
    .filter((r: BirdRoute) => r.prefix === prefix)
    .map((r: BirdRoute) => r.protocol)
    .sort();
}

/** Per-node fake kube-proxy servers, all on the same port (healthCheckNodePort and healthz share it). */
export async function startKubeProxies(ips: string[]): Promise<{ port: number; proxies: Map<string, FakeKubeProxy>; close(): Promise<void> }> {
  const proxies = new Map<string, FakeKubeProxy>();
  let lastErr: unknown;
  for (let attempt = 0; attempt < 5; attempt++) {
    const port = await freePort(ips[0]);
    try {
      for (const ip of ips) proxies.set(ip, await startFakeKubeProxy({ host: ip, port }));
      return { port, proxies, close: async () => void (await Promise.all([...proxies.values()].map((p) => p.close()))) };
    } catch (err) {
      lastErr = err;
      await Promise.all([...proxies.values()].map((p) => p.close()));
      proxies.clear();
    }
  }
  throw new Error(`cannot bind fake kube-proxy servers on one port for ${ips.join(', ')}: ${String(lastErr)}`);
}

/** A running `herald run` child and its admin port. */
export interface HeraldNode {
  proc: DaemonProcess;
  adminPort: number;
}

/** A Herald started by {@link startHerald}, which can be started again. */
export interface RestartableHerald extends HeraldNode {
  /** Spawns `herald run` again with the same configuration and stateDir (after proc.kill()): a restart. */
  respawn(): void;
}

/** Options of {@link startHerald}. */
export interface HeraldNodeOptions {
  node: NodeSpec;
  heraldAs: number;
  /** The one BIRD the file's peer `bird` dials; without it, `peers` (default none). */
  bird?: { ip: string; port: number; as: number };
  /** The file's peers when there is no `bird` (e.g. none: peers from BGPPeer objects). */
  peers?: readonly Record<string, unknown>[];
  /** Extra environment of the process (e.g. POD_NAMESPACE). */
  env?: NodeJS.ProcessEnv;
  /** `{kubernetes: {kubeconfig}}` or `{manifests: dir}`. */
  source: Record<string, unknown>;
  /** kube-proxy health port on the node IP (Kubernetes source only). */
  kubeProxyPort?: number;
  /** Graceful restart on the BIRD peer (restart time 120 s). */
  gracefulRestart?: boolean;
  /** RFC 8326 graceful shutdown on the BIRD peer, with this wait (seconds). */
  gracefulShutdownWaitSec?: number;
  /** Pass `--node-ip` (default true; false: the Node object's addresses are probed). */
  nodeIpFlag?: boolean;
  /** Top-level config keys added to (or replacing) the ones above, e.g. `advertisements`, `shutdown`. */
  config?: Record<string, unknown>;
  /** Keys added to the peer's config, e.g. `nextHop` (FRR refuses a 127/8 next hop). */
  peer?: Record<string, unknown>;
  /** HERALD_ADMIN_TOKEN of the process (the mutating admin endpoints: drain, undrain, reset). */
  adminToken?: string;
}

/** A folder for the manifests source, removed at `t`'s teardown, and how to write one file of it. */
export interface ManifestsDir {
  /** The folder to give `source.manifests`. */
  readonly manifests: string;
  /** Writes `name` atomically (temp file + rename: a reader never sees half a file): objects as YAML documents, or text. */
  readonly put: (name: string, docs: readonly object[] | string) => void;
}

/** A temporary manifests folder (under a `herald-e2e-<what>-` temp dir). */
export function manifestsDir(t: Test, what: string): ManifestsDir {
  const dir = mkdtempSync(join(tmpdir(), `herald-e2e-${what}-`));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const manifests = join(dir, 'manifests');
  mkdirSync(manifests);
  const put = (name: string, docs: readonly object[] | string) => {
    const tmp = join(dir, `.${name}.tmp`);
    writeFileSync(tmp, typeof docs === 'string' ? docs : docs.map((d) => stringify(d)).join('---\n'));
    renameSync(tmp, join(manifests, name));
  };
  return { manifests, put };
}

/**
 * Spawns `herald run --config F --node-name N --node-ip A` (bin/herald.js under this Node) with a config that peers
 * with BIRD from the node IP, fast health checks (interval 0.5 s, rise 1, fall 1), flap control off (tests need
 * quick re-announcements), and the admin API on a free port of 127.0.0.1.
 */
export async function startHerald(o: HeraldNodeOptions): Promise<RestartableHerald> {
  const proc = new DaemonProcess(`e2e-${o.node.name}`);
  const adminPort = await freePort('127.0.0.1');
  const config: Record<string, unknown> = {
    bgp: { localAs: o.heraldAs },
    peers: o.bird
      ? [
          {
            name: 'bird',
            address: o.bird.ip,
            port: o.bird.port,
            peerAs: o.bird.as,
            localAddress: o.node.ip,
            holdTime: 30,
            connectRetryTime: 1,
            ebgpMultihop: 2,
            families: ['ipv4-unicast'],
            ...(o.gracefulRestart ? { gracefulRestart: { enabled: true, restartTime: 120 } } : {}),
            ...(o.gracefulShutdownWaitSec !== undefined ? { gracefulShutdown: { enabled: true, waitTime: o.gracefulShutdownWaitSec } } : {}),
            ...o.peer,
          },
        ]
      : (o.peers ?? []),
    source: o.source,
    healthChecks: { interval: 0.5, timeout: 0.4, rise: 1, fall: 1 },
    flapControl: { holdDown: 0, penalty: 0 },
    admin: { address: '127.0.0.1', port: adminPort },
    stateDir: join(proc.dir, 'state'),
    logLevel: 'info',
  };
  if (o.kubeProxyPort !== undefined) config['kubeProxy'] = { healthzPort: o.kubeProxyPort, checkServices: true };
  Object.assign(config, o.config);
  // Without --node-ip the router id must come from the configuration (it defaults to an IPv4 node IP).
  if (o.nodeIpFlag === false) config['bgp'] = { localAs: o.heraldAs, routerId: o.node.ip };
  const configPath = join(proc.dir, 'herald.yaml');
  writeFileSync(configPath, stringify(config));
  const args = [join(ROOT, 'bin', 'herald.js'), 'run', '--config', configPath, '--node-name', o.node.name, ...(o.nodeIpFlag === false ? [] : ['--node-ip', o.node.ip])];
  const env = o.adminToken !== undefined || o.env !== undefined ? { env: { ...process.env, ...o.env, ...(o.adminToken !== undefined ? { HERALD_ADMIN_TOKEN: o.adminToken } : {}) } } : {};
  const respawn = (): void => proc.spawn(process.execPath, args, env);
  respawn();
  return { proc, adminPort, respawn };
}

/** The last log lines (and stderr, exit state) of each Herald, for failure messages. */
export function heraldLogs(heralds: readonly HeraldNode[], names: readonly string[], lines = 12): string {
  return heralds
    .map((h, i) => {
      const state = h.proc.alive ? 'running' : `exited ${h.proc.child?.exitCode ?? h.proc.child?.signalCode ?? '?'}`;
      const out = h.proc.stdout
        .split('\n')
        .slice(-lines)
        .map((l) => l.slice(0, 400))
        .join('\n');
      return `--- ${names[i] ?? i} (${state}; last log lines)\n${out}${h.proc.stderr.slice(-1000)}`;
    })
    .join('\n');
}

/** Runs `wait`; on failure rethrows its error with the Heralds' recent logs appended. */
export async function withLogs<T>(wait: () => Promise<T>, heralds: readonly HeraldNode[], names: readonly string[]): Promise<T> {
  try {
    return await wait();
  } catch (err) {
    throw new Error(`${(err as Error).message}\n${heraldLogs(heralds, names)}`, { cause: err });
  }
}

/** GET http://127.0.0.1:PORT/PATH as JSON (undefined on any error). */
export async function adminJson(port: number, path: string): Promise<unknown> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}${path}`, { signal: AbortSignal.timeout(3000) });
    return res.ok ? await res.json() : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Waits until the Herald answers on its admin API (`GET /healthz` 200), i.e. it has loaded its modules, built the
 * daemon and started. Start-up of several Heralds on a loaded 2-CPU machine can take tens of seconds, mostly module
 * loading. Throws early with its stderr if the process exits.
 */
export async function waitHeraldUp(h: HeraldNode, timeoutMs = 120_000): Promise<void> {
  await h.proc.waitFor(
    async () => {
      const res = await fetch(`http://127.0.0.1:${h.adminPort}/healthz`, { signal: AbortSignal.timeout(3000) });
      return res.ok;
    },
    `herald admin API on port ${h.adminPort}`,
    timeoutMs,
    200,
  );
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
