/**
 * Builders from Kubernetes objects and configuration to {@link CheckSpec}s, and the defaults.
 *
 * Check keys are stable strings so that `HealthManager.setChecks` keeps state across reconciles:
 * - `kube-proxy-node`                         node `/healthz` (scope node)
 * - `kube-proxy-service:<gate>`               `healthCheckNodePort` probe of a VIP
 * - `annotation:<gate>`                       per-Service annotation check of a VIP
 * - `route:<gate>`                            static-route check
 */
import type { AnnotationCheck } from './annotations.ts';
import type { FlapControlParams } from './flap-damper.ts';
import type { CheckSpec, CheckTiming, InvalidCheckCode } from './types.ts';
import { HealthCode } from './types.ts';
import { BlockList } from 'node:net';
import { addressValue, ipFamilyOf } from '../net/address.ts';

/**
 * Default timing (config `healthChecks`): interval 5 s, timeout 2 s, rise 2, fall 3.
 * Must match the defaults of the config schema (src/config/schema.ts).
 */
export const DEFAULT_CHECK_TIMING: Readonly<CheckTiming> = Object.freeze({ intervalSec: 5, timeoutSec: 2, rise: 2, fall: 3 });

/** kube-proxy's default node health port (`--healthz-bind-address` 0.0.0.0:10256). */
export const DEFAULT_KUBE_PROXY_HEALTHZ_PORT = 10256;

/** Config `healthChecks: {interval, timeout, rise, fall}` (seconds) → {@link CheckTiming}. Missing fields take defaults. */
export function timingFromConfig(c: { interval?: number; timeout?: number; rise?: number; fall?: number } | undefined): CheckTiming {
  return {
    intervalSec: c?.interval ?? DEFAULT_CHECK_TIMING.intervalSec,
    timeoutSec: c?.timeout ?? DEFAULT_CHECK_TIMING.timeoutSec,
    rise: c?.rise ?? DEFAULT_CHECK_TIMING.rise,
    fall: c?.fall ?? DEFAULT_CHECK_TIMING.fall,
  };
}

/** Config `flapControl` (seconds) → {@link FlapControlParams} (only the fields present). */
export function flapControlFromConfig(
  c: { holdDown?: number; penalty?: number; suppressThreshold?: number; reuseThreshold?: number; halfLife?: number; maxSuppress?: number } | undefined,
): Partial<FlapControlParams> {
  const out: Partial<FlapControlParams> = {};
  if (c?.holdDown !== undefined) out.holdDownSec = c.holdDown;
  if (c?.penalty !== undefined) out.penalty = c.penalty;
  if (c?.suppressThreshold !== undefined) out.suppressThreshold = c.suppressThreshold;
  if (c?.reuseThreshold !== undefined) out.reuseThreshold = c.reuseThreshold;
  if (c?.halfLife !== undefined) out.halfLifeSec = c.halfLife;
  if (c?.maxSuppress !== undefined) out.maxSuppressSec = c.maxSuppress;
  return out;
}

/**
 * Pick the node address of the VIP's family (docs/decisions.md: probes go to the node address of the VIP's family).
 * @param vip IPv4 or IPv6 address (a `/len` suffix is ignored)
 * @param nodeAddresses the node's InternalIPs, in preference order
 * @returns the first address of the same family, or null
 */
export function nodeAddressFor(vip: string, nodeAddresses: readonly string[]): string | null {
  const fam = ipFamilyOf(vip.split('/')[0] ?? '');
  if (fam === undefined) return null;
  return nodeAddresses.find((a) => ipFamilyOf(a) === fam) ?? null;
}

/**
 * The probe of kube-proxy's per-Service health server for an externalTrafficPolicy Local
 * LoadBalancer Service: `GET http://<nodeIP>:<healthCheckNodePort>/health`.
 * (Kubernetes: `spec.healthCheckNodePort`; kube-proxy `pkg/proxy/healthcheck/service_health.go`.)
 */
export function kubeProxyServiceCheck(o: { gate: string; nodeIP: string; healthCheckNodePort: number; timing?: CheckTiming; key?: string }): CheckSpec {
  return { key: o.key ?? `kube-proxy-service:${o.gate}`, gate: o.gate, kind: 'kube-proxy-service', hosts: [o.nodeIP], port: o.healthCheckNodePort, path: '/health', ...(o.timing ?? DEFAULT_CHECK_TIMING) };
}

/**
 * kube-proxy node health (`GET http://<nodeIP>:10256/healthz`), scope node: while it is down nothing
 * is announced from this node. Several addresses (dual-stack) pass if any answers 200.
 */
export function kubeProxyNodeCheck(o: { nodeIPs: string | readonly string[]; port?: number; timing?: CheckTiming; key?: string }): CheckSpec {
  const hosts = typeof o.nodeIPs === 'string' ? [o.nodeIPs] : [...o.nodeIPs];
  return { key: o.key ?? 'kube-proxy-node', gate: '', scope: 'node', kind: 'kube-proxy-node', hosts, port: o.port ?? DEFAULT_KUBE_PROXY_HEALTHZ_PORT, path: '/healthz', ...(o.timing ?? DEFAULT_CHECK_TIMING) };
}

