/**
 * The docker-compose.yml lab with plain podman, for machines whose podman has no `compose`: Debian 12's podman 4.3
 * has no `podman compose` subcommand, and its podman-compose 1.0.3 cannot run this file (it creates networks without
 * their `ipam` subnet and gateway, has no `ipv4_address`, and stops at "missing networks: lab"). It reads the same
 * file and takes only what the file uses (anything else is refused, naming the key): per service `image`,
 * `command`, `volumes` (paths relative to the file), `depends_on` (start order) and `networks` with `ipv4_address`;
 * per network `ipam.config` `subnet` and `gateway`. Names as Compose gives them: network PROJECT_NET, containers
 * PROJECT_SERVICE_1.
 *
 * Usage (scripts/compose.sh runs it as root with scripts/containers.conf):
 *   node scripts/compose.ts up   [-p PROJECT] [-f FILE]   create the networks, start the services in dependency order
 *   node scripts/compose.ts down [-p PROJECT] [-f FILE]   remove the containers and networks it made
 *   node scripts/compose.ts ps   [-p PROJECT] [-f FILE]   the containers' names and states
 * PROJECT defaults to the file's folder name (`herald` in a clone named herald).
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { basename, dirname, isAbsolute, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { parse } from 'yaml';

/** One service, as this script runs it. */
export interface LabService {
  readonly name: string;
  readonly image: string;
  readonly command: readonly string[];
  /** `SOURCE:TARGET[:ro]` with SOURCE absolute. */
  readonly volumes: readonly string[];
  readonly dependsOn: readonly string[];
  /** Network name → its static address (undefined: any). */
  readonly networks: ReadonlyMap<string, string | undefined>;
}

/** One network: its subnet and gateway. */
export interface LabNetwork {
  readonly name: string;
  readonly subnet?: string;
  readonly gateway?: string;
}

/** The lab of a compose file. */
export interface Lab {
  readonly services: readonly LabService[];
  readonly networks: readonly LabNetwork[];
}

type Doc = Record<string, unknown>;
const isDoc = (v: unknown): v is Doc => typeof v === 'object' && v !== null && !Array.isArray(v);

function refuseOthers(d: Doc, known: readonly string[], where: string): void {
  const other = Object.keys(d).filter((k) => !known.includes(k));
  if (other.length > 0) throw new Error(`${where}: ${other.join(', ')} is not supported by scripts/compose.ts (it runs only what docker-compose.yml uses); use docker compose or a podman with a compose provider`);
}

const strings = (v: unknown, where: string): string[] => {
  if (v === undefined) return [];
  if (!Array.isArray(v) || !v.every((x) => typeof x === 'string')) throw new Error(`${where}: expected a list of strings`);
  return v;
};

/**
 * The lab described by a compose file's text; `dir` is the file's folder (volume paths are relative to it).
 * @throws Error naming the key for anything this script does not run
 */
export function readLab(text: string, dir: string): Lab {
  const doc: unknown = parse(text);
  if (!isDoc(doc) || !isDoc(doc['services'])) throw new Error('not a compose file: no services');
  refuseOthers(doc, ['services', 'networks'], 'top level');
  const networks: LabNetwork[] = [];
  for (const [name, n] of Object.entries(isDoc(doc['networks']) ? doc['networks'] : {})) {
    const net = isDoc(n) ? n : {};
    refuseOthers(net, ['ipam'], `networks.${name}`);
    const ipam = isDoc(net['ipam']) ? net['ipam'] : {};
    refuseOthers(ipam, ['config'], `networks.${name}.ipam`);
    const config = Array.isArray(ipam['config']) ? ipam['config'] : [];
    if (config.length > 1) throw new Error(`networks.${name}.ipam.config: one subnet only`);
    const c: Doc = isDoc(config[0]) ? config[0] : {};
    refuseOthers(c, ['subnet', 'gateway'], `networks.${name}.ipam.config[0]`);
    networks.push({ name, ...(typeof c['subnet'] === 'string' ? { subnet: c['subnet'] } : {}), ...(typeof c['gateway'] === 'string' ? { gateway: c['gateway'] } : {}) });
  }
  const services: LabService[] = [];
  for (const [name, s] of Object.entries(doc['services'])) {
    if (!isDoc(s)) throw new Error(`services.${name}: expected a mapping`);
    refuseOthers(s, ['image', 'command', 'volumes', 'depends_on', 'networks'], `services.${name}`);
    if (typeof s['image'] !== 'string') throw new Error(`services.${name}.image: required (scripts/compose.ts builds nothing: sudo bash scripts/image.sh)`);
    const nets = new Map<string, string | undefined>();
    const given = s['networks'];
    if (Array.isArray(given)) for (const n of strings(given, `services.${name}.networks`)) nets.set(n, undefined);
    else if (isDoc(given)) {
      for (const [n, v] of Object.entries(given)) {
        const o = isDoc(v) ? v : {};
        refuseOthers(o, ['ipv4_address'], `services.${name}.networks.${n}`);
        nets.set(n, typeof o['ipv4_address'] === 'string' ? o['ipv4_address'] : undefined);
      }
    }
    for (const n of nets.keys()) if (!networks.some((x) => x.name === n)) throw new Error(`services.${name}.networks: ${n} is not among the networks`);
    const volumes = strings(s['volumes'], `services.${name}.volumes`).map((v) => {
      const [src = '', ...rest] = v.split(':');
      return [isAbsolute(src) ? src : resolve(dir, src), ...rest].join(':');
    });
    services.push({ name, image: s['image'], command: strings(s['command'], `services.${name}.command`), volumes, dependsOn: strings(s['depends_on'], `services.${name}.depends_on`), networks: nets });
  }
  return { services: startOrder(services), networks };
}

