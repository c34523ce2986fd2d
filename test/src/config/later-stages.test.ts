// What the encoder, the session or the controller would refuse is refused by `herald config check` with the field
// named (issue 19): IPv6 zone ids, a zero BGP Identifier, unbounded or absurd durations, communities that do not fit
// one UPDATE, TCP MD5 keys longer than Linux takes. Each case runs the real CLI in-process on a file.
import t from 'tap';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { validateRoute } from '../../../bgp/rib/route-table.ts';
import { MAX_COMMUNITY_OCTETS as SPEAKER_MAX_COMMUNITY_OCTETS } from '../../../bgp/rib/route.ts';
import { main } from '../../../src/cli/main.ts';
import { MAX_COMMUNITY_OCTETS } from '../../../src/config/schema.ts';
import { TCP_MD5_MAX_KEY_OCTETS } from '../../../src/config/secrets.ts';
import { staticRoute } from '../../../src/daemon/mapping.ts';
import { validateConfig } from '../../../src/config/load.ts';

const dir = mkdtempSync(join(tmpdir(), 'herald-later-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

class Buf {
  text = '';
  write(s: string) {
    this.text += s;
    return true;
  }
}

let n = 0;
/** `herald config check` on `text` (YAML): exit code, stdout, stderr. */
async function check(text: string, env: NodeJS.ProcessEnv = {}): Promise<{ code: number; out: string; err: string }> {
  const file = join(dir, `c${n++}.yaml`);
  writeFileSync(file, text);
  const out = new Buf();
  const err = new Buf();
  const code = await main(['config', 'check', file], { out, err, env });
  return { code, out: out.text, err: err.text };
}

const base = { bgp: { localAs: 65000, routerId: '10.0.0.1' } };
const peer = (extra: object) => ({ name: 'r1', address: '192.0.2.1', peerAs: 65001, ...extra });
const v6peer = (extra: object) => ({ name: 'r6', address: '2001:db8::2', peerAs: 65001, ...extra });

t.test('IPv6 zone ids are refused in every address field, named', async (t) => {
  const cases: [string, object, string][] = [
    ['peer nextHopV6', { peers: [peer({ nextHopV6: 'fe80::1%eth0' })] }, 'peers[0].nextHopV6'],
    ['peer address', { peers: [v6peer({ address: 'fe80::2%eth0' })] }, 'peers[0].address'],
    ['peer localAddress', { peers: [v6peer({ localAddress: 'fe80::1%eth0' })] }, 'peers[0].localAddress'],
    ['route nextHop', { routes: [{ prefix: '2001:db8:1::/48', nextHop: '2001:db8::1%eth0' }] }, 'routes[0].nextHop'],
    ['listen address', { bgp: { ...base.bgp, listen: { address: 'fe80::1%2' } } }, 'bgp.listen.address'],
    ['admin address', { admin: { address: 'fe80::1%lo' } }, 'admin.address'],
    ['node ip', { node: { ip: 'fe80::1%eth0' } }, 'node.ip'],
    ['health check host', { routes: [{ prefix: '10.0.0.1/32', healthCheck: { port: 80, host: 'fe80::1%eth0' } }] }, 'routes[0].healthCheck.host'],
    ['route prefix', { routes: [{ prefix: 'fe80::%eth0/64' }] }, 'routes[0].prefix'],
  ];
  for (const [what, extra, path] of cases) {
    const r = await check(stringify({ ...base, ...extra }));
    t.equal(r.code, 1, `${what}: config check fails`);
    t.match(r.err, new RegExp(`${path.replace(/[[\].]/g, '\\$&')}: must be an IP(v6)? address|${path.replace(/[[\].]/g, '\\$&')}: must be a CIDR`), `${what}: names ${path}`);
  }
  const r = await check(stringify({ ...base, peers: [peer({ nextHopV6: 'fe80::1%eth0' })] }));
  t.match(r.err, /peers\[0\]\.nextHopV6: must be an IPv6 address without a zone id \("%eth0"\)/, 'says why');
});

t.test('a zero BGP Identifier is refused', async (t) => {
  const r = await check(stringify({ bgp: { localAs: 65000, routerId: '0.0.0.0' } }));
  t.equal(r.code, 1);
  t.match(r.err, /bgp\.routerId: must not be 0\.0\.0\.0/);
});

t.test('durations: over the RFC range, negative, NaN, infinite or absurd are refused, named', async (t) => {
  const cases: [string, string, RegExp][] = [
    ['holdTime 65536', 'peers: [{name: r1, address: 192.0.2.1, peerAs: 65001, holdTime: 65536}]', /peers\[0\]\.holdTime: must be 0 or 3\.\.65535/],
    ['holdTime -3', 'peers: [{name: r1, address: 192.0.2.1, peerAs: 65001, holdTime: -3}]', /peers\[0\]\.holdTime: must be 0 or 3\.\.65535/],
    ['holdTime .nan', 'peers: [{name: r1, address: 192.0.2.1, peerAs: 65001, holdTime: .nan}]', /peers\[0\]\.holdTime: must be 0 or 3\.\.65535/],
    ['keepaliveTime 70000', 'peers: [{name: r1, address: 192.0.2.1, peerAs: 65001, holdTime: 0, keepaliveTime: 70000}]', /peers\[0\]\.keepaliveTime: must be an integer number of seconds 1\.\.65535/],
    ['connectRetryTime 1e9', 'peers: [{name: r1, address: 192.0.2.1, peerAs: 65001, connectRetryTime: 1000000000}]', /peers\[0\]\.connectRetryTime: must be an integer number of seconds 1\.\.65535/],
    ['waitTime 1e6', 'peers: [{name: r1, address: 192.0.2.1, peerAs: 65001, gracefulShutdown: {enabled: true, waitTime: 1000000}}]', /peers\[0\]\.gracefulShutdown\.waitTime: must be at most 3600/],
    ['interval .inf', 'healthChecks: {interval: .inf}', /healthChecks\.interval: must be a number of seconds/],
    ['interval 1e9', 'healthChecks: {interval: 1000000000, timeout: 2}', /healthChecks\.interval: must be at most 3600/],
    ['timeout -1', 'routes: [{prefix: 10.0.0.1/32, healthCheck: {port: 80, timeout: -1}}]', /routes\[0\]\.healthCheck\.timeout: must be > 0/],
    ['rise 1e6', 'healthChecks: {rise: 1000000}', /healthChecks\.rise: must be an integer 1\.\.100/],
    ['halfLife 1e12', 'flapControl: {halfLife: 1000000000000}', /flapControl\.halfLife: must be at most 86400/],
    ['holdDown .nan', 'flapControl: {holdDown: .nan}', /flapControl\.holdDown: must be a number of seconds/],
    ['restartTime 5000', 'peers: [{name: r1, address: 192.0.2.1, peerAs: 65001, gracefulRestart: {enabled: true, restartTime: 5000}}]', /gracefulRestart\.restartTime: must be 0\.\.4095/],
  ];
  for (const [what, yaml, re] of cases) {
    const r = await check(`bgp: {localAs: 65000, routerId: 10.0.0.1}\n${yaml}\n`);
    t.equal(r.code, 1, `${what}: config check fails`);
    t.match(r.err, re, `${what}: ${r.err.split('\n')[1] ?? r.err}`);
  }
});

t.test('bounded integers of an advertisement: out of range or a fraction is refused with the range named', async (t) => {
  const cases: [object, string][] = [
    [{ serviceAttributes: { maxPrepend: 11 } }, 'advertisements[0].serviceAttributes.maxPrepend: must be an integer 0..10'],
    [{ serviceAttributes: { maxPrepend: -1 } }, 'advertisements[0].serviceAttributes.maxPrepend: must be an integer 0..10'],
    [{ locality: { prependOthers: 0 } }, 'advertisements[0].locality.prependOthers: must be an integer 1..10'],
    [{ locality: { prependOthers: 1.5 } }, 'advertisements[0].locality.prependOthers: must be an integer 1..10'],
    [{ maxNodesPerVip: 10001 }, 'advertisements[0].maxNodesPerVip: must be an integer 1..10000'],
    [{ maxNodesPerVip: '3' }, 'advertisements[0].maxNodesPerVip: must be an integer 1..10000'],
  ];
  for (const [fields, message] of cases) {
    const r = validateConfig({ ...base, advertisements: [{ name: 'a', ...fields }] });
    t.same(r.ok ? [] : r.errors.map((e) => `${e.path}: ${e.message}`), [message], JSON.stringify(fields));
  }
  for (const fields of [{ serviceAttributes: { maxPrepend: 0 } }, { locality: { prependOthers: 10 } }, { maxNodesPerVip: 10000 }]) {
    t.ok(validateConfig({ ...base, advertisements: [{ name: 'a', ...fields }] }).ok, `${JSON.stringify(fields)} is valid`);
  }
});

t.test('communities that do not fit one UPDATE are refused (the speaker would refuse the route)', async (t) => {
  t.equal(MAX_COMMUNITY_OCTETS, SPEAKER_MAX_COMMUNITY_OCTETS, 'the schema uses the speaker\'s limit');
  const many = Array.from({ length: 951 }, (_, i) => `65000:${i}`);
  const ok = Array.from({ length: 950 }, (_, i) => `65000:${i}`);
  const r = await check(stringify({ ...base, routes: [{ prefix: '10.0.0.1/32', communities: many }, { prefix: '10.0.0.2/32', communities: ok }] }));
  t.equal(r.code, 1);
  t.match(r.err, /routes\[0\]\.communities: communities take 3804 octets/);
  t.notMatch(r.err, /routes\[1\]/, '950 distinct communities fit');
  const adv = await check(stringify({ ...base, advertisements: [{ name: 'x', largeCommunities: Array.from({ length: 317 }, (_, i) => `1:2:${i}`) }] }));
  t.match(adv.err, /advertisements\[0\]\.largeCommunities: communities take 3804 octets/);
  const ext = await check(stringify({ ...base, routes: [{ prefix: '10.0.0.3/32', extendedCommunities: Array.from({ length: 476 }, (_, i) => `rt:65000:${i}`) }] }));
  t.match(ext.err, /routes\[0\]\.extendedCommunities: communities take 3808 octets/, 'extended communities count 8 octets each');
  // The boundary is the speaker's: the route the schema accepts is one the speaker accepts, and one more is not.
  const accepted = validateConfig({ ...base, routes: [{ prefix: '10.0.0.2/32', communities: ok }] });
  t.ok(accepted.ok);
  if (accepted.ok) t.doesNotThrow(() => validateRoute(staticRoute(accepted.config.routes[0]!)));
  const refused = validateConfig({ ...base, routes: [{ prefix: '10.0.0.1/32', communities: many }] }, { fastPath: false });
  t.notOk(refused.ok);
  t.throws(() => validateRoute(staticRoute({ prefix: '10.0.0.1/32', communities: many })), /communities take/);
});

t.test('a TCP MD5 key longer than Linux takes is refused where it is read (config check warns, names the source)', async (t) => {
  const key = 'k'.repeat(TCP_MD5_MAX_KEY_OCTETS + 1);
  const file = join(dir, 'md5');
  writeFileSync(file, `${key}\n`);
  const r = await check(stringify({ ...base, peers: [peer({ password: { file } }), { ...peer({ password: { env: 'R2_PW' } }), name: 'r2', address: '192.0.2.2' }] }), { R2_PW: key });
  t.equal(r.code, 0, 'the file itself is valid');
  t.match(r.err, /peers\[0\]\.password\.file: .*md5: the password is 81 octets; Linux takes at most 80/);
  t.match(r.err, /peers\[1\]\.password\.env: environment variable R2_PW: the password is 81 octets/);
  t.notMatch(r.err, new RegExp(key), 'the key is not shown');
  writeFileSync(file, 'k'.repeat(TCP_MD5_MAX_KEY_OCTETS));
  const okKey = await check(stringify({ ...base, peers: [peer({ password: { file } })] }));
  t.equal(okKey.err, '', '80 octets are fine');
});
