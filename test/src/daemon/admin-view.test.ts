// The admin view on its own (src/daemon/admin-view.ts): what `herald status`, /readyz, `herald services` and the
// metrics read, assembled from the stages: readiness names every reason in one list, 403s of the source and of the
// writers are listed together, held attribute changes carry when they go out, and only handled VIPs are metrics.
import t from 'tap';
import { pino } from 'pino';
import { FakeClock } from '../../../bgp/index.ts';
import type { ServiceView } from '../../../src/admin/view.ts';
import { refusedText } from '../../../src/admin/view.ts';
import { formatStatus } from '../../../src/cli/table.ts';
import { validateConfig } from '../../../src/config/load.ts';
import type { Config } from '../../../src/config/schema.ts';
import { AdminView, handledVips } from '../../../src/daemon/admin-view.ts';
import { PeerSet } from '../../../src/daemon/peer-set.ts';
import { HeraldMetrics } from '../../../src/metrics/metrics.ts';
import type { QuarantinedObject } from '../../../src/controller/quarantine.ts';
import type { ServiceDecision } from '../../../src/controller/desired-routes.ts';
import { FakeHealth, FakeSource, FakeSpeaker } from './fakes.ts';

function cfg(): Config {
  const r = validateConfig({ bgp: { localAs: 65000, routerId: '10.0.0.1' } });
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return r.config;
}

const svc = (service: string, vips: ServiceView['vips']): ServiceView => ({ service, reasons: [], vips });

function make() {
  const clock = new FakeClock(Date.parse('2026-01-01T00:00:00Z'));
  const speaker = new FakeSpeaker({ localAs: 65000, bgpIdentifier: '10.0.0.1' });
  const metrics = new HeraldMetrics({ version: 't', defaultMetrics: false });
  const source = new FakeSource();
  const st = {
    speakerFailure: undefined as string | undefined,
    stopping: false,
    listener: 'BGP listener not bound yet' as string | undefined,
    drainUnknown: undefined as string | undefined,
    drainSources: [] as string[],
    done: false,
    held: new Map<string, number>(),
    quarantined: [] as QuarantinedObject[],
    forbidden: [] as string[],
    services: [] as ServiceView[],
    override: undefined as { name: string; localAs?: number } | undefined,
    verdicts: [] as { kind: string; name: string; issues: { path: string; message: string }[] }[],
  };
  const config = cfg();
  const view = new AdminView({
    version: '1.2.3',
    identity: { nodeName: 'n1', routerId: '10.0.0.1', nodeIps: [] },
    clock,
    startedAtMs: clock.now(),
    speaker,
    peers: new PeerSet({ speaker, log: pino({ level: 'silent' }), metrics, clock }),
    decisions: { services: () => st.services as unknown as ServiceDecision[], service: () => undefined },
    health: new FakeHealth(),
    metrics,
    source,
    inForce: { config, get merged() { return { config, origins: new Map(), verdicts: st.verdicts as never, ...(st.override ? { override: st.override } : {}) }; }, lastReload: undefined },
    assembly: { size: 7, held: () => st.held, wireRoute: () => undefined },
    drains: { get sources() { return st.drainSources; }, get unknown() { return st.drainUnknown; } },
    quarantine: { list: () => st.quarantined },
    listener: { problem: () => st.listener },
    initialSync: { get done() { return st.done; } },
    daemon: { speakerFailure: () => st.speakerFailure, stopping: () => st.stopping, forbidden: () => st.forbidden, resetPeer: async () => undefined, drain: async () => 'drained', undrain: async () => 'undrained' },
  });
  return { view, st, source, clock, metrics };
}

t.test('readiness: every reason, in one list, until none is left', async (t) => {
  const { view, st, source } = make();
  source.status = () => ({ type: 'kubernetes', synced: false, resources: [{ kind: 'Service', synced: false, forbidden: 'list services: HTTP 403: nope', lastError: '' } as never, { kind: 'Node', synced: true, lastError: '' } as never] });
  st.drainUnknown = 'static routes held until Node n1 is read';
  t.same(view.status().notReady, ['BGP listener not bound yet', 'kubernetes source not synced (Service: list services: HTTP 403: nope)', 'static routes held until Node n1 is read', 'initial route computation pending']);
  t.equal(view.status().ready, false);
  source.status = () => ({ type: 'kubernetes', synced: true, resources: [] });
  st.listener = undefined;
  st.drainUnknown = undefined;
  st.done = true;
  t.same(view.status().notReady, []);
  t.equal(view.status().ready, true);
  st.speakerFailure = 'speaker thread exited (code 1)';
  st.stopping = true;
  t.same(view.status().notReady, ['speaker thread exited (code 1)', 'shutting down']);
  t.equal(view.live(), false, 'not live while stopping');
});

