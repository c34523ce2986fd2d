/**
 * `herald` command line: dispatches to the daemon (`run`), the offline tools (`config check`,
 * `decode`, `migrate metallb`) and the admin API clients (`status`, `peers`, `routes`, `services`, `drain`,
 * `undrain`, `reset`). docs/cli.md documents every command.
 *
 * Exit codes: 0 success, 1 failure (daemon unreachable, HTTP error, invalid config), 2 usage error.
 */
import { parseArgs } from 'node:util';
import type { HealthCheckView, PeerView, RouteView, ServiceView, StatusView } from '../admin/view.ts';
// config/load.ts (zod, yaml: ~21 MiB of RSS) is imported only by `config check`; `run` loads it in the daemon
import type { Config, ConfigIssue } from '../config/schema.ts';
import { AdminClient, AdminApiError } from './client.ts';
import { readFailure, readTextFile, SECRET_FILE_MAX_BYTES, SECRET_FILE_TIMEOUT_MS } from '../files/read.ts';
import { version } from '../version.ts';
import { formatHealth, formatPeerDetail, formatPeers, formatRoutes, formatServiceDetail, formatServices, formatStatus } from './table.ts';

/** Where the CLI writes. */
export interface Output {
  write(s: string): unknown;
}

/** Process-level context, injectable for tests. */
export interface CliContext {
  out: Output;
  err: Output;
  env: NodeJS.ProcessEnv;
  /** Standard input, read whole (`migrate metallb -`; default the process's). */
  stdin?: () => Promise<string>;
}

export const DEFAULT_API = 'http://127.0.0.1:9179';

export const USAGE = `Usage: herald <command> [options]

Daemon:
  run --config FILE [--node-name NAME] [--node-ip IP] [--separate-controller]
                                                        run the BGP speaker on this node; with
                                                        --separate-controller, herald controller runs the
                                                        allocator, the object status and the Events
  controller --config FILE [--listen HOST:PORT]         run the cluster-wide writers (allocator, object status,
                                                        Events on Services); probes and metrics on
                                                        --listen (default 0.0.0.0:9180)
  config check FILE                                     validate a configuration file
                                                        (exit 0 valid, 1 invalid, 2 usage error or unreadable file)

Talk to a running daemon (admin API):
  status                     daemon summary
  peers [NAME]               BGP sessions (one peer in detail with NAME)
  routes [--peer P] [--prefix X]   Adj-RIB-Out per peer
  services [NS/NAME]         Service VIPs: announced from this node or why not
  health                     health checks: state, target, last failure
  drain [--reason TEXT]      drain this node: graceful shutdown (RFC 8326), then withdraw everything;
                             kept until undrain (Kubernetes: the Node annotation herald.io/drain=TEXT)
  undrain                    announce again
  reset PEER [--soft]        reset a session (soft: re-send routes only)

Every node at once (each node's Herald asked through the apiserver's pod proxy, with a kubeconfig):
  peers --all-nodes          every node's sessions, with a NODE column
  services [NS/NAME] --all-nodes   every node's VIPs (of one Service) and why
    --kubeconfig FILE        (default KUBECONFIG, ~/.kube/config, in-cluster)
    -n, --namespace NS       Herald's namespace (default POD_NAMESPACE, else herald-system)

Tools:
  decode ...                 decode BGP messages from captures / MRT / hex (herald decode --help)
  migrate metallb FILE|-     MetalLB's objects (kubectl get -o yaml) → Herald's, on stdout; what cannot be
    [-n NS]                  carried and what to do, on stderr (exit 0 all carried, 1 something not carried);
                             -n: Herald's namespace (default herald-system) (docs/metallb-migration.md)

Options for admin commands:
  --api URL          admin API (default ${DEFAULT_API}, or HERALD_API)
  --token-file FILE  bearer token for drain/undrain/reset (or HERALD_ADMIN_TOKEN)
  --json             print the API's JSON instead of a table
`;

class UsageError extends Error {}

