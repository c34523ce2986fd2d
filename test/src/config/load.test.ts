// Config validation: every error names the path of the bad field; defaults; examples validate.
import t from 'tap';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseDocument } from 'yaml';
import { ConfigError, loadConfigFile, metricsListener, parseConfigText, resolveIdentity, validateConfig } from '../../../src/config/load.ts';
import type { ConfigIssue } from '../../../src/config/schema.ts';

const ROOT = new URL('../../../', import.meta.url).pathname;
const base = { bgp: { localAs: 65000, routerId: '10.0.0.1' } };

function errors(data: unknown): ConfigIssue[] {
  const r = validateConfig(data);
  if (r.ok) throw new Error('expected the config to be rejected');
  return r.errors;
}
function paths(data: unknown): string[] {
  return errors(data).map((e) => e.path);
}

t.test('minimal config gets every default', async (t) => {
  const r = validateConfig(base);
  t.ok(r.ok);
  if (!r.ok) return;
  t.same(r.config.peers, []);
  t.same(r.config.routes, []);
  t.same(r.config.admin, { address: '127.0.0.1', port: 9179 });
  t.equal(r.config.stateDir, '/var/lib/herald');
  t.same(r.config.healthChecks, { interval: 5, timeout: 2, rise: 2, fall: 3 });
  t.equal(r.config.flapControl.holdDown, 10);
  t.equal(r.config.kubeProxy.healthzPort, 10256);
  const p = validateConfig({ ...base, peers: [{ name: 'a', address: '192.0.2.1', peerAs: 65001 }] });
  t.ok(p.ok);
  if (p.ok) {
    t.match(p.config.peers[0], { port: 179, holdTime: 90, connectRetryTime: 120, passive: false, ttlSecurity: false, families: ['ipv4-unicast', 'ipv6-unicast'] });
  }
});

