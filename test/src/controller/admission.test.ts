// Admission of addresses (src/controller/admission.ts, docs/decisions.md "Allowed address space"): a LoadBalancer
// ingress address or an externalIP is announced only inside pools or allowedPrefixes, the announced prefix after
// aggregation must lie inside too, and an advertisement's allowedPrefixes only narrow. Each test below fails when the
// guard it names is reverted.
import t from 'tap';
import { ObjectStore } from '../../../src/k8s/object-store.ts';
import type { DesiredResult, DesiredRoutesContext } from '../../../src/controller/desired-routes.ts';
import { computeDesiredRoutes } from '../../../src/controller/desired-routes.ts';
import { allowsNoAddress } from '../../../src/controller/admission.ts';
import { node, service, serviceCIDR, slice } from '../../helpers/k8s-objects.ts';

const ME = 'node-a';

/** A store with this node and Services served by a ready local endpoint each. */
function store(...svcs: ReturnType<typeof service>[]): ObjectStore {
  const s = new ObjectStore();
  s.apply('Node', node(ME));
  svcs.forEach((svc, i) => {
    s.apply('Service', svc);
    s.apply('EndpointSlice', slice(`${svc.metadata?.name}-1`, svc.metadata?.name as string, [[`10.1.0.${i + 1}`, ME]], { ns: svc.metadata?.namespace }));
  });
  return s;
}

/** "kind address" → 'announced' or the reason codes joined by "+" (one Service). */
function vips(res: DesiredResult, svc = 'default/web'): Record<string, string> {
  const out: Record<string, string> = {};
  for (const v of res.services.find((s) => s.service === svc)?.vips ?? []) out[`${v.kind} ${v.address}`] = v.announced ? 'announced' : v.reasons.map((r) => r.code).join('+');
  return out;
}

function reason(res: DesiredResult, address: string, code = 'PrefixNotAllowed', svc = 'default/web'): string | undefined {
  return res.services.find((s) => s.service === svc)?.vips.find((v) => v.address === address)?.reasons.find((r) => r.code === code)?.message;
}

const ALL_KINDS = [{ name: 'all', addressKinds: ['loadBalancer' as const, 'externalIP' as const, 'clusterIP' as const] }];
const attack = () => service('web', { lbIPs: ['198.51.100.10'], externalIPs: ['8.8.8.8', '1.1.1.1'], clusterIPs: ['10.96.0.10'] });

t.test('guard: with neither pools nor allowedPrefixes no LoadBalancer or external address is announced (fail closed)', async (t) => {
  const ctx: DesiredRoutesContext = { nodeName: ME, advertisements: ALL_KINDS };
  t.ok(allowsNoAddress(ctx));
  const res = computeDesiredRoutes(store(attack()), ctx);
  t.strictSame(res.routes.map((r) => r.prefix), ['10.96.0.10/32'], 'only the ClusterIP: it needs no list');
  t.strictSame(vips(res), { 'loadBalancer 198.51.100.10': 'PrefixNotAllowed', 'externalIP 8.8.8.8': 'PrefixNotAllowed', 'externalIP 1.1.1.1': 'PrefixNotAllowed', 'clusterIP 10.96.0.10': 'announced' });
  t.match(reason(res, '8.8.8.8'), /no pools and no allowedPrefixes are configured.*list the addresses it may announce in allowedPrefixes/);
});

t.test('guard: an externalIP or LoadBalancer address outside pools and allowedPrefixes is never announced', async (t) => {
  const ctx: DesiredRoutesContext = { nodeName: ME, advertisements: ALL_KINDS, allowedPrefixes: ['198.51.100.0/24'] };
  t.notOk(allowsNoAddress(ctx));
  const svc = attack();
  svc.spec!.externalIPs = ['8.8.8.8', '198.51.100.77'];
  const other = service('other', { lbIPs: ['203.0.113.5'], clusterIPs: ['10.96.0.11'] });
  const res = computeDesiredRoutes(store(svc, other), ctx);
  t.strictSame(res.routes.map((r) => r.prefix), ['10.96.0.10/32', '10.96.0.11/32', '198.51.100.10/32', '198.51.100.77/32'], 'allowed VIPs only');
  t.equal(vips(res)['externalIP 8.8.8.8'], 'PrefixNotAllowed');
  t.match(reason(res, '8.8.8.8'), '8.8.8.8 (externalIP) is outside every pool and allowedPrefixes (198.51.100.0/24): never announced');
  t.equal(vips(res, 'default/other')['loadBalancer 203.0.113.5'], 'PrefixNotAllowed', 'a LoadBalancer address outside is refused too');
});

