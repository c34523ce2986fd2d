/**
 * The container image scripts/image.sh built (dist/image/herald.digest), run with podman the way the shipped DaemonSet
 * (deploy/kubernetes/daemonset.yaml) runs it: the container's user, read-only root filesystem, dropped capabilities,
 * no privilege escalation, host network, memory limit and HERALD_MEMORY_LIMIT_MIB, its volumes (the ConfigMap's
 * herald.yaml, the two Secrets, the state directory prepared by the init container's own command, /tmp as a sized
 * tmpfs) and its args, all read from the manifest, so that a change there changes what runs here.
 *
 * What runs: `herald --version`; `herald config check` of the ConfigMap's herald.yaml as mounted (no warning); an exec
 * kubeconfig refused in one line (the image leaves @kubernetes/client-node out: docs/decisions.md); then
 * `herald run` with that herald.yaml, in which the test changes only what points at this machine (the peer's address
 * and port to a private BIRD on a loopback address, the admin and metrics ports to free ones, the kube-proxy health
 * port to a fake kube-proxy) and reaches the fake apiserver through a mounted kubeconfig: BIRD receives the VIP with
 * the TCP MD5 password of the mounted Secret; a SIGTERM (podman stop: what the kubelet sends on a rolling update) is a
 * restart: the process exits by itself long before podman's SIGKILL, and BIRD keeps the route until the next
 * container, on the same state directory, refreshes it (graceful restart); no module had its types stripped at run time (the compile cache of the image); the daemon's peak RSS
 * (VmHWM) inside the image is printed beside docs/benchmarks.md's target.
 *
 * Needs root, podman (scripts/image.sh installs it), BIRD, and the image: `bash scripts/image.sh herald`.
 */
import t from 'tap';
import { execFile, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import type * as k8s from '@kubernetes/client-node';
import { birdAvailable, freePort } from '../helpers/bird.ts';
import { DaemonProcess, commandAvailable, sleep } from '../helpers/daemon-process.ts';
import { FakeApiServer } from '../helpers/fake-apiserver.ts';
import { node, service, slice } from '../helpers/k8s-objects.ts';
import { skipUnless } from '../helpers/prereq.ts';
import { loopbackBlock, pathsFor, protoName, startKubeProxies, writeKubeconfig } from '../e2e/harness.ts';
import { bgpProtocol, Bird, parseRouteTrace } from '../helpers/bird.ts';
import { loadYamlDocs } from './kustomize.ts';

const root = new URL('../../', import.meta.url).pathname;
const CONTAINERS_CONF = join(root, 'scripts/containers.conf');
const DIGEST_FILE = join(root, 'dist/image/herald.digest');
const VERSION = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;
const IMAGE = `localhost/herald:${VERSION}`;
const VIP = '203.0.113.40'; // inside the ConfigMap's allowedPrefixes (checked below)
const HERALD_AS = 64512; // the ConfigMap's bgp.localAs
const PASSWORD = 'image-test-md5';

const podmanEnv = { ...process.env, CONTAINERS_CONF };
function podman(args: string[], timeoutMs = 60_000): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync('podman', args, { encoding: 'utf8', timeout: timeoutMs, env: podmanEnv });
  return { status: r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
}

/**
 * podman, without blocking this process: while Herald runs, the fake apiserver and the fake kube-proxy it talks to are
 * served by this process's event loop (a spawnSync `podman stop` once froze them for the whole stop: the health
 * check failed and withdrew the VIP, and the apiserver never answered the Lease release).
 */
function podmanAsync(args: string[], timeoutMs = 90_000): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile('podman', args, { encoding: 'utf8', timeout: timeoutMs, env: podmanEnv }, (err, stdout, stderr) => {
      const status = err === null ? 0 : typeof err.code === 'number' ? err.code : null;
      resolve({ status, stdout, stderr });
    });
  });
}

