/**
 * Per-Service health checks from annotations under `herald.io/` (documented in docs/health-checks.md).
 *
 * | annotation                               | value                                             |
 * |------------------------------------------|---------------------------------------------------|
 * | `herald.io/health-check-type`            | `tcp`, `http`, `https` or `none` (enables the check) |
 * | `herald.io/health-check-port`            | port number 1-65535 (required)                    |
 * | `herald.io/health-check-path`            | HTTP path starting with `/` (http/https; default `/`) |
 * | `herald.io/health-check-expected-status` | list of statuses and ranges, `"200,204"`, `"200-299"` (default 200-399) |
 * | `herald.io/health-check-interval`        | seconds, at least 1 (`"1"`, `"2.5"`, `"2s"`, `"1500ms"`) |
 * | `herald.io/health-check-timeout`         | seconds, at least 0.1 and at most the interval     |
 * | `herald.io/health-check-rise`            | integer 1-100                                     |
 * | `herald.io/health-check-fall`            | integer 1-100                                     |
 *
 * Tenants write these (docs/security.md): a check probes only the Service's own ready endpoints on this node, never an
 * address the Service names (`herald.io/health-check-address` is refused; an operator's `routes[].healthCheck` may
 * name a host), and no faster than once a second (issue 35 N8). Any other `herald.io/health-check-*` annotation is an
 * error (catches typos).
 */
import type { AnnotationError } from '../k8s/annotations.ts';
import { nonTextAnnotations, textAnnotations } from '../k8s/annotations.ts';
import type { CheckTiming } from './types.ts';

export const ANNOTATION_PREFIX = 'herald.io/health-check-';

/** Exact annotation names. */
export const HealthAnnotation = {
  Type: 'herald.io/health-check-type',
  Port: 'herald.io/health-check-port',
  Path: 'herald.io/health-check-path',
  ExpectedStatus: 'herald.io/health-check-expected-status',
  Interval: 'herald.io/health-check-interval',
  Timeout: 'herald.io/health-check-timeout',
  Rise: 'herald.io/health-check-rise',
  Fall: 'herald.io/health-check-fall',
} as const;

/** The annotation that named an address to probe: refused (a Service's check probes its own endpoints only). */
export const REMOVED_ADDRESS_ANNOTATION = 'herald.io/health-check-address';

/** Shortest interval of a check a Service asks for, seconds (issue 35 N8). */
export const MIN_ANNOTATION_INTERVAL_SEC = 1;
/** Shortest timeout of a check a Service asks for, seconds. */
export const MIN_ANNOTATION_TIMEOUT_SEC = 0.1;

/** A check described by annotations, before targets are known. */
export interface AnnotationCheck extends CheckTiming {
  kind: 'tcp' | 'http' | 'https';
  port: number;
  path?: string;
  expectedStatus?: number[];
}

export type AnnotationParse = { ok: true; check: AnnotationCheck | null } | { ok: false; errors: AnnotationError[] };

/** Longest interval or timeout accepted, seconds. */
export const MAX_DURATION_SEC = 3600;

/**
 * Parse a duration in seconds: `"1"`, `"0.5"`, `"2s"`, `"250ms"`.
 * @throws Error with a specific message for anything else, zero, or more than {@link MAX_DURATION_SEC}
 */
export function parseSeconds(value: string): number {
  const m = /^\s*(\d+(?:\.\d+)?|\.\d+)\s*(ms|s)?\s*$/.exec(value);
  if (!m) throw new Error(`must be a number of seconds such as "1", "0.5", "2s" or "500ms", got ${JSON.stringify(value)}`);
  const sec = Number(m[1]) / (m[2] === 'ms' ? 1000 : 1);
  if (!(sec > 0)) throw new Error(`must be greater than 0, got ${JSON.stringify(value)}`);
  if (sec > MAX_DURATION_SEC) throw new Error(`must be at most ${MAX_DURATION_SEC} seconds, got ${JSON.stringify(value)}`);
  return sec;
}

/**
 * Parse an expected-status list: comma-separated statuses and `lo-hi` ranges, each 100-599.
 * @returns sorted, de-duplicated statuses
 * @throws Error naming the bad element
 */
export function parseStatusList(value: string): number[] {
  const out = new Set<number>();
  const parts = value.split(',').map((p) => p.trim());
  if (parts.length === 0 || parts.every((p) => p === '')) throw new Error('must list at least one status, e.g. "200,204" or "200-299"');
  for (const part of parts) {
    const m = /^(\d{3})(?:\s*-\s*(\d{3}))?$/.exec(part);
    if (!m) throw new Error(`${JSON.stringify(part)} is not a status or a range like "200-299"`);
    const lo = Number(m[1]);
    const hi = m[2] !== undefined ? Number(m[2]) : lo;
    if (lo < 100 || hi > 599) throw new Error(`${JSON.stringify(part)} is outside 100-599`);
    if (hi < lo) throw new Error(`range ${JSON.stringify(part)} is reversed`);
    for (let s = lo; s <= hi; s++) out.add(s);
  }
  return [...out].sort((a, b) => a - b);
}

function parseInteger(value: string, min: number, max: number): number {
  if (!/^\s*\d+\s*$/.test(value)) throw new Error(`must be an integer ${min}-${max}, got ${JSON.stringify(value)}`);
  const n = Number(value);
  if (n < min || n > max) throw new Error(`must be an integer ${min}-${max}, got ${JSON.stringify(value)}`);
  return n;
}

