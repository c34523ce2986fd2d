// Per-Service path attribute annotations (src/controller/service-attributes.ts): good and bad values of each
// annotation, one error per bad annotation naming it and the fix, the good ones kept next to a bad one, typo hints.
import t from 'tap';
import { formatAnnotationErrors } from '../../../src/k8s/annotations.ts';
import { MAX_COMMUNITIES_PER_ANNOTATION, parseServiceAttributes } from '../../../src/controller/service-attributes.ts';

const A = (o: Record<string, string>) => Object.fromEntries(Object.entries(o).map(([k, v]) => [`herald.io/${k}`, v]));

t.test('nothing asked for', async (t) => {
  t.same(parseServiceAttributes(undefined), { attributes: {}, errors: [], invalid: [] });
  t.same(parseServiceAttributes({ 'metallb.io/address-pool': 'x', 'herald.io/health-check-type': 'tcp', 'herald.io/drain': 'true' }), { attributes: {}, errors: [], invalid: [] });
});

t.test('herald.io/communities', async (t) => {
  t.same(parseServiceAttributes(A({ communities: '65000:100' })).attributes, { communities: ['65000:100'] });
  t.same(parseServiceAttributes(A({ communities: ' 65000:100, no-export  65000:7,,' })).attributes, { communities: ['65000:100', 'no-export', '65000:7'] }, 'commas and spaces');
  t.same(parseServiceAttributes(A({ communities: 'NO-EXPORT 65535:65281 65000:1 65000:1' })).attributes, { communities: ['NO-EXPORT', '65000:1'] }, 'duplicates by value dropped');
  const rows: [string, RegExp][] = [
    ['', /is empty: list at least one community .* or remove the annotation/],
    ['65536:1', /"65536:1" is not a community: use "ASN:VALUE" \(0-65535 each\) or a well-known name/],
    ['65000:1, 1:2:3, nope', /"1:2:3", "nope" are not communities: use/],
    // issue 35: the codec reads a bare number as a 32-bit value ("65000" = 0:65000), never what was meant
    ['65000', /"65000" is not a community: use "ASN:VALUE"/],
    [Array.from({ length: MAX_COMMUNITIES_PER_ANNOTATION + 1 }, (_, i) => `1:${i}`).join(','), /lists 65 communities; at most 64/],
  ];
  for (const [value, re] of rows) {
    const r = parseServiceAttributes(A({ communities: value }));
    t.same(r.attributes, {}, `${JSON.stringify(value).slice(0, 40)}: no value`);
    t.equal(r.errors.length, 1);
    t.equal(r.errors[0]?.annotation, 'herald.io/communities');
    t.equal(r.errors[0]?.value, value);
    t.match(r.errors[0]?.message, re);
  }
});

t.test('herald.io/large-communities', async (t) => {
  t.same(parseServiceAttributes(A({ 'large-communities': '65000:1:2, 4294967295:0:1 65000:1:2' })).attributes, { largeCommunities: ['65000:1:2', '4294967295:0:1'] });
  for (const [value, re] of [
    ['65000:1', /"65000:1" is not a large community: use "GLOBAL:LOCAL1:LOCAL2" \(0-4294967295 each\)/],
    ['4294967296:1:1', /is not a large community/],
    ['  ', /is empty/],
  ] as const) {
    const r = parseServiceAttributes(A({ 'large-communities': value }));
    t.same(r.attributes, {});
    t.same(r.errors.map((e) => e.annotation), ['herald.io/large-communities']);
    t.match(r.errors[0]?.message, re);
  }
});

t.test('herald.io/med', async (t) => {
  t.same(parseServiceAttributes(A({ med: '0' })).attributes, { med: 0 });
  t.same(parseServiceAttributes(A({ med: ' 4294967295 ' })).attributes, { med: 4294967295 });
  for (const value of ['-1', '4294967296', '1.5', '10ms', '', 'high']) {
    const r = parseServiceAttributes(A({ med: value }));
    t.same(r.attributes, {}, value);
    t.same(r.errors, [{ annotation: 'herald.io/med', value, message: `must be a MED, an integer 0-4294967295, got ${JSON.stringify(value)}` }]);
  }
});

