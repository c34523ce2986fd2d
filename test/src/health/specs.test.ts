import t from 'tap';
import { checkSpecError } from '../../../src/health/manager.ts';
import {
  DEFAULT_CHECK_TIMING,
  flapControlFromConfig,
  invalidCheck,
  kubeProxyNodeCheck,
  kubeProxyServiceCheck,
  nodeAddressFor,
  serviceAnnotationCheck, unprobedAddress,
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
  const route = staticRouteCheck({ gate: '198.51.100.1/32', check: { port: 53, interval: 1 }, nodeIP: '10.0.0.5' });
  t.same([route.kind, route.hosts, route.intervalSec, route.timeoutSec], ['tcp', ['10.0.0.5'], 1, 2]);
  for (const s of [svc, node, ann, route]) t.equal(s && checkSpecError(s), null, `${s?.key} valid`);
  t.equal(checkSpecError(invalidCheck('annotation:v', 'v', 'bad port')), 'bad port');
});

t.test('guard: an annotation check probes only endpoint addresses Herald may probe from the host network', async (t) => {
  const check = { kind: 'tcp' as const, port: 80, intervalSec: 1, timeoutSec: 1, rise: 1, fall: 1 };
  const special = ['127.0.0.1', '127.1.2.3', '169.254.169.254', '0.0.0.0', '224.0.0.1', '255.255.255.255', '::1', '::', 'fe80::1', 'fe80::1%lo', 'ff02::1', '::ffff:127.0.0.1', 'node-1'];
  for (const a of special) t.not(unprobedAddress(a), undefined, `${a} is not probed`);
  for (const a of ['10.1.0.2', '192.0.2.7', '2001:db8::7', 'fd00::7']) t.equal(unprobedAddress(a), undefined, `${a} may be probed`);
  const mixed = serviceAnnotationCheck({ gate: 'v', check, localEndpoints: ['169.254.169.254', '10.1.0.2', '127.0.0.1'] });
  t.same(mixed?.hosts, ['10.1.0.2'], 'only the endpoints that may be probed');
  const none = serviceAnnotationCheck({ gate: 'v', check, localEndpoints: ['127.0.0.1', '169.254.169.254'] });
  t.match(none && checkSpecError(none), /no local endpoint Herald may probe: "127\.0\.0\.1" is an unspecified, loopback, link-local, multicast, broadcast or IPv4-mapped address, and so are the other 1/);
  t.same(none?.hosts, [], 'an invalid check probes nothing and fails closed');
});

t.test('config mapping', async (t) => {
  t.same(timingFromConfig({ interval: 1, timeout: 0.5, rise: 1, fall: 2 }), { intervalSec: 1, timeoutSec: 0.5, rise: 1, fall: 2 });
  t.same(timingFromConfig(undefined), DEFAULT_CHECK_TIMING);
  t.same(flapControlFromConfig({ holdDown: 0, halfLife: 30 }), { holdDownSec: 0, halfLifeSec: 30 });
});
