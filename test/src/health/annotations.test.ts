import t from 'tap';
import { parseHealthAnnotations, parseSeconds, parseStatusList } from '../../../src/health/annotations.ts';
import { formatAnnotationErrors } from '../../../src/k8s/annotations.ts';
import type { CheckTiming } from '../../../src/health/types.ts';

const D: CheckTiming = { intervalSec: 5, timeoutSec: 2, rise: 2, fall: 3 };
const A = (o: Record<string, string>) => Object.fromEntries(Object.entries(o).map(([k, v]) => [`herald.io/health-check-${k}`, v]));

t.test('no check asked for', async (t) => {
  t.same(parseHealthAnnotations(undefined, D), { ok: true, check: null });
  t.same(parseHealthAnnotations({ 'other.io/x': 'y' }, D), { ok: true, check: null });
  t.same(parseHealthAnnotations(A({ type: 'none' }), D), { ok: true, check: null });
});

t.test('valid annotations', async (t) => {
  const rows: Array<{ in: Record<string, string>; out: unknown }> = [
    { in: { type: 'tcp', port: '8080' }, out: { kind: 'tcp', port: 8080, ...D } },
    {
      in: { type: 'HTTP', port: '80', path: '/ready', 'expected-status': '200,204', interval: '1', timeout: '250ms', rise: '3', fall: '1' },
      out: { kind: 'http', port: 80, path: '/ready', expectedStatus: [200, 204], intervalSec: 1, timeoutSec: 0.25, rise: 3, fall: 1 },
    },
    {
      in: { type: 'https', port: '443', 'expected-status': '200-202, 204', interval: '2s' },
      out: { kind: 'https', port: 443, expectedStatus: [200, 201, 202, 204], intervalSec: 2, timeoutSec: 2, rise: 2, fall: 3 },
    },
    // The floors themselves are allowed: 1 s, 100 ms, a timeout equal to the interval.
    { in: { type: 'tcp', port: '80', interval: '1000ms', timeout: '0.1' }, out: { kind: 'tcp', port: 80, intervalSec: 1, timeoutSec: 0.1, rise: 2, fall: 3 } },
    { in: { type: 'tcp', port: '80', interval: '3', timeout: '3s' }, out: { kind: 'tcp', port: 80, intervalSec: 3, timeoutSec: 3, rise: 2, fall: 3 } },
  ];
  t.equal(rows.length, 5);
  for (const row of rows) {
    const r = parseHealthAnnotations(A(row.in), D);
    t.same(r, { ok: true, check: row.out }, JSON.stringify(row.in));
  }
});

