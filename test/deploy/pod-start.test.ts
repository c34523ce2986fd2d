/**
 * "A pod that starts": every example configuration can run in the pod that ships it (a BGP listen port below 1024
 * needs uid 0 with NET_BIND_SERVICE; files and variables it reads are mounted or set), the image puts `herald` on the
 * PATH (scripts/image.sh, read statically here; test/deploy/image.test.ts runs the image itself), and
 * bin/herald.js on a Node older than 24 prints one line naming the fix.
 */
import t, { type Test } from 'tap';
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parse } from 'yaml';
import type * as k8s from '@kubernetes/client-node';
import type { Config } from '../../src/config/schema.ts';
import { renderKustomization } from './kustomize.ts';
import { IMAGE_UID, listenProblem, parseHeraldYaml, podProblems, privileges } from './pod-checks.ts';

const root = new URL('../../', import.meta.url).pathname;
const node24 = process.execPath;

const exampleFiles = readdirSync(join(root, 'examples')).filter((f) => f.endsWith('.yaml')).map((f) => `examples/${f}`);
const composeFiles = readdirSync(join(root, 'deploy/compose')).filter((f) => /^herald-.*\.yaml$/.test(f)).map((f) => `deploy/compose/${f}`);
const manifests = renderKustomization(join(root, 'deploy/kubernetes'));
const ds = manifests.find((d) => d.kind === 'DaemonSet') as unknown as k8s.V1DaemonSet;
const configMap = manifests.find((d) => d.kind === 'ConfigMap') as unknown as k8s.V1ConfigMap;
const herald = ds.spec?.template.spec?.containers.find((c) => c.name === 'herald') as k8s.V1Container;

/** Configurations that run in the DaemonSet: the shipped ConfigMap and the examples written for a cluster. */
function daemonSetConfigs(): { where: string; cfg: Config }[] {
  const out = [{ where: 'deploy/kubernetes/configmap.yaml', cfg: parseHeraldYaml(configMap.data?.['herald.yaml'] ?? '', 'configmap') }];
  for (const f of exampleFiles) {
    const cfg = parseHeraldYaml(readFileSync(join(root, f), 'utf8'), f);
    if (cfg.source?.kubernetes) out.push({ where: f, cfg });
  }
  return out;
}

t.test('the privilege model: non-root gets no capability; root gets what is added', async (t) => {
  const cfg = parseHeraldYaml('bgp: {localAs: 65000, routerId: 10.0.0.1, listen: {port: 179}}', 'inline');
  t.match(listenProblem(cfg, privileges({ runAsUser: 1000, capabilities: { drop: ['ALL'], add: ['NET_BIND_SERVICE'] } }, IMAGE_UID)), /below 1024/, 'NET_BIND_SERVICE does nothing for uid 1000');
  t.equal(listenProblem(cfg, privileges({ runAsUser: 0, capabilities: { drop: ['ALL'], add: ['NET_BIND_SERVICE'] } }, IMAGE_UID)), undefined);
  t.match(listenProblem(cfg, privileges({ runAsUser: 0, capabilities: { drop: ['ALL'] } }, IMAGE_UID)), /uid 0/);
  t.match(listenProblem(parseHeraldYaml('bgp: {localAs: 65000, routerId: 10.0.0.1, listen: {}}', 'inline'), privileges(undefined, IMAGE_UID)), /port 179 /, 'listen without a port is 179');
  t.equal(listenProblem(parseHeraldYaml('bgp: {localAs: 65000, routerId: 10.0.0.1, listen: {port: 1179}}', 'inline'), privileges(undefined, IMAGE_UID)), undefined);
});

