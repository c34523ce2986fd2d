// Scenario tables for computeDesiredRoutes (MetalLB TestBGPSpeakerEPSlices style): objects are
// applied step by step and after each step the WHOLE desired route set and every VIP decision
// (announced, or its blocking reason codes) are asserted.
import t from 'tap';
import type { Test } from 'tap';
import { ObjectStore } from '../../../src/k8s/object-store.ts';
import type { DesiredResult, DesiredRoutesContext } from '../../../src/controller/desired-routes.ts';
import { computeDesiredRoutes } from '../../../src/controller/desired-routes.ts';
import { EXCLUDE_LABEL, TO_BE_DELETED_TAINT } from '../../../src/controller/node-eligibility.ts';
import type { DesiredRoute } from '../../../src/controller/route-merge.ts';
import { DOCUMENTATION_PREFIXES, node, service, serviceCIDR, slice } from '../../helpers/k8s-objects.ts';

const ME = 'node-a';
const OTHER = 'node-b';

/** A route as produced by the default advertisement (all peers, no attributes). */
function r(prefix: string, services: string[], extra: Partial<DesiredRoute> = {}): DesiredRoute {
  return {
    prefix,
    family: prefix.includes(':') ? 'ipv6-unicast' : 'ipv4-unicast',
    peers: 'all',
    communities: [],
    largeCommunities: [],
    services,
    advertisements: ['default'],
    ...extra,
  };
}

/** "ns/name kind address" -> "announced" or the blocking reason codes joined by "+". */
function vips(res: DesiredResult): Record<string, string> {
  const out: Record<string, string> = {};
  for (const s of res.services) {
    for (const v of s.vips) out[`${s.service} ${v.kind} ${v.address}`] = v.announced ? 'announced' : v.reasons.map((x) => x.code).join('+');
  }
  return out;
}

interface Step {
  desc: string;
  act: (s: ObjectStore) => void;
  ctx?: Partial<DesiredRoutesContext>;
  routes: DesiredRoute[];
  vips: Record<string, string>;
}

function runScenario(tt: Test, steps: Step[], baseCtx: Partial<DesiredRoutesContext> = {}): void {
  const store = new ObjectStore();
  for (const step of steps) {
    step.act(store);
    const res = computeDesiredRoutes(store, { nodeName: ME, allowedPrefixes: DOCUMENTATION_PREFIXES, ...baseCtx, ...step.ctx });
    tt.strictSame(res.routes, step.routes, `${step.desc}: routes`);
    tt.strictSame(vips(res), step.vips, `${step.desc}: VIP decisions`);
  }
}


const CIP = 'default/web clusterIP 10.96.0.10';
const LB = 'default/web loadBalancer 192.0.2.10';

