// docker-compose.yml (BIRD + two Herald nodes in standalone mode): it parses, it runs the images scripts/image.sh builds, every file it references exists, the
// Herald configs validate with Herald's own schema, the manifests parse, and BIRD accepts its config (`bird -p`); no
// service takes its network's gateway address; scripts/compose.ts reads it (and refuses what it does not run); and the
// lab runs: `scripts/compose.sh up` in a network namespace of the test's own, BIRD gets the VIP from node1 only (its
// endpoint is there), `herald services` and the metrics listener answer as the file's comment says, `down` removes it.
import t from 'tap';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { parse, parseAllDocuments } from 'yaml';
import { loadConfigFile, metricsListener, resolveIdentity } from '../../src/config/load.ts';
import { skipUnless } from '../helpers/prereq.ts';
import { commandAvailable } from '../helpers/daemon-process.ts';
import { readLab, upCommands } from '../../scripts/compose.ts';

const root = new URL('../../', import.meta.url).pathname;
const VERSION = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;

interface ComposeService {
  image?: string;
  volumes?: string[];
  command?: string[];
}

t.test('docker-compose.yml references only files that exist, and they are valid', async (t) => {
  const compose = parse(readFileSync(join(root, 'docker-compose.yml'), 'utf8')) as { services: Record<string, ComposeService> };
  const services = Object.entries(compose.services);
  t.same(services.map(([n]) => n).sort(), ['bird', 'node1', 'node2'], 'a BIRD router and two Herald nodes');
  let files = 0;
  for (const [name, svc] of services) {
    // The images scripts/image.sh builds and loads: localhost/herald and localhost/herald-bird, at package.json's version.
    t.equal(svc.image, `localhost/${name === 'bird' ? 'herald-bird' : 'herald'}:${VERSION}`, `${name}: an image scripts/image.sh builds`);
    for (const v of svc.volumes ?? []) {
      const src = v.split(':')[0] as string;
      t.ok(existsSync(join(root, src)), `${name}: volume source ${src} exists`);
      files++;
      const target = v.split(':')[1] as string;
      if (target === '/etc/herald/herald.yaml') {
        await t.resolves(loadConfigFile(join(root, src)), `${name}: ${src} is a valid Herald configuration`);
        // Regression: admin on 0.0.0.0:9179 left no room for the metrics listener on the node address, same port.
        const cfg = await loadConfigFile(join(root, src));
        t.equal(cfg.admin.address, '127.0.0.1', `${name}: the admin API stays on loopback`);
        t.same(metricsListener(cfg, resolveIdentity(cfg, { env: {} }, name)), { address: cfg.node.ip, port: 9179 }, `${name}: metrics on the node address beside it`);
        t.same(svc.command, ['run', '--config', '/etc/herald/herald.yaml'], `${name}: runs herald with it`);
      }
    }
  }
  t.ok(files >= 5, `${files} referenced files checked`);
});

t.test('the lab manifests parse as Kubernetes objects', async (t) => {
  const dir = join(root, 'deploy/compose/manifests');
  const docs = readdirSync(dir).flatMap((f) => parseAllDocuments(readFileSync(join(dir, f), 'utf8')));
  t.ok(docs.length >= 4, `${docs.length} objects`);
  for (const d of docs) {
    t.same(d.errors, [], 'no YAML error');
    t.ok((d.toJS() as { kind?: string }).kind, 'has a kind');
  }
});

const hasBird = spawnSync('sh', ['-c', 'command -v bird']).status === 0;
t.test('BIRD accepts the lab router config (bird -p)', { skip: skipUnless({ bird2: hasBird }) }, async (t) => {
  const r = spawnSync('bird', ['-p', '-c', join(root, 'deploy/compose/bird.conf')], { encoding: 'utf8' });
  t.equal(r.status, 0, r.stderr);
});

t.test('no service takes its network\'s gateway (Docker and podman give the gateway to the bridge)', async (t) => {
  const lab = readLab(readFileSync(join(root, 'docker-compose.yml'), 'utf8'), root);
  t.same(lab.services.map((s) => s.name), ['bird', 'node1', 'node2'], 'started in dependency order (bird first)');
  const net = lab.networks[0];
  t.ok(net?.subnet !== undefined && net.gateway !== undefined, `the network sets its subnet and gateway (${net?.subnet}, ${net?.gateway})`);
  const addresses = lab.services.flatMap((s) => [...s.networks.values()]);
  t.equal(addresses.length, 3, 'every service has its static address');
  t.notOk(addresses.includes(net?.gateway), `no service is at the gateway ${net?.gateway} (BIRD at 198.18.0.1 once collided with the default gateway)`);
});