t.test('every example configuration can bind its BGP listen port in the pod or container that runs it', async (t) => {
  t.ok(exampleFiles.length >= 3 && composeFiles.length >= 2, `${exampleFiles.length} examples, ${composeFiles.length} compose configs`);
  const dsPriv = privileges(herald.securityContext, IMAGE_UID);
  t.equal(dsPriv.uid, 1000, 'the DaemonSet runs as uid 1000');
  let listening = 0;
  for (const f of exampleFiles) {
    const cfg = parseHeraldYaml(readFileSync(join(root, f), 'utf8'), f);
    if (cfg.bgp.listen) listening++;
    t.equal(listenProblem(cfg, dsPriv), undefined, `${f} in the DaemonSet`);
  }
  t.ok(listening >= 1, 'at least one example listens (so the check is exercised)');
  t.equal(listenProblem(parseHeraldYaml(configMap.data?.['herald.yaml'] ?? '', 'configmap'), dsPriv), undefined, 'deploy/kubernetes/configmap.yaml in the DaemonSet');
  // docker-compose.yml runs the image as its USER with Docker's default capabilities (no user: or cap_add: set).
  const compose = parse(readFileSync(join(root, 'docker-compose.yml'), 'utf8')) as { services: Record<string, { user?: string; cap_add?: string[] }> };
  for (const [name, svc] of Object.entries(compose.services)) t.same([svc.user, svc.cap_add], [undefined, undefined], `compose service ${name}: image user, default capabilities`);
  for (const f of composeFiles) t.equal(listenProblem(parseHeraldYaml(readFileSync(join(root, f), 'utf8'), f), privileges(undefined, IMAGE_UID)), undefined, `${f} in docker compose`);
  t.notOk(herald.securityContext?.capabilities?.add?.length, 'no capability is added, since no shipped configuration needs one');
});

t.test('what a DaemonSet configuration reads is mounted or set: admin port = probe port, metrics on the node address and the metrics port, token, passwords, stateDir', async (t) => {
  const configs = daemonSetConfigs();
  t.ok(configs.length >= 2, configs.map((c) => c.where).join(', '));
  for (const { where, cfg } of configs) t.same(podProblems(cfg, herald), [], `${where} runs in the DaemonSet`);
  t.ok(herald.volumeMounts?.some((m) => m.mountPath === '/etc/herald/config') && herald.args?.includes('/etc/herald/config/herald.yaml'), 'the ConfigMap directory is mounted where --config points');
  const broken = parseHeraldYaml('bgp: {localAs: 1, routerId: 10.0.0.1}\nadmin: {port: 9000}\nstateDir: /var/tmp\npeers: [{name: a, address: 10.0.0.2, peerAs: 2, password: {env: NOPE}}]', 'inline');
  t.same(podProblems(broken, herald).length, 5, `a configuration that would not start is caught: ${podProblems(broken, herald).join('; ')}`);
  const withPreStop = { ...herald, lifecycle: { preStop: { exec: { command: ['herald', 'drain'] } } } };
  t.match(podProblems(configs[0]!.cfg, withPreStop), [/a preStop hook/], 'a preStop drain is caught (a rolling update must be a restart)');
  const base = 'bgp: {localAs: 1}\nadmin: {tokenFile: /etc/herald/admin/token}\n';
  t.match(podProblems(parseHeraldYaml(`${base}metrics: {port: 9100}`, 'inline'), herald), [/metrics\.port 9100 is not the port named metrics \(9179\)/]);
  t.match(podProblems(parseHeraldYaml(`${base}metrics: {address: 192.0.2.5}`, 'inline'), herald), [/metrics\.address 192\.0\.2\.5: one address for every node/]);
});