t.test('structural errors: each names the path of the bad field', async (t) => {
  const cases: [string, unknown, string, RegExp][] = [
    ['holdTime 1', { peers: [{ name: 'a', address: '192.0.2.1', peerAs: 1 }, { name: 'b', address: '192.0.2.2', peerAs: 1, holdTime: 1 }] }, 'peers[1].holdTime', /must be 0 or 3\.\.65535/],
    ['holdTime 65536', { peers: [{ name: 'a', address: '192.0.2.1', peerAs: 1, holdTime: 65536 }] }, 'peers[0].holdTime', /0 or 3\.\.65535/],
    ['peerAs missing', { peers: [{ name: 'a', address: '192.0.2.1' }] }, 'peers[0].peerAs', /^required$/],
    ['peerAs 0', { peers: [{ name: 'a', address: '192.0.2.1', peerAs: 0 }] }, 'peers[0].peerAs', /AS number/],
    ['peerAs AS_TRANS', { peers: [{ name: 'a', address: '192.0.2.1', peerAs: 23456 }] }, 'peers[0].peerAs', /must not be 23456: AS_TRANS/],
    ['peerAs too big', { peers: [{ name: 'a', address: '192.0.2.1', peerAs: 4294967296 }] }, 'peers[0].peerAs', /AS number/],
    ['address not IP', { peers: [{ name: 'a', address: 'router1', peerAs: 1 }] }, 'peers[0].address', /IP address/],
    ['bad name', { peers: [{ name: 'a b', address: '192.0.2.1', peerAs: 1 }] }, 'peers[0].name', /letters, digits/],
    ['port 0', { peers: [{ name: 'a', address: '192.0.2.1', peerAs: 1, port: 0 }] }, 'peers[0].port', /TCP port/],
    ['unknown peer field', { peers: [{ name: 'a', address: '192.0.2.1', peerAs: 1, holdtime: 9 }] }, 'peers[0].holdtime', /unknown field/],
    ['password both', { peers: [{ name: 'a', address: '192.0.2.1', peerAs: 1, password: { file: '/x', env: 'X' } }] }, 'peers[0].password', /exactly one of file or env/],
    ['password none', { peers: [{ name: 'a', address: '192.0.2.1', peerAs: 1, password: {} }] }, 'peers[0].password', /exactly one/],
    ['ebgpMultihop 256', { peers: [{ name: 'a', address: '192.0.2.1', peerAs: 1, ebgpMultihop: 256 }] }, 'peers[0].ebgpMultihop', /TTL/],
    ['bad family', { peers: [{ name: 'a', address: '192.0.2.1', peerAs: 1, families: ['ipv4-multicast'] }] }, 'peers[0].families[0]', /ipv4-unicast or ipv6-unicast/],
    ['empty families', { peers: [{ name: 'a', address: '192.0.2.1', peerAs: 1, families: [] }] }, 'peers[0].families', /at least one/],
    ['nextHop v6 in v4 field', { peers: [{ name: 'a', address: '192.0.2.1', peerAs: 1, nextHop: '2001:db8::1' }] }, 'peers[0].nextHop', /IPv4/],
    ['nextHopV6 v4', { peers: [{ name: 'a', address: '192.0.2.1', peerAs: 1, nextHopV6: '192.0.2.1' }] }, 'peers[0].nextHopV6', /IPv6/],
    ['restartTime 4096', { peers: [{ name: 'a', address: '192.0.2.1', peerAs: 1, gracefulRestart: { enabled: true, restartTime: 4096 } }] }, 'peers[0].gracefulRestart.restartTime', /0\.\.4095/],
    ['waitTime negative', { peers: [{ name: 'a', address: '192.0.2.1', peerAs: 1, gracefulShutdown: { enabled: true, waitTime: -1 } }] }, 'peers[0].gracefulShutdown.waitTime', />= 0/],
    ['maxPrefixes 0', { peers: [{ name: 'a', address: '192.0.2.1', peerAs: 1, maxPrefixes: 0 }] }, 'peers[0].maxPrefixes', /positive integer/],
    ['selector operator', { peers: [{ name: 'a', address: '192.0.2.1', peerAs: 1, nodeSelector: { matchExpressions: [{ key: 'k', operator: 'Has' }] } }] }, 'peers[0].nodeSelector.matchExpressions[0].operator', /must be one of/],
    ['route prefix', { routes: [{ prefix: '10.0.0.0/33' }] }, 'routes[0].prefix', /CIDR/],
    ['route community', { routes: [{ prefix: '10.0.0.0/24', communities: ['65536:1'] }] }, 'routes[0].communities[0]', /community/],
    ['route large community', { routes: [{ prefix: '10.0.0.0/24', largeCommunities: ['1:2'] }] }, 'routes[0].largeCommunities[0]', /large community/],
    ['route med', { routes: [{ prefix: '10.0.0.0/24', med: -1 }] }, 'routes[0].med', /MED/],
    ['route health port', { routes: [{ prefix: '10.0.0.0/24', healthCheck: { kind: 'tcp' } }] }, 'routes[0].healthCheck.port', /required/],
    ['route health kind', { routes: [{ prefix: '10.0.0.0/24', healthCheck: { kind: 'icmp', port: 1 } }] }, 'routes[0].healthCheck.kind', /must be one of/],
    ['source both', { source: { kubernetes: {}, manifests: '/x' } }, 'source', /exactly one/],
    ['source none', { source: {} }, 'source', /exactly one/],
    ['admin port', { admin: { port: 70000 } }, 'admin.port', /<= 65535/],
    ['admin address', { admin: { address: 'localhost' } }, 'admin.address', /IP address/],
    ['interval 0', { healthChecks: { interval: 0 } }, 'healthChecks.interval', /> 0/],
    ['rise 0', { healthChecks: { rise: 0 } }, 'healthChecks.rise', /integer 1\.\.100/],
    ['pool range', { pools: [{ name: 'p', addresses: ['10.0.0.1-2001:db8::1'] }] }, 'pools[0].addresses[0]', /CIDR or a range/],
    ['logLevel', { logLevel: 'loud' }, 'logLevel', /must be one of/],
    ['unknown top-level', { peerz: [] }, 'peerz', /unknown field/],
    ['peers not a list', { peers: { name: 'a' } }, 'peers', /expected a list, got a mapping/],
    ['advertisement kind', { advertisements: [{ name: 'x', addressKinds: ['nodeIP'] }] }, 'advertisements[0].addressKinds[0]', /must be one of/],
    ['aggregationLength', { advertisements: [{ name: 'x', aggregationLength: 33 }] }, 'advertisements[0].aggregationLength', /<= 32/],
  ];
  for (const [name, extra, path, msg] of cases) {
    const errs = errors({ ...base, ...(extra as object) });
    const hit = errs.find((e) => e.path === path);
    t.ok(hit, `${name}: error at ${path} (got ${JSON.stringify(errs)})`);
    if (hit) t.match(hit.message, msg, `${name}: message`);
  }
});

