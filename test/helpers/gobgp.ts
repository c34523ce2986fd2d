/**
 * Test harness for a private, passive GoBGP 3.10 daemon on loopback (interop tests and bench/peers.ts).
 *
 * Facts (../shared/design/peers-on-one-machine.md): `local-address-list` + `port` in [global.config] make gobgpd
 * listen only on our loopback address; the API goes over a unix socket (`--api-hosts unix://DIR/api.sock`) and
 * `--pprof-disable` avoids every gobgpd binding localhost:6060; an active gobgpd waits 5-10 s before connecting, so
 * it runs passive and Herald dials it. Routes are read with `gobgp --target unix://... global rib -a ipv4 -j`.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { commandAvailable, DaemonProcess, run } from './daemon-process.ts';

export function gobgpAvailable(): boolean {
  return commandAvailable('gobgpd', ['--version']) && commandAvailable('gobgp', ['--help']);
}

export interface GobgpOptions {
  /** GoBGP's address and listening port. */
  local: string;
  port: number;
  as: number;
  routerId?: string;
  /** The peer (Herald). */
  neighbor: string;
  neighborAs: number;
  /** More Herald peers (same AS as `neighborAs`), e.g. the other nodes of an e2e cluster. */
  moreNeighbors?: string[];
  families?: ('ipv4-unicast' | 'ipv6-unicast')[];
  /** Accept graceful restart from the neighbour (helper mode, per family too). */
  gracefulRestart?: boolean;
  /** With gracefulRestart: RFC 8538 notification support (the N bit, Hard Reset). */
  notification?: boolean;
}

/** One path of `gobgp global rib -j`, reduced to what tests look at. */
export interface GobgpPath {
  prefix: string;
  nextHop?: string;
  asPath: number[];
  communities: number[];
  largeCommunities: string[];
  med?: number;
  localPref?: number;
  origin?: number;
  attrs: unknown[];
}

/** One change of GoBGP's global RIB as `gobgp monitor global rib -j` streams it. */
export interface GobgpRibEvent {
  prefix: string;
  withdrawal: boolean;
  stale: boolean;
  /** Community values of the path (RFC 1997, as 32-bit numbers). */
  communities: number[];
}

/** A running `gobgp monitor global rib -j`: every best-path change, withdrawals included, in order. */
export class GobgpRibMonitor {
  readonly events: GobgpRibEvent[] = [];
  readonly proc: DaemonProcess;
  private buf = '';
  constructor(api: string) {
    this.proc = new DaemonProcess('gobgp-monitor');
    this.proc.spawn('gobgp', ['--target', api, 'monitor', 'global', 'rib', '-j']);
    this.proc.child?.stdout?.on('data', (d: Buffer) => {
      this.buf += d.toString();
      let i: number;
      while ((i = this.buf.indexOf('\n')) >= 0) {
        const line = this.buf.slice(0, i).trim();
        this.buf = this.buf.slice(i + 1);
        if (line === '') continue;
        const paths = JSON.parse(line) as { nlri?: { prefix?: string }; withdrawal?: boolean; stale?: boolean; attrs?: { type: number; communities?: number[] }[] }[];
        for (const p of paths) {
          this.events.push({
            prefix: p.nlri?.prefix ?? '',
            withdrawal: p.withdrawal === true,
            stale: p.stale === true,
            communities: p.attrs?.find((a) => a.type === 8)?.communities ?? [],
          });
        }
      }
    });
  }

  /** Stops the monitor by PID. */
  stop(): Promise<void> {
    return this.proc.stop();
  }
}

export class Gobgp {
  readonly proc: DaemonProcess;
  readonly options: GobgpOptions;
  private constructor(options: GobgpOptions) {
    this.proc = new DaemonProcess('gobgp');
    this.options = options;
  }

  get api(): string {
    return `unix://${join(this.proc.dir, 'api.sock')}`;
  }

  get pid(): number | undefined {
    return this.proc.child?.pid;
  }