const OPTIONS = {
  api: { type: 'string' },
  'token-file': { type: 'string' },
  json: { type: 'boolean' },
  soft: { type: 'boolean' },
  reason: { type: 'string' },
  peer: { type: 'string' },
  prefix: { type: 'string' },
  config: { type: 'string', short: 'c' },
  'node-name': { type: 'string' },
  'node-ip': { type: 'string' },
  'separate-controller': { type: 'boolean' },
  listen: { type: 'string' },
  'all-nodes': { type: 'boolean' },
  kubeconfig: { type: 'string' },
  namespace: { type: 'string', short: 'n' },
  help: { type: 'boolean', short: 'h' },
} as const;

type Values = { [K in keyof typeof OPTIONS]?: (typeof OPTIONS)[K]['type'] extends 'string' ? string : boolean };

/** Flags each command accepts (besides --help). */
const ALLOWED: Record<string, (keyof typeof OPTIONS)[]> = {
  status: ['api', 'json', 'token-file'],
  peers: ['api', 'json', 'token-file', 'all-nodes', 'kubeconfig', 'namespace'],
  routes: ['api', 'json', 'peer', 'prefix', 'token-file'],
  services: ['api', 'json', 'token-file', 'all-nodes', 'kubeconfig', 'namespace'],
  health: ['api', 'json', 'token-file'],
  drain: ['api', 'json', 'token-file', 'reason'],
  undrain: ['api', 'json', 'token-file'],
  reset: ['api', 'json', 'token-file', 'soft'],
  config: ['json'],
  migrate: ['namespace'],
  run: ['config', 'node-name', 'node-ip', 'separate-controller'],
  controller: ['config', 'listen'],
};

async function readToken(values: Values, env: NodeJS.ProcessEnv): Promise<string | undefined> {
  if (values['token-file'] !== undefined) {
    try {
      return (await readTextFile(values['token-file'], { maxBytes: SECRET_FILE_MAX_BYTES, timeoutMs: SECRET_FILE_TIMEOUT_MS })).trim();
    } catch (err) {
      throw new AdminApiError(`cannot read --token-file ${values['token-file']}: ${readFailure(err)}`, 0);
    }
  }
  const t = env['HERALD_ADMIN_TOKEN'];
  return t !== undefined && t !== '' ? t.trim() : undefined;
}

function json(out: Output, v: unknown): void {
  out.write(JSON.stringify(v, null, 2) + '\n');
}

/**
 * Run the CLI.
 * @param argv arguments after the program name
 * @returns the process exit code
 */
