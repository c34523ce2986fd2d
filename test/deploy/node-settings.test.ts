/**
 * One footprint however Herald is started (issue 34): bin/herald.js re-executes Node with the daemon's V8 and malloc
 * settings (bin/node-settings.js), so `node bin/herald.js run`, `npm run -s herald -- run` and the image's entrypoint
 * (deploy/herald) run the same process with the same flags and measure the same.
 */
import t from 'tap';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { stringify } from 'yaml';
import { daemonEnv, daemonFlags, memoryLimitMiB } from '../../bin/node-settings.js';
import { freePort } from '../helpers/bird.ts';
import { DaemonProcess, sleep } from '../helpers/daemon-process.ts';

const ROOT = join(import.meta.dirname, '..', '..');
// Three daemons started one after the other, plus a warm compile cache: about 30 s quiet, over 120 s under load.
t.setTimeout(400_000);
const NODE_DIR = dirname(process.execPath);

t.test('memoryLimitMiB: HERALD_MEMORY_LIMIT_MIB, else the smallest limit of the cgroup and its ancestors', async (t) => {
  const files = (m: Record<string, string>) => (p: string) => {
    const v = m[p];
    if (v === undefined) throw new Error(`ENOENT ${p}`);
    return v;
  };
  t.equal(memoryLimitMiB({ HERALD_MEMORY_LIMIT_MIB: '320' }, files({})), 320, 'the environment wins');
  t.equal(memoryLimitMiB({ HERALD_MEMORY_LIMIT_MIB: 'lots' }, files({})), undefined, 'a value that is no positive integer is no limit');
  t.equal(memoryLimitMiB({}, files({})), undefined, 'no /proc/self/cgroup: no limit');
  // cgroup v2, a systemd unit's slice: the unit has MemoryMax=512M, its parent slice 1G.
  const v2 = files({
    '/proc/self/cgroup': '0::/system.slice/herald.service\n',
    '/sys/fs/cgroup/system.slice/herald.service/memory.max': '536870912\n',
    '/sys/fs/cgroup/system.slice/memory.max': '1073741824\n',
    '/sys/fs/cgroup/memory.max': 'max\n',
  });
  t.equal(memoryLimitMiB({}, v2), 512, 'v2: the unit\'s MemoryMax');
  const v2parent = files({ '/proc/self/cgroup': '0::/a/b\n', '/sys/fs/cgroup/a/b/memory.max': 'max\n', '/sys/fs/cgroup/a/memory.max': '335544320\n' });
  t.equal(memoryLimitMiB({}, v2parent), 320, 'v2: an ancestor\'s limit bounds the process too');
  t.equal(memoryLimitMiB({}, files({ '/proc/self/cgroup': '0::/\n', '/sys/fs/cgroup/memory.max': '335544320\n' })), 320, 'v2 in a container (cgroup namespace): the root');
  t.equal(memoryLimitMiB({}, files({ '/proc/self/cgroup': '0::/\n', '/sys/fs/cgroup/memory.max': 'max\n' })), undefined, 'v2 without a limit');
  const v1 = files({
    '/proc/self/cgroup': '12:cpu,cpuacct:/x\n9:memory:/kubepods/pod1/c1\n0::/\n',
    '/sys/fs/cgroup/memory/kubepods/pod1/c1/memory.limit_in_bytes': '335544320\n',
    '/sys/fs/cgroup/memory/memory.limit_in_bytes': '9223372036854771712\n',
  });
  t.equal(memoryLimitMiB({}, v1), 320, 'v1: the memory controller\'s path; ~2^63 is unlimited');
});

t.test('daemonFlags and daemonEnv', async (t) => {
  t.same(daemonFlags(undefined), ['--max-semi-space-size=1', '--max-opt=2']);
  t.same(daemonFlags(320), ['--max-semi-space-size=1', '--max-opt=2', '--max-old-space-size=160'], 'the old generation is half the limit');
  const env = daemonEnv({ MALLOC_ARENA_MAX: '4' });
  t.equal(env['MALLOC_ARENA_MAX'], '4', 'a malloc setting the environment has is kept');
  t.equal(env['MALLOC_MMAP_THRESHOLD_'], '131072');
  t.equal(env['HERALD_NODE_SETTINGS'], 'applied');
});

