import t from 'tap';
import { AnnouncementEvents } from '../../../src/daemon/service-events.ts';
import type { DesiredResult, VipDecision } from '../../../src/controller/desired-routes.ts';
import type { ServiceEvent } from '../../../src/events/recorder.ts';

const vip = (address: string, announced: boolean, code = announced ? 'Advertised' : 'HealthCheckFailing'): VipDecision => ({ address, kind: 'loadBalancer', announced, reasons: [{ code, message: code === 'HealthCheckFailing' ? 'kube-proxy answered 503' : 'ok' }] as VipDecision['reasons'] });
// Results list Services sorted by key, as the controller does.
const result = (...svcs: [string, VipDecision[]][]): DesiredResult => ({ routes: [], services: svcs.map(([service, vips]) => ({ service, vips, reasons: [] })), serviceCIDRs: [], node: { name: 'node-a', eligible: true } } as unknown as DesiredResult);

t.test('first result only primes; later transitions become Announced/Withdrawn Events naming node, VIP and reason', async (t) => {
  const events: ServiceEvent[] = [];
  const ae = new AnnouncementEvents('node-a', { record: (e) => events.push(e) });
  ae.observe(result(['ns/api', [vip('192.0.2.2', false)]], ['ns/web', [vip('192.0.2.1', true)]]));
  t.same(events, [], 'no Event flood at start');
  ae.observe(result(['ns/api', [vip('192.0.2.2', false)]], ['ns/web', [vip('192.0.2.1', false)]]), { all: false, services: ['ns/web'], prefixes: [] });
  t.same(events, [{ service: 'ns/web', type: 'Normal', reason: 'Withdrawn', message: 'node node-a withdrew 192.0.2.1 (loadBalancer): HealthCheckFailing: kube-proxy answered 503' }]);
  ae.observe(result(['ns/api', [vip('192.0.2.2', true)]], ['ns/web', [vip('192.0.2.1', false)]]), { all: false, services: ['ns/api'], prefixes: [] });
  t.same(events.at(-1), { service: 'ns/api', type: 'Normal', reason: 'Announced', message: 'node node-a announces 192.0.2.2 (loadBalancer)' });
  ae.observe(result(['ns/api', [vip('192.0.2.2', true)]], ['ns/web', [vip('192.0.2.1', false)]]));
  t.equal(events.length, 2, 'an unchanged full result posts nothing');
});

t.test('a deleted Service is forgotten silently; re-created and announced posts Announced again', async (t) => {
  const events: ServiceEvent[] = [];
  const ae = new AnnouncementEvents('node-a', { record: (e) => events.push(e) });
  ae.observe(result(['ns/web', [vip('192.0.2.1', true)]]));
  ae.observe(result(), { all: false, services: ['ns/web'], prefixes: [] });
  t.same(events, []);
  ae.observe(result(['ns/web', [vip('192.0.2.1', true)]]), { all: false, services: ['ns/web'], prefixes: [] });
  t.same(events.map((e) => e.reason), ['Announced']);
});
