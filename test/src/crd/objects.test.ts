// Herald's objects read as configuration (src/crd/objects.ts): for each kind a valid object is accepted with
// the file's names and defaults, and invalid ones are rejected with the object's own field named (never the file's).
// The same objects against the real kube-apiserver (structure and CEL rules): test/control-plane/crds.test.ts.
import t from 'tap';
import { readObject } from '../../../src/crd/objects.ts';
import { heraldObject } from '../../helpers/k8s-objects.ts';

t.test('BGPPeer: MetalLB names in, the file names out; defaults applied', async (t) => {
  const r = readObject('BGPPeer', heraldObject('BGPPeer', 'tor-a', { peerAddress: '192.0.2.1', peerASN: 65001, myASN: 64601, sourceAddress: '192.0.2.10', nodeSelectors: [{ matchLabels: { rack: 'a' } }], passwordSecret: { name: 'tor-a' } }));
  t.ok(r.ok, JSON.stringify(r));
  if (!r.ok) return;
  t.match(r.item, { name: 'tor-a', address: '192.0.2.1', peerAs: 65001, localAs: 64601, localAddress: '192.0.2.10', port: 179, holdTime: 90, nodeSelectors: [{ matchLabels: { rack: 'a' } }], passwordSecret: { name: 'tor-a', key: 'password' } });
});

t.test('BGPPeer: each invalid object names its own field', async (t) => {
  const cases: Array<[string, unknown, string, RegExp]> = [
    ['no peerASN', { peerAddress: '192.0.2.1' }, 'spec.peerASN', /required/],
    ['bad address', { peerAddress: '192.0.2.300', peerASN: 65001 }, 'spec.peerAddress', /IP address/],
    ['myASN 0', { peerAddress: '192.0.2.1', peerASN: 65001, myASN: 0 }, 'spec.myASN', /AS number/],
    ['holdTime 2', { peerAddress: '192.0.2.1', peerASN: 65001, holdTime: 2 }, 'spec.holdTime', /0 or 3\.\.65535/],
    ['unknown field', { peerAddress: '192.0.2.1', peerASN: 65001, bogus: 1 }, 'spec.bogus', /unknown field/],
    ['the file name of a renamed field', { peerAddress: '192.0.2.1', peerASN: 65001, peerAs: 65001 }, 'spec.peerAs', /unknown field/],
    ['a file-only field', { peerAddress: '192.0.2.1', peerASN: 65001, password: { env: 'X' } }, 'spec.password', /unknown field/],
    ['bad selector operator', { peerAddress: '192.0.2.1', peerASN: 65001, nodeSelectors: [{ matchExpressions: [{ key: 'rack', operator: 'Near' }] }] }, 'spec.nodeSelectors[0].matchExpressions[0].operator', /./],
  ];
  for (const [what, spec, path, message] of cases) {
    const r = readObject('BGPPeer', heraldObject('BGPPeer', 'p', spec));
    t.notOk(r.ok, `${what}: rejected`);
    if (r.ok) continue;
    t.match(r.issues, [{ path, message }], `${what}: ${path}`);
  }
  const noSpec = readObject('BGPPeer', { apiVersion: 'herald.io/v1alpha1', kind: 'BGPPeer', metadata: { name: 'p' } });
  t.same(noSpec, { ok: false, issues: [{ path: 'spec', message: 'required' }] });
  const badName = readObject('BGPPeer', heraldObject('BGPPeer', 'a'.repeat(64), { peerAddress: '192.0.2.1', peerASN: 65001 }));
  t.match(badName, { ok: false, issues: [{ path: 'metadata.name' }] }, 'a peer name too long for logs and metrics names metadata.name');
});

t.test('BGPAdvertisement: valid and invalid', async (t) => {
  const ok = readObject('BGPAdvertisement', heraldObject('BGPAdvertisement', 'web', { addressKinds: ['loadBalancer', 'externalIP'], communities: ['65000:100', 'no-export'], localPref: 200, peers: ['tor-a'], serviceSelectors: [{ matchLabels: { app: 'web' } }], aggregationLength: 32 }));
  t.match(ok, { ok: true, item: { name: 'web', addressKinds: ['loadBalancer', 'externalIP'], localPref: 200, peers: ['tor-a'] } });
  t.match(readObject('BGPAdvertisement', heraldObject('BGPAdvertisement', 'a', { communities: ['65000:70000'] })), { ok: false, issues: [{ path: 'spec.communities[0]', message: /community/ }] });
  t.match(readObject('BGPAdvertisement', heraldObject('BGPAdvertisement', 'a', { addressKinds: ['nodeIP'] })), { ok: false, issues: [{ path: 'spec.addressKinds[0]' }] });
  t.match(readObject('BGPAdvertisement', heraldObject('BGPAdvertisement', 'a', { aggregationLength: 33 })), { ok: false, issues: [{ path: 'spec.aggregationLength' }] });
  t.match(readObject('BGPAdvertisement', heraldObject('BGPAdvertisement', 'a', { serviceSelector: {} })), { ok: false, issues: [{ path: 'spec.serviceSelector', message: 'unknown field' }] }, 'the single-selector form is the file\'s only');
});

