/**
 * Builders for Kubernetes objects used in tests (raw JSON shapes, as watch events deliver them).
 */
import type { Endpoint, EndpointSlice, Node, Service, ServiceCIDR } from '../../src/k8s/types.ts';
import type { HeraldObject } from '../../src/k8s/herald-kinds.ts';
import { SERVICE_NAME_LABEL } from '../../src/k8s/types.ts';

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
  // As served: spec fields Herald does not read (unschedulable, a taint's effect) are there too.
  const spec: { taints?: NonNullable<NodeOpts['taints']>; unschedulable?: boolean } = {};
  if (o.taints) spec.taints = o.taints;
  if (o.unschedulable) spec.unschedulable = true;
  const n: Node = { apiVersion: 'v1', kind: 'Node', metadata: { name, labels: o.labels ?? {} }, spec, status: { conditions } };
  if (o.deleting) n.metadata!.deletionTimestamp = '2026-01-01T00:00:00Z';
  if (o.annotations) n.metadata!.annotations = o.annotations;
  if (o.addresses) n.status!.addresses = o.addresses;
  return n;
}

/** A ServiceCIDR object. */
export function serviceCIDR(name: string, cidrs: string[]): ServiceCIDR {
  return { apiVersion: 'networking.k8s.io/v1', kind: 'ServiceCIDR', metadata: { name }, spec: { cidrs } };
}

/** One of Herald's objects (herald.io/v1alpha1) "herald-system/name" with this spec. */
export function heraldObject(kind: string, name: string, spec: unknown, o: { ns?: string; generation?: number } = {}): HeraldObject {
  return { apiVersion: 'herald.io/v1alpha1', kind, metadata: { name, namespace: o.ns ?? 'herald-system', ...(o.generation !== undefined ? { generation: o.generation } : {}) }, spec };
}

// ---------------------------------------------------------------------------------------------------------------
// Objects as a real cluster serves them. A kube-apiserver answers with much more than Herald reads: managedFields
// (server-side field ownership), the last-applied annotation of `kubectl apply`, Helm's labels and annotations,
// owner references, the controller's annotations and labels, Pod references, Node images and capacities. The
// shapes below follow what kube-apiserver 1.37 serves for a Helm-installed Service, the EndpointSlice the
// EndpointSlice controller writes for it, and a kubeadm Node with a kubelet (test/control-plane/ shows the real
// ones): benchmarks use them for realistic sizes, tests to show the cache drops what Herald does not read.
// ---------------------------------------------------------------------------------------------------------------

const SERVED_TIME = '2026-11-30T08:00:00Z';

function managedEntry(manager: string, fields: object, subresource?: string): Record<string, unknown> {
  return { manager, operation: 'Update', apiVersion: 'v1', time: SERVED_TIME, fieldsType: 'FieldsV1', fieldsV1: fields, ...(subresource ? { subresource } : {}) };
}

/** Helm's and the app's labels of release `name`. */
function releaseLabels(name: string): Record<string, string> {
  return {
    'app.kubernetes.io/name': name,
    'app.kubernetes.io/instance': `${name}-prod`,
    'app.kubernetes.io/version': '1.27.3',
    'app.kubernetes.io/component': 'server',
    'app.kubernetes.io/part-of': 'storefront',
    'app.kubernetes.io/managed-by': 'Helm',
    'helm.sh/chart': `${name}-4.12.0`,
  };
}

/**
 * `svc` (a `service()` result) as kube-apiserver serves it after `helm install` / `kubectl apply`: uid, generation,
 * Helm labels and annotations, the last-applied annotation, managedFields of the client and of the status writer,
 * two ports with node ports, a selector, the defaulted spec fields and, with externalTrafficPolicy Local, a
 * healthCheckNodePort. `i` varies the numbers.
 */