/** A static-routes configuration of `n` /32s and one peer nobody answers (its table is packed ahead). */
async function workload(dir: string, n: number): Promise<{ config: string; adminPort: number }> {
  const adminPort = await freePort('127.0.0.1');
  const routes = Array.from({ length: n }, (_, i) => ({ prefix: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}/32` }));
  const config = join(dir, 'herald.yaml');
  writeFileSync(config, stringify({
    bgp: { localAs: 65000, routerId: '10.0.0.1' },
    peers: [{ name: 'nobody', address: '127.0.0.1', port: await freePort('127.0.0.1'), peerAs: 65001, connectRetryTime: 60 }],
    routes,
    admin: { address: '127.0.0.1', port: adminPort },
    stateDir: join(dir, 'state'),
    logLevel: 'warn',
  }));
  return { config, adminPort };
}

/** The PIDs of processes whose command line holds both `bin/herald.js` and `marker`. */
function heraldPids(marker: string): number[] {
  const out: number[] = [];
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    let cmd: string;
    try {
      cmd = readFileSync(`/proc/${e}/cmdline`, 'utf8');
    } catch {
      continue;
    }
    const args = cmd.split('\0');
    if (args.some((a) => a.endsWith('bin/herald.js')) && args.includes(marker)) out.push(Number(e));
  }
  return out;
}

const field = (pid: number, name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN) / 1024;

t.test('node bin/herald.js run: re-executed in place with the daemon\'s settings', { timeout: 60_000 }, async (t) => {
  const proc = new DaemonProcess('node-settings');
  t.teardown(() => proc.stop(10_000));
  const { config, adminPort } = await workload(proc.dir, 10);
  const env: NodeJS.ProcessEnv = { ...process.env, HERALD_MEMORY_LIMIT_MIB: '320' };
  delete env['MALLOC_ARENA_MAX'];
  delete env['MALLOC_MMAP_THRESHOLD_'];
  proc.spawn(process.execPath, [join(ROOT, 'bin', 'herald.js'), 'run', '--config', config], { env });
  await proc.waitFor(async () => (await fetch(`http://127.0.0.1:${adminPort}/healthz`).catch(() => undefined))?.ok, 'admin API up', 30_000);
  const pid = proc.child?.pid ?? -1;
  t.same(heraldPids(config), [pid], 'the same PID: re-executed in place, nothing left behind');
  const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  t.same(argv.slice(1, 4), ['--max-semi-space-size=1', '--max-opt=2', '--max-old-space-size=160'], 'the daemon\'s V8 flags, the old generation from the limit');
  const environ = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
  t.ok(environ.includes('MALLOC_ARENA_MAX=1') && environ.includes('MALLOC_MMAP_THRESHOLD_=131072'), 'glibc malloc settings in its environment');
});

t.test('HERALD_NODE_SETTINGS=off runs Node as given', { timeout: 60_000 }, async (t) => {
  const proc = new DaemonProcess('node-settings-off');
  t.teardown(() => proc.stop(10_000));
  const { config, adminPort } = await workload(proc.dir, 10);
  proc.spawn(process.execPath, [join(ROOT, 'bin', 'herald.js'), 'run', '--config', config], { env: { ...process.env, HERALD_NODE_SETTINGS: 'off' } });
  await proc.waitFor(async () => (await fetch(`http://127.0.0.1:${adminPort}/healthz`).catch(() => undefined))?.ok, 'admin API up', 30_000);
  const argv = readFileSync(`/proc/${proc.child?.pid ?? -1}/cmdline`, 'utf8').split('\0');
  t.notOk(argv.some((a) => a.startsWith('--max-')), `no V8 flags: ${argv.join(' ')}`);
});

t.test('the README\'s start, the image\'s entrypoint and node bin/herald.js measure the same', { timeout: 240_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'herald-start-ways-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const env = { ...process.env, NODE_COMPILE_CACHE: join(dir, 'cache'), HERALD_MEMORY_LIMIT_MIB: '320', PATH: `${NODE_DIR}:${process.env['PATH'] ?? ''}`, HERALD_HOME: ROOT };
  const warm = spawnSync(process.execPath, [join(ROOT, 'bin', 'herald.js'), 'warm-compile-cache'], { env, encoding: 'utf8', timeout: 120_000 });
  t.equal(warm.status, 0, warm.stderr);
  const ways: Array<[string, string, string[]]> = [
    ['node bin/herald.js run', process.execPath, [join(ROOT, 'bin', 'herald.js'), 'run']],
    ['npm run -s herald -- run (README)', 'npm', ['run', '-s', 'herald', '--', 'run']],
    ['deploy/herald run (the image\'s entrypoint)', 'sh', [join(ROOT, 'deploy', 'herald'), 'run']],
  ];
  const peaks: number[] = [];
  for (const [name, cmd, args] of ways) {
    const wdir = mkdtempSync(join(dir, 'w-'));
    const { config, adminPort } = await workload(wdir, 30_000);
    const child = spawn(cmd, [...args, '--config', config], { cwd: ROOT, env, stdio: 'ignore', detached: true });
    try {
      const deadline = Date.now() + 60_000;
      while (!(await fetch(`http://127.0.0.1:${adminPort}/readyz`).catch(() => undefined))?.ok && Date.now() < deadline) await sleep(200);
      await sleep(2_000);
      const pids = heraldPids(config);
      t.equal(pids.length, 1, `${name}: one herald process`);
      const pid = pids[0] ?? -1;
      const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      t.ok(daemonFlags(320).every((f) => argv.includes(f)), `${name}: runs with ${daemonFlags(320).join(' ')}`);
      peaks.push(field(pid, 'VmHWM'));
      t.comment(`${name}: VmHWM ${field(pid, 'VmHWM').toFixed(0)} MiB, VmRSS ${field(pid, 'VmRSS').toFixed(0)} MiB`);
    } finally {
      try {
        process.kill(-(child.pid ?? 0), 'SIGKILL');
      } catch {
        // already gone
      }
      for (const p of heraldPids(config)) {
        try {
          process.kill(p, 'SIGKILL');
        } catch {
          // already gone
        }
      }
    }
  }
  const ratio = Math.max(...peaks) / Math.min(...peaks);
  t.ok(ratio < 1.25, `peak RSS alike (max/min ${ratio.toFixed(2)}: ${peaks.map((p) => p.toFixed(0)).join(', ')} MiB)`);
});