t.test('scripts/image.sh: Node 24, `herald` on the PATH as the entrypoint, uid 1000, /app (the image test runs it)', async (t) => {
  const script = readFileSync(join(root, 'scripts/image.sh'), 'utf8');
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { engines: { node: string }; version: string };
  t.match(script, /case "\$node_version" in v24\.\*\)/, 'the image takes Node.js 24 only');
  t.equal(pkg.engines.node, '>=24', 'package.json engines agree');
  t.match(script, /cp deploy\/herald "\$app\/usr\/local\/bin\/herald"/, 'the entrypoint script is installed as /usr/local/bin/herald');
  t.match(script, /--env PATH=\/usr\/local\/bin:/, 'on the PATH');
  t.match(script, /--entrypoint '\["herald"\]'/, 'ENTRYPOINT ["herald"]');
  t.match(script, /--user 1000:1000/, 'USER 1000:1000 (the DaemonSet runAsUser)');
  t.match(script, /--workingdir \/app .*--env HERALD_HOME=\/app/s, 'the app lives in /app, the entrypoint script default');
  for (const dir of ['bin', 'bgp', 'src', 'tools']) t.ok(existsSync(join(root, dir)), `${dir}/ (copied into /app) exists`);
  const image = herald.image ?? '';
  t.equal(image.split(':')[1], pkg.version, `the DaemonSet's image tag is package.json's version ${pkg.version}`);
});

t.test('deploy/herald (the image entrypoint) runs the CLI with HERALD_HOME', async (t) => {
  const env = { ...process.env, HERALD_HOME: root, PATH: `${dirname(node24)}:${process.env['PATH'] ?? ''}` };
  const help = spawnSync('sh', [join(root, 'deploy/herald'), '--help'], { encoding: 'utf8', env, timeout: 60_000 });
  t.equal(help.status, 0, help.stderr);
  t.match(help.stdout, /^Usage: herald <command>/);
  const check = spawnSync('sh', [join(root, 'deploy/herald'), 'config', 'check', join(root, 'examples/kubernetes.yaml')], { encoding: 'utf8', env, timeout: 60_000 });
  t.equal(check.status, 0, check.stderr);
  t.match(check.stdout, /valid/);
  t.match(readFileSync(join(root, 'deploy/herald'), 'utf8'), /^exec node "\$\{HERALD_HOME:-\/app\}\/bin\/herald\.js" "\$@"$/m, 'one line: bin/herald.js applies the Node settings itself, as for every other way to start it');
});

/**
 * Runs `node --require PRINTER bin/herald.js ARGS`, where PRINTER prints `execArgv` of every process it is loaded
 * into (distinct lines): the process bin/herald.js re-executes keeps the flags it was given (ours come first), so it prints again.
 */
