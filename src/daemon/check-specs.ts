/**
 * Which health checks gate what on this node (docs/health-checks.md), as check specs for the health manager:
 * - from the configuration: each static route's `healthCheck` (gate `route:<prefix>`) and kube-proxy's node health
 *   (`/healthz`, scope node: while it fails nothing is announced);
 * - from a Service's candidates (src/controller/desired-routes.ts): for each candidate VIP, kube-proxy's per-Service
 *   health server (externalTrafficPolicy Local with a healthCheckNodePort) and the `herald.io/health-check-*`
 *   annotations, probing the VIP's local ready endpoints (the rule of src/controller/endpoints.ts).
 *
 * A check that applies but cannot be built from its inputs becomes an invalid spec: its gate fails closed (no new
 * announcement; an announced route stays until fixed), with `InvalidCheck` (bad annotations) or `NodeAddressUnknown`
 * (no node address of the VIP's family to probe kube-proxy on, none for its node check, a checked static route with
 * nothing to probe; docs/decisions.md "Node addresses").
 */
import type { Config, StaticRouteConfig } from '../config/schema.ts';
import type { RuntimeIdentity } from '../config/load.ts';
import type { ServiceCandidates } from '../controller/desired-routes.ts';
import type { CheckSpec, CheckTiming } from '../health/types.ts';
import { formatAnnotationErrors } from '../k8s/annotations.ts';
import { parseHealthAnnotations } from '../health/annotations.ts';
import { invalidCheck, kubeProxyNodeCheck, kubeProxyServiceCheck, nodeAddressFor, serviceAnnotationCheck, staticRouteCheck, timingFromConfig } from '../health/specs.ts';
import { HealthCode } from '../health/types.ts';
import { ipFamilyOf } from '../net/address.ts';
import type { IpFamily } from '../net/address.ts';
import { gateKeyText, routeGate, serviceGate } from './gate-key.ts';

/** The configuration-derived inputs of every check spec. */
export interface CheckContext {
  /**
   * This node's addresses (at most one per IP family), probed for kube-proxy's health servers and checked static
   * routes without a host; undefined while they are not known yet (the Node object has not been read).
   */
  readonly nodeAddresses: readonly string[] | undefined;
  /** Default timing (config `healthChecks`). */
  readonly timing: CheckTiming;
  readonly kubeProxy: {
    /** Probe kube-proxy at all ({@link kubeProxyEnabled}). */
    readonly enabled: boolean;
    /** Probe the healthCheckNodePort of externalTrafficPolicy Local Services. */
    readonly checkServices: boolean;
    /** kube-proxy's node health port. */
    readonly healthzPort: number;
  };
}

/**
 * Whether kube-proxy's health endpoints are probed: `kubeProxy.enabled` when set, else only with the Kubernetes
 * source (a manifests-driven plain Linux host has no kube-proxy unless the operator says so).
 */
export function kubeProxyEnabled(cfg: Config): boolean {
  if (!cfg.source) return false;
  return cfg.kubeProxy.enabled ?? cfg.source.kubernetes !== undefined;
}

/**
 * This node's probe addresses (docs/decisions.md "Node addresses"): for each IP family the `--node-ip` / `node.ip`
 * address of that family, else the Node object's InternalIP of that family. `node` undefined: the Node has not been
 * read (no source: only the overrides count, and they are all there is).
 */
export function nodeAddresses(overrides: readonly string[], node: Partial<Record<IpFamily, string>> | undefined): string[] {
  const out: string[] = [];
  for (const family of ['IPv4', 'IPv6'] as const) {
    const a = overrides.find((x) => ipFamilyOf(x) === family) ?? node?.[family];
    if (a !== undefined) out.push(a);
  }
  return out;
}

/**
 * The check context of a configuration on this node; `node`: the Node object's InternalIPs (undefined while it has
 * not been read, with a source).
 */
export function checkContext(cfg: Config, identity: RuntimeIdentity, node?: Partial<Record<IpFamily, string>>): CheckContext {
  const known = node !== undefined || cfg.source === undefined;
  return {
    nodeAddresses: known ? nodeAddresses(identity.nodeIps, node) : undefined,
    timing: timingFromConfig(cfg.healthChecks),
    kubeProxy: { enabled: kubeProxyEnabled(cfg), checkServices: cfg.kubeProxy.checkServices, healthzPort: cfg.kubeProxy.healthzPort },
  };
}

