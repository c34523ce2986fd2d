// Path attributes from Services (docs/decisions.md "Path attributes from Services"): the herald.io/ annotations apply
// only through an advertisement that lists what it accepts (serviceAttributes), never a well-known community, never a
// union across the Services of one prefix, and never dropped silently when they do not fit (issue 35 N7). Each test
// fails when the guard it names is reverted.
import t from 'tap';
import { ObjectStore } from '../../../src/k8s/object-store.ts';
import type { Advertisement, DesiredResult, DesiredRoutesContext } from '../../../src/controller/desired-routes.ts';
import { computeDesiredRoutes } from '../../../src/controller/desired-routes.ts';
import { admitAttributes } from '../../../src/controller/admission.ts';
import type { RouteContribution } from '../../../src/controller/route-merge.ts';
import { mergePrefix } from '../../../src/controller/route-merge.ts';
import { node, service, slice } from '../../helpers/k8s-objects.ts';

const ME = 'node-a';

function annotated(name: string, lbIP: string, annotations: Record<string, string>, i = 0) {
  const s = service(name, { lbIPs: [lbIP], clusterIPs: [`10.96.0.${10 + i}`] });
  s.metadata = { ...s.metadata, annotations };
  return s;
}

function run(ads: Advertisement[], ...svcs: ReturnType<typeof service>[]): DesiredResult {
  const s = new ObjectStore();
  s.apply('Node', node(ME));
  svcs.forEach((svc, i) => {
    s.apply('Service', svc);
    s.apply('EndpointSlice', slice(`${svc.metadata?.name}-1`, svc.metadata?.name as string, [[`10.1.0.${i + 1}`, ME]]));
  });
  const ctx: DesiredRoutesContext = { nodeName: ME, allowedPrefixes: ['198.51.100.0/24'], advertisements: ads };
  return computeDesiredRoutes(s, ctx);
}

const reasons = (res: DesiredResult, svc: string, code: string) => res.services.find((s) => s.service === svc)?.vips.find((v) => v.kind === 'loadBalancer')?.reasons.filter((r) => r.code === code).map((r) => r.message) ?? [];
const announced = (res: DesiredResult, svc: string) => res.services.find((s) => s.service === svc)?.vips.find((v) => v.kind === 'loadBalancer')?.announced;

const ATTACK = { 'herald.io/communities': '65535:666, 65535:0, no-export, no-advertise', 'herald.io/med': '0', 'herald.io/as-path-prepend': '10', 'herald.io/large-communities': '64500:1:1' };
const OPERATOR: Advertisement = { name: 'public', addressKinds: ['loadBalancer'], communities: ['64512:1'], med: 100 };

t.test('guard: without an opt-in every annotation is refused, and the VIP is announced with the operator\'s attributes', async (t) => {
  const res = run([OPERATOR], annotated('web', '198.51.100.10', { 'herald.io/communities': '64512:200', 'herald.io/med': '5', 'herald.io/as-path-prepend': '1', 'herald.io/large-communities': '64500:1:1' }));
  t.equal(announced(res, 'default/web'), true, 'a refused annotation never withdraws the VIP');
  const r = res.routes.find((x) => x.prefix === '198.51.100.10/32');
  t.strictSame([r?.communities, r?.largeCommunities, r?.med, r?.asPathPrepend], [['64512:1'], [], 100, undefined], "the advertisement's attributes only");
  const refused = reasons(res, 'default/web', 'AttributeNotAllowed');
  t.equal(refused.length, 4, 'one reason per refused annotation');
  t.match(refused.join('\n'), /herald\.io\/communities: advertisement public accepts none from Services \(it sets no serviceAttributes\.communities\)/);
  t.match(refused.join('\n'), /herald\.io\/med: advertisement public accepts none from Services \(it sets no serviceAttributes\.med: true\)/);
  t.notOk(reasons(res, 'default/web', 'ServiceAttributes').length, 'nothing said to be sent');
});