t.test('bad values: one clear error per bad annotation', async (t) => {
  const rows: Array<{ in: Record<string, string>; errs: Array<[string, RegExp]> }> = [
    { in: { type: 'udp', port: '80' }, errs: [['type', /must be tcp, http, https or none/]] },
    { in: { type: 'tcp' }, errs: [['port', /is required/]] },
    { in: { type: 'tcp', port: '0' }, errs: [['port', /integer 1-65535, got "0"/]] },
    { in: { type: 'tcp', port: '80x' }, errs: [['port', /integer 1-65535/]] },
    { in: { type: 'tcp', port: '80', path: '/x' }, errs: [['path', /only to http and https/]] },
    { in: { type: 'http', port: '80', path: 'ready' }, errs: [['path', /must start with "\/"/]] },
    { in: { type: 'http', port: '80', path: '/a b' }, errs: [['path', /spaces or control/]] },
    { in: { type: 'http', port: '80', 'expected-status': '200,abc' }, errs: [['expected-status', /"abc" is not a status/]] },
    { in: { type: 'http', port: '80', 'expected-status': '299-200' }, errs: [['expected-status', /reversed/]] },
    { in: { type: 'http', port: '80', 'expected-status': '700' }, errs: [['expected-status', /outside 100-599/]] },
    { in: { type: 'tcp', port: '80', interval: '0' }, errs: [['interval', /greater than 0/]] },
    { in: { type: 'tcp', port: '80', interval: '1m' }, errs: [['interval', /number of seconds/]] },
    { in: { type: 'tcp', port: '80', timeout: '-1' }, errs: [['timeout', /number of seconds/]] },
    { in: { type: 'tcp', port: '80', rise: '0', fall: '1.5' }, errs: [['rise', /1-100/], ['fall', /1-100/]] },
    { in: { type: 'tcp', port: '80', intervall: '1' }, errs: [['intervall', /unknown annotation/]] },
    { in: { port: '80' }, errs: [['type', /is required when other/]] },
    // Tenants write these (docs/security.md): no address of their choosing, no faster than once a second (issue 35 N8).
    { in: { type: 'tcp', port: '80', address: '127.0.0.77' }, errs: [['address', /is not accepted: a Service's health check probes only its own ready endpoints on this node/]] },
    { in: { type: 'tcp', port: '80', interval: '0.0000001' }, errs: [['interval', /must be at least 1 s \(the shortest interval a Service may ask for\)/]] },
    { in: { type: 'tcp', port: '80', interval: '0.2' }, errs: [['interval', /at least 1 s/]] },
    { in: { type: 'tcp', port: '80', interval: '1', timeout: '1ms' }, errs: [['timeout', /must be at least 0\.1 s/]] },
    { in: { type: 'tcp', port: '80', interval: '2', timeout: '3' }, errs: [['timeout', /timeout 3 s must not exceed the interval 2 s/]] },
    // A timeout above the operator's default interval (5 s) is refused too; so is an interval below its default timeout (2 s).
    { in: { type: 'tcp', port: '80', timeout: '6' }, errs: [['timeout', /timeout 6 s must not exceed the interval 5 s/]] },
    { in: { type: 'tcp', port: '80', interval: '1.5' }, errs: [['interval', /timeout 2 s must not exceed the interval 1\.5 s/]] },
  ];
  t.equal(rows.length, 23);
  for (const row of rows) {
    const r = parseHealthAnnotations(A(row.in), D);
    t.equal(r.ok, false, JSON.stringify(row.in));
    if (r.ok) continue;
    t.equal(r.errors.length, row.errs.length, `${JSON.stringify(row.in)}: ${formatAnnotationErrors(r.errors)}`);
    row.errs.forEach(([name, re], i) => {
      t.equal(r.errors[i]?.annotation, `herald.io/health-check-${name}`);
      t.match(r.errors[i]?.message, re);
    });
  }
});

t.test('a value that is not a string (an unquoted number in a manifest) is a bad annotation (issue 35 N9)', async (t) => {
  const r = parseHealthAnnotations({ 'herald.io/health-check-type': 'tcp', 'herald.io/health-check-port': 8080 } as never, D);
  t.same(r, { ok: false, errors: [{ annotation: 'herald.io/health-check-port', value: undefined, message: 'must be a string, got number 8080 (quote it in YAML: "8080")' }] });
  t.match(parseHealthAnnotations({ 'herald.io/health-check-type': true } as never, D), { ok: false, errors: [{ annotation: 'herald.io/health-check-type', message: 'must be a string, got boolean true (quote it in YAML: "true")' }] });
});

t.test('formatAnnotationErrors', async (t) => {
  const r = parseHealthAnnotations(A({ type: 'tcp', port: 'x' }), D);
  t.equal(r.ok, false);
  if (!r.ok) t.equal(formatAnnotationErrors(r.errors), 'herald.io/health-check-port="x": must be an integer 1-65535, got "x"');
});

t.test('parseSeconds and parseStatusList', async (t) => {
  t.equal(parseSeconds('1.5'), 1.5);
  t.equal(parseSeconds('.5'), 0.5);
  t.equal(parseSeconds('1500ms'), 1.5);
  t.throws(() => parseSeconds('7200'), /at most 3600/);
  t.throws(() => parseSeconds(''), /number of seconds/);
  t.same(parseStatusList('204, 200,200'), [200, 204]);
  t.throws(() => parseStatusList(''), /at least one/);
});