t.test('IPAddressPool: serviceAllocation maps to the file\'s fields; errors name it', async (t) => {
  const ok = readObject('IPAddressPool', heraldObject('IPAddressPool', 'prod', { addresses: ['198.51.100.0/24', '203.0.113.10-203.0.113.20'], serviceAllocation: { priority: 10, namespaces: ['shop'] } }));
  t.match(ok, { ok: true, item: { name: 'prod', priority: 10, namespaces: ['shop'], autoAssign: true } });
  t.match(readObject('IPAddressPool', heraldObject('IPAddressPool', 'p', { addresses: ['198.51.100.0/24'], serviceAllocation: { priority: 1.5 } })), { ok: false, issues: [{ path: 'spec.serviceAllocation.priority' }] });
  t.match(readObject('IPAddressPool', heraldObject('IPAddressPool', 'p', { addresses: ['10.0.0.1-2001:db8::1'] })), { ok: false, issues: [{ path: 'spec.addresses[0]', message: /one family/ }] });
  t.match(readObject('IPAddressPool', heraldObject('IPAddressPool', 'p', { addresses: [] })), { ok: false, issues: [{ path: 'spec.addresses' }] });
  t.match(readObject('IPAddressPool', heraldObject('IPAddressPool', 'p', { addresses: ['198.51.100.0/24'], serviceAllocation: 3 })), { ok: false, issues: [{ path: 'spec.serviceAllocation', message: 'expected a mapping' }] });
});

t.test('IPAddressPool: namespaceSelectors under serviceAllocation; metadata.labels are the labels advertisements select it by', async (t) => {
  const obj = heraldObject('IPAddressPool', 'prod', { addresses: ['198.51.100.0/24'], serviceAllocation: { namespaceSelectors: [{ matchLabels: { team: 'a' } }] } });
  t.match(readObject('IPAddressPool', { ...obj, metadata: { ...obj.metadata, labels: { tier: 'prod' } } }), { ok: true, item: { name: 'prod', namespaceSelectors: [{ matchLabels: { team: 'a' } }], labels: { tier: 'prod' } } });
  const plain = readObject('IPAddressPool', obj);
  t.equal(plain.ok && plain.item.labels, undefined, 'no labels: none');
  t.match(readObject('IPAddressPool', heraldObject('IPAddressPool', 'p', { addresses: ['198.51.100.0/24'], labels: { a: 'b' } })), { ok: false, issues: [{ path: 'spec.labels', message: 'unknown field' }] }, 'labels are metadata\'s, not the spec\'s');
});

t.test('BGPAdvertisement: ipAddressPools and ipAddressPoolSelectors as MetalLB\'s; a community may name an alias', async (t) => {
  t.match(readObject('BGPAdvertisement', heraldObject('BGPAdvertisement', 'a', { ipAddressPools: ['prod'], ipAddressPoolSelectors: [{ matchLabels: { tier: 'prod' } }], communities: ['no-transit'] })), { ok: true, item: { ipAddressPools: ['prod'], ipAddressPoolSelectors: [{ matchLabels: { tier: 'prod' } }], communities: ['no-transit'] } });
});

t.test('BGPNodeConfigOverride: myASN, routerID and peers of its own; errors inside its peers name the item', async (t) => {
  const ok = readObject('BGPNodeConfigOverride', heraldObject('BGPNodeConfigOverride', 'node-a', { myASN: 64601, routerID: '10.0.0.11', peers: [{ name: 'tor', peerAddress: '192.0.2.1', peerASN: 65001 }] }));
  t.match(ok, { ok: true, item: { localAs: 64601, routerId: '10.0.0.11', peers: [{ name: 'tor', address: '192.0.2.1', peerAs: 65001, port: 179 }] } });
  t.match(readObject('BGPNodeConfigOverride', heraldObject('BGPNodeConfigOverride', 'n', { sourceAddresses: ['192.0.2.1', '2001:db8::1'] })), { ok: true });
  t.match(readObject('BGPNodeConfigOverride', heraldObject('BGPNodeConfigOverride', 'n', { sourceAddresses: ['192.0.2.1', '192.0.2.2'] })), { ok: false, issues: [{ path: 'spec.sourceAddresses[1]', message: /one address per family/ }] });
  t.match(readObject('BGPNodeConfigOverride', heraldObject('BGPNodeConfigOverride', 'n', { routerID: '0.0.0.0' })), { ok: false, issues: [{ path: 'spec.routerID', message: /0\.0\.0\.0/ }] });
  t.match(readObject('BGPNodeConfigOverride', heraldObject('BGPNodeConfigOverride', 'n', { peers: [{ name: 'x', peerAddress: '192.0.2.1', peerASN: 65001 }, { name: 'y', peerAddress: 'nope', peerASN: 65001 }] })), { ok: false, issues: [{ path: 'spec.peers[1].peerAddress' }] });
  t.match(readObject('BGPNodeConfigOverride', heraldObject('BGPNodeConfigOverride', 'n', { peers: [{ name: 'x', peerAddress: '192.0.2.1', peerASN: 65001, nodeSelectors: [] }] })), { ok: false, issues: [{ path: 'spec.peers[0].nodeSelectors', message: 'unknown field' }] }, 'an override\'s peers take no node selectors');
});
