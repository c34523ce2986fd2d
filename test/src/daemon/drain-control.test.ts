// The drain on its own (src/daemon/drain.ts DrainControl): where the operator's drain is kept (the Node annotation,
// or stateDir), the speaker's RFC 8326 drain following its sources, a departure draining when graceful shutdown is
// configured, and nothing known (so nothing announced) before the Node has been read.
import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import type { NodeState } from '../../../src/controller/node-eligibility.ts';
import { annotationDrainRecord, DrainControl, fileDrainRecord } from '../../../src/daemon/drain.ts';
import type { DrainRecord } from '../../../src/daemon/drain.ts';
import { FakeSpeaker } from './fakes.ts';

const nodeState = (o: Partial<NodeState> = {}): NodeState => ({ name: 'n1', eligible: true, reasons: [], departing: [], labels: {}, addresses: {}, ...o });

function make(record: DrainRecord | undefined, o: { wait?: number; departureDrains?: boolean } = {}) {
  const speaker = new FakeSpeaker({ localAs: 65000, bgpIdentifier: '10.0.0.1' });
  let changes = 0;
  const drains = new DrainControl({ speaker, log: pino({ level: 'silent' }), record, nodeName: 'n1', waitSec: () => o.wait ?? 15, departureDrains: () => o.departureDrains ?? false, onChange: () => changes++ });
  return { speaker, drains, changes: () => changes };
}

t.test('annotation record: nothing is known before the Node is read; the annotation drains, its removal undrains', async (t) => {
  const patches: (string | null)[] = [];
  const { speaker, drains, changes } = make(annotationDrainRecord(async (v) => void patches.push(v)));
  drains.start('/nonexistent');
  t.match(drains.unknown, /static routes held until Node n1 is read/, 'unknown until the Node is read');
  t.equal(await drains.drain('maintenance'), 'drain requested: annotation herald.io/drain="maintenance" set on Node n1');
  t.same(patches, ['maintenance'], 'the annotation is written');
  t.equal(speaker.draining, false, 'the drain follows the Node, not the request');
  drains.observe(nodeState({ drain: 'maintenance' }));
  t.equal(drains.unknown, undefined);
  t.equal(speaker.draining, true);
  t.same(speaker.calls, ['drain 0'], 'a drain found when the Node is first read does not wait');
  t.match(drains.drained, /maintenance/);
  t.equal(drains.phase, 'gracefulShutdown');
  speaker.emit('drained');
  t.equal(drains.phase, 'withdrawn');
  await drains.undrain();
  t.same(patches, ['maintenance', null], 'undrain removes the annotation');
  drains.observe(nodeState());
  t.equal(speaker.draining, false);
  t.same(speaker.calls, ['drain 0', 'undrain']);
  t.ok(changes() >= 3, 'metrics are told of each change');
});

t.test('a drain while running waits the RFC 8326 time; a record that cannot be written names the fix', async (t) => {
  const { speaker, drains } = make(annotationDrainRecord(async () => undefined), { wait: 15 });
  drains.start('/nonexistent');
  drains.observe(nodeState());
  drains.observe(nodeState({ drain: 'x' }));
  t.same(speaker.calls, ['drain 15']);
  const refused = make(annotationDrainRecord(async () => {
    throw Object.assign(new Error('nodes "n1" is forbidden'), { code: 403 });
  }));
  await t.rejects(refused.drains.drain(), /cannot set the annotation herald\.io\/drain on Node n1: .*forbidden.*: grant patch on nodes/);
});

t.test('file record (standalone): kept in stateDir, and a restart starts drained', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'herald-drain-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const first = make(fileDrainRecord(dir));
  first.drains.start(dir);
  t.equal(first.drains.unknown, undefined, 'nothing to wait for');
  t.match(await first.drains.drain('x'), /^drain started; recorded in .*drain\.json$/);
  t.equal(first.speaker.draining, true);
  const again = make(fileDrainRecord(dir));
  again.drains.start(dir);
  t.equal(again.speaker.draining, true, 'starts drained');
  t.match(again.drains.drained, /drain\.json/);
  t.equal(await again.drains.undrain(), 'undrained');
  t.equal(again.speaker.draining, false);
});

t.test('a departure drains only when graceful shutdown is configured, and an undrain cannot end it', async (t) => {
  const leaving = nodeState({ departing: [{ code: 'NodeDeleting', message: 'Node n1 is being deleted' }] });
  const without = make(undefined, { departureDrains: false });
  without.drains.start('/nonexistent');
  without.drains.observe(leaving);
  t.equal(without.speaker.draining, false, 'without graceful shutdown, departing blocks instead (the controller withdraws)');
  t.equal(without.drains.departing, 'Node n1 is being deleted');
  const withGs = make(undefined, { departureDrains: true });
  withGs.drains.start('/nonexistent');
  withGs.drains.observe(nodeState());
  withGs.drains.observe(leaving);
  t.equal(withGs.speaker.draining, true);
  t.same(withGs.drains.sources, ['node leaving service: Node n1 is being deleted']);
  t.equal(await withGs.drains.undrain(), 'undrained; the node stays drained while it is leaving service: Node n1 is being deleted');
  t.equal(withGs.speaker.draining, true);
});