t.test('externalTrafficPolicy Local: endpoints appear, turn unready, terminate, move nodes, vanish', async (tt) => {
  runScenario(tt, [
    { desc: 'no node object yet', act: (s) => void s.apply('Service', service('web', { lbIPs: ['192.0.2.10'], etp: 'Local' })), routes: [], vips: { [LB]: 'NodeNotFound+NoLocalReadyEndpoint', [CIP]: 'NodeNotFound+NoAdvertisement+NoReadyEndpoint' } },
    { desc: 'node appears, no endpoints', act: (s) => void s.apply('Node', node(ME)), routes: [], vips: { [LB]: 'NoLocalReadyEndpoint', [CIP]: 'NoAdvertisement+NoReadyEndpoint' } },
    { desc: 'endpoint on other node only', act: (s) => void s.apply('EndpointSlice', slice('web-1', 'web', [['10.0.1.1', OTHER]])), routes: [], vips: { [LB]: 'NoLocalReadyEndpoint', [CIP]: 'NoAdvertisement' } },
    {
      desc: 'local endpoint with nil conditions (ready defaults to true)',
      act: (s) => void s.apply('EndpointSlice', slice('web-1', 'web', [['10.0.1.1', OTHER], ['10.0.0.1', ME]])),
      routes: [r('192.0.2.10/32', ['default/web'])],
      vips: { [LB]: 'announced', [CIP]: 'NoAdvertisement' },
    },
    {
      desc: 'local endpoint ready=false',
      act: (s) => void s.apply('EndpointSlice', slice('web-1', 'web', [['10.0.1.1', OTHER], ['10.0.0.1', ME, { ready: false }]])),
      routes: [],
      vips: { [LB]: 'NoLocalReadyEndpoint', [CIP]: 'NoAdvertisement' },
    },
    {
      desc: 'local endpoint serving but terminating (ready=true via publishNotReadyAddresses)',
      act: (s) => void s.apply('EndpointSlice', slice('web-1', 'web', [['10.0.0.1', ME, { ready: true, serving: true, terminating: true }]])),
      routes: [],
      vips: { [LB]: 'NoLocalReadyEndpoint', [CIP]: 'NoAdvertisement+NoReadyEndpoint' },
    },
    {
      desc: 'endpoint in a second slice becomes local and ready',
      act: (s) => void s.apply('EndpointSlice', slice('web-2', 'web', [['10.0.0.2', ME, { ready: true }]])),
      routes: [r('192.0.2.10/32', ['default/web'])],
      vips: { [LB]: 'announced', [CIP]: 'NoAdvertisement' },
    },
    {
      desc: 'the endpoint moves to the other node',
      act: (s) => void s.apply('EndpointSlice', slice('web-2', 'web', [['10.0.0.2', OTHER, { ready: true }]])),
      routes: [],
      vips: { [LB]: 'NoLocalReadyEndpoint', [CIP]: 'NoAdvertisement' },
    },
    {
      desc: 'switch to Cluster: ready endpoint elsewhere is enough',
      act: (s) => void s.apply('Service', service('web', { lbIPs: ['192.0.2.10'], etp: 'Cluster' })),
      routes: [r('192.0.2.10/32', ['default/web'])],
      vips: { [LB]: 'announced', [CIP]: 'NoAdvertisement' },
    },
    {
      desc: 'all slices deleted: zero endpoints withdraws Cluster too',
      act: (s) => {
        s.remove('EndpointSlice', slice('web-1', 'web', []));
        s.remove('EndpointSlice', slice('web-2', 'web', []));
      },
      routes: [],
      vips: { [LB]: 'NoReadyEndpoint', [CIP]: 'NoAdvertisement+NoReadyEndpoint' },
    },
    {
      desc: 'Cluster with only terminating endpoints is withdrawn',
      act: (s) => void s.apply('EndpointSlice', slice('web-1', 'web', [['10.0.1.1', OTHER, { ready: false, serving: true, terminating: true }]])),
      routes: [],
      vips: { [LB]: 'NoReadyEndpoint', [CIP]: 'NoAdvertisement+NoReadyEndpoint' },
    },
    {
      desc: '... unless countServingTerminating is on',
      act: () => {},
      ctx: { countServingTerminating: true },
      routes: [r('192.0.2.10/32', ['default/web'])],
      vips: { [LB]: 'announced', [CIP]: 'NoAdvertisement' },
    },
    {
      desc: 'service deleted',
      act: (s) => void s.remove('Service', service('web')),
      routes: [],
      vips: {},
    },
  ]);
});