export function servedService(svc: Service, i = 0): Service {
  const name = svc.metadata?.name ?? 'svc';
  const ns = svc.metadata?.namespace ?? 'default';
  const labels = { ...releaseLabels(name), ...(svc.metadata?.labels ?? {}) };
  const selector = { 'app.kubernetes.io/name': name, 'app.kubernetes.io/instance': `${name}-prod` };
  const ports = [
    { name: 'http', protocol: 'TCP', port: 80, targetPort: 'http', nodePort: 30000 + ((2 * i) % 2767) },
    { name: 'https', protocol: 'TCP', port: 443, targetPort: 'https', nodePort: 30001 + ((2 * i) % 2767) },
  ];
  const spec = svc.spec ?? {};
  const local = spec.externalTrafficPolicy === 'Local';
  const applied = { apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: ns, labels, annotations: { 'meta.helm.sh/release-name': `${name}-prod`, 'meta.helm.sh/release-namespace': ns } }, spec: { type: spec.type, ports: ports.map(({ nodePort: _n, ...p }) => p), selector, externalTrafficPolicy: spec.externalTrafficPolicy ?? 'Cluster' } };
  const metadata = {
    name,
    namespace: ns,
    uid: `5f0c${String(i).padStart(4, '0')}-8d2e-4c59-9a41-7e3b2f6d${String(i % 10000).padStart(4, '0')}`,
    labels,
    annotations: {
      'meta.helm.sh/release-name': `${name}-prod`,
      'meta.helm.sh/release-namespace': ns,
      'kubectl.kubernetes.io/last-applied-configuration': JSON.stringify(applied) + '\n',
      ...(svc.metadata?.annotations ?? {}),
    },
    managedFields: [
      managedEntry('helm', {
        'f:metadata': { 'f:annotations': { '.': {}, 'f:meta.helm.sh/release-name': {}, 'f:meta.helm.sh/release-namespace': {}, 'f:kubectl.kubernetes.io/last-applied-configuration': {} }, 'f:labels': Object.fromEntries([['.', {}], ...Object.keys(labels).map((k) => [`f:${k}`, {}])]) },
        'f:spec': {
          'f:allocateLoadBalancerNodePorts': {},
          'f:externalTrafficPolicy': {},
          'f:internalTrafficPolicy': {},
          'f:ports': { '.': {}, 'k:{"port":80,"protocol":"TCP"}': { '.': {}, 'f:name': {}, 'f:port': {}, 'f:protocol': {}, 'f:targetPort': {} }, 'k:{"port":443,"protocol":"TCP"}': { '.': {}, 'f:name': {}, 'f:port': {}, 'f:protocol': {}, 'f:targetPort': {} } },
          'f:selector': {},
          'f:sessionAffinity': {},
          'f:type': {},
        },
      }),
      managedEntry('herald-allocator', { 'f:status': { 'f:loadBalancer': { 'f:ingress': {} } } }, 'status'),
    ],
  };
  const fullSpec = {
    ...spec,
    ports,
    selector,
    sessionAffinity: 'None',
    ipFamilies: spec.ipFamilies ?? ['IPv4'],
    ipFamilyPolicy: spec.ipFamilyPolicy ?? 'SingleStack',
    internalTrafficPolicy: spec.internalTrafficPolicy ?? 'Cluster',
    externalTrafficPolicy: spec.externalTrafficPolicy ?? 'Cluster',
    ...(spec.type === 'LoadBalancer' ? { allocateLoadBalancerNodePorts: true } : {}),
    ...(local && spec.healthCheckNodePort === undefined ? { healthCheckNodePort: 32000 + (i % 767) } : {}),
  };
  return { apiVersion: 'v1', kind: 'Service', metadata, spec: fullSpec, status: svc.status ?? { loadBalancer: {} } };
}

/**
 * `s` (a `slice()` result) as the EndpointSlice controller writes it: generateName, owner reference to its Service,
 * the controller's labels (with the Service's labels copied) and trigger-time annotation, managedFields, and per
 * endpoint a Pod reference, a zone and all three conditions; ports of the Service.
 */
