/**
 * `herald run`: read the configuration file, build the components of a node (node-components.ts: the speaker
 * thread, the source, the pipeline, the admin API and the metrics-only listener, this node's status, the status
 * writer and the allocator unless `herald controller` runs them (`--separate-controller`), the state file's
 * heartbeat, the configuration watcher) and
 * run them until a stop (process.ts):
 * - SIGTERM / SIGINT → a stop in the mode the node's state calls for (a restart, or a departure when it is drained
 *   or leaving service; src/daemon/stop-mode.ts, docs/upgrades.md), exit 0;
 * - SIGHUP, or a change of the config file (polled every `watchIntervalMs`, which also sees
 *   ConfigMap symlink swaps) → reload: the new file is validated first; a bad file is rejected
 *   with every error logged and the running config stays; content read already is not parsed again;
 * - the speaker thread's death → a stop, exit code {@link EXIT_SPEAKER_THREAD}.
 *
 * Logs are pino JSON lines on stdout.
 */
import { hostname } from 'node:os';
import type { SpeakerThread } from '../../bgp/main-thread.ts';
import { metricsListener, resolveIdentity } from '../config/load.ts';
import type { RuntimeIdentity } from '../config/load.ts';
import type { ListenerAddress } from '../config/schema.ts';
import { buildNode } from './node-components.ts';
import type { Node } from './node-components.ts';
import { boot, cannotStart, serve } from './process.ts';

/** Exit code when the speaker thread died (EX_SOFTWARE of sysexits.h): the supervisor restarts Herald. */
export const EXIT_SPEAKER_THREAD = 70;

/** Options of {@link runDaemon}. */
export interface RunOptions {
  configPath: string;
  nodeName?: string;
  nodeIp?: string;
  env?: NodeJS.ProcessEnv;
  /** Config file poll period, ms (default 2000; 0 disables watching). */
  watchIntervalMs?: number;
  /** Resolves to stop the daemon (tests); signals also stop it. */
  stopSignal?: Promise<unknown>;
  /** Where the JSON log lines go (default stdout; tests). */
  logStream?: { write(line: string): void };
  /** State file heartbeat period, ms (default 5000; tests). */
  heartbeatIntervalMs?: number;
  /** The thread the Speaker runs on, spawned ahead (bgp/speaker-thread/thread.ts); default one spawned when it starts. */
  speakerThread?: SpeakerThread;
  /**
   * `herald controller` runs the cluster-wide writers (allocator, object status, Events on Services): this process
   * takes no Lease and writes only its own BGPNodeStatus and its own Node's drain annotation (docs/security.md).
   */
  separateController?: boolean;
}

/**
 * Run the daemon until a stop signal.
 * @returns the process exit code (0 after a clean stop, 1 when it could not start, {@link EXIT_SPEAKER_THREAD})
 */
export async function runDaemon(opts: RunOptions): Promise<number> {
  const env = opts.env ?? process.env;
  const b = await boot('run', opts.configPath, env, opts.logStream);
  if (b === undefined) return 1;
  let identity: RuntimeIdentity;
  let metricsAt: ListenerAddress | undefined;
  try {
    identity = resolveIdentity(b.config, { ...(opts.nodeName !== undefined ? { nodeName: opts.nodeName } : {}), ...(opts.nodeIp !== undefined ? { nodeIp: opts.nodeIp } : {}), env }, hostname());
    metricsAt = metricsListener(b.config, identity);
  } catch (err) {
    process.stderr.write(`herald run: ${(err as Error).message}\n`);
    return 1;
  }
  let stopWith: (why: string, exitCode: number) => void = () => undefined;
  let node: Node;
  try {
    node = await buildNode({
      ...b,
      identity,
      metricsAt,
      env,
      ...(opts.speakerThread ? { speakerThread: opts.speakerThread } : {}),
      ...(opts.heartbeatIntervalMs !== undefined ? { heartbeatIntervalMs: opts.heartbeatIntervalMs } : {}),
      ...(opts.watchIntervalMs !== undefined ? { watchIntervalMs: opts.watchIntervalMs } : {}),
      separateController: opts.separateController === true,
      onSpeakerThreadExit: () => stopWith('speaker thread exited', EXIT_SPEAKER_THREAD),
    });
  } catch (err) {
    return cannotStart('run', b.log, err);
  }
  return serve({
    command: 'run',
    components: node.components,
    log: b.log,
    env,
    reload: (why) => node.watcher.reload(why),
    ...(opts.stopSignal ? { stopSignal: opts.stopSignal } : {}),
    onStop: (stop) => (stopWith = stop),
  });
}
