// describeReason (bgp/fsm/state.ts, exported from bgp/index.ts): one line of text for every StateReason kind.
import t from 'tap';
import { describeReason } from '../../../bgp/index.ts';
import type { StateReason } from '../../../bgp/index.ts';

const every: Record<StateReason['kind'], { reason: StateReason; text: string }> = {
  notificationSent: { reason: { kind: 'notificationSent', code: 4, subcode: 0 }, text: 'NOTIFICATION sent: Hold Timer Expired / Unspecific' },
  notificationReceived: {
    reason: { kind: 'notificationReceived', code: 6, subcode: 2, text: 'maintenance' },
    text: 'NOTIFICATION received: Cease / Administrative Shutdown "maintenance"',
  },
  holdTimerExpired: { reason: { kind: 'holdTimerExpired' }, text: 'hold timer expired' },
  transportError: { reason: { kind: 'transportError', message: 'connect ECONNREFUSED' }, text: 'transport error: connect ECONNREFUSED' },
  connectionClosed: { reason: { kind: 'connectionClosed' }, text: 'connection closed by peer' },
  admin: { reason: { kind: 'admin', message: 'bye' }, text: 'administrative: bye' },
  deconfigured: { reason: { kind: 'deconfigured' }, text: 'peer de-configured' },
  collision: { reason: { kind: 'collision' }, text: 'connection collision resolution' },
  started: { reason: { kind: 'started' }, text: 'started' },
  progress: { reason: { kind: 'progress', message: 'OPEN received' }, text: 'OPEN received' },
};

t.test('every StateReason kind has its text; NOTIFICATIONs are named by describeNotification by default', async (t) => {
  for (const [kind, { reason, text }] of Object.entries(every)) t.equal(describeReason(reason), text, kind);
  t.equal(describeReason(undefined), 'unknown', 'no reason yet');
  t.equal(describeReason({ kind: 'notificationSent', code: 2, subcode: 2 }, (c, s) => `${c}/${s}`), 'NOTIFICATION sent: 2/2', 'custom namer');
});
