import t from 'tap';
import { AnnouncementEvents } from '../../../src/daemon/service-events.ts';
import type { ServiceDecision, VipDecision } from '../../../src/controller/desired-routes.ts';
import type { DecisionSet } from '../../../src/daemon/health-gate.ts';
import type { ServiceEvent } from '../../../src/events/recorder.ts';

const vip = (address: string, announced: boolean): VipDecision => ({
  address,
  kind: 'loadBalancer',
  announced,
  reasons: [announced ? { code: 'Advertised', message: 'ok' } : { code: 'HealthCheckFailing', message: 'kube-proxy answered 503' }],
});
// Decision sets list Services sorted by key, as the health gate does.
const result = (...svcs: [string, VipDecision[]][]): DecisionSet => {
  const services: ServiceDecision[] = svcs.map(([service, vips]) => ({ service, vips, reasons: [] }));
  return { services: () => services, service: (key) => services.find((s) => s.service === key) };
};

t.test('first result only primes; later transitions become Announced/Withdrawn Events naming node, VIP and reason', async (t) => {
  const events: ServiceEvent[] = [];
  const ae = new AnnouncementEvents('node-a', { record: (e) => events.push(e) });
  ae.observe(result(['ns/api', [vip('192.0.2.2', false)]], ['ns/web', [vip('192.0.2.1', true)]]));
  t.same(events, [], 'no Event flood at start');
  ae.observe(result(['ns/api', [vip('192.0.2.2', false)]], ['ns/web', [vip('192.0.2.1', false)]]), { all: false, services: ['ns/web'] });
  t.same(events, [{ service: 'ns/web', type: 'Normal', reason: 'Withdrawn', message: 'node node-a withdrew 192.0.2.1 (loadBalancer): HealthCheckFailing' }], 'what the target answered is not in the Event');
  ae.observe(result(['ns/api', [vip('192.0.2.2', true)]], ['ns/web', [vip('192.0.2.1', false)]]), { all: false, services: ['ns/api'] });
  t.same(events.at(-1), { service: 'ns/api', type: 'Normal', reason: 'Announced', message: 'node node-a announces 192.0.2.2 (loadBalancer)' });
  ae.observe(result(['ns/api', [vip('192.0.2.2', true)]], ['ns/web', [vip('192.0.2.1', false)]]));
  t.equal(events.length, 2, 'an unchanged full result posts nothing');
});

t.test('a deleted Service is forgotten silently; re-created and announced posts Announced again', async (t) => {
  const events: ServiceEvent[] = [];
  const ae = new AnnouncementEvents('node-a', { record: (e) => events.push(e) });
  ae.observe(result(['ns/web', [vip('192.0.2.1', true)]]));
  ae.observe(result(), { all: false, services: ['ns/web'] });
  t.same(events, []);
  ae.observe(result(['ns/web', [vip('192.0.2.1', true)]]), { all: false, services: ['ns/web'] });
  t.same(events.map((e) => e.reason), ['Announced']);
});

t.test('guard: a refusal (PrefixNotAllowed) is one Warning when it appears, by the node that posts refusals only', async (t) => {
  const refused = (address: string, message = `${address} (externalIP) is outside every pool and allowedPrefixes (198.51.100.0/24): never announced`): VipDecision => ({
    address,
    kind: 'externalIP',
    announced: false,
    reasons: [{ code: 'PrefixNotAllowed', message }],
  });
  const events: ServiceEvent[] = [];
  let posts = true;
  const ae = new AnnouncementEvents('node-a', { record: (e) => events.push(e) }, { refusals: () => posts });
  ae.observe(result(['ns/old', [refused('8.8.4.4')]]));
  t.same(events, [], 'the first pass only primes (a restart posts nothing)');
  ae.observe(result(['ns/old', [refused('8.8.4.4', 'no pools and no allowedPrefixes are configured')]]), { all: false, services: ['ns/old'] });
  t.same(events.map((e) => e.message), ['8.8.4.4 (externalIP): no pools and no allowedPrefixes are configured'], 'a shared message is given its address');
  events.length = 0;
  ae.observe(result(['ns/old', [refused('8.8.4.4')]], ['ns/web', [refused('8.8.8.8'), vip('198.51.100.1', true)]]), { all: false, services: ['ns/web'] });
  const warnings = () => events.filter((e) => e.type === 'Warning');
  t.same(warnings(), [{ service: 'ns/web', type: 'Warning', reason: 'PrefixNotAllowed', message: '8.8.8.8 (externalIP) is outside every pool and allowedPrefixes (198.51.100.0/24): never announced' }]);
  ae.observe(result(['ns/old', [refused('8.8.4.4')]], ['ns/web', [refused('8.8.8.8'), vip('198.51.100.1', true)]]), { all: false, services: ['ns/web'] });
  t.equal(warnings().length, 1, 'the same refusal again posts nothing');
  posts = false;
  ae.observe(result(['ns/old', [refused('8.8.4.4')]], ['ns/web', [refused('8.8.8.8'), refused('1.1.1.1')]]), { all: false, services: ['ns/web'] });
  t.equal(warnings().length, 1, 'a node that does not post refusals posts none (every node reaches the same refusal)');
  posts = true;
  ae.observe(result(['ns/old', [refused('8.8.4.4')]], ['ns/web', [refused('8.8.8.8'), refused('1.1.1.1')]]), { all: false, services: ['ns/web'] });
  t.equal(warnings().length, 1, 'a refusal seen while another node posted is not posted late');
  ae.observe(result(['ns/old', [refused('8.8.4.4')]], ['ns/web', [refused('8.8.8.8'), refused('9.9.9.9')]]), { all: false, services: ['ns/web'] });
  t.same(warnings().map((e) => [e.type, e.reason, e.message.split(' ')[0]]), [['Warning', 'PrefixNotAllowed', '8.8.8.8'], ['Warning', 'PrefixNotAllowed', '9.9.9.9']], 'a new refusal is posted');
});

t.test('guard: a health check Event says fail and the reason codes, never what the target answered', async (t) => {
  const events: ServiceEvent[] = [];
  const ae = new AnnouncementEvents('node-a', { record: (e) => events.push(e) });
  const failing: VipDecision = {
    address: '192.0.2.1',
    kind: 'loadBalancer',
    announced: false,
    reasons: [{ code: 'HealthCheckFailing', message: '10.1.0.5:8080: HTTP 200, expected 404', causes: [{ code: 'UnexpectedStatus', message: '10.1.0.5:8080: HTTP 200, expected 404' }, { code: 'UnexpectedStatus', message: 'again' }] }],
  };
  ae.observe(result(['ns/web', [vip('192.0.2.1', true)]]));
  ae.observe(result(['ns/web', [failing]]), { all: false, services: ['ns/web'] });
  t.same(events.map((e) => e.message), ['node node-a withdrew 192.0.2.1 (loadBalancer): HealthCheckFailing (UnexpectedStatus)']);
  t.notMatch(JSON.stringify(events), /HTTP 200|expected 404|10\.1\.0\.5/, 'nothing of the answer, nor the target');
});
