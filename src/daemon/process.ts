/**
 * What `herald run` and `herald controller` share as processes: the configuration file read first (a file that does
 * not load stops the start with exit code 1), the JSON log on stdout, the metrics registry, and the signals around
 * the components (components.ts):
 * - SIGTERM / SIGINT → stop every component in reverse order, exit 0 (a second one during the stop exits at once, 1);
 * - SIGHUP → reload the configuration (the configuration watcher);
 * - SIGUSR2 → the test hook HERALD_TEST_BLOCK_MS (below), only when that variable is set.
 */
import { pino } from 'pino';
import type { Logger } from 'pino';
import { ConfigError, ConfigFile } from '../config/load.ts';
import type { Config } from '../config/schema.ts';
import { HeraldMetrics } from '../metrics/metrics.ts';
import { version as packageVersion } from '../version.ts';
import { Components, fileStamp, startErrorLog } from './components.ts';
import type { Component } from './components.ts';
import { MappingError } from './mapping.ts';

/** What a process has once its configuration file is read. */
export interface Boot {
  readonly config: Config;
  /** The file, for reloads (content read already is not parsed again). */
  readonly file: ConfigFile;
  readonly path: string;
  /** The file's stamp, taken before it was first read: a change made while starting is reloaded after the start. */
  readonly stamp: string;
  readonly log: Logger;
  readonly version: string;
  readonly metrics: HeraldMetrics;
}

/**
 * Read the configuration file and set up the log and the metrics.
 * @returns undefined when the file does not load (the reason is on stderr, `herald <command>: ...`)
 */
export async function boot(command: string, path: string, env: NodeJS.ProcessEnv, logStream?: { write(line: string): void }): Promise<Boot | undefined> {
  const file = new ConfigFile(path, { env });
  const stamp = fileStamp(path);
  let config: Config;
  try {
    config = await file.load();
  } catch (err) {
    process.stderr.write(`herald ${command}: ${(err as Error).message}\n`);
    return undefined;
  }
  const logOpts = { level: config.logLevel, base: { pid: process.pid }, timestamp: pino.stdTimeFunctions.isoTime };
  const log = logStream ? pino(logOpts, logStream) : pino(logOpts);
  const version = await packageVersion();
  return { config, file, path, stamp, log, version, metrics: new HeraldMetrics({ version }) };
}

/** A build that failed before anything ran: logged, on stderr, exit code 1. */
export function cannotStart(command: string, log: Logger, err: unknown): number {
  const msg = err instanceof MappingError || err instanceof ConfigError ? err.message : `${(err as Error).message}`;
  log.fatal(startErrorLog(err), 'cannot start');
  process.stderr.write(`herald ${command}: cannot start: ${msg}\n`);
  return 1;
}

/**
 * Test hook (docs/development.md): with HERALD_TEST_BLOCK_MS=N in the environment, SIGUSR2 busy-loops the main
 * event loop for N ms — the admin API, the controller and the health checks stop; the BGP sessions in the speaker
 * thread must not (test/interop/daemon-main-block-bird.test.ts). Off unless the variable is set.
 */
function installBlockHook(env: NodeJS.ProcessEnv, log: Logger): (() => void) | undefined {
  const ms = Number(env['HERALD_TEST_BLOCK_MS'] ?? '');
  if (!Number.isFinite(ms) || ms <= 0) return undefined;
  const onBlock = (): void => {
    log.warn({ ms }, 'main event loop blocked on purpose (test hook HERALD_TEST_BLOCK_MS)');
    log.flush?.();
    const end = Date.now() + ms;
    while (Date.now() < end) {
      /* blocked on purpose */
    }
    log.warn({ ms }, 'main event loop unblocked (test hook HERALD_TEST_BLOCK_MS)');
  };
  process.on('SIGUSR2', onBlock);
  return () => process.off('SIGUSR2', onBlock);
}

/** Options of {@link serve}. */
export interface ServeOptions {
  readonly command: string;
  readonly components: readonly Component[];
  readonly log: Logger;
  readonly env: NodeJS.ProcessEnv;
  /** SIGHUP: reload the configuration. */
  readonly reload: (why: string) => void;
  /** Resolves to stop (tests); signals also stop. */
  readonly stopSignal?: Promise<unknown>;
  /** Hands over the stop, for a component that must end the process (the speaker thread's death). */
  readonly onStop?: (stop: (why: string, exitCode: number) => void) => void;
}

/**
 * Start the components and run until a stop (signals are handled from before the start: a stop during the start
 * waits for the component starting, a reload asked for during it runs after it).
 * @returns the process exit code: 0 after a clean stop, 1 when a component could not start, or the stop's own
 */
export async function serve(o: ServeOptions): Promise<number> {
  const { log } = o;
  const components = new Components(o.components, log);
  let resolveDone!: (code: number) => void;
  const done = new Promise<number>((resolve) => (resolveDone = resolve));
  let stopped = false;
  const unhook = () => {
    process.off('SIGTERM', onTerm);
    process.off('SIGINT', onInt);
    process.off('SIGHUP', onHup);
    removeBlockHook?.();
  };
  const stop = async (why: string, exitCode = 0) => {
    if (stopped) {
      if (why === 'SIGTERM' || why === 'SIGINT') {
        log.warn({ signal: why }, 'second signal during shutdown: exiting now');
        log.flush?.();
        process.exit(1);
      }
      return;
    }
    stopped = true;
    await components.stop(why);
    unhook();
    log.info({ exitCode }, 'stopped');
    log.flush?.();
    resolveDone(exitCode);
  };
  const onTerm = () => void stop('SIGTERM');
  const onInt = () => void stop('SIGINT');
  const onHup = () => o.reload('SIGHUP');
  process.on('SIGTERM', onTerm);
  process.on('SIGINT', onInt);
  process.on('SIGHUP', onHup);
  const removeBlockHook = installBlockHook(o.env, log);
  o.onStop?.((why, exitCode) => void stop(why, exitCode));
  o.stopSignal?.then(() => stop('stop requested'));
  try {
    await components.start();
  } catch (err) {
    stopped = true;
    unhook();
    process.stderr.write(`herald ${o.command}: ${(err as Error).message}\n`);
    return 1;
  }
  return done;
}