t.test('bgp section errors', async (t) => {
  t.same(paths({}), ['bgp']);
  t.match(errors({ bgp: { localAs: 'x' } })[0], { path: 'bgp.localAs', message: /AS number/ });
  t.match(errors({ bgp: { localAs: 23456, routerId: '10.0.0.1' } })[0], { path: 'bgp.localAs', message: /AS_TRANS \(RFC 6793\).*use the real AS number/ }, 'AS_TRANS (issue 35)');
  t.match(errors({ bgp: { localAs: 1, routerId: '2001:db8::1' } })[0], { path: 'bgp.routerId', message: /IPv4/ });
  t.match(errors({ bgp: { localAs: 1, listen: { port: 'x' } } })[0], { path: 'bgp.listen.port' });
});

t.test('every structural error is reported at once', async (t) => {
  const p = paths({
    bgp: { localAs: 0 },
    peers: [{ name: 'a', address: 'x', peerAs: 1, holdTime: 2 }],
    routes: [{ prefix: 'nope' }],
    admin: { port: -1 },
  });
  t.same(p.sort(), ['admin.port', 'bgp.localAs', 'peers[0].address', 'peers[0].holdTime', 'routes[0].prefix']);
});

t.test('cross-field errors', async (t) => {
  const peer = (name: string, address: string, extra: object = {}) => ({ name, address, peerAs: 65001, ...extra });
  const errs = errors({
    ...base,
    peers: [
      peer('a', '192.0.2.1'),
      peer('a', '192.0.2.2'),
      peer('c', '192.0.2.1'),
      peer('d', '192.0.2.4', { keepaliveTime: 90 }),
      peer('e', '192.0.2.5', { passive: true }),
      peer('f', '192.0.2.6', { localAddress: '2001:db8::1' }),
      peer('g', '192.0.2.7', { ebgpMultihop: 2, ttlSecurity: true }),
      { name: 'h', address: '192.0.2.8', peerAs: 65000, ebgpMultihop: 2 },
      peer('i', '192.0.2.9', { families: ['ipv4-unicast', 'ipv4-unicast'] }),
    ],
    routes: [{ prefix: '10.0.0.1/32', peers: ['a', 'zz'] }, { prefix: '10.0.0.1/32' }, { prefix: '10.0.0.2/32', nextHop: '2001:db8::1' }],
    advertisements: [{ name: 'x', peers: ['nope'] }, { name: 'x' }],
    flapControl: { suppressThreshold: 500 },
    healthChecks: { interval: 1, timeout: 2 },
  });
  const by = Object.fromEntries(errs.map((e) => [e.path, e.message]));
  t.match(by['peers[1].name'], /duplicate peer name "a" \(also peers\[0\]\)/);
  t.match(by['peers[2].address'], /duplicate peer address 192\.0\.2\.1 port 179/);
  t.match(by['peers[3].keepaliveTime'], /below holdTime/);
  t.match(by['peers[4].passive'], /needs bgp\.listen/);
  t.match(by['peers[5].localAddress'], /same address family/);
  t.match(by['peers[6].ttlSecurity'], /ebgpMultihop/);
  t.match(by['peers[7].ebgpMultihop'], /eBGP peers only/);
  t.match(by['peers[8].families'], /twice/);
  t.match(by['routes[0].peers[1]'], /unknown peer "zz"/);
  t.notOk(by['routes[0].peers[0]']);
  t.match(by['routes[1].prefix'], /duplicate route 10\.0\.0\.1\/32/);
  t.match(by['routes[2].nextHop'], /IPv4 address/);
  t.match(by['advertisements[0].peers[0]'], /unknown peer "nope"/);
  t.match(by['advertisements[1].name'], /duplicate advertisement/);
  t.match(by['flapControl.suppressThreshold'], /above reuseThreshold/);
  t.match(by['healthChecks.timeout'], /exceed interval/);
  t.equal(errs.length, 15);
});