t.test('status: the override AS, the routes, the drain, the quarantine and every 403 together', async (t) => {
  const { view, st, source } = make();
  t.equal(view.status().localAs, 65000);
  st.override = { name: 'rack-1', localAs: 65010 };
  st.drainSources = ['annotation herald.io/drain="x" on Node n1'];
  st.quarantined = [{ kind: 'Service', name: 'default/bad', reason: 'no spec', since: 0 }];
  st.forbidden = ['patch nodes: HTTP 403: no'];
  source.status = () => ({ type: 'kubernetes', synced: true, resources: [{ kind: 'Node', synced: true, forbidden: 'watch nodes: HTTP 403: no', lastError: '' } as never] });
  const s = view.status();
  t.equal(s.localAs, 65010);
  t.same(s.routes, { desired: 7 });
  t.same(s.drain, ['annotation herald.io/drain="x" on Node n1']);
  t.same(s.forbidden, ['watch nodes: HTTP 403: no', 'patch nodes: HTTP 403: no']);
  t.same(s.quarantined, [{ kind: 'Service', name: 'default/bad', reason: 'no spec', since: '1970-01-01T00:00:00.000Z' }]);
});

// Issue 35 item 7: manifest file errors and invalid configuration objects were visible only in the log (the source's
// fileErrors was never read).
t.test('refused input: manifest file errors and ignored objects in the status, /readyz\'s text and a metric', async (t) => {
  const { view, st, source } = make();
  t.equal(view.status().refused, undefined, 'nothing refused: no field');
  source.status = () => ({ type: 'manifests', synced: true, resources: [], fileErrors: [{ path: '/m/web.yaml', line: 12, column: 3, message: 'document not usable: Excessive alias count' }, { path: '/m/pipe.yaml', message: 'a FIFO (named pipe), not a regular file; skipped' }] });
  st.verdicts = [{ kind: 'BGPPeer', name: 'tor-ok', issues: [] }, { kind: 'BGPPeer', name: 'tor-dup', issues: [{ path: 'spec.peerAddress', message: 'already used' }, { path: 'spec.myASN', message: 'must not be 23456' }] }];
  const refused = view.status().refused ?? [];
  t.same(refused, [
    { kind: 'file', name: '/m/web.yaml', line: 12, reason: 'document not usable: Excessive alias count' },
    { kind: 'file', name: '/m/pipe.yaml', reason: 'a FIFO (named pipe), not a regular file; skipped' },
    { kind: 'BGPPeer', name: 'tor-dup', reason: 'spec.peerAddress: already used; spec.myASN: must not be 23456' },
  ]);
  t.same(refused.map(refusedText), ['file /m/web.yaml:12: document not usable: Excessive alias count', 'file /m/pipe.yaml: a FIFO (named pipe), not a regular file; skipped', 'BGPPeer tor-dup: spec.peerAddress: already used; spec.myASN: must not be 23456']);
  t.match(formatStatus(view.status()), /^Refused: +file \/m\/web\.yaml:12: document not usable/m, '`herald status` shows them');
  const text = (await view.metrics()).body;
  t.match(text, /^herald_refused_inputs\{kind="file"\} 2$/m);
  t.match(text, /^herald_refused_inputs\{kind="BGPPeer"\} 1$/m);
  t.match(text, /^herald_refused_inputs\{kind="IPAddressPool"\} 0$/m);
});

t.test('services: an attribute change held by the rate limit says when it goes out', async (t) => {
  const { view, st } = make();
  const attrs = { advertisement: 'a', prefix: '192.0.2.1/32', announced: true, med: 5 };
  st.services = [svc('default/web', [{ address: '192.0.2.1', kind: 'loadBalancer', announced: true, reasons: [], attributes: [attrs] as never }])];
  t.equal(view.services()[0]?.vips[0]?.attributes?.[0]?.heldUntil, undefined);
  st.held.set('192.0.2.1/32', Date.parse('2026-01-01T00:01:00Z'));
  t.equal(view.services()[0]?.vips[0]?.attributes?.[0]?.heldUntil, '2026-01-01T00:01:00.000Z');
});

t.test('handledVips: the VIPs herald_vip_announced reports', async (t) => {
  const vip = (address: string, kind: string, announced: boolean, code: string) => ({ address, kind, announced, reasons: [{ code, message: '' }] });
  t.same([...handledVips([svc('a/x', [vip('192.0.2.1', 'loadBalancer', false, 'NoLocalReadyEndpoint'), vip('10.96.0.1', 'clusterIP', false, 'NoAdvertisement')]), svc('a/y', [vip('192.0.2.2', 'loadBalancer', false, 'ForeignLoadBalancerClass')])])], [{ service: 'a/x', address: '192.0.2.1', announced: false }]);
});
