/**
 * Network probes: TCP connect, HTTP(S) GET, and kube-proxy's two health endpoints.
 *
 * Every probe is one short connection (no keep-alive agent, `Connection: close`), never resolves
 * DNS (targets must be IP literals), has a hard deadline covering connect + answer, and honours an
 * AbortSignal. Failures are classified into distinct {@link HealthCode}s so that "connection
 * refused" is never reported as "no endpoints".
 *
 * kube-proxy behaviour (kubernetes/kubernetes `pkg/proxy/healthcheck/service_health.go` and
 * `proxy_health.go`): the per-Service server on `healthCheckNodePort` answers any path with 200 iff the
 * node has Ready local endpoints and the proxier is healthy, else 503, with a JSON body
 * `{"service":{...},"localEndpoints":N,"serviceProxyHealthy":bool}`; a 200 with an empty body means the
 * Service was just removed and is not a pass. `/healthz` on port 10256 answers 200 when the proxier is
 * healthy and the node is eligible, 503 otherwise, with `{"lastUpdated","currentTime","nodeEligible"}`.
 */
import net from 'node:net';
import { ipFamilyOf } from '../net/address.ts';
import { http, https } from '../net/node-http.ts';
import type { CheckKind, CheckSpec, ProbeFailureCode, ProbeResult } from './types.ts';
import { HealthCode } from './types.ts';

/** Largest response body read, bytes; longer bodies are cut (kube-proxy's are ~100 bytes). */
export const MAX_BODY_BYTES = 16 * 1024;

/** Default HTTP statuses accepted by http/https checks: 200-399, as kubelet httpGet probes do. */
export const DEFAULT_EXPECTED_STATUS: readonly number[] = Object.freeze(Array.from({ length: 200 }, (_, i) => 200 + i));

/** One probe target. */
export interface ProbeTarget {
  kind: CheckKind;
  /** IP literal (IPv4 or IPv6, no brackets). */
  host: string;
  port: number;
  path?: string;
  expectedStatus?: readonly number[];
  /** Deadline for the whole probe, milliseconds. */
  timeoutMs: number;
}

interface Failure {
  code: ProbeFailureCode;
  message: string;
}

/** Map a socket/HTTP/TLS error to a reason code. */
export function classifyError(err: unknown): Failure {
  const e = err as { code?: unknown; message?: unknown } | null;
  const code = typeof e?.code === 'string' ? e.code : '';
  const msg = typeof e?.message === 'string' ? e.message : String(err);
  if (code === 'ECONNREFUSED') return { code: HealthCode.ConnectionRefused, message: 'connection refused' };
  if (code === 'ECONNRESET' || code === 'EPIPE' || code === 'ECONNABORTED') {
    return { code: HealthCode.ConnectionClosed, message: `connection closed before an answer (${msg})` };
  }
  if (code.startsWith('HPE_')) return { code: HealthCode.BadResponse, message: `malformed HTTP answer (${code})` };
  if (code.startsWith('ERR_SSL') || code.startsWith('ERR_TLS') || /SSL|TLS|certificate/i.test(msg)) {
    return { code: HealthCode.TLSError, message: `TLS error: ${msg}` };
  }
  return { code: HealthCode.NetworkError, message: code ? `${code}: ${msg}` : msg };
}

function fail(f: Failure, startMs: number, extra: Partial<ProbeResult> = {}): ProbeResult {
  return { ok: false, code: f.code, message: f.message, latencyMs: performance.now() - startMs, ...extra };
}

