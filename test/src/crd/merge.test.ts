// The rule when the configuration file and Herald's objects both exist (src/crd/merge.ts, docs/configuration.md
// "When both exist"): objects add to the file's lists and never replace what it configures; a node's override sets its
// AS number and router ID; an invalid object is ignored with its field named and never disturbs another.
import t from 'tap';
import { validateConfig } from '../../../src/config/load.ts';
import type { Config } from '../../../src/config/schema.ts';
import type { ConfigObjects } from '../../../src/crd/merge.ts';
import { mergeConfig, NO_OBJECTS } from '../../../src/crd/merge.ts';
import { heraldObject } from '../../helpers/k8s-objects.ts';

function cfg(data: object): Config {
  const r = validateConfig({ bgp: { localAs: 65000 }, source: { kubernetes: {} }, ...data });
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return r.config;
}

const objects = (o: Partial<ConfigObjects>): ConfigObjects => ({ ...NO_OBJECTS, ...o });
const file = cfg({ peers: [{ name: 'core', address: '192.0.2.1', peerAs: 65100 }], advertisements: [{ name: 'default' }], pools: [{ name: 'file-pool', addresses: ['198.51.100.0/28'] }] });

t.test('no objects: the file as it is', async (t) => {
  const m = mergeConfig(file, NO_OBJECTS, 'node-a');
  t.same(m.config, file);
  t.same(m.verdicts, []);
  t.equal(m.override, undefined);
});

t.test('objects add to the file\'s lists; each is verified in name order', async (t) => {
  const m = mergeConfig(
    file,
    objects({
      BGPPeer: [heraldObject('BGPPeer', 'tor-b', { peerAddress: '192.0.2.3', peerASN: 65003 }), heraldObject('BGPPeer', 'tor-a', { peerAddress: '192.0.2.2', peerASN: 65002, myASN: 64601 })],
      BGPAdvertisement: [heraldObject('BGPAdvertisement', 'to-tors', { peers: ['tor-a', 'tor-b'], communities: ['65000:1'] })],
      IPAddressPool: [heraldObject('IPAddressPool', 'crd-pool', { addresses: ['203.0.113.0/28'] })],
    }),
    'node-a',
  );
  t.same(m.config.peers.map((p) => p.name), ['core', 'tor-a', 'tor-b'], 'file peers first, then objects by name');
  t.equal(m.config.peers[1]?.localAs, 64601, 'a BGPPeer\'s myASN is its localAs');
  t.same(m.config.advertisements?.map((a) => a.name), ['default', 'to-tors']);
  t.same(m.config.pools?.map((p) => p.name), ['file-pool', 'crd-pool']);
  t.same([...m.origins], [['core', 'file'], ['tor-a', 'BGPPeer'], ['tor-b', 'BGPPeer']]);
  t.same(m.verdicts.map((v) => [v.kind, v.name, v.issues.length]), [['BGPPeer', 'tor-a', 0], ['BGPPeer', 'tor-b', 0], ['BGPAdvertisement', 'to-tors', 0], ['IPAddressPool', 'crd-pool', 0]]);
});

