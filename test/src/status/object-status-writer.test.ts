// The elected status writer (src/status/object-status-writer.ts) against the fake apiserver with Herald's real
// Kubernetes source: it takes the Lease herald-status, writes a BGPPeer's conditions through the status
// subresource, writes nothing more while nothing changed, and reports a 403 on the write (herald status' forbidden
// list, the metric's result, one warning) without stopping; a second candidate never writes.
import t from 'tap';
import { pino } from 'pino';
import { validateConfig } from '../../../src/config/load.ts';
import type { ConfigObjects } from '../../../src/crd/merge.ts';
import { mergeConfig } from '../../../src/crd/merge.ts';
import { KubeClient } from '../../../src/k8s/client.ts';
import { ForbiddenCalls } from '../../../src/k8s/forbidden.ts';
import { HERALD_GROUP, HERALD_PLURALS, HERALD_VERSION } from '../../../src/k8s/herald-kinds.ts';
import type { Condition, HeraldKind } from '../../../src/k8s/herald-kinds.ts';
import { KubernetesSource } from '../../../src/sources/kubernetes.ts';
import { ObjectStatusWriter } from '../../../src/status/object-status-writer.ts';
import type { StatusWriteResult } from '../../../src/status/object-status-writer.ts';
import { FakeApiServer } from '../../helpers/fake-apiserver.ts';
import { heraldObject, node } from '../../helpers/k8s-objects.ts';

const NS = 'herald-system';

async function until(what: string, check: () => boolean, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

t.test('one writer: conditions written once, not again without a change, a 403 reported and retried', async (t) => {
  const api = new FakeApiServer();
  for (const kind of Object.keys(HERALD_PLURALS) as HeraldKind[]) api.registerResource({ group: HERALD_GROUP, version: HERALD_VERSION, plural: HERALD_PLURALS[kind], kind, namespaced: true });
  await api.start();
  t.teardown(() => api.stop());
  api.upsert('nodes', node('n1'));
  api.upsert(HERALD_PLURALS.BGPPeer, heraldObject('BGPPeer', 'tor', { peerAddress: '192.0.2.2', peerASN: 65002 }, { ns: NS, generation: 3 }), HERALD_GROUP);
  api.upsert(HERALD_PLURALS.BGPNodeStatus, { ...heraldObject('BGPNodeStatus', 'n1', { nodeName: 'n1' }, { ns: NS }), status: { sessions: [{ peer: 'tor', source: 'BGPPeer', state: 'Established' }] } }, HERALD_GROUP);
  // n1's Herald pod (of the DaemonSet), not Ready yet: its status is not trusted.
  const pod = (ready: boolean) => ({ metadata: { name: 'herald-x1', namespace: NS, labels: { 'app.kubernetes.io/name': 'herald' }, ownerReferences: [{ kind: 'DaemonSet', name: 'herald' }] }, spec: { nodeName: 'n1' }, status: { conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] } });
  api.upsert('pods', pod(false));

  const kc = new KubeClient({ server: api.url, token: 't' });
  // The source reads its own Node only (another node's Herald here): the leader reads every Node itself.
  const source = new KubernetesSource({ kc, heraldNamespace: NS, nodeName: 'n2', serviceCIDRs: false, initialBackoffMs: 20, maxBackoffMs: 200 });
  await source.start();
  t.teardown(() => source.stop());
  const validated = validateConfig({ bgp: { localAs: 65000 }, source: { kubernetes: {} } });
  if (!validated.ok) throw new Error('config');
  const file = validated.config;
  const objects = (): ConfigObjects => {
    const s = source.snapshot();
    return { BGPPeer: [...s.heraldObjects('BGPPeer')], BGPAdvertisement: [], IPAddressPool: [], BGPNodeConfigOverride: [] };
  };
  const lines: string[] = [];
  const log = pino({ level: 'info' }, { write: (l: string) => void lines.push(l) });
  const results: StatusWriteResult[] = [];
  const writer = (identity: string, forbidden: ForbiddenCalls) =>
    new ObjectStatusWriter({ kc, namespace: NS, identity, source, merged: () => mergeConfig(file, objects(), identity), poolUsage: () => [], forbidden, log, onWrite: (_k, r) => results.push(r), minIntervalMs: 200, resyncMs: 300 });
  const forbidden = new ForbiddenCalls();
  const a = writer('n1', forbidden);
  a.start();
  t.teardown(() => a.stop());
  const conditions = () => (api.get(HERALD_PLURALS.BGPPeer, NS, 'tor', HERALD_GROUP)?.status?.conditions ?? []) as Condition[];
  await until('tor InUse', () => conditions().some((c) => c.type === 'InUse'));
  t.match(conditions().find((c) => c.type === 'InUse'), { status: 'False', message: 'Established on 0 of 1 selected node; not Established: n1 (its Herald pod is not Ready).' }, "a node's Herald counts once its pod is Ready");
  api.upsert('pods', pod(true));
  await until('tor InUse True', () => conditions().some((c) => c.type === 'InUse' && c.status === 'True'));
  t.match(conditions(), [
    { type: 'Valid', status: 'True', observedGeneration: 3 },
    { type: 'InUse', status: 'True', reason: 'Established', message: 'Established on 1 of 1 selected node.' },
  ]);
  const b = writer('n2', new ForbiddenCalls());
  b.start();
  t.teardown(() => b.stop());
  const patches = () => api.count((r) => r.method === 'PATCH' && r.path.endsWith('/bgppeers/tor/status'));
  const before = patches();
  // Several resync passes (every 300 ms) with nothing changed.
  await new Promise((r) => setTimeout(r, 1500));
  t.equal(patches(), before, 'not written again: every later pass found the status in place');
  t.ok(a.isLeader() && !b.isLeader(), 'the first candidate leads; the second waits');

  // The node's session drops and the status write is refused: reported, counted, warned once; retried.
  api.failResource('bgppeers/status', 403);
  api.upsert(HERALD_PLURALS.BGPNodeStatus, { ...heraldObject('BGPNodeStatus', 'n1', { nodeName: 'n1' }, { ns: NS }), status: { sessions: [{ peer: 'tor', source: 'BGPPeer', state: 'Active' }] } }, HERALD_GROUP);
  await until('the 403 recorded', () => forbidden.list().length > 0);
  t.match(forbidden.list(), [/^patch bgppeers\/status: HTTP 403: .*cannot patch resource "bgppeers\/status"/]);
  await until('a retry', () => results.filter((r) => r === 'forbidden').length >= 2);
  t.equal(lines.filter((l) => l.includes('writing the status of BGPPeer tor failed')).length, 1, 'warned once');
  api.failResource('bgppeers/status', undefined);
  await until('written after the 403', () => conditions().some((c) => c.type === 'InUse' && c.status === 'False'));
  t.match(conditions().find((c) => c.type === 'InUse'), { reason: 'NotEstablished', message: 'Established on 0 of 1 selected node; not Established: n1.' });
  // the apiserver holds the new status before the writer has read its answer (CI checked in between once)
  await until('the writer saw the write succeed', () => results.at(-1) === 'ok');
  t.same(forbidden.list(), [], 'the write succeeds again: no longer forbidden');
});