/** Check specs from the configuration alone: static routes' checks, then kube-proxy's node check. */
export function configCheckSpecs(ctx: CheckContext, routes: readonly StaticRouteConfig[]): CheckSpec[] {
  const specs: CheckSpec[] = [];
  for (const r of routes) {
    if (!r.healthCheck) continue;
    const gate = gateKeyText(routeGate(r.prefix));
    const host = r.healthCheck.host ?? nodeAddressFor(r.prefix, ctx.nodeAddresses ?? []) ?? undefined;
    if (host === undefined) {
      // A route meant to be checked is never announced unchecked: the gate fails closed, with the reason.
      const why = ctx.nodeAddresses === undefined ? 'the Node object has not been read yet' : `this node has no address of the family of ${r.prefix}`;
      specs.push(invalidCheck(`route:${gate}`, gate, `no address to probe: ${why}; set healthCheck.host, node.ip or --node-ip`, HealthCode.NodeAddressUnknown));
      continue;
    }
    specs.push(staticRouteCheck({ gate, check: { ...r.healthCheck, host }, defaults: ctx.timing, nodeIP: host }));
  }
  if (ctx.kubeProxy.enabled && ctx.nodeAddresses !== undefined) {
    // kube-proxy's node health gates everything; without a node address it cannot be probed: fail closed.
    specs.push(
      ctx.nodeAddresses.length > 0
        ? kubeProxyNodeCheck({ nodeIPs: ctx.nodeAddresses, port: ctx.kubeProxy.healthzPort, timing: ctx.timing })
        : { ...invalidCheck('kube-proxy-node', '', NO_NODE_ADDRESS, HealthCode.NodeAddressUnknown), scope: 'node' },
    );
  }
  return specs;
}

const NO_NODE_ADDRESS = "kube-proxy's health cannot be probed: this node has no address (no InternalIP in the Node's status.addresses, no --node-ip or node.ip)";

/** Check specs gating the candidate VIPs of one Service (none for VIPs blocked by another rule). */
export function serviceCheckSpecs(ctx: CheckContext, candidates: ServiceCandidates): CheckSpec[] {
  const out: CheckSpec[] = [];
  const svc = candidates.object;
  const spec = svc.spec ?? {};
  const clusterIPs = spec.clusterIPs ?? [spec.clusterIP];
  const port = spec.healthCheckNodePort;
  const kubeProxyApplies = ctx.kubeProxy.enabled && ctx.kubeProxy.checkServices && spec.externalTrafficPolicy === 'Local' && port !== undefined && port > 0;
  let annotations: ReturnType<typeof parseHealthAnnotations> | undefined;
  const seen = new Set<string>();
  for (const v of candidates.vips) {
    if (!v.candidate) continue;
    const address = v.decision.address;
    const gate = gateKeyText(serviceGate(candidates.service, address));
    if (seen.has(gate)) continue; // the same address as two kinds of VIP: one gate
    seen.add(gate);
    if (kubeProxyApplies && port !== undefined && !clusterIPs.includes(address)) {
      // kube-proxy's server is probed on the node address of the VIP's family; without one the check applies but
      // cannot be built: the VIP fails closed (not newly announced; an announced route follows the fall rule).
      const host = nodeAddressFor(address, ctx.nodeAddresses ?? []);
      out.push(
        host !== null
          ? kubeProxyServiceCheck({ gate, nodeIP: host, healthCheckNodePort: port, timing: ctx.timing })
          : invalidCheck(
              `kube-proxy-service:${gate}`,
              gate,
              `kube-proxy's health server (healthCheckNodePort ${port}) cannot be probed: this node has no ${ipFamilyOf(address) ?? ''} address (no such InternalIP in the Node's status.addresses, no --node-ip or node.ip of that family)`,
              HealthCode.NodeAddressUnknown,
            ),
      );
    }
    annotations ??= parseHealthAnnotations(svc.metadata?.annotations, ctx.timing);
    if (!annotations.ok) {
      out.push(invalidCheck(`annotation:${gate}`, gate, formatAnnotationErrors(annotations.errors)));
    } else if (annotations.check) {
      // null: nothing to probe on this node (no local endpoint and no address): no check.
      const check = serviceAnnotationCheck({ gate, check: annotations.check, localEndpoints: v.endpoints?.localAddresses ?? [] });
      if (check) out.push(check);
    }
  }
  return out;
}
