// The fast paths of a big configuration (routes-block.ts: the routes list read line by line; load.ts: the schema over
// the routes in chunks) give exactly what the plain library path gives: the same data, the same errors with the same
// field paths and in the same order. Property-tested on generated route lists, and on a fixed set of bad inputs.
import t from 'tap';
import type { Test } from 'tap';
import fc from 'fast-check';
import { parse } from 'yaml';
import { configDataSteps, parseConfigText, validateConfig } from '../../../src/config/load.ts';
import { parseWithRoutesBlock } from '../../../src/config/routes-block.ts';
import { runSync } from '../../../src/config/slices.ts';
import { LineIndex } from '../../../src/config/yaml.ts';

const HEAD = 'bgp:\n  localAs: 65000\n  routerId: 10.0.0.1\npeers:\n  - {name: a, address: 192.0.2.1, peerAs: 65001}\n';

/** Whether the routes-block path took the text (not the library's whole-file path). */
function split(text: string): boolean {
  return runSync(parseWithRoutesBlock(text, new LineIndex(text))) !== undefined;
}

function same(t: Test, text: string, what: string): void {
  const fast = parseConfigText(text);
  const slow = parseConfigText(text, { fastPath: false });
  t.same(fast, slow, what);
}

// Scalars as an operator writes them, including ones YAML's core schema reads as numbers, booleans or null.
const scalar = fc.oneof(
  fc.constantFrom('10.0.0.1', '2001:db8::1', 'fe80::', 'no-export', '65000:1', '1:2:3', 'a', 'x-y_z.w/1'),
  fc.constantFrom('true', 'False', 'NULL', '~', '0x1F', '0o17', '1.5', '1e3', '1.', '007', '12', '4294967295', '12345678901234567'),
  fc.constantFrom('"10.0.0.1/32"', "'10.0.0.2/32'", '"a: b"', "'it''s'", '"tab\\tx"', '"#x"', "''", '""'),
  fc.integer({ min: 0, max: 70000 }).map(String),
);
const key = fc.constantFrom('prefix', 'nextHop', 'med', 'localPref', 'communities', 'largeCommunities', 'peers', 'unknownField', 'true');
const value = fc.oneof(
  { weight: 4, arbitrary: scalar },
  { weight: 1, arbitrary: fc.array(scalar, { maxLength: 3 }).map((xs) => `[${xs.join(', ')}]`) },
  { weight: 1, arbitrary: fc.constantFrom('[a, [b]]', '[a, ]', '{kind: tcp, port: 80}', '', '&anchor 10.0.0.9/32', '!!str 123') },
);
const comment = fc.constantFrom('', '', '', '  # a comment', ' #', '   ');
const prefix = fc.integer({ min: 0, max: 300 }).map((i) => `10.${i >> 8}.${i & 255}.0/${24 + (i % 9)}`);
const entry = fc.record({
  prefix,
  pairs: fc.array(fc.tuple(key, value, comment), { maxLength: 3 }),
  extra: fc.constantFrom('', '', '', '    # note\n', '\n', '      nested: line\n', '    healthCheck:\n      port: 80\n', '    communities:\n      - 65000:1\n'),
});

function render(entries: { prefix: string; pairs: [string, string, string][]; extra: string }[], indent: number, after: string): string {
  const pad = ' '.repeat(indent);
  const lines = ['routes:'];
  for (const e of entries) {
    lines.push(`${pad}- prefix: ${e.prefix}`);
    for (const [k, v, c] of e.pairs) lines.push(`${pad}  ${k}: ${v}${c}`);
    if (e.extra) lines.push(e.extra.replace(/\n$/, '').replace(/^ {4}/gm, `${pad}  `));
  }
  return `${HEAD}${lines.join('\n')}\n${after}`;
}

