/**
 * A Herald process (`herald run`, `herald controller`) is an ordered list of components (docs/architecture.md
 * "Components"): each is built first (a throw there is a start error: nothing ran yet), then started in order and
 * stopped in reverse order. A component whose start fails stops the start: every component is then stopped in
 * reverse order (each stop is safe for a component that did not start), and the process exits with 1.
 *
 * The components themselves are in src/daemon/node-components.ts (`herald run`) and src/daemon/cluster-components.ts
 * (what both commands may run: the source, the status writers, the allocator); the generic ones (a listener, the
 * state file's heartbeat, the configuration watcher) are here.
 */
import { statSync } from 'node:fs';
import type { Logger } from 'pino';
import type { FastifyInstance } from 'fastify';
import type { Config, ListenerAddress } from '../config/schema.ts';
import { ConfigError } from '../config/load.ts';
import type { ConfigFile } from '../config/load.ts';
import { MappingError } from './mapping.ts';
import { writeHeartbeat } from './state.ts';

/** One part of a Herald process. */
export interface Component {
  /** What it is, in log lines and in the reason of a stop its failure causes (`admin API` → "admin API failed"). */
  readonly name: string;
  /**
   * Start it. A throw stops the process's start; its message is the process's error line (name what to fix).
   * Log the failure before throwing: the caller adds nothing but the stop.
   */
  start(): Promise<void> | void;
  /** Stop it: idempotent, never throws, safe when it did not start. `why` is what asked for the stop. */
  stop(why: string): Promise<void> | void;
}

/** A start that failed: the component, and what it threw. */
export class StartError extends Error {
  readonly component: string;
  constructor(component: string, cause: unknown) {
    super(cause instanceof Error ? cause.message : String(cause), { cause });
    this.name = 'StartError';
    this.component = component;
  }
}

/**
 * See the module comment: start in order, stop in reverse order. A stop asked for while starting waits for the
 * component starting then, starts no further one, and stops them all.
 */
export class Components {
  readonly #list: readonly Component[];
  readonly #log: Logger;
  #starting: Promise<void> | undefined;
  #stopAsked = false;
  #stopped: Promise<void> | undefined;

  constructor(list: readonly Component[], log: Logger) {
    this.#list = list;
    this.#log = log;
  }

  /** The components' names, in start order. */
  get names(): string[] {
    return this.#list.map((c) => c.name);
  }

  /**
   * Start every component in order (none after a stop was asked for). Call once.
   * @throws StartError naming the component whose start failed (every component has been stopped then)
   */
  async start(): Promise<void> {
    this.#starting = (async () => {
      for (const c of this.#list) {
        if (this.#stopAsked) return;
        try {
          await c.start();
        } catch (err) {
          throw new StartError(c.name, err);
        }
      }
    })();
    try {
      await this.#starting;
    } catch (err) {
      await this.#stopAll(`${(err as StartError).component} failed`);
      throw err;
    }
  }

  /** Stop every component in reverse order, once; a stop that throws is logged and the others go on. */
  async stop(why: string): Promise<void> {
    this.#stopAsked = true;
    await this.#starting?.catch(() => undefined);
    await this.#stopAll(why);
  }

  #stopAll(why: string): Promise<void> {
    this.#stopped ??= (async () => {
      for (const c of [...this.#list].reverse()) {
        try {
          await c.stop(why);
        } catch (err) {
          this.#log.warn({ component: c.name, err }, 'stop failed');
        }
      }
    })();
    return this.#stopped;
  }
}

/**
 * An expected start failure (a user error: port in use, no permission, a missing file) is logged as message and
 * code only; anything else is a bug and keeps its stack.
 */
export function startErrorLog(err: unknown): object {
  const e = err as NodeJS.ErrnoException;
  if (err instanceof MappingError || err instanceof ConfigError) return { errors: err.issues.map((i) => `${i.path}: ${i.message}`) };
  if (typeof e?.code === 'string' && /^E[A-Z]+$/.test(e.code)) return { error: e.message, code: e.code };
  return { err };
}

/**
 * An HTTP listener (the admin API, the metrics-only listener): built when it starts, closed when it stops.
 * @param what its name in the log (`admin API`, `metrics listener`) and the config fields that place it (`fields`)
 */
export function listenerComponent(o: { name: string; logged: string; fields?: string; at: ListenerAddress; build: () => Promise<FastifyInstance>; log: Logger }): Component {
  let server: FastifyInstance | undefined;
  return {
    name: o.name,
    async start() {
      try {
        server = await o.build();
        await server.listen({ host: o.at.address, port: o.at.port });
      } catch (err) {
        o.log.fatal(startErrorLog(err), `${o.name} cannot listen`);
        throw new Error(`${o.name} cannot listen on ${o.at.address}:${o.at.port}: ${(err as Error).message}${o.fields !== undefined ? ` (${o.fields})` : ''}`, { cause: err });
      }
      const a = server.server.address();
      o.log.info({ address: o.at.address, port: typeof a === 'object' && a ? a.port : o.at.port }, `${o.logged} listening`);
    },
    async stop() {
      await server?.close().catch(() => undefined);
    },
  };
}