t.test('what run rejects or ignores is an error here too', async (t) => {
  const peer = (name: string, address: string, extra: object = {}) => ({ name, address, peerAs: 65001, ...extra });
  const hc = (extra: object) => ({ port: 80, ...extra });
  const errs = errors({
    ...base,
    peers: [peer('a', '192.0.2.1', { nextHop: '0.0.0.0' }), peer('b', '192.0.2.2', { nextHop: '239.1.2.3', nextHopV6: '::' }), peer('c', '192.0.2.3', { nextHopV6: 'fe80::1' }), peer('ok', '192.0.2.4', { nextHop: '127.0.0.2', nextHopV6: '2001:db8::1' })],
    routes: [
      { prefix: '10.1.0.1/24' },
      { prefix: '2001:db8::1/64' },
      { prefix: '10.2.0.0/32', nextHop: '255.255.255.255' },
      { prefix: '10.3.0.0/32', nextHop: 'ff02::1' },
      { prefix: '2001:db8:1::/48', nextHop: 'ff02::1' },
      { prefix: '10.4.0.0/32', healthCheck: hc({ timeout: 10 }) },
      { prefix: '10.5.0.0/32', healthCheck: hc({ interval: 1 }) },
      { prefix: '10.6.0.0/32', healthCheck: hc({ path: '/healthz', expectedStatus: [200] }) },
      { prefix: '10.7.0.0/32', healthCheck: hc({ kind: 'http', path: '/healthz', interval: 3, timeout: 3 }) },
    ],
    serviceCIDRs: ['10.96.0.1/12'],
    pools: [{ name: 'p', addresses: ['10.0.0.5-10.0.0.1', '10.0.0.1-10.0.0.5', '2001:db8::9-2001:db8::2', '192.168.1.7/24'] }],
  });
  const by = Object.fromEntries(errs.map((e) => [e.path, e.message]));
  t.match(by['peers[0].nextHop'], /0\.0\.0\.0 is the unspecified address/);
  t.match(by['peers[1].nextHop'], /239\.1\.2\.3 is a multicast address/);
  t.match(by['peers[1].nextHopV6'], /:: is the unspecified address/);
  t.match(by['peers[2].nextHopV6'], /fe80::1 is an IPv6 link-local address/);
  t.equal(by['routes[0].prefix'], 'host bits set; did you mean 10.1.0.0/24?');
  t.equal(by['routes[1].prefix'], 'host bits set; did you mean 2001:db8::/64?');
  t.match(by['routes[2].nextHop'], /broadcast address/);
  t.match(by['routes[3].nextHop'], /IPv4 address/, 'family mismatch reported, not twice');
  t.match(by['routes[4].nextHop'], /ff02::1 is a multicast address/);
  t.equal(by['routes[5].healthCheck.timeout'], 'effective timeout 10 s (this check) must not exceed the effective interval 5 s (healthChecks.interval)');
  t.equal(by['routes[6].healthCheck.interval'], 'effective timeout 2 s (healthChecks.timeout) must not exceed the effective interval 1 s (this check)');
  t.match(by['routes[7].healthCheck.path'], /only for kind http\/https/);
  t.match(by['routes[7].healthCheck.expectedStatus'], /only for kind http\/https/);
  t.equal(by['serviceCIDRs[0]'], 'host bits set; did you mean 10.96.0.0/12?');
  t.match(by['pools[0].addresses[0]'], /range is reversed: 10\.0\.0\.5 comes after 10\.0\.0\.1/);
  t.match(by['pools[0].addresses[2]'], /range is reversed/);
  t.equal(by['pools[0].addresses[3]'], 'host bits set; did you mean 192.168.1.0/24?');
  t.equal(errs.length, 17, errs.map((e) => `${e.path}: ${e.message}`).join('\n'));
});

t.test('allowedPrefixes: CIDRs without host bits, at the top level and on an advertisement', async (t) => {
  const structure = Object.fromEntries(errors({ ...base, allowedPrefixes: ['10.0.0.0/40'], advertisements: [{ name: 'a', allowedPrefixes: ['x'] }] }).map((e) => [e.path, e.message]));
  t.match(structure['allowedPrefixes[0]'], /must be a CIDR prefix/);
  t.match(structure['advertisements[0].allowedPrefixes[0]'], /must be a CIDR prefix/);
  const by = Object.fromEntries(errors({ ...base, allowedPrefixes: ['203.0.113.7/24'], advertisements: [{ name: 'a', allowedPrefixes: ['2001:db8::1/64'] }] }).map((e) => [e.path, e.message]));
  t.equal(by['allowedPrefixes[0]'], 'host bits set; did you mean 203.0.113.0/24?');
  t.equal(by['advertisements[0].allowedPrefixes[0]'], 'host bits set; did you mean 2001:db8::/64?');
  t.ok(validateConfig({ ...base, allowedPrefixes: ['203.0.113.0/24', '2001:db8::/48'], advertisements: [{ name: 'a', allowedPrefixes: ['203.0.113.0/25'] }] }).ok);
});

