/**
 * Builders for Kubernetes objects used in tests (raw JSON shapes, as watch events deliver them).
 */
import type { Endpoint, EndpointSlice, Node, Service, ServiceCIDR } from '../../src/k8s/types.ts';

/** Options for `service()`. */
export interface SvcOpts {
  ns?: string;
  type?: string;
  clusterIPs?: string[];
  externalIPs?: string[];
  lbIPs?: string[];
  ipMode?: string;
  etp?: string;
  itp?: string;
  lbClass?: string;
  labels?: Record<string, string>;
}

/** A Service "ns/name" (default type LoadBalancer, namespace "default"). */
export function service(name: string, o: SvcOpts = {}): Service {
  const type = o.type ?? 'LoadBalancer';
  const svc: Service = {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace: o.ns ?? 'default', labels: o.labels ?? {} },
    spec: { type },
  };
  const spec = svc.spec!;
  if (type !== 'ExternalName') {
    const cips = o.clusterIPs ?? ['10.96.0.10'];
    spec.clusterIP = cips[0]!;
    spec.clusterIPs = cips;
  }
  if (o.externalIPs) spec.externalIPs = o.externalIPs;
  if (o.etp) spec.externalTrafficPolicy = o.etp;
  if (o.itp) spec.internalTrafficPolicy = o.itp;
  if (o.lbClass) spec.loadBalancerClass = o.lbClass;
  if (o.lbIPs) svc.status = { loadBalancer: { ingress: o.lbIPs.map((ip) => (o.ipMode ? { ip, ipMode: o.ipMode } : { ip })) } };
  return svc;
}

/** Endpoint shorthand: [address, nodeName, conditions?]. */
export type EpSpec = [string, string | undefined, Endpoint['conditions']?];

/** An EndpointSlice for Service `svc` (namespace default unless `ns`). */
export function slice(name: string, svc: string, eps: EpSpec[], o: { ns?: string; addressType?: string } = {}): EndpointSlice {
  const addressType = o.addressType ?? (eps[0]?.[0].includes(':') ? 'IPv6' : 'IPv4');
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name, namespace: o.ns ?? 'default', labels: { 'kubernetes.io/service-name': svc } },
    addressType,
    endpoints: eps.map(([addr, nodeName, conditions]) => {
      const e: Endpoint = { addresses: [addr] };
      if (nodeName !== undefined) e.nodeName = nodeName;
      if (conditions !== undefined) e.conditions = conditions;
      return e;
    }),
  };
}

/** Options for `node()`. */
export interface NodeOpts {
  labels?: Record<string, string>;
  ready?: string;
  networkUnavailable?: string;
  taints?: Array<{ key: string; value?: string; effect: string }>;
  deleting?: boolean;
  unschedulable?: boolean;
  annotations?: Record<string, string>;
  /** `status.addresses`, e.g. `[{ type: 'InternalIP', address: '10.0.0.5' }]`. */
  addresses?: Array<{ type: string; address: string }>;
}

/** A Node with a Ready=True condition unless overridden. */
export function node(name: string, o: NodeOpts = {}): Node {
  const conditions = [{ type: 'Ready', status: o.ready ?? 'True' }];
  if (o.networkUnavailable) conditions.push({ type: 'NetworkUnavailable', status: o.networkUnavailable });
  const n: Node = {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, labels: o.labels ?? {} },
    spec: {},
    status: { conditions },
  };
  if (o.taints) n.spec!.taints = o.taints;
  if (o.unschedulable) n.spec!.unschedulable = true;
  if (o.deleting) n.metadata!.deletionTimestamp = '2026-01-01T00:00:00Z';
  if (o.annotations) n.metadata!.annotations = o.annotations;
  if (o.addresses) n.status!.addresses = o.addresses;
  return n;
}

/** A ServiceCIDR object. */
export function serviceCIDR(name: string, cidrs: string[]): ServiceCIDR {
  return { apiVersion: 'networking.k8s.io/v1', kind: 'ServiceCIDR', metadata: { name }, spec: { cidrs } };
}