t.test('generated route lists: fast path = library path (data and errors)', async (t) => {
  let taken = 0;
  let runs = 0;
  fc.assert(
    fc.property(fc.array(entry, { minLength: 1, maxLength: 8 }), fc.constantFrom(0, 2, 4), fc.constantFrom('', 'logLevel: debug\n', '# end\n', 'routes2: x\n'), (entries, indent, after) => {
      const text = render(entries, indent, after);
      runs++;
      if (split(text)) taken++;
      const fast = runSync(configDataSteps(text));
      const slow = runSync(configDataSteps(text, { fastPath: false }));
      if (slow.ok) {
        if (!fast.ok) throw new Error(`fast path failed where the library did not:\n${text}\n${JSON.stringify(fast)}`);
        if (JSON.stringify(fast.data) !== JSON.stringify(parse(text, { uniqueKeys: true }))) throw new Error(`data differs:\n${text}`);
      } else if (fast.ok) {
        throw new Error(`fast path accepted what the library refused:\n${text}\n${JSON.stringify(slow.problems)}`);
      }
      const a = parseConfigText(text);
      const b = parseConfigText(text, { fastPath: false });
      if (a.ok !== b.ok || (a.ok && JSON.stringify(a.config) !== JSON.stringify(b.ok && b.config)) || (!a.ok && !b.ok && JSON.stringify(a.errors) !== JSON.stringify(b.errors))) {
        throw new Error(`results differ:\n${text}\nfast ${JSON.stringify(a)}\nslow ${JSON.stringify(b)}`);
      }
    }),
    { numRuns: 400, seed: 1912 },
  );
  t.ok(taken > runs / 10, `the routes-block path was taken in ${taken} of ${runs} runs (the property is not vacuous)`);
});

t.test('the routes-block path is taken for a plain list and left for what it cannot split', async (t) => {
  const list = `${HEAD}routes:\n  - prefix: 10.0.0.1/32\n    med: 10\n  - prefix: "10.0.0.2/32"  # two\n`;
  t.ok(split(list), 'plain list');
  t.ok(split(`${HEAD}routes:\n- prefix: 10.0.0.1/32\n- prefix: 10.0.0.2/32\nlogLevel: info\n`), 'sequence at the indent of its key');
  t.ok(split(`${HEAD}routes:\n  - prefix: 10.0.0.1/32\n    healthCheck: {port: 80}\n`), 'an entry the library reads');
  const cases: [string, string][] = [
    ['tabs', `${HEAD}routes:\n\t- prefix: 10.0.0.1/32\n`],
    ['a %YAML directive', `%YAML 1.1\n---\n${HEAD}routes:\n  - prefix: 10.0.0.1/32\n`],
    ['two routes keys', `${HEAD}routes:\n  - prefix: 10.0.0.1/32\nroutes:\n  - prefix: 10.0.0.2/32\n`],
    ['a flow root', `{bgp: {localAs: 65000, routerId: 10.0.0.1},\nroutes:\n  - prefix: 10.0.0.1/32\n}\n`],
    ['routes in a block scalar', `notes: |\n  routes:\n  - prefix: 10.0.0.1/32\n${HEAD}`],
    ['an anchor', `${HEAD}routes:\n  - &r {prefix: 10.0.0.1/32}\nadvertisements: [*r]\n`],
    ['an empty list', `${HEAD}routes:\nlogLevel: info\n`],
  ];
  for (const [what, text] of cases) {
    t.notOk(split(text), `not split: ${what}`);
    same(t, text, `${what}: same result either way`);
  }
  same(t, list, 'plain list: same result either way');
});

