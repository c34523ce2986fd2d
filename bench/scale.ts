/**
 * bench/scale.ts — what Herald costs the apiserver and etcd, measured on PODS real `herald run` processes
 * (`npm run bench:scale`) and projected to 100, 1,000 and 5,000 nodes (docs/scale.md). Not a test: prints figures,
 * asserts nothing. Stops every process it started, by PID.
 *
 * - The fake apiserver (test/helpers/fake-apiserver.ts, in this process: streaming lists, bookmarks every minute as
 *   kube-apiserver's watch cache sends them) holds PODS Nodes and SERVICES LoadBalancer Services (Local), one
 *   EndpointSlice each with 3 endpoints on 3 nodes, plus HEADLESS headless Services with their slices, all in the
 *   shape a kube-apiserver serves them (`served*` of test/helpers/k8s-objects.ts), and Herald's CRDs.
 * - Every Herald reaches it through bench/counting-proxy.ts, one path prefix per node: requests by verb, resource and
 *   code, LISTs from etcd or the watch cache, watch opens, bytes each way, watch events by resource, and the size of
 *   every object a write stores (what etcd keeps).
 * - What ships (deploy/kubernetes/): PODS `herald run --separate-controller` processes as the DaemonSet starts them
 *   (deploy/herald; node-00 … node-NN, `--node-name`: no Lease, no Event, only reads, its own BGPNodeStatus and its
 *   Node's drain annotation), no BGP peer (the apiserver side is measured), kube-proxy's checks answered by one fake
 *   kube-proxy; and CONTROLLERS `herald controller` replicas as the Deployment starts them (controller-0 …, POD_NAME
 *   their holder identity: the Leases herald-allocator and herald-status, the allocator, the objects' status, the
 *   aggregated refusal Events), started first, as a Deployment already runs when the DaemonSet rolls. The controller
 *   is counted apart: its rates do not grow with the nodes. STANDALONE=1 runs the one-process install instead (every
 *   pod `herald run` without --separate-controller, no controller).
 *
 * Every BOUNDED-th Service is announced through an advertisement with `maxNodesPerVip: 2` (default 10; 0: none), so
 * the pods read the node set the controller publishes (src/k8s/node-set.ts) instead of every Node.
 *
 * Phases, each counted on its own: start (spawn → every pod ready), quiet (QUIET_SEC: nothing changes but the
 * kubelets' Node status updates, each Node once every 5 minutes), eligibility (ELIGIBILITY_CHANGES, default 10: a
 * Node NotReady or Ready again, 7 s apart; what reaches the pods is that Node's node-set shard), churn (CHURN_SEC: FLIPS_PER_SEC EndpointSlice
 * readiness flips a second across the cluster), then the faults of FAULTS: `restart` (the apiserver refuses
 * connections for 15 s, etcd compacted meanwhile, then 90 s after), `storm` (30 s of 429 with Retry-After: 1 for
 * every request, then 60 s), `partition` (node-00 cut off for 60 s, then 90 s).
 *
 * Output: a table of per-pod rates per phase, one of the controller Deployment's rates (all its replicas together),
 * the objects Herald keeps in etcd, and the projection of every target of issue 31 to 100, 1,000 and 5,000 nodes:
 * per-pod rate × nodes + the controller's rate (JSON too, with OUT=file).
 *
 * Environment: PODS (default 50), SERVICES (default 10000), HEADLESS (default 500), QUIET_SEC (default 660: longer
 * than the longest watch timeout, 10 min), CHURN_SEC (default 60), FLIPS_PER_SEC (default 20), FAULTS (default
 * "restart,storm,partition"; "" for none), CONTROLLERS (default 2, the Deployment's replicas), STANDALONE (1: see
 * above), BOUNDED, ELIGIBILITY_CHANGES (see above), MEMORY_LIMIT_MIB (default the DaemonSet's limit), OUT (a JSON file).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { stringify } from 'yaml';
import { HERALD_GROUP, HERALD_PLURALS, HERALD_VERSION } from '../src/k8s/herald-kinds.ts';
import type { HeraldKind } from '../src/k8s/herald-kinds.ts';
import { FakeApiServer } from '../test/helpers/fake-apiserver.ts';
import { startFakeKubeProxy } from '../test/helpers/fake-kube-proxy.ts';
import { node, servedNode, servedService, servedSlice, service, slice } from '../test/helpers/k8s-objects.ts';
import { freePort } from '../test/helpers/bird.ts';
import { CountingProxy } from './counting-proxy.ts';
import type { NodeCounts } from './counting-proxy.ts';

const PODS = Number(process.env.PODS ?? 50);
const SERVICES = Number(process.env.SERVICES ?? 10_000);
const HEADLESS = Number(process.env.HEADLESS ?? 500);
const QUIET_SEC = Number(process.env.QUIET_SEC ?? 660);
const CHURN_SEC = Number(process.env.CHURN_SEC ?? 60);
const FLIPS_PER_SEC = Number(process.env.FLIPS_PER_SEC ?? 20);
const FAULTS = (process.env.FAULTS ?? 'restart,storm,partition').split(',').map((s) => s.trim()).filter(Boolean);
const OUT = process.env.OUT ?? '';
const STANDALONE = process.env.STANDALONE === '1';
const CONTROLLERS = STANDALONE ? 0 : Number(process.env.CONTROLLERS ?? 2);
const ROOT = join(import.meta.dirname, '..');
const LIMIT_MIB = process.env.MEMORY_LIMIT_MIB ?? /limits:\s*\n\s*memory: (\d+)Mi/.exec(readFileSync(join(ROOT, 'deploy', 'kubernetes', 'daemonset.yaml'), 'utf8'))?.[1] ?? '';
/** A kubelet updates its Node's status at least this often (nodeStatusReportFrequency), s. */
const KUBELET_REPORT_SEC = 300;
/** Eligibility changes of the `eligibility` phase (a Node NotReady, then Ready again), each ELIGIBILITY_GAP_SEC apart. */
const ELIGIBILITY_CHANGES = Number(process.env.ELIGIBILITY_CHANGES ?? 10);
const ELIGIBILITY_GAP_SEC = 7;
/** Every BOUNDED-th Service is selected by the advertisement with maxNodesPerVip (0: no such advertisement). */
const BOUNDED = Number(process.env.BOUNDED ?? 10);
/** Reboots per node in the two eligibility models of the projection: one a week, and every node within a day. */
const WEEK_SEC = 7 * 86_400;
const DAY_SEC = 86_400;
const SIZES = [100, 1000, 5000];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const nodeName = (n: number): string => `node-${String(n).padStart(2, '0')}`;
const controllerName = (n: number): string => `controller-${n}`;
const isController = (name: string): boolean => name.startsWith('controller-');
/** The counts of the nodes' pods and those of the controller's replicas, apart. */
const split = (counts: Map<string, NodeCounts>): { pods: Map<string, NodeCounts>; controller: Map<string, NodeCounts> } => ({
  pods: new Map([...counts].filter(([n]) => !isController(n))),
  controller: new Map([...counts].filter(([n]) => isController(n))),
});
const svcName = (i: number): string => `svc-${String(i).padStart(5, '0')}`;
const vipOf = (i: number): string => {
  const v = (0x0ac80000 + i) >>> 0;
  return `${v >>> 24}.${(v >>> 16) & 255}.${(v >>> 8) & 255}.${v & 255}`;
};
const nodesOf = (i: number): number[] => [i % PODS, (i + 17) % PODS, (i + 33) % PODS];
/** The advertisements of every pod and controller: all LoadBalancer VIPs, every BOUNDED-th from at most 2 nodes. */
const ADVERTISEMENTS =
  BOUNDED > 0
    ? [
        { name: 'lb', addressKinds: ['loadBalancer'], serviceSelector: { matchExpressions: [{ key: 'bench/bounded', operator: 'DoesNotExist' }] } },
        { name: 'bounded', addressKinds: ['loadBalancer'], serviceSelector: { matchLabels: { 'bench/bounded': 'yes' } }, nodeSelector: { matchExpressions: [{ key: 'kubernetes.io/os', operator: 'In', values: ['linux'] }] }, maxNodesPerVip: 2 },
      ]
    : undefined;