export function servedSlice(s: EndpointSlice, i = 0): EndpointSlice {
  const svc = s.metadata?.labels?.[SERVICE_NAME_LABEL] ?? 'svc';
  const ns = s.metadata?.namespace ?? 'default';
  const metadata = {
    name: s.metadata?.name,
    namespace: ns,
    generateName: `${svc}-`,
    uid: `9a7b${String(i).padStart(4, '0')}-1c2d-4e5f-8a9b-0c1d2e3f${String(i % 10000).padStart(4, '0')}`,
    generation: 1,
    labels: { ...releaseLabels(svc), 'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.k8s.io', [SERVICE_NAME_LABEL]: svc },
    annotations: { 'endpoints.kubernetes.io/last-change-trigger-time': SERVED_TIME },
    ownerReferences: [{ apiVersion: 'v1', kind: 'Service', name: svc, uid: `5f0c${String(i).padStart(4, '0')}-8d2e-4c59-9a41-7e3b2f6d${String(i % 10000).padStart(4, '0')}`, controller: true, blockOwnerDeletion: true }],
    managedFields: [
      managedEntry('kube-controller-manager', {
        'f:addressType': {},
        'f:endpoints': {},
        'f:metadata': { 'f:annotations': { '.': {}, 'f:endpoints.kubernetes.io/last-change-trigger-time': {} }, 'f:generateName': {}, 'f:labels': { '.': {}, 'f:endpointslice.kubernetes.io/managed-by': {}, [`f:${SERVICE_NAME_LABEL}`]: {} }, 'f:ownerReferences': { '.': {}, 'k:{"uid":"…"}': {} } },
        'f:ports': {},
      }),
    ],
  };
  const endpoints = (s.endpoints ?? []).map((e, k) => ({
    ...e,
    conditions: { ready: e.conditions?.ready ?? true, serving: e.conditions?.serving ?? e.conditions?.ready ?? true, terminating: e.conditions?.terminating ?? false },
    targetRef: { kind: 'Pod', namespace: ns, name: `${svc}-7d9f8c6b5-${String(k).padStart(5, 'x')}`, uid: `c3d4${String(i).padStart(4, '0')}-5e6f-4a7b-8c9d-${String(k).padStart(12, '0')}` },
    ...(e.nodeName !== undefined ? { zone: `zone-${e.nodeName.length % 3}` } : {}),
  }));
  const ports = [
    { name: 'http', protocol: 'TCP', port: 8080 },
    { name: 'https', protocol: 'TCP', port: 8443 },
  ];
  // Built apart: as served, the slice has fields (ports) that EndpointSlice, the kept shape, has not.
  const served = { apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata, addressType: s.addressType, endpoints, ports };
  return served;
}

/**
 * `n` (a `node()` result) as a kubelet keeps it: kubeadm's and the kubelet's labels and annotations, podCIDRs,
 * capacity and allocatable, the five conditions with heartbeats and messages, addresses, daemon endpoints, node info,
 * 30 container images, managedFields of kubelet, kube-controller-manager and kubeadm.
 */
