// The Kubernetes client reads its files through the one bounded reader (src/files/read.ts; issue 35, item 1): a
// kubeconfig, a client certificate or a tokenFile that is a FIFO or /dev/zero is refused at once, naming the file and
// the fix (a plain read would hang the main thread on the FIFO, or fill the memory from /dev/zero); and a token file
// that cannot be read again keeps the last token read, reported to the observer.
import t from 'tap';
import type { Test } from 'tap';
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeClient, loadKubeConfig } from '../../../src/k8s/client.ts';

const kubeconfig = (server: string, user: string): string => `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "${server}"}}]
users: [{name: u, user: ${user}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`;

async function tempDir(t: Test): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'herald-kc-files-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** A FIFO nobody writes to: a blocking open or read of it never returns. */
function fifo(dir: string, name: string): string {
  const path = join(dir, name);
  execFileSync('mkfifo', [path]);
  return path;
}

t.test('a kubeconfig that is a FIFO or /dev/zero is refused at once, naming the file', async (t) => {
  const dir = await tempDir(t);
  const pipe = fifo(dir, 'kubeconfig');
  t.throws(() => loadKubeConfig(pipe, {}), new RegExp(`cannot load kubeconfig ${pipe}: kubeconfig ${pipe}: a FIFO \\(named pipe\\), not a regular file`));
  t.throws(() => loadKubeConfig(undefined, { KUBECONFIG: pipe }), /a FIFO \(named pipe\), not a regular file.*regular file the kubeconfig/);
  t.throws(() => loadKubeConfig('/dev/zero', {}), /cannot load kubeconfig \/dev\/zero: kubeconfig \/dev\/zero: a character device, not a regular file/);
  const big = join(dir, 'big.yaml');
  await writeFile(big, `# ${'x'.repeat(1024 * 1024)}\n${kubeconfig('https://127.0.0.1:1', '{token: t}')}`);
  t.throws(() => loadKubeConfig(big, {}), /kubeconfig .*big\.yaml: is 1(\.0)? MiB, larger than the limit of 1 MiB/);
});

t.test('a client certificate or key that is a FIFO or /dev/zero is refused at once, naming the field and the file', async (t) => {
  const dir = await tempDir(t);
  const pipe = fifo(dir, 'client.crt');
  const a = join(dir, 'a.yaml');
  await writeFile(a, kubeconfig('https://127.0.0.1:1', '{client-certificate: client.crt, client-key: /dev/zero}'));
  t.throws(() => loadKubeConfig(a, {}), new RegExp(`client-certificate ${pipe}: a FIFO \\(named pipe\\), not a regular file`), 'a relative path is read beside the kubeconfig, and refused');
  const b = join(dir, 'b.yaml');
  await writeFile(b, kubeconfig('https://127.0.0.1:1', '{client-certificate-data: eA==, client-key: /dev/zero}'));
  t.throws(() => loadKubeConfig(b, {}), /client-key \/dev\/zero: a character device, not a regular file/);
  const c = join(dir, 'c.yaml');
  await writeFile(c, `${kubeconfig('https://127.0.0.1:1', '{token: t}').replace('{server: ', '{certificate-authority: /dev/zero, server: ')}`);
  t.throws(() => loadKubeConfig(c, {}), /certificate-authority \/dev\/zero: a character device, not a regular file/);
});

/** An apiserver that answers `{}` and records each request's Authorization header. */
async function apiserver(t: Test): Promise<{ url: string; auth: (string | undefined)[] }> {
  const auth: (string | undefined)[] = [];
  const server = createServer((req, res) => {
    auth.push(req.headers.authorization);
    res.setHeader('Content-Type', 'application/json');
    res.end('{}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, auth };
}

t.test('a tokenFile that is a FIFO or /dev/zero: the request fails at once naming the file, nothing is sent', async (t) => {
  const dir = await tempDir(t);
  const api = await apiserver(t);
  for (const tokenFile of [fifo(dir, 'token'), '/dev/zero']) {
    const path = join(dir, 'kubeconfig');
    await writeFile(path, kubeconfig(api.url, `{tokenFile: ${tokenFile}}`));
    const { kc } = loadKubeConfig(path, {});
    t.teardown(() => kc.close());
    await t.rejects(kc.request('GET', '/api/v1/nodes'), new RegExp(`tokenFile ${tokenFile}: a (FIFO \\(named pipe\\)|character device), not a regular file`), `${tokenFile} is refused`);
  }
  t.same(api.auth, [], 'no request went out without its token');
});

t.test('a token file refused on a refresh keeps the last token read, and the error is reported', async (t) => {
  const dir = await tempDir(t);
  const api = await apiserver(t);
  const tokenFile = join(dir, 'token');
  await writeFile(tokenFile, 'first\n');
  const reported: string[] = [];
  const kc = new KubeClient({ server: api.url, tokenFile }, { observer: { onTokenFileError: (reason) => reported.push(reason) } });
  t.teardown(() => kc.close());
  await kc.request('GET', '/api/v1/nodes');
  t.same(api.auth, ['Bearer first']);
  // A minute later the file is too big to be a token (a plain read would take it): the last token is still sent.
  await writeFile(tokenFile, 'x'.repeat(64 * 1024 + 1));
  const realNow = Date.now;
  let offset = 61_000;
  Date.now = () => realNow() + offset;
  t.teardown(() => void (Date.now = realNow));
  await kc.request('GET', '/api/v1/nodes');
  t.same(api.auth, ['Bearer first', 'Bearer first'], 'the last token read is sent');
  t.equal(reported.length, 1, 'the refusal is reported');
  t.match(reported[0], new RegExp(`tokenFile ${tokenFile}: is 64(\\.0)? KiB, larger than the limit of 64 KiB`));
  // Once the file is readable again, the next refresh takes its token.
  await writeFile(tokenFile, 'second\n');
  offset = 2 * 61_000;
  await kc.request('GET', '/api/v1/nodes');
  t.same(api.auth, ['Bearer first', 'Bearer first', 'Bearer second'], 'the new token is read a minute later');
  t.equal(reported.length, 1, 'nothing more is reported');
});