t.test('guard: a well-known community (65535:x) never comes from an annotation, whatever the allow-list', async (t) => {
  // An allow-list the config would refuse (it reaches into 65535:x), as a hand-made context can carry it.
  const ad: Advertisement = { ...OPERATOR, serviceAttributes: { communities: ['0:0-65535', '64512:0-65535', '65535:0-65535'], largeCommunities: ['64500:1:0-9'], med: true, maxPrepend: 3 } };
  for (const bad of ['65535:666', 'blackhole', 'no-export', 'graceful-shutdown', '65535:0', 'no-advertise', 'nopeer', '4294967295']) {
    const res = run([ad], annotated('web', '198.51.100.10', { 'herald.io/communities': `64512:7 ${bad}` }));
    const r = res.routes.find((x) => x.prefix === '198.51.100.10/32');
    t.strictSame(r?.communities, ['64512:1'], `${bad}: nothing of the annotation is sent (it is refused whole)`);
    // 4294967295 is 65535:65535 written as one number: since 8d3e8af a bare number is never a community (the codec
    // would read it as 0:N), so it is refused before the well-known rule is asked.
    if (bad === '4294967295') t.match(reasons(res, 'default/web', 'InvalidAnnotation')[0], /herald\.io\/communities.*4294967295/, bad);
    else t.match(reasons(res, 'default/web', 'AttributeNotAllowed')[0], /well-known communit(y|ies) \(65535:x\), which never come from a Service/, bad);
  }
  const attack = run([ad], annotated('web', '198.51.100.10', ATTACK));
  const r = attack.routes.find((x) => x.prefix === '198.51.100.10/32');
  t.strictSame(r?.communities, ['64512:1'], "the issue's attack: no BLACKHOLE, GRACEFUL_SHUTDOWN, NO_EXPORT or NO_ADVERTISE");
  t.equal(r?.asPathPrepend, undefined, 'a prepend of 10 is above maxPrepend 3');
  t.equal(r?.med, 0, 'the MED is allowed by this list (med: true)');
});

t.test('guard: an opted-in advertisement sends what it lists, and refuses anything outside it whole', async (t) => {
  const ad: Advertisement = { ...OPERATOR, serviceAttributes: { communities: ['64512:100-199', '64512:300'], largeCommunities: ['64500:1:0-9'], med: true, maxPrepend: 2 } };
  let res = run([ad], annotated('web', '198.51.100.10', { 'herald.io/communities': '64512:150 64512:300', 'herald.io/large-communities': '64500:1:5', 'herald.io/med': '50', 'herald.io/as-path-prepend': '2' }));
  let r = res.routes.find((x) => x.prefix === '198.51.100.10/32');
  t.strictSame([r?.communities, r?.largeCommunities, r?.med, r?.asPathPrepend], [['64512:1', '64512:150', '64512:300'], ['64500:1:5'], 50, 2], 'inside the list: sent');
  t.match(reasons(res, 'default/web', 'ServiceAttributes')[0], 'annotations accepted by advertisement public: communities 64512:150 64512:300; large communities 64500:1:5; MED 50; AS path prepend 2');
  res = run([ad], annotated('web', '198.51.100.10', { 'herald.io/communities': '64512:150 64512:200', 'herald.io/large-communities': '64500:2:5', 'herald.io/as-path-prepend': '3' }));
  r = res.routes.find((x) => x.prefix === '198.51.100.10/32');
  t.strictSame([r?.communities, r?.largeCommunities, r?.asPathPrepend], [['64512:1'], [], undefined], 'one value outside the list refuses the annotation whole');
  t.match(reasons(res, 'default/web', 'AttributeNotAllowed').join('\n'), /64512:200 is not in serviceAttributes\.communities of advertisement public \(64512:100-199, 64512:300\)/);
  t.match(reasons(res, 'default/web', 'AttributeNotAllowed').join('\n'), /3 extra copies of the local AS, more than serviceAttributes\.maxPrepend 2/);
  t.equal(announced(res, 'default/web'), true);
});