function endpoint(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

/**
 * Probe one target once.
 * Never throws or rejects: every failure becomes a `ProbeResult` with `ok: false`.
 * If `signal` aborts, the result is a failure with code `Timeout` and message "aborted".
 */
export function probeOnce(target: ProbeTarget, signal?: AbortSignal): Promise<ProbeResult> {
  const startMs = performance.now();
  if (ipFamilyOf(target.host) === undefined) {
    return Promise.resolve(fail({ code: HealthCode.NetworkError, message: `not an IP literal: ${JSON.stringify(target.host)}` }, startMs));
  }
  if (signal?.aborted) return Promise.resolve(fail({ code: HealthCode.Timeout, message: 'aborted' }, startMs));
  return target.kind === 'tcp' ? probeTcp(target, startMs, signal) : probeHttp(target, startMs, signal);
}

function probeTcp(target: ProbeTarget, startMs: number, signal?: AbortSignal): Promise<ProbeResult> {
  return new Promise((resolve) => {
    let done = false;
    const sock = net.connect({ host: target.host, port: target.port });
    const finish = (r: ProbeResult) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      sock.destroy();
      resolve(r);
    };
    const onAbort = () => finish(fail({ code: HealthCode.Timeout, message: 'aborted' }, startMs));
    const timer = setTimeout(
      () => finish(fail({ code: HealthCode.Timeout, message: `no TCP connect to ${endpoint(target.host, target.port)} within ${target.timeoutMs} ms` }, startMs)),
      target.timeoutMs,
    );
    signal?.addEventListener('abort', onAbort, { once: true });
    sock.once('connect', () => finish({ ok: true, message: `TCP connect to ${endpoint(target.host, target.port)}`, latencyMs: performance.now() - startMs }));
    sock.on('error', (err) => finish(fail(classifyError(err), startMs)));
  });
}

function probeHttp(target: ProbeTarget, startMs: number, signal?: AbortSignal): Promise<ProbeResult> {
  const needBody = target.kind === 'kube-proxy-service' || target.kind === 'kube-proxy-node';
  const path = target.path ?? (target.kind === 'kube-proxy-node' ? '/healthz' : target.kind === 'kube-proxy-service' ? '/health' : '/');
  const mod = target.kind === 'https' ? https : http;
  return new Promise((resolve) => {
    let done = false;
    const finish = (r: ProbeResult) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      req.destroy();
      resolve(r);
    };
    const onAbort = () => finish(fail({ code: HealthCode.Timeout, message: 'aborted' }, startMs));
    const req = mod.request({
      host: target.host,
      port: target.port,
      path,
      method: 'GET',
      agent: false,
      headers: { connection: 'close', 'user-agent': 'herald-health', accept: 'application/json, */*' },
      // Health endpoints of pods usually carry self-signed certificates; kubelet probes skip verification too.
      ...(target.kind === 'https' ? { rejectUnauthorized: false } : {}),
    });
    const timer = setTimeout(
      () => finish(fail({ code: HealthCode.Timeout, message: `no answer from ${endpoint(target.host, target.port)}${path} within ${target.timeoutMs} ms` }, startMs)),
      target.timeoutMs,
    );
    signal?.addEventListener('abort', onAbort, { once: true });
    req.on('error', (err) => finish(fail(classifyError(err), startMs)));
    req.once('response', (res) => {
      const status = res.statusCode ?? 0;
      if (!needBody) {
        res.resume();
        const expected = target.expectedStatus ?? DEFAULT_EXPECTED_STATUS;
        if (expected.includes(status)) finish({ ok: true, message: `HTTP ${status}`, latencyMs: performance.now() - startMs, status });
        else finish(fail({ code: HealthCode.UnexpectedStatus, message: `HTTP ${status}, expected ${formatStatuses(expected)}` }, startMs, { status }));
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        if (size < MAX_BODY_BYTES) chunks.push(c);
        size += c.length;
      });
      res.on('error', (err) => finish(fail(classifyError(err), startMs, { status })));
      res.once('aborted', () => finish(fail({ code: HealthCode.ConnectionClosed, message: `connection closed during HTTP ${status} body` }, startMs, { status })));
      res.once('end', () => {
        const body = Buffer.concat(chunks).subarray(0, MAX_BODY_BYTES).toString('utf8');
        const latencyMs = performance.now() - startMs;
        finish(target.kind === 'kube-proxy-node' ? judgeNode(status, body, latencyMs) : judgeService(status, body, latencyMs));
      });
    });
    req.end();
  });
}

