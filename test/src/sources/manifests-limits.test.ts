// Bounded manifest input (issue 19): only regular files are read (a *.yaml symlink to a FIFO or a device is skipped
// and reported, and later edits of other files still act), big files are refused with a clear error while their last
// good version stays, 10,000 documents parse in linear time, and a big parse leaves the event loop running.
import t from 'tap';
import type { Test } from 'tap';
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManifestSource, parseManifest } from '../../../src/sources/manifests.ts';
import type { FileError } from '../../../src/sources/source.ts';

const NODE = (name: string, ready = 'True'): string => `apiVersion: v1
kind: Node
metadata: {name: ${name}}
status:
  conditions: [{type: Ready, status: "${ready}"}]
`;
const SVC = (i: number): string => `apiVersion: v1
kind: Service
metadata:
  name: svc-${i}
  namespace: bench
spec:
  type: LoadBalancer
  clusterIP: 10.96.${(i >> 8) & 255}.${i & 255}
status:
  loadBalancer:
    ingress:
      - ip: 198.18.${(i >> 8) & 255}.${i & 255}
`;
const services = (n: number): string => Array.from({ length: n }, (_, i) => SVC(i)).join('---\n');

async function tempDir(tt: Test): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'herald-manifest-limits-'));
  tt.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  return Promise.race([p, new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`${what} did not finish within ${ms} ms`)), ms).unref())]);
}

t.test('a *.yaml symlink to a FIFO or a device is skipped with a reason; later edits still act', async (tt) => {
  const dir = await tempDir(tt);
  const fifo = join(dir, 'pipe');
  execFileSync('mkfifo', [fifo]);
  await symlink(fifo, join(dir, 'a-fifo.yaml'));
  execFileSync('mkfifo', [join(dir, 'b-fifo.yml')]);
  await symlink('/dev/zero', join(dir, 'c-zero.yaml'));
  await writeFile(join(dir, 'n.yaml'), NODE('n1'));
  const src = new ManifestSource({ dir, watch: false, rescanIntervalMs: 0 });
  const errors: FileError[] = [];
  src.on('error', (e: FileError) => errors.push(e));
  await withTimeout(src.start(), 10_000, 'the first scan');
  tt.teardown(() => src.stop());
  tt.equal(src.snapshot().node('n1')?.status?.conditions?.[0]?.status, 'True', 'the regular file is read');
  const byPath = Object.fromEntries((src.status().fileErrors ?? []).map((e) => [e.path, e.message]));
  tt.match(byPath[join(dir, 'a-fifo.yaml')], /^a FIFO \(named pipe\), not a regular file \(Herald reads only regular files; a symlink to one, e\.g\. a mounted ConfigMap or Secret, is fine\); skipped$/);
  tt.match(byPath[join(dir, 'b-fifo.yml')], /FIFO/);
  tt.match(byPath[join(dir, 'c-zero.yaml')], /^a character device, not a regular file \(Herald reads only regular files; .*\); skipped$/);
  tt.equal(errors.length, 3, 'each reported once (logged by the daemon)');
  await writeFile(join(dir, 'n.yaml'), NODE('n1', 'False'));
  await withTimeout(src.rescan(), 10_000, 'a later scan');
  tt.equal(src.snapshot().node('n1')?.status?.conditions?.[0]?.status, 'False', 'a later edit acts');
  tt.equal(errors.length, 3, 'not reported again on every scan');
});

t.test('a file over the size limit is refused with the limit named; its last good version stays', async (tt) => {
  const dir = await tempDir(tt);
  const f = join(dir, 'svc.yaml');
  await writeFile(f, services(2));
  const src = new ManifestSource({ dir, watch: false, rescanIntervalMs: 0, maxFileBytes: 4096 });
  const errors: FileError[] = [];
  src.on('error', (e: FileError) => errors.push(e));
  await src.start();
  tt.teardown(() => src.stop());
  tt.equal(src.status().resources.find((r) => r.kind === 'Service')?.objects, 2);
  await writeFile(f, services(100));
  await src.rescan();
  tt.match(errors, [{ path: f, message: /^file is \d+(\.\d)? KiB, larger than the limit of 4 KiB \(split it into several files\); skipped$/ }]);
  tt.equal(src.status().resources.find((r) => r.kind === 'Service')?.objects, 2, 'the last good version stays');
});

t.test('10,000 documents parse in linear time', async (tt) => {
  const cpu = (n: number): number => {
    const text = services(n);
    const c0 = process.cpuUsage();
    const r = parseManifest('x.yaml', text);
    const c = process.cpuUsage(c0);
    if (!('objects' in r) || r.objects.length !== n) throw new Error(`expected ${n} objects`);
    return c.user + c.system;
  };
  cpu(500); // warm up the JIT
  const small = cpu(2000);
  const big = cpu(10_000);
  // 5× the documents: linear work costs ~5× the CPU, the former per-document scan from the start of the file ~25×.
  tt.ok(big / small < 12, `CPU ratio 10,000 / 2,000 documents = ${(big / small).toFixed(1)} (linear ≈ 5, quadratic ≈ 25)`);
  const err = parseManifest('x.yaml', `${services(10_000)}---\napiVersion: v1\nkind: Service\nmetadata: {namespace: x}\n`);
  tt.match(err, { error: { line: 130_001, message: 'Service without metadata.name' } }, 'the line of the last document');
});

