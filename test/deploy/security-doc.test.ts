/**
 * docs/security.md tells the truth (issue 30): every boundary has a table of claims, each naming tests that exist;
 * the tenant replays (test/control-plane/tenant.test.ts, test/e2e/tenant-bird.test.ts) back every boundary; and the
 * claims that can be checked here are: the annotations, reason codes, metrics and configuration fields it names are
 * the code's, the floors and the well-known range are the code's numbers, and every kind of endpoint address it says
 * is never probed is refused. The policy it shows the cluster is applied to a real apiserver by the control-plane
 * test.
 */
import t from 'tap';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ReasonCode } from '../../src/controller/reasons.ts';
import { ServiceAttributeAnnotation } from '../../src/controller/service-attributes.ts';
import { configJsonSchema } from '../../src/crd/docs.ts';
import { HealthAnnotation, MIN_ANNOTATION_INTERVAL_SEC, MIN_ANNOTATION_TIMEOUT_SEC, REMOVED_ADDRESS_ANNOTATION, parseHealthAnnotations } from '../../src/health/annotations.ts';
import { unprobedAddress } from '../../src/health/specs.ts';
import { ALLOCATION_FAILURES, ANNOTATION_POOL, ANNOTATION_REQUESTED_IPS, ANNOTATION_SHARING_KEY } from '../../src/ipam/allocator.ts';
import { HeraldMetrics } from '../../src/metrics/metrics.ts';
import { isWellKnownCommunity } from '../../src/net/community-ranges.ts';

