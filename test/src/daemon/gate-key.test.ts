// Gate keys have one text form, made and read in src/daemon/gate-key.ts: what the health manager, its change events
// and /api/v1/health carry.
import t from 'tap';
import { gateKeyText, parseGateKey, routeGate, serviceGate } from '../../../src/daemon/gate-key.ts';

t.test('text form and back', async (t) => {
  const svc = serviceGate('shop/web', '2001:db8::10');
  t.equal(gateKeyText(svc), 'svc:shop/web 2001:db8::10');
  t.same(parseGateKey(gateKeyText(svc)), svc);
  const route = routeGate('192.0.2.7/24');
  t.same(route, { kind: 'route', prefix: '192.0.2.0/24' }, 'a static route gate names its canonical prefix');
  t.equal(gateKeyText(route), 'route:192.0.2.0/24');
  t.same(parseGateKey('route:192.0.2.0/24'), route);
  for (const other of ['', 'kube-proxy-node', 'svc:no-space', 'annotation:svc:a/b 1.2.3.4']) t.equal(parseGateKey(other), undefined, `${JSON.stringify(other)} is no gate key`);
  t.throws(() => routeGate('not a prefix'), /not a CIDR/);
});
