/**
 * `npm run demo`: Herald in two minutes, no cluster needed.
 *
 * Builds a lab (demo/lab.ts) of one BIRD 2 router and three Herald nodes reading the standalone manifests source, then
 * walks through the life of a LoadBalancer VIP with externalTrafficPolicy Local, showing BIRD's own `show route` after
 * each step and checking that BIRD shows exactly what the step claims. Exit 0 only when every step did.
 *
 * Options: HERALD_DEMO_LOOPBACK=1 forces the loopback lab (no network namespaces); HERALD_DEMO_KEEP=1 keeps the lab
 * directory (logs, configs) for inspection.
 */
import { writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync, type ChildProcess } from 'node:child_process';
import { checkPrerequisites, cleanup, createLab, parseBirdRoutes, sleep, spawnTracked, startBird, stopProcess, type Lab, type LabNode } from './lab.ts';

const VIP = '203.0.113.10';
const VIP_PREFIX = `${VIP}/32`;
const HEALTH_NODE_PORT = 32100;
const HEALTHZ_PORT = 10256;
const TOKEN = 'demo-token';
const repo = new URL('..', import.meta.url).pathname;
const heraldBin = join(repo, 'bin/herald.js');

const bold = (s: string) => (process.stdout.isTTY ? `\x1b[1m${s}\x1b[0m` : s);
const green = (s: string) => (process.stdout.isTTY ? `\x1b[32m${s}\x1b[0m` : s);
const red = (s: string) => (process.stdout.isTTY ? `\x1b[31m${s}\x1b[0m` : s);
const say = (s = '') => process.stdout.write(`${s}\n`);

let failures = 0;

function manifests(lab: Lab, ready: Record<string, boolean>): void {
  const dir = join(lab.dir, 'manifests');
  mkdirSync(dir, { recursive: true });
  const nodes = lab.nodes
    .map(
      (n) => `apiVersion: v1
kind: Node
metadata:
  name: ${n.name}
status:
  addresses: [{type: InternalIP, address: ${n.ip}}]
  conditions: [{type: Ready, status: "True"}]`,
    )
    .join('\n---\n');
  writeFileSync(join(dir, 'nodes.yaml'), `${nodes}\n`);
  writeFileSync(
    join(dir, 'service.yaml'),
    `apiVersion: v1
kind: Service
metadata: {name: web, namespace: demo}
spec:
  type: LoadBalancer
  externalTrafficPolicy: Local
  healthCheckNodePort: ${HEALTH_NODE_PORT}
  clusterIP: 10.96.0.10
  clusterIPs: [10.96.0.10]
  ipFamilies: [IPv4]
  ports: [{name: http, port: 80, protocol: TCP, nodePort: 30080}]
  selector: {app: web}
status:
  loadBalancer:
    ingress: [{ip: ${VIP}, ipMode: VIP}]
`,
  );
  const endpoints = Object.entries(ready)
    .map(([node, isReady], i) => `  - addresses: [10.244.${i + 1}.10]\n    nodeName: ${node}\n    conditions: {ready: ${isReady}, serving: ${isReady}, terminating: false}`)
    .join('\n');
  // Written to a temporary name and renamed, so the source never reads half a file.
  const tmp = join(lab.dir, 'slice.tmp');
  writeFileSync(
    tmp,
    `apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: web-abcde
  namespace: demo
  labels: {kubernetes.io/service-name: web}
addressType: IPv4
ports: [{name: http, port: 8080, protocol: TCP}]
endpoints:
${endpoints}
`,
  );
  spawnSync('mv', [tmp, join(dir, 'endpointslice.yaml')]);
}

function nodeConfig(lab: Lab, node: LabNode): string {
  const file = join(lab.dir, `${node.name}.yaml`);
  writeFileSync(
    file,
    `# Herald on ${node.name} (demo)
bgp:
  localAs: ${lab.nodeAs}
  routerId: ${node.ip}
node:
  name: ${node.name}
  ip: ${node.ip}
source:
  manifests: ${join(lab.dir, 'manifests')}
# LoadBalancer and external addresses are announced only inside pools or allowedPrefixes (docs/security.md).
allowedPrefixes: [203.0.113.0/24]
peers:
  - name: router
    address: ${lab.routerIp}
    port: ${lab.routerPort}
    peerAs: ${lab.routerAs}
    localAddress: ${node.ip}
    families: [ipv4-unicast]
    holdTime: 30
    connectRetryTime: 2
    ${lab.mode === 'loopback' ? 'ebgpMultihop: 2' : ''}
    gracefulRestart: {enabled: true, restartTime: 60}
    gracefulShutdown: {enabled: true, waitTime: 4}
healthChecks: {interval: 0.5, timeout: 0.4, rise: 2, fall: 2}
kubeProxy: {enabled: true, healthzPort: ${HEALTHZ_PORT}}
flapControl: {holdDown: 1}
admin:
  address: ${node.ip}
  port: 9179
  tokenFile: ${join(lab.dir, 'token')}
stateDir: ${join(lab.dir, `${node.name}-state`)}
`,
  );
  return file;
}