t.test('bad inputs: the same errors with field paths on both paths', async (t) => {
  const bad: [string, string][] = [
    ['bad prefix', 'routes:\n  - prefix: 10.0.0.0/33\n'],
    ['host bits', 'routes:\n  - prefix: 10.0.0.1/24\n'],
    ['duplicate route', 'routes:\n  - prefix: 10.0.0.1/32\n  - prefix: 10.0.0.1/32\n'],
    ['unknown field', 'routes:\n  - prefix: 10.0.0.1/32\n    nexthop: 10.0.0.9\n'],
    ['med out of range', 'routes:\n  - prefix: 10.0.0.1/32\n    med: 4294967296\n'],
    ['med a string', 'routes:\n  - prefix: 10.0.0.1/32\n    med: "10"\n'],
    ['zone id next hop', 'routes:\n  - prefix: 2001:db8::/64\n    nextHop: "2001:db8::1%eth0"\n'],
    ['bad community', 'routes:\n  - prefix: 10.0.0.1/32\n    communities: [65536:1]\n'],
    ['unknown peer', 'routes:\n  - prefix: 10.0.0.1/32\n    peers: [zz]\n'],
    ['prefix missing', 'routes:\n  - nextHop: 10.0.0.9\n'],
    ['a YAML error in an entry', 'routes:\n  - prefix: 10.0.0.1/32\n    med: [1\n  - prefix: 10.0.0.2/32\n'],
    ['duplicate key in an entry', 'routes:\n  - prefix: 10.0.0.1/32\n    prefix: 10.0.0.2/32\n'],
    ['a YAML error after the list', 'routes:\n  - prefix: 10.0.0.1/32\nlogLevel: [info\n'],
    ['errors before, in and after the list', 'routes:\n  - prefix: nope\nlogLevel: loud\nadmin: {port: -1}\n'],
  ];
  for (const [what, body] of bad) {
    const text = `${HEAD.replace('localAs: 65000', what === 'errors before, in and after the list' ? 'localAs: 0' : 'localAs: 65000')}${body}`;
    const fast = parseConfigText(text);
    const slow = parseConfigText(text, { fastPath: false });
    t.notOk(fast.ok, `${what}: rejected`);
    t.same(fast, slow, `${what}: identical errors`);
    if (!fast.ok) t.ok(fast.errors.every((e) => e.path !== ''), `${what}: every error names a field (${JSON.stringify(fast.errors)})`);
  }
  // the YAML error is positioned in the file, after the list too
  const r = parseConfigText(`${HEAD}routes:\n  - prefix: 10.0.0.1/32\n  - prefix: 10.0.0.2/32\nlogLevel: [info\n`);
  t.match(r, { ok: false, errors: [{ path: '(yaml)', message: /at line 10, column 1$/ }] });
});

t.test('a file over 1 MiB with a YAML error: the library\'s first error, at the line of the file', async (t) => {
  const entries = Array.from({ length: 45_000 }, (_, i) => `  - prefix: 10.${i >> 16}.${(i >> 8) & 255}.${i & 255}/32\n`).join('');
  const head = `${HEAD}admin: {port: [1}\n`;
  const cases: [string, string, string][] = [
    // [what, text, the text the library parses for the reference (the whole file, or the part before the list)]
    ['after the list', `${HEAD}routes:\n${entries}logLevel: [info\n`, ''],
    ['in an entry', `${HEAD}routes:\n${entries}  - prefix: 10.200.0.1/32\n    med: [1\n${entries.replace(/10\./g, '11.')}`, ''],
    ['before the list', `${head}routes:\n${entries}`, `${head}routes: []\n`],
  ];
  for (const [what, text, reference] of cases) {
    t.ok(text.length > 1024 * 1024, `${what}: ${text.length} characters`);
    const fast = parseConfigText(text);
    const slow = parseConfigText(reference || text, { fastPath: false });
    t.match(fast, { ok: false, errors: [{ path: '(yaml)' }] }, `${what}: rejected`);
    // Inside an entry the column may differ: the entry's batch is parsed without its parents (routes-block.ts).
    const line = (m: string | undefined) => (what === 'in an entry' ? m?.replace(/, column \d+$/, '') : m);
    if (!fast.ok && !slow.ok) t.equal(line(fast.errors[0]?.message), line(slow.errors[0]?.message), `${what}: the first error as the library words and places it`);
  }
});

t.test('over 500 routes: the schema in chunks reports the same errors in the same order', async (t) => {
  const routes = Array.from({ length: 9000 }, (_, i) => ({ prefix: `10.${i >> 8}.${i & 255}.0/24` }) as Record<string, unknown>);
  routes[5] = { prefix: '10.0.0.0/33' };
  routes[2500] = { prefix: '10.9.0.0/24', med: -1, bogus: 1 };
  routes[8999] = { prefix: 7 };
  const data = { bgp: { localAs: 0, routerId: '10.0.0.1' }, peers: [{ name: 'a', address: 'x', peerAs: 1 }], routes, logLevel: 'loud', zzz: 1 };
  const chunked = validateConfig(data);
  const whole = validateConfig(data, { fastPath: false });
  t.same(chunked, whole, 'identical');
  t.match(chunked, { ok: false });
  if (!chunked.ok) t.same(chunked.errors.map((e) => e.path), ['bgp.localAs', 'peers[0].address', 'routes[5].prefix', 'routes[2500].med', 'routes[2500].bogus', 'routes[8999].prefix', 'logLevel', 'zzz']);
  const good = validateConfig({ bgp: { localAs: 1, routerId: '10.0.0.1' }, routes: routes.map((_, i) => ({ prefix: `10.${i >> 8}.${i & 255}.0/24`, med: i })) });
  const goodWhole = validateConfig({ bgp: { localAs: 1, routerId: '10.0.0.1' }, routes: routes.map((_, i) => ({ prefix: `10.${i >> 8}.${i & 255}.0/24`, med: i })) }, { fastPath: false });
  t.same(good, goodWhole, 'valid: the same config');
  t.equal(good.ok && good.config.routes.length, 9000);
});

