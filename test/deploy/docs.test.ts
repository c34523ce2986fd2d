/**
 * The docs tell the truth about the repository: every repository path a doc, a manifest, an example, a script or a
 * code comment names exists; docs/troubleshooting.md has an entry for every reason code the code gives and every alert; the RBAC
 * verbs the docs state are the ones deploy/kubernetes/rbac.yaml grants.
 */
import t from 'tap';
import { existsSync, globSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { parse } from 'yaml';
import { ReasonCode as VipReason } from '../../src/controller/reasons.ts';
import { HealthCode as HealthReason } from '../../src/health/types.ts';
import { renderKustomization } from './kustomize.ts';
import { grantedPermissions } from './k8s-schema.ts';

const root = new URL('../../', import.meta.url).pathname;

function filesUnder(dir: string, keep: (f: string) => boolean): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    return e.isDirectory() ? filesUnder(p, keep) : keep(p) ? [p] : [];
  });
}

/** The files whose text may name repository paths: docs, README, manifests, the chart, examples, scripts, CI. */
function namingFiles(): string[] {
  return [
    join(root, 'README.md'),
    join(root, 'docker-compose.yml'),
    join(root, '.ci/run'),
    ...filesUnder(join(root, 'docs'), (f) => f.endsWith('.md')),
    ...filesUnder(join(root, 'deploy'), () => true),
    ...filesUnder(join(root, 'examples'), () => true),
    ...filesUnder(join(root, 'scripts'), () => true),
  ].filter((f) => !f.endsWith('.json'));
}

const TOP = '(?:bgp|src|test|deploy|docs|scripts|bench|demo|examples|bin|\\.ci)';
const PATH_RE = new RegExp(`(?<![\\w./@-])((?:\\.\\./)*${TOP}/[\\w.*/-]*[\\w*/])`, 'g');
const ROOT_FILE_RE = /(?<![\w./-])(README\.md|package\.json|package-lock\.json|docker-compose\.yml|tsconfig\.json|eslint\.config\.js|LICENSE)(?![\w-])/g;
const BARE_MD_RE = /(?<![\w./-])([\w-]+\.md)(?![\w-])/g;

/** Every repository path `text` (of `file`) names, as written. */
export function namedPaths(text: string): string[] {
  const out = new Set<string>();
  for (const re of [PATH_RE, ROOT_FILE_RE, BARE_MD_RE]) for (const m of text.matchAll(re)) out.add(m[1] as string);
  return [...out];
}

/** Whether `name`, as written in `file`, is an existing repository file or folder (a glob must match one). */
function exists(name: string, file: string): boolean {
  const candidates = name.startsWith('../') ? [join(dirname(file), name)] : /^[\w-]+\.md$/.test(name) ? [join(dirname(file), name), join(root, name), join(root, 'docs', name)] : [join(root, name)];
  return candidates.some((c) => (c.includes('*') ? globSync(relative(root, c), { cwd: root }).length > 0 : existsSync(c)));
}

t.test('the path reader finds repository paths and nothing else', async (t) => {
  t.same(namedPaths('see `src/config/schema.ts`, [ops](docs/operations.md#x), deploy/kubernetes/ and test/**/*.test.ts; /app/bin/herald.js, https://x.io/src/a.ts, troubleshooting.md, package.json.'), ['src/config/schema.ts', 'docs/operations.md', 'deploy/kubernetes/', 'test/**/*.test.ts', 'package.json', 'troubleshooting.md']);
  t.notOk(exists('src/daemon/peers.ts', join(root, 'README.md')), 'a missing module is reported');
  t.ok(exists('test/deploy/*.test.ts', join(root, 'README.md')), 'a glob matching files exists');
});

t.test('every repository path named in docs, README, manifests, the chart, examples and scripts exists', async (t) => {
  const files = namingFiles();
  t.ok(files.length >= 40, `${files.length} files read`);
  let named = 0;
  const missing: string[] = [];
  for (const f of files) {
    if (statSync(f).size > 1_000_000) continue;
    const text = readFileSync(f, 'utf8');
    for (const name of namedPaths(text)) {
      named++;
      if (!exists(name, f)) missing.push(`${relative(root, f)}: ${name}`);
    }
  }
  t.ok(named >= 150, `${named} path mentions checked`);
  t.same(missing, [], 'no doc or manifest names a file that does not exist');
});