t.test('guard: the opt-in is per advertisement: the same VIP through another advertisement carries none of it', async (t) => {
  const open: Advertisement = { name: 'open', addressKinds: ['loadBalancer'], peers: ['a'], serviceAttributes: { communities: ['64512:0-65535'] } };
  const closed: Advertisement = { name: 'closed', addressKinds: ['loadBalancer'], peers: ['b'], aggregationLength: 31 };
  const res = run([open, closed], annotated('web', '198.51.100.10', { 'herald.io/communities': '64512:7' }));
  t.strictSame(res.routes.map((r) => [r.prefix, r.communities]), [['198.51.100.10/31', []], ['198.51.100.10/32', ['64512:7']]]);
  t.equal(reasons(res, 'default/web', 'AttributeNotAllowed').length, 1, 'refused by the closed advertisement only');
});

t.test('guard: never a union across Services: a shared or aggregated prefix carries a Service attribute only when all agree', async (t) => {
  const ad: Advertisement = { name: 'lb', addressKinds: ['loadBalancer'], communities: ['64512:1'], serviceAttributes: { communities: ['64512:0-999'], med: true } };
  // Two tenants share 198.51.100.10 (allow-shared-ip), each with its own community and MED.
  let res = run([ad], annotated('a', '198.51.100.10', { 'herald.io/communities': '64512:666', 'herald.io/med': '10' }, 0), annotated('b', '198.51.100.10', { 'herald.io/communities': '64512:7', 'herald.io/med': '20' }, 1));
  let r = res.routes.find((x) => x.prefix === '198.51.100.10/32');
  t.strictSame([r?.communities, r?.med], [['64512:1'], undefined], "neither tenant's community or MED rides on the other's route");
  t.equal(r?.withheld?.length, 2, 'said, not dropped silently');
  t.match(r?.withheld?.join('\n'), /herald\.io\/communities not sent on 198\.51\.100\.10\/32: not every Service and advertisement behind it asks for the same \(default\/a \(lb\): 64512:666; default\/b \(lb\): 64512:7\)/);
  // One Service without the annotation on the same prefix: not every piece carries it.
  res = run([ad], annotated('a', '198.51.100.10', { 'herald.io/communities': '64512:666' }, 0), annotated('b', '198.51.100.10', {}, 1));
  r = res.routes.find((x) => x.prefix === '198.51.100.10/32');
  t.strictSame(r?.communities, ['64512:1'], 'a Service that asks for nothing is not given the other\'s community');
  // Both the same: sent.
  res = run([ad], annotated('a', '198.51.100.10', { 'herald.io/communities': '64512:7' }, 0), annotated('b', '198.51.100.10', { 'herald.io/communities': '64512:7' }, 1));
  t.strictSame(res.routes.find((x) => x.prefix === '198.51.100.10/32')?.communities, ['64512:1', '64512:7'], 'every Service agrees: sent');
  // Aggregation merges two VIPs of two Services into one /24.
  const agg: Advertisement = { ...ad, aggregationLength: 24 };
  res = run([agg], annotated('a', '198.51.100.10', { 'herald.io/communities': '64512:666' }, 0), annotated('b', '198.51.100.20', { 'herald.io/communities': '64512:7' }, 1));
  r = res.routes.find((x) => x.prefix === '198.51.100.0/24');
  t.strictSame(r?.communities, ['64512:1'], 'the aggregate carries neither');
  t.strictSame(r?.services, ['default/a', 'default/b']);
});

