// What a MetalLB configuration needs of Herald's announcing side (docs/metallb-migration.md, issue 32 item 4), from
// the configuration file through src/daemon/mapping.ts to the desired routes: an advertisement that selects pools by
// name (ipAddressPools) and by label (ipAddressPoolSelectors) announces only their addresses; community aliases
// (communityAliases) stand for their values, a large one as a large community; ignoreExcludeLB lets a node labelled
// exclude-from-external-load-balancers announce. Each test fails when the feature is reverted.
import t from 'tap';
import { validateConfig } from '../../../src/config/load.ts';
import type { Config } from '../../../src/config/schema.ts';
import { computeDesiredRoutes } from '../../../src/controller/desired-routes.ts';
import type { DesiredResult } from '../../../src/controller/desired-routes.ts';
import { EXCLUDE_LABEL } from '../../../src/controller/node-eligibility.ts';
import { desiredRoutesContext } from '../../../src/daemon/mapping.ts';
import { ObjectStore } from '../../../src/k8s/object-store.ts';
import { node, service, slice } from '../../helpers/k8s-objects.ts';

const ME = 'node-a';

function config(data: Record<string, unknown>): Config {
  const r = validateConfig({ bgp: { localAs: 65000, routerId: '10.0.0.1' }, ...data });
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return r.config;
}

const POOLS = [
  { name: 'prod', addresses: ['198.51.100.0/28'], labels: { tier: 'prod' } },
  { name: 'lab', addresses: ['203.0.113.10-203.0.113.20'] },
];

/** Two LoadBalancer Services, one address in each pool, each with a ready endpoint on this node. */
function store(nodeLabels: Record<string, string> = {}): ObjectStore {
  const s = new ObjectStore();
  s.apply('Node', node(ME, { labels: nodeLabels }));
  for (const [name, ip] of [['shop', '198.51.100.5'], ['test', '203.0.113.15']] as const) {
    s.apply('Service', service(name, { lbIPs: [ip] }));
    s.apply('EndpointSlice', slice(`${name}-1`, name, [['10.0.1.1', ME]]));
  }
  return s;
}

/** prefix → advertisements announcing it. */
function announced(res: DesiredResult): Record<string, string[]> {
  return Object.fromEntries(res.routes.map((r) => [r.prefix, r.advertisements]));
}

t.test('ipAddressPools and ipAddressPoolSelectors: an advertisement announces only addresses of the pools it selects', async (t) => {
  const cfg = config({
    pools: POOLS,
    advertisements: [
      { name: 'by-name', ipAddressPools: ['lab'] },
      { name: 'by-label', ipAddressPoolSelectors: [{ matchLabels: { tier: 'prod' } }], communities: ['65000:1'] },
      { name: 'any', peers: [] },
      { name: 'gone', ipAddressPools: ['no-such-pool'] },
    ],
  });
  const res = computeDesiredRoutes(store(), desiredRoutesContext(cfg, ME));
  t.same(announced(res), { '198.51.100.5/32': ['any', 'by-label'], '203.0.113.15/32': ['any', 'by-name'] }, 'a name no pool has selects nothing, as in MetalLB');
  const prod = res.routes.find((r) => r.prefix === '198.51.100.5/32');
  t.same(prod?.communities, ['65000:1'], 'by-label\'s community on its pool\'s address only');
  t.same(res.routes.find((r) => r.prefix === '203.0.113.15/32')?.communities, []);
});

t.test('an address in no selected pool is not announced, and the reason names the pool', async (t) => {
  const cfg = config({ pools: POOLS, advertisements: [{ name: 'prod-only', ipAddressPools: ['prod'] }] });
  const res = computeDesiredRoutes(store(), desiredRoutesContext(cfg, ME));
  t.same(announced(res), { '198.51.100.5/32': ['prod-only'] });
  const vip = res.services.find((s) => s.service === 'default/test')?.vips.find((v) => v.kind === 'loadBalancer');
  t.equal(vip?.announced, false);
  t.match(vip?.reasons, [{ code: 'NoAdvertisement', message: /this address's pool/ }]);
});

t.test('communityAliases: an alias stands for its value; a large one is sent as a large community', async (t) => {
  const cfg = config({
    pools: POOLS,
    communityAliases: [
      { name: 'no-transit', value: '65000:666' },
      { name: 'region-eu', value: '65000:1:2' },
    ],
    advertisements: [{ name: 'tagged', communities: ['no-transit', 'region-eu', '65000:7'], largeCommunities: ['65000:9:9'] }],
  });
  const res = computeDesiredRoutes(store(), desiredRoutesContext(cfg, ME));
  const route = res.routes.find((r) => r.prefix === '198.51.100.5/32');
  t.same(route?.communities, ['65000:666', '65000:7']);
  t.same(route?.largeCommunities, ['65000:1:2', '65000:9:9'], 'the alias\'s and the advertisement\'s own (route-merge sorts them)');
});

t.test('guard: an advertisement naming an alias no communityAliases entry defines is refused, with the field and the fix', async (t) => {
  const r = validateConfig({ bgp: { localAs: 65000, routerId: '10.0.0.1' }, communityAliases: [{ name: 'a', value: '1:1' }], advertisements: [{ name: 'x', communities: ['1:2', 'b'] }] });
  t.equal(r.ok, false);
  t.match(!r.ok && r.errors, [{ path: 'advertisements[0].communities[1]', message: /"b" is neither a community nor the name of a communityAliases entry/ }]);
  const dup = validateConfig({ bgp: { localAs: 65000, routerId: '10.0.0.1' }, communityAliases: [{ name: 'a', value: '1:1' }, { name: 'a', value: '1:2' }, { name: 'no-export', value: '1:3' }] });
  t.match(!dup.ok && dup.errors.map((e) => e.message), [/duplicate alias "a"/, /"no-export" is already a community/]);
  const bare = validateConfig({ bgp: { localAs: 65000, routerId: '10.0.0.1' }, communityAliases: [{ name: 'c', value: '65000' }], advertisements: [{ name: 'x', communities: ['65000'] }] });
  t.match(!bare.ok && bare.errors, [{ path: 'advertisements[0].communities[0]', message: /not a bare number/ }, { path: 'communityAliases[0].value' }], 'a bare number is neither a community nor an alias (issue 35)');
});

t.test('ignoreExcludeLB: a node labelled exclude-from-external-load-balancers announces only with it', async (t) => {
  const labels = { [EXCLUDE_LABEL]: '' };
  let res = computeDesiredRoutes(store(labels), desiredRoutesContext(config({ pools: POOLS }), ME));
  t.same(res.routes, [], 'default: excluded');
  t.match(res.services[0]?.vips[0]?.reasons, [{ code: 'NodeExcluded' }]);
  res = computeDesiredRoutes(store(labels), desiredRoutesContext(config({ pools: POOLS, ignoreExcludeLB: true }), ME));
  t.same(Object.keys(announced(res)).sort(), ['198.51.100.5/32', '203.0.113.15/32'], 'ignoreExcludeLB: announced');
});
