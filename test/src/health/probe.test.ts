import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { formatStatuses, judgeNode, judgeService, probeCheck, probeOnce } from '../../../src/health/probe.ts';
import type { CheckSpec } from '../../../src/health/types.ts';
import { refusedPort, startFakeKubeProxy } from '../../helpers/fake-kube-proxy.ts';

// Generous timeout (a loaded machine must not turn answers into Timeouts); hang cases use 0.5 s.
const timing = { intervalSec: 1, timeoutSec: 5, rise: 1, fall: 1 };

function svcSpec(host: string, port: number, over: Partial<CheckSpec> = {}): CheckSpec {
  return { key: 'k', gate: 'g', kind: 'kube-proxy-service', hosts: [host], port, ...timing, ...over };
}

t.test('kube-proxy service health: every answer gets its own code', async (t) => {
  const kp = await startFakeKubeProxy();
  t.teardown(() => kp.close());
  // Rows: fake mode -> ok, code, a piece of the message.
  const rows = [
    { mode: 'ok', ok: true, code: undefined, msg: /localEndpoints 1/ },
    { mode: 'none', ok: false, code: 'NoLocalEndpoints', msg: /HTTP 503, localEndpoints 0/ },
    { mode: 'proxy-unhealthy', ok: false, code: 'ProxyUnhealthy', msg: /serviceProxyHealthy false/ },
    { mode: 'empty', ok: false, code: 'BadResponse', msg: /empty body/ },
    { mode: 'garbage', ok: false, code: 'BadResponse', msg: /not a JSON object/ },
    { mode: 'close', ok: false, code: 'ConnectionClosed', msg: /closed/ },
    { mode: 'hang', ok: false, code: 'Timeout', msg: /within 500 ms/ },
  ] as const;
  for (const row of rows) {
    kp.setMode(row.mode);
    const r = await probeCheck(svcSpec(kp.host, kp.port, row.mode === 'hang' ? { timeoutSec: 0.5 } : {}));
    t.equal(r.ok, row.ok, `${row.mode}: ok=${row.ok}`);
    t.equal(r.code, row.code, `${row.mode}: code ${row.code}`);
    t.match(r.message, row.msg, `${row.mode}: message`);
    t.ok(r.latencyMs >= 0, `${row.mode}: latency recorded`);
  }
  kp.setMode('ok');
  kp.localEndpoints = 3;
  const r = await probeCheck(svcSpec(kp.host, kp.port));
  t.equal(r.localEndpoints, 3, 'localEndpoints from the JSON body');
  t.equal(r.status, 200);
  t.equal(kp.requests, rows.length + 1, 'one request per probe');
});

t.test('a refused port is ConnectionRefused, not NoLocalEndpoints', async (t) => {
  const port = await refusedPort();
  const r = await probeCheck(svcSpec('127.0.0.1', port));
  t.equal(r.ok, false);
  t.equal(r.code, 'ConnectionRefused');
  t.match(r.message, `127.0.0.1:${port}: connection refused`);
  const tcp = await probeCheck(svcSpec('127.0.0.1', port, { kind: 'tcp' }));
  t.equal(tcp.code, 'ConnectionRefused', 'tcp check too');
});

t.test('kube-proxy node /healthz', async (t) => {
  const kp = await startFakeKubeProxy();
  t.teardown(() => kp.close());
  const spec = svcSpec(kp.host, kp.port, { kind: 'kube-proxy-node', scope: 'node' });
  const rows = [
    { mode: 'ok', ok: true, code: undefined },
    { mode: 'not-eligible', ok: false, code: 'NodeNotEligible' },
    { mode: 'proxy-unhealthy', ok: false, code: 'ProxyUnhealthy' },
    { mode: 'hang', ok: false, code: 'Timeout' },
  ] as const;
  for (const row of rows) {
    kp.setMode(row.mode);
    const r = await probeCheck(row.mode === 'hang' ? { ...spec, timeoutSec: 0.5 } : spec);
    t.equal(r.ok, row.ok, `${row.mode}: ok`);
    t.equal(r.code, row.code, `${row.mode}: code`);
  }
});

t.test('generic http: expected statuses and path', async (t) => {
  const seen: string[] = [];
  let status = 204;
  const srv = http.createServer((req, res) => {
    seen.push(req.url ?? '');
    res.writeHead(status);
    res.end();
  });
  await new Promise<void>((r) => srv.listen({ host: '127.0.0.1', port: 0 }, () => r()));
  t.teardown(() => new Promise<void>((r) => srv.close(() => r())));
  const port = (srv.address() as net.AddressInfo).port;
  const spec = svcSpec('127.0.0.1', port, { kind: 'http', path: '/ready', expectedStatus: [200, 204] });
  let r = await probeCheck(spec);
  t.equal(r.ok, true, '204 accepted');
  t.equal(seen[0], '/ready', 'path used');
  status = 500;
  r = await probeCheck(spec);
  t.equal(r.code, 'UnexpectedStatus');
  t.match(r.message, 'HTTP 500, expected 200,204');
  status = 302;
  r = await probeCheck({ ...spec, expectedStatus: undefined });
  t.equal(r.ok, true, 'default expected statuses are 200-399');
  status = 404;
  r = await probeCheck({ ...spec, expectedStatus: undefined });
  t.match(r.message, 'expected 200-399');
});

t.test('tcp connect succeeds against a listener', async (t) => {
  const srv = net.createServer((s) => s.destroy());
  await new Promise<void>((r) => srv.listen({ host: '127.0.0.1', port: 0 }, () => r()));
  t.teardown(() => new Promise<void>((r) => srv.close(() => r())));
  const r = await probeCheck(svcSpec('127.0.0.1', (srv.address() as net.AddressInfo).port, { kind: 'tcp' }));
  t.equal(r.ok, true);
});

