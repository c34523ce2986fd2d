/**
 * State kept across restarts in `stateDir` (default /var/lib/herald): a heartbeat file telling a
 * starting daemon whether it restarted within the Graceful Restart window, so it sets the R bit
 * (RFC 4724 §3) and peers keep our routes as stale until our End-of-RIB.
 *
 * File `state.json`: `{ "heartbeatAtMs": <epoch ms>, "pid": <n> }`, rewritten every
 * `intervalSec` seconds while running and removed... never: a clean stop also counts as a
 * restart if the next start comes within the window (harmless: the R bit only asks peers to keep
 * routes they still have).
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

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
    const data = JSON.parse(readFileSync(join(stateDir, 'state.json'), 'utf8')) as { heartbeatAtMs?: unknown };
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
