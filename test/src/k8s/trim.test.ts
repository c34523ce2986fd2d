// The keep-list of src/k8s/trim.ts against what the code reads: every consumer of Kubernetes objects (the controller's
// desired routes with every advertisement feature, node eligibility, the health gate's check specs, per-Service
// attributes, IPAM's plan) runs on objects as a real cluster serves them, wrapped in proxies that record each field
// read; every field read must survive trimming. A new read of a field the trimmer drops fails here, naming the field.
// The controller's, daemon's and sources' own tests run on trimmed objects too: ObjectStore.apply trims.
import t from 'tap';
import { computeDesiredRoutes, decideService } from '../../../src/controller/desired-routes.ts';
import type { DesiredRoutesContext } from '../../../src/controller/desired-routes.ts';
import { evaluateNode } from '../../../src/controller/node-eligibility.ts';
import { parseServiceAttributes } from '../../../src/controller/service-attributes.ts';
import { serviceCheckSpecs } from '../../../src/daemon/check-specs.ts';
import type { CheckContext } from '../../../src/daemon/check-specs.ts';
import { planAllocations } from '../../../src/ipam/allocator.ts';
import { parsePool } from '../../../src/ipam/pool.ts';
import { validateConfig } from '../../../src/config/load.ts';
import { mergeConfig } from '../../../src/crd/merge.ts';
import { CONFIG_KINDS, type ConfigKind, type HeraldObject } from '../../../src/k8s/herald-kinds.ts';
import { heraldChangeKey, objectKey, serviceKeyOfSlice } from '../../../src/k8s/keys.ts';
import { screenObject } from '../../../src/k8s/screen.ts';
import type { Snapshot } from '../../../src/k8s/object-store.ts';
import { ObjectStore } from '../../../src/k8s/object-store.ts';
import { sameContent, trimObject } from '../../../src/k8s/trim.ts';
import type { EndpointSlice, KubeObject, Node, ResourceKind, Service, ServiceCIDR } from '../../../src/k8s/types.ts';
import { DOCUMENTATION_PREFIXES, heraldObject, node, servedNode, servedService, servedSlice, service, serviceCIDR, slice } from '../../helpers/k8s-objects.ts';

type Path = readonly (string | number)[];

/** `obj` behind proxies that record, per kind, every field path read (array indices as numbers). */
function recording<T extends object>(kind: ResourceKind, obj: T, reads: Map<string, { kind: ResourceKind; path: Path }>): T {
  const wrap = (v: unknown, path: Path): unknown => {
    if (v === null || typeof v !== 'object') return v;
    return new Proxy(v, {
      get(target, p, receiver) {
        const value: unknown = Reflect.get(target, p, receiver);
        if (typeof p === 'symbol' || (Array.isArray(target) && (p === 'length' || typeof value === 'function'))) return value;
        if (!Object.hasOwn(target, p) && typeof value === 'function') return value; // Object.prototype methods
        const sub = [...path, Array.isArray(target) ? Number(p) : p];
        reads.set(`${kind} ${JSON.stringify(sub)}`, { kind, path: sub });
        return wrap(value, sub);
      },
    });
  };
  return wrap(obj, []) as T;
}

function at(obj: unknown, path: Path): unknown {
  let v: unknown = obj;
  for (const p of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<string | number, unknown>)[p];
  }
  return v;
}

/** A Snapshot over given objects (the store would trim them: this one hands out the served objects). */
function snapshotOf(o: { services: Service[]; slices: EndpointSlice[]; nodes: Node[]; cidrs: ServiceCIDR[] }): Snapshot {
  return {
    services: () => o.services,
    service: (key) => o.services.find((s) => objectKey(s) === key),
    endpointSlicesFor: (key) => o.slices.filter((s) => serviceKeyOfSlice(s) === key),
    node: (name) => o.nodes.find((n) => n.metadata?.name === name),
    nodes: () => o.nodes,
    serviceCIDRs: () => o.cidrs,
    heraldObjects: () => [],
    nodeSet: () => undefined,
  };
}

const ME = 'node-a';
const heraldAnnotations = {
  'herald.io/health-check-type': 'http',
  'herald.io/health-check-port': '8080',
  'herald.io/health-check-path': '/ready',
  'herald.io/health-check-interval': '2s',
  'herald.io/communities': '65000:100',
  'herald.io/med': '20',
  'herald.io/loadBalancerIPs': '192.0.2.10',
  'herald.io/address-pool': 'blue',
  'herald.io/allow-shared-ip': 'k1',
};

