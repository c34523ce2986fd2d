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