t.test('guard: the pools are allowed space (CIDRs and ranges), and only their addresses', async (t) => {
  const ctx: DesiredRoutesContext = { nodeName: ME, poolAddresses: ['203.0.113.10-203.0.113.20', '2001:db8:5::/64'] };
  const s = store(service('web', { lbIPs: ['203.0.113.15', '2001:db8:5::9'] }), service('out', { lbIPs: ['203.0.113.21'], clusterIPs: ['10.96.0.11'] }));
  s.apply('EndpointSlice', slice('web-6', 'web', [['fd00::1', ME]]));
  const res = computeDesiredRoutes(s, ctx);
  t.strictSame(res.routes.map((r) => r.prefix), ['203.0.113.15/32', '2001:db8:5::9/128']);
  t.equal(vips(res, 'default/out')['loadBalancer 203.0.113.21'], 'PrefixNotAllowed', 'one past the range');
});

t.test('guard: no aggregationLength widens a VIP past the allowed space; 0 is never a default route', async (t) => {
  const svc = () => service('web', { externalIPs: ['198.51.100.10'], clusterIPs: ['10.96.0.10'] });
  const ads = (len: number) => [{ name: 'agg', addressKinds: ['externalIP' as const], aggregationLength: len }];
  let res = computeDesiredRoutes(store(svc()), { nodeName: ME, allowedPrefixes: ['198.51.100.0/28'], advertisements: ads(24) });
  t.strictSame(res.routes, [], '/24 reaches beyond the allowed /28');
  t.equal(vips(res)['externalIP 198.51.100.10'], 'PrefixNotAllowed');
  t.match(reason(res, '198.51.100.10'), 'advertisement agg would announce 198.51.100.0/24, which reaches beyond the allowed space (198.51.100.0/28)');
  res = computeDesiredRoutes(store(svc()), { nodeName: ME, allowedPrefixes: ['198.51.100.0/24'], advertisements: ads(0) });
  t.strictSame(res.routes, [], 'aggregationLength 0 would be 0.0.0.0/0');
  t.match(reason(res, '198.51.100.10'), /would announce 0\.0\.0\.0\/0/);
  res = computeDesiredRoutes(store(svc()), { nodeName: ME, allowedPrefixes: ['198.51.100.0/24'], advertisements: ads(24) });
  t.strictSame(res.routes.map((r) => r.prefix), ['198.51.100.0/24'], 'an aggregate inside the allowed space is announced');
  // Two allowed halves make the whole: the space is coalesced.
  res = computeDesiredRoutes(store(svc()), { nodeName: ME, allowedPrefixes: ['198.51.100.0/25'], poolAddresses: ['198.51.100.128/25'], advertisements: ads(24) });
  t.strictSame(res.routes.map((r) => r.prefix), ['198.51.100.0/24'], 'allowedPrefixes and pools together cover the /24');
  const v6 = store(service('v6', { lbIPs: ['2001:db8:1::10'], clusterIPs: ['fd00::10'] }));
  v6.apply('EndpointSlice', slice('v6-6', 'v6', [['fd00::1', ME]]));
  const agg6 = (len: number) => [{ name: 'agg6', addressKinds: ['loadBalancer' as const], aggregationLengthV6: len }];
  res = computeDesiredRoutes(v6, { nodeName: ME, allowedPrefixes: ['2001:db8:1::/64'], advertisements: agg6(48) });
  t.strictSame(res.routes, [], 'IPv6: a /48 beyond the allowed /64');
  res = computeDesiredRoutes(v6, { nodeName: ME, allowedPrefixes: ['2001:db8:1::/64'], advertisements: agg6(64) });
  t.strictSame(res.routes.map((r) => r.prefix), ['2001:db8:1::/64'], 'IPv6: the /64 itself');
});