/** Served objects exercising every field Herald reads: every Service type and policy, both families, classes, modes. */
function corpus(): { services: Service[]; slices: EndpointSlice[]; nodes: Node[]; cidrs: ServiceCIDR[] } {
  const withAnn = (s: Service, a: Record<string, string>): Service => ({ ...s, metadata: { ...s.metadata, annotations: { ...s.metadata?.annotations, ...a } } });
  const raw: Service[] = [
    withAnn(service('web', { etp: 'Local', lbIPs: ['192.0.2.10'], labels: { expose: 'yes' } }), heraldAnnotations),
    service('proxied', { lbIPs: ['192.0.2.11'], ipMode: 'Proxy' }),
    service('ext', { type: 'ClusterIP', externalIPs: ['198.51.100.5'], itp: 'Local' }),
    service('classy', { lbIPs: ['192.0.2.12'], lbClass: 'other.example/lb' }),
    service('dual', { clusterIPs: ['10.96.0.20', 'fd00::20'], lbIPs: ['192.0.2.13', '2001:db8::13'] }),
    service('skipped', { lbIPs: ['192.0.2.14'], labels: { 'service.kubernetes.io/service-proxy-name': 'other' } }),
    service('headless', { type: 'ClusterIP', clusterIPs: ['None'] }),
    service('name', { type: 'ExternalName' }),
    withAnn(service('shared', { lbIPs: ['192.0.2.10'], etp: 'Local' }), { 'herald.io/allow-shared-ip': 'k1' }),
    service('pending', {}),
  ];
  const services = raw.map((s, i) => {
    const served = servedService(s, i);
    if (s.metadata?.name === 'dual') served.spec = { ...served.spec, ipFamilies: ['IPv4', 'IPv6'], ipFamilyPolicy: 'RequireDualStack' };
    if (s.metadata?.name === 'pending') served.spec = { ...served.spec, loadBalancerIP: '192.0.2.30' };
    return served;
  });
  const slices = [
    servedSlice(slice('web-1', 'web', [['10.0.0.1', ME, { ready: true }], ['10.0.0.2', 'node-b', { ready: false, serving: true, terminating: true }]]), 0),
    servedSlice(slice('proxied-1', 'proxied', [['10.0.0.3', ME]]), 1),
    servedSlice(slice('ext-1', 'ext', [['10.0.0.4', ME, { ready: null, serving: null, terminating: null }]]), 2),
    servedSlice(slice('classy-1', 'classy', [['10.0.0.5', ME]]), 3),
    servedSlice(slice('dual-4', 'dual', [['10.0.0.6', ME]]), 4),
    servedSlice(slice('dual-6', 'dual', [['fd00::6', ME]]), 5),
    servedSlice(slice('skipped-1', 'skipped', [['10.0.0.7', ME]]), 6),
    servedSlice(slice('shared-1', 'shared', [['10.0.0.8', 'node-b']]), 7),
  ];
  const nodes = [servedNode(node(ME, { labels: { rack: 'r1', role: 'edge' }, taints: [{ key: 'node-role.kubernetes.io/infra', effect: 'NoSchedule' }], networkUnavailable: 'False' }), '192.0.2.200')];
  const cidrs = [serviceCIDR('kubernetes', ['10.96.0.0/12', 'fd00::/108'])];
  return { services, slices, nodes, cidrs };
}

const ctx: DesiredRoutesContext = {
  nodeName: ME,
  allowedPrefixes: DOCUMENTATION_PREFIXES,
  advertisements: [
    { name: 'lb', addressKinds: ['loadBalancer', 'externalIP'], serviceSelector: { matchLabels: { expose: 'yes' } }, nodeSelector: { matchLabels: { rack: 'r1' } }, namespaces: ['default'], communities: ['65000:1'] },
    { name: 'all', addressKinds: ['loadBalancer', 'externalIP', 'clusterIP', 'serviceCIDR'], nodeSelector: { matchExpressions: [{ key: 'role', operator: 'In', values: ['edge'] }] } },
  ],
  serviceCIDRs: ['10.112.0.0/12'],
  countServingTerminating: true,
};
const checks: CheckContext = { nodeAddresses: ['192.0.2.200', '2001:db8::200'], timing: { intervalSec: 5, timeoutSec: 1, rise: 2, fall: 2 }, kubeProxy: { enabled: true, checkServices: true, healthzPort: 10256 } };

