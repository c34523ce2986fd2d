import t from 'tap';
import type { Test } from 'tap';
import { mkdtemp, mkdir, rm, writeFile, unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManifestSource, parseManifest } from '../../../src/sources/manifests.ts';
import type { FileError } from '../../../src/sources/source.ts';
import { waitFor } from '../../helpers/k8s-wait.ts';

const SVC = `apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: prod
spec:
  type: LoadBalancer
  clusterIP: 10.96.0.10
status:
  loadBalancer:
    ingress:
      - ip: 192.0.2.10
`;
const SLICE = `apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: web-1
  namespace: prod
  labels: {kubernetes.io/service-name: web}
addressType: IPv4
endpoints:
  - addresses: [10.0.0.1]
    nodeName: n1
`;
const NODE = (name: string, ready = 'True'): string => `apiVersion: v1
kind: Node
metadata: {name: ${name}}
status:
  conditions: [{type: Ready, status: "${ready}"}]
`;

async function tempDir(tt: Test): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'herald-manifests-'));
  tt.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

t.test('reads multi-document files, .yml, kind List; ignores other kinds and files', async (tt) => {
  const dir = await tempDir(tt);
  await writeFile(join(dir, 'a.yaml'), `${SVC}---\n${SLICE}---\n# empty doc\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n`);
  await writeFile(join(dir, 'b.yml'), `apiVersion: v1\nkind: List\nitems:\n- ${NODE('n1').replace(/\n/g, '\n  ').trimEnd()}\n- apiVersion: networking.k8s.io/v1\n  kind: ServiceCIDR\n  metadata: {name: kubernetes}\n  spec: {cidrs: [10.96.0.0/12]}\n`);
  await writeFile(join(dir, '.hidden.yaml'), NODE('hidden'));
  await writeFile(join(dir, 'notes.txt'), NODE('txt'));
  await mkdir(join(dir, 'sub.yaml'));
  const src = new ManifestSource({ dir, watch: false, rescanIntervalMs: 0 });
  const changes: string[] = [];
  src.on('change', (k: string[]) => changes.push(...k));
  tt.equal(src.synced(), false);
  await src.start();
  tt.teardown(() => src.stop());
  tt.equal(src.synced(), true);
  const snap = src.snapshot();
  tt.equal(snap.service('prod/web')?.status?.loadBalancer?.ingress?.[0]?.ip, '192.0.2.10');
  tt.equal(snap.endpointSlicesFor('prod/web').length, 1);
  tt.ok(snap.node('n1'));
  tt.equal(snap.node('hidden'), undefined);
  tt.equal(snap.node('txt'), undefined);
  tt.strictSame([...snap.serviceCIDRs()].map((c) => c.spec?.cidrs), [['10.96.0.0/12']]);
  tt.strictSame(changes.sort(), ['node:n1', 'service:prod/web', 'servicecidr:kubernetes']);
  tt.strictSame(src.status().fileErrors, []);
});

t.test('a broken file is reported with path and line; its last good version stays', async (tt) => {
  const dir = await tempDir(tt);
  const f = join(dir, 'svc.yaml');
  await writeFile(f, SVC);
  await writeFile(join(dir, 'node.yaml'), NODE('n1'));
  const src = new ManifestSource({ dir, watch: false, rescanIntervalMs: 0 });
  const errors: FileError[] = [];
  src.on('error', (e: FileError) => errors.push(e));
  await src.start();
  tt.teardown(() => src.stop());
  // break the service file at line 4 (bad indentation / unterminated flow)
  await writeFile(f, SVC.replace('  name: web', '  name: [web').replace('192.0.2.10', '192.0.2.99'));
  await writeFile(join(dir, 'node.yaml'), NODE('n1', 'False'));
  await src.rescan();
  tt.equal(errors.length, 1);
  tt.equal(errors[0]?.path, f);
  tt.equal(typeof errors[0]?.line, 'number');
  tt.ok((errors[0]?.line ?? 0) >= 4, `line ${errors[0]?.line} points at or after the break`);
  tt.equal(src.snapshot().service('prod/web')?.status?.loadBalancer?.ingress?.[0]?.ip, '192.0.2.10', 'last good version kept');
  tt.equal(src.snapshot().node('n1')?.status?.conditions?.[0]?.status, 'False', 'other files still apply');
  tt.strictSame(src.status().fileErrors?.map((e) => e.path), [f]);
  await src.rescan();
  tt.equal(errors.length, 1, 'same error not re-reported on every scan');
  // missing name is a semantic error with a line
  await writeFile(f, `${NODE('n2')}---\napiVersion: v1\nkind: Service\nmetadata:\n  namespace: x\n`);
  await src.rescan();
  tt.equal(errors.length, 2);
  tt.equal(errors[1]?.line, 7, "line of the nameless Service document");
  tt.match(errors[1]?.message, /Service without metadata.name/);
  tt.notMatch(errors[0]?.message, /at line/, 'position only in line/column fields');
  tt.equal(src.snapshot().node('n2'), undefined, 'the whole broken file is ignored');
  // fixed
  await writeFile(f, SVC.replace('192.0.2.10', '192.0.2.11'));
  await src.rescan();
  tt.equal(src.snapshot().service('prod/web')?.status?.loadBalancer?.ingress?.[0]?.ip, '192.0.2.11');
  tt.strictSame(src.status().fileErrors, []);
});