function startHerald(lab: Lab, node: LabNode): ChildProcess {
  return spawnTracked(process.execPath, [heraldBin, 'run', '--config', join(lab.dir, `${node.name}.yaml`)], { netns: node.netns, logFile: join(lab.dir, `${node.name}.log`) });
}

function setHealth(lab: Lab, node: LabNode, status: 200 | 503): void {
  writeFileSync(join(lab.dir, `${node.name}-kp`, String(HEALTH_NODE_PORT)), String(status));
}

function herald(lab: Lab, node: LabNode, ...args: string[]): string {
  const argv = [process.execPath, heraldBin, ...args, '--api', `http://${node.ip}:9179`, '--token-file', join(lab.dir, 'token')];
  const cmd = node.netns ? ['ip', ['netns', 'exec', node.netns, ...argv]] as const : [argv[0] as string, argv.slice(1)] as const;
  const r = spawnSync(cmd[0], cmd[1], { encoding: 'utf8' });
  return `${r.stdout}${r.stderr}`;
}

type Birdc = (cmd: string) => string;

/** Paths of the VIP in BIRD: protocol (node name) → communities. */
function vipPaths(birdc: Birdc): Map<string, { communities: string[]; stale: boolean }> {
  const paths = parseBirdRoutes(birdc(`show route for ${VIP_PREFIX} all`)).get(VIP_PREFIX) ?? [];
  return new Map(paths.map((p) => [p.protocol, { communities: p.communities, stale: p.stale }]));
}

function showRoute(birdc: Birdc): void {
  const text = birdc(`show route for ${VIP_PREFIX} all`)
    .split('\n')
    .filter((l) => l.trim() && !/^BIRD|Table master4:|Type:|BGP\.origin|BGP\.local_pref|BGP\.as_path|Preference/.test(l.trim()))
    .map((l) => `    ${l}`)
    .join('\n');
  say(text ? `  ${bold('birdc show route for ' + VIP_PREFIX + ' all')}\n${text}` : `  ${bold('birdc show route for ' + VIP_PREFIX)}: (no route)`);
}

async function expect(birdc: Birdc, claim: string, ok: (p: ReturnType<typeof vipPaths>) => boolean, timeoutMs = 20000): Promise<boolean> {
  const start = Date.now();
  while (Date.now() - start < timeoutMs) {
    if (ok(vipPaths(birdc))) {
      showRoute(birdc);
      say(`  ${green('✔')} ${claim} ${`(${((Date.now() - start) / 1000).toFixed(1)} s)`}`);
      return true;
    }
    await sleep(100);
  }
  showRoute(birdc);
  say(`  ${red('✘')} ${claim}: not seen within ${timeoutMs / 1000} s`);
  failures++;
  return false;
}

const exactly = (...names: string[]) => (p: ReturnType<typeof vipPaths>) => p.size === names.length && names.every((n) => p.has(n));

