// The health gate stage on its own (src/daemon/health-gate.ts): candidates from the real controller, verdicts from a
// scripted health checker. A VIP that needs a check is never read before its check is registered, is announced only
// while it passes, a verdict change re-gates only the Services concerned, and the announced state goes back to the
// checker (commit) for hold-down and damping.
import t from 'tap';
import type { Test } from 'tap';
import { pino } from 'pino';
import { validateConfig } from '../../../src/config/load.ts';
import type { Config } from '../../../src/config/schema.ts';
import type { CandidateSet } from '../../../src/controller/controller.ts';
import { Controller } from '../../../src/controller/controller.ts';
import { checkContext } from '../../../src/daemon/check-specs.ts';
import { gateKeyText, serviceGate } from '../../../src/daemon/gate-key.ts';
import { HealthGate } from '../../../src/daemon/health-gate.ts';
import { desiredRoutesContext } from '../../../src/daemon/mapping.ts';
import { FakeHealth, FakeSource } from './fakes.ts';
import { node, service, slice } from '../../helpers/k8s-objects.ts';

function cfg(data: object): Config {
  const r = validateConfig({ bgp: { localAs: 65000, routerId: '10.0.0.1' }, source: { manifests: '/nonexistent' }, allowedPrefixes: ['192.0.2.0/24'], ...data });
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return r.config;
}

const identity = { nodeName: 'node-a', routerId: '10.0.0.1', nodeIps: ['127.0.0.1'] };
const GATE_WEB = gateKeyText(serviceGate('default/web', '192.0.2.1'));
const GATE_PLAIN = gateKeyText(serviceGate('default/plain', '192.0.2.2'));
/** The announced states reported for web's gate, in order. */
const webCalls = (h: FakeHealth) => h.announceCalls.filter(([g]) => g === GATE_WEB);

/** A Service with a ready local endpoint and a tcp check on port 9000 (annotations), in a synced source. */
async function setup(t: Test) {
  const source = new FakeSource();
  source.store.apply('Node', node('node-a'));
  const web = service('web', { lbIPs: ['192.0.2.1'], etp: 'Local' });
  web.metadata!.annotations = { 'herald.io/health-check-type': 'tcp', 'herald.io/health-check-port': '9000' };
  source.store.apply('Service', web);
  source.store.apply('EndpointSlice', slice('web-1', 'web', [['10.244.0.5', 'node-a', { ready: true }]]));
  source.store.apply('Service', service('plain', { lbIPs: ['192.0.2.2'], etp: 'Cluster' }));
  source.store.apply('EndpointSlice', slice('plain-1', 'plain', [['10.244.0.6', 'node-b', { ready: true }]]));
  source.isSynced = true;
  const config = cfg({});
  let set: CandidateSet | undefined;
  const controller = new Controller({ source, context: desiredRoutesContext(config, 'node-a'), sink: { onCandidates: (c) => void (set = c) } });
  await controller.start();
  await controller.whenIdle();
  t.teardown(() => controller.stop());
  t.ok(set, 'the controller gave its candidates');
  const health = new FakeHealth();
  let verdictsChanged = 0;
  const gate = new HealthGate({ health, log: pino({ level: 'silent' }), inputs: { checks: checkContext(config, identity, undefined), routes: [] }, onVerdictsChanged: () => verdictsChanged++ });
  return { set: set!, health, gate, verdictsChanged: () => verdictsChanged };
}