t.test('a file broken from the start contributes nothing; deleting a file withdraws its objects', async (tt) => {
  const dir = await tempDir(tt);
  await writeFile(join(dir, 'bad.yaml'), 'kind: Node\nmetadata: {name: n9\n');
  await writeFile(join(dir, 'svc.yaml'), `${SVC}---\n${SLICE}`);
  const src = new ManifestSource({ dir, watch: false, rescanIntervalMs: 0 });
  src.on('error', () => {});
  await src.start();
  tt.teardown(() => src.stop());
  tt.equal(src.synced(), true);
  tt.equal(src.snapshot().node('n9'), undefined);
  tt.equal(src.status().fileErrors?.[0]?.path, join(dir, 'bad.yaml'));
  const changes: string[] = [];
  src.on('change', (k: string[]) => changes.push(...k));
  await unlink(join(dir, 'svc.yaml'));
  await src.rescan();
  tt.equal(src.snapshot().service('prod/web'), undefined);
  tt.equal(src.snapshot().endpointSlicesFor('prod/web').length, 0);
  tt.strictSame(changes, ['service:prod/web']);
  // deleting the broken file clears its error
  await unlink(join(dir, 'bad.yaml'));
  await src.rescan();
  tt.strictSame(src.status().fileErrors, []);
});

t.test('fs.watch picks up changes without a manual rescan', async (tt) => {
  const dir = await tempDir(tt);
  await writeFile(join(dir, 'n.yaml'), NODE('n1'));
  const src = new ManifestSource({ dir, rescanIntervalMs: 0, debounceMs: 10 });
  await src.start();
  tt.teardown(() => src.stop());
  await writeFile(join(dir, 'n.yaml'), NODE('n1', 'Unknown'));
  await waitFor(() => src.snapshot().node('n1')?.status?.conditions?.[0]?.status === 'Unknown', 'watched change');
  await writeFile(join(dir, 'm.yml'), NODE('n2'));
  await waitFor(() => src.snapshot().node('n2') !== undefined, 'new file');
  tt.pass('changes seen');
});

t.test('periodic rescan works without fs.watch', async (tt) => {
  const dir = await tempDir(tt);
  const src = new ManifestSource({ dir, watch: false, rescanIntervalMs: 20 });
  await src.start();
  tt.teardown(() => src.stop());
  await writeFile(join(dir, 'n.yaml'), NODE('n1'));
  await waitFor(() => src.snapshot().node('n1') !== undefined, 'rescanned');
  tt.pass('picked up');
});

t.test('missing directory: not synced until it exists; a vanished directory keeps the last state', async (tt) => {
  const base = await tempDir(tt);
  const dir = join(base, 'm');
  const src = new ManifestSource({ dir, watch: false, rescanIntervalMs: 0 });
  src.on('error', () => {});
  await src.start();
  tt.teardown(() => src.stop());
  tt.equal(src.synced(), false);
  tt.match(src.status().fileErrors?.[0]?.message, /cannot read manifest directory/);
  await mkdir(dir);
  await writeFile(join(dir, 'n.yaml'), NODE('n1'));
  await src.rescan();
  tt.equal(src.synced(), true);
  await rm(dir, { recursive: true });
  await src.rescan();
  tt.ok(src.snapshot().node('n1'), 'state kept when the directory vanishes');
});

t.test('parseManifest: non-mapping document', async (tt) => {
  const r = parseManifest('x.yaml', 'kind: Node\nmetadata: {name: a}\n---\n- 1\n- 2\n');
  tt.ok('error' in r);
  if ('error' in r) {
    tt.equal(r.error.line, 4);
    tt.match(r.error.message, /not a mapping/);
  }
});
