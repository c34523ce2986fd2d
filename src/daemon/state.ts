/**
 * State kept across restarts in `stateDir` (default /var/lib/herald): a heartbeat file telling a
 * starting daemon whether it restarted within the Graceful Restart window, so it sets the R bit
 * (RFC 4724 §3) and peers keep our routes as stale until our End-of-RIB.
 *
 * File `state.json`: `{ "heartbeatAtMs": <epoch ms>, "pid": <n> }`, rewritten every
 * `intervalSec` seconds while running and removed... never: a clean stop also counts as a
 * restart if the next start comes within the window (harmless: the R bit only asks peers to keep
 * routes they still have).
 *
 * File `drain.json`: `{ "drained": true, "atMs": <epoch ms> }` while the operator has drained this node
 * (`herald drain`); removed by `herald undrain`. A daemon that finds it starts drained, so a restart
 * does not silently bring the routes back.
 */
import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readFailure, readSmallFileSync } from '../files/read.ts';

/** Largest state file read, bytes (Herald writes a few dozen). */
const STATE_FILE_MAX_BYTES = 64 * 1024;

/** Result of reading the state file. */
export interface RestartInfo {
  /** The previous run's last heartbeat, epoch ms (undefined when there was none). */
  lastHeartbeatMs?: number;
  /** True when that heartbeat is at most `windowSec` seconds old. */
  restarting: boolean;
}

/**
 * Decide whether this start is a restart within `windowSec` seconds (the largest configured
 * Graceful Restart restartTime). Never throws: an unreadable or malformed file means "not restarting".
 */
export function readRestartInfo(stateDir: string, windowSec: number, nowMs: number): RestartInfo {
  try {
    const data = JSON.parse(readSmallFileSync(join(stateDir, 'state.json'), { maxBytes: STATE_FILE_MAX_BYTES })) as { heartbeatAtMs?: unknown };
    const hb = typeof data.heartbeatAtMs === 'number' && Number.isFinite(data.heartbeatAtMs) ? data.heartbeatAtMs : undefined;
    if (hb === undefined) return { restarting: false };
    return { lastHeartbeatMs: hb, restarting: windowSec > 0 && nowMs - hb >= 0 && nowMs - hb <= windowSec * 1000 };
  } catch {
    return { restarting: false };
  }
}

/**
 * Write the heartbeat atomically (temp file + rename).
 * @throws Error when the directory cannot be created or written (callers log and go on)
 */
export function writeHeartbeat(stateDir: string, nowMs: number): void {
  mkdirSync(stateDir, { recursive: true });
  const tmp = join(stateDir, `.state.json.${process.pid}`);
  writeFileSync(tmp, JSON.stringify({ heartbeatAtMs: nowMs, pid: process.pid }) + '\n');
  renameSync(tmp, join(stateDir, 'state.json'));
}

/**
 * Whether the node was left drained (`drain.json` says `drained: true`). Never throws: a missing,
 * unreadable or malformed file means "not drained" (`error` says why when the file exists but is unusable).
 */
export function readDrained(stateDir: string): { drained: boolean; sinceMs?: number; error?: string } {
  let text: string;
  try {
    text = readSmallFileSync(join(stateDir, 'drain.json'), { maxBytes: STATE_FILE_MAX_BYTES });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return code === 'ENOENT' || code === 'ENOTDIR' ? { drained: false } : { drained: false, error: `cannot read ${join(stateDir, 'drain.json')}: ${readFailure(err)}` };
  }
  try {
    const data = JSON.parse(text) as { drained?: unknown; atMs?: unknown };
    if (data.drained !== true) return { drained: false };
    return { drained: true, ...(typeof data.atMs === 'number' ? { sinceMs: data.atMs } : {}) };
  } catch {
    return { drained: false, error: `${join(stateDir, 'drain.json')} is not valid JSON` };
  }
}

/**
 * Record (drained true) or clear (false: the file is removed) the operator's drain, atomically.
 * @throws Error when the directory cannot be created or written (callers log and go on)
 */
export function writeDrained(stateDir: string, drained: boolean, nowMs: number): void {
  const file = join(stateDir, 'drain.json');
  if (!drained) {
    rmSync(file, { force: true });
    return;
  }
  mkdirSync(stateDir, { recursive: true });
  const tmp = join(stateDir, `.drain.json.${process.pid}`);
  writeFileSync(tmp, JSON.stringify({ drained: true, atMs: nowMs }) + '\n');
  renameSync(tmp, file);
}