t.test('an object never replaces what the file configures: name or endpoint taken → invalid, the file wins', async (t) => {
  const m = mergeConfig(
    file,
    objects({
      BGPPeer: [
        heraldObject('BGPPeer', 'core', { peerAddress: '192.0.2.9', peerASN: 65009 }),
        heraldObject('BGPPeer', 'other', { peerAddress: '192.0.2.1', peerASN: 65100 }),
        heraldObject('BGPPeer', 'ok', { peerAddress: '192.0.2.5', peerASN: 65005 }),
      ],
      BGPAdvertisement: [heraldObject('BGPAdvertisement', 'default', { addressKinds: ['externalIP'] })],
      IPAddressPool: [heraldObject('IPAddressPool', 'file-pool', { addresses: ['203.0.113.0/28'] })],
    }),
    'node-a',
  );
  t.same(m.config.peers.map((p) => [p.name, p.address]), [['core', '192.0.2.1'], ['ok', '192.0.2.5']], 'the file\'s peer stays; the valid object still applies');
  t.same(m.config.advertisements, file.advertisements);
  t.same(m.config.pools, file.pools);
  const issues = Object.fromEntries(m.verdicts.map((v) => [`${v.kind}/${v.name}`, v.issues]));
  t.match(issues['BGPPeer/core'], [{ path: 'metadata.name', message: /in the configuration file/ }]);
  t.match(issues['BGPPeer/other'], [{ path: 'spec.peerAddress', message: /peer "core" \(in the configuration file\) already uses 192\.0\.2\.1 port 179/ }]);
  t.same(issues['BGPPeer/ok'], []);
  t.match(issues['BGPAdvertisement/default'], [{ path: 'metadata.name', message: /in the configuration file/ }]);
  t.match(issues['IPAddressPool/file-pool'], [{ path: 'metadata.name', message: /in the configuration file/ }]);
});

t.test('advertisements and pools: a name the file or an earlier object holds is refused, in words naming which', async (t) => {
  const m = mergeConfig(
    file,
    objects({
      BGPAdvertisement: [heraldObject('BGPAdvertisement', 'default', {}), heraldObject('BGPAdvertisement', 'b', {})],
      IPAddressPool: [heraldObject('IPAddressPool', 'file-pool', { addresses: ['203.0.113.0/28'] }), heraldObject('IPAddressPool', 'p', { addresses: ['203.0.113.16/28'] })],
    }),
    'node-a',
  );
  const issues = Object.fromEntries(m.verdicts.map((v) => [`${v.kind}/${v.name}`, v.issues]));
  t.same(issues['BGPAdvertisement/default'], [{ path: 'metadata.name', message: 'an advertisement named "default" is in the configuration file; names are unique' }]);
  t.same(issues['IPAddressPool/file-pool'], [{ path: 'metadata.name', message: 'a pool named "file-pool" is in the configuration file; names are unique' }]);
  t.same(issues['BGPAdvertisement/b'], []);
  t.same(issues['IPAddressPool/p'], []);
  t.same(m.config.advertisements?.map((a) => a.name), ['default', 'b'], 'the file\'s advertisement, then the valid object');
  t.same(m.config.pools?.map((p) => [p.name, p.addresses]), [['file-pool', ['198.51.100.0/28']], ['p', ['203.0.113.16/28']]]);
  // Two objects of one name cannot exist in one namespace; the rule still holds for a list read twice.
  const twice = mergeConfig(file, objects({ IPAddressPool: [heraldObject('IPAddressPool', 'p', { addresses: ['203.0.113.16/28'] }), heraldObject('IPAddressPool', 'p', { addresses: ['203.0.113.32/28'] })] }), 'node-a');
  t.same(twice.verdicts.map((v) => v.issues), [[], [{ path: 'metadata.name', message: 'a pool named "p" is already configured; names are unique' }]]);
  t.same(twice.config.pools?.map((p) => p.addresses), [['198.51.100.0/28'], ['203.0.113.16/28']]);
});

