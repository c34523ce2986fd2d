// The control-plane tier, CRDs: deploy/kubernetes/crds/ (generated from the zod schema, src/crd/schema.ts)
// installed in a real kube-apiserver. Each kind accepts a valid object and rejects invalid ones at apply time with
// the field named: structure (types, enums, bounds, required fields), strict field validation (an unknown field), and
// the cross-field CEL rules (x-kubernetes-validations). Herald's own checks of the same objects:
// test/src/crd/objects.test.ts.
import t from 'tap';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { loopbackBlock } from '../e2e/harness.ts';
import { HERALD_API_VERSION, HERALD_PLURALS } from '../../src/k8s/herald-kinds.ts';
import type { HeraldKind } from '../../src/k8s/herald-kinds.ts';
import { controlPlaneTier, startCluster, until } from './harness.ts';

const NS = 'herald-system';

/** [kind, name, spec, the field the rejection must name (undefined: accepted), the message it must carry]. */
const CASES: Array<[HeraldKind, string, unknown, string | undefined, RegExp | undefined]> = [
  ['BGPPeer', 'ok', { peerAddress: '192.0.2.1', peerASN: 65001, myASN: 64601, nodeSelectors: [{ matchLabels: { rack: 'a' } }], passwordSecret: { name: 'tor' } }, undefined, undefined],
  ['BGPPeer', 'no-asn', { peerAddress: '192.0.2.1' }, 'spec.peerASN', /Required value/],
  ['BGPPeer', 'asn-0', { peerAddress: '192.0.2.1', peerASN: 0 }, 'spec.peerASN', /greater than or equal to 1/],
  ['BGPPeer', 'bad-address', { peerAddress: '192.0.2.300', peerASN: 65001 }, 'spec.peerAddress', /must be an IP address/],
  ['BGPPeer', 'keepalive', { peerAddress: '192.0.2.1', peerASN: 65001, holdTime: 9, keepaliveTime: 9 }, 'spec.keepaliveTime', /must be below holdTime/],
  ['BGPPeer', 'families', { peerAddress: '192.0.2.1', peerASN: 65001, sourceAddress: '2001:db8::1' }, 'spec.sourceAddress', /same address family as peerAddress/],
  ['BGPPeer', 'ttl', { peerAddress: '192.0.2.1', peerASN: 65001, ttlSecurity: true, ebgpMultihop: 2 }, 'spec.ttlSecurity', /cannot be combined with ebgpMultihop/],
  ['BGPPeer', 'unknown', { peerAddress: '192.0.2.1', peerASN: 65001, bogus: 1 }, 'spec.bogus', /unknown field/],
  ['BGPAdvertisement', 'ok', { addressKinds: ['loadBalancer'], communities: ['65000:1'], localPref: 100, peers: ['ok'] }, undefined, undefined],
  ['BGPAdvertisement', 'kind', { addressKinds: ['nodeIP'] }, 'spec.addressKinds[0]', /Unsupported value/],
  ['BGPAdvertisement', 'aggregation', { aggregationLength: 33 }, 'spec.aggregationLength', /less than or equal to 32/],
  ['IPAddressPool', 'ok', { addresses: ['198.51.100.0/24', '203.0.113.10-203.0.113.20'], serviceAllocation: { priority: 1 } }, undefined, undefined],
  ['IPAddressPool', 'host-bits', { addresses: ['10.1.0.1/24'] }, 'spec.addresses[0]', /host bits set/],
  ['IPAddressPool', 'range', { addresses: ['10.0.0.1-2001:db8::1'] }, 'spec.addresses[0]', /CIDR or a range/],
  ['BGPNodeConfigOverride', 'node-a', { myASN: 64601, routerID: '10.0.0.11', sourceAddresses: ['192.0.2.11', '2001:db8::11'], peers: [{ name: 'own', peerAddress: '192.0.2.50', peerASN: 65050 }] }, undefined, undefined],
  ['BGPNodeConfigOverride', 'router-id', { routerID: '0.0.0.0' }, 'spec.routerID', /other than 0\.0\.0\.0/],
  ['BGPNodeConfigOverride', 'two-v4', { sourceAddresses: ['192.0.2.1', '192.0.2.2'] }, 'spec.sourceAddresses', /one address per family/],
  ['BGPNodeConfigOverride', 'dup-peer', { peers: [{ name: 'a', peerAddress: '192.0.2.1', peerASN: 1 }, { name: 'a', peerAddress: '192.0.2.2', peerASN: 1 }] }, 'spec.peers[1]', /Duplicate value/],
  ['BGPNodeConfigOverride', 'peer-rule', { peers: [{ name: 'a', peerAddress: '192.0.2.1', peerASN: 1, holdTime: 2 }] }, 'spec.peers[0].holdTime', /0 or 3\.\.65535/],
  ['BGPNodeStatus', 'node-a', { nodeName: 'node-a' }, undefined, undefined],
  ['BGPNodeStatus', 'node-b', { nodeName: 'node-c' }, undefined, /named after its node/],
];

controlPlaneTier(t, 'CRDs in a real kube-apiserver: valid objects accepted, invalid ones rejected with the field named', 240_000, async (t) => {
  const cp = await startCluster(t, { host: `${loopbackBlock()}200`, controllers: ['serviceaccount'] });
  const files = readdirSync(join(import.meta.dirname, '..', '..', 'deploy', 'kubernetes', 'crds')).filter((f) => f.endsWith('.herald.io.yaml'));
  t.equal(files.length, 5, 'five CRD files, all installed by the kustomization (harness.ts installCrds)');
  for (const [kind, name, spec, field, message] of CASES) {
    const path = `/apis/${HERALD_API_VERSION}/namespaces/${NS}/${HERALD_PLURALS[kind]}?fieldValidation=Strict`;
    // The first requests after a CRD is Established may still find no storage for it: retried briefly.
    const r = await until(`${kind}/${name} answered`, async () => {
      const a = await cp.admin.request('POST', path, { apiVersion: HERALD_API_VERSION, kind, metadata: { name }, spec });
      return a.status === 404 || a.status === 503 ? undefined : a;
    }, 30_000);
    const text = JSON.stringify(r.body?.message ?? '');
    if (field === undefined && message === undefined) {
      t.equal(r.status, 201, `${kind}/${name}: accepted (${r.status === 201 ? 'created' : text})`);
      continue;
    }
    t.ok(r.status === 422 || r.status === 400, `${kind}/${name}: rejected at apply (${r.status})`);
    if (field !== undefined) t.ok(text.includes(field), `${kind}/${name}: the message names ${field}: ${text}`);
    if (message !== undefined) t.match(text, message, `${kind}/${name}: says why`);
  }
});