/** Services ordered so that each comes after what it depends on. @throws Error on a cycle or an unknown name */
function startOrder(services: LabService[]): LabService[] {
  const byName = new Map(services.map((s) => [s.name, s]));
  const out: LabService[] = [];
  const visiting = new Set<string>();
  const visit = (s: LabService): void => {
    if (out.includes(s)) return;
    if (visiting.has(s.name)) throw new Error(`services.${s.name}.depends_on: a cycle`);
    visiting.add(s.name);
    for (const d of s.dependsOn) {
      const dep = byName.get(d);
      if (dep === undefined) throw new Error(`services.${s.name}.depends_on: no service ${d}`);
      visit(dep);
    }
    out.push(s);
  };
  for (const s of services) visit(s);
  return out;
}

/** The podman commands (argument lists) that bring the lab up under `project`. */
export function upCommands(lab: Lab, project: string): string[][] {
  const cmds: string[][] = [];
  for (const n of lab.networks) {
    cmds.push(['network', 'create', '--label', `com.docker.compose.project=${project}`, ...(n.subnet ? ['--subnet', n.subnet] : []), ...(n.gateway ? ['--gateway', n.gateway] : []), `${project}_${n.name}`]);
  }
  for (const s of lab.services) {
    const nets = [...s.networks].flatMap(([n, ip]) => ['--network', `${project}_${n}${ip ? `:ip=${ip}` : ''}`]);
    cmds.push(['run', '--detach', '--name', `${project}_${s.name}_1`, '--label', `com.docker.compose.project=${project}`, '--network-alias', s.name, ...nets, ...s.volumes.flatMap((v) => ['--volume', v]), s.image, ...s.command]);
  }
  return cmds;
}

function podman(args: string[], check = true): { status: number | null; stdout: string } {
  const r = spawnSync('podman', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], timeout: 120_000 });
  if (check && r.status !== 0) throw new Error(`podman ${args.join(' ')} failed (exit ${r.status})`);
  return { status: r.status, stdout: r.stdout ?? '' };
}

if (import.meta.filename === process.argv[1]) {
  const { values, positionals } = parseArgs({ allowPositionals: true, options: { project: { type: 'string', short: 'p' }, file: { type: 'string', short: 'f' } } });
  const file = resolve(values.file ?? resolve(import.meta.dirname, '..', 'docker-compose.yml'));
  const project = values.project ?? basename(dirname(file)).toLowerCase().replace(/[^a-z0-9_-]/g, '');
  try {
    const lab = readLab(readFileSync(file, 'utf8'), dirname(file));
    const containers = lab.services.map((s) => `${project}_${s.name}_1`);
    switch (positionals[0]) {
      case 'up':
        for (const c of upCommands(lab, project)) {
          process.stdout.write(`podman ${c.join(' ')}\n`);
          podman(c);
        }
        break;
      case 'down':
        for (const c of [...containers].reverse()) podman(['rm', '--force', '--time', '10', '--ignore', c]);
        for (const n of lab.networks) if (podman(['network', 'exists', `${project}_${n.name}`], false).status === 0) podman(['network', 'rm', `${project}_${n.name}`]);
        break;
      case 'ps':
        process.stdout.write(podman(['ps', '--all', '--filter', `label=com.docker.compose.project=${project}`, '--format', '{{.Names}}\t{{.Status}}']).stdout);
        break;
      default:
        process.stderr.write('usage: scripts/compose.sh up|down|ps [-p PROJECT] [-f FILE]\n');
        process.exit(2);
    }
  } catch (err) {
    process.stderr.write(`compose: ${(err as Error).message}\n`);
    process.exit(1);
  }
}
