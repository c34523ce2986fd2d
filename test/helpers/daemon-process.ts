/**
 * Shared process handling for the interop daemon harnesses (frr.ts, gobgp.ts, exabgp.ts): spawn in a fresh temp dir,
 * capture stderr, track the child by PID, stop with SIGTERM then SIGKILL, remove the temp dir, and kill anything still
 * running when the test process exits (so a failing test never leaks a daemon). Never kills by name.
 */
import { spawn, spawnSync } from 'node:child_process';
import type { ChildProcess, SpawnOptions } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const running = new Set<DaemonProcess>();
let hook = false;

/** True when `cmd --version`-like probe `args` exits 0. */
export function commandAvailable(cmd: string, args: string[] = ['--version']): boolean {
  try {
    return spawnSync(cmd, args, { stdio: 'ignore', timeout: 10_000 }).status === 0;
  } catch {
    return false;
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A child daemon with its own temp dir. */
export class DaemonProcess {
  readonly dir: string;
  child: ChildProcess | undefined;
  stderr = '';
  stdout = '';
  private exited: Promise<void> = Promise.resolve();
  private dead = false;

  constructor(prefix: string) {
    this.dir = mkdtempSync(join(tmpdir(), `herald-${prefix}-`));
  }

  /** Starts `cmd args`; stdout/stderr are captured. */
  spawn(cmd: string, args: string[], options: SpawnOptions = {}): void {
    if (!hook) {
      hook = true;
      process.on('exit', () => {
        for (const d of running) d.killNow();
      });
    }
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], ...options });
    this.child = child;
    this.dead = false;
    running.add(this);
    child.stdout?.on('data', (d: Buffer) => {
      if (this.stdout.length < 1_000_000) this.stdout += d.toString();
    });
    child.stderr?.on('data', (d: Buffer) => {
      if (this.stderr.length < 1_000_000) this.stderr += d.toString();
    });
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()));
    void this.exited.then(() => {
      this.dead = true;
      running.delete(this);
    });
  }

  get alive(): boolean {
    return this.child !== undefined && !this.dead;
  }

  /** Reads a file of the temp dir ('' when absent). */
  read(name: string): string {
    const p = join(this.dir, name);
    return existsSync(p) ? readFileSync(p, 'utf8') : '';
  }

  /** Polls `check` until truthy (returned) or throws after `timeoutMs` with `what` and the daemon's stderr. */
  async waitFor<T>(check: () => Promise<T | undefined | null | false> | T | undefined | null | false, what: string, timeoutMs = 20_000, intervalMs = 100): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    let lastError: unknown;
    while (Date.now() < deadline) {
      if (this.child !== undefined && this.dead) throw new Error(`daemon exited while waiting for ${what}: ${this.stderr.slice(-2000)}`);
      try {
        const v = await check();
        if (v) return v;
      } catch (err) {
        lastError = err;
      }
      await sleep(intervalMs);
    }
    throw new Error(`timed out waiting for ${what}${lastError ? ` (last error: ${String(lastError)})` : ''}: ${this.stderr.slice(-2000)}`);
  }

  /**
   * Sends `signal` to the running child by PID and resolves once it has exited (SIGKILL after `timeoutMs`). The temp
   * dir stays, so the daemon can be spawned again in it (a restart). No-op when it is not running.
   */
  async kill(signal: NodeJS.Signals, timeoutMs = 30_000): Promise<void> {
    const child = this.child;
    if (child === undefined || this.dead) return;
    child.kill(signal);
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    await this.exited;
    clearTimeout(timer);
  }

  /** SIGTERM, then SIGKILL after `graceMs`; removes the temp dir. Idempotent. */
  async stop(graceMs = 3000): Promise<void> {
    const child = this.child;
    if (child !== undefined && !this.dead) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await this.exited;
      clearTimeout(timer);
    }
    running.delete(this);
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** Synchronous SIGKILL (exit hook). */
  killNow(): void {
    if (this.child !== undefined && !this.dead) this.child.kill('SIGKILL');
  }
}

/** Runs a command to completion; resolves with stdout, rejects on non-zero exit or timeout. */
export function run(cmd: string, args: string[], timeoutMs = 10_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const p = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    p.stdout.on('data', (d: Buffer) => (out += d.toString()));
    p.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const timer = setTimeout(() => {
      p.kill('SIGKILL');
      reject(new Error(`${cmd} ${args.join(' ')} timed out`));
    }, timeoutMs);
    // 'close', not 'exit': 'exit' can come before the last of stdout is read (an answer cut short or empty)
    p.once('close', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve(out);
      else reject(new Error(`${cmd} ${args.join(' ')} exited ${code}: ${err}${out}`));
    });
  });
}