t.test('a big file is parsed in slices: the event loop keeps running', async (tt) => {
  const dir = await tempDir(tt);
  await writeFile(join(dir, 'big.yaml'), services(10_000));
  const src = new ManifestSource({ dir, watch: false, rescanIntervalMs: 0 });
  let ticks = 0;
  const timer = setInterval(() => ticks++, 20);
  try {
    await withTimeout(src.start(), 110_000, 'the scan of 10,000 documents');
  } finally {
    clearInterval(timer);
  }
  tt.teardown(() => src.stop());
  tt.equal(src.status().resources.find((r) => r.kind === 'Service')?.objects, 10_000);
  tt.ok(ticks >= 5, `a 20 ms timer fired ${ticks} times during the parse`);
});

/** An alias bomb: 9 levels of 10 aliases, a billion strings once expanded. */
const ALIAS_BOMB = `apiVersion: v1
kind: ConfigMap
metadata: {name: lol}
data:
  a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol","lol"]
${Array.from({ length: 8 }, (_, i) => `  ${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [${Array(10).fill(`*${String.fromCharCode(97 + i)}`).join(',')}]`).join('\n')}
`;

// Issue 35 N1: "Excessive alias count" thrown by the YAML library ended the scan silently: every later file was
// ignored, and a VIP stayed announced after its only endpoint went unready.
t.test('an alias bomb is that file\'s error, with its line; the scan goes on and later edits act', async (tt) => {
  const dir = await tempDir(tt);
  await writeFile(join(dir, 'a-bomb.yaml'), `${NODE('n0')}---\n${ALIAS_BOMB}`);
  await writeFile(join(dir, 'z-node.yaml'), NODE('n1'));
  const src = new ManifestSource({ dir, watch: false, rescanIntervalMs: 0 });
  const errors: FileError[] = [];
  src.on('error', (e: FileError) => errors.push(e));
  await withTimeout(src.start(), 20_000, 'the first scan');
  tt.teardown(() => src.stop());
  tt.match(src.status().fileErrors, [{ path: join(dir, 'a-bomb.yaml'), line: 7, message: /^document not usable: Excessive alias count indicates a resource exhaustion attack/ }]);
  tt.equal(src.snapshot().node('n1')?.status?.conditions?.[0]?.status, 'True', 'the file after it is read');
  await writeFile(join(dir, 'z-node.yaml'), NODE('n1', 'False'));
  await withTimeout(src.rescan(), 20_000, 'a later scan');
  tt.equal(src.snapshot().node('n1')?.status?.conditions?.[0]?.status, 'False', 'and a later edit acts');
  tt.equal(errors.length, 1, 'reported once');
});

/** A `kind: List` of `n` Services in flow style, which the YAML library parses whole. */
const flowList = (n: number): string => `{apiVersion: v1, kind: List, items: [${Array.from({ length: n }, (_, i) => `{apiVersion: v1, kind: Service, metadata: {name: s${i}, namespace: big}, spec: {type: LoadBalancer, clusterIP: 10.96.${(i >> 8) & 255}.${i & 255}}}`).join(', ')}]}\n`;

// Issue 35 N2: one big document (a 2 MB List, a 4.4 MB EndpointSlice) ran the daemon out of memory (exit 134).
t.test('a file too big to parse in the memory left is refused, the others are read; JSON Lists take JSON.parse', async (tt) => {
  const dir = await tempDir(tt);
  await writeFile(join(dir, 'big.yaml'), flowList(8000));
  const items = Array.from({ length: 8000 }, (_, i) => ({ apiVersion: 'v1', kind: 'Service', metadata: { name: `j${i}`, namespace: 'big' }, spec: { type: 'LoadBalancer', clusterIP: `10.97.${(i >> 8) & 255}.${i & 255}` } }));
  await writeFile(join(dir, 'json.yaml'), JSON.stringify({ apiVersion: 'v1', kind: 'List', items }, null, 2));
  await writeFile(join(dir, 'n.yaml'), NODE('n1'));
  const limit = Math.round(process.memoryUsage.rss() / 1048576) + 32 + 48 + 40;
  const src = new ManifestSource({ dir, watch: false, rescanIntervalMs: 0, parseInWorkerBytes: 64 * 1024, env: { HERALD_MEMORY_LIMIT_MIB: String(limit) } });
  await withTimeout(src.start(), 120_000, 'the first scan');
  tt.teardown(() => src.stop());
  tt.match(src.status().fileErrors, [{ path: join(dir, 'big.yaml'), message: /^not parsed: this manifest file needs at least \d+ MiB to parse, more than this pod has free: the memory limit of \d+ MiB \(HERALD_MEMORY_LIMIT_MIB\) with \d+ MiB in use, which leaves a parse \d+ MiB \(split it into several files, or its kind: List into several documents, or raise the container's memory limit\)$/ }]);
  tt.equal(src.snapshot().node('n1')?.metadata?.name, 'n1', 'the small file is read');
  tt.equal([...src.snapshot().services()].filter((s) => s.metadata?.name?.startsWith('j')).length, 8000, `the JSON List of the same size (${Math.round(JSON.stringify(items).length / 1024)} KiB) is read`);
});