t.test('scripts/compose.ts: the podman commands of a compose file, and what it refuses', async (t) => {
  const lab = readLab('services:\n  b: {image: x, depends_on: [a], networks: {n: {ipv4_address: 10.0.0.3}}, volumes: [./f:/f:ro]}\n  a: {image: y, command: [run]}\nnetworks:\n  n: {ipam: {config: [{subnet: 10.0.0.0/24, gateway: 10.0.0.254}]}}\n', '/lab');
  t.same(upCommands(lab, 'p'), [
    ['network', 'create', '--label', 'com.docker.compose.project=p', '--subnet', '10.0.0.0/24', '--gateway', '10.0.0.254', 'p_n'],
    ['run', '--detach', '--name', 'p_a_1', '--label', 'com.docker.compose.project=p', '--network-alias', 'a', 'y', 'run'],
    ['run', '--detach', '--name', 'p_b_1', '--label', 'com.docker.compose.project=p', '--network-alias', 'b', '--network', 'p_n:ip=10.0.0.3', '--volume', '/lab/f:/f:ro', 'x'],
  ]);
  t.throws(() => readLab('services:\n  a: {image: y, ports: ["80:80"]}\n', '/'), /services\.a: ports is not supported by scripts\/compose\.ts/);
  t.throws(() => readLab('services:\n  a: {image: y, depends_on: [b]}\n', '/'), /no service b/);
  t.throws(() => readLab('services:\n  a: {image: y, networks: [m]}\n', '/'), /m is not among the networks/);
});

const isRoot = process.getuid?.() === 0;
const hasPodman = commandAvailable('podman', ['--version']);
const CONTAINERS_CONF = join(root, 'scripts/containers.conf');
const podmanEnv = { ...process.env, CONTAINERS_CONF };
const imagesLoaded = hasPodman && ['herald', 'herald-bird'].every((i) => spawnSync('podman', ['image', 'exists', `localhost/${i}:${VERSION}`], { env: podmanEnv }).status === 0);
t.test('the lab runs: scripts/compose.sh up, BIRD has the VIP from node1 only, herald services and metrics answer, down', { skip: skipUnless({ root: isRoot, podman: hasPodman, 'images localhost/herald and localhost/herald-bird': imagesLoaded }, 'sudo bash scripts/image.sh'), timeout: 300_000 }, async (t) => {
  const ns = `herald-compose-${process.pid}`;
  const project = `heraldtest${process.pid}`;
  const inNs = (cmd: string[], timeout = 180_000) => spawnSync('nsenter', [`--net=/run/netns/${ns}`, ...cmd], { encoding: 'utf8', timeout, env: podmanEnv });
  t.equal(spawnSync('ip', ['netns', 'add', ns]).status, 0, `network namespace ${ns}`);
  t.teardown(() => {
    inNs(['bash', join(root, 'scripts/compose.sh'), 'down', '-p', project]);
    spawnSync('ip', ['netns', 'del', ns]);
    spawnSync('rm', ['-rf', `/var/lib/cni/networks/${project}_lab`]);
  });
  inNs(['ip', 'link', 'set', 'lo', 'up']);
  // The bridge and its addresses live in the test's namespace (nsenter keeps the host's mounts: `ip netns exec`
  // would remount /sys and hide the cgroups from runc).
  const up = inNs(['bash', join(root, 'scripts/compose.sh'), 'up', '-p', project]);
  t.equal(up.status, 0, `compose.sh up: ${up.stderr}`);
  const exec = (c: string, args: string[]) => spawnSync('podman', ['exec', `${project}_${c}_1`, ...args], { encoding: 'utf8', timeout: 60_000, env: podmanEnv });
  let routes = '';
  for (const deadline = Date.now() + 150_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 2000))) {
    routes = exec('bird', ['birdc', 'show', 'route', 'all', '203.0.113.10/32']).stdout;
    if (/via 198\.18\.0\.11/.test(routes)) break;
  }
  t.match(routes, /203\.0\.113\.10\/32\s+unicast \[node1 /, 'BIRD (birdc on its default socket) has 203.0.113.10/32 from node1');
  t.notMatch(routes, /via 198\.18\.0\.12/, 'not from node2 (no endpoint there)');
  t.match(exec('node1', ['herald', 'services']).stdout, /demo\/web\s+203\.0\.113\.10\s+loadBalancer\s+yes/, 'herald services on node1: announced');
  t.match(exec('node2', ['herald', 'services']).stdout, /demo\/web\s+203\.0\.113\.10\s+loadBalancer\s+no/, 'herald services on node2: not announced');
  const metrics = inNs([process.execPath, '-e', "fetch('http://198.18.0.11:9179/metrics').then((r) => r.text()).then((t) => process.stdout.write(t))"], 30_000);
  t.match(metrics.stdout, /herald_bgp_session_up\{peer="router"\} 1/, 'the metrics listener on the node address: the session is up');
  const down = inNs(['bash', join(root, 'scripts/compose.sh'), 'down', '-p', project]);
  t.equal(down.status, 0, `compose.sh down: ${down.stderr}`);
  t.equal(spawnSync('podman', ['ps', '--all', '--filter', `label=com.docker.compose.project=${project}`, '--format', '{{.Names}}'], { encoding: 'utf8', env: podmanEnv }).stdout.trim(), '', 'down removed every container');
});