function execArgvs(t: Test, args: string[], env: NodeJS.ProcessEnv = {}): string[] {
  const dir = mkdtempSync(join(tmpdir(), 'herald-entrypoint-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const printer = join(dir, 'printer.cjs');
  writeFileSync(printer, "process.stderr.write('execArgv ' + process.execArgv.filter((a) => a.startsWith('--max')).join(' ') + '\\n');\n");
  const r = spawnSync(node24, ['--require', printer, join(root, 'bin/herald.js'), ...args], { encoding: 'utf8', env: { ...process.env, ...env }, timeout: 60_000 });
  // Threads (the speaker thread starts first thing of `herald run`) load the printer too: one line per flag set.
  return [...new Set(r.stderr.split('\n').filter((l) => l.startsWith('execArgv')).map((l) => l.slice('execArgv '.length).trim()))];
}

t.test('bin/herald.js re-executes the daemons with their V8 flags (the old generation from the limit); other commands keep Node\'s', async (t) => {
  t.same(execArgvs(t, ['run', '--config', '/nonexistent.yaml'], { HERALD_MEMORY_LIMIT_MIB: '256' }), ['', '--max-semi-space-size=1 --max-opt=2 --max-old-space-size=128'], 'herald run: once as started, once re-executed');
  t.same(execArgvs(t, ['controller', '--config', '/nonexistent.yaml'], { HERALD_MEMORY_LIMIT_MIB: '384' }).at(-1), '--max-semi-space-size=1 --max-opt=2 --max-old-space-size=192', 'herald controller too');
  t.same(execArgvs(t, ['run', '--config', '/nonexistent.yaml'], { HERALD_MEMORY_LIMIT_MIB: 'not-a-number' }).at(-1), '--max-semi-space-size=1 --max-opt=2', 'a limit that is no number adds no flag');
  t.same(execArgvs(t, ['decode', '--help']), [''], 'herald decode is not re-executed (its start-up counts) and keeps TurboFan');
  t.same(execArgvs(t, ['status', '--help']), [''], 'nor are the admin commands');
});

t.test('the DaemonSet passes its memory limit to the entrypoint', async (t) => {
  const text = readFileSync(join(root, 'deploy/kubernetes/daemonset.yaml'), 'utf8');
  t.match(text, /- name: HERALD_MEMORY_LIMIT_MIB\n\s+valueFrom:\n\s+resourceFieldRef:\n\s+containerName: herald\n\s+resource: limits.memory\n\s+divisor: 1Mi/);
  t.match(readFileSync(join(root, 'deploy/helm/herald/templates/daemonset.yaml'), 'utf8'), /- name: HERALD_MEMORY_LIMIT_MIB\n\s+valueFrom:\n\s+resourceFieldRef:\n\s+containerName: herald\n\s+resource: limits.memory/);
});

/** One-line error on stderr, exit 1, naming `npm ci`. */
function assertVersionError(t: Test, r: ReturnType<typeof spawnSync>, found: string): void {
  t.equal(r.status, 1, 'exits 1');
  const err = String(r.stderr);
  t.equal(err.trim().split('\n').length, 1, `one line: ${err}`);
  t.match(err, new RegExp(`^herald: needs Node\\.js 24 or newer, found ${found.replace(/\./g, '\\.')} .*npm ci`));
  t.notMatch(err, /ERR_UNKNOWN_FILE_EXTENSION/);
  t.equal(String(r.stdout), '');
}

t.test('bin/herald.js on a Node older than 24: one line naming the fix (version faked on Node 24)', async (t) => {
  const fake = join(mkdtempSync(join(tmpdir(), 'herald-node-')), 'fake-version.cjs');
  writeFileSync(fake, "Object.defineProperty(process.versions, 'node', { value: '22.9.0' }); Object.defineProperty(process, 'version', { value: 'v22.9.0' });\n");
  try {
    const r = spawnSync(node24, ['--require', fake, join(root, 'bin/herald.js'), '--help'], { encoding: 'utf8', timeout: 60_000 });
    assertVersionError(t, r, 'v22.9.0');
  } finally {
    rmSync(dirname(fake), { recursive: true, force: true });
  }
});

/** A Node older than 24 on this machine (the system's, under /usr/bin), if any. */
function oldNode(): { path?: string; version?: string } {
  for (const p of ['/usr/bin/node', '/usr/local/bin/node']) {
    const r = spawnSync(p, ['--version'], { encoding: 'utf8', timeout: 10_000 });
    if (r.status === 0 && Number(/^v(\d+)/.exec(r.stdout)?.[1]) < 24) return { path: p, version: r.stdout.trim() };
  }
  return {};
}
const old = oldNode();

t.test('bin/herald.js and `npm run herald` before `npm ci`, with a real old Node', { skip: old.path ? false : 'no Node older than 24 on this machine (the check is covered with a faked version above)' }, async (t) => {
  const r = spawnSync(old.path as string, [join(root, 'bin/herald.js'), '--help'], { encoding: 'utf8', timeout: 60_000 });
  assertVersionError(t, r, old.version as string);
  // A checkout without node_modules: npm finds only the old Node on the PATH.
  const dir = mkdtempSync(join(tmpdir(), 'herald-checkout-'));
  try {
    mkdirSync(join(dir, 'bin'));
    copyFileSync(join(root, 'package.json'), join(dir, 'package.json'));
    copyFileSync(join(root, 'bin/herald.js'), join(dir, 'bin/herald.js'));
    const npm = spawnSync('npm', ['run', '-s', 'herald', '--', '--help'], { cwd: dir, encoding: 'utf8', timeout: 60_000, env: { ...process.env, PATH: `${dirname(old.path as string)}:/bin` } });
    assertVersionError(t, npm, old.version as string);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
