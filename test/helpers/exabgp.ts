/**
 * Test harness for a private, passive ExaBGP 4.2 on loopback (interop tests and bench/peers.ts).
 *
 * Facts (../shared/design/peers-on-one-machine.md): neighbour keys `local-address`, `listen PORT`, `passive true`;
 * environment `exabgp_daemon_user=root exabgp_daemon_drop=false exabgp_api_cli=false`, log to a file. Received
 * UPDATEs are delivered to an API process as JSON lines (`receive { parsed; update; }`); ours appends them to a file
 * in the temp dir and the harness replays them into a table. A second API process can send commands (for the bench):
 * the harness writes lines into a FIFO that the process copies to its stdout.
 */
import { chmodSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { commandAvailable, DaemonProcess } from './daemon-process.ts';

/** True when something listens on address:port (ss from iproute2). */
export function listening(address: string, port: number): boolean {
  const r = spawnSync('ss', ['-Hltn', 'src', `${address}:${port}`], { encoding: 'utf8' });
  return r.status === 0 && r.stdout.trim() !== '';
}

export function exabgpAvailable(): boolean {
  return commandAvailable('exabgp', ['--version']);
}

export interface ExabgpOptions {
  local: string;
  port: number;
  as: number;
  routerId?: string;
  neighbor: string;
  neighborAs: number;
  /** Families (default both unicast families). */
  families?: ('ipv4' | 'ipv6')[];
  /** Static routes in the config: `route P next-hop NH;` lines (the bench's session-start test). */
  staticRoutes?: { prefix: string; nextHop: string }[];
  /** Give ExaBGP an API process reading commands from `command()` (the bench's burst tests). */
  commands?: boolean;
  /** Active: connect to the neighbour at this port instead of listening. */
  connectPort?: number;
}

/** A route as ExaBGP decoded it (JSON encoder). */
export interface ExabgpRoute {
  prefix: string;
  family: string;
  nextHop?: string;
  attributes: Record<string, unknown>;
}

export class Exabgp {
  readonly proc: DaemonProcess;
  readonly options: ExabgpOptions;
  private fifo = '';

  private constructor(options: ExabgpOptions) {
    this.proc = new DaemonProcess('exabgp');
    this.options = options;
  }

  get pid(): number | undefined {
    return this.proc.child?.pid;
  }

  static async start(options: ExabgpOptions): Promise<Exabgp> {
    const x = new Exabgp(options);
    const dir = x.proc.dir;
    const sink = join(dir, 'sink.sh');
    writeFileSync(sink, `#!/bin/sh\n# no exec: the shell keeps stdout (the pipe to ExaBGP) open, otherwise ExaBGP sees the process end\ncat >> ${join(dir, "updates.jsonl")}\n`);
    chmodSync(sink, 0o755);
    const procs = ['sink'];
    let cmdProcess = '';
    if (options.commands) {
      x.fifo = join(dir, 'commands.fifo');
      spawnSync('mkfifo', [x.fifo]);
      const src = join(dir, 'source.sh');
      // keep the FIFO open for writing ourselves (exec 3<>) so it never sees EOF between writers
      writeFileSync(src, `#!/bin/sh\nexec 3<>${x.fifo}\nexec cat <&3\n`);
      chmodSync(src, 0o755);
      procs.push('source');
      cmdProcess = `process source {\n  run ${src};\n  encoder text;\n}\n`;
    }
    const fams = options.families ?? ['ipv4', 'ipv6'];
    const statics = (options.staticRoutes ?? []).map((r) => `    route ${r.prefix} next-hop ${r.nextHop};`).join('\n');
    const conf = `process sink {\n  run ${sink};\n  encoder json;\n}\n${cmdProcess}
neighbor ${options.neighbor} {
  router-id ${options.routerId ?? '10.254.0.3'};
  local-address ${options.local};
  local-as ${options.as};
  peer-as ${options.neighborAs};
  ${options.connectPort !== undefined ? `connect ${options.connectPort};` : `listen ${options.port};\n  passive true;`}
  family {\n${fams.map((f) => `    ${f} unicast;`).join('\n')}\n  }
  api {\n    processes [ ${procs.join(', ')} ];\n    receive { parsed; update; }\n    neighbor-changes;\n  }
${statics ? `  static {\n${statics}\n  }\n` : ''}}
`;
    const confPath = join(dir, 'exabgp.conf');
    writeFileSync(confPath, conf);
    x.proc.spawn('exabgp', [confPath], {
      env: {
        ...process.env,
        exabgp_daemon_user: 'root',
        exabgp_daemon_drop: 'false',
        exabgp_daemon_daemonize: 'false',
        exabgp_api_cli: 'false',
        exabgp_log_destination: join(dir, 'exabgp.log'),
        exabgp_log_level: 'INFO',
        exabgp_tcp_bind: options.connectPort !== undefined ? '' : options.local,
        exabgp_tcp_port: String(options.port),
      },
    });
    // ExaBGP listens only after the whole config (static routes included) is parsed: listening = loaded
    await x.proc.waitFor(
      () => (options.connectPort !== undefined ? x.proc.alive : listening(options.local, options.port)),
      'ExaBGP listening',
      120_000,
    );
    return x;
  }

  /** ExaBGP's log. */
  log(): string {
    return this.proc.read('exabgp.log');
  }

  /** The JSON messages ExaBGP delivered to the sink, parsed. */
  messages(): Record<string, unknown>[] {
    const out: Record<string, unknown>[] = [];
    for (const line of this.proc.read('updates.jsonl').split('\n')) {
      if (line.trim() === '' || line[0] !== '{') continue;
      try {
        out.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        /* a partial last line */
      }
    }
    return out;
  }

  /** True once ExaBGP reported the neighbour up (state message). */
  established(): boolean {
    return this.messages().some((m) => m.type === 'state' && (m.neighbor as { state?: string } | undefined)?.state === 'up');
  }

  /** The neighbour's current state from the last state message ('up', 'down', 'connected'). */
  lastState(): string | undefined {
    const st = this.messages().filter((m) => m.type === 'state');
    return (st[st.length - 1]?.neighbor as { state?: string } | undefined)?.state;
  }

  /** Replays every received UPDATE into a table: prefix → route (withdrawals delete). */
  table(): Map<string, ExabgpRoute> {
    const t = new Map<string, ExabgpRoute>();
    for (const m of this.messages()) {
      if (m.type !== 'update') continue;
      const neighbor = m.neighbor as { message?: { update?: { attribute?: Record<string, unknown>; announce?: Record<string, Record<string, unknown[]>>; withdraw?: Record<string, unknown[]> } } };
      const u = neighbor.message?.update;
      if (u === undefined) continue;
      for (const [family, list] of Object.entries(u.withdraw ?? {})) {
        for (const p of list) {
          const prefix = typeof p === 'string' ? p : (p as { nlri: string }).nlri;
          t.delete(`${family} ${prefix}`);
        }
      }
      for (const [family, byNh] of Object.entries(u.announce ?? {})) {
        for (const [nh, list] of Object.entries(byNh)) {
          for (const p of list) {
            const prefix = typeof p === 'string' ? p : (p as { nlri: string }).nlri;
            t.set(`${family} ${prefix}`, { prefix, family, nextHop: nh, attributes: u.attribute ?? {} });
          }
        }
      }
    }
    return t;
  }

  /** Sends one API command line (needs `commands: true`). */
  command(line: string): void {
    if (this.fifo === '') throw new Error('ExaBGP started without commands: true');
    writeFileSync(this.fifo, line.endsWith('\n') ? line : line + '\n', { flag: 'a' });
  }

  async stop(): Promise<void> {
    await this.proc.stop();
  }
}
