import t from 'tap';
import type { Service } from '../../../src/k8s/types.ts';
import { AllocatorController } from '../../../src/ipam/controller.ts';
import type { ServiceStatusWriter as StatusWriter } from '../../../src/status/service-status.ts';
import { parsePool } from '../../../src/ipam/pool.ts';
import { EventRecorder, type ServiceEvent } from '../../../src/events/recorder.ts';

function lb(name: string, rv: string, ips?: string[]): Service {
  return { metadata: { name, namespace: 'ns', resourceVersion: rv }, spec: { type: 'LoadBalancer', ports: [{ port: 80 }] }, status: ips ? { loadBalancer: { ingress: ips.map((ip) => ({ ip })) } } : {} };
}

class FakeWriter implements StatusWriter {
  writes: { service: string; ips: readonly string[]; rv?: string }[] = [];
  failNext = 0;
  async patchIngress(service: string, ips: readonly string[], rv: string | undefined) {
    if (this.failNext > 0) { this.failNext--; throw Object.assign(new Error('Conflict'), { code: 409 }); }
    this.writes.push({ service, ips, rv });
  }
}

t.test('only the leader writes; writes carry the resourceVersion; events are recorded once', async (t) => {
  let leader = false;
  const services = [lb('a', '7'), lb('b', '9', ['192.0.2.0'])];
  const writer = new FakeWriter();
  const sent: ServiceEvent[] = [];
  const recorder = new EventRecorder({ send: async (e) => { sent.push(e); } });
  const ctl = new AllocatorController({ services: () => services, pools: () => [parsePool({ name: 'p', addresses: ['192.0.2.0/30'] })], isLeader: () => leader, writer, recorder });
  await ctl.reconcile();
  t.same(writer.writes, [], 'a follower writes nothing');
  leader = true;
  await ctl.reconcile();
  t.same(writer.writes, [{ service: 'ns/a', ips: ['192.0.2.1'], rv: '7' }]);
  t.same(sent.map((e) => `${e.service} ${e.reason}`), ['ns/a IPAllocated']);
  await ctl.reconcile();
  t.equal(sent.length, 1, 'the same event is not repeated');
});

t.test('a 409 is counted and healed by the next pass; no IPAllocated event for a failed write', async (t) => {
  const writer = new FakeWriter();
  writer.failNext = 1;
  const errors: string[] = [];
  const sent: ServiceEvent[] = [];
  const ctl = new AllocatorController({ services: () => [lb('a', '1')], pools: () => [parsePool({ name: 'p', addresses: ['192.0.2.0/30'] })], isLeader: () => true, writer, recorder: new EventRecorder({ send: async (e) => { sent.push(e); } }), onError: (_e, s) => errors.push(s) });
  await ctl.reconcile();
  t.same(errors, ['ns/a']);
  t.equal(ctl.stats.writeErrors, 1);
  t.same(sent, []);
  await ctl.reconcile();
  t.same(writer.writes.map((w) => w.service), ['ns/a']);
});

t.test('stepping down mid-pass stops writing at once', async (t) => {
  let calls = 0;
  const writer = new FakeWriter();
  const services = [lb('a', '1'), lb('b', '1'), lb('c', '1')];
  const ctl = new AllocatorController({ services: () => services, pools: () => [parsePool({ name: 'p', addresses: ['192.0.2.0/29'] })], isLeader: () => ++calls <= 2, writer });
  await ctl.reconcile();
  t.equal(writer.writes.length, 1, 'only the write made while still leader');
});

t.test('EventRecorder: token bucket drops bursts and counts them', async (t) => {
  let now = 0;
  const sent: ServiceEvent[] = [];
  const r = new EventRecorder({ send: async (e) => { sent.push(e); } }, { burst: 2, perSecond: 1, now: () => now });
  for (let i = 0; i < 5; i++) r.record({ service: 'ns/a', type: 'Normal', reason: 'X', message: `m${i}` });
  t.equal(sent.length, 2);
  t.equal(r.dropped, 3);
  now = 1000;
  t.ok(r.record({ service: 'ns/a', type: 'Normal', reason: 'X', message: 'later' }));
});

t.test('EventRecorder: onDropped for each Event the rate limit drops and each failed write, not for de-duplicated repeats', async (t) => {
  const dropped: string[] = [];
  let fail = false;
  const r = new EventRecorder({ send: async () => { if (fail) throw new Error('forbidden'); } }, { burst: 2, perSecond: 1, now: () => 0, onDropped: (e, reason) => dropped.push(`${e.message} ${reason}`) });
  r.record({ service: 'ns/a', type: 'Normal', reason: 'X', message: 'm0' });
  r.record({ service: 'ns/a', type: 'Normal', reason: 'X', message: 'm0' });
  fail = true;
  r.record({ service: 'ns/a', type: 'Normal', reason: 'X', message: 'm1' });
  r.record({ service: 'ns/a', type: 'Normal', reason: 'X', message: 'm2' });
  await new Promise((res) => setImmediate(res));
  t.same(dropped, ['m2 rateLimited', 'm1 sendFailed']);
});