const isRoot = process.getuid?.() === 0;
const hasPodman = commandAvailable('podman', ['--version']);
const digest = existsSync(DIGEST_FILE) ? readFileSync(DIGEST_FILE, 'utf8').trim() : '';
const imageLoaded = hasPodman && digest !== '' && podman(['image', 'inspect', '--format', '{{.Digest}}', IMAGE]).stdout.trim() === digest;
const skip = skipUnless({ root: isRoot, podman: hasPodman, bird2: birdAvailable(), [`image ${IMAGE} of ${DIGEST_FILE}`]: imageLoaded }, 'run: sudo bash scripts/image.sh herald');

/** The DaemonSet's pod spec and herald container, and the ConfigMap's herald.yaml. */
function shipped(): { pod: k8s.V1PodSpec; container: k8s.V1Container; init: k8s.V1Container; config: Record<string, unknown> } {
  const ds = loadYamlDocs(join(root, 'deploy/kubernetes/daemonset.yaml'))[0] as unknown as k8s.V1DaemonSet;
  const pod = ds.spec?.template.spec as k8s.V1PodSpec;
  const container = pod.containers.find((c) => c.name === 'herald') as k8s.V1Container;
  const init = pod.initContainers?.find((c) => c.name === 'state-dir') as k8s.V1Container;
  const cm = loadYamlDocs(join(root, 'deploy/kubernetes/configmap.yaml'))[0] as unknown as k8s.V1ConfigMap;
  return { pod, container, init, config: parse(cm.data?.['herald.yaml'] ?? '') as Record<string, unknown> };
}

/** Mebibytes of a Kubernetes quantity such as 320Mi or 1Gi. */
function mebibytes(q: string): number {
  const m = /^(\d+)(Mi|Gi)$/.exec(q);
  if (!m) throw new Error(`memory quantity ${q}: the test reads Mi or Gi`);
  return Number(m[1]) * (m[2] === 'Gi' ? 1024 : 1);
}

/** podman flags for the container's securityContext, resources, hostNetwork and the env the manifest derives. */
function containerFlags(pod: k8s.V1PodSpec, c: k8s.V1Container): string[] {
  const sc = c.securityContext ?? {};
  const flags: string[] = [];
  if (sc.runAsUser !== undefined) flags.push('--user', `${sc.runAsUser}:${sc.runAsGroup ?? sc.runAsUser}`);
  if (sc.readOnlyRootFilesystem) flags.push('--read-only', '--read-only-tmpfs=false');
  if (sc.allowPrivilegeEscalation === false) flags.push('--security-opt', 'no-new-privileges');
  if (sc.capabilities?.drop?.includes('ALL')) flags.push('--cap-drop', 'all');
  for (const cap of sc.capabilities?.add ?? []) flags.push('--cap-add', cap);
  if (pod.hostNetwork) flags.push('--network', 'host');
  const limit = c.resources?.limits?.['memory'];
  if (limit !== undefined) flags.push('--memory', `${mebibytes(String(limit))}m`, '--memory-swap', `${mebibytes(String(limit))}m`);
  for (const e of c.env ?? []) {
    if (e.valueFrom?.resourceFieldRef?.resource === 'limits.memory' && limit !== undefined) flags.push('--env', `${e.name}=${mebibytes(String(limit))}`);
  }
  return flags;
}