/**
 * The state file's heartbeat (state.ts: graceful-restart detection): written when it starts, every `intervalMs`, and
 * once more when it stops, after the components started after it (the speaker's stop) have stopped. A failed write
 * is warned about once per distinct problem, and once more when it is solved.
 */
export function heartbeatComponent(o: { stateDir: () => string; intervalMs: number; log: Logger }): Component {
  let problem: string | undefined;
  let timer: NodeJS.Timeout | undefined;
  let started = false;
  const beat = () => {
    const stateDir = o.stateDir();
    try {
      writeHeartbeat(stateDir, Date.now());
      if (problem !== undefined) o.log.info({ stateDir }, 'state file written again');
      problem = undefined;
    } catch (err) {
      const p = (err as Error).message;
      if (p !== problem) o.log.warn({ stateDir, err: p, code: (err as NodeJS.ErrnoException).code }, 'cannot write state file (graceful restart detection and drain persistence disabled; warned once)');
      problem = p;
    }
  };
  return {
    name: 'state file',
    start() {
      started = true;
      beat();
      timer = setInterval(beat, o.intervalMs);
      timer.unref();
    },
    stop() {
      if (timer !== undefined) clearInterval(timer);
      timer = undefined;
      if (started) beat();
      started = false;
    },
  };
}

/** What a reload of the configuration file is handed to (the daemon, or the controller's configuration in force). */
export interface ReloadTarget {
  /**
   * Put the new file in force.
   * @throws MappingError or another Error: refused, the running configuration stays (the same file may be retried)
   */
  reload(next: Config): Promise<void>;
  /** A reload refused (an invalid file): recorded for `herald status` and the metrics. */
  rejected(errors: string[]): void;
  /** The last reload is in force but failed (its routes): the same file may be retried. */
  failed(): boolean;
}

/** The file's modification stamp ("missing" when it cannot be read): a change of it asks for a reload. */
export function fileStamp(path: string): string {
  try {
    const st = statSync(path);
    return `${st.mtimeMs}:${st.size}:${st.ino}`;
  } catch {
    return 'missing';
  }
}

/** The configuration watcher: {@link configWatcher}'s component, and `reload(why)` for SIGHUP. */
export interface ConfigWatcher extends Component {
  /** Reload now (SIGHUP): after the start, after any reload before it. */
  reload(why: string): void;
}

/**
 * Reloads the configuration file on SIGHUP (`reload`) and when it changes (polled every `intervalMs`, which also sees
 * ConfigMap symlink swaps; 0: not polled): the new file is validated first; a bad file is rejected with every error
 * logged and the running configuration stays; content read already is not parsed again. Reloads asked for before it
 * starts run once it has; its stop waits for the reload in progress.
 * @param stamp the file's stamp taken before it was first read (a change made while Herald starts is reloaded after it)
 */
export function configWatcher(o: { file: ConfigFile; path: string; stamp: string; intervalMs: number; target: ReloadTarget; log: Logger }): ConfigWatcher {
  let markStarted!: () => void;
  const started = new Promise<void>((resolve) => (markStarted = resolve));
  let reloading: Promise<void> = started;
  let stamp = o.stamp;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const { log, file, target } = o;
  const reload = (why: string) => {
    reloading = reloading.then(async () => {
      if (stopped) return;
      log.info({ why, file: o.path }, 'reloading configuration');
      let next;
      try {
        next = await file.reload();
      } catch (err) {
        const issues = err instanceof ConfigError ? err.issues.map((i) => `${i.path}: ${i.message}`) : [(err as Error).message];
        log.error({ errors: issues }, 'new configuration rejected; running configuration kept');
        target.rejected(issues);
        return;
      }
      if (next === undefined) {
        log.info({ file: o.path }, 'configuration unchanged since it was last read: nothing to reload');
        return;
      }
      try {
        await target.reload(next);
        if (target.failed()) file.forget(); // its routes failed: the same file may be retried
      } catch (err) {
        file.forget(); // e.g. a password file not there yet: the same file may be retried
        const issues = err instanceof MappingError ? err.issues.map((i) => `${i.path}: ${i.message}`) : [(err as Error).message];
        log.error({ errors: issues }, 'new configuration rejected; running configuration kept');
        target.rejected(issues);
      }
    });
  };
  return {
    name: 'configuration watcher',
    reload,
    start() {
      markStarted();
      if (o.intervalMs <= 0) return;
      timer = setInterval(() => {
        const st = fileStamp(o.path);
        if (st === stamp) return;
        stamp = st;
        if (st !== 'missing') reload('file changed');
      }, o.intervalMs);
      timer.unref();
    },
    async stop() {
      if (timer !== undefined) clearInterval(timer);
      markStarted();
      await reloading.catch(() => undefined);
      stopped = true;
    },
  };
}
