// Name mapping config/Kubernetes → bgp/, and bgp/ status → admin views; the restart state file.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { validateConfig } from '../../../src/config/load.ts';
import type { Config } from '../../../src/config/schema.ts';
import { desiredRoute, MappingError, resolvePassword, routeView, staticRoute } from '../../../src/daemon/mapping.ts';
import { errorView } from '../../../src/admin/peer-view.ts';
import { toSpeakerPeer } from '../../../src/config/peer-fields.ts';
import { readDrained, readRestartInfo, writeHeartbeat } from '../../../src/daemon/state.ts';
import { readSecretFiles } from '../../../src/config/secrets.ts';

function cfg(data: object): Config {
  const r = validateConfig({ bgp: { localAs: 65000, routerId: '10.0.0.1' }, ...data });
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return r.config;
}

t.test('config peer → speaker peer (RFC names, seconds)', async (t) => {
  const c = cfg({
    peers: [{ name: 'a', address: '192.0.2.1', peerAs: 65001, localAddress: '192.0.2.10', holdTime: 30, keepaliveTime: 10, ebgpMultihop: 2, nextHop: '192.0.2.11', nextHopV6: '2001:db8::1', gracefulRestart: { enabled: true, restartTime: 60 }, maxPrefixes: 10, families: ['ipv4-unicast'] }],
  });
  t.same(toSpeakerPeer(c.peers[0]!, 'pw'), {
    name: 'a',
    address: '192.0.2.1',
    port: 179,
    peerAs: 65001,
    holdTimeSec: 30,
    connectRetryTimeSec: 120,
    passive: false,
    ttlSecurity: false,
    families: ['ipv4-unicast'],
    gracefulRestart: { restartTimeSec: 60 },
    localAddress: '192.0.2.10',
    keepaliveTimeSec: 10,
    md5Password: 'pw',
    ebgpMultihop: 2,
    nextHopIPv4: '192.0.2.11',
    nextHopIPv6: '2001:db8::1',
    maxPrefixes: 10,
  });
  const plain = toSpeakerPeer(cfg({ peers: [{ name: 'b', address: '192.0.2.2', peerAs: 1 }] }).peers[0]!, undefined);
  t.equal(plain.gracefulRestart, false);
  t.notOk('md5Password' in plain);
});

t.test('passwords from file and environment', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'herald-pw-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'pw'), 's3cret\n');
  writeFileSync(join(dir, 'empty'), '');
  const c = cfg({ peers: [{ name: 'a', address: '192.0.2.1', peerAs: 1, password: { file: join(dir, 'pw') } }, { name: 'b', address: '192.0.2.2', peerAs: 1, password: { env: 'PW' } }, { name: 'c', address: '192.0.2.3', peerAs: 1, password: { file: join(dir, 'empty') } }] });
  const files = await readSecretFiles(c);
  t.equal(resolvePassword(c.peers[0]!, 0, {}, files), 's3cret');
  t.equal(resolvePassword(c.peers[1]!, 1, { PW: 'x' }, files), 'x');
  t.throws(() => resolvePassword(c.peers[1]!, 1, {}, files), MappingError);
  t.throws(() => resolvePassword(c.peers[2]!, 2, {}, files), /peers\[2\]\.password\.file: .*empty/);
  t.throws(() => resolvePassword(c.peers[0]!, 0, {}), /peers\[0\]\.password\.file: cannot read .*: not read yet/, 'nothing is read where the password is resolved');
});

// Issue 35 N4: password.file and admin.tokenFile went through a plain readFileSync: a FIFO hung the main thread for
// good, /dev/zero grew the heap by gigabytes. They are read by the bounded reader now: refused at once, the file named.
t.test('secret files: a FIFO, /dev/zero, a directory, a big file are refused at once, naming the fix', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'herald-pw-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  execFileSync('mkfifo', [join(dir, 'fifo')]);
  symlinkSync(join(dir, 'fifo'), join(dir, 'via-link'));
  writeFileSync(join(dir, 'big'), 'x'.repeat(70 * 1024));
  const peer = (name: string, file: string) => ({ name, address: `192.0.2.${name.length}`, peerAs: 1, password: { file } });
  const c = cfg({ peers: [peer('a', join(dir, 'fifo')), peer('bb', '/dev/zero'), peer('ccc', dir), peer('dddd', join(dir, 'big')), peer('eeeee', join(dir, 'via-link'))], admin: { tokenFile: join(dir, 'fifo') } });
  const t0 = performance.now();
  const files = await readSecretFiles(c);
  t.ok(performance.now() - t0 < 4000, 'no read waits for a writer (the read deadline is 5 s)');
  const problem = (i: number) => {
    try {
      resolvePassword(c.peers[i]!, i, {}, files);
    } catch (err) {
      return (err as Error).message;
    }
    return 'no error';
  };
  t.match(problem(0), /peers\[0\]\.password\.file: cannot read .*fifo: a FIFO \(named pipe\), not a regular file \(Herald reads only regular files/);
  t.match(problem(1), /peers\[1\]\.password\.file: cannot read \/dev\/zero: a character device, not a regular file/);
  t.match(problem(2), /peers\[2\]\.password\.file: cannot read .*: a directory, not a regular file/);
  t.match(problem(3), /peers\[3\]\.password\.file: cannot read .*big: is 70 KiB, larger than the limit of 64 KiB/);
  t.match(problem(4), /peers\[4\]\.password\.file: cannot read .*via-link: a FIFO/, 'a symlink to a FIFO too');
  t.match(files.get(join(dir, 'fifo')), { problem: /FIFO/ }, 'the admin token file likewise');
});