/** Addresses no Service endpoint may make Herald probe from the host network (docs/security.md). */
const NOT_PROBED = (() => {
  const b = new BlockList();
  b.addSubnet('0.0.0.0', 8, 'ipv4'); // "this network", the unspecified address
  b.addSubnet('127.0.0.0', 8, 'ipv4'); // loopback
  b.addSubnet('169.254.0.0', 16, 'ipv4'); // link-local, cloud metadata
  b.addSubnet('224.0.0.0', 4, 'ipv4'); // multicast
  b.addAddress('255.255.255.255', 'ipv4'); // limited broadcast
  b.addAddress('::', 'ipv6');
  b.addAddress('::1', 'ipv6');
  b.addSubnet('fe80::', 10, 'ipv6');
  b.addSubnet('ff00::', 8, 'ipv6');
  return b;
})();

/** ::ffff:0:0/96, IPv4-mapped IPv6 addresses: the IPv4 rules through another door (apart: BlockList maps them). */
const isMapped = (address: string): boolean => {
  const v = addressValue(address);
  return v?.family === 'IPv6' && v.value >> 32n === 0xffffn;
};

/**
 * Why an endpoint address is not probed (unspecified, loopback, link-local, multicast, broadcast, IPv4-mapped, a zone
 * id, not an address), or undefined when it may be: the address rules of the config's next hops and node addresses.
 */
export function unprobedAddress(address: string): string | undefined {
  const family = ipFamilyOf(address);
  if (family === undefined) return address.includes('%') ? 'an address with a zone id' : 'not an IP address';
  return isMapped(address) || NOT_PROBED.check(address, family === 'IPv4' ? 'ipv4' : 'ipv6') ? 'an unspecified, loopback, link-local, multicast, broadcast or IPv4-mapped address' : undefined;
}

/**
 * A per-Service check from annotations ({@link parseHealthAnnotations}): it probes the Service's own ready endpoints
 * on this node, and nothing else (docs/security.md).
 * @param localEndpoints the Service's ready local endpoint IPs
 * @returns the spec; an invalid spec (fail closed) when every local endpoint is an address Herald does not probe
 *   ({@link unprobedAddress}); null when there is no local endpoint to probe
 */
export function serviceAnnotationCheck(o: { gate: string; check: AnnotationCheck; localEndpoints: readonly string[]; key?: string }): CheckSpec | null {
  const all = [...new Set(o.localEndpoints)];
  if (all.length === 0) return null;
  const key = o.key ?? `annotation:${o.gate}`;
  const hosts = all.filter((a) => unprobedAddress(a) === undefined);
  if (hosts.length === 0) {
    const first = all[0] as string;
    return invalidCheck(key, o.gate, `no local endpoint Herald may probe: ${JSON.stringify(first)} is ${unprobedAddress(first)}${all.length > 1 ? `, and so are the other ${all.length - 1}` : ''}`);
  }
  const c = o.check;
  return {
    key,
    gate: o.gate,
    kind: c.kind,
    hosts,
    port: c.port,
    intervalSec: c.intervalSec,
    timeoutSec: c.timeoutSec,
    rise: c.rise,
    fall: c.fall,
    ...(c.path !== undefined ? { path: c.path } : {}),
    ...(c.expectedStatus !== undefined ? { expectedStatus: c.expectedStatus } : {}),
  };
}

/** Static route `healthCheck` config (seconds), as in the config schema. */
export interface RouteHealthCheckConfig {
  kind?: 'tcp' | 'http' | 'https';
  host?: string;
  port: number;
  path?: string;
  expectedStatus?: number[];
  interval?: number;
  timeout?: number;
  rise?: number;
  fall?: number;
}

/**
 * A static route's check: probes `host`, else the node IP.
 * @param defaults config `healthChecks` timing
 */
export function staticRouteCheck(o: { gate: string; check: RouteHealthCheckConfig; defaults?: CheckTiming; nodeIP: string; key?: string }): CheckSpec {
  const d = o.defaults ?? DEFAULT_CHECK_TIMING;
  const c = o.check;
  return {
    key: o.key ?? `route:${o.gate}`,
    gate: o.gate,
    kind: c.kind ?? 'tcp',
    hosts: [c.host ?? o.nodeIP],
    port: c.port,
    intervalSec: c.interval ?? d.intervalSec,
    timeoutSec: c.timeout ?? d.timeoutSec,
    rise: c.rise ?? d.rise,
    fall: c.fall ?? d.fall,
    ...(c.path !== undefined ? { path: c.path } : {}),
    ...(c.expectedStatus !== undefined ? { expectedStatus: [...c.expectedStatus] } : {}),
  };
}

/**
 * A placeholder spec for a check that applies but could not be built: the gate fails closed with `code` (default
 * `InvalidCheck`) and `message`.
 */
export function invalidCheck(key: string, gate: string, message: string, code: InvalidCheckCode = HealthCode.InvalidCheck): CheckSpec {
  return { key, gate, kind: 'tcp', hosts: [], port: 0, ...DEFAULT_CHECK_TIMING, error: message, ...(code !== HealthCode.InvalidCheck ? { errorCode: code } : {}) };
}
