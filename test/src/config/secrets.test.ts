// Secrets stay secret (issue 19): a password written inline by mistake is named, never shown — in `config check`,
// in the logs and in the unauthenticated GET /api/v1/status of a running Herald that rejects the reload — and a known
// placeholder admin token or MD5 password is warned about at start.
import t from 'tap';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { main } from '../../../src/cli/main.ts';
import { parseConfigText, validateConfig } from '../../../src/config/load.ts';
import { isPlaceholderSecret } from '../../../src/config/secrets.ts';
import { runDaemon } from '../../../src/daemon/run.ts';
import { freePort } from '../../helpers/bird.ts';

const SECRET = 'hunter2-Not-A-Placeholder';
const dir = mkdtempSync(join(tmpdir(), 'herald-secrets-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

class Buf {
  text = '';
  write(s: string) {
    this.text += s;
    return true;
  }
}

const inline = (extra: object = {}) => ({ bgp: { localAs: 65000, routerId: '10.0.0.1' }, peers: [{ name: 'r1', address: '192.0.2.1', peerAs: 65001, password: SECRET }], ...extra });

t.test('an inline password is named, never shown, by validation and config check', async (t) => {
  const r = validateConfig(inline());
  t.match(r, { ok: false, errors: [{ path: 'peers[0].password', message: /must be a mapping \{file: PATH\} or \{env: VARIABLE\}.*not shown/ }] });
  t.notMatch(JSON.stringify(r), SECRET);
  // other shapes of the same mistake: a number, a secret-looking field in a mapping, YAML that fails around it
  for (const text of [
    `bgp: {localAs: 65000, routerId: 10.0.0.1}\npeers: [{name: r1, address: 192.0.2.1, peerAs: 65001, password: 12345678912}]\n`,
    `bgp: {localAs: 65000, routerId: 10.0.0.1}\npeers: [{name: r1, address: 192.0.2.1, peerAs: 65001, password: {value: ${SECRET}}}]\n`,
    `bgp: {localAs: 65000, routerId: 10.0.0.1}\npeers: [{name: r1, address: 192.0.2.1, peerAs: 65001, password: "${SECRET}}]\n`,
    `bgp: {localAs: 65000, routerId: 10.0.0.1}\npeers:\n  - name: r1\n    password: ${SECRET}\n      bad: indent\n`,
  ]) {
    const e = parseConfigText(text);
    t.notOk(e.ok);
    t.notMatch(JSON.stringify(e), SECRET);
    t.notMatch(JSON.stringify(e), '12345678912');
  }
  const file = join(dir, 'inline.yaml');
  writeFileSync(file, stringify(inline()));
  for (const args of [['config', 'check', file], ['config', 'check', '--json', file]]) {
    const out = new Buf();
    const err = new Buf();
    t.equal(await main(args, { out, err, env: {} }), 1);
    t.match(out.text + err.text, /peers\[0\]\.password/);
    t.notMatch(out.text + err.text, SECRET, `${args.join(' ')}: not in the output`);
  }
});

t.test('a running Herald rejecting an inline password keeps it out of logs and GET /api/v1/status', async (t) => {
  const adminPort = await freePort('127.0.0.1');
  const configPath = join(dir, 'herald.yaml');
  const base = { bgp: { localAs: 65000, routerId: '10.0.0.1' }, admin: { address: '127.0.0.1', port: adminPort }, stateDir: join(dir, 'state'), logLevel: 'debug' };
  writeFileSync(configPath, stringify(base));
  const lines: string[] = [];
  let stop!: () => void;
  const stopSignal = new Promise<void>((resolve) => (stop = resolve));
  const running = runDaemon({ configPath, env: {}, stopSignal, watchIntervalMs: 0, logStream: { write: (l) => void lines.push(l) } });
  const api = `http://127.0.0.1:${adminPort}`;
  let status: { lastReload?: { ok: boolean; errors?: string[] } } | undefined;
  for (let i = 0; i < 200 && !status; i++) {
    status = await fetch(`${api}/api/v1/status`).then((r) => r.json() as Promise<typeof status>, () => undefined);
    if (!status) await new Promise((r) => setTimeout(r, 50));
  }
  t.ok(status, 'admin API up');
  writeFileSync(configPath, stringify({ ...base, peers: [{ name: 'r1', address: '192.0.2.1', peerAs: 65001, password: SECRET }] }));
  process.emit('SIGHUP', 'SIGHUP');
  for (let i = 0; i < 200 && status?.lastReload?.ok !== false; i++) {
    await new Promise((r) => setTimeout(r, 50));
    status = (await (await fetch(`${api}/api/v1/status`)).json()) as typeof status;
  }
  t.match(status?.lastReload, { ok: false, errors: [/peers\[0\]\.password: must be a mapping/] }, 'the reload is rejected, the field named');
  const views = await Promise.all(['/api/v1/status', '/readyz', '/healthz', '/api/v1/peers', '/metrics'].map((p) => fetch(`${api}${p}`).then((r) => r.text())));
  for (const v of views) t.notMatch(v, SECRET, 'not in the unauthenticated views');
  stop();
  t.equal(await running, 0);
  t.ok(lines.some((l) => l.includes('new configuration rejected')), 'the rejection is logged');
  t.notMatch(lines.join(''), SECRET, 'not in the logs');
});

t.test('known placeholder secrets are warned about at start, without their value', async (t) => {
  for (const p of ['change-me', 'Change_Me', 'changeme', 'change-me-too', 'password', 'secret', '', '  ', 'xxxxxxxx', '<token>', '${ADMIN_TOKEN}', '{{ token }}']) {
    t.ok(isPlaceholderSecret(p), `placeholder: ${JSON.stringify(p)}`);
  }
  for (const p of ['q7Fh2-kLw9x', 'Zm9vYmFyYmF6cXV4', SECRET]) t.notOk(isPlaceholderSecret(p), `not a placeholder: ${p}`);

  const adminPort = await freePort('127.0.0.1');
  const tokenFile = join(dir, 'token');
  writeFileSync(tokenFile, 'change-me-too\n');
  const pwFile = join(dir, 'pw');
  writeFileSync(pwFile, 'change-me\n');
  const configPath = join(dir, 'placeholders.yaml');
  writeFileSync(
    configPath,
    stringify({
      bgp: { localAs: 65000, routerId: '10.0.0.1' },
      admin: { address: '127.0.0.1', port: adminPort, tokenFile },
      stateDir: join(dir, 'state2'),
      // passive without a listener would be refused; a peer on a closed loopback port never connects
      peers: [
        { name: 'r1', address: '127.0.0.1', port: await freePort('127.0.0.1'), peerAs: 65001, password: { file: pwFile }, connectRetryTime: 60 },
        { name: 'r2', address: '127.0.0.2', port: await freePort('127.0.0.1'), peerAs: 65001, password: { env: 'R2_PW' }, connectRetryTime: 60 },
      ],
    }),
  );
  const lines: string[] = [];
  let stop!: () => void;
  const stopSignal = new Promise<void>((resolve) => (stop = resolve));
  const running = runDaemon({ configPath, env: { R2_PW: 'a-real-random-key-7f3d' }, stopSignal, watchIntervalMs: 0, logStream: { write: (l) => void lines.push(l) } });
  for (let i = 0; i < 200 && !lines.some((l) => l.includes('admin API listening')); i++) await new Promise((r) => setTimeout(r, 50));
  stop();
  t.equal(await running, 0);
  const warns = lines.map((l) => JSON.parse(l) as { level: number; msg: string; peer?: string; source?: string }).filter((l) => l.level === 40 && /placeholder/.test(l.msg));
  t.match(warns, [
    { msg: /admin API token is a known placeholder/, source: `admin.tokenFile ${tokenFile}` },
    { msg: /TCP MD5 password of this peer is a known placeholder/, peer: 'r1', source: `peers[0].password.file ${pwFile}` },
  ]);
  t.equal(warns.length, 2, 'the real key of r2 is not warned about');
  t.notMatch(lines.join(''), /change-me|a-real-random-key/, 'values are never logged');
});