export async function main(argv: readonly string[], ctx: CliContext): Promise<number> {
  const [cmd, ...rest] = argv;
  if (cmd === undefined || cmd === 'help' || cmd === '--help' || cmd === '-h') {
    (cmd === undefined ? ctx.err : ctx.out).write(USAGE);
    return cmd === undefined ? 2 : 0;
  }
  if (cmd === 'version' || cmd === '--version') {
    ctx.out.write(`herald ${await version()}\n`);
    return 0;
  }
  if (cmd === 'decode') {
    // The decoder (tools/decode/) owns its own arguments; loaded only here, so the daemon never loads it.
    const decodeModule = '../../tools/decode/cli.ts'; // a variable: the decoder is optional at type-check time
    const mod = (await import(decodeModule)) as { runDecode: (argv: string[], out: Output, err: Output) => Promise<number> };
    return mod.runDecode(rest, ctx.out, ctx.err);
  }
  const allowed = ALLOWED[cmd];
  if (!allowed) {
    ctx.err.write(`herald: unknown command "${cmd}"\n\n${USAGE}`);
    return 2;
  }
  let values: Values;
  let positionals: string[];
  try {
    const parsed = parseArgs({ args: [...rest], options: OPTIONS, allowPositionals: true, strict: true });
    values = parsed.values as Values;
    positionals = parsed.positionals;
    for (const k of Object.keys(values)) {
      if (k !== 'help' && !allowed.includes(k as keyof typeof OPTIONS)) throw new UsageError(`option --${k} does not apply to "${cmd}"`);
    }
  } catch (err) {
    // Node's text for an unknown option ends in an unbalanced quote and a hint about "--": name the option alone.
    const unknown = (err as NodeJS.ErrnoException).code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' ? /'([^']+)'/.exec((err as Error).message)?.[1] : undefined;
    ctx.err.write(`herald ${cmd}: ${unknown !== undefined ? `unknown option ${unknown}` : (err as Error).message}\n(see herald --help)\n`);
    return 2;
  }
  if (values.help) {
    ctx.out.write(USAGE);
    return 0;
  }
  try {
    return await runCommand(cmd, values, positionals, ctx);
  } catch (err) {
    if (err instanceof UsageError) {
      ctx.err.write(`herald ${cmd}: ${err.message}\n(see herald --help)\n`);
      return 2;
    }
    if (err instanceof AdminApiError) {
      ctx.err.write(`herald ${cmd}: ${err.message}\n`);
      return 1;
    }
    ctx.err.write(`herald ${cmd}: ${(err as Error).message ?? String(err)}\n`);
    return 1;
  }
}

/**
 * What `herald run` would also refuse at start but a file alone cannot tell: peer password files that cannot be
 * read (or are empty) and password environment variables that are not set, checked in this process's environment.
 */
async function runtimeWarnings(cfg: Config, env: NodeJS.ProcessEnv): Promise<ConfigIssue[]> {
  const { resolvePassword, MappingError } = await import('../daemon/mapping.ts');
  const { readSecretFiles } = await import('../config/secrets.ts');
  const files = await readSecretFiles(cfg);
  const out: ConfigIssue[] = [];
  cfg.peers.forEach((p, i) => {
    try {
      resolvePassword(p, i, env, files);
    } catch (err) {
      if (err instanceof MappingError) out.push(...err.issues);
      else out.push({ path: `peers[${i}].password`, message: (err as Error).message });
    }
  });
  return out;
}

/** `HOST:PORT` (an IPv6 host in brackets: `[::]:9180`). @throws UsageError naming the form */
function parseListen(text: string): { address: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(text);
  const port = Number(m?.[3]);
  if (!m || port > 65535) throw new UsageError(`--listen ${text}: expected HOST:PORT, e.g. 0.0.0.0:9180 or [::]:9180`);
  return { address: (m[1] ?? m[2]) as string, port };
}

function expectPositionals(cmd: string, positionals: string[], min: number, max: number, what: string): void {
  if (positionals.length < min || positionals.length > max) throw new UsageError(`expected ${what}, got ${positionals.length === 0 ? 'nothing' : positionals.join(' ')}`);
  void cmd;
}

async function runCommand(cmd: string, values: Values, positionals: string[], ctx: CliContext): Promise<number> {
  if (cmd === 'config') {
    if (positionals[0] !== 'check') throw new UsageError('usage: herald config check FILE');
    expectPositionals(cmd, positionals.slice(1), 1, 1, 'one FILE');
    const file = positionals[1] as string;
    const { loadConfigFile, ConfigError, formatIssues } = await import('../config/load.ts');
    try {
      const cfg = await loadConfigFile(file);
      const { noAddressSpaceNote } = await import('../config/notes.ts');
      const note = noAddressSpaceNote(cfg);
      const warnings = [...(note !== undefined ? [note] : []), ...(await runtimeWarnings(cfg, ctx.env))];
      if (values.json) json(ctx.out, { ok: true, file, config: cfg, warnings });
      else {
        ctx.out.write(`${file}: valid (${cfg.peers.length} peer(s), ${cfg.routes.length} static route(s)${cfg.source ? `, source ${cfg.source.kubernetes ? 'kubernetes' : 'manifests'}` : ''})\n`);
        if (warnings.length > 0) ctx.err.write(`${file}: ${warnings.length} warning(s) (checked in this environment; the daemon's may differ):\n${formatIssues(warnings)}\n`);
      }
      return 0;
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      // A file that cannot be read was not checked: exit 2, as for a usage error, not "invalid".
      const unread = err.issues.length === 1 && err.issues[0]?.path === '(file)' ? err.issues[0] : undefined;
      if (values.json) json(ctx.out, { ok: false, file, errors: err.issues });
      else if (unread) ctx.err.write(`herald config check: ${file}: ${unread.message}\n`);
      else ctx.err.write(`${file}: invalid, ${err.issues.length} problem(s):\n${formatIssues(err.issues)}\n`);
      return unread ? 2 : 1;
    }
  }
  if (cmd === 'migrate') {
    if (positionals[0] !== 'metallb') throw new UsageError('usage: herald migrate metallb FILE|- [-n NAMESPACE]');
    expectPositionals(cmd, positionals.slice(1), 1, 1, 'one FILE (or - for standard input)');
    const { runMigrateMetalLB } = await import('../migrate/cli.ts');
    return runMigrateMetalLB(positionals[1] as string, values.namespace, ctx);
  }
  if (cmd === 'run') {
    expectPositionals(cmd, positionals, 0, 0, 'no arguments');
    if (values.config === undefined) throw new UsageError('--config FILE is required');
    // The speaker thread loads its modules on the other core while this one loads the daemon's and the configuration
    // (bgp/speaker-thread/thread.ts).
    const { SpeakerThread } = await import('../../bgp/main-thread.ts');
    const speakerThread = SpeakerThread.spawn();
    const { runDaemon } = await import('../daemon/run.ts');
    return runDaemon({ configPath: values.config, speakerThread, ...(values['node-name'] !== undefined ? { nodeName: values['node-name'] } : {}), ...(values['node-ip'] !== undefined ? { nodeIp: values['node-ip'] } : {}), ...(values['separate-controller'] ? { separateController: true } : {}) });
  }
  if (cmd === 'controller') {
    expectPositionals(cmd, positionals, 0, 0, 'no arguments');
    if (values.config === undefined) throw new UsageError('--config FILE is required');
    const listen = values.listen !== undefined ? parseListen(values.listen) : undefined;
    const { runController } = await import('../daemon/controller-components.ts');
    return runController({ configPath: values.config, ...(listen ? { listen } : {}) });
  }

  if (values['all-nodes']) return clusterCommand(cmd, values, positionals, ctx);
  for (const k of ['kubeconfig', 'namespace'] as const) if (values[k] !== undefined) throw new UsageError(`--${k} applies only with --all-nodes`);
  const token = await readToken(values, ctx.env);
  const client = new AdminClient({ api: values.api ?? (ctx.env['HERALD_API']?.trim() || DEFAULT_API), ...(token !== undefined ? { token } : {}) });
  const enc = encodeURIComponent;
  switch (cmd) {
    case 'status': {
      expectPositionals(cmd, positionals, 0, 0, 'no arguments');
      const s = await client.get<StatusView>('/api/v1/status');
      if (values.json) json(ctx.out, s);
      else ctx.out.write(formatStatus(s));
      return 0;
    }
    case 'peers': {
      expectPositionals(cmd, positionals, 0, 1, 'at most one peer NAME');
      if (positionals[0] !== undefined) {
        const p = await client.get<PeerView>(`/api/v1/peers/${enc(positionals[0])}`);
        if (values.json) json(ctx.out, p);
        else ctx.out.write(formatPeerDetail(p));
        return 0;
      }
      const list = await client.get<PeerView[]>('/api/v1/peers');
      if (values.json) json(ctx.out, list);
      else ctx.out.write(list.length === 0 ? 'No peers configured.\n' : formatPeers(list));
      return 0;
    }
    case 'routes': {
      expectPositionals(cmd, positionals, 0, 0, 'no arguments (use --peer / --prefix)');
      const q = new URLSearchParams();
      if (values.peer !== undefined) q.set('peer', values.peer);
      if (values.prefix !== undefined) q.set('prefix', values.prefix);
      const qs = q.toString();
      const list = await client.get<RouteView[]>(`/api/v1/routes${qs ? `?${qs}` : ''}`);
      if (values.json) json(ctx.out, list);
      else ctx.out.write(formatRoutes(list));
      return 0;
    }
    case 'services': {
      expectPositionals(cmd, positionals, 0, 1, 'at most one NAMESPACE/NAME');
      const key = positionals[0];
      if (key !== undefined) {
        const m = /^([^/]+)\/([^/]+)$/.exec(key);
        if (!m) throw new UsageError(`expected NAMESPACE/NAME, got ${key}`);
        const s = await client.get<ServiceView>(`/api/v1/services/${enc(m[1] as string)}/${enc(m[2] as string)}`);
        if (values.json) json(ctx.out, s);
        else ctx.out.write(formatServiceDetail(s));
        return 0;
      }
      const list = await client.get<ServiceView[]>('/api/v1/services');
      if (values.json) json(ctx.out, list);
      else ctx.out.write(formatServices(list));
      return 0;
    }
    case 'health': {
      expectPositionals(cmd, positionals, 0, 0, 'no arguments');
      const list = await client.get<HealthCheckView[]>('/api/v1/health');
      if (values.json) json(ctx.out, list);
      else ctx.out.write(formatHealth(list));
      return 0;
    }
    case 'drain':
    case 'undrain': {
      expectPositionals(cmd, positionals, 0, 0, 'no arguments');
      const r = await client.post<{ ok: boolean; message?: string }>(`/api/v1/${cmd}`, cmd === 'drain' && values.reason !== undefined ? { reason: values.reason } : {});
      if (values.json) json(ctx.out, r);
      else ctx.out.write(`${r.message ?? (cmd === 'drain' ? 'drained' : 'undrained')}\n`);
      return 0;
    }
    case 'reset': {
      expectPositionals(cmd, positionals, 1, 1, 'one PEER name');
      const r = await client.post<{ ok: boolean; message?: string }>(`/api/v1/peers/${enc(positionals[0] as string)}/reset`, { soft: values.soft ?? false });
      if (values.json) json(ctx.out, r);
      else ctx.out.write(`${r.message ?? 'reset'}\n`);
      return 0;
    }
    default:
      throw new UsageError(`unknown command ${cmd}`);
  }
}

/** `peers --all-nodes`, `services [NS/NAME] --all-nodes` (src/cli/cluster.ts). */
async function clusterCommand(cmd: string, values: Values, positionals: string[], ctx: CliContext): Promise<number> {
  if (values.api !== undefined) throw new UsageError('--api does not apply with --all-nodes (it reads the apiserver)');
  if (cmd === 'peers') expectPositionals(cmd, positionals, 0, 0, 'no peer NAME with --all-nodes');
  else expectPositionals(cmd, positionals, 0, 1, 'at most one NAMESPACE/NAME');
  const service = positionals[0];
  if (service !== undefined && !/^[^/]+\/[^/]+$/.test(service)) throw new UsageError(`expected NAMESPACE/NAME, got ${service}`);
  const { clusterPeers, clusterServices, peerRows, vipRows, formatClusterPeers, formatClusterServices } = await import('./cluster.ts');
  const namespace = values.namespace ?? (ctx.env['POD_NAMESPACE'] || 'herald-system');
  const where = { namespace, env: ctx.env, ...(values.kubeconfig !== undefined ? { kubeconfig: values.kubeconfig } : {}) };
  if (cmd === 'peers') {
    const answers = await clusterPeers(where);
    if (values.json) json(ctx.out, peerRows(answers));
    else ctx.out.write(formatClusterPeers(answers));
  } else {
    const answers = await clusterServices({ ...where, ...(service !== undefined ? { service } : {}) });
    if (values.json) json(ctx.out, vipRows(answers));
    else ctx.out.write(formatClusterServices(answers, service));
  }
  return 0;
}

// Run when executed directly (node src/cli/main.ts, or bin/herald.js importing this module).
const entry = process.argv[1] ?? '';
if (entry.endsWith('/src/cli/main.ts') || entry.endsWith('/bin/herald.js') || entry.endsWith('/bin/herald')) {
  main(process.argv.slice(2), { out: process.stdout, err: process.stderr, env: process.env }).then(
    (code) => {
      // `run` keeps the process alive itself and returns only when it stops.
      process.exitCode = code;
    },
    (err: unknown) => {
      process.stderr.write(`herald: ${(err as Error).message ?? String(err)}\n`);
      process.exitCode = 1;
    },
  );
}