const sliceOf = (i: number, ready: (n: number) => boolean) =>
  servedSlice(slice(`${svcName(i)}-1`, svcName(i), nodesOf(i).map((n, k) => [`10.${100 + k}.${(i >> 8) & 255}.${i & 255}`, nodeName(n), { ready: ready(n) }])), i);

/** One `herald run` or `herald controller` process. */
interface Pod {
  /** Its node (node-NN), or its replica's name (controller-N). */
  readonly node: string;
  /** Its readiness URL's port: the admin API of `herald run`, the probes listener of `herald controller`. */
  readonly pid: number;
  readonly adminPort: number;
  readonly out: () => string;
  readonly exited: Promise<void>;
  /** The exit code or signal once it exited, else undefined. */
  readonly exit: () => string | undefined;
}

/** `herald run` as the DaemonSet starts it (deploy/kubernetes/daemonset.yaml), or `herald controller` as the Deployment does (controller.yaml). */
function spawnPod(node: string, configPath: string, adminPort: number, env: NodeJS.ProcessEnv): Pod {
  let out = '';
  const args = isController(node)
    ? ['controller', '--config', configPath, '--listen', `127.0.0.1:${adminPort}`]
    : ['run', '--config', configPath, '--node-name', node, '--node-ip', '127.0.0.1', ...(STANDALONE ? [] : ['--separate-controller'])];
  const child = spawn('sh', [join(ROOT, 'deploy', 'herald'), ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: isController(node) ? { ...env, POD_NAME: node } : env });
  const keep = (d: Buffer) => {
    out = (out + d.toString()).slice(-20_000);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  if (child.pid === undefined) throw new Error(`${node}: herald did not start`);
  let exit: string | undefined;
  const exited = new Promise<void>((resolve) =>
    child.once('exit', (code, signal) => {
      exit = signal ?? String(code);
      resolve();
    }),
  );
  return { node, pid: child.pid, adminPort, out: () => out, exited, exit: () => exit };
}

async function ready(p: Pod): Promise<boolean> {
  try {
    return (await fetch(`http://127.0.0.1:${p.adminPort}/readyz`, { signal: AbortSignal.timeout(5000) })).status === 200;
  } catch {
    return false;
  }
}

/** A phase's counts summed over pods, per pod and per second. */
interface PhaseFigures {
  readonly phase: string;
  readonly seconds: number;
  readonly pods: number;
  /** Per pod per second. */
  readonly requestsPerSec: number;
  readonly byVerb: Record<string, number>;
  readonly leaseRequestsPerSec: number;
  readonly etcdListsPerPod: number;
  readonly cacheListsPerPod: number;
  readonly watchOpensPerSec: number;
  readonly bytesOutPerSec: number;
  readonly bytesInPerSec: number;
  readonly nodeEventBytesPerSec: number;
  readonly writeBytesPerSec: number;
  readonly writesPerSec: Record<string, number>;
  readonly eventWritesPerSec: number;
  /** Of those, new Event objects (the rest raise the count of one written before). */
  readonly eventCreatesPerSec: number;
  readonly code429: number;
  readonly agents: string[];
}

function figures(phase: string, seconds: number, counts: Map<string, NodeCounts>, pods: number): PhaseFigures {
  const perPod = (n: number) => n / pods / seconds;
  let requests = 0;
  let lease = 0;
  let etcdLists = 0;
  let cacheLists = 0;
  let watchOpens = 0;
  let bytesOut = 0;
  let bytesIn = 0;
  let nodeBytes = 0;
  let writeBytes = 0;
  let code429 = 0;
  let eventWrites = 0;
  let eventCreates = 0;
  const byVerb: Record<string, number> = {};
  const writes: Record<string, number> = {};
  const agents = new Set<string>();
  for (const c of counts.values()) {
    for (const [k, n] of c.requests) {
      const [verb = '', resource = '', code = ''] = k.split(' ');
      requests += n;
      byVerb[verb] = (byVerb[verb] ?? 0) + n;
      if (resource === 'leases') lease += n;
      if (code === '429') code429 += n;
    }
    etcdLists += c.etcdLists;
    cacheLists += c.cacheLists;
    watchOpens += c.watchOpens;
    bytesOut += c.bytesOut;
    bytesIn += c.bytesIn;
    nodeBytes += c.watchEvents.get('nodes')?.bytes ?? 0;
    for (const [r, w] of c.writes) {
      writeBytes += w.bytes;
      writes[r] = (writes[r] ?? 0) + w.count;
      if (r.endsWith(' events')) eventWrites += w.count;
      if (r === 'create events') eventCreates += w.count;
    }
    for (const a of c.agents) agents.add(a);
  }
  return {
    phase,
    seconds,
    pods,
    requestsPerSec: perPod(requests),
    byVerb: Object.fromEntries(Object.entries(byVerb).map(([k, n]) => [k, perPod(n)])),
    leaseRequestsPerSec: perPod(lease),
    etcdListsPerPod: etcdLists / pods,
    cacheListsPerPod: cacheLists / pods,
    watchOpensPerSec: perPod(watchOpens),
    bytesOutPerSec: perPod(bytesOut),
    bytesInPerSec: perPod(bytesIn),
    nodeEventBytesPerSec: perPod(nodeBytes),
    writeBytesPerSec: perPod(writeBytes),
    writesPerSec: Object.fromEntries(Object.entries(writes).map(([k, n]) => [k, perPod(n)])),
    eventWritesPerSec: perPod(eventWrites),
    eventCreatesPerSec: perPod(eventCreates),
    code429,
    agents: [...agents].sort(),
  };
}

const fmt = (n: number, digits = 3): string => (n === 0 ? '0' : Math.abs(n) >= 100 ? n.toFixed(0) : Math.abs(n) >= 1 ? n.toFixed(2) : n.toPrecision(digits));
const kb = (bytes: number): string => `${fmt(bytes / 1024)} KiB`;
const mb = (bytes: number): string => `${fmt(bytes / 1e6)} MB`;

async function main(): Promise<void> {
  const started = Date.now();
  const dir = mkdtempSync(join(tmpdir(), 'herald-bench-scale-'));
  const api = new FakeApiServer();
  for (const kind of Object.keys(HERALD_PLURALS) as HeraldKind[]) api.registerResource({ group: HERALD_GROUP, version: HERALD_VERSION, plural: HERALD_PLURALS[kind], kind, namespaced: true });
  api.logRequests = false;
  api.bookmarkEveryMs = 60_000;
  await api.start();
  const nodeObject = (n: number, ready = true) => {
    const nd = servedNode(node(nodeName(n), { labels: { 'kubernetes.io/os': 'linux' }, ready: ready ? 'True' : 'False' }), `192.0.2.${n + 1}`);
    nd.metadata!.labels = { ...nd.metadata!.labels, 'kubernetes.io/os': 'linux' };
    return nd;
  };
  for (let n = 0; n < PODS; n++) api.upsert('nodes', nodeObject(n));
  const readyState = new Map<number, boolean>();
  for (let i = 0; i < SERVICES; i++) {
    const svc = servedService(service(svcName(i), { etp: 'Local', lbIPs: [vipOf(i)] }), i);
    if (BOUNDED > 0 && i % BOUNDED === 0) svc.metadata!.labels = { ...svc.metadata!.labels, 'bench/bounded': 'yes' };
    api.upsert('services', svc);
    api.upsert('endpointslices', sliceOf(i, () => true), 'discovery.k8s.io');
  }
  for (let i = 0; i < HEADLESS; i++) {
    const name = `headless-${i}`;
    const svc = service(name);
    svc.spec!.clusterIP = 'None';
    api.upsert('services', servedService(svc, SERVICES + i));
    const s = servedSlice(slice(`${name}-1`, name, [[`10.99.${(i >> 8) & 255}.${i & 255}`, nodeName(i % PODS)]]), SERVICES + i);
    s.metadata!.labels!['service.kubernetes.io/headless'] = '';
    api.upsert('endpointslices', s, 'discovery.k8s.io');
  }
  const proxy = new CountingProxy(api.url);
  await proxy.start();
  const kp = await startFakeKubeProxy({ host: '127.0.0.1' });
  const env: NodeJS.ProcessEnv = { ...process.env, HERALD_HOME: ROOT, PATH: `${dirname(process.execPath)}:${process.env['PATH'] ?? ''}`, HERALD_MEMORY_LIMIT_MIB: LIMIT_MIB, POD_NAMESPACE: 'herald-system' };
  const pods: Pod[] = [];
  const cleanup = async () => {
    for (const p of pods) {
      try {
        process.kill(p.pid, 'SIGTERM');
      } catch {
        // gone
      }
    }
    await Promise.race([Promise.all(pods.map((p) => p.exited)), sleep(20_000)]);
    for (const p of pods) {
      try {
        process.kill(p.pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
    await proxy.stop();
    await kp.close();
    await api.stop();
    rmSync(dir, { recursive: true, force: true });
  };
  process.once('SIGINT', () => void cleanup().then(() => process.exit(130)));
  const phases: PhaseFigures[] = [];
  /** The controller Deployment's figures, all replicas together (`pods` 1: rates are the Deployment's). */
  const controllerPhases: PhaseFigures[] = [];
  try {
    proxy.take();
    const restarts = new Map<string, number>();
    /** Spawns `names` (their config written) and waits until each answers /readyz 200, restarting an exited one at most 3 times. */
    const startAll = async (names: string[]): Promise<void> => {
      const t = Date.now();
      const group: Pod[] = [];
      for (const name of names) {
        const kubeconfig = join(dir, `${name}.kubeconfig`);
        writeFileSync(kubeconfig, stringify({ apiVersion: 'v1', kind: 'Config', clusters: [{ name: 'fake', cluster: { server: proxy.urlFor(name) } }], users: [{ name: 'u', user: { token: 'bench' } }], contexts: [{ name: 'fake', context: { cluster: 'fake', user: 'u' } }], 'current-context': 'fake' }));
        const adminPort = await freePort();
        const config = join(dir, `${name}.yaml`);
        // One configuration file for both, as the ConfigMap mounts it in the DaemonSet and the Deployment.
        writeFileSync(config, stringify({ bgp: { localAs: 65000 }, peers: [], allowedPrefixes: ['10.200.0.0/16'], ...(ADVERTISEMENTS ? { advertisements: ADVERTISEMENTS } : {}), source: { kubernetes: { kubeconfig } }, kubeProxy: { healthzPort: kp.port, checkServices: false }, admin: { address: '127.0.0.1', port: adminPort }, stateDir: join(dir, name), logLevel: process.env['DEBUG_PODS'] ? 'debug' : 'warn' }));
        const p = spawnPod(name, config, adminPort, env);
        pods.push(p);
        group.push(p);
      }
      const pending = new Set(group);
      while (pending.size > 0) {
        for (const p of [...pending]) {
          if (p.exit() !== undefined) {
            // As the kubelet restarts a container that exited (on a loaded machine a start can time out), at most 3 times.
            const k = pods.indexOf(p);
            const n = (restarts.get(p.node) ?? 0) + 1;
            if (n > 3) throw new Error(`${p.node}: herald exited (${p.exit()}) ${n} times before it was ready: ${p.out().slice(-2000)}`);
            restarts.set(p.node, n);
            console.log(`${p.node}: exited (${p.exit()}) before it was ready, restarted: ${p.out().trim().split('\n').slice(-2).join(' / ')}`);
            const again = spawnPod(p.node, join(dir, `${p.node}.yaml`), p.adminPort, env);
            pods[k] = again;
            pending.delete(p);
            pending.add(again);
            continue;
          }
          if (await ready(p)) pending.delete(p);
        }
        if (Date.now() - t > 900_000) throw new Error(`not ready after 15 min: ${[...pending].map((p) => `${p.node}: ${p.out().slice(-500)}`).join('\n')}`);
        if (process.env['DEBUG_PODS']) console.log(`${pending.size} not ready after ${((Date.now() - t) / 1000).toFixed(0)} s; e.g. ${[...pending][0]?.node}: ${[...pending][0]?.out().slice(-300)}`);
        await sleep(1000);
      }
    };
    const ctrl0 = Date.now();
    await startAll(Array.from({ length: CONTROLLERS }, (_, n) => controllerName(n)));
    const ctrlStart = (Date.now() - ctrl0) / 1000;
    const t0 = Date.now();
    await startAll(Array.from({ length: PODS }, (_, n) => nodeName(n)));
    const startCounts = proxy.take();
    phases.push(figures('start', (Date.now() - t0) / 1000, split(startCounts).pods, PODS));
    // The controller's start and the DaemonSet's roll-out, counted together for it.
    controllerPhases.push(figures('start', (Date.now() - ctrl0) / 1000, split(startCounts).controller, 1));
    console.log(`${CONTROLLERS} controller replicas ready in ${ctrlStart.toFixed(0)} s; all ${PODS} pods ready in ${((Date.now() - t0) / 1000).toFixed(0)} s (load ${loadavg()[0]!.toFixed(1)}; ${[...restarts.values()].reduce((a, b) => a + b, 0)} restarts)`);

    // Quiet: only the kubelets' Node status updates, each Node once every KUBELET_REPORT_SEC at its own offset.
    const notReady = new Set<number>();
    const heartbeat = (n: number) => {
      const nd = nodeObject(n, !notReady.has(n));
      for (const c of nd.status?.conditions ?? []) (c as { lastHeartbeatTime?: string }).lastHeartbeatTime = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
      api.upsert('nodes', nd);
    };
    const kubelets = Array.from({ length: PODS }, (_, n) => {
      const first = setTimeout(() => {
        heartbeat(n);
        const every = setInterval(() => heartbeat(n), KUBELET_REPORT_SEC * 1000);
        kubelets[n] = every;
      }, Math.random() * KUBELET_REPORT_SEC * 1000);
      return first as NodeJS.Timeout;
    });
    const q0 = Date.now();
    await sleep(QUIET_SEC * 1000);
    const quietCounts = split(proxy.take());
    phases.push(figures('quiet', (Date.now() - q0) / 1000, quietCounts.pods, PODS));
    controllerPhases.push(figures('quiet', (Date.now() - q0) / 1000, quietCounts.controller, 1));
    const watchesPerPod = [...proxy.openWatches()].filter(([n]) => !isController(n)).reduce((a, [, b]) => a + b, 0) / PODS;

    // Eligibility: a Node goes NotReady, and later Ready again (a reboot), ELIGIBILITY_CHANGES times: what reaches the
    // pods is the node set's shard of that Node (src/k8s/node-set.ts), never the Node.
    const e0 = Date.now();
    for (let k = 0; k < ELIGIBILITY_CHANGES; k++) {
      const n = (k >> 1) % PODS;
      if (notReady.has(n)) notReady.delete(n);
      else notReady.add(n);
      heartbeat(n);
      await sleep(ELIGIBILITY_GAP_SEC * 1000);
    }
    const eligibilityCounts = split(proxy.take());
    phases.push(figures('eligibility', (Date.now() - e0) / 1000, eligibilityCounts.pods, PODS));
    controllerPhases.push(figures('eligibility', (Date.now() - e0) / 1000, eligibilityCounts.controller, 1));
    const shardEvents = [...eligibilityCounts.pods.values()].reduce((a, c) => ({ events: a.events + (c.watchEvents.get('configmaps')?.events ?? 0), bytes: a.bytes + (c.watchEvents.get('configmaps')?.bytes ?? 0) }), { events: 0, bytes: 0 });
    const shardWrites = [...eligibilityCounts.controller.values()].reduce((a, c) => a + [...c.writes].filter(([r]) => r.endsWith(' configmaps')).reduce((x, [, w]) => x + w.count, 0), 0);
    const nodeSet = { changes: ELIGIBILITY_CHANGES, shardWrites, eventsPerPod: shardEvents.events / PODS, bytesPerEvent: shardEvents.events > 0 ? shardEvents.bytes / shardEvents.events : 0, shards: api.list('configmaps').length };

    // Churn: endpoint readiness flips across the cluster.
    const c0 = Date.now();
    let flips = 0;
    while (Date.now() - c0 < CHURN_SEC * 1000) {
      const tick = Date.now();
      for (let k = 0; k < FLIPS_PER_SEC; k++) {
        const i = Math.floor(Math.random() * SERVICES);
        const down = !(readyState.get(i) ?? false);
        readyState.set(i, down);
        const flipped = nodesOf(i)[0]!;
        api.upsert('endpointslices', sliceOf(i, (n) => !(down && n === flipped)), 'discovery.k8s.io');
        flips++;
      }
      await sleep(Math.max(0, 1000 - (Date.now() - tick)));
    }
    const churnCounts = split(proxy.take());
    phases.push(figures('churn', (Date.now() - c0) / 1000, churnCounts.pods, PODS));
    controllerPhases.push(figures('churn', (Date.now() - c0) / 1000, churnCounts.controller, 1));
    // Back to ready, and settle: the status writes after a burst come up to 30 s later.
    for (const [i, down] of readyState) if (down) api.upsert('endpointslices', sliceOf(i, () => true), 'discovery.k8s.io');
    await sleep(45_000);
    const afterCounts = split(proxy.take());
    phases.push(figures('after churn (45 s)', 45, afterCounts.pods, PODS));
    controllerPhases.push(figures('after churn (45 s)', 45, afterCounts.controller, 1));

    for (const fault of FAULTS) {
      const f0 = Date.now();
      if (fault === 'restart') {
        await api.goDown('refuse');
        await sleep(15_000);
        api.compact();
        await api.comeBack();
        await sleep(90_000);
      } else if (fault === 'storm') {
        proxy.storm(1);
        await sleep(30_000);
        proxy.calm();
        await sleep(60_000);
      } else if (fault === 'partition') {
        proxy.partition(nodeName(0));
        await sleep(60_000);
        proxy.heal(nodeName(0));
        await sleep(90_000);
      } else throw new Error(`unknown fault ${fault}`);
      const all = proxy.take();
      const counts = split(all).pods;
      phases.push(figures(`fault: ${fault}`, (Date.now() - f0) / 1000, counts, PODS));
      controllerPhases.push(figures(`fault: ${fault}`, (Date.now() - f0) / 1000, split(all).controller, 1));
      if (fault === 'partition') {
        const one = new Map([...counts].filter(([n]) => n === nodeName(0)));
        phases.push(figures('fault: partition (node-00 alone)', (Date.now() - f0) / 1000, one, 1));
      }
    }
    for (const k of kubelets) clearTimeout(k);

    // What Herald keeps in etcd.
    const statuses = api.list(HERALD_PLURALS.BGPNodeStatus, HERALD_GROUP).map((o) => Buffer.byteLength(JSON.stringify(o)));
    const events = api.list('events').map((o) => Buffer.byteLength(JSON.stringify(o)));
    const avg = (xs: number[]) => (xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length);
    const stored = { statuses: statuses.length, statusBytesAvg: avg(statuses), statusBytesMax: Math.max(0, ...statuses), events: events.length, eventBytesAvg: avg(events) };

    report(phases, controllerPhases, stored, watchesPerPod, flips, started, nodeSet);
  } finally {
    await cleanup();
  }
}

/** The `eligibility` phase's node set: changes made, shard writes by the controller, per pod the shard events and their size. */
interface NodeSetFigures {
  readonly changes: number;
  readonly shardWrites: number;
  readonly eventsPerPod: number;
  readonly bytesPerEvent: number;
  readonly shards: number;
}

function report(phases: PhaseFigures[], controllerPhases: PhaseFigures[], stored: { statuses: number; statusBytesAvg: number; statusBytesMax: number; events: number; eventBytesAvg: number }, watchesPerPod: number, flips: number, started: number, nodeSet: NodeSetFigures): void {
  const by = new Map(phases.map((p) => [p.phase, p]));
  const ctrlBy = new Map(controllerPhases.map((p) => [p.phase, p]));
  console.log(`\nbench:scale — ${PODS} pods (${STANDALONE ? 'standalone herald run' : 'herald run --separate-controller'}) and ${CONTROLLERS} herald controller replicas, ${SERVICES} Services (+${HEADLESS} headless), quiet ${QUIET_SEC} s, churn ${CHURN_SEC} s at ${FLIPS_PER_SEC} flips/s (${flips} flips), faults ${FAULTS.join(', ') || 'none'}; ${((Date.now() - started) / 60_000).toFixed(1)} min`);
  console.log(`User-Agents: ${[...new Set([...phases, ...controllerPhases].flatMap((p) => p.agents))].join(', ')}`);
  const table = (title: string, rows: PhaseFigures[]) => {
    console.log(`\n${title} | s | req/s | by verb (/s) | lease req/s | LISTs from etcd | cache/streamed lists | watch opens/s | bytes sent/s | Node watch bytes/s | writes/s | stored bytes/s | 429s`);
    for (const p of rows) {
      const verbs = Object.entries(p.byVerb).map(([k, n]) => `${k} ${fmt(n)}`).join(', ');
      const writes = Object.entries(p.writesPerSec).map(([k, n]) => `${k} ${fmt(n)}`).join(', ');
      console.log(`${p.phase} | ${p.seconds.toFixed(0)} | ${fmt(p.requestsPerSec)} | ${verbs} | ${fmt(p.leaseRequestsPerSec)} | ${fmt(p.etcdListsPerPod)} | ${fmt(p.cacheListsPerPod)} | ${fmt(p.watchOpensPerSec)} | ${kb(p.bytesOutPerSec)} | ${fmt(p.nodeEventBytesPerSec)} B | ${writes || '0'} | ${fmt(p.writeBytesPerSec)} B | ${p.code429}`);
    }
  };
  table('Per pod', phases);
  if (CONTROLLERS > 0) table(`Controller Deployment (${CONTROLLERS} replicas together)`, controllerPhases);
  console.log(`\nIn etcd: ${stored.statuses} BGPNodeStatus, ${fmt(stored.statusBytesAvg)} B average, ${fmt(stored.statusBytesMax)} B largest; ${stored.events} Events, ${fmt(stored.eventBytesAvg)} B average.`);
  console.log(`Open watches per pod: ${fmt(watchesPerPod)}.`);
  console.log(`Node set (maxNodesPerVip; BOUNDED=${BOUNDED}): ${nodeSet.changes} eligibility changes → ${nodeSet.shardWrites} shard writes by the controller, ${fmt(nodeSet.eventsPerPod)} shard events per pod of ${fmt(nodeSet.bytesPerEvent)} B each; ${nodeSet.shards} shards for ${PODS} Nodes.`);
  const quiet = by.get('quiet');
  const churn = by.get('churn');
  const start = by.get('start');
  if (quiet === undefined || churn === undefined || start === undefined) return;
  // The controller's rates (0 without one): added once, whatever the nodes.
  const none = figures('', 1, new Map(), 1);
  const cQuiet = ctrlBy.get('quiet') ?? none;
  const cChurn = ctrlBy.get('churn') ?? none;
  const cStart = ctrlBy.get('start') ?? none;
  // The controller watches every Node: that part of its bytes grows with the nodes (PODS Nodes measured).
  const ctrlNodes = (c: PhaseFigures, n: number) => (c.nodeEventBytesPerSec / PODS) * n;
  const reopenPer5Min = watchesPerPod > 0 ? (quiet.watchOpensPerSec * 300) / watchesPerPod : 0;
  // A Node's served size, for the fan-out of every Node's updates (what every pod received before the node set).
  const nodeBytes = Buffer.byteLength(JSON.stringify({ type: 'MODIFIED', object: servedNode(node('node-00'), '192.0.2.1') })) + 1;
  // A shard event at n nodes: the measured one, plus the entries a shard holds beyond those measured (n / 256 Nodes a
  // shard; an entry `"node-0000":{...}` as the shard's JSON text in the ConfigMap's JSON, its name 4 bytes longer).
  const measuredPerShard = Math.max(1, PODS / nodeSet.shards);
  const entryBytes = Buffer.byteLength(JSON.stringify(JSON.stringify({ 'node-0000': { 'kubernetes.io/os': 'linux' } }))) - 2;
  const shardEventBytes = (n: number) => nodeSet.bytesPerEvent + Math.max(0, n / 256 - measuredPerShard) * entryBytes;
  // Every pod receives one shard event per eligibility change (2 per reboot), at n nodes n × 2 / period changes/s.
  const nodeSetFanOut = (n: number, periodSec: number) => n * shardEventBytes(n) * ((2 * n) / periodSec) + ctrlNodes(cQuiet, n);
  const rows: Array<[string, string, (n: number) => number, (v: number) => string, number | undefined]> = [
    ['etcd writes from Herald, quiet', '≤ 0.1 MB/s', (n) => quiet.writeBytesPerSec * n + cQuiet.writeBytesPerSec, (v) => `${mb(v)}/s`, 0.1e6],
    ['etcd writes from Herald, endpoint burst', '≤ 1 MB/s', (n) => churn.writeBytesPerSec * n + cChurn.writeBytesPerSec, (v) => `${mb(v)}/s`, 1e6],
    // Events live an hour (kube-apiserver --event-ttl): what an hour of quiet and one burst leave.
    ["Herald's objects in etcd (statuses, an hour's Events with one burst)", '≤ 50 MB', (n) => stored.statusBytesAvg * n + ((quiet.eventCreatesPerSec * n + cQuiet.eventCreatesPerSec) * 3600 + (churn.eventCreatesPerSec * n + cChurn.eventCreatesPerSec) * churn.seconds) * stored.eventBytesAvg, (v) => mb(v), 50e6],
    ['Lease requests, cluster-wide', '≤ 2/s', (n) => quiet.leaseRequestsPerSec * n + cQuiet.leaseRequestsPerSec, (v) => `${fmt(v)}/s`, 2],
    ['watch re-opens per watch per 5 min', '≤ 1', () => reopenPer5Min, (v) => fmt(v), 1],
    ['Events written, cluster-wide, in a burst', '≤ 10/s', (n) => churn.eventWritesPerSec * n + cChurn.eventWritesPerSec, (v) => `${fmt(v)}/s`, 10],
    ['Node-update fan-out (own Node only; the controller every Node)', '≤ 1 MB/s', (n) => quiet.nodeEventBytesPerSec * n + ctrlNodes(cQuiet, n), (v) => `${mb(v)}/s`, 1e6],
    ['Node-update fan-out with maxNodesPerVip: the node set, each node rebooted once a week', '≤ 1 MB/s', (n) => nodeSetFanOut(n, WEEK_SEC), (v) => `${mb(v)}/s`, 1e6],
    ['Node-update fan-out with maxNodesPerVip: the node set, every node rebooted within a day', '≤ 1 MB/s', (n) => nodeSetFanOut(n, DAY_SEC), (v) => `${mb(v)}/s`, 1e6],
    ['Node-update fan-out with maxNodesPerVip, before the node set (every pod watched every Node)', '', (n) => (n * n * nodeBytes) / KUBELET_REPORT_SEC, (v) => `${mb(v)}/s`, undefined],
    ['LISTs read from etcd on a rolling update', '0 (watch cache)', (n) => start.etcdListsPerPod * n + cStart.etcdListsPerPod, (v) => fmt(v), 0],
    ['apiserver requests, quiet', '', (n) => quiet.requestsPerSec * n + cQuiet.requestsPerSec, (v) => `${fmt(v)}/s`, undefined],
    ['bytes the apiservers send to Heralds, quiet', '', (n) => quiet.bytesOutPerSec * n + cQuiet.bytesOutPerSec - cQuiet.nodeEventBytesPerSec + ctrlNodes(cQuiet, n), (v) => `${mb(v)}/s`, undefined],
    ['bytes the apiservers send to Heralds, burst', '', (n) => churn.bytesOutPerSec * n + cChurn.bytesOutPerSec - cChurn.nodeEventBytesPerSec + ctrlNodes(cChurn, n), (v) => `${mb(v)}/s`, undefined],
    ['bytes a rolling update of the DaemonSet reads', '', (n) => start.bytesOutPerSec * start.seconds * n, (v) => mb(v), undefined],
  ];
  console.log(`\nProjection (per-pod rates × nodes + the controller's; Services as measured: ${SERVICES}) | target | ${SIZES.join(' | ')} | met at ${SIZES[SIZES.length - 1]}`);
  const projection: Record<string, unknown> = {};
  for (const [what, target, f, show, limit] of rows) {
    const values = SIZES.map((n) => f(n));
    const last = values[values.length - 1]!;
    const met = limit === undefined ? '' : last <= limit ? 'met' : 'NOT met';
    console.log(`${what} | ${target} | ${values.map(show).join(' | ')} | ${met}`);
    projection[what] = { target, values: Object.fromEntries(SIZES.map((n, i) => [n, values[i]])), met };
  }
  if (OUT !== '') writeFileSync(OUT, JSON.stringify({ nodeSet, pods: PODS, controllers: CONTROLLERS, standalone: STANDALONE, services: SERVICES, headless: HEADLESS, quietSec: QUIET_SEC, churnSec: CHURN_SEC, flipsPerSec: FLIPS_PER_SEC, phases, controllerPhases, stored, watchesPerPod, projection }, null, 2));
}

await main();