export function servedNode(n: Node, ip = '192.0.2.10'): Node {
  const name = n.metadata?.name ?? 'node';
  const cond = (type: string, status: string, reason: string, message: string) => ({ type, status, lastHeartbeatTime: SERVED_TIME, lastTransitionTime: SERVED_TIME, reason, message });
  const ready = n.status?.conditions?.find((c) => c.type === 'Ready')?.status ?? 'True';
  const conditions = [
    cond('MemoryPressure', 'False', 'KubeletHasSufficientMemory', 'kubelet has sufficient memory available'),
    cond('DiskPressure', 'False', 'KubeletHasNoDiskPressure', 'kubelet has no disk pressure'),
    cond('PIDPressure', 'False', 'KubeletHasSufficientPID', 'kubelet has sufficient PID available'),
    ...(n.status?.conditions ?? []).filter((c) => c.type !== 'Ready').map((c) => cond(c.type ?? '', c.status ?? '', 'Set', 'set by the test')),
    cond('Ready', ready, ready === 'True' ? 'KubeletReady' : 'KubeletNotReady', ready === 'True' ? 'kubelet is posting ready status' : 'container runtime network not ready'),
  ];
  const images = Array.from({ length: 30 }, (_, k) => ({
    names: [`registry.example.com/team-${k % 7}/app-${k}@sha256:${'0123456789abcdef'.repeat(4)}`, `registry.example.com/team-${k % 7}/app-${k}:v${k}.2.1`],
    sizeBytes: 12_000_000 + k * 1_234_567,
  }));
  const metadata = {
    name,
    uid: `1b2c3d4e-0000-4000-8000-${name.padStart(12, '0').slice(-12)}`,
    labels: {
      'beta.kubernetes.io/arch': 'amd64',
      'beta.kubernetes.io/os': 'linux',
      'kubernetes.io/arch': 'amd64',
      'kubernetes.io/hostname': name,
      'kubernetes.io/os': 'linux',
      'node-role.kubernetes.io/infra': '',
      'topology.kubernetes.io/zone': 'zone-a',
      'topology.kubernetes.io/region': 'dc1',
      ...(n.metadata?.labels ?? {}),
    },
    annotations: {
      'kubeadm.alpha.kubernetes.io/cri-socket': 'unix:///run/containerd/containerd.sock',
      'node.alpha.kubernetes.io/ttl': '0',
      'volumes.kubernetes.io/controller-managed-attach-detach': 'true',
      'csi.volume.kubernetes.io/nodeid': JSON.stringify({ 'csi.example.com': name }),
      ...(n.metadata?.annotations ?? {}),
    },
    ...(n.metadata?.deletionTimestamp !== undefined ? { deletionTimestamp: n.metadata.deletionTimestamp } : {}),
    managedFields: [
      managedEntry('kubeadm', { 'f:metadata': { 'f:annotations': { 'f:kubeadm.alpha.kubernetes.io/cri-socket': {} }, 'f:labels': { 'f:node-role.kubernetes.io/infra': {} } } }),
      managedEntry('kube-controller-manager', { 'f:metadata': { 'f:annotations': { 'f:node.alpha.kubernetes.io/ttl': {} } }, 'f:spec': { 'f:podCIDR': {}, 'f:podCIDRs': { '.': {}, 'v:"10.244.3.0/24"': {} } } }),
      managedEntry('kubelet', { 'f:status': { 'f:conditions': Object.fromEntries(conditions.map((c) => [`k:{"type":"${c.type}"}`, { 'f:lastHeartbeatTime': {}, 'f:message': {}, 'f:reason': {}, 'f:status': {} }])), 'f:images': {}, 'f:nodeInfo': { 'f:bootID': {}, 'f:kernelVersion': {} } } }, 'status'),
    ],
  };
  const spec = { ...(n.spec ?? {}), podCIDR: '10.244.3.0/24', podCIDRs: ['10.244.3.0/24'] };
  const status = {
    capacity: { cpu: '32', 'ephemeral-storage': '479152840Ki', 'hugepages-1Gi': '0', 'hugepages-2Mi': '0', memory: '131886576Ki', pods: '110' },
    allocatable: { cpu: '32', 'ephemeral-storage': '441587879290', 'hugepages-1Gi': '0', 'hugepages-2Mi': '0', memory: '131784176Ki', pods: '110' },
    conditions,
    addresses: [
      { type: 'InternalIP', address: ip },
      { type: 'Hostname', address: name },
    ],
    daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
    nodeInfo: { machineID: 'f00d'.repeat(8), systemUUID: '4c4c4544-0042-3510-8051-b4c04f4e4d32', bootID: '2f1e0d9c-8b7a-4654-9321-0fedcba98765', kernelVersion: '6.12.0-1-amd64', osImage: 'Debian GNU/Linux 13 (trixie)', containerRuntimeVersion: 'containerd://2.1.4', kubeletVersion: 'v1.37.2', kubeProxyVersion: '', operatingSystem: 'linux', architecture: 'amd64' },
    images,
  };
  return { apiVersion: 'v1', kind: 'Node', metadata, spec, status };
}

/**
 * The documentation address blocks (RFC 5737: 192.0.2.0/24, 198.51.100.0/24, 203.0.113.0/24; RFC 3849: 2001:db8::/32):
 * the space tests declare as `allowedPrefixes` when the LoadBalancer and external addresses they announce are drawn
 * from it (docs/decisions.md "Allowed address space": nothing outside pools and allowedPrefixes is announced).
 */
export const DOCUMENTATION_PREFIXES: string[] = ['192.0.2.0/24', '198.51.100.0/24', '203.0.113.0/24', '2001:db8::/32'];