t.test('guard (issue 35 N7): an attribute set that does not fit keeps the operator\'s attributes, never a well-known one dropped, and says so', async (t) => {
  // 900 operator communities (3,600 octets) plus 51 of the Service's: 3,804 octets, past the 3,800 that fit.
  const many = Array.from({ length: 900 }, (_, i) => `64512:${i + 1000}`);
  const ad: Advertisement = { name: 'big', addressKinds: ['loadBalancer'], communities: ['no-export', ...many], serviceAttributes: { communities: ['64512:0-999'], largeCommunities: ['64500:1:0-99'] } };
  const svcCommunities = Array.from({ length: 51 }, (_, i) => `64512:${i + 1}`).join(' ');
  const res = run([ad], annotated('web', '198.51.100.10', { 'herald.io/communities': svcCommunities, 'herald.io/large-communities': '64500:1:1' }));
  const r = res.routes.find((x) => x.prefix === '198.51.100.10/32');
  t.ok(r?.communities.includes('no-export'), "the operator's NO_EXPORT is sent");
  t.equal(r?.communities.length, 901, "every operator community is sent");
  t.strictSame(r?.largeCommunities, [], "the Service's large community is left out with its communities");
  t.match(r?.withheld?.[0], /the Services' communities \(64512:1 .* 64500:1:1\) not sent on 198\.51\.100\.10\/32: with the advertisements' they exceed the 3800 octets/);
  // Two advertisements whose communities together do not fit: the well-known ones are kept.
  const a1: Advertisement = { name: 'a1', addressKinds: ['loadBalancer'], communities: ['no-export', 'blackhole', ...many.slice(0, 600)] };
  const a2: Advertisement = { name: 'a2', addressKinds: ['loadBalancer'], communities: many.slice(300, 900).map((c) => c.replace('64512:', '64513:')) };
  const both = run([a1, a2], annotated('x', '198.51.100.11', {}));
  const rb = both.routes.find((x) => x.prefix === '198.51.100.11/32');
  t.ok(rb?.communities.includes('no-export') && rb.communities.includes('blackhole'), 'well-known communities are never the ones left out');
  t.ok((rb?.communities.length ?? 0) * 4 <= 3800, 'it fits');
  t.match(rb?.withheld?.[0], /the advertisements' communities .* not sent on 198\.51\.100\.11\/32: together they exceed the 3800 octets .*well-known ones are always kept/);
});

t.test('admitAttributes: each attribute whole or not at all', async (t) => {
  const ad = { name: 'x', serviceAttributes: { communities: ['64512:1-9'], med: true } };
  t.strictSame(admitAttributes({}, ad), { attributes: {}, refused: [] });
  const a = admitAttributes({ communities: ['64512:1', '64512:10'], med: 7, asPathPrepend: 0 }, ad);
  t.strictSame(a.attributes, { med: 7, asPathPrepend: 0 }, 'a prepend of 0 (none) is always allowed');
  t.equal(a.refused.length, 1);
});

t.test('mergePrefix: a single piece with Service attributes sends them; agreed MED and prepend replace the operator\'s', async (t) => {
  const piece = (service: string, fromService: RouteContribution['fromService'], med?: number): RouteContribution => ({
    prefix: '198.51.100.1/32',
    family: 'ipv4-unicast',
    peers: 'all',
    communities: ['64512:1'],
    largeCommunities: [],
    advertisement: 'lb',
    service,
    ...(med !== undefined ? { med } : {}),
    ...(fromService !== undefined ? { fromService } : {}),
  });
  t.strictSame(mergePrefix([piece('a', { med: 5, asPathPrepend: 2 }, 100)]).med, 5);
  const two = mergePrefix([piece('a', { med: 5, asPathPrepend: 2 }, 100), piece('b', { med: 5, asPathPrepend: 2 }, 80)]);
  t.strictSame([two.med, two.asPathPrepend, two.withheld], [5, 2, undefined], 'agreed: replaces the lowest operator MED');
  const split = mergePrefix([piece('a', { med: 5 }, 100), piece('b', { med: 6 }, 80)]);
  t.strictSame([split.med, split.withheld?.length], [80, 1], 'disagreed: the operator\'s lowest MED, and why');
});
