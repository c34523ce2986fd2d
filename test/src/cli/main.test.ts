// CLI against a real admin server (FakeView) on loopback: table snapshots, --json round trip,
// token handling, usage errors, unreachable daemon, config check.
import t from 'tap';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildAdminServer } from '../../../src/admin/server.ts';
import { main } from '../../../src/cli/main.ts';
import { formatSteering } from '../../../src/cli/table.ts';
import { FakeView, HEALTH, PEERS, ROUTES, SERVICES } from '../admin/fake-view.ts';

const TOKEN = 'cli-token';

class Buf {
  text = '';
  write(s: string) {
    this.text += s;
    return true;
  }
}

const view = new FakeView();
const app = await buildAdminServer({ view, token: () => TOKEN });
await app.listen({ host: '127.0.0.1', port: 0 });
const addr = app.server.address();
const API = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
t.teardown(() => app.close());
const dir = mkdtempSync(join(tmpdir(), 'herald-cli-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const tokenFile = join(dir, 'token');
writeFileSync(tokenFile, `${TOKEN}\n`);

async function run(args: string[], env: NodeJS.ProcessEnv = {}) {
  const out = new Buf();
  const err = new Buf();
  const code = await main(args, { out, err, env });
  return { code, out: out.text, err: err.text };
}

t.test('peers table', async (t) => {
  const r = await run(['peers', '--api', API]);
  t.equal(r.code, 0);
  t.equal(
    r.out,
    [
      'Name   Address         AS     State        Uptime    Pfx sent  Pfx rcvd  Msgs sent/rcvd  Info',
      'tor-a  192.0.2.1       64500  Established  1h02m05s  2         0         124/122',
      'tor-b  192.0.2.2:1179  64501  Active       -         0         0         3/1             Received: Cease / Administrative Shutdown "maintenance"',
      '',
    ].join('\n'),
  );
});

t.test('peer detail', async (t) => {
  const r = await run(['peers', 'tor-a', '--api', API]);
  t.equal(r.code, 0);
  t.equal(
    r.out,
    [
      'Name:           tor-a',
      'Address:        192.0.2.1 port 179',
      'AS:             local 64512, peer 64500 (eBGP)',
      'State:          Established since 2026-11-29T18:00:00.000Z',
      'Uptime:         1h02m05s',
      'Hold time:      90 s (keepalive 30 s)',
      'Families:       ipv4-unicast',
      'Capabilities:   4-octet AS, route refresh',
      'Peer router id: 192.0.2.1',
      'Messages sent:  keepalive 120, open 1, update 3',
      'Messages rcvd:  keepalive 121, open 1',
      'Prefixes:       2 sent, 0 received',
      'Flaps:          1',
      '',
    ].join('\n'),
  );
  const missing = await run(['peers', 'nope', '--api', API]);
  t.equal(missing.code, 1);
  t.equal(missing.err, 'herald peers: no peer named "nope" (HTTP 404)\n');
});

t.test('routes --prefix with a malformed filter fails with the server\'s reason', async (t) => {
  const r = await run(['routes', '--api', API, '--prefix', 'zz']);
  t.equal(r.code, 1);
  t.equal(r.out, '', 'no "No routes."');
  t.match(r.err, /^herald routes: invalid prefix filter "zz": "zz" is not an IP address; .*\(HTTP 400\)\n$/);
});

t.test('HERALD_API set but empty means the default', async (t) => {
  // The default (127.0.0.1:9179) has no daemon here: the error names it instead of an invalid URL "".
  const r = await run(['status'], { HERALD_API: '' });
  t.equal(r.code, 1);
  t.match(r.err, /http:\/\/127\.0\.0\.1:9179/);
  t.notMatch(r.err, /invalid --api URL/);
});

t.test('routes, services and status tables', async (t) => {
  const r = await run(['routes', '--api', API]);
  t.equal(
    r.out,
    [
      'Peer   Prefix            Next hop    AS path      LocPref  MED  Communities',
      'tor-a  198.51.100.10/32  192.0.2.10  64512        -        10   64512:100',
      'tor-a  198.51.100.20/32  192.0.2.10  64512        -        -    64512:1:2',
      'tor-a  198.51.100.40/32  192.0.2.10  64512 64512  -        -    64512:7 lb:64512:375000000',
      '',
    ].join('\n'),
  );
  const f = await run(['routes', '--api', API, '--prefix', '198.51.100.20/32']);
  t.match(f.out, /198\.51\.100\.20\/32/);
  t.notMatch(f.out, /198\.51\.100\.10\/32/);
  const s = await run(['services', '--api', API]);
  t.equal(
    s.out,
    [
      'Service       VIP            Kind          Announced  Steering                                 Reasons',
      'default/web   198.51.100.10  loadBalancer  yes        -                                        LocalReadyEndpoint',
      'shop/cart     198.51.100.30  loadBalancer  no         -                                        NoLocalReadyEndpoint',
      'shop/steered  198.51.100.40  loadBalancer  yes        chosen 2/2 of 5, weight 3/10, prepend 1  LocalReadyEndpoint, Chosen, Weighted',
      'shop/steered  198.51.100.41  loadBalancer  no         not chosen (2 of 5)                      NotChosen',
      '',
    ].join('\n'),
  );
  const d = await run(['services', 'shop/cart', '--api', API]);
  t.equal(d.out, 'Service shop/cart\n  198.51.100.30 (loadBalancer): NOT announced\n    - NoLocalReadyEndpoint: externalTrafficPolicy Local and no ready endpoint on this node\n');
  const steered = await run(['services', 'shop/steered', '--api', API]);
  t.match(steered.out, / {4}- Weighted: weight 3 of 10 endpoints: link bandwidth 375000000 bytes\/s/);
  t.match(steered.out, / {4}= lb → 198\.51\.100\.40\/32: chosen: maxNodesPerVip 2 of 5 eligible \(node-c, node-a\); link bandwidth 375000000 bytes\/s \(3 of 10 endpoints\); AS path prepend 1 \(eBGP\); communities 64512:7\n/);
  t.match(steered.out, / {4}- NotChosen: not among the 2 node\(s\) chosen for this VIP/);
  const st = await run(['status', '--api', API]);
  t.match(st.out, /^Herald: +0\.1\.0 on node node-a\n/);
  t.match(st.out, /Peers: +1\/2 established/);
  t.match(st.out, /Started: +2026-11-29T17:00:00\.000Z \(up 2h00m00s\)/);
});

t.test('health table', async (t) => {
  const r = await run(['health', '--api', API]);
  t.equal(r.code, 0);
  t.equal(
    r.out,
    [
      'Gate                         Kind             Target                    State    Ok/Fail  Last failure',
      '(node)                       kube-proxy-node  192.0.2.10:10256/healthz  up       1440/0',
      'route:198.51.100.20/32       http             127.0.0.1:8080/healthz    down     0/7      ConnectionRefused: connection refused',
      'svc:shop/cart 198.51.100.30  -                -                         invalid  -        InvalidCheck: herald.io/health-check-port="80x": must be an integer 1-65535',
      '',
    ].join('\n'),
  );
  t.same(JSON.parse((await run(['health', '--json', '--api', API])).out), HEALTH);
});

t.test('--json prints exactly what the API returned', async (t) => {
  t.same(JSON.parse((await run(['peers', '--json', '--api', API])).out), PEERS);
  t.same(JSON.parse((await run(['routes', '--json', '--api', API])).out), ROUTES);
  t.same(JSON.parse((await run(['services', '--json', '--api', API])).out), SERVICES);
  t.same(JSON.parse((await run(['services', 'default/web', '--json', '--api', API])).out), SERVICES[0]);
  t.same(JSON.parse((await run(['status', '--json', '--api', API])).out), view.status());
});

t.test('mutating commands use the token', async (t) => {
  view.actions = [];
  let r = await run(['drain', '--api', API]);
  t.equal(r.code, 1);
  t.match(r.err, /missing bearer token.*--token-file FILE or set HERALD_ADMIN_TOKEN.*HTTP 401/);
  r = await run(['drain', '--api', API], { HERALD_ADMIN_TOKEN: 'wrong' });
  t.equal(r.code, 1);
  t.match(r.err, /invalid bearer token \(HTTP 401\)/);
  t.same(view.actions, []);
  r = await run(['drain', '--api', API, '--token-file', tokenFile]);
  t.equal(r.code, 0);
  t.equal(r.out, 'drain requested: annotation herald.io/drain="herald drain" set on Node node-a\n', 'the daemon says where the drain is kept');
  r = await run(['undrain', '--api', API], { HERALD_ADMIN_TOKEN: TOKEN });
  t.equal(r.code, 0);
  r = await run(['reset', 'tor-a', '--soft', '--api', API, '--token-file', tokenFile]);
  t.equal(r.out, 'soft reset of tor-a\n');
  r = await run(['reset', 'tor-b', '--json', '--api', API, '--token-file', tokenFile]);
  t.same(JSON.parse(r.out), { ok: true, message: 'hard reset of tor-b' });
  t.same(view.actions, ['drain', 'undrain', 'reset tor-a soft', 'reset tor-b hard']);
  r = await run(['drain', '--api', API, '--token-file', join(dir, 'missing')]);
  t.equal(r.code, 1);
  t.match(r.err, /cannot read --token-file .*missing: no such file \(check the path\)/);
});

t.test('drain --reason records why; --until-restart is gone (a stop decides restart or departure itself)', async (t) => {
  view.actions = [];
  let r = await run(['drain', '--reason', 'disk swap', '--api', API, '--token-file', tokenFile]);
  t.equal(r.code, 0);
  t.equal(r.out, 'drain requested: annotation herald.io/drain="disk swap" set on Node node-a\n');
  t.same(view.actions, ['drain disk swap']);
  r = await run(['drain', '--until-restart', '--api', API, '--token-file', tokenFile]);
  t.equal(r.code, 2, 'an unknown option');
  r = await run(['undrain', '--reason', 'x', '--api', API, '--token-file', tokenFile]);
  t.equal(r.code, 2, '--reason is for drain only');
});

t.test('daemon not reachable: one clear line, no stack trace', async (t) => {
  // A port that was just free: bind and close a server to find one.
  const probe = await buildAdminServer({ view, token: () => undefined });
  await probe.listen({ host: '127.0.0.1', port: 0 });
  const a = probe.server.address();
  const port = typeof a === 'object' && a ? a.port : 1;
  await probe.close();
  const r = await run(['peers', '--api', `http://127.0.0.1:${port}`]);
  t.equal(r.code, 1);
  t.equal(r.err, `herald peers: cannot reach the Herald daemon at http://127.0.0.1:${port} (connection refused); is \`herald run\` running? (set --api URL)\n`);
  t.notMatch(r.err, /\n {4}at /);
});

t.test('usage errors exit 2', async (t) => {
  t.equal((await run([])).code, 2);
  let r = await run(['frobnicate']);
  t.equal(r.code, 2);
  t.match(r.err, /unknown command "frobnicate"/);
  r = await run(['peers', '--soft']);
  t.equal(r.code, 2);
  t.match(r.err, /--soft does not apply to "peers"/);
  r = await run(['reset']);
  t.equal(r.code, 2);
  t.match(r.err, /expected one PEER name/);
  r = await run(['services', 'nonamespace', '--api', API]);
  t.equal(r.code, 2);
  r = await run(['peers', '--bogus']);
  t.equal(r.code, 2);
  // The option named alone (trial 2026-12-02: Node's text ended in an unbalanced quote).
  t.equal(r.err, 'herald peers: unknown option --bogus\n(see herald --help)\n');
  r = await run(['run']);
  t.equal(r.code, 2);
  t.match(r.err, /--config FILE is required/);
  r = await run(['--help']);
  t.equal(r.code, 0);
  t.match(r.out, /Usage: herald/);
});

t.test('config check', async (t) => {
  const good = join(dir, 'good.yaml');
  writeFileSync(good, 'bgp: {localAs: 65000, routerId: 10.0.0.1}\npeers: [{name: a, address: 10.0.0.2, peerAs: 65001}]\n');
  let r = await run(['config', 'check', good]);
  t.equal(r.code, 0);
  t.equal(r.out, `${good}: valid (1 peer(s), 0 static route(s))\n`);
  const bad = join(dir, 'bad.yaml');
  writeFileSync(bad, 'bgp: {localAs: 65000}\npeers: [{name: a, address: 10.0.0.2, peerAs: 65001, holdTime: 1}, {name: b, address: x, peerAs: 1}]\n');
  r = await run(['config', 'check', bad]);
  t.equal(r.code, 1);
  t.equal(r.err, `${bad}: invalid, 2 problem(s):\n  peers[0].holdTime: must be 0 or 3..65535 (seconds)\n  peers[1].address: must be an IP address\n`);
  r = await run(['config', 'check', bad, '--json']);
  t.same(JSON.parse(r.out), { ok: false, file: bad, errors: [{ path: 'peers[0].holdTime', message: 'must be 0 or 3..65535 (seconds)' }, { path: 'peers[1].address', message: 'must be an IP address' }] });
  r = await run(['config', 'check']);
  t.equal(r.code, 2);
  // A file that cannot be read is not "invalid": exit 2 and one line in words (trial 2026-12-02: exit 1, Node's ENOENT text).
  const missing = join(dir, 'nope.yaml');
  r = await run(['config', 'check', missing]);
  t.equal(r.code, 2);
  t.equal(r.err, `herald config check: ${missing}: cannot read: no such file (check the path)\n`);
  r = await run(['config', 'check', missing, '--json']);
  t.equal(r.code, 2);
  t.same(JSON.parse(r.out), { ok: false, file: missing, errors: [{ path: '(file)', message: 'cannot read: no such file (check the path)' }] });
  r = await run(['config', 'check', dir]);
  t.equal(r.code, 2);
  t.match(r.err, /^herald config check: .*: cannot read: .*a directory/);
});

t.test('config check warns (exit 0) about password files and env vars it cannot resolve here', async (t) => {
  const pwFile = join(dir, 'pw');
  writeFileSync(pwFile, 'secret\n');
  const empty = join(dir, 'pw-empty');
  writeFileSync(empty, '');
  const f = join(dir, 'pw.yaml');
  writeFileSync(
    f,
    [
      'bgp: {localAs: 65000, routerId: 10.0.0.1}',
      'peers:',
      `  - {name: a, address: 10.0.0.2, peerAs: 65001, password: {file: ${pwFile}}}`,
      `  - {name: b, address: 10.0.0.3, peerAs: 65001, password: {file: ${join(dir, 'missing')}}}`,
      `  - {name: c, address: 10.0.0.4, peerAs: 65001, password: {file: ${empty}}}`,
      '  - {name: d, address: 10.0.0.5, peerAs: 65001, password: {env: HERALD_TEST_PW_UNSET}}',
      '  - {name: e, address: 10.0.0.6, peerAs: 65001, password: {env: HERALD_TEST_PW_SET}}',
      '',
    ].join('\n'),
  );
  let r = await run(['config', 'check', f], { HERALD_TEST_PW_SET: 'x' });
  t.equal(r.code, 0, 'warnings do not fail the check');
  t.equal(r.out, `${f}: valid (5 peer(s), 0 static route(s))\n`);
  t.equal(
    r.err,
    [
      `${f}: 3 warning(s) (checked in this environment; the daemon's may differ):`,
      `  peers[1].password.file: cannot read ${join(dir, 'missing')}: no such file (check the path)`,
      `  peers[2].password.file: ${empty} is empty`,
      '  peers[3].password.env: environment variable HERALD_TEST_PW_UNSET is not set',
      '',
    ].join('\n'),
  );
  r = await run(['config', 'check', f, '--json'], { HERALD_TEST_PW_SET: 'x', HERALD_TEST_PW_UNSET: 'y' });
  t.equal(r.code, 0);
  t.same(JSON.parse(r.out).warnings.map((w: { path: string }) => w.path), ['peers[1].password.file', 'peers[2].password.file']);
});

t.test('guard: config check says plainly when no LoadBalancer or external address can be announced, and how to allow some', async (t) => {
  const write = (name: string, extra: string) => {
    const f = join(dir, name);
    writeFileSync(f, `bgp: {localAs: 65000, routerId: 10.0.0.1}\nsource: {manifests: ${dir}}\n${extra}`);
    return f;
  };
  const none = write('space-none.yaml', '');
  let r = await run(['config', 'check', none]);
  t.equal(r.code, 0, 'a warning, not an error');
  t.match(r.err, /1 warning\(s\)[^]*allowedPrefixes: neither pools nor allowedPrefixes are configured, so no LoadBalancer ingress address and no externalIP can be announced[^]*"allowedPrefixes: \[203\.0\.113\.0\/24\]"/);
  r = await run(['config', 'check', none, '--json']);
  t.same(JSON.parse(r.out).warnings.map((w: { path: string }) => w.path), ['allowedPrefixes']);
  for (const [name, extra] of [
    ['space-allowed.yaml', 'allowedPrefixes: [203.0.113.0/24]\n'],
    ['space-pool.yaml', 'pools: [{name: p, addresses: [203.0.113.0/28]}]\n'],
    ['space-cluster-ips.yaml', 'advertisements: [{name: c, addressKinds: [clusterIP]}]\n'],
  ] as const) {
    r = await run(['config', 'check', write(name, extra)]);
    t.equal(r.err, '', `${name}: nothing to say`);
  }
});

t.test('decode is dispatched to the decoder', async (t) => {
  const r = await run(['decode', '--help']);
  t.equal(r.code, 0);
  t.match(r.out + r.err, /Usage: herald decode/);
});

t.test('something that is not the Herald API answers: clear message', async (t) => {
  const { createServer } = await import('node:http');
  const srv = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end('<html>hello</html>');
  });
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => srv.close(() => resolve())));
  const a = srv.address();
  const url = `http://127.0.0.1:${typeof a === 'object' && a ? a.port : 0}`;
  const r = await run(['status', '--api', url]);
  t.equal(r.code, 1);
  t.equal(r.err, `herald status: ${url} answered HTTP 200 with something that is not JSON; is it the Herald admin API?\n`);
  const bad = await run(['status', '--api', 'not a url']);
  t.equal(bad.code, 1);
  t.match(bad.err, /invalid --api URL/);
});

t.test('steering cell: a change held by the rate limit says until when', async (t) => {
  const a = { advertisement: 'lb', prefix: '198.51.100.40/32', announced: true, linkBandwidth: 1e9, endpoints: { local: 8, total: 10 } };
  t.equal(formatSteering(a), 'weight 8/10');
  t.equal(formatSteering({ ...a, heldUntil: '2026-11-29T19:00:05.000Z' }), 'weight 8/10, held until 2026-11-29T19:00:05.000Z');
});
