// Terms (src/k8s/terms.ts): the values many objects repeat are held once by the cache, whatever number of parsed
// copies arrived. String identity cannot be seen from JavaScript, so a child process trims Services parsed one by one
// (each JSON.parse brings its own copies), drops the parsed objects and counts the string copies left in a heap
// snapshot; the cluster IP, not a term, is the control: one copy per Service.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { MAX_TERM_LENGTH, MAX_TERMS, term, termCount } from '../../../src/k8s/terms.ts';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const url = (p: string) => pathToFileURL(join(ROOT, p)).href;

const CHILD = `
import { getHeapSnapshot } from 'node:v8';
import { trimObject } from ${JSON.stringify(url('src/k8s/trim.ts'))};
import { servedService, service } from ${JSON.stringify(url('test/helpers/k8s-objects.ts'))};
const N = 40;
const texts = [];
for (let i = 0; i < N; i++) {
  texts.push(JSON.stringify(servedService(service('svc-' + i, { ns: ['terms', 'probe', 'ns'].join('-'), clusterIPs: [['10', '96', '77', '77'].join('.')], labels: { tier: ['probe', 'tier'].join('-') } }), i)));
}
const kept = texts.map((text) => trimObject('Service', JSON.parse(text)));
texts.length = 0;
let json = '';
for await (const chunk of getHeapSnapshot()) json += chunk;
const snap = JSON.parse(json);
const fields = snap.snapshot.meta.node_fields;
const types = snap.snapshot.meta.node_types[0];
const [T, NAME] = [fields.indexOf('type'), fields.indexOf('name')];
const count = (value) => {
  let n = 0;
  for (let i = 0; i < snap.nodes.length; i += fields.length) {
    if (types[snap.nodes[i + T]] === 'string' && snap.strings[snap.nodes[i + NAME]] === value) n++;
  }
  return n;
};
console.log(JSON.stringify({ kept: kept.length, namespace: count('terms-probe-ns'), label: count('probe-tier'), clusterIP: count('10.96.77.77') }));
`;

t.test('a namespace and a label value repeated by 40 parsed Services are held once; the cluster IP, no term, once per Service', async (tt) => {
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', CHILD], { encoding: 'utf8', timeout: 60_000 });
  tt.equal(r.status, 0, r.stderr);
  const copies = JSON.parse(r.stdout) as { kept: number; namespace: number; label: number; clusterIP: number };
  tt.equal(copies.kept, 40);
  // The control: clusterIP and clusterIPs[0] of each Service, and the script's own few.
  tt.ok(copies.clusterIP >= 80, `control: ${copies.clusterIP} copies of the cluster IP (two per Service)`);
  const few = copies.clusterIP - 80 + 1; // the script's own, and the table's one
  tt.ok(copies.namespace <= few, `${copies.namespace} copies of the namespace (at most ${few})`);
  tt.ok(copies.label <= few, `${copies.label} copies of the label value (at most ${few})`);
});

t.test('the table returns the first copy, passes long strings through and starts again when full', async (tt) => {
  const long = 'x'.repeat(MAX_TERM_LENGTH + 1);
  tt.equal(term(long), long);
  const before = termCount();
  term(long);
  tt.equal(termCount(), before, 'a long string is not held');
  for (let i = 0; i <= MAX_TERMS; i++) term(`t-${i}`);
  tt.ok(termCount() <= MAX_TERMS, `${termCount()} terms held, at most ${MAX_TERMS}`);
  tt.equal(term('t-0'), 't-0');
});