t.test('a checked VIP: registered before its gate is read, announced only while it passes', async (t) => {
  const { set, health, gate } = await setup(t);
  health.failing.add(GATE_WEB);
  const out = gate.run(set, 'all');
  t.equal(health.calls, 1, 'one setChecks for the whole set');
  t.same(health.specs.map((s) => s.gate), [GATE_WEB], 'the annotation check is registered');
  t.notOk(health.readBeforeRegistered.has(GATE_WEB), 'its gate was read only after the check was registered');
  t.same(out.decisionsChanged, ['default/plain', 'default/web']);
  t.same((out.services.get('default/web') ?? []).length, 0, 'no route piece while the check fails');
  t.ok((out.services.get('default/plain') ?? []).length > 0, 'the unchecked Service passes');
  const web = gate.service('default/web');
  t.equal(web?.vips[0]?.announced, false);
  t.match(web?.vips[0]?.reasons.map((r) => r.code), ['HealthCheckFailing'], 'the reason says why');
  gate.commit(out);
  t.same(webCalls(health), [], 'nothing reported announced while it fails');
  t.same(health.announceCalls, [[GATE_PLAIN, true]], 'the unchecked VIP is reported announced');
  t.equal(gate.pendingChecks(), 1, 'its first verdict is pending');
});

t.test('a verdict change re-gates the Service concerned only, and commit reports the announced gate once', async (t) => {
  const { set, health, gate, verdictsChanged } = await setup(t);
  health.failing.add(GATE_WEB);
  gate.commit(gate.run(set, 'all'));
  const applied = gate.stats.servicesApplied;
  health.failing.delete(GATE_WEB);
  health.emit('change', [GATE_WEB], { nodeLevel: false });
  t.equal(verdictsChanged(), 1, 'the caller is asked to run');
  const out = gate.run(set, []);
  t.equal(gate.stats.servicesApplied - applied, 1, 'one Service gated again, from its cached candidates');
  t.same(out.decisionsChanged, ['default/web']);
  t.ok((out.services.get('default/web') ?? []).length > 0, 'its route piece goes on to route assembly');
  t.equal(gate.service('default/web')?.vips[0]?.announced, true);
  gate.commit(out);
  t.same(webCalls(health), [[GATE_WEB, true]]);
  gate.commit(gate.run(set, 'all'));
  t.same(webCalls(health), [[GATE_WEB, true]], 'an unchanged state is not reported again');
  t.equal(health.calls, 1, 'unchanged specs are not registered again');
});

t.test('a Service gone: withdrawn, its gate reported not announced', async (t) => {
  const { set, health, gate } = await setup(t);
  gate.commit(gate.run(set, 'all'));
  t.same(webCalls(health), [[GATE_WEB, true]]);
  const without: CandidateSet = { node: set.node, serviceCIDRs: set.serviceCIDRs, service: (k) => (k === 'default/web' ? undefined : set.service(k)), services: () => [...set.services()].filter((c) => c.service !== 'default/web') };
  const out = gate.run(without, ['default/web']);
  t.same(out.decisionsChanged, ['default/web']);
  t.same(out.services.get('default/web'), [], 'its pieces are emptied');
  t.equal(gate.service('default/web'), undefined);
  gate.commit(out);
  t.same(webCalls(health), [[GATE_WEB, true], [GATE_WEB, false]]);
});

t.test('static routes: an unchecked route always passes, a checked one only while its gate does', async (t) => {
  const health = new FakeHealth();
  const config = cfg({ routes: [{ prefix: '192.0.2.20/32', healthCheck: { kind: 'tcp', port: 8080 } }, { prefix: '192.0.2.21/32' }] });
  const gate = new HealthGate({ health, log: pino({ level: 'silent' }), inputs: { checks: checkContext(config, identity, {}), routes: config.routes }, onVerdictsChanged: () => undefined });
  health.failing.add('route:192.0.2.20/32');
  t.same(gate.run(undefined, 'all').staticRoutes.map((r) => r.prefix), ['192.0.2.21/32']);
  t.notOk(health.readBeforeRegistered.has('route:192.0.2.20/32'), 'registered before it was read');
  health.failing.clear();
  t.same(gate.run(undefined, []).staticRoutes.map((r) => r.prefix), ['192.0.2.20/32', '192.0.2.21/32']);
  gate.configure({ checks: checkContext(config, identity, {}), routes: [] });
  t.same(gate.run(undefined, []).staticRoutes, [], 'a reload without routes leaves none');
  t.equal(health.calls, 2, 'the new inputs registered their (empty) checks again');
});
