import t from 'tap';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadKubeConfig } from '../../../src/k8s/client.ts';

const kubeconfig = (server: string): string => `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "${server}", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`;

t.test('precedence: config path > KUBECONFIG > in-cluster', async (tt) => {
  const dir = await mkdtemp(join(tmpdir(), 'herald-kc-'));
  tt.teardown(() => rm(dir, { recursive: true, force: true }));
  const a = join(dir, 'a.yaml');
  const b = join(dir, 'b.yaml');
  await writeFile(a, kubeconfig('https://127.0.0.1:1111'));
  await writeFile(b, kubeconfig('https://127.0.0.1:2222'));
  const both = loadKubeConfig(a, { KUBECONFIG: b, KUBERNETES_SERVICE_HOST: '10.0.0.1', KUBERNETES_SERVICE_PORT: '443' });
  tt.equal(both.origin, 'config');
  tt.equal(both.kc.connection.server, 'https://127.0.0.1:1111');
  const env = loadKubeConfig(undefined, { KUBECONFIG: b, KUBERNETES_SERVICE_HOST: '10.0.0.1', KUBERNETES_SERVICE_PORT: '443' });
  tt.equal(env.origin, 'env');
  tt.equal(env.kc.connection.server, 'https://127.0.0.1:2222');
  tt.throws(() => loadKubeConfig(undefined, {}), /no kubeconfig: set source.kubernetes.kubeconfig or KUBECONFIG/);
  tt.throws(() => loadKubeConfig(join(dir, 'missing.yaml'), {}), /cannot load kubeconfig .*missing.yaml/);
});

t.test('in-cluster when nothing else is given', async (tt) => {
  const saved = { host: process.env.KUBERNETES_SERVICE_HOST, port: process.env.KUBERNETES_SERVICE_PORT };
  tt.teardown(() => {
    for (const [k, v] of [['KUBERNETES_SERVICE_HOST', saved.host], ['KUBERNETES_SERVICE_PORT', saved.port]] as const) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  });
  process.env.KUBERNETES_SERVICE_HOST = 'fd00::1';
  process.env.KUBERNETES_SERVICE_PORT = '6443';
  const r = loadKubeConfig(undefined, { KUBERNETES_SERVICE_HOST: 'fd00::1', KUBERNETES_SERVICE_PORT: '6443' });
  tt.equal(r.origin, 'in-cluster');
  tt.equal(r.kc.connection.server, 'https://[fd00::1]:6443');
});

t.test('close(): a request the apiserver never answers fails at once, and later requests are not sent (a stop never waits for the apiserver)', async (tt) => {
  const { createServer } = await import('node:http');
  const { KubeClient, KubeClientClosedError } = await import('../../../src/k8s/client.ts');
  let received = 0;
  const server = createServer(() => void received++); // accepts, never answers
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  tt.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const port = (server.address() as { port: number }).port;
  const kc = new KubeClient({ server: `http://127.0.0.1:${port}` });
  const pending = kc.request('GET', '/apis/coordination.k8s.io/v1/namespaces/herald-system/leases/herald-status', { timeoutMs: 60_000 });
  while (received === 0) await new Promise((r) => setTimeout(r, 10));
  const started = Date.now();
  kc.close();
  await tt.rejects(pending, /socket hang up|aborted/, 'the request in flight fails when the client closes');
  tt.ok(Date.now() - started < 10_000, 'at once, not after its 60 s timeout');
  await tt.rejects(kc.request('PUT', '/apis/coordination.k8s.io/v1/namespaces/herald-system/leases/herald-status', { body: {} }), KubeClientClosedError, 'a later request (a Lease release) is not sent');
  tt.equal(received, 1, 'nothing more reached the server');

  // A request waiting out a Retry-After (429) ends too, not after its wait.
  const busy = createServer((_req, res) => {
    res.writeHead(429, { 'Retry-After': '120', 'Content-Type': 'application/json' });
    res.end('{"kind":"Status","code":429}');
  });
  await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
  tt.teardown(() => new Promise<void>((resolve) => busy.close(() => resolve())));
  let retryAfter = 0;
  const kc2 = new KubeClient({ server: `http://127.0.0.1:${(busy.address() as { port: number }).port}` }, { observer: { onRetryAfter: () => void retryAfter++ } });
  const waiting = kc2.request('GET', '/api/v1/nodes');
  while (retryAfter === 0) await new Promise((r) => setTimeout(r, 10));
  const closedAt = Date.now();
  kc2.close();
  await tt.rejects(waiting, { name: 'AbortError' }, 'the Retry-After wait ends when the client closes');
  tt.ok(Date.now() - closedAt < 10_000, 'at once, not after 120 s');
});

t.test('an exec credential plugin: the connection delegates to @kubernetes/client-node, whose token each request carries', async (tt) => {
  const { createServer } = await import('node:http');
  const seen: (string | undefined)[] = [];
  const server = createServer((req, res) => {
    seen.push(req.headers.authorization);
    res.setHeader('Content-Type', 'application/json');
    res.end('{"kind":"Namespace"}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  tt.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const dir = await mkdtemp(join(tmpdir(), 'herald-kc-exec-'));
  tt.teardown(() => rm(dir, { recursive: true, force: true }));
  const file = join(dir, 'kubeconfig');
  const credential = JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status: { token: 'from-exec-plugin' } });
  await writeFile(
    file,
    `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "http://127.0.0.1:${(server.address() as { port: number }).port}", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: /bin/sh, args: ["-c", ${JSON.stringify(`echo '${credential}'`)}], interactiveMode: Never}}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`,
  );
  const { kc } = loadKubeConfig(file, {});
  tt.same(kc.connection.delegate, [file], 'the kubeconfig is handed to client-node (installed here; the image leaves it out and refuses it: test/deploy/image.test.ts)');
  tt.same(await kc.request('GET', '/api/v1/namespaces/default'), { kind: 'Namespace' });
  tt.same(seen, ['Bearer from-exec-plugin'], "the request carries the exec plugin's token");
  kc.close();
});