t.setTimeout(360_000); // tap's 120 s per file is too short for two container starts on a loaded machine
t.test('the image runs as the DaemonSet runs it: config check, routes in BIRD, no type stripping, peak RSS', { skip, timeout: 300_000 }, async (t) => {
  const { pod, container, init, config } = shipped();
  const flags = containerFlags(pod, container);
  t.same(flags.slice(0, 2), ['--user', '1000:1000'], 'the DaemonSet runs as uid 1000');
  t.ok(flags.includes('--read-only') && flags.includes('all') && flags.includes('host') && flags.includes('--memory'), `the DaemonSet's settings: ${flags.join(' ')}`);

  const version = podman(['run', '--rm', ...flags, IMAGE, '--version']);
  t.equal(version.status, 0, version.stderr);
  t.equal(version.stdout.trim(), `herald ${VERSION}`, 'herald --version');

  const dir = mkdtempSync(join(tmpdir(), 'herald-image-test-'));
  const name = `herald-image-test-${process.pid}`;
  t.teardown(() => {
    podman(['rm', '--force', '--time', '0', name]);
    rmSync(dir, { recursive: true, force: true });
  });
  // The volumes, mounted where the DaemonSet mounts them: the ConfigMap's herald.yaml, the Secrets, the state dir, /tmp.
  const mountOf = (volume: string): string => container.volumeMounts?.find((m) => m.name === volume)?.mountPath as string;
  const configDir = join(dir, 'config');
  const secretsDir = join(dir, 'secrets');
  const adminDir = join(dir, 'admin');
  const stateDir = join(dir, 'state');
  for (const d of [configDir, secretsDir, adminDir, stateDir]) mkdirSync(d, { mode: 0o755 });
  writeFileSync(join(secretsDir, 'password'), PASSWORD);
  writeFileSync(join(adminDir, 'token'), 'image-test-token');
  for (const f of [join(secretsDir, 'password'), join(adminDir, 'token')]) chmodSync(f, 0o644); // a Secret volume's default mode
  const tmpLimit = pod.volumes?.find((v) => v.name === 'tmp')?.emptyDir?.sizeLimit ?? '64Mi';
  const volumes = [
    '--volume', `${configDir}:${mountOf('config')}:ro`,
    '--volume', `${secretsDir}:${mountOf('bgp-password')}:ro`,
    '--volume', `${adminDir}:${mountOf('admin-token')}:ro`,
    '--volume', `${stateDir}:${mountOf('state')}`,
    '--tmpfs', `${mountOf('tmp')}:rw,size=${mebibytes(String(tmpLimit))}m,mode=1777`,
  ];

  // The init container's own command, with its own securityContext: hands the state directory to uid 1000.
  const initRun = podman(['run', '--rm', '--user', String(init.securityContext?.runAsUser ?? 0), '--cap-drop', 'all', ...(init.securityContext?.capabilities?.add ?? []).flatMap((c) => ['--cap-add', c]), '--volume', `${stateDir}:${mountOf('state')}`, '--entrypoint', init.command?.[0] ?? '', IMAGE, ...(init.command ?? []).slice(1)]);
  t.equal(initRun.status, 0, `init container ${init.command?.join(' ')}: ${initRun.stderr}`);
  t.equal(spawnSync('stat', ['-c', '%u:%g', stateDir], { encoding: 'utf8' }).stdout.trim(), '1000:1000', 'the init container chowned the state directory');

  // `herald config check` of the ConfigMap's herald.yaml, as mounted.
  writeFileSync(join(configDir, 'herald.yaml'), stringify(config));
  const check = podman(['run', '--rm', ...flags, ...volumes, IMAGE, 'config', 'check', `${mountOf('config')}/herald.yaml`]);
  t.equal(check.status, 0, check.stderr);
  t.match(check.stdout, /herald\.yaml: valid \(1 peer\(s\), 0 static route\(s\), source kubernetes\)/, check.stdout);
  t.notMatch(check.stdout + check.stderr, /warning/, 'no warning: the password file and the admin token are mounted where herald.yaml reads them');

  // The image leaves @kubernetes/client-node out (docs/decisions.md): a kubeconfig whose credentials only it reads is
  // refused at start, in one line naming why and the fix.
  const execDir = join(dir, 'exec-kube');
  mkdirSync(execDir);
  writeFileSync(join(execDir, 'kubeconfig'), 'apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "https://127.0.0.1:6443"}}]\nusers: [{name: u, user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: aws-iam-authenticator, args: [token]}}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n');
  chmodSync(join(execDir, 'kubeconfig'), 0o644);
  const execRun = podman(['run', '--rm', ...flags, ...volumes, '--volume', `${execDir}:/etc/herald/kube:ro`, '--env', 'KUBECONFIG=/etc/herald/kube/kubeconfig', IMAGE, 'run', '--config', `${mountOf('config')}/herald.yaml`, '--node-name', 'node-a', '--node-ip', '192.0.2.10']);
  t.equal(execRun.status, 1, 'herald run refuses an exec kubeconfig in the image');
  const why = execRun.stderr.trim().split('\n');
  t.equal(why.length, 1, `one line: ${execRun.stderr}`);
  t.match(why[0], /^herald run: cannot start: cannot load kubeconfig from KUBECONFIG=\/etc\/herald\/kube\/kubeconfig: user "u" has an exec credential plugin, which Herald reads only through @kubernetes\/client-node, and this installation leaves it out .*in a pod use the in-cluster ServiceAccount .*token, tokenFile or client certificate$/, 'it names why and the fix');

  // The cluster and the router, on this machine's loopback (host network).
  const block = loopbackBlock();
  const nodeIp = `${block}1`;
  const birdIp = `${block}100`;
  const birdPort = await freePort(birdIp);
  const api = new FakeApiServer();
  await api.start();
  t.teardown(() => api.stop());
  const nodeName = 'node-a';
  api.upsert('nodes', node(nodeName, { addresses: [{ type: 'InternalIP', address: nodeIp }] }));
  api.upsert('services', service('web', { etp: 'Cluster', lbIPs: [VIP] }));
  api.upsert('endpointslices', slice('web-1', 'web', [['10.1.0.2', nodeName, { ready: true }]]), 'discovery.k8s.io');
  const kp = await startKubeProxies([nodeIp]);
  t.teardown(() => kp.close());
  const kubeDir = join(dir, 'kube');
  mkdirSync(kubeDir);
  writeKubeconfig(join(kubeDir, 'kubeconfig'), api.url);
  chmodSync(join(kubeDir, 'kubeconfig'), 0o644);

  t.ok(((config['allowedPrefixes'] ?? []) as string[]).includes('203.0.113.0/24'), `the ConfigMap's allowedPrefixes hold ${VIP}`);
  const peer = (config['peers'] as Record<string, unknown>[])[0] as Record<string, unknown>;
  const bird = await Bird.start(
    bgpProtocol({ name: protoName(nodeName), local: birdIp, localPort: birdPort, localAs: Number(peer['peerAs']), neighbor: nodeIp, neighborPort: 179, neighborAs: HERALD_AS, passive: true, holdTimeSec: 30, families: ['ipv4'], trace: true, extra: `  password "${PASSWORD}";\n  graceful restart on;\n  graceful restart time 120;` }),
    { routerId: '10.255.255.2' },
  );
  t.teardown(() => bird.stop());

  // The ConfigMap's herald.yaml, changed only where it must point at this machine.
  const adminPort = await freePort('127.0.0.1');
  const metricsPort = await freePort(nodeIp);
  const run = structuredClone(config);
  run['peers'] = [{ ...peer, address: birdIp, port: birdPort, localAddress: nodeIp, ebgpMultihop: 2, connectRetryTime: 1 }];
  run['admin'] = { ...(config['admin'] as object), port: adminPort };
  run['metrics'] = { ...(config['metrics'] as object), port: metricsPort };
  run['kubeProxy'] = { healthzPort: kp.port };
  writeFileSync(join(configDir, 'herald.yaml'), stringify(run));

  // The DaemonSet's args, with the values its env gives them.
  const args = (container.args ?? []).map((a) => a.replace('$(NODE_NAME)', nodeName).replace('$(HOST_IPS)', nodeIp));
  const proc = new DaemonProcess('image-run');
  t.teardown(() => proc.stop(5000));
  // NODE_DEBUG_NATIVE=COMPILE_CACHE: Node traces every compile cache lookup (on stdout, beside the log).
  const start = (traceCache = false): void =>
    proc.spawn('podman', ['run', '--rm', '--name', name, ...flags, ...volumes, '--volume', `${kubeDir}:/etc/herald/kube:ro`, '--env', 'KUBECONFIG=/etc/herald/kube/kubeconfig', '--env', `POD_NAMESPACE=herald-system`, ...(traceCache ? ['--env', 'NODE_DEBUG_NATIVE=COMPILE_CACHE'] : []), '--stop-timeout', String(pod.terminationGracePeriodSeconds ?? 30), IMAGE, ...args], { env: podmanEnv });
  start(true);

  const proto = protoName(nodeName);
  const announced = async (): Promise<boolean> => (await pathsFor(bird, `${VIP}/32`)).includes(proto);
  await proc.waitFor(announced, `BIRD has ${VIP}/32 from Herald in the image`, 90_000, 250);
  t.pass(`BIRD received ${VIP}/32 from the container, over TCP MD5 with the mounted password`);

  // Peak RSS of the daemon inside the image (PID 1 of the container is node: deploy/herald execs it).
  const pid = (await podmanAsync(['inspect', '--format', '{{.State.Pid}}', name])).stdout.trim();
  await sleep(3000); // settle after the sync, as bench:daemon reads RSS 2 s after it
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string): number => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  const hwm = kib('VmHWM') / 1024;
  const limitMib = mebibytes(String(container.resources?.limits?.['memory']));
  t.comment(`herald run in the image (1 Service, 1 peer): VmHWM ${hwm.toFixed(1)} MiB, VmRSS ${(kib('VmRSS') / 1024).toFixed(1)} MiB; docs/benchmarks.md target for <= 100 Services: <= 120 MiB; container limit ${limitMib} MiB`);
  t.ok(hwm > 20 && hwm < limitMib, `peak RSS ${hwm.toFixed(1)} MiB is under the container's memory limit (${limitMib} MiB)`);

  const trace = proc.stdout + proc.stderr;
  t.ok(trace.split('\n').some((l) => /transpile cache for StrippedTypeScript file:\/\/\/app\/bgp\/speaker-thread\/worker\.ts\.\.\.success/.test(l)), "the trace covers the speaker thread's modules");
  t.same(trace.split('\n').filter((l) => /no transpile cache for StrippedTypeScript/.test(l)), [], 'no module had its types stripped: they come from the compile cache of the image');

  // A SIGTERM (podman stop; the kubelet on a rolling update) is a restart: the sessions end at once, the process exits
  // well inside the grace period, and BIRD keeps the route while Herald is gone (graceful restart).
  await t.test('a SIGTERM restart keeps the route in BIRD and exits promptly', async (t) => {
    const grace = pod.terminationGracePeriodSeconds ?? 30;
    const logBefore = proc.stdout.length;
    const started = Date.now();
    const stop = await podmanAsync(['stop', '--time', String(grace), name], (grace + 30) * 1000);
    const tookMs = Date.now() - started;
    t.equal(stop.status, 0, stop.stderr);
    await proc.kill('SIGTERM', 10_000);
    const log = proc.stdout.slice(logBefore) + proc.stderr;
    t.ok(tookMs < (grace * 1000) / 2, `podman stop returned after ${(tookMs / 1000).toFixed(1)} s: Herald exited by itself, long before the ${grace} s SIGKILL`);
    t.match(log, /stopping \(SIGTERM\): restart: not drained and the node is not departing/, 'the SIGTERM was a restart');
    t.match(log, /BGP sessions ended \(restart\): tor-a closedWithoutNotification/, 'the session ended without a NOTIFICATION (graceful restart)');
    t.match(log, /"exitCode":0,"msg":"stopped"/, 'the last log line is there: a clean exit, not a SIGKILL');
    t.ok(await announced(), 'BIRD keeps the route while Herald is down (graceful restart)');

    start();
    await proc.waitFor(async () => (await bird.protocol(proto))?.info === 'Established', 'the session back up', 90_000, 250);
    // The new Herald's End-of-RIB ends BIRD's graceful restart; the route was refreshed before it, never removed.
    await proc.waitFor(() => bird.log().split('\n').some((l) => l.includes(proto) && /graceful restart done/i.test(l)), "BIRD's graceful restart ended by the new container's End-of-RIB", 90_000, 250);
    t.ok(await announced(), 'the route stayed in BIRD across the restart');
    const events = parseRouteTrace(bird.log()).filter((e) => e.prefix === `${VIP}/32`);
    t.same(events.filter((e) => e.action === 'removed').map((e) => e.line), [], "BIRD's route trace shows no removal of the VIP");
    t.ok(/Neighbor graceful restart detected/.test(bird.log()), 'BIRD saw the stop as a graceful restart');
  });
});
