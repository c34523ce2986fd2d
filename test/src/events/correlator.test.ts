// Events correlated as client-go's EventCorrelator does (src/events/correlator.ts) and written as counts on one Event
// object (src/events/recorder.ts): a burst of changes costs a few writes per object, never one per change.
import t from 'tap';
import fc from 'fast-check';
import { EventCorrelator } from '../../../src/events/correlator.ts';
import type { Correlation } from '../../../src/events/correlator.ts';
import { EventRecorder, KubernetesEventSink } from '../../../src/events/recorder.ts';
import { KubeClient } from '../../../src/k8s/client.ts';
import { FakeApiServer } from '../../helpers/fake-apiserver.ts';
import { waitFor } from '../../helpers/k8s-wait.ts';

const ev = (message: string, object = 'ns/web', reason = 'Withdrawn') => ({ object, type: 'Normal' as const, reason, message });
const names = (n: number) => `web.${n}`;

t.test('a repeat is a count on the Event written before: counted within repeatAfterMs, patched after', async (t) => {
  let serial = 0;
  const c = new EventCorrelator({ repeatAfterMs: 60_000, nameOf: () => names(serial++) });
  t.match(c.correlate(ev('node a withdrew 192.0.2.1'), 0), { action: 'create', name: 'web.0', count: 1 });
  t.match(c.correlate(ev('node a withdrew 192.0.2.1'), 1000), { action: 'skip', why: 'counted' });
  t.match(c.correlate(ev('node a withdrew 192.0.2.1'), 2000), { action: 'skip', why: 'counted' });
  t.match(c.correlate(ev('node a withdrew 192.0.2.1'), 61_000), { action: 'patch', name: 'web.0', count: 4, firstMs: 0, lastMs: 61_000 }, 'the counted repeats reach the apiserver with the next write');
  t.match(c.correlate(ev('node b withdrew 192.0.2.1'), 61_000), { action: 'create', name: 'web.1' }, 'another message is another Event');
  c.forget('web.0');
  t.match(c.correlate(ev('node a withdrew 192.0.2.1'), 200_000), { action: 'create', name: 'web.2', count: 1 }, 'a forgotten Event (gone from the apiserver) is created again');
});

t.test('similar Events (object, type, reason) past 10 distinct messages in 10 minutes are combined into one', async (t) => {
  let serial = 0;
  const c = new EventCorrelator({ repeatAfterMs: 0, objectBurst: 1000, nameOf: () => names(serial++) });
  const out: Correlation[] = [];
  for (let i = 0; i < 30; i++) out.push(c.correlate(ev(`node n${i} withdrew 192.0.2.1`), i * 1000));
  t.equal(out.filter((o) => o.action === 'create').length, 11, '10 Events of their own, then one combined Event');
  t.match(out[10], { action: 'create', message: '(combined from similar events): node n10 withdrew 192.0.2.1' });
  t.match(out[29], { action: 'patch', name: (out[10] as { name: string }).name, count: 20, message: '(combined from similar events): node n29 withdrew 192.0.2.1' });
  t.match(c.correlate(ev('node n99 withdrew 192.0.2.1'), 700_000), { action: 'create', message: 'node n99 withdrew 192.0.2.1' }, 'a new window starts with Events of their own again');
  t.match(c.correlate(ev('node n1 announces 192.0.2.1', 'ns/web', 'Announced'), 700_000), { action: 'create', message: 'node n1 announces 192.0.2.1' }, 'another reason is not combined with it');
});

t.test('spam filter: a few writes a minute per object however many changes, other objects unaffected', async (t) => {
  const c = new EventCorrelator({ repeatAfterMs: 0 });
  const writes = (object: string, from: number, to: number, every: number) => {
    let n = 0;
    for (let ms = from; ms < to; ms += every) if (c.correlate(ev(`m${ms % 7}`, object), ms).action !== 'skip') n++;
    return n;
  };
  t.equal(writes('ns/web', 0, 60_000, 100), 5 + 1, '600 changes in a minute: the burst of 5, then 2 a minute (the first refill at 30 s)');
  t.equal(writes('ns/db', 0, 1000, 100), 5, 'another object has its own bucket');
  const limited = c.correlate(ev('x', 'ns/api'), 0, () => false);
  t.match(limited, { action: 'skip', why: 'limited' }, "the caller's limit refuses");
  t.equal(writes('ns/api', 0, 100, 10), 5, "a write the caller's limit refused kept the object's token");
});

t.test('property: writes per object never exceed burst + rate × time, whatever the sequence', async (t) => {
  fc.assert(
    fc.property(fc.array(fc.record({ dt: fc.integer({ min: 0, max: 5000 }), object: fc.constantFrom('a/x', 'a/y'), msg: fc.integer({ min: 0, max: 30 }), reason: fc.constantFrom('Announced', 'Withdrawn') }), { maxLength: 400 }), (steps) => {
      const c = new EventCorrelator();
      let now = 0;
      const counts = new Map<string, number>();
      for (const s of steps) {
        now += s.dt;
        const r = c.correlate({ object: s.object, type: 'Normal', reason: s.reason, message: `m${s.msg}` }, now);
        if (r.action !== 'skip') counts.set(s.object, (counts.get(s.object) ?? 0) + 1);
      }
      for (const n of counts.values()) if (n > 5 + Math.ceil((now / 60_000) * 2)) return false;
      return true;
    }),
  );
  t.pass('bounded');
});

t.test('memory stays bounded by maxKeys', async (t) => {
  const c = new EventCorrelator({ maxKeys: 50 });
  for (let i = 0; i < 1000; i++) c.correlate(ev(`m${i}`, `ns/s${i}`), i);
  t.ok(c.size <= 150, `entries held: ${c.size}`);
});

t.test('against the apiserver: one Event object whose count rises; a patch of a gone Event creates it again', async (t) => {
  const api = new FakeApiServer();
  await api.start();
  t.teardown(() => api.stop());
  const kc = new KubeClient({ server: api.url });
  t.teardown(() => kc.close());
  let now = 1_000_000;
  const r = new EventRecorder(new KubernetesEventSink(kc, 'herald-controller', 'pod-1'), { repeatAfterSec: 1, now: () => now });
  const e = { service: 'default/web', type: 'Normal' as const, reason: 'Withdrawn', message: 'node a withdrew 192.0.2.1 (loadBalancer)' };
  for (let i = 0; i < 5; i++) {
    r.record(e);
    now += 400;
  }
  const events = () => api.list('events');
  // 0 ms: created; 400, 800: counted; 1200: patched with count 4 (1 s after the write); 1600: counted.
  await waitFor(() => events()[0]?.count === 4, 'count 4');
  t.equal(events().length, 1, 'one Event object');
  t.match(events()[0], { involvedObject: { kind: 'Service', namespace: 'default', name: 'web' }, reason: 'Withdrawn', reportingComponent: 'herald-controller', reportingInstance: 'pod-1', source: { component: 'herald-controller', host: 'pod-1' } });
  t.strictSame(r.writes, { create: 1, patch: 1 }, 'five records, two writes');
  api.remove('events', 'default', events()[0]!.metadata.name);
  now += 2000;
  r.record(e);
  await waitFor(() => events().length === 1, 'created again');
  t.equal(events()[0]?.count, 6, 'with the count so far');
  t.ok(api.requests.some((q) => q.method === 'PATCH' && q.path.startsWith('/api/v1/namespaces/default/events/')), 'a repeat is a PATCH');
});
