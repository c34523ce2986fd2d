import { ControlPlane, controlPlaneTools } from './test/helpers/control-plane.ts';
import { KINDS } from './src/config/crd-kinds.ts';
import { crdDocument } from './src/config/crd-schema.ts';
const tools = controlPlaneTools();
if ('reason' in tools) throw new Error(tools.reason);
const cp = await ControlPlane.start(tools.tools, { host: '127.77.3.200', controllers: ['serviceaccount'] });
try {
  for (const k of KINDS) {
    const r = await cp.admin.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crdDocument(k));
    console.log(k.kind, r.status, r.status >= 300 ? JSON.stringify(r.body.message) : '');
  }
  await new Promise((r) => setTimeout(r, 3000));
  await cp.admin.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'herald-system' } });
  const base = '/apis/herald.io/v1alpha1/namespaces/herald-system';
  const tries: [string, unknown][] = [
    ['bgppeers', { apiVersion: 'herald.io/v1alpha1', kind: 'BGPPeer', metadata: { name: 'ok' }, spec: { peerAddress: '192.0.2.1', peerASN: 65001 } }],
    ['bgppeers', { apiVersion: 'herald.io/v1alpha1', kind: 'BGPPeer', metadata: { name: 'bad1' }, spec: { peerAddress: '192.0.2.1', peerASN: 65001, keepaliveTime: 100, holdTime: 90, sourceAddress: '2001:db8::1', nextHop: 'x' } }],
    ['bgppeers', { apiVersion: 'herald.io/v1alpha1', kind: 'BGPPeer', metadata: { name: 'bad2' }, spec: { peerAddress: '192.0.2.1', peerASN: 65001, bogus: 1 } }],
    ['ipaddresspools', { apiVersion: 'herald.io/v1alpha1', kind: 'IPAddressPool', metadata: { name: 'p' }, spec: { addresses: ['10.1.0.1/24', '10.0.0.1-10.0.0.9', 'x-y'] } }],
    ['ipaddresspools', { apiVersion: 'herald.io/v1alpha1', kind: 'IPAddressPool', metadata: { name: 'p2' }, spec: { addresses: ['10.1.0.0/24', '10.0.0.1 - 10.0.0.9'], serviceAllocation: { priority: 1 } } }],
    ['bgpnodeconfigoverrides', { apiVersion: 'herald.io/v1alpha1', kind: 'BGPNodeConfigOverride', metadata: { name: 'n' }, spec: { myASN: 65001, routerID: '0.0.0.0', peers: [{ name: 'a', peerAddress: '1.2.3.4', peerASN: 1 }, { name: 'a', peerAddress: '1.2.3.5', peerASN: 1, ttlSecurity: true, ebgpMultihop: 2 }] } }],
    ['bgpnodestatuses', { apiVersion: 'herald.io/v1alpha1', kind: 'BGPNodeStatus', metadata: { name: 'n' }, spec: { nodeName: 'm' } }],
  ];
  for (const [plural, body] of tries) {
    const r = await cp.admin.request('POST', `${base}/${plural}?fieldValidation=Strict`, body);
    console.log(plural, r.status, JSON.stringify(r.body.message ?? r.body.spec));
  }
} finally {
  await cp.stop();
}