t.test('serviceAttributes: values and ranges, never the well-known communities', async (t) => {
  const structure = Object.fromEntries(
    errors({ ...base, advertisements: [{ name: 'a', serviceAttributes: { communities: ['64512:9-1', 'x'], largeCommunities: ['1:2:3-1'], maxPrepend: 11 } }] }).map((e) => [e.path, e.message]),
  );
  t.match(structure['advertisements[0].serviceAttributes.communities[0]'], /the range is reversed \(did you mean 64512:1-9\?\)/);
  t.match(structure['advertisements[0].serviceAttributes.communities[1]'], /is not a community "ASN:VALUE" or a range "ASN:LO-HI"/);
  t.match(structure['advertisements[0].serviceAttributes.largeCommunities[0]'], /the range is reversed/);
  t.match(structure['advertisements[0].serviceAttributes.maxPrepend'], /integer 0\.\.10/);
  const wellKnown = Object.fromEntries(errors({ ...base, advertisements: [{ name: 'a', serviceAttributes: { communities: ['64512:1', 'no-export', '65535:0-10'] } }] }).map((e) => [e.path, e.message]));
  t.match(wellKnown['advertisements[0].serviceAttributes.communities[1]'], /reaches into the well-known communities \(65535:x\), which never come from a Service/);
  t.match(wellKnown['advertisements[0].serviceAttributes.communities[2]'], /reaches into the well-known communities/);
  t.equal(Object.keys(wellKnown).length, 2);
  t.ok(validateConfig({ ...base, advertisements: [{ name: 'a', serviceAttributes: { communities: ['64512:100-199'], largeCommunities: ['64500:1:0-99'], med: true, maxPrepend: 3 } }] }).ok);
});

t.test('a prefix that is no CIDR says why (trial 2026-12-02: every bad prefix got the same message)', async (t) => {
  const errs = errors({
    ...base,
    routes: [{ prefix: '10.0.0.1/33' }, { prefix: '300.1.1.0/24' }, { prefix: '2001:db8::/129' }, { prefix: '10.0.0.0' }, { prefix: '10.0.0.0/x' }],
    serviceCIDRs: ['10.96.0.0/40'],
  });
  const by = Object.fromEntries(errs.map((e) => [e.path, e.message]));
  const expected = 'must be a CIDR prefix like 10.0.0.0/24 or 2001:db8::/64';
  t.equal(by['routes[0].prefix'], `${expected} (prefix length 33 out of range 0..32 for 10.0.0.1)`);
  t.equal(by['routes[1].prefix'], `${expected} (not an IP address: "300.1.1.0")`);
  t.equal(by['routes[2].prefix'], `${expected} (prefix length 129 out of range 0..128 for 2001:db8::)`);
  t.equal(by['routes[3].prefix'], `${expected} (not a CIDR (missing /len): "10.0.0.0")`);
  t.equal(by['routes[4].prefix'], `${expected} (not a CIDR (bad length): "10.0.0.0/x")`);
  t.equal(by['serviceCIDRs[0]'], `${expected} (prefix length 40 out of range 0..32 for 10.96.0.0)`);
  t.equal(errs.length, 6, errs.map((e) => `${e.path}: ${e.message}`).join('\n'));
  t.same(errors({ ...base, routes: [{}] }).map((e) => `${e.path}: ${e.message}`), ['routes[0].prefix: required']);
});

t.test('YAML problems', async (t) => {
  const r = parseConfigText('bgp: {localAs: 1}\nbgp: {localAs: 2}\n');
  t.notOk(r.ok);
  if (!r.ok) t.match(r.errors[0], { path: '(yaml)', message: /unique.*line 2/i });
  const r2 = parseConfigText('bgp: [\n');
  t.notOk(r2.ok);
  const r3 = parseConfigText('');
  t.notOk(r3.ok);
  if (!r3.ok) t.same(r3.errors.map((e) => e.path), ['bgp']);
});