t.test('over 500 routes of a bare canonical IPv4 prefix (taken without the schema walk): the same config and errors as the schema', async (t) => {
  const bare = (i: number): Record<string, unknown> => ({ prefix: `10.${i >> 8}.${i & 255}.${i % 7}/32` });
  const base = { bgp: { localAs: 1, routerId: '10.0.0.1' } };
  const routes = Array.from({ length: 3000 }, (_, i) => bare(i));
  const good = validateConfig({ ...base, routes });
  t.same(good, validateConfig({ ...base, routes }, { fastPath: false }), 'valid: the same config');
  t.equal(good.ok && good.config.routes.length, 3000);
  // Near misses of the bare shape in otherwise bare chunks: each goes through the schema and keeps its message.
  const bad = routes.map((r) => ({ ...r }));
  bad[10] = { prefix: '10.0.0.1/24' }; // host bits: a semantic error
  bad[700] = { prefix: '010.0.0.1/32' }; // not canonical: the schema's own check
  bad[1400] = { prefix: '10.0.0.1/32', extra: 1 };
  bad[2100] = Object.assign(Object.create(null) as object, { prefix: '10.0.0.9/32' }); // not a plain object: the schema decides (it takes it)
  const fast = validateConfig({ ...base, routes: bad });
  t.same(fast, validateConfig({ ...base, routes: bad }, { fastPath: false }), 'invalid: the same errors in the same order');
  if (!fast.ok) t.same(fast.errors.map((e) => e.path), ['routes[700].prefix', 'routes[1400].extra'], 'the schema errors (semantic checks wait for them)');
  else t.fail('accepted');
  const dup = routes.map((r) => ({ ...r }));
  dup[10] = { prefix: '10.0.0.1/24' };
  dup[2999] = { ...bare(5) };
  const sem = validateConfig({ ...base, routes: dup });
  t.same(sem, validateConfig({ ...base, routes: dup }, { fastPath: false }), 'semantic errors: the same');
  if (!sem.ok) t.same(sem.errors.map((e) => e.path), ['routes[10].prefix', 'routes[2999].prefix']);
  else t.fail('accepted');
});

t.test('one-line `- prefix: P` entries (read without splitting the line) and their near misses: the library data', async (t) => {
  const lines = [
    '- prefix: 10.0.0.1/32',
    '- prefix: 10.0.0.2/32\r',
    '- prefix: 10.0.0.3/32   # a comment',
    '- prefix: 010.0.0.4/32',
    '- prefix: 10.0.0.5/24',
    '- prefix: 10.0.0.6/32 ',
    '- prefix: 10.0.0.7/32x',
    '- prefix: "10.0.0.8/32"',
    '- prefix: 10.0.0.9/32',
    '  med: 5',
    '- prefix: 10.0.0.10/32',
    '',
    '# trailing comment',
    '- prefix: 10.0.0.11/32',
  ];
  for (const indent of [0, 2]) {
    const text = `${HEAD}routes:\n${lines.map((l) => (l === '' || l.startsWith('#') ? l : ' '.repeat(indent) + l)).join('\n')}`;
    t.ok(split(text), `indent ${indent}: the routes block path`);
    const fast = runSync(configDataSteps(text));
    t.ok(fast.ok);
    t.same(fast.ok && fast.data, parse(text, { uniqueKeys: true }), `indent ${indent}: the library's data`);
    t.same(parseConfigText(text), parseConfigText(text, { fastPath: false }), `indent ${indent}: the same errors`);
  }
});