  /** Starts gobgpd and waits until its API answers. */
  static async start(options: GobgpOptions): Promise<Gobgp> {
    const g = new Gobgp(options);
    const fams = options.families ?? ['ipv4-unicast', 'ipv6-unicast'];
    const conf = [
      '[global.config]',
      `  as = ${options.as}`,
      `  router-id = "${options.routerId ?? '10.254.0.2'}"`,
      `  port = ${options.port}`,
      `  local-address-list = ["${options.local}"]`,
      ...[options.neighbor, ...(options.moreNeighbors ?? [])].flatMap((address) => [
        '[[neighbors]]',
        '  [neighbors.config]',
        `    neighbor-address = "${address}"`,
        `    peer-as = ${options.neighborAs}`,
        '  [neighbors.transport.config]',
        '    passive-mode = true',
        `    local-address = "${options.local}"`,
        '  [neighbors.ebgp-multihop.config]',
        '    enabled = true',
        '    multihop-ttl = 255',
        ...(options.gracefulRestart
          ? ['  [neighbors.graceful-restart.config]', '    enabled = true', '    restart-time = 120', ...(options.notification ? ['    notification-enabled = true'] : [])]
          : []),
        ...fams.flatMap((f) => [
          '  [[neighbors.afi-safis]]',
          '    [neighbors.afi-safis.config]',
          `      afi-safi-name = "${f}"`,
          ...(options.gracefulRestart ? ['    [neighbors.afi-safis.mp-graceful-restart.config]', '      enabled = true'] : []),
        ]),
      ]),
      '',
    ].join('\n');
    const confPath = join(g.proc.dir, 'gobgpd.toml');
    writeFileSync(confPath, conf);
    g.proc.spawn('gobgpd', ['-f', confPath, '-t', 'toml', '--api-hosts', g.api, '--pprof-disable', '-l', 'info', '-p']);
    await g.proc.waitFor(async () => (await g.cli(['neighbor', '-j'])).length > 0, 'gobgpd API');
    return g;
  }

  /** Starts `gobgp monitor global rib -j` against this daemon (stop it, or it is killed at exit). */
  monitorRib(): GobgpRibMonitor {
    return new GobgpRibMonitor(this.api);
  }

  /** Runs the gobgp CLI against this daemon. */
  cli(args: string[], timeoutMs = 20_000): Promise<string> {
    return run('gobgp', ['--target', this.api, ...args], timeoutMs);
  }

  /** The neighbour's session state as GoBGP reports it ('established', 'active', ...). */
  async neighborState(): Promise<string | undefined> {
    const list = JSON.parse(await this.cli(['neighbor', '-j'])) as { state?: { session_state?: number | string } }[];
    const s = list[0]?.state?.session_state;
    const names: Record<number, string> = { 1: 'idle', 2: 'connect', 3: 'active', 4: 'opensent', 5: 'openconfirm', 6: 'established' };
    return typeof s === 'number' ? names[s] : s;
  }

  /** Number of prefixes in the global RIB of the family (from `global rib summary`). */
  async count(family: 'ipv4' | 'ipv6' = 'ipv4'): Promise<number> {
    const out = await this.cli(['global', 'rib', '-a', family, 'summary']);
    const m = /Destination:\s*(\d+)/.exec(out);
    return m ? Number(m[1]) : 0;
  }

  /** The global RIB of `family`, parsed. */
  async routes(family: 'ipv4' | 'ipv6' = 'ipv4'): Promise<GobgpPath[]> {
    const out = await this.cli(['global', 'rib', '-a', family, '-j']);
    const json = JSON.parse(out.trim() === '' ? '{}' : out) as Record<string, { nlri?: { prefix?: string }; attrs?: { type: number; [k: string]: unknown }[] }[]>;
    const res: GobgpPath[] = [];
    for (const [prefix, paths] of Object.entries(json)) {
      for (const p of paths) {
        const r: GobgpPath = { prefix: p.nlri?.prefix ?? prefix, asPath: [], communities: [], largeCommunities: [], attrs: p.attrs ?? [] };
        for (const a of p.attrs ?? []) {
          const v = a as Record<string, unknown>;
          switch (a.type) {
            case 1:
              r.origin = v.value as number;
              break;
            case 2:
              r.asPath = ((v.as_paths as { asns: number[] }[] | undefined) ?? []).flatMap((s) => s.asns);
              break;
            case 3:
              r.nextHop = v.nexthop as string;
              break;
            case 4:
              r.med = v.metric as number;
              break;
            case 5:
              r.localPref = v.value as number;
              break;
            case 8:
              r.communities = (v.communities as number[]) ?? [];
              break;
            case 14:
              r.nextHop = (v.nexthop as string) ?? r.nextHop;
              break;
            case 32:
              r.largeCommunities = ((v.value as { ASN: number; LocalData1: number; LocalData2: number }[]) ?? []).map(
                (c) => `${c.ASN}:${c.LocalData1}:${c.LocalData2}`,
              );
              break;
          }
        }
        res.push(r);
      }
    }
    return res;
  }

  async stop(): Promise<void> {
    await this.proc.stop();
  }
}