t.test('every field the consumers read is kept by the trimmer', async (tt) => {
  const reads = new Map<string, { kind: ResourceKind; path: Path }>();
  const served = corpus();
  const rec = {
    services: served.services.map((s) => recording('Service', s, reads)),
    slices: served.slices.map((s) => recording('EndpointSlice', s, reads)),
    nodes: served.nodes.map((n) => recording('Node', n, reads)),
    cidrs: served.cidrs.map((c) => recording('ServiceCIDR', c, reads)),
  };
  const snap = snapshotOf(rec);
  const result = computeDesiredRoutes(snap, ctx);
  tt.ok(result.routes.length > 3, 'the corpus announces routes');
  const nodeState = evaluateNode(snap.node(ME), ME);
  let specs = 0;
  for (const svc of rec.services) {
    const candidates = decideService(svc, snap.endpointSlicesFor(objectKey(svc)), nodeState, ctx);
    specs += serviceCheckSpecs(checks, candidates).length;
    parseServiceAttributes(svc.metadata?.annotations);
  }
  tt.ok(specs >= 2, 'check specs from kube-proxy and annotations');
  const pools = [parsePool({ name: 'blue', addresses: ['192.0.2.0/26'], serviceSelector: { matchLabels: { 'app.kubernetes.io/managed-by': 'Helm' } } }, 0), parsePool({ name: 'v6', addresses: ['2001:db8::/120'] }, 1)];
  const plan = planAllocations(rec.services, pools, {});
  tt.ok(plan.events.length > 0, 'IPAM planned');

  // Every recorded read of a value must give the same on the trimmed object.
  const originals = new Map<ResourceKind, KubeObject[]>([['Service', served.services], ['EndpointSlice', served.slices], ['Node', served.nodes], ['ServiceCIDR', served.cidrs]]);
  const dropped = new Set<string>();
  for (const { kind, path } of reads.values()) {
    for (const obj of originals.get(kind) ?? []) {
      const before = at(obj, path);
      if (before === undefined || (typeof before === 'object' && before !== null)) continue;
      if (at(trimObject(kind, obj), path) !== before) dropped.add(`${kind} ${path.join('.')}`);
    }
  }
  tt.strictSame([...dropped].sort(), [], 'no field read is dropped (add it to SHAPES in src/k8s/shapes.ts)');
  tt.ok(reads.size > 40, `${reads.size} distinct fields read`);
});

t.test('a served Service keeps no managedFields, foreign annotations, Pod references or Node images', async (tt) => {
  const { services, slices, nodes } = corpus();
  const web = trimObject('Service', services[0]!) as Service;
  tt.strictSame(Object.keys(web).sort(), ['metadata', 'spec', 'status']);
  tt.strictSame(Object.keys(web.metadata!).sort(), ['annotations', 'labels', 'name', 'namespace']);
  tt.strictSame(web.metadata?.annotations, heraldAnnotations, 'only herald.io/ annotations');
  tt.strictSame(web.spec?.ports, [{ port: 80, protocol: 'TCP' }, { port: 443, protocol: 'TCP' }]);
  const s = trimObject('EndpointSlice', slices[0]!) as EndpointSlice;
  tt.strictSame(s.metadata?.labels, { 'kubernetes.io/service-name': 'web' }, 'only the label naming the Service');
  tt.strictSame(Object.keys(s.endpoints![0]!).sort(), ['addresses', 'conditions', 'nodeName']);
  const n = trimObject('Node', nodes[0]!) as Node;
  tt.strictSame(Object.keys(n.status!).sort(), ['addresses', 'conditions'], 'conditions, and addresses (kube-proxy is probed on the InternalIP)');
  tt.strictSame(n.status?.conditions?.[0], { type: 'MemoryPressure', status: 'False' });
  const size = (o: unknown) => JSON.stringify(o).length;
  // What stays is mostly labels (advertisement and pool selectors read them) and Herald's own annotations.
  tt.ok(size(web) * 3 < size(services[0]), `Service ${size(services[0])} → ${size(web)} octets of JSON`);
  tt.ok(size(s) * 3 < size(slices[0]), `EndpointSlice ${size(slices[0])} → ${size(s)}`);
  tt.ok(size(n) * 10 < size(nodes[0]), `Node ${size(nodes[0])} → ${size(n)}`);
});