t.test('state files: a FIFO or a device in stateDir is refused without blocking', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'herald-state-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  execFileSync('mkfifo', [join(dir, 'state.json')]);
  symlinkSync('/dev/zero', join(dir, 'drain.json'));
  t.same(readRestartInfo(dir, 120, 1_000_000), { restarting: false }, 'a FIFO state file: not restarting, no hang');
  t.match(readDrained(dir), { drained: false, error: /drain\.json: a character device, not a regular file/ });
});

t.test('routes: static and desired → speaker routes; exported → views', async (t) => {
  const c = cfg({ routes: [{ prefix: '10.0.0.0/24', communities: ['no-export', '1:2', '1:2'], largeCommunities: ['1:2:3'], localPref: 200 }] });
  t.same(staticRoute(c.routes[0]!), { prefix: '10.0.0.0/24', family: 'ipv4-unicast', communities: [0xffffff01, 65538], largeCommunities: [[1, 2, 3]], localPref: 200 });
  t.same(desiredRoute({ prefix: '2001:db8::1/128', family: 'ipv6-unicast', peers: ['a'], communities: [], largeCommunities: [], services: ['ns/x'], advertisements: ['d'] }), { prefix: '2001:db8::1/128', family: 'ipv6-unicast', peers: ['a'] });
  t.same(desiredRoute({ prefix: '10.0.0.1/32', family: 'ipv4-unicast', peers: 'all', communities: ['65000:1'], largeCommunities: [], med: 3, services: [], advertisements: [] }), { prefix: '10.0.0.1/32', family: 'ipv4-unicast', communities: [65000 * 65536 + 1], med: 3 });
  t.same(routeView('p', { prefix: '10.0.0.0/24', family: 'ipv4-unicast', communities: [0xffff0000] }).communities, ['65535:0'], 'well-known communities in number form');
  t.same(routeView('p', { prefix: '10.0.0.0/24', family: 'ipv4-unicast', nextHop: '192.0.2.1', asPath: [65000], communities: [65538], largeCommunities: [[1, 2, 3]], origin: 2 }), {
    peer: 'p',
    prefix: '10.0.0.0/24',
    family: 'ipv4-unicast',
    nextHop: '192.0.2.1',
    origin: 'incomplete',
    asPath: [65000],
    communities: ['1:2'],
    largeCommunities: ['1:2:3'],
  });
});

t.test('state reasons → error views', async (t) => {
  t.same(errorView({ kind: 'notificationSent', code: 4, subcode: 0 }, 'T'), { kind: 'notificationSent', code: 4, subcode: 0, description: errorView({ kind: 'notificationSent', code: 4, subcode: 0 })?.description, at: 'T' });
  t.match(errorView({ kind: 'notificationReceived', code: 6, subcode: 2, text: 'bye' }), { code: 6, subcode: 2, description: /Cease/, message: 'bye' });
  t.same(errorView({ kind: 'transportError', message: 'ECONNREFUSED' }), { kind: 'transportError', message: 'ECONNREFUSED' });
  t.equal(errorView({ kind: 'started' }), undefined);
  t.equal(errorView(undefined), undefined);
});

t.test('restart detection from the state file', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'herald-state-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  t.same(readRestartInfo(dir, 120, 1_000_000), { restarting: false }, 'no file');
  writeHeartbeat(join(dir, 'sub'), 1_000_000);
  t.same(readRestartInfo(join(dir, 'sub'), 120, 1_000_000 + 119_000), { lastHeartbeatMs: 1_000_000, restarting: true });
  t.same(readRestartInfo(join(dir, 'sub'), 120, 1_000_000 + 121_000), { lastHeartbeatMs: 1_000_000, restarting: false }, 'outside the window');
  t.equal(readRestartInfo(join(dir, 'sub'), 0, 1_000_001).restarting, false, 'no graceful restart configured');
  writeFileSync(join(dir, 'state.json'), '{not json');
  t.same(readRestartInfo(dir, 120, 0), { restarting: false }, 'malformed file');
});