function parseJsonObject(body: string): Record<string, unknown> | null {
  if (body.trim() === '') return null;
  try {
    const v: unknown = JSON.parse(body);
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** Judge an answer of kube-proxy's per-Service health server. */
export function judgeService(status: number, body: string, latencyMs: number): ProbeResult {
  const json = parseJsonObject(body);
  const le = json && typeof json.localEndpoints === 'number' ? json.localEndpoints : undefined;
  const base = { latencyMs, status, ...(le !== undefined ? { localEndpoints: le } : {}) };
  if (status === 200) {
    if (json === null) {
      return { ok: false, code: HealthCode.BadResponse, message: body.trim() === '' ? 'HTTP 200 with an empty body (Service unknown to kube-proxy?)' : 'HTTP 200 with a body that is not a JSON object', ...base };
    }
    if (le === undefined) return { ok: false, code: HealthCode.BadResponse, message: 'HTTP 200 without a numeric localEndpoints', ...base };
    if (le <= 0) return { ok: false, code: HealthCode.NoLocalEndpoints, message: `HTTP 200 but localEndpoints ${le}`, ...base };
    return { ok: true, message: `HTTP 200, localEndpoints ${le}`, ...base };
  }
  if (status === 503) {
    if (json && json.serviceProxyHealthy === false) {
      return { ok: false, code: HealthCode.ProxyUnhealthy, message: `HTTP 503, kube-proxy reports serviceProxyHealthy false (localEndpoints ${le ?? '?'})`, ...base };
    }
    return { ok: false, code: HealthCode.NoLocalEndpoints, message: `HTTP 503, localEndpoints ${le ?? '? (body not JSON)'}`, ...base };
  }
  return { ok: false, code: HealthCode.BadResponse, message: `unexpected HTTP ${status} from kube-proxy service health`, ...base };
}

/** Judge an answer of kube-proxy's node `/healthz`. */
export function judgeNode(status: number, body: string, latencyMs: number): ProbeResult {
  if (status === 200) return { ok: true, message: 'HTTP 200', latencyMs, status };
  if (status === 503) {
    const json = parseJsonObject(body);
    if (json && json.nodeEligible === false) {
      return { ok: false, code: HealthCode.NodeNotEligible, message: 'HTTP 503, nodeEligible false (node being deleted or scaled down)', latencyMs, status };
    }
    return { ok: false, code: HealthCode.ProxyUnhealthy, message: 'HTTP 503, kube-proxy has not applied its rules in time', latencyMs, status };
  }
  return { ok: false, code: HealthCode.BadResponse, message: `unexpected HTTP ${status} from kube-proxy /healthz`, latencyMs, status };
}

/** Compact "200-399" / "200,204" rendering of a status list. */
export function formatStatuses(list: readonly number[]): string {
  const s = [...new Set(list)].sort((a, b) => a - b);
  const parts: string[] = [];
  for (let i = 0; i < s.length; ) {
    let j = i;
    while (j + 1 < s.length && s[j + 1] === (s[j] as number) + 1) j++;
    parts.push(j - i >= 2 ? `${s[i]}-${s[j]}` : s.slice(i, j + 1).join(','));
    i = j + 1;
  }
  return parts.join(',');
}

/**
 * Probe a check: every host of `spec.hosts` in parallel; passes if any host passes.
 * On failure, the code is the first host's failure code and the message lists every host.
 * Never rejects.
 */
export async function probeCheck(spec: CheckSpec, signal?: AbortSignal): Promise<ProbeResult> {
  const timeoutMs = spec.timeoutSec * 1000;
  const targets = spec.hosts.map((host) => ({
    kind: spec.kind,
    host,
    port: spec.port,
    timeoutMs,
    ...(spec.path !== undefined ? { path: spec.path } : {}),
    ...(spec.expectedStatus !== undefined ? { expectedStatus: spec.expectedStatus } : {}),
  }));
  if (targets.length === 0) return { ok: false, code: HealthCode.NetworkError, message: 'no address to probe', latencyMs: 0 };
  if (targets.length === 1) {
    const r = await probeOnce(targets[0] as ProbeTarget, signal);
    return r.ok ? r : { ...r, message: `${endpoint(spec.hosts[0] as string, spec.port)}: ${r.message}` };
  }
  const results = await Promise.all(targets.map((t) => probeOnce(t, signal)));
  const good = results.find((r) => r.ok);
  if (good) return good;
  const first = results[0] as ProbeResult;
  return {
    ...first,
    latencyMs: Math.max(...results.map((r) => r.latencyMs)),
    message: results.map((r, i) => `${endpoint(spec.hosts[i] as string, spec.port)}: ${r.message}`).join('; '),
  };
}
