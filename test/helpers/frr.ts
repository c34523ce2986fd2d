/**
 * Test harness for a standalone FRR 8.4 bgpd on loopback (interop tests).
 *
 * Facts (../shared/design/peers-on-one-machine.md): bgpd runs without zebra/watchfrr:
 * `bgpd -f CONF -i DIR/bgpd.pid -z DIR/zserv.api --vty_socket DIR -Z -S -P 0 -p PORT -l ADDR`; the config needs
 * `no bgp ebgp-requires-policy` (else nothing is accepted on eBGP) and `no bgp network import-check`;
 * `vtysh --vty_socket DIR -d bgpd -c CMD` talks to it. Passive toward Herald, which dials.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { commandAvailable, DaemonProcess, run } from './daemon-process.ts';

export const BGPD = '/usr/lib/frr/bgpd';

export function frrAvailable(): boolean {
  return commandAvailable(BGPD, ['--version']) && commandAvailable('which', ['vtysh']);
}

export interface FrrOptions {
  local: string;
  port: number;
  as: number;
  routerId?: string;
  neighbor: string;
  neighborAs: number;
  /** More peers with the same AS and settings (e.g. the other nodes of an e2e cluster). */
  moreNeighbors?: string[];
  /** Activate IPv6 unicast for the neighbour too (default true). */
  ipv6?: boolean;
  /** Extra lines inside `router bgp`. */
  extra?: string;
  /** Top-level `debug bgp ...` lines (e.g. 'debug bgp updates in'): logged to DIR/bgpd.log, see Frr.log(). */
  debug?: string[];
}

/** One path of `show bgp ... json`, reduced. */
export interface FrrPath {
  prefix: string;
  nextHop?: string;
  asPath: string;
  communities: string[];
  largeCommunities: string[];
  med?: number;
  localPref?: number;
  origin?: string;
}

export class Frr {
  readonly proc: DaemonProcess;
  readonly options: FrrOptions;
  private constructor(options: FrrOptions) {
    this.proc = new DaemonProcess('frr');
    this.options = options;
  }

  get pid(): number | undefined {
    return this.proc.child?.pid;
  }

  static async start(options: FrrOptions): Promise<Frr> {
    const f = new Frr(options);
    const dir = f.proc.dir;
    const all = [options.neighbor, ...(options.moreNeighbors ?? [])];
    const conf = [
      'frr defaults traditional',
      'hostname herald-test',
      `log file ${join(dir, 'bgpd.log')}`,
      ...(options.debug ?? []),
      '!',
      `router bgp ${options.as}`,
      ` bgp router-id ${options.routerId ?? '10.254.0.4'}`,
      ' no bgp ebgp-requires-policy',
      ' no bgp network import-check',
      ...all.flatMap((n) => [` neighbor ${n} remote-as ${options.neighborAs}`, ` neighbor ${n} passive`, ` neighbor ${n} ebgp-multihop 255`, ` neighbor ${n} update-source ${options.local}`]),
      options.extra ?? '',
      ' address-family ipv4 unicast',
      ...all.map((n) => `  neighbor ${n} activate`),
      ' exit-address-family',
      ...(options.ipv6 !== false ? [' address-family ipv6 unicast', ...all.map((n) => `  neighbor ${n} activate`), ' exit-address-family'] : []),
      '!',
      '',
    ].filter((l) => l !== '').join('\n');
    const confPath = join(dir, 'bgpd.conf');
    writeFileSync(confPath, conf + '\n');
    f.proc.spawn(BGPD, ['-f', confPath, '-i', join(dir, 'bgpd.pid'), '-z', join(dir, 'zserv.api'), '--vty_socket', dir, '-Z', '-S', '-P', '0', '-p', String(options.port), '-l', options.local]);
    await f.proc.waitFor(async () => (await f.vtysh('show bgp summary json')).includes('{'), 'bgpd vty', 30_000, 200);
    return f;
  }

