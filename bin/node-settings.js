// The Node.js settings Herald's daemons run with, however they are started (the image, `npm run -s herald -- run`,
// `node bin/herald.js run`, a systemd unit): V8 takes heap flags only on the command line and glibc reads its malloc
// settings from the environment at process start, so bin/herald.js re-executes Node with them (process.execve: same
// PID, no parent left behind) before it loads anything else. Plain JavaScript (bin/herald.js's rules).
//
// What and why (docs/benchmarks.md "Levers" has the measurements):
// - A small young generation: `--max-semi-space-size=1` for the daemons (peak RSS with a 100k-route burst drops from
//   ~190 to ~130 MiB at no measurable CPU cost; 1 MiB against 2: 115-116 against 117-121 MiB at 100 Services after
//   5,000 flips).
// - An old generation sized from the memory limit (`--max-old-space-size` = half of it): V8 otherwise sizes its heap
//   from the machine's memory, lets it grow far past what is live, and the kernel OOM-kills the process first. The
//   limit comes from HERALD_MEMORY_LIMIT_MIB (the DaemonSet sets it from the container's limits.memory), else from the
//   process's own cgroup and its ancestors (v2 memory.max, v1 memory.limit_in_bytes: a container's limit and a systemd
//   unit's MemoryMax alike); no flag when there is no limit.
// - Maglev as V8's top tier (`--max-opt=2`, no TurboFan): TurboFan's compiles and code cost the daemon 10-15 MiB of
//   peak RSS at 10,000 Services for no measurable change in CPU per event. One-shot commands keep TurboFan.
// - glibc malloc: one arena (MALLOC_ARENA_MAX=1) and a fixed mmap threshold of 128 KiB (MALLOC_MMAP_THRESHOLD_),
//   each unless set: with an arena per thread the memory freed in one is not reused by the others, and a dynamic
//   threshold moves large blocks into the arena, which returns memory only from its top.
import { readFileSync } from 'node:fs';

/** The commands that run for long and get the settings: the daemon and the cluster controller. */
export const DAEMON_COMMANDS = new Set(['run', 'controller']);

/** The V8 flags of the daemons, before the memory limit's `--max-old-space-size`. */
export const DAEMON_FLAGS = ['--max-semi-space-size=1', '--max-opt=2'];

/** The glibc malloc settings of the daemons (each applied only when the environment does not set it). */
export const MALLOC_ENV = { MALLOC_ARENA_MAX: '1', MALLOC_MMAP_THRESHOLD_: '131072' };

/**
 * Set to `applied` in the environment of the re-executed process (and removed from it at once, so that nothing it
 * starts inherits it); `off` turns the re-execution off (the process then runs with whatever Node was given).
 */
export const SETTINGS_ENV = 'HERALD_NODE_SETTINGS';

/** A cgroup memory limit at or above this many bytes means "no limit" (cgroup v1 writes ~2^63 for unlimited). */
const UNLIMITED_BYTES = 2 ** 60;

/**
 * The memory limit in MiB that V8's old generation is sized from, or undefined when there is none.
 * HERALD_MEMORY_LIMIT_MIB (a positive integer) wins; else the smallest limit of the process's cgroup and its
 * ancestors: cgroup v2 (`0::/path` in /proc/self/cgroup → /sys/fs/cgroup/path/memory.max) or v1 (the `memory`
 * controller's path → /sys/fs/cgroup/memory/path/memory.limit_in_bytes). Inside a container with its own cgroup
 * namespace the path is `/` and the container's limit is at the root. Unreadable files count as no limit.
 * @param env the environment to read HERALD_MEMORY_LIMIT_MIB from
 * @param read reads a file as text, throws when it cannot (a seam for tests)
 */
export function memoryLimitMiB(env = process.env, read = (path) => readFileSync(path, 'utf8')) {
  const given = env.HERALD_MEMORY_LIMIT_MIB;
  if (given !== undefined && given !== '') {
    const n = Number(given);
    return Number.isInteger(n) && n > 0 ? n : undefined;
  }
  let lines;
  try {
    lines = read('/proc/self/cgroup').split('\n');
  } catch {
    return undefined;
  }
  const limits = [];
  for (const line of lines) {
    const [, controllers, path] = /^\d+:([^:]*):(.*)$/.exec(line) ?? [];
    if (path === undefined) continue;
    if (controllers === '') limits.push(...cgroupLimits('/sys/fs/cgroup', path, 'memory.max', read));
    else if (controllers.split(',').includes('memory')) limits.push(...cgroupLimits('/sys/fs/cgroup/memory', path, 'memory.limit_in_bytes', read));
  }
  const bytes = Math.min(...limits);
  return Number.isFinite(bytes) ? Math.floor(bytes / 1048576) : undefined;
}

/** The numeric limits in `file` of the cgroup at `path` under `root` and of each of its ancestors, in bytes. */
function cgroupLimits(root, path, file, read) {
  const out = [];
  const parts = path.split('/').filter((p) => p !== '' && p !== '..');
  for (let i = parts.length; i >= 0; i--) {
    const dir = [root, ...parts.slice(0, i)].join('/');
    let text;
    try {
      text = read(`${dir}/${file}`).trim();
    } catch {
      continue;
    }
    const n = Number(text);
    if (/^\d+$/.test(text) && n > 0 && n < UNLIMITED_BYTES) out.push(n);
  }
  return out;
}

/**
 * The V8 flags a daemon command gets: DAEMON_FLAGS, then `--max-old-space-size` = half the memory limit (MiB) when
 * there is one.
 * @param limitMiB the memory limit in MiB (memoryLimitMiB()), or undefined
 */
export function daemonFlags(limitMiB) {
  return limitMiB === undefined ? [...DAEMON_FLAGS] : [...DAEMON_FLAGS, `--max-old-space-size=${Math.max(16, Math.floor(limitMiB / 2))}`];
}

/**
 * The environment a daemon command is re-executed with: `env` with MALLOC_ENV's settings where `env` has none, and
 * SETTINGS_ENV=applied.
 */
export function daemonEnv(env = process.env) {
  const out = { ...env, [SETTINGS_ENV]: 'applied' };
  for (const [k, v] of Object.entries(MALLOC_ENV)) if (out[k] === undefined) out[k] = v;
  return out;
}