t.test('herald.io/as-path-prepend', async (t) => {
  t.same(parseServiceAttributes(A({ 'as-path-prepend': '3' })).attributes, { asPathPrepend: 3 });
  t.same(parseServiceAttributes(A({ 'as-path-prepend': '0' })).attributes, { asPathPrepend: 0 }, '0 = none (overrides an advertisement-wide prepend)');
  t.same(parseServiceAttributes(A({ 'as-path-prepend': '10' })).attributes, { asPathPrepend: 10 });
  for (const value of ['11', '-1', '2x', '65000']) {
    const r = parseServiceAttributes(A({ 'as-path-prepend': value }));
    t.same(r.attributes, {}, value);
    t.same(r.errors.map((e) => e.annotation), ['herald.io/as-path-prepend']);
    t.match(r.errors[0]?.message, /must be the number of extra copies of the local AS, an integer 0-10/);
  }
});

t.test('each annotation stands alone: one error per bad one, the good ones kept', async (t) => {
  const r = parseServiceAttributes(A({ communities: '65000:1', 'large-communities': 'x', med: '50', 'as-path-prepend': '99' }));
  t.same(r.attributes, { communities: ['65000:1'], med: 50 });
  t.same(r.errors.map((e) => e.annotation), ['herald.io/large-communities', 'herald.io/as-path-prepend']);
  t.same(r.invalid, ['asPathPrepend', 'largeCommunities'], 'the attributes left without a usable value');
  t.equal(
    formatAnnotationErrors(r.errors),
    'herald.io/large-communities="x": "x" is not a large community: use "GLOBAL:LOCAL1:LOCAL2" (0-4294967295 each); ' +
      'herald.io/as-path-prepend="99": must be the number of extra copies of the local AS, an integer 0-10, got "99"',
  );
});

// Issue 35 N9: an unquoted `herald.io/med: 100` in a manifest is a number; it quarantined the Service (its VIP withdrawn).
t.test('an annotation value that is not a string is a bad annotation, with the fix', async (t) => {
  const r = parseServiceAttributes({ 'herald.io/med': 100, 'herald.io/communities': ['65000:1'], 'herald.io/as-path-prepend': '2', 'herald.io/large-communities': null } as never);
  t.same(r.attributes, { asPathPrepend: 2 }, 'the good one is kept');
  t.same(r.errors, [
    { annotation: 'herald.io/communities', value: undefined, message: 'must be a string, got a list' },
    { annotation: 'herald.io/large-communities', value: undefined, message: 'must be a string, got null (quote it in YAML: "null")' },
    { annotation: 'herald.io/med', value: undefined, message: 'must be a string, got number 100 (quote it in YAML: "100")' },
  ]);
  t.same(r.invalid, ['communities', 'largeCommunities', 'med'], 'their last good values are kept by the caller');
});

t.test('typos of a known name are reported with the name meant', async (t) => {
  const r = parseServiceAttributes({ 'herald.io/community': '65000:1', 'herald.io/Large_Communities': '1:2:3', 'herald.io/MED': '5', 'herald.io/as-path-prepends': '1' });
  t.same(r.attributes, {});
  t.same(
    r.errors.map((e) => [e.annotation, e.message]),
    [
      ['herald.io/community', 'unknown annotation; did you mean herald.io/communities?'],
      ['herald.io/Large_Communities', 'unknown annotation; did you mean herald.io/large-communities?'],
      ['herald.io/MED', 'unknown annotation; did you mean herald.io/med?'],
      ['herald.io/as-path-prepends', 'unknown annotation; did you mean herald.io/as-path-prepend?'],
    ],
  );
  t.same(r.invalid, ['asPathPrepend', 'communities', 'largeCommunities', 'med'], 'a typo leaves the attribute meant without a value');
  const both = parseServiceAttributes({ 'herald.io/med': '5', 'herald.io/MED': '7' });
  t.same(both.attributes, { med: 5 });
  t.same(both.invalid, [], 'the exact name is there and valid: the typo is only reported');
  t.same(both.errors.map((e) => e.annotation), ['herald.io/MED']);
});
