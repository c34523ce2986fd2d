// Types of bin/node-settings.js (plain JavaScript, run before Node can strip types; see that file).

/** The commands that run for long and get the daemon's Node settings: `run` and `controller`. */
export declare const DAEMON_COMMANDS: ReadonlySet<string>;
/** The V8 flags of the daemons, before the memory limit's `--max-old-space-size`. */
export declare const DAEMON_FLAGS: readonly string[];
/** The glibc malloc settings of the daemons (each applied only when the environment does not set it). */
export declare const MALLOC_ENV: Readonly<Record<string, string>>;
/** The environment variable that marks a re-executed process (`applied`) or turns re-execution off (`off`). */
export declare const SETTINGS_ENV: string;
/**
 * The memory limit in MiB that V8's old generation is sized from (HERALD_MEMORY_LIMIT_MIB, else the smallest limit
 * of the process's cgroup and its ancestors), or undefined when there is none.
 */
export declare function memoryLimitMiB(env?: NodeJS.ProcessEnv, read?: (path: string) => string): number | undefined;
/** DAEMON_FLAGS, then `--max-old-space-size` = half of `limitMiB` when there is a limit. */
export declare function daemonFlags(limitMiB: number | undefined): string[];
/** `env` with MALLOC_ENV's settings where it has none, and SETTINGS_ENV=applied. */
export declare function daemonEnv(env?: NodeJS.ProcessEnv): NodeJS.ProcessEnv;