t.test('the store keeps the trimmed object; an update Herald would not notice gives no change key', async (tt) => {
  const store = new ObjectStore();
  const served = servedNode(node(ME));
  tt.strictSame(store.apply('Node', { ...served, metadata: { ...served.metadata, resourceVersion: '5' } }), [`node:${ME}`]);
  const stored = store.node(ME);
  tt.notOk('managedFields' in (stored?.metadata ?? {}), 'no managedFields in the cache entry');
  tt.notOk('images' in (stored?.status ?? {}), 'no images');
  // a heartbeat: new resourceVersion and timestamps, nothing Herald reads
  const heartbeat = structuredClone(served);
  heartbeat.metadata = { ...heartbeat.metadata, resourceVersion: '6' };
  for (const c of heartbeat.status?.conditions ?? []) Object.assign(c, { lastHeartbeatTime: '2026-11-30T08:05:00Z' });
  tt.strictSame(store.apply('Node', heartbeat), [], 'no change key');
  tt.equal(store.node(ME)?.metadata?.resourceVersion, '6', 'the resourceVersion is taken over (IPAM writes are conditioned on it)');
  tt.equal(store.cacheOf('Node').versionOf(heartbeat), '6');
  // a label Herald may select on is a change
  const relabelled = structuredClone(heartbeat);
  relabelled.metadata = { ...relabelled.metadata, resourceVersion: '7', labels: { ...relabelled.metadata?.labels, rack: 'r2' } };
  tt.strictSame(store.apply('Node', relabelled), [`node:${ME}`]);
  // a slice whose Pod reference changes (same addresses and conditions) is no change either
  const sl = servedSlice(slice('web-1', 'web', [['10.0.0.1', ME]]));
  tt.strictSame(store.apply('EndpointSlice', sl), ['service:default/web']);
  const moved = structuredClone(sl) as EndpointSlice & { endpoints: Array<{ targetRef?: { uid?: string } }> };
  moved.endpoints[0]!.targetRef = { uid: 'another-pod' };
  tt.strictSame(store.apply('EndpointSlice', moved), []);
  tt.equal(store.endpointSlicesFor('default/web').length, 1);
  tt.ok(sameContent(trimObject('EndpointSlice', sl), trimObject('EndpointSlice', moved)));
});

t.test("Herald's kinds keep their spec, status and generation whole; the merge reads the trimmed objects as the served ones", async (tt) => {
  const served = (kind: ConfigKind, name: string, spec: unknown, generation: number): HeraldObject => ({
    ...heraldObject(kind, name, spec, { generation }),
    metadata: {
      name,
      namespace: 'herald-system',
      generation,
      resourceVersion: String(100 + generation),
      uid: `0c1d-${name}`,
      creationTimestamp: '2026-11-30T08:00:00Z',
      labels: { 'app.kubernetes.io/managed-by': 'Helm' },
      annotations: { 'kubectl.kubernetes.io/last-applied-configuration': JSON.stringify({ spec }) },
      managedFields: [{ manager: 'kubectl', operation: 'Apply', fieldsV1: { 'f:spec': {} } }],
    } as HeraldObject['metadata'],
    status: { conditions: [{ type: 'Accepted', status: 'True', lastTransitionTime: '2026-11-30T08:00:00Z', reason: 'Valid', message: 'in force', observedGeneration: generation }] },
  });
  const objects: Record<ConfigKind, HeraldObject[]> = {
    BGPPeer: [served('BGPPeer', 'tor-a', { peerAddress: '192.0.2.2', peerASN: 65002, myASN: 64601, nodeSelectors: [{ matchLabels: { rack: 'r1' } }] }, 3)],
    BGPAdvertisement: [served('BGPAdvertisement', 'to-tors', { peers: ['tor-a'], communities: ['65000:1'] }, 1)],
    IPAddressPool: [served('IPAddressPool', 'crd-pool', { addresses: ['203.0.113.0/28'] }, 2)],
    BGPNodeConfigOverride: [served('BGPNodeConfigOverride', ME, { myASN: 64700 }, 4)],
  };
  const store = new ObjectStore();
  for (const kind of CONFIG_KINDS) for (const o of objects[kind]) tt.strictSame(store.apply(kind, o), [heraldChangeKey(kind, objectKey(o))], `${kind} stored`);
  const peer = [...store.heraldObjects('BGPPeer')][0];
  tt.strictSame(peer?.spec, objects.BGPPeer[0]?.spec, 'spec kept whole');
  tt.strictSame(peer?.status, objects.BGPPeer[0]?.status, 'status kept whole');
  tt.equal(peer?.metadata?.generation, 3, 'generation kept (observedGeneration of the conditions)');
  tt.notOk('managedFields' in (peer?.metadata ?? {}), 'no managedFields');
  tt.strictSame(peer?.metadata?.annotations, undefined, 'no foreign annotations');
  tt.equal(screenObject('BGPPeer', peer), undefined, 'a trimmed object passes the screening');
  const r = validateConfig({ bgp: { localAs: 64600 }, source: { kubernetes: {} } });
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  const file = r.config;
  const fromStore = Object.fromEntries(CONFIG_KINDS.map((k) => [k, [...store.heraldObjects(k)]])) as Record<ConfigKind, HeraldObject[]>;
  const a = mergeConfig(file, objects, ME);
  const b = mergeConfig(file, fromStore, ME);
  tt.equal(a.config.peers.length, 1, 'the served peer is in force');
  tt.strictSame(b, a, 'the merge of the trimmed objects equals that of the served ones');
});