/** The `### \`Name\`` entries of docs/troubleshooting.md (one heading may name several: `### \`A\` / \`B\``). */
function troubleshootingEntries(): Set<string> {
  const text = readFileSync(join(root, 'docs/troubleshooting.md'), 'utf8');
  return new Set([...text.matchAll(/^### (`\w+`(?: \/ `\w+`)*)$/gm)].flatMap((m) => [...(m[1] as string).matchAll(/`(\w+)`/g)].map((x) => x[1] as string)));
}

t.test('every repository path a code comment names exists (src, bgp, tools, test, bench, demo)', async (t) => {
  const files = ['src', 'bgp', 'tools', 'test', 'bench', 'demo'].flatMap((d) => filesUnder(join(root, d), (f) => f.endsWith('.ts')));
  t.ok(files.length >= 100, `${files.length} files read`);
  const missing: string[] = [];
  let named = 0;
  for (const f of files) {
    const comments = readFileSync(f, 'utf8').split('\n').filter((l) => /^\s*(\/\/|\/?\*)/.test(l) || / \/\/ /.test(l));
    for (const name of namedPaths(comments.join('\n')).filter((n) => !/^[\w-]+\.md$/.test(n))) {
      named++;
      if (!exists(name, f)) missing.push(`${relative(root, f)}: ${name}`);
    }
  }
  t.ok(named >= 50, `${named} path mentions checked`);
  t.same(missing, [], 'no comment names a file that does not exist');
});

t.test('docs/troubleshooting.md has an entry for every reason code and every alert, and no other', async (t) => {
  const codes = [...Object.values(VipReason), ...Object.values(HealthReason)];
  t.ok(codes.length >= 30, `${codes.length} reason codes in src/controller/desired-routes.ts and src/health/types.ts`);
  const rules = parse(readFileSync(join(root, 'deploy/helm/herald/files/prometheus-rules.yaml'), 'utf8')) as { groups: { rules: { alert: string }[] }[] };
  const alerts = rules.groups.flatMap((g) => g.rules.map((r) => r.alert));
  const entries = troubleshootingEntries();
  t.same([...codes, ...alerts].filter((c) => !entries.has(c)), [], 'every code and alert has an entry');
  const known = new Set<string>([...codes, ...alerts]);
  t.same([...entries].filter((e) => !known.has(e)), [], 'every entry is a code or an alert that exists');
});

t.test('the RBAC verbs in docs/kubernetes.md and docs/ipam.md are those each account is granted', async (t) => {
  const docs = renderKustomization(join(root, 'deploy/kubernetes'));
  /** What the roles bound to ServiceAccount `sa` grant. */
  const grantsOf = (sa: string): Set<string> => {
    const bound = new Set<string>();
    for (const b of docs.filter((d) => d.kind === 'RoleBinding' || d.kind === 'ClusterRoleBinding') as unknown as { roleRef: { kind: string; name: string }; subjects?: { name: string }[] }[]) {
      if ((b.subjects ?? []).some((s) => s.name === sa)) bound.add(`${b.roleRef.kind}/${b.roleRef.name}`);
    }
    return grantedPermissions(docs.filter((d) => bound.has(`${d.kind}/${d.metadata?.name}`)));
  };
  const GROUP: Record<string, string> = { leases: 'coordination.k8s.io', 'services/status': '', events: '', services: '', nodes: '', secrets: '', pods: '', namespaces: '', configmaps: '' };
  /** The permissions a line "`resource` verb/verb, ..." states (Herald's kinds in herald.io). */
  const statedIn = (line: string, into: Set<string>) => {
    for (const m of line.matchAll(/`([\w/]+)` ([a-z/]+)/g)) for (const v of (m[2] as string).split('/')) into.add(`${GROUP[m[1] as string] ?? 'herald.io'}/${m[1]}/${v}`);
  };
  const k8sDoc = readFileSync(join(root, 'docs/kubernetes.md'), 'utf8');
  const line = (label: string): string => {
    const l = new RegExp(`^${label.replace(/[()]/g, '\\$&')}: (.*)$`, 'm').exec(k8sDoc)?.[1] ?? '';
    t.ok(l !== '', `docs/kubernetes.md states "${label}"`);
    return l;
  };
  // The DaemonSet: the table's reads, its namespace line.
  const RESOURCE: Record<string, string> = { Service: '/services', EndpointSlice: 'discovery.k8s.io/endpointslices', Node: '/nodes', ServiceCIDR: 'networking.k8s.io/servicecidrs' };
  const node = new Set<string>();
  const rows = [...k8sDoc.matchAll(/^\| (Service|EndpointSlice|Node|ServiceCIDR) \|.*\| ([a-z, ]+) \|$/gm)];
  t.equal(rows.length, 4, 'the four read resources have a row');
  for (const m of rows) for (const v of (m[2] as string).split(',').map((s) => s.trim())) node.add(`${RESOURCE[m[1] as string]}/${v}`);
  statedIn(line('Namespace RBAC (DaemonSet)'), node);
  t.ok(node.size >= 12, `${node.size} permissions stated for the DaemonSet`);
  t.same([...node].sort(), [...grantsOf('herald')].sort(), 'the docs state exactly what the DaemonSet is granted');
  // The controller: docs/kubernetes.md's two lines, and docs/ipam.md's.
  const controller = new Set<string>();
  statedIn(line('Cluster RBAC (controller)'), controller);
  statedIn(line('Namespace RBAC (controller)'), controller);
  const ipam = /^RBAC: (.*)$/m.exec(readFileSync(join(root, 'docs/ipam.md'), 'utf8'))?.[1] ?? '';
  const ipamStated = new Set<string>();
  statedIn(ipam, ipamStated);
  t.ok(ipamStated.size >= 5, 'docs/ipam.md states the allocator\'s RBAC');
  const granted = grantsOf('herald-controller');
  t.same([...ipamStated].filter((p) => !granted.has(p)), [], 'docs/ipam.md states only what the controller is granted');
  t.same([...controller].sort(), [...granted].sort(), 'the docs state exactly what the controller is granted');
});