t.test('loadConfigFile and ConfigError', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'herald-cfg-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const good = join(dir, 'good.yaml');
  writeFileSync(good, 'bgp: {localAs: 65000, routerId: 10.0.0.1}\n');
  t.equal((await loadConfigFile(good)).bgp.localAs, 65000);
  const bad = join(dir, 'bad.yaml');
  writeFileSync(bad, 'bgp: {localAs: 65000}\npeers: [{name: a, address: 10.0.0.2, peerAs: 1, holdTime: 2}]\n');
  const err = await loadConfigFile(bad).catch((e: unknown) => e);
  t.ok(err instanceof ConfigError);
  t.match((err as ConfigError).message, /peers\[0\]\.holdTime: must be 0 or 3\.\.65535/);
  const missing = await loadConfigFile(join(dir, 'nope.yaml')).catch((e: unknown) => e);
  t.match((missing as ConfigError).issues[0], { path: '(file)', message: /cannot read/ });
});

t.test('communities: the config accepts what the BGP codec parses', async (t) => {
  const routes = (communities: string[], largeCommunities: string[] = []) => validateConfig({ bgp: { localAs: 1, routerId: '10.0.0.1' }, routes: [{ prefix: '10.0.0.0/24', communities, largeCommunities }] });
  t.equal(routes(['65535:65281', 'no-export', 'NO_EXPORT', '1:2', 'graceful-shutdown', 'blackhole'], ['4294967295:0:1']).ok, true);
  for (const bad of ['65536:0', '1:2:3', 'no-such-name', '']) {
    const r = routes([bad]);
    t.equal(r.ok, false, `${JSON.stringify(bad)} rejected`);
    if (!r.ok) t.match(r.errors, [{ path: 'routes[0].communities[0]', message: /must be a community/ }]);
  }
  const bare = routes(['65000']);
  t.equal(bare.ok, false, 'a bare number is refused (the codec would read "65000" as 0:65000; issue 35)');
  if (!bare.ok) t.match(bare.errors, [{ path: 'routes[0].communities[0]', message: /not a bare number: write e\.g\. "65000:0" or "0:65000"/ }]);
  const large = routes([], ['4294967296:0:1']);
  t.equal(large.ok, false);
  if (!large.ok) t.match(large.errors, [{ path: 'routes[0].largeCommunities[0]', message: /large community/ }]);
});

t.test('resolveIdentity: flag > config > env; routerId from IPv4 node IP', async (t) => {
  const r = validateConfig({ bgp: { localAs: 1 } });
  t.ok(r.ok);
  if (!r.ok) return;
  t.same(resolveIdentity(r.config, { nodeIp: '192.0.2.7', env: {} }, 'host'), { nodeName: 'host', nodeIps: ['192.0.2.7'], routerId: '192.0.2.7' });
  t.same(resolveIdentity(r.config, { env: { NODE_NAME: 'n1', NODE_IP: '192.0.2.8' } }, 'host'), { nodeName: 'n1', nodeIps: ['192.0.2.8'], routerId: '192.0.2.8' });
  t.equal(resolveIdentity(r.config, { nodeName: 'flag', env: { NODE_NAME: 'env' } , nodeIp: '10.0.0.1' }, 'host').nodeName, 'flag');
  t.throws(() => resolveIdentity(r.config, { nodeIp: '2001:db8::1', env: {} }, 'host'), ConfigError);
  // One per IP family (kubelet --node-ip, the downward API's status.hostIPs): the router id is the IPv4 one.
  t.same(resolveIdentity(r.config, { nodeIp: 'fd00::5,10.0.0.5', env: {} }, 'host'), { nodeName: 'host', nodeIps: ['fd00::5', '10.0.0.5'], routerId: '10.0.0.5' });
  t.same(resolveIdentity(r.config, { env: { NODE_IP: '10.0.0.6, fd00::6' } }, 'host').nodeIps, ['10.0.0.6', 'fd00::6']);
  const withIp = validateConfig({ bgp: { localAs: 1 }, node: { ip: '10.0.0.7,fd00::7' } });
  t.ok(withIp.ok, 'node.ip takes one address per family');
  if (withIp.ok) t.same(resolveIdentity(withIp.config, { env: {} }, 'h').nodeIps, ['10.0.0.7', 'fd00::7']);
  const twoV4 = validateConfig({ bgp: { localAs: 1 }, node: { ip: '10.0.0.7,10.0.0.8' } });
  t.notOk(twoV4.ok, 'two IPv4 addresses are refused');
  if (!twoV4.ok) t.match(twoV4.errors, [{ path: 'node.ip', message: /at most one IPv4 address/ }]);
});