  /** bgpd's log file so far ('' when none). */
  log(): string {
    return this.proc.read('bgpd.log');
  }

  /** Runs one vtysh command against this bgpd. */
  vtysh(cmd: string, timeoutMs = 20_000): Promise<string> {
    return run('vtysh', ['--vty_socket', this.proc.dir, '-d', 'bgpd', '-c', cmd], timeoutMs);
  }

  /**
   * Runs one vtysh `... json` command and parses its output. vtysh now and then prints nothing when several commands
   * reach one bgpd at once (seen in test/e2e/steering-frr.test.ts under load): an empty or cut output is read again,
   * up to `tries` times 200 ms apart, then the last output is thrown with the command.
   */
  async vtyshJson(cmd: string, tries = 5): Promise<unknown> {
    let out = '';
    for (let i = 0; i < tries; i++) {
      if (i > 0) await new Promise((r) => setTimeout(r, 200));
      out = await this.vtysh(cmd);
      try {
        return JSON.parse(out) as unknown;
      } catch {
        // empty or cut output: read again
      }
    }
    throw new Error(`vtysh -c '${cmd}': no JSON after ${tries} tries; last output: ${JSON.stringify(out.slice(0, 200))}`);
  }

  /** The neighbour's state ('Established', 'Active', ...). */
  async neighborState(): Promise<string | undefined> {
    const j = JSON.parse(await this.vtysh(`show bgp neighbors ${this.options.neighbor} json`)) as Record<string, { bgpState?: string }>;
    return j[this.options.neighbor]?.bgpState;
  }

  /** The neighbour's full JSON (`show bgp neighbors N json`). */
  async neighbor(): Promise<Record<string, unknown> | undefined> {
    const j = JSON.parse(await this.vtysh(`show bgp neighbors ${this.options.neighbor} json`)) as Record<string, Record<string, unknown>>;
    return j[this.options.neighbor];
  }

  /** Routes of the family with their attributes (`show bgp ipvX unicast detail json` per prefix). */
  async routes(family: 'ipv4' | 'ipv6' = 'ipv4'): Promise<FrrPath[]> {
    const table = JSON.parse(await this.vtysh(`show bgp ${family} unicast json`)) as { routes?: Record<string, unknown[]> };
    const out: FrrPath[] = [];
    for (const prefix of Object.keys(table.routes ?? {})) {
      const d = JSON.parse(await this.vtysh(`show bgp ${family} unicast ${prefix} json`)) as {
        paths?: {
          aspath?: { string?: string };
          community?: { list?: string[]; string?: string };
          largeCommunity?: { list?: string[]; string?: string };
          med?: number;
          metric?: number;
          locPrf?: number;
          localpref?: number;
          origin?: string;
          nexthops?: { ip?: string }[];
        }[];
      };
      for (const p of d.paths ?? []) {
        out.push({
          prefix,
          nextHop: p.nexthops?.[0]?.ip,
          asPath: p.aspath?.string ?? '',
          communities: p.community?.string?.split(' ').filter((s) => s !== '') ?? [],
          largeCommunities: p.largeCommunity?.string?.split(' ').filter((s) => s !== '') ?? [],
          med: p.med ?? p.metric,
          localPref: p.locPrf ?? p.localpref,
          origin: p.origin,
        });
      }
    }
    return out;
  }

  /** Number of prefixes of the family (`show bgp ipvX unicast summary json`, the neighbour's pfxRcd). */
  async count(family: 'ipv4' | 'ipv6' = 'ipv4'): Promise<number> {
    const j = JSON.parse(await this.vtysh(`show bgp ${family} unicast summary json`)) as { peers?: Record<string, { pfxRcd?: number }> };
    return j.peers?.[this.options.neighbor]?.pfxRcd ?? 0;
  }

  async stop(): Promise<void> {
    await this.proc.stop();
  }
}
