// BFD helpers for the interop tests and bench/bfd.ts: BIRD's `show bfd sessions` parsed, a standalone FRR bfdd.
import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { commandAvailable, DaemonProcess, run } from './daemon-process.ts';
import type { Bird } from './bird.ts';

/** One line of `birdc show bfd sessions`. */
export interface BirdBfdSession {
  address: string;
  iface: string;
  state: string;
  since: string;
  intervalSec: number;
  timeoutSec: number;
}

/** Parses `show bfd sessions` (BIRD 2.0). */
export function parseBfdSessions(text: string): BirdBfdSession[] {
  const out: BirdBfdSession[] = [];
  for (const line of text.split('\n')) {
    const m = /^(\S+)\s+(\S+)\s+(Up|Down|Init|AdminDown)\s+(\S+(?: \S+)?)\s+([\d.]+)\s+([\d.]+)\s*$/.exec(line);
    if (m) out.push({ address: m[1] ?? '', iface: m[2] ?? '', state: m[3] ?? '', since: m[4] ?? '', intervalSec: Number(m[5]), timeoutSec: Number(m[6]) });
  }
  return out;
}

/** Path of FRR's BFD daemon (Debian package frr). */
export const BFDD = '/usr/lib/frr/bfdd';

/** One peer of `show bfd peers json` (FRR 8.4), the fields the tests read. */
export interface BfddPeer {
  multihop: boolean;
  peer: string;
  local?: string;
  id: number;
  'remote-id': number;
  status: string;
  diagnostic: string;
  'remote-diagnostic': string;
  'receive-interval': number;
  'transmit-interval': number;
  'detect-multiplier': number;
  'remote-receive-interval': number;
  'remote-transmit-interval': number;
  'remote-detect-multiplier': number;
  'minimum-ttl'?: number;
}

/**
 * A standalone FRR bfdd (no zebra, no bgpd) in a temp dir, configured with one multihop peer. It runs as the
 * `frr` user (root is not in the frrvty group it checks), so the temp dir is opened to it. Stopped by PID.
 */
export class Bfdd {
  readonly proc: DaemonProcess;
  private constructor() {
    this.proc = new DaemonProcess('bfdd');
  }

  /** True when bfdd, vtysh and the `frr` user exist. */
  static available(): boolean {
    return commandAvailable(BFDD, ['--version']) && commandAvailable('which', ['vtysh']) && commandAvailable('id', ['frr']);
  }

  /** Starts bfdd with `peer PEER multihop local-address LOCAL` and the given timers (ms). */
  static async start(o: { peer: string; local: string; intervalMs: number; detectMultiplier: number }): Promise<Bfdd> {
    const b = new Bfdd();
    const dir = b.proc.dir;
    chmodSync(dir, 0o777);
    const conf = [
      'frr defaults traditional',
      'hostname herald-bfd-test',
      `log file ${join(dir, 'bfdd.log')}`,
      '!',
      'bfd',
      ` peer ${o.peer} multihop local-address ${o.local}`,
      `  receive-interval ${o.intervalMs}`,
      `  transmit-interval ${o.intervalMs}`,
      `  detect-multiplier ${o.detectMultiplier}`,
      ' !',
      '!',
      '',
    ].join('\n');
    const confPath = join(dir, 'bfdd.conf');
    writeFileSync(confPath, conf);
    b.proc.spawn(BFDD, ['-f', confPath, '-i', join(dir, 'bfdd.pid'), '-z', join(dir, 'zserv.api'), '--vty_socket', dir, '--bfdctl', join(dir, 'bfdd.sock'), '-P', '0', '-u', 'frr', '-g', 'frr']);
    await b.proc.waitFor(async () => (await b.peers()).length === 1, 'bfdd vty', 30_000, 200);
    return b;
  }

  vtysh(...cmds: string[]): Promise<string> {
    return run('vtysh', ['--vty_socket', this.proc.dir, '-d', 'bfdd', ...cmds.flatMap((c) => ['-c', c])], 20_000);
  }

  async peers(): Promise<BfddPeer[]> {
    return JSON.parse(await this.vtysh('show bfd peers json')) as BfddPeer[];
  }

  stop(): Promise<void> {
    return this.proc.stop();
  }
}

/**
 * SIGSTOPs process `pid` (a Herald child), polls `gone` every 10 ms (BIRD's view, up to 10 s), SIGCONTs it whatever
 * happened; returns the milliseconds from SIGSTOP to `gone`. Throws when `gone` never holds.
 */
export async function stopUntil(bird: Bird, pid: number | undefined, gone: () => Promise<boolean>): Promise<number> {
  if (pid === undefined) throw new Error('no child pid');
  const t0 = Date.now();
  process.kill(pid, 'SIGSTOP');
  try {
    await bird.waitFor(gone, 'BIRD to drop what the stopped Herald announced', 10_000, 10);
  } finally {
    process.kill(pid, 'SIGCONT');
  }
  return Date.now() - t0;
}

const LOCK_DIR = join(tmpdir(), 'herald-bfd-wildcard.lock');

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * BIRD's and FRR bfdd's BFD sockets bind the wildcard address of ports 3784/4784 in the host's network namespace, so
 * two such daemons at once take each other's packets. Test files and benches that start one take this cross-process
 * lock first (a directory holding the owner's PID; a dead owner's lock is taken over) and release it at teardown.
 * Resolves once held; throws after `timeoutMs`.
 */
export async function hostBfdLock(t: { teardown(fn: () => unknown): void }, timeoutMs = 300_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      mkdirSync(LOCK_DIR);
      writeFileSync(join(LOCK_DIR, 'pid'), String(process.pid));
      break;
    } catch {
      const owner = Number(readFileSync(join(LOCK_DIR, 'pid'), { encoding: 'utf8', flag: 'a+' }) || 0);
      if (owner !== 0 && !alive(owner)) rmSync(LOCK_DIR, { recursive: true, force: true });
      else if (Date.now() > deadline) throw new Error(`${LOCK_DIR} held by PID ${owner} for ${timeoutMs} ms`);
      else await new Promise((r) => setTimeout(r, 200));
    }
  }
  const release = (): void => {
    try {
      if (readFileSync(join(LOCK_DIR, 'pid'), 'utf8') === String(process.pid)) rmSync(LOCK_DIR, { recursive: true, force: true });
    } catch {
      /* already gone */
    }
  };
  process.once('exit', release);
  t.teardown(release);
}
