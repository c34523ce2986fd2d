/**
 * Load and validate a configuration: YAML text → {@link Config}, or the full list of problems.
 *
 * Every problem is reported as `path: message` (`peers[1].holdTime: must be 0 or 3..65535 (seconds)`).
 * Structural problems (types, ranges, unknown fields) are all reported together; cross-field checks
 * (`semanticErrors`) run once the structure is valid.
 */
import { readFile } from 'node:fs/promises';
import { parseDocument } from 'yaml';
import type { z } from 'zod';
import type { Config, ConfigIssue } from './schema.ts';
import { ipFamilyOf } from '../net/address.ts';
import { configSchema, formatPath, semanticErrors } from './schema.ts';

/** Result of validating a configuration. */
export type ConfigResult = { ok: true; config: Config } | { ok: false; errors: ConfigIssue[] };

/** A configuration that failed to load; `issues` holds every problem. */
export class ConfigError extends Error {
  readonly issues: ConfigIssue[];
  constructor(source: string, issues: ConfigIssue[]) {
    super(`invalid configuration ${source}:\n${formatIssues(issues)}`);
    this.name = 'ConfigError';
    this.issues = issues;
  }
}

/** One line per issue: "  path: message". */
export function formatIssues(issues: readonly ConfigIssue[]): string {
  return issues.map((i) => `  ${i.path === '' ? '(root)' : i.path}: ${i.message}`).join('\n');
}

function describeType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'a mapping';
  if (typeof v === 'string') return `string ${JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v)}`;
  return `${typeof v} ${String(v)}`;
}

/** Per-parse error map for issues without a schema-level message. */
const errorMap = (iss: { code?: string; input?: unknown; expected?: unknown; values?: unknown[]; minimum?: unknown; maximum?: unknown; origin?: string; format?: string; prefix?: string }): string | undefined => {
  switch (iss.code) {
    case 'invalid_type':
      if (iss.input === undefined) return 'required';
      return `expected ${iss.expected === 'object' ? 'a mapping' : iss.expected === 'array' ? 'a list' : String(iss.expected)}, got ${describeType(iss.input)}`;
    case 'invalid_value':
      return `must be one of ${(iss.values ?? []).map((v) => JSON.stringify(v)).join(', ')}`;
    case 'too_small':
      if (iss.origin === 'array') return `must have at least ${String(iss.minimum)} item(s)`;
      if (iss.origin === 'string') return iss.minimum === 1 ? 'must not be empty' : `must be at least ${String(iss.minimum)} characters`;
      return `must be >= ${String(iss.minimum)}`;
    case 'too_big':
      if (iss.origin === 'array') return `must have at most ${String(iss.maximum)} item(s)`;
      return `must be <= ${String(iss.maximum)}`;
    case 'invalid_format':
      if (iss.format === 'starts_with') return `must start with ${JSON.stringify(iss.prefix)}`;
      return `must be a valid ${String(iss.format)}`;
    default:
      return undefined;
  }
};

/** Turn zod issues into ConfigIssues, one per unknown key. */
function fromZod(issues: readonly z.core.$ZodIssue[]): ConfigIssue[] {
  const out: ConfigIssue[] = [];
  for (const iss of issues) {
    if (iss.code === 'unrecognized_keys') {
      for (const k of iss.keys) out.push({ path: formatPath([...iss.path, k]), message: 'unknown field' });
    } else {
      out.push({ path: formatPath(iss.path), message: iss.message });
    }
  }
  return out;
}

/**
 * Validate a parsed (plain JSON) configuration object.
 * @returns the config with defaults applied, or every problem found.
 */
export function validateConfig(data: unknown): ConfigResult {
  const r = configSchema.safeParse(data ?? {}, { error: errorMap as never });
  if (!r.success) return { ok: false, errors: fromZod(r.error.issues) };
  const sem = semanticErrors(r.data);
  if (sem.length > 0) return { ok: false, errors: sem };
  return { ok: true, config: r.data };
}

/**
 * Parse YAML text and validate it. YAML syntax errors are reported with line and column
 * (path `(yaml)`), and all of them are listed.
 */
export function parseConfigText(text: string): ConfigResult {
  const doc = parseDocument(text, { prettyErrors: true, uniqueKeys: true });
  if (doc.errors.length > 0) {
    return {
      ok: false,
      errors: doc.errors.map((e) => ({ path: '(yaml)', message: (e.message.split('\n')[0] ?? e.message).replace(/:\s*$/, '') })),
    };
  }
  return validateConfig(doc.toJS());
}

/**
 * Read and validate a configuration file.
 * @throws ConfigError with every problem (unreadable file included).
 */
export async function loadConfigFile(path: string): Promise<Config> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new ConfigError(path, [{ path: '(file)', message: `cannot read: ${(err as Error).message}` }]);
  }
  const r = parseConfigText(text);
  if (!r.ok) throw new ConfigError(path, r.errors);
  return r.config;
}

/** Command-line / environment overrides of the node identity. */
export interface RuntimeOverrides {
  nodeName?: string;
  nodeIp?: string;
  env?: NodeJS.ProcessEnv;
}

/** Values the daemon needs that may come from flags or the environment. */
export interface RuntimeIdentity {
  /** Kubernetes node name (flag, then config, then NODE_NAME, then the host name). */
  nodeName: string;
  nodeIp?: string;
  /** BGP Identifier, dotted quad. */
  routerId: string;
}

/**
 * Resolve node name, node IP and router id. Precedence: flag > config file > environment
 * (`NODE_NAME`, `NODE_IP`). The router id defaults to the node IP when it is IPv4.
 * @throws ConfigError when no router id can be found or a flag is malformed.
 */
export function resolveIdentity(cfg: Config, o: RuntimeOverrides, hostname: string): RuntimeIdentity {
  const env = o.env ?? process.env;
  const nodeName = o.nodeName ?? cfg.node.name ?? env['NODE_NAME'] ?? hostname;
  const nodeIp = o.nodeIp ?? cfg.node.ip ?? env['NODE_IP'];
  const issues: ConfigIssue[] = [];
  if (o.nodeIp !== undefined && ipFamilyOf(o.nodeIp) === undefined) issues.push({ path: '--node-ip', message: 'must be an IP address' });
  const envIp = env['NODE_IP'];
  if (o.nodeIp === undefined && cfg.node.ip === undefined && envIp !== undefined && ipFamilyOf(envIp) === undefined) issues.push({ path: 'NODE_IP', message: `must be an IP address, got ${JSON.stringify(envIp)}` });
  let routerId = cfg.bgp.routerId;
  if (routerId === undefined) {
    if (nodeIp !== undefined && ipFamilyOf(nodeIp) === 'IPv4') routerId = nodeIp;
    else issues.push({ path: 'bgp.routerId', message: 'required unless node.ip (or --node-ip / NODE_IP) is an IPv4 address' });
  }
  if (issues.length > 0 || routerId === undefined) throw new ConfigError('(runtime)', issues);
  return { nodeName, routerId, ...(nodeIp !== undefined ? { nodeIp } : {}) };
}
