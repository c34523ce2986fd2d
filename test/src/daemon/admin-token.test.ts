// The admin token is optional (deploy/kubernetes/daemonset.yaml mounts its Secret with optional: true): `herald run`
// whose admin.tokenFile is not there (the Secret was not created) starts, serves every read and the probes, refuses
// the mutating calls with the reason, and says so once in its log.
import t from 'tap';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { runDaemon } from '../../../src/daemon/run.ts';
import { freePort } from '../../helpers/bird.ts';

const dir = mkdtempSync(join(tmpdir(), 'herald-admin-token-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

t.test('no admin token Secret: the daemon starts, reads work, drain is refused with the reason', async (t) => {
  const port = await freePort('127.0.0.1');
  // The optional Secret's mount point, empty: the Secret does not exist.
  mkdirSync(join(dir, 'admin'));
  const configPath = join(dir, 'herald.yaml');
  writeFileSync(configPath, stringify({ bgp: { localAs: 65000, routerId: '10.0.0.1' }, routes: [{ prefix: '192.0.2.1/32' }], admin: { address: '127.0.0.1', port, tokenFile: join(dir, 'admin', 'token') }, stateDir: join(dir, 'state'), logLevel: 'info' }));
  const lines: Record<string, unknown>[] = [];
  let stop!: () => void;
  const running = runDaemon({ configPath, env: {}, stopSignal: new Promise<void>((r) => (stop = r)), watchIntervalMs: 0, logStream: { write: (l: string) => void lines.push(JSON.parse(l) as Record<string, unknown>) } });
  const api = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  let ready = false;
  while (!ready && Date.now() < deadline) {
    ready = (await fetch(`${api}/readyz`).catch(() => undefined))?.status === 200;
    if (!ready) await new Promise((r) => setTimeout(r, 100));
  }
  t.ok(ready, 'ready without the token');
  t.equal((await fetch(`${api}/api/v1/status`)).status, 200, 'reads are served');
  const drain = await fetch(`${api}/api/v1/drain`, { method: 'POST', headers: { authorization: 'Bearer anything' } });
  t.equal(drain.status, 401, 'a drain is refused');
  t.match(await drain.json(), { message: /mutating endpoints are disabled: no admin token configured/ });
  t.equal(lines.filter((l) => l['msg'] === 'cannot read admin token file: mutating endpoints disabled').length, 1, 'said once in the log');
  stop();
  t.equal(await running, 0);
});