t.test('several hosts: passes if any passes, otherwise lists all', async (t) => {
  const kp = await startFakeKubeProxy({ host: '127.0.0.2' });
  t.teardown(() => kp.close());
  const spec = svcSpec('127.0.0.3', kp.port, { hosts: ['127.0.0.3', '127.0.0.2'] });
  // 127.0.0.3 has nothing on that port (refused); 127.0.0.2 answers.
  let r = await probeCheck(spec);
  t.equal(r.ok, true);
  kp.setMode('none');
  r = await probeCheck(spec);
  t.equal(r.ok, false);
  t.equal(r.code, 'ConnectionRefused', 'first host decides the code');
  t.match(r.message, /127\.0\.0\.3:\d+: connection refused; 127\.0\.0\.2:\d+: HTTP 503/);
});

t.test('IPv6 loopback', async (t) => {
  let kp;
  try {
    kp = await startFakeKubeProxy({ host: '::1' });
  } catch (err) {
    t.plan(0, `skipped: no IPv6 loopback here: ${String(err)}`);
    return;
  }
  t.teardown(() => kp.close());
  const r = await probeCheck(svcSpec('::1', kp.port));
  t.equal(r.ok, true);
});

t.test('abort and bad targets never throw', async (t) => {
  const kp = await startFakeKubeProxy({ mode: 'hang' });
  t.teardown(() => kp.close());
  const ac = new AbortController();
  const p = probeOnce({ kind: 'kube-proxy-service', host: kp.host, port: kp.port, timeoutMs: 60_000 }, ac.signal);
  setTimeout(() => ac.abort(), 20);
  const r = await p;
  t.equal(r.code, 'Timeout');
  t.equal(r.message, 'aborted');
  const bad = await probeOnce({ kind: 'tcp', host: 'localhost', port: 1, timeoutMs: 100 });
  t.equal(bad.code, 'NetworkError');
  t.match(bad.message, 'not an IP literal');
  const none = await probeCheck(svcSpec('127.0.0.1', 1, { hosts: [] }));
  t.equal(none.ok, false);
});

t.test('formatStatuses', async (t) => {
  t.equal(formatStatuses([204, 200]), '200,204');
  t.equal(formatStatuses([200, 201, 202, 204]), '200-202,204');
});

t.test('judgeService / judgeNode table (kube-proxy answers)', async (t) => {
  const rows: Array<[string, number, string, boolean, string | undefined]> = [
    ['svc', 200, '{"service":{"namespace":"ns","name":"n"},"localEndpoints":2,"serviceProxyHealthy":true}', true, undefined],
    ['svc', 200, '{"localEndpoints":0}', false, 'NoLocalEndpoints'],
    ['svc', 200, '{"service":{}}', false, 'BadResponse'],
    ['svc', 200, '[1]', false, 'BadResponse'],
    ['svc', 200, '', false, 'BadResponse'],
    ['svc', 503, '{"localEndpoints":0,"serviceProxyHealthy":true}', false, 'NoLocalEndpoints'],
    ['svc', 503, 'oops', false, 'NoLocalEndpoints'],
    ['svc', 503, '{"localEndpoints":1,"serviceProxyHealthy":false}', false, 'ProxyUnhealthy'],
    ['svc', 404, '', false, 'BadResponse'],
    ['node', 200, '', true, undefined],
    ['node', 503, '{"nodeEligible":false}', false, 'NodeNotEligible'],
    ['node', 503, '{"nodeEligible":true}', false, 'ProxyUnhealthy'],
    ['node', 500, '', false, 'BadResponse'],
  ];
  t.equal(rows.length, 13);
  for (const [which, status, body, ok, code] of rows) {
    const r = which === 'svc' ? judgeService(status, body, 1) : judgeNode(status, body, 1);
    t.equal(r.ok, ok, `${which} ${status} ${body}: ok`);
    t.equal(r.code, code, `${which} ${status} ${body}: code`);
  }
});

t.test('https: certificate not verified; TLS failure is TLSError', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'herald-health-tls-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const key = join(dir, 'key.pem');
  const cert = join(dir, 'cert.pem');
  try {
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=herald-test'], { stdio: 'ignore', timeout: 20_000 });
  } catch (err) {
    t.plan(0, `skipped: openssl not usable here: ${String(err)}`);
    return;
  }
  const srv = https.createServer({ key: readFileSync(key), cert: readFileSync(cert) }, (_req, res) => {
    res.writeHead(204);
    res.end();
  });
  await new Promise<void>((r) => srv.listen({ host: '127.0.0.1', port: 0 }, () => r()));
  t.teardown(() => new Promise<void>((r) => srv.close(() => r())));
  const port = (srv.address() as net.AddressInfo).port;
  const ok = await probeCheck(svcSpec('127.0.0.1', port, { kind: 'https', path: '/' }));
  t.equal(ok.ok, true, 'self-signed certificate accepted');
  t.equal(ok.status, 204);
  // An https check against a plain-HTTP server fails the handshake.
  const plain = http.createServer((_req, res) => res.end('x'));
  await new Promise<void>((r) => plain.listen({ host: '127.0.0.1', port: 0 }, () => r()));
  t.teardown(() => new Promise<void>((r) => plain.close(() => r())));
  const bad = await probeCheck(svcSpec('127.0.0.1', (plain.address() as net.AddressInfo).port, { kind: 'https' }));
  t.equal(bad.ok, false);
  t.equal(bad.code, 'TLSError', bad.message);
});