const root = new URL('../../', import.meta.url).pathname;
const doc = readFileSync(join(root, 'docs/security.md'), 'utf8');
/** The doc without its ```yaml blocks (the policy snippet is Kubernetes', not Herald's vocabulary). */
const prose = doc.replace(/^\s*```yaml\n[\s\S]*?^\s*```/gm, '');
/** Every `code span` of the prose. */
const spans = [...prose.matchAll(/`([^`\n]+)`/g)].map((m) => m[1] as string);

/** The `## ` sections of the doc, by heading. */
function sections(): Map<string, string> {
  const out = new Map<string, string>();
  const parts = doc.split(/^## /m).slice(1);
  for (const p of parts) out.set(p.slice(0, p.indexOf('\n')).trim(), p);
  return out;
}

/** The rows of a section's `| Claim | Test |` table: the claim and the test files its Test cell names. */
function claims(section: string): { claim: string; tests: string[] }[] {
  const at = section.indexOf('| Claim | Test |');
  if (at < 0) return [];
  const rows = section.slice(at).split('\n').slice(2);
  const out: { claim: string; tests: string[] }[] = [];
  for (const row of rows) {
    if (!row.startsWith('|')) break;
    const cells = row.split(/(?<!\\)\|/).slice(1, -1);
    out.push({ claim: (cells[0] ?? '').trim(), tests: (cells.at(-1) ?? '').split(',').map((x) => x.trim()).filter((x) => x !== '') });
  }
  return out;
}

const BOUNDARIES = ['Addresses: only inside the operator\'s allowed space', 'Path attributes: only what the advertisement accepts', 'Health checks: only the Service\'s own endpoints, at a bounded rate', 'Addresses from the pools: only those a pool gives the Service', 'What the cluster should add'];
const REPLAYS = ['test/control-plane/tenant.test.ts', 'test/e2e/tenant-bird.test.ts'];

t.test('every boundary has claims, each backed by tests that exist, the tenant replays among them', async (t) => {
  const all = sections();
  for (const name of BOUNDARIES) {
    const section = all.get(name);
    if (section === undefined) {
      t.fail(`docs/security.md has no section "${name}"`);
      continue;
    }
    const rows = claims(section);
    t.ok(rows.length >= 1, `${name}: ${rows.length} claims`);
    for (const r of rows) {
      t.ok(r.tests.length > 0 && r.tests.every((f) => /^test\/.+\.test\.ts$/.test(f) && existsSync(join(root, f))), `${name}: "${r.claim.slice(0, 60)}..." names existing tests (${r.tests.join(', ')})`);
    }
    t.ok(rows.some((r) => r.tests.some((f) => REPLAYS.includes(f))), `${name}: replayed as a tenant against real parts`);
  }
});

t.test('the annotations it names are the ones Herald reads, and the removed one is refused', async (t) => {
  const known = new Set<string>([...Object.values(ServiceAttributeAnnotation), ...Object.values(HealthAnnotation), ANNOTATION_REQUESTED_IPS, ANNOTATION_POOL, ANNOTATION_SHARING_KEY, REMOVED_ADDRESS_ANNOTATION, 'herald.io/drain']);
  // Whole names only: not a family (`herald.io/health-check-*`) nor the API group (`herald.io/v1alpha1`).
  const named = new Set(spans.flatMap((s) => [...s.matchAll(/herald\.io\/[\w-]+\*?/g)].map((m) => m[0]).filter((a) => !a.endsWith('*') && !/\/v\d/.test(a))));
  t.ok(named.size >= 8, `${named.size} annotations named`);
  for (const a of named) t.ok(known.has(a), `${a} is an annotation Herald knows`);
  const r = parseHealthAnnotations({ 'herald.io/health-check-type': 'tcp', 'herald.io/health-check-port': '80', [REMOVED_ADDRESS_ANNOTATION]: '10.0.0.1' }, { intervalSec: 5, timeoutSec: 1, rise: 1, fall: 1 });
  t.ok(!r.ok && r.errors.some((e) => e.annotation === REMOVED_ADDRESS_ANNOTATION), `${REMOVED_ADDRESS_ANNOTATION} is refused`);
});

t.test('the reason codes and metrics it names are the code\'s', async (t) => {
  const codes = new Set<string>([...Object.values(ReasonCode), ...ALLOCATION_FAILURES, 'AllocationFailed']);
  const named = spans.filter((s) => /^[A-Z][a-z]+(?:[A-Z][a-z]+)*(?:NotAllowed|NotSent|Failed)$/.test(s));
  for (const c of ['PrefixNotAllowed', 'AttributeNotAllowed', 'AttributeNotSent', 'AllocationFailed']) t.ok(named.includes(c), `names ${c}`);
  for (const c of named) t.ok(codes.has(c), `${c} is a reason Herald gives`);
  const metrics = new HeraldMetrics({ version: 't', defaultMetrics: false });
  const names = new Set([...prose.matchAll(/\b(herald_[a-z_]+)/g)].map((m) => m[1] as string));
  t.ok(names.size >= 2, `${names.size} metrics named`);
  for (const n of names) t.ok(metrics.registry.getSingleMetric(n) !== undefined, `${n} is exported`);
});

t.test('the configuration fields it names exist', async (t) => {
  const props = new Set<string>();
  const walk = (s: unknown): void => {
    if (Array.isArray(s)) return s.forEach(walk);
    if (typeof s !== 'object' || s === null) return;
    for (const [k, v] of Object.entries(s)) {
      if (k === 'properties' && typeof v === 'object' && v !== null) for (const p of Object.keys(v)) props.add(p);
      walk(v);
    }
  };
  walk(configJsonSchema());
  // Fields as the doc writes them: `allowedPrefixes`, `med: true`, `routes[].healthCheck`, `serviceSelector(s)`.
  const fields = [...new Set(spans)].filter((s) => /^[a-z][A-Za-z]+(?:\[\]\.[a-z][A-Za-z]+)?(?:\(s\))?(?::.*)?$/.test(s) && /[A-Z]|^(pools|routes|med|namespaces)\b/.test(s));
  const notConfig = new Set(['healthCheckNodePort', 'externalIPs', 'loadBalancerIP', 'admitAttributes']);
  let checked = 0;
  for (const f of fields) {
    const path = f.replace(/:.*$/, '').replace('(s)', '').split('[].');
    if (path.some((p) => notConfig.has(p))) continue;
    checked++;
    t.ok(path.every((p) => props.has(p)), `${f} is a configuration field`);
  }
  t.ok(checked >= 8, `${checked} configuration fields checked`);
});

t.test('its numbers are the code\'s: the health-check floors and the well-known range', async (t) => {
  const floors = /interval at least (\d+(?:\.\d+)?) s, timeout at least (\d+) ms/.exec(doc);
  t.ok(floors, 'the floors are stated');
  t.equal(Number(floors?.[1]), MIN_ANNOTATION_INTERVAL_SEC, 'interval floor');
  t.equal(Number(floors?.[2]) / 1000, MIN_ANNOTATION_TIMEOUT_SEC, 'timeout floor');
  const range = /well-known community \((\d+):(\d+)-(\d+):(\d+)\)/.exec(doc);
  t.ok(range, 'the well-known range is stated');
  const [lo, hi] = [Number(range?.[1]) * 65536 + Number(range?.[2]), Number(range?.[3]) * 65536 + Number(range?.[4])];
  t.ok(isWellKnownCommunity(lo) && isWellKnownCommunity(hi), 'both ends are well-known');
  t.notOk(isWellKnownCommunity(lo - 1), 'the value before is not');
});

t.test('every kind of endpoint address it says is never probed is refused', async (t) => {
  const EXAMPLES: Record<string, string[]> = {
    unspecified: ['0.0.0.0', '::'],
    loopback: ['127.0.0.1', '127.0.0.77', '::1'],
    'link-local': ['169.254.169.254', 'fe80::1'],
    multicast: ['224.0.0.1', 'ff02::1'],
    broadcast: ['255.255.255.255'],
    'IPv4-mapped': ['::ffff:10.0.0.1'],
    'zone-scoped': ['fe80::1%eth0'],
  };
  const list = /Endpoint addresses that are ([^.]+?) are never\s+probed/.exec(doc.replace(/\s+/g, ' '));
  t.ok(list, 'the list is stated');
  const kinds = (list?.[1] ?? '').replace(/\([^)]*\)/g, '').split(/,| or /).map((k) => k.trim()).filter((k) => k !== '');
  t.ok(kinds.length >= 7, `${kinds.length} kinds: ${kinds.join(', ')}`);
  for (const k of kinds) {
    const examples = EXAMPLES[k];
    if (examples === undefined) {
      t.fail(`no example of "${k}" here: add one`);
      continue;
    }
    for (const a of examples) t.not(unprobedAddress(a), undefined, `${k}: ${a} is never probed`);
  }
  t.equal(unprobedAddress('10.244.0.10'), undefined, 'a pod address is probed');
});