t.test('shipped examples and the deploy ConfigMap validate', async (t) => {
  const files = readdirSync(join(ROOT, 'examples')).filter((f) => f.endsWith('.yaml'));
  t.ok(files.length >= 3, `found ${files.length} example configs`);
  for (const f of files) {
    const r = parseConfigText(readFileSync(join(ROOT, 'examples', f), 'utf8'));
    t.ok(r.ok, `${f}: ${r.ok ? 'valid' : JSON.stringify(r.errors)}`);
  }
  const cm = readFileSync(join(ROOT, 'deploy/kubernetes/configmap.yaml'), 'utf8');
  const data = (parseDocument(cm).toJS() as { data: Record<string, string> }).data;
  const text = data['herald.yaml'];
  t.ok(text, 'ConfigMap has herald.yaml');
  const r = parseConfigText(text ?? '');
  t.ok(r.ok, `deploy ConfigMap: ${r.ok ? 'valid' : JSON.stringify(r.errors)}`);
});

t.test('resolveIdentity rejects malformed node IPs', async (t) => {
  const r = validateConfig({ bgp: { localAs: 1, routerId: '10.0.0.1' } });
  if (!r.ok) throw new Error('valid');
  t.throws(() => resolveIdentity(r.config, { nodeIp: '10.0.0', env: {} }, 'h'), /--node-ip: must be an IP address/);
  t.throws(() => resolveIdentity(r.config, { nodeIp: '10.0.0.1,10.0.0.2', env: {} }, 'h'), /--node-ip: at most one IPv4 address: 10\.0\.0\.1 and 10\.0\.0\.2/);
  t.throws(() => resolveIdentity(r.config, { env: { NODE_IP: 'x' } }, 'h'), /NODE_IP: must be an IP address/);
});

t.test('metrics listener: the node address by default, port 9179, never on the admin API\'s address and port', async (t) => {
  const valid = (data: object) => {
    const r = validateConfig({ ...base, ...data });
    if (!r.ok) throw new Error(JSON.stringify(r.errors));
    return r.config;
  };
  const id = { nodeName: 'n', routerId: '10.0.0.1', nodeIps: ['192.0.2.7'] };
  t.equal(metricsListener(valid({}), id), undefined, 'no metrics section: no listener');
  t.same(metricsListener(valid({ metrics: {} }), id), { address: '192.0.2.7', port: 9179 }, "the node's address, port 9179 (beside admin 127.0.0.1:9179)");
  t.same(metricsListener(valid({ metrics: { address: '2001:db8::5', port: 9100 } }), id), { address: '2001:db8::5', port: 9100 });
  t.throws(() => metricsListener(valid({ metrics: {} }), { nodeName: 'n', routerId: '10.0.0.1', nodeIps: [] }), /metrics\.address: not set, and the node's address is unknown/);
  t.throws(() => metricsListener(valid({ metrics: {} }), { ...id, nodeIps: ['127.0.0.1'] }), /overlaps the admin API on 127\.0\.0\.1:9179/, 'a node address equal to the admin address');
  t.same(metricsListener(valid({ metrics: { address: '0.0.0.0' }, admin: { port: 9180 } }), id), { address: '0.0.0.0', port: 9179 }, 'any address on another port');
  for (const [metrics, admin] of [
    [{ address: '127.0.0.1' }, {}],
    [{ address: '0.0.0.0' }, {}],
    [{ address: '::' }, {}],
    [{ address: '10.0.0.5', port: 9300 }, { address: '0.0.0.0', port: 9300 }],
    [{ address: '::1' }, { address: '0:0::1' }],
  ] as const) {
    t.same(paths({ ...base, metrics, admin }), ['metrics.address'], `metrics ${JSON.stringify(metrics)} beside admin ${JSON.stringify(admin)} is rejected`);
  }
  t.ok(validateConfig({ ...base, metrics: { address: '0.0.0.0' }, admin: { address: '::1' } }).ok, '0.0.0.0 beside an IPv6 admin address binds');
  t.ok(validateConfig({ ...base, metrics: { address: '127.0.0.1', port: 0 }, admin: { port: 0 } }).ok, 'port 0 never clashes');
  t.same(paths({ ...base, metrics: { port: 70000 } }), ['metrics.port']);
  t.same(paths({ ...base, metrics: { path: '/m' } }), ['metrics.path'], 'unknown fields are errors');
});
