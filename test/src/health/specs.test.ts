import t from 'tap';
import { checkSpecError } from '../../../src/health/manager.ts';
import {
  DEFAULT_CHECK_TIMING,
  flapControlFromConfig,
  invalidCheck,
  kubeProxyNodeCheck,
  kubeProxyServiceCheck,
  nodeAddressFor,
  serviceAnnotationCheck,
  staticRouteCheck,
  timingFromConfig,
} from '../../../src/health/specs.ts';

t.test('nodeAddressFor picks the VIP family', async (t) => {
  const node = ['10.0.0.5', 'fd00::5', '10.0.0.6'];
  t.equal(nodeAddressFor('192.0.2.1', node), '10.0.0.5');
  t.equal(nodeAddressFor('2001:db8::1/128', node), 'fd00::5');
  t.equal(nodeAddressFor('2001:db8::1', ['10.0.0.5']), null);
  t.equal(nodeAddressFor('nope', node), null);
});

t.test('builders produce valid specs with stable keys', async (t) => {
  const svc = kubeProxyServiceCheck({ gate: '192.0.2.1', nodeIP: '10.0.0.5', healthCheckNodePort: 31234 });
  t.same(svc, { key: 'kube-proxy-service:192.0.2.1', gate: '192.0.2.1', kind: 'kube-proxy-service', hosts: ['10.0.0.5'], port: 31234, path: '/health', ...DEFAULT_CHECK_TIMING });
  const node = kubeProxyNodeCheck({ nodeIPs: ['10.0.0.5', 'fd00::5'] });
  t.equal(node.scope, 'node');
  t.equal(node.port, 10256);
  t.equal(node.path, '/healthz');
  const ann = serviceAnnotationCheck({ gate: 'v', check: { kind: 'http', port: 80, path: '/r', intervalSec: 1, timeoutSec: 1, rise: 1, fall: 1 }, localEndpoints: ['10.1.0.2', '10.1.0.2', '10.1.0.3'] });
  t.same(ann?.hosts, ['10.1.0.2', '10.1.0.3'], 'local endpoints, de-duplicated');
  t.equal(serviceAnnotationCheck({ gate: 'v', check: { kind: 'tcp', port: 80, intervalSec: 1, timeoutSec: 1, rise: 1, fall: 1 }, localEndpoints: [] }), null, 'nothing to probe');
  const addr = serviceAnnotationCheck({ gate: 'v', check: { kind: 'tcp', port: 80, address: '10.9.9.9', intervalSec: 1, timeoutSec: 1, rise: 1, fall: 1 }, localEndpoints: ['10.1.0.2'] });
  t.same(addr?.hosts, ['10.9.9.9'], 'address wins over endpoints');
  const route = staticRouteCheck({ gate: '198.51.100.1/32', check: { port: 53, interval: 1 }, nodeIP: '10.0.0.5' });
  t.same([route.kind, route.hosts, route.intervalSec, route.timeoutSec], ['tcp', ['10.0.0.5'], 1, 2]);
  for (const s of [svc, node, ann, addr, route]) t.equal(s && checkSpecError(s), null, `${s?.key} valid`);
  t.equal(checkSpecError(invalidCheck('annotation:v', 'v', 'bad port')), 'bad port');
});

t.test('config mapping', async (t) => {
  t.same(timingFromConfig({ interval: 1, timeout: 0.5, rise: 1, fall: 2 }), { intervalSec: 1, timeoutSec: 0.5, rise: 1, fall: 2 });
  t.same(timingFromConfig(undefined), DEFAULT_CHECK_TIMING);
  t.same(flapControlFromConfig({ holdDown: 0, halfLife: 30 }), { holdDownSec: 0, halfLifeSec: 30 });
});