async function main(): Promise<number> {
  say(bold('Herald demo: BGP announcements of a Kubernetes LoadBalancer VIP, only from nodes that can serve it'));
  const { problems, mode } = checkPrerequisites();
  if (problems.length > 0) {
    say(red('Missing prerequisites:'));
    for (const p of problems) say(`  - ${p}`);
    return 1;
  }
  const lab = createLab(mode, 3);
  const [n1, n2, n3] = lab.nodes as [LabNode, LabNode, LabNode];
  say(`Lab: ${mode === 'netns' ? 'network namespaces, one veth per node on a bridge' : 'loopback addresses (no network namespaces)'}; files in ${lab.dir}`);
  say(`  router: BIRD 2 at ${lab.routerIp}, AS ${lab.routerAs}; nodes ${lab.nodes.map((n) => `${n.name}=${n.ip}`).join(', ')}, AS ${lab.nodeAs}`);
  writeFileSync(join(lab.dir, 'token'), `${TOKEN}\n`);
  try {
    manifests(lab, { node1: true, node2: true });
    const { birdc } = await startBird(lab);
    for (const n of lab.nodes) {
      mkdirSync(join(lab.dir, `${n.name}-kp`), { recursive: true });
      setHealth(lab, n, 200);
      spawnTracked(process.execPath, [join(repo, 'demo/kube-proxy.ts'), n.ip, join(lab.dir, `${n.name}-kp`), String(HEALTHZ_PORT), String(HEALTH_NODE_PORT)], { netns: n.netns, logFile: join(lab.dir, `${n.name}-kube-proxy.log`) });
      nodeConfig(lab, n);
    }
    const heralds = new Map(lab.nodes.map((n) => [n.name, startHerald(lab, n)]));

    say();
    say(bold(`1. Service demo/web (LoadBalancer ${VIP}, externalTrafficPolicy: Local) has ready endpoints on node1 and node2.`));
    say('   Each node announces the VIP only if it has a ready local endpoint and kube-proxy\'s health check passes: BIRD gets two paths (ECMP).');
    await expect(birdc, 'BIRD has the VIP from node1 and node2, not node3', exactly('node1', 'node2'), 40000);

    say();
    say(bold('2. The endpoint on node2 turns unready (EndpointSlice condition ready: false).'));
    manifests(lab, { node1: true, node2: false });
    await expect(birdc, 'node2 withdrew its path; only node1 remains', exactly('node1'));

    say();
    say(bold('3. node2 is ready again; then kube-proxy on node1 answers 503 on the healthCheckNodePort.'));
    manifests(lab, { node1: true, node2: true });
    await expect(birdc, 'node2 announces again (after rise × interval and hold-down)', exactly('node1', 'node2'));
    setHealth(lab, n1, 503);
    await expect(birdc, 'node1 withdrew after its health check failed (fall × interval); node2 remains', exactly('node2'));
    say(`  ${bold(`herald services demo/web   (on node1)`)}`);
    say(herald(lab, n1, 'services', 'demo/web').replace(/^/gm, '    ').trimEnd());
    setHealth(lab, n1, 200);
    await expect(birdc, 'node1 is back after its check passed again', exactly('node1', 'node2'));

    say();
    say(bold('4. node2 is drained (graceful shutdown, RFC 8326): herald drain.'));
    say(herald(lab, n2, 'drain').replace(/^/gm, '    ').trimEnd());
    await expect(birdc, "node2's path carries the GRACEFUL_SHUTDOWN community 65535:0 (routers prefer node1)", (p) => p.get('node2')?.communities.includes('65535:0') === true && p.has('node1'));
    await expect(birdc, 'after the wait, node2 withdrew; node1 carries the VIP', exactly('node1'));
    say(herald(lab, n2, 'undrain').replace(/^/gm, '    ').trimEnd());
    await expect(birdc, 'undrain: node2 announces again', exactly('node1', 'node2'));

    say();
    say(bold('5. Herald on node1 is killed (kill -9) and restarted: graceful restart (RFC 4724) keeps the route in BIRD.'));
    const h1 = heralds.get('node1') as ChildProcess;
    await stopProcess(h1, 1000, 'SIGKILL');
    let gap = false;
    const watch = setInterval(() => {
      if (!vipPaths(birdc).has('node1')) gap = true;
    }, 50);
    await expect(birdc, "BIRD keeps node1's path (stale) while Herald is down", (p) => p.has('node1'), 5000);
    await sleep(1500);
    heralds.set('node1', startHerald(lab, n1));
    say(`  ${bold('birdc show protocols node1')}`);
    await sleep(200);
    const sessionBack = async () => {
      for (let i = 0; i < 200; i++) {
        if (/Established/.test(birdc('show protocols node1'))) return true;
        await sleep(100);
      }
      return false;
    };
    const back = await sessionBack();
    say(birdc('show protocols node1').split('\n').filter((l) => /node1/.test(l)).map((l) => `    ${l}`).join('\n'));
    await sleep(3000); // past End-of-RIB: stale routes not re-announced would be flushed now
    clearInterval(watch);
    if (back && !gap && vipPaths(birdc).has('node1') && !vipPaths(birdc).get('node1')?.stale) {
      say(`  ${green('✔')} session re-established, End-of-RIB sent, node1's path never left BIRD: no traffic moved`);
      showRoute(birdc);
    } else {
      failures++;
      say(`  ${red('✘')} graceful restart: session back=${back}, path gap=${gap}`);
      showRoute(birdc);
    }

    say();
    say(bold('6. Herald on node3 keeps its session but announces nothing: it has no local endpoint.'));
    say(herald(lab, n3, 'services', 'demo/web').replace(/^/gm, '    ').trimEnd());
    say();
    if (failures === 0) say(green(bold('Demo complete: every step showed what it claims.')));
    else say(red(bold(`Demo finished with ${failures} failed step(s); logs in ${lab.dir}`)));
    return failures === 0 ? 0 : 1;
  } finally {
    await cleanup(lab, failures > 0 || process.env.HERALD_DEMO_KEEP === '1');
  }
}

main().then(
  (code) => process.exit(code),
  async (err: unknown) => {
    process.stderr.write(`demo failed: ${err instanceof Error ? err.message : String(err)}\n`);
    await cleanup();
    process.exit(1);
  },
);