t.test('guard: an advertisement refused by its aggregation leaves the others announcing, with a note', async (t) => {
  const ctx: DesiredRoutesContext = {
    nodeName: ME,
    allowedPrefixes: ['198.51.100.0/28'],
    advertisements: [
      { name: 'host', addressKinds: ['loadBalancer'] },
      { name: 'wide', addressKinds: ['loadBalancer'], aggregationLength: 16 },
    ],
  };
  const res = computeDesiredRoutes(store(service('web', { lbIPs: ['198.51.100.10'] })), ctx);
  t.strictSame(res.routes.map((r) => [r.prefix, r.advertisements]), [['198.51.100.10/32', ['host']]]);
  const v = res.services[0]?.vips.find((x) => x.kind === 'loadBalancer');
  t.equal(v?.announced, true);
  t.ok(v?.reasons.some((r) => r.code === 'PrefixNotAllowed' && r.advertisement === 'wide'), 'the refused advertisement is named');
});

t.test("guard: an advertisement's allowedPrefixes only narrow", async (t) => {
  const ctx: DesiredRoutesContext = {
    nodeName: ME,
    allowedPrefixes: ['198.51.100.0/24'],
    advertisements: [
      { name: 'low', addressKinds: ['loadBalancer', 'externalIP'], allowedPrefixes: ['198.51.100.0/25'] },
      { name: 'everything', addressKinds: ['externalIP'], allowedPrefixes: ['0.0.0.0/0'] },
    ],
  };
  const res = computeDesiredRoutes(store(service('web', { lbIPs: ['198.51.100.10', '198.51.100.200'], externalIPs: ['8.8.8.8'] })), ctx);
  t.strictSame(res.routes.map((r) => r.prefix), ['198.51.100.10/32'], 'inside both lists only');
  t.equal(vips(res)['loadBalancer 198.51.100.200'], 'PrefixNotAllowed', 'outside the advertisement\'s list');
  t.match(reason(res, '198.51.100.200'), 'advertisement low: 198.51.100.200 is outside its allowedPrefixes (198.51.100.0/25)');
  t.equal(vips(res)['externalIP 8.8.8.8'], 'PrefixNotAllowed', '0.0.0.0/0 on an advertisement cannot widen the top-level list');
  // It narrows ClusterIPs and service CIDRs too.
  const narrowCluster: DesiredRoutesContext = { nodeName: ME, serviceCIDRs: ['10.100.0.0/16'], advertisements: [{ name: 'c', addressKinds: ['clusterIP', 'serviceCIDR'], allowedPrefixes: ['10.100.0.0/16'] }] };
  const s = store(service('web', { type: 'ClusterIP', clusterIPs: ['10.96.0.10'] }));
  s.apply('ServiceCIDR', serviceCIDR('extra', ['10.200.0.0/16']));
  const r2 = computeDesiredRoutes(s, narrowCluster);
  t.strictSame(r2.routes.map((r) => r.prefix), ['10.100.0.0/16'], 'a ClusterIP and a service CIDR outside the advertisement\'s list are left out');
  t.equal(vips(r2)['clusterIP 10.96.0.10'], 'PrefixNotAllowed');
  t.strictSame(r2.serviceCIDRs.map((c) => [c.cidr, c.announced]), [['10.100.0.0/16', true], ['10.200.0.0/16', false]]);
});

t.test('guard: ClusterIP host routes need no list; an aggregated ClusterIP prefix stays inside serviceCIDRs or the allowed space', async (t) => {
  const svc = () => service('web', { type: 'ClusterIP', clusterIPs: ['10.96.0.10'] });
  const ads = (len?: number) => [{ name: 'c', addressKinds: ['clusterIP' as const], ...(len !== undefined ? { aggregationLength: len } : {}) }];
  let res = computeDesiredRoutes(store(svc()), { nodeName: ME, advertisements: ads() });
  t.strictSame(res.routes.map((r) => r.prefix), ['10.96.0.10/32'], 'a ClusterIP host route without any list');
  res = computeDesiredRoutes(store(svc()), { nodeName: ME, advertisements: ads(16) });
  t.strictSame(res.routes, [], 'an aggregated ClusterIP prefix with no list covering it');
  t.match(reason(res, '10.96.0.10'), 'would announce 10.96.0.0/16, which reaches beyond the allowed space and serviceCIDRs');
  res = computeDesiredRoutes(store(svc()), { nodeName: ME, serviceCIDRs: ['10.96.0.0/12'], advertisements: ads(16) });
  t.strictSame(res.routes.map((r) => r.prefix), ['10.96.0.0/16'], 'inside the configured service CIDR');
});