/**
 * Read the health-check annotations of a Service.
 *
 * @param annotations `metadata.annotations` (may be undefined)
 * @param defaults timing used for absent interval/timeout/rise/fall (from config `healthChecks`)
 * @returns `{ok: true, check: null}` when no check is asked for (no annotation, or type `none`);
 *   `{ok: true, check}` for a valid check; `{ok: false, errors}` listing every bad annotation.
 *   Never throws.
 */
export function parseHealthAnnotations(annotations: Record<string, string> | undefined, defaults: CheckTiming): AnnotationParse {
  const a = textAnnotations(annotations);
  const known = new Set<string>(Object.values(HealthAnnotation));
  // A value that is not a string (a manifest's unquoted `herald.io/health-check-port: 8080`) is a bad annotation.
  const errors: AnnotationError[] = nonTextAnnotations(annotations, [...known]);
  const present = Object.keys(a).filter((k) => k.startsWith(ANNOTATION_PREFIX));
  for (const k of present) {
    if (k === REMOVED_ADDRESS_ANNOTATION) {
      errors.push({
        annotation: k,
        value: a[k],
        message: "is not accepted: a Service's health check probes only its own ready endpoints on this node (or kube-proxy's healthCheckNodePort); remove it",
      });
    } else if (!known.has(k)) {
      errors.push({ annotation: k, value: a[k], message: `unknown annotation; known: ${[...known].map((x) => x.slice(ANNOTATION_PREFIX.length)).join(', ')} (prefix ${ANNOTATION_PREFIX})` });
    }
  }
  const type = a[HealthAnnotation.Type]?.trim().toLowerCase();
  if (type === undefined) {
    if (present.length > 0 && errors.length === 0) {
      errors.push({ annotation: HealthAnnotation.Type, value: undefined, message: `is required when other ${ANNOTATION_PREFIX}* annotations are set (tcp, http, https or none)` });
    }
    return errors.length ? { ok: false, errors } : { ok: true, check: null };
  }
  if (type === 'none') return errors.length ? { ok: false, errors } : { ok: true, check: null };
  if (type !== 'tcp' && type !== 'http' && type !== 'https') {
    errors.push({ annotation: HealthAnnotation.Type, value: a[HealthAnnotation.Type], message: 'must be tcp, http, https or none' });
  }
  const field = <T>(name: string, parse: (v: string) => T): T | undefined => {
    const v = a[name];
    if (v === undefined) return undefined;
    try {
      return parse(v);
    } catch (err) {
      errors.push({ annotation: name, value: v, message: (err as Error).message });
      return undefined;
    }
  };
  const port = field(HealthAnnotation.Port, (v) => parseInteger(v, 1, 65535));
  if (annotations?.[HealthAnnotation.Port] === undefined) errors.push({ annotation: HealthAnnotation.Port, value: undefined, message: 'is required (1-65535)' });
  const isHttp = type === 'http' || type === 'https';
  const path = field(HealthAnnotation.Path, (v) => {
    if (!isHttp) throw new Error('applies only to http and https checks');
    if (!v.startsWith('/')) throw new Error(`must start with "/", got ${JSON.stringify(v)}`);
    if ([...v].some((ch) => ch.trim() === '' || ch.charCodeAt(0) < 0x20 || ch.charCodeAt(0) === 0x7f)) throw new Error('must not contain spaces or control characters');
    return v;
  });
  const expectedStatus = field(HealthAnnotation.ExpectedStatus, (v) => {
    if (!isHttp) throw new Error('applies only to http and https checks');
    return parseStatusList(v);
  });
  const floor = (min: number, what: string) => (v: string): number => {
    const sec = parseSeconds(v);
    if (sec < min) throw new Error(`must be at least ${min} s (the shortest ${what} a Service may ask for), got ${JSON.stringify(v)}`);
    return sec;
  };
  const interval = field(HealthAnnotation.Interval, floor(MIN_ANNOTATION_INTERVAL_SEC, 'interval'));
  const timeout = field(HealthAnnotation.Timeout, floor(MIN_ANNOTATION_TIMEOUT_SEC, 'timeout'));
  const intervalSec = interval ?? defaults.intervalSec;
  const timeoutSec = timeout ?? defaults.timeoutSec;
  // Compared once both are good: a value refused above is not compared again.
  const asked = (v: number | undefined, name: string) => v !== undefined || a[name] === undefined;
  if (timeoutSec > intervalSec && (interval !== undefined || timeout !== undefined) && asked(interval, HealthAnnotation.Interval) && asked(timeout, HealthAnnotation.Timeout)) {
    const own = a[HealthAnnotation.Timeout] !== undefined ? HealthAnnotation.Timeout : HealthAnnotation.Interval;
    errors.push({ annotation: own, value: a[own], message: `timeout ${timeoutSec} s must not exceed the interval ${intervalSec} s` });
  }
  const rise = field(HealthAnnotation.Rise, (v) => parseInteger(v, 1, 100)) ?? defaults.rise;
  const fall = field(HealthAnnotation.Fall, (v) => parseInteger(v, 1, 100)) ?? defaults.fall;
  if (errors.length > 0) return { ok: false, errors };
  return {
    ok: true,
    check: {
      kind: type as AnnotationCheck['kind'],
      port: port as number,
      intervalSec,
      timeoutSec,
      rise,
      fall,
      ...(path !== undefined ? { path } : {}),
      ...(expectedStatus !== undefined ? { expectedStatus } : {}),
    },
  };
}