t.test('an invalid object is ignored with its field named; cross-object rules use the CRD names', async (t) => {
  const m = mergeConfig(
    cfg({}),
    objects({
      BGPPeer: [
        heraldObject('BGPPeer', 'bad-keepalive', { peerAddress: '192.0.2.2', peerASN: 65002, holdTime: 9, keepaliveTime: 9 }, { generation: 3 }),
        heraldObject('BGPPeer', 'bad-ascii', { peerAddress: '192.0.2.3' }),
        heraldObject('BGPPeer', 'good', { peerAddress: '192.0.2.4', peerASN: 65004 }),
      ],
      BGPAdvertisement: [heraldObject('BGPAdvertisement', 'to-ghost', { peers: ['ghost'] })],
    }),
    'node-a',
  );
  t.same(m.config.peers.map((p) => p.name), ['good']);
  t.equal(m.config.advertisements, undefined, 'the invalid advertisement is not in force: LoadBalancer IPs to every peer, as without objects');
  const v = Object.fromEntries(m.verdicts.map((x) => [x.name, x]));
  t.match(v['bad-keepalive'], { generation: 3, issues: [{ path: 'spec.keepaliveTime', message: /below holdTime/ }] });
  t.match(v['bad-ascii']?.issues, [{ path: 'spec.peerASN', message: 'required' }]);
  t.match(v['to-ghost']?.issues, [{ path: 'spec.peers[0]', message: 'unknown peer "ghost"' }]);
});

t.test('BGPNodeConfigOverride: only the node it is named after; its AS and router ID; its peers; every override verified everywhere', async (t) => {
  const objs = objects({
    BGPPeer: [heraldObject('BGPPeer', 'tor', { peerAddress: '192.0.2.2', peerASN: 65002 })],
    BGPNodeConfigOverride: [
      heraldObject('BGPNodeConfigOverride', 'node-a', { myASN: 64601, routerID: '10.0.0.11', peers: [{ name: 'a-only', peerAddress: '192.0.2.20', peerASN: 65020 }] }),
      heraldObject('BGPNodeConfigOverride', 'node-b', { peers: [{ name: 'dup', peerAddress: '192.0.2.2', peerASN: 65002 }] }),
    ],
    BGPAdvertisement: [heraldObject('BGPAdvertisement', 'to-a-only', { peers: ['a-only'] })],
  });
  const a = mergeConfig(cfg({}), objs, 'node-a');
  t.same(a.override, { name: 'node-a', localAs: 64601, routerId: '10.0.0.11' });
  t.same(a.config.peers.map((p) => p.name), ['tor', 'a-only']);
  t.equal(a.origins.get('a-only'), 'BGPNodeConfigOverride');
  t.same(a.config.advertisements?.map((x) => x.name), ['to-a-only'], 'an advertisement may name an override\'s peer');
  const c = mergeConfig(cfg({}), objs, 'node-c');
  t.equal(c.override, undefined, 'node-c has none');
  t.same(c.config.peers.map((p) => p.name), ['tor']);
  t.same(c.config.advertisements?.map((x) => x.name), ['to-a-only'], 'the same verdicts on every node');
  t.same(
    a.verdicts.map((x) => [x.kind, x.name, x.issues.map((i) => i.path)]),
    c.verdicts.map((x) => [x.kind, x.name, x.issues.map((i) => i.path)]),
    'every node reaches the same verdicts',
  );
  t.match(c.verdicts.find((x) => x.name === 'node-b')?.issues, [{ path: 'spec.peers[0].peerAddress', message: /peer "tor" \(a BGPPeer\) already uses 192\.0\.2\.2/ }]);
});

t.test('ebgpMultihop is checked against the AS number the session uses (the override\'s or the peer\'s own)', async (t) => {
  const m = mergeConfig(
    cfg({}),
    objects({
      BGPNodeConfigOverride: [heraldObject('BGPNodeConfigOverride', 'node-a', { myASN: 65002, peers: [{ name: 'ibgp', peerAddress: '192.0.2.2', peerASN: 65002, ebgpMultihop: 2 }] })],
      BGPPeer: [heraldObject('BGPPeer', 'own-as', { peerAddress: '192.0.2.3', peerASN: 65003, myASN: 65003, ebgpMultihop: 2 })],
    }),
    'node-a',
  );
  t.match(m.verdicts.find((v) => v.name === 'own-as')?.issues, [{ path: 'spec.ebgpMultihop' }]);
  t.match(m.verdicts.find((v) => v.name === 'node-a')?.issues, [{ path: 'spec.peers[0].ebgpMultihop' }]);
});