t.test('node eligibility', async (tt) => {
  const base = (s: ObjectStore): void => {
    s.apply('Service', service('web', { lbIPs: ['192.0.2.10'] }));
    s.apply('EndpointSlice', slice('web-1', 'web', [['10.0.1.1', OTHER]]));
  };
  const on = [r('192.0.2.10/32', ['default/web'])];
  const onV = { [LB]: 'announced', [CIP]: 'NoAdvertisement' };
  runScenario(tt, [
    { desc: 'eligible', act: (s) => { base(s); s.apply('Node', node(ME)); }, routes: on, vips: onV },
    { desc: 'cordoned keeps announcing', act: (s) => void s.apply('Node', node(ME, { unschedulable: true, taints: [{ key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' }] })), routes: on, vips: onV },
    { desc: 'exclude label (any value, even "false")', act: (s) => void s.apply('Node', node(ME, { labels: { [EXCLUDE_LABEL]: 'false' } })), routes: [], vips: { [LB]: 'NodeExcluded', [CIP]: 'NodeExcluded+NoAdvertisement' } },
    { desc: 'back', act: (s) => void s.apply('Node', node(ME)), routes: on, vips: onV },
    { desc: 'autoscaler taint', act: (s) => void s.apply('Node', node(ME, { taints: [{ key: TO_BE_DELETED_TAINT, value: '1700000000', effect: 'NoSchedule' }] })), routes: [], vips: { [LB]: 'NodeToBeDeleted', [CIP]: 'NodeToBeDeleted+NoAdvertisement' } },
    { desc: 'deletionTimestamp', act: (s) => void s.apply('Node', node(ME, { deleting: true })), routes: [], vips: { [LB]: 'NodeDeleting', [CIP]: 'NodeDeleting+NoAdvertisement' } },
    { desc: 'Ready False', act: (s) => void s.apply('Node', node(ME, { ready: 'False' })), routes: [], vips: { [LB]: 'NodeNotReady', [CIP]: 'NodeNotReady+NoAdvertisement' } },
    { desc: 'Ready Unknown', act: (s) => void s.apply('Node', node(ME, { ready: 'Unknown' })), routes: [], vips: { [LB]: 'NodeNotReady', [CIP]: 'NodeNotReady+NoAdvertisement' } },
    { desc: 'NetworkUnavailable False is fine', act: (s) => void s.apply('Node', node(ME, { networkUnavailable: 'False' })), routes: on, vips: onV },
    { desc: 'NetworkUnavailable True', act: (s) => void s.apply('Node', node(ME, { networkUnavailable: 'True' })), routes: [], vips: { [LB]: 'NodeNetworkUnavailable', [CIP]: 'NodeNetworkUnavailable+NoAdvertisement' } },
    { desc: 'another node excluded does not matter', act: (s) => { s.apply('Node', node(ME)); s.apply('Node', node(OTHER, { labels: { [EXCLUDE_LABEL]: '' } })); }, routes: on, vips: onV },
    { desc: 'node deleted withdraws all', act: (s) => void s.remove('Node', node(ME)), routes: [], vips: { [LB]: 'NodeNotFound', [CIP]: 'NodeNotFound+NoAdvertisement' } },
  ]);
});

t.test('dual-stack, clusterIP/externalIP opt-in, internalTrafficPolicy', async (tt) => {
  const ads: DesiredRoutesContext['advertisements'] = [{ name: 'all-kinds', addressKinds: ['loadBalancer', 'externalIP', 'clusterIP'] }];
  const R = (p: string, extra: Partial<DesiredRoute> = {}): DesiredRoute => r(p, ['default/ds'], { advertisements: ['all-kinds'], ...extra });
  const svc = (itp?: string, etp?: string): ReturnType<typeof service> =>
    service('ds', {
      clusterIPs: ['10.96.0.20', 'fd00:96::20'],
      lbIPs: ['192.0.2.20', '2001:db8::20'],
      externalIPs: ['198.51.100.20'],
      ...(itp ? { itp } : {}),
      ...(etp ? { etp } : {}),
    });
  const k = (kind: string, a: string): string => `default/ds ${kind} ${a}`;
  runScenario(
    tt,
    [
      {
        desc: 'IPv4 endpoint only: IPv6 VIPs have no endpoint of their family',
        act: (s) => {
          s.apply('Node', node(ME));
          s.apply('Service', svc());
          s.apply('EndpointSlice', slice('ds-v4', 'ds', [['10.0.0.5', ME]]));
        },
        routes: [R('10.96.0.20/32'), R('192.0.2.20/32'), R('198.51.100.20/32')],
        vips: {
          [k('loadBalancer', '192.0.2.20')]: 'announced',
          [k('loadBalancer', '2001:db8::20')]: 'NoReadyEndpoint',
          [k('externalIP', '198.51.100.20')]: 'announced',
          [k('clusterIP', '10.96.0.20')]: 'announced',
          [k('clusterIP', 'fd00:96::20')]: 'NoReadyEndpoint',
        },
      },
      {
        desc: 'IPv6 slice on the other node',
        act: (s) => void s.apply('EndpointSlice', slice('ds-v6', 'ds', [['fd00:10::5', OTHER]])),
        routes: [R('10.96.0.20/32'), R('192.0.2.20/32'), R('198.51.100.20/32'), R('2001:db8::20/128'), R('fd00:96::20/128')],
        vips: {
          [k('loadBalancer', '192.0.2.20')]: 'announced',
          [k('loadBalancer', '2001:db8::20')]: 'announced',
          [k('externalIP', '198.51.100.20')]: 'announced',
          [k('clusterIP', '10.96.0.20')]: 'announced',
          [k('clusterIP', 'fd00:96::20')]: 'announced',
        },
      },
      {
        desc: 'ITP Local governs clusterIP only',
        act: (s) => void s.apply('Service', svc('Local')),
        routes: [R('10.96.0.20/32'), R('192.0.2.20/32'), R('198.51.100.20/32'), R('2001:db8::20/128')],
        vips: {
          [k('loadBalancer', '192.0.2.20')]: 'announced',
          [k('loadBalancer', '2001:db8::20')]: 'announced',
          [k('externalIP', '198.51.100.20')]: 'announced',
          [k('clusterIP', '10.96.0.20')]: 'announced',
          [k('clusterIP', 'fd00:96::20')]: 'NoLocalReadyEndpoint',
        },
      },
      {
        desc: 'ETP Local governs LB and externalIP, not clusterIP',
        act: (s) => void s.apply('Service', svc(undefined, 'Local')),
        routes: [R('10.96.0.20/32'), R('192.0.2.20/32'), R('198.51.100.20/32'), R('fd00:96::20/128')],
        vips: {
          [k('loadBalancer', '192.0.2.20')]: 'announced',
          [k('loadBalancer', '2001:db8::20')]: 'NoLocalReadyEndpoint',
          [k('externalIP', '198.51.100.20')]: 'announced',
          [k('clusterIP', '10.96.0.20')]: 'announced',
          [k('clusterIP', 'fd00:96::20')]: 'announced',
        },
      },
    ],
    { advertisements: ads },
  );
});

t.test('headless, ExternalName, type change, ipMode Proxy, service-proxy-name, bad addresses', async (tt) => {
  const store = new ObjectStore();
  store.apply('Node', node(ME));
  store.apply('Service', { ...service('hl', { type: 'ClusterIP', clusterIPs: ['None'] }) });
  store.apply('Service', service('en', { type: 'ExternalName' }));
  // status left behind on a ClusterIP Service is ignored
  store.apply('Service', { ...service('was-lb', { type: 'ClusterIP', lbIPs: ['192.0.2.30'] }) });
  store.apply('Service', service('proxy', { lbIPs: ['192.0.2.31'], ipMode: 'Proxy' }));
  store.apply('Service', service('vip', { lbIPs: ['192.0.2.32'], ipMode: 'VIP' }));
  store.apply('Service', service('other-proxy', { lbIPs: ['192.0.2.33'], labels: { 'service.kubernetes.io/service-proxy-name': 'foo' } }));
  store.apply('Service', service('bad', { lbIPs: ['300.1.1.1'] }));
  // issue 35: an IPv4-mapped IPv6 address is announced in neither form
  store.apply('Service', service('mapped', { lbIPs: ['::ffff:192.0.2.34'] }));
  for (const n of ['hl', 'en', 'was-lb', 'proxy', 'vip', 'other-proxy', 'bad', 'mapped']) store.apply('EndpointSlice', slice(`${n}-1`, n, [['10.0.0.9', ME]]));
  const res = computeDesiredRoutes(store, { nodeName: ME, allowedPrefixes: DOCUMENTATION_PREFIXES });
  tt.strictSame(res.routes, [r('192.0.2.32/32', ['default/vip'])]);
  tt.strictSame(vips(res), {
    'default/bad loadBalancer 300.1.1.1': 'InvalidAddress',
    'default/bad clusterIP 10.96.0.10': 'NoAdvertisement',
    'default/mapped loadBalancer ::ffff:192.0.2.34': 'InvalidAddress',
    'default/mapped clusterIP 10.96.0.10': 'NoAdvertisement',
    'default/other-proxy loadBalancer 192.0.2.33': 'ServiceProxyNameSet',
    'default/other-proxy clusterIP 10.96.0.10': 'ServiceProxyNameSet+NoAdvertisement',
    'default/proxy loadBalancer 192.0.2.31': 'IPModeProxy',
    'default/proxy clusterIP 10.96.0.10': 'NoAdvertisement',
    'default/vip loadBalancer 192.0.2.32': 'announced',
    'default/vip clusterIP 10.96.0.10': 'NoAdvertisement',
    'default/was-lb clusterIP 10.96.0.10': 'NoAdvertisement',
  });
  const byName = Object.fromEntries(res.services.map((s) => [s.service, s]));
  tt.strictSame(byName['default/hl']?.reasons.map((x) => x.code), ['Headless']);
  tt.strictSame(byName['default/en']?.reasons.map((x) => x.code), ['ExternalName']);
  tt.match(byName['default/mapped']?.vips.find((v) => v.address === '::ffff:192.0.2.34')?.reasons, [{ code: 'InvalidAddress', message: /IPv4-mapped .* write the IPv4 address 192\.0\.2\.34/ }]);
  const vipReasons = byName['default/vip']?.vips[0]?.reasons.map((x) => x.code);
  tt.strictSame(vipReasons, ['ReadyEndpoint', 'Advertised'], 'announced VIP explains why');
});

t.test('loadBalancerClass filter', async (tt) => {
  const store = new ObjectStore();
  store.apply('Node', node(ME));
  store.apply('Service', service('none', { lbIPs: ['192.0.2.40'] }));
  store.apply('Service', service('ours', { lbIPs: ['192.0.2.41'], lbClass: 'example.com/herald' }));
  store.apply('Service', service('foreign', { lbIPs: ['192.0.2.42'], lbClass: 'other.io/lb' }));
  for (const n of ['none', 'ours', 'foreign']) store.apply('EndpointSlice', slice(`${n}-1`, n, [['10.0.0.9', ME]]));
  const lbOnly = (res: DesiredResult): Record<string, string> => Object.fromEntries(Object.entries(vips(res)).filter(([k]) => k.includes('loadBalancer')));
  let res = computeDesiredRoutes(store, { nodeName: ME, allowedPrefixes: DOCUMENTATION_PREFIXES });
  tt.strictSame(res.routes, [r('192.0.2.40/32', ['default/none'])], 'default implementation: class-less only');
  tt.strictSame(lbOnly(res), {
    'default/foreign loadBalancer 192.0.2.42': 'ForeignLoadBalancerClass',
    'default/none loadBalancer 192.0.2.40': 'announced',
    'default/ours loadBalancer 192.0.2.41': 'ForeignLoadBalancerClass',
  });
  res = computeDesiredRoutes(store, { nodeName: ME, allowedPrefixes: DOCUMENTATION_PREFIXES, loadBalancerClass: 'example.com/herald' });
  tt.strictSame(res.routes, [r('192.0.2.41/32', ['default/ours'])], 'class set: exact match only');
  tt.strictSame(lbOnly(res), {
    'default/foreign loadBalancer 192.0.2.42': 'ForeignLoadBalancerClass',
    'default/none loadBalancer 192.0.2.40': 'ForeignLoadBalancerClass',
    'default/ours loadBalancer 192.0.2.41': 'announced',
  });
});

t.test('services sharing an IP merge into one route; withdrawn only when no service wants it', async (tt) => {
  const k1 = 'default/a loadBalancer 192.0.2.50';
  const k2 = 'default/b loadBalancer 192.0.2.50';
  const cipA = 'default/a clusterIP 10.96.0.10';
  const cipB = 'default/b clusterIP 10.96.0.11';
  runScenario(tt, [
    {
      desc: 'both want it',
      act: (s) => {
        s.apply('Node', node(ME));
        s.apply('Service', service('a', { lbIPs: ['192.0.2.50'], etp: 'Local' }));
        s.apply('Service', service('b', { lbIPs: ['192.0.2.50'], clusterIPs: ['10.96.0.11'] }));
        s.apply('EndpointSlice', slice('a-1', 'a', [['10.0.0.1', ME]]));
        s.apply('EndpointSlice', slice('b-1', 'b', [['10.0.1.1', OTHER]]));
      },
      routes: [r('192.0.2.50/32', ['default/a', 'default/b'])],
      vips: { [k1]: 'announced', [k2]: 'announced', [cipA]: 'NoAdvertisement', [cipB]: 'NoAdvertisement' },
    },
    {
      desc: 'a loses its local endpoint: b still wants it',
      act: (s) => void s.apply('EndpointSlice', slice('a-1', 'a', [['10.0.0.1', OTHER]])),
      routes: [r('192.0.2.50/32', ['default/b'])],
      vips: { [k1]: 'NoLocalReadyEndpoint', [k2]: 'announced', [cipA]: 'NoAdvertisement', [cipB]: 'NoAdvertisement' },
    },
    {
      desc: 'b deleted: withdrawn',
      act: (s) => void s.remove('Service', service('b')),
      routes: [],
      vips: { [k1]: 'NoLocalReadyEndpoint', [cipA]: 'NoAdvertisement' },
    },
  ]);
});

t.test('advertisements: selectors, peers, communities, aggregation, node selector, service CIDRs', async (tt) => {
  const advertisements: DesiredRoutesContext['advertisements'] = [
    { name: 'public', addressKinds: ['loadBalancer'], serviceSelector: { matchLabels: { expose: 'public' } }, peers: ['tor-2', 'tor-1'], communities: ['65000:100'], localPref: 100, med: 20 },
    { name: 'agg', addressKinds: ['loadBalancer'], namespaces: ['prod'], aggregationLength: 24, aggregationLengthV6: 64, largeCommunities: ['65000:1:2'] },
    { name: 'also-public', addressKinds: ['loadBalancer'], serviceSelector: { matchExpressions: [{ key: 'expose', operator: 'In', values: ['public'] }] }, peers: ['tor-3'], communities: ['65000:200', '65000:100'], localPref: 200, med: 10 },
    { name: 'gw-cidr', addressKinds: ['serviceCIDR'], nodeSelector: { matchLabels: { role: 'gateway' } } },
  ];
  const store = new ObjectStore();
  store.apply('Node', node(ME));
  store.apply('Service', service('pub', { lbIPs: ['192.0.2.60'], labels: { expose: 'public' } }));
  store.apply('Service', service('p1', { ns: 'prod', lbIPs: ['198.51.100.7', '2001:db8:1:2::7'] }));
  store.apply('Service', service('p2', { ns: 'prod', lbIPs: ['198.51.100.9'] }));
  store.apply('Service', service('unselected', { lbIPs: ['192.0.2.61'] }));
  store.apply('EndpointSlice', slice('pub-1', 'pub', [['10.0.0.1', ME]]));
  store.apply('EndpointSlice', slice('p1-1', 'p1', [['10.0.0.2', ME]], { ns: 'prod' }));
  store.apply('EndpointSlice', slice('p1-2', 'p1', [['fd00::2', ME]], { ns: 'prod' }));
  store.apply('EndpointSlice', slice('p2-1', 'p2', [['10.0.0.3', ME]], { ns: 'prod' }));
  store.apply('EndpointSlice', slice('unselected-1', 'unselected', [['10.0.0.4', ME]]));
  store.apply('ServiceCIDR', serviceCIDR('kubernetes', ['10.96.0.0/12', 'fd00:96::/112']));
  const ctx: DesiredRoutesContext = { nodeName: ME, allowedPrefixes: DOCUMENTATION_PREFIXES, advertisements, serviceCIDRs: ['10.100.0.1/16'] };
  const pub: DesiredRoute = {
    prefix: '192.0.2.60/32', family: 'ipv4-unicast', peers: ['tor-1', 'tor-2', 'tor-3'], communities: ['65000:100', '65000:200'], largeCommunities: [],
    localPref: 200, med: 10, services: ['default/pub'], advertisements: ['also-public', 'public'],
  };
  const agg4: DesiredRoute = { prefix: '198.51.100.0/24', family: 'ipv4-unicast', peers: 'all', communities: [], largeCommunities: ['65000:1:2'], services: ['prod/p1', 'prod/p2'], advertisements: ['agg'] };
  const agg6: DesiredRoute = { prefix: '2001:db8:1:2::/64', family: 'ipv6-unicast', peers: 'all', communities: [], largeCommunities: ['65000:1:2'], services: ['prod/p1'], advertisements: ['agg'] };
  let res = computeDesiredRoutes(store, ctx);
  tt.strictSame(res.routes, [pub, agg4, agg6]);
  tt.equal(vips(res)['default/unselected loadBalancer 192.0.2.61'], 'NoAdvertisement');
  tt.match(res.services.find((s) => s.service === 'default/unselected')?.vips[0]?.reasons[0]?.message, /public, agg, also-public select loadBalancer but not/);
  tt.strictSame(res.serviceCIDRs.map((c) => [c.cidr, c.source, c.announced]), [
    ['10.100.0.1/16', 'config', false],
    ['10.96.0.0/12', 'ServiceCIDR/kubernetes', false],
    ['fd00:96::/112', 'ServiceCIDR/kubernetes', false],
  ]);

  // this node becomes a gateway: service CIDRs are announced (host bits zeroed)
  store.apply('Node', node(ME, { labels: { role: 'gateway' } }));
  res = computeDesiredRoutes(store, ctx);
  const cidr = (p: string): DesiredRoute => ({ prefix: p, family: p.includes(':') ? 'ipv6-unicast' : 'ipv4-unicast', peers: 'all', communities: [], largeCommunities: [], services: [], advertisements: ['gw-cidr'] });
  tt.strictSame(res.routes, [cidr('10.100.0.0/16'), cidr('10.96.0.0/12'), pub, agg4, agg6, cidr('fd00:96::/112')]);

  // one aggregated service loses its endpoint: the aggregate stays for the other
  store.apply('EndpointSlice', slice('p1-1', 'p1', [['10.0.0.2', ME, { ready: false }]], { ns: 'prod' }));
  res = computeDesiredRoutes(store, ctx);
  tt.strictSame(res.routes.find((x) => x.prefix === '198.51.100.0/24')?.services, ['prod/p2']);

  // node selector on an LB advertisement
  res = computeDesiredRoutes(store, { nodeName: ME, allowedPrefixes: DOCUMENTATION_PREFIXES, advertisements: [{ name: 'gw', addressKinds: ['loadBalancer'], nodeSelector: { matchExpressions: [{ key: 'role', operator: 'NotIn', values: ['gateway'] }] } }] });
  tt.strictSame(res.routes, [], 'NotIn gateway excludes this node');
  tt.equal(vips(res)['default/pub loadBalancer 192.0.2.60'], 'NoAdvertisement');
});

t.test('health gate is consulted only for otherwise announceable VIPs', async (tt) => {
  const store = new ObjectStore();
  store.apply('Node', node(ME));
  store.apply('Service', service('h', { lbIPs: ['192.0.2.70', '192.0.2.71'] }));
  store.apply('Service', service('noep', { lbIPs: ['192.0.2.72'] }));
  store.apply('EndpointSlice', slice('h-1', 'h', [['10.0.0.1', ME]]));
  const asked: string[] = [];
  const res = computeDesiredRoutes(store, { nodeName: ME, allowedPrefixes: DOCUMENTATION_PREFIXES }, (svc, addr) => {
    asked.push(`${svc} ${addr}`);
    return addr === '192.0.2.71' ? { pass: false, reason: 'http://10.0.0.1:31000/ answered 503' } : { pass: true };
  });
  tt.strictSame(asked.sort(), ['default/h 192.0.2.70', 'default/h 192.0.2.71']);
  tt.strictSame(res.routes, [r('192.0.2.70/32', ['default/h'])]);
  const v = res.services.find((s) => s.service === 'default/h')?.vips.find((x) => x.address === '192.0.2.71');
  tt.strictSame(v?.reasons, [{ code: 'HealthCheckFailing', message: 'http://10.0.0.1:31000/ answered 503' }]);
});

t.test('duplicate endpoint across slices during a move counts once and prefers the ready copy', async (tt) => {
  const store = new ObjectStore();
  store.apply('Node', node(ME));
  store.apply('Service', service('m', { lbIPs: ['192.0.2.80'], etp: 'Local' }));
  store.apply('EndpointSlice', slice('m-1', 'm', [['10.0.0.1', ME, { ready: false }]]));
  store.apply('EndpointSlice', slice('m-2', 'm', [['10.0.0.1', ME, { ready: true }]]));
  const res = computeDesiredRoutes(store, { nodeName: ME, allowedPrefixes: DOCUMENTATION_PREFIXES });
  tt.strictSame(res.routes, [r('192.0.2.80/32', ['default/m'])]);
  tt.match(res.services[0]?.vips[0]?.reasons[0]?.message, /1 ready IPv4 endpoint\(s\) on node node-a/);
  // FQDN slices and slices without the service-name label are ignored
  const store2 = new ObjectStore();
  store2.apply('Node', node(ME));
  store2.apply('Service', service('f', { lbIPs: ['192.0.2.81'] }));
  store2.apply('EndpointSlice', slice('f-1', 'f', [['10.0.0.1', ME]], { addressType: 'FQDN' }));
  const unlabelled = slice('f-2', 'f', [['10.0.0.2', ME]]);
  unlabelled.metadata!.labels = {};
  store2.apply('EndpointSlice', unlabelled);
  tt.strictSame(computeDesiredRoutes(store2, { nodeName: ME, allowedPrefixes: DOCUMENTATION_PREFIXES }).routes, []);
});

t.test('an impossible aggregation length disturbs only its own advertisement', async (tt) => {
  const store = new ObjectStore();
  store.apply('Node', node(ME));
  store.apply('Service', service('x', { lbIPs: ['192.0.2.90'] }));
  store.apply('EndpointSlice', slice('x-1', 'x', [['10.0.0.1', ME]]));
  const bad = { name: 'bad', addressKinds: ['loadBalancer' as const], aggregationLength: 33 };
  let res = computeDesiredRoutes(store, { nodeName: ME, allowedPrefixes: DOCUMENTATION_PREFIXES, advertisements: [bad, { name: 'good', addressKinds: ['loadBalancer'] }] });
  tt.strictSame(res.routes, [r('192.0.2.90/32', ['default/x'], { advertisements: ['good'] })]);
  tt.strictSame(res.services[0]?.vips[0]?.reasons.map((x) => x.code), ['ReadyEndpoint', 'Advertised', 'InvalidAdvertisement']);
  res = computeDesiredRoutes(store, { nodeName: ME, allowedPrefixes: DOCUMENTATION_PREFIXES, advertisements: [bad] });
  tt.strictSame(res.routes, []);
  tt.strictSame(vips(res)['default/x loadBalancer 192.0.2.90'], 'InvalidAdvertisement');
  tt.match(res.services[0]?.vips[0]?.reasons[0]?.message, /advertisement bad: prefix length 33 out of range/);
});
