// RFC 4271 §8.2.2 transition table, hold time negotiation (§4.2, §10) and RFC 6608 FSM error subcodes.
import t from 'tap';
import { INITIAL_FSM, OPEN_SENT_HOLD_TIME_SEC, negotiateHoldTime, transition } from '../../../bgp/fsm/fsm.ts';
import type { FsmConfig, FsmData } from '../../../bgp/fsm/fsm.ts';
import type { FsmAction, FsmEvent } from '../../../bgp/fsm/events.ts';
import type { SessionState } from '../../../bgp/fsm/state.ts';
import type { StateReason } from '../../../bgp/fsm/state.ts';
import { BgpError } from '../../../bgp/errors.ts';

const active: FsmConfig = { holdTimeSec: 90, passive: false };
const passive: FsmConfig = { holdTimeSec: 90, passive: true };

function at(state: SessionState, extra: Partial<FsmData> = {}): FsmData {
  const base = { ...INITIAL_FSM, state, connectRetryCounter: 2 };
  if (state === 'OpenConfirm' || state === 'Established') return { ...base, holdTimeSec: 90, keepaliveTimeSec: 30, ...extra };
  return { ...base, ...extra };
}

/** Renders actions compactly: "sendNotification 4/0", "startTimer hold 90000", "stopTimer keepalive". */
function show(a: FsmAction): string {
  switch (a.type) {
    case 'sendNotification':
      return `sendNotification ${a.error.code}/${a.error.subcode} ${a.error.data.toString('hex')}`.trimEnd();
    case 'startTimer':
      return `startTimer ${a.timer}${a.ms !== undefined ? ` ${a.ms}` : ''}`;
    case 'stopTimer':
      return `stopTimer ${a.timer}`;
    default:
      return a.type;
  }
}

/** An UPDATE event carries the message body (here an End-of-RIB), a ROUTE-REFRESH event its decoded request. */
const updateMsg: FsmEvent = { type: 'UpdateMsg', body: Buffer.from('00000000', 'hex') };
const routeRefreshMsg: FsmEvent = { type: 'RouteRefreshMsg', request: { afi: 1, safi: 1, subtype: 0 } };
const cease = BgpError.cease(2, { shutdownCommunication: 'bye' });
const openErr = BgpError.unacceptableHoldTime(2);
const STOP_ALL = ['stopTimer connectRetry', 'stopTimer hold', 'stopTimer keepalive', 'dropConnection'];
/** Leaving the current connection for the held-aside one: every timer stopped, drop, switch, OpenSent Hold Timer. */
const SWITCH = [...STOP_ALL, 'switchConnection', `startTimer hold ${OPEN_SENT_HOLD_TIME_SEC * 1000}`];

interface Row {
  from: FsmData;
  event: FsmEvent;
  config?: FsmConfig;
  to: SessionState;
  actions: string[];
  reason?: StateReason['kind'];
  counter?: number;
}

const rows: Row[] = [
  // Idle
  { from: at('Idle'), event: { type: 'Start' }, to: 'Connect', actions: ['startTimer connectRetry', 'initiateConnection'], reason: 'started' },
  { from: at('Idle'), event: { type: 'Start' }, config: passive, to: 'Active', actions: [], reason: 'started' },
  { from: at('Idle'), event: { type: 'TcpConnected', direction: 'incoming' }, to: 'Idle', actions: ['dropConnection'] },
  { from: at('Idle'), event: { type: 'ManualStop', error: cease }, to: 'Idle', actions: [] },
  { from: at('Idle'), event: { type: 'HoldTimerExpires' }, to: 'Idle', actions: [] },
  // Connect
  { from: at('Connect'), event: { type: 'ConnectRetryTimerExpires' }, to: 'Connect', actions: ['dropConnection', 'startTimer connectRetry', 'initiateConnection'] },
  { from: at('Connect'), event: { type: 'TcpConnected', direction: 'outgoing' }, to: 'OpenSent', actions: ['stopTimer connectRetry', 'sendOpen', `startTimer hold ${OPEN_SENT_HOLD_TIME_SEC * 1000}`], reason: 'progress' },
  { from: at('Connect'), event: { type: 'TcpConnected', direction: 'incoming' }, to: 'OpenSent', actions: ['stopTimer connectRetry', 'sendOpen', 'startTimer hold 240000'], reason: 'progress' },
  { from: at('Connect'), event: { type: 'TcpConnectionFails', message: 'ECONNREFUSED' }, to: 'Active', actions: ['dropConnection', 'startTimer connectRetry'], reason: 'transportError', counter: 3 },
  { from: at('Connect'), event: { type: 'ManualStop', error: cease }, to: 'Idle', actions: STOP_ALL, reason: 'admin', counter: 0 },
  { from: at('Connect'), event: { type: 'AutomaticStop', error: BgpError.cease(1) }, to: 'Idle', actions: STOP_ALL, reason: 'notificationSent', counter: 3 },
  { from: at('Connect'), event: { type: 'Start' }, to: 'Connect', actions: [] },
  { from: at('Connect'), event: { type: 'HoldTimerExpires' }, to: 'Connect', actions: [] },
  { from: at('Connect'), event: { type: 'BgpOpen', holdTimeSec: 90 }, to: 'Idle', actions: ['sendNotification 5/0 01', ...STOP_ALL], reason: 'notificationSent', counter: 3 },
  { from: at('Connect'), event: { type: 'KeepAliveMsg' }, to: 'Idle', actions: ['sendNotification 5/0 04', ...STOP_ALL], reason: 'notificationSent' },
  { from: at('Active'), event: { type: 'NotifMsg', code: 6, subcode: 5 }, to: 'Idle', actions: STOP_ALL, reason: 'notificationReceived', counter: 3 },
  { from: at('Active'), event: { type: 'MessageError', error: BgpError.connectionNotSynchronized() }, to: 'Idle', actions: ['sendNotification 1/1', ...STOP_ALL], reason: 'notificationSent' },
  { from: at('Active'), event: { type: 'AutomaticStop', error: BgpError.cease(1) }, to: 'Idle', actions: STOP_ALL, reason: 'notificationSent', counter: 3 },
  { from: at('OpenSent'), event: { type: 'KeepaliveTimerExpires' }, to: 'OpenSent', actions: [] },
  { from: at('OpenSent'), event: { type: 'Start' }, to: 'OpenSent', actions: [] },
  { from: at('OpenConfirm'), event: routeRefreshMsg, to: 'Idle', actions: ['sendNotification 5/2 05', ...STOP_ALL], reason: 'notificationSent' },
  { from: at('OpenConfirm'), event: { type: 'ManualStop', error: cease }, to: 'Idle', actions: ['sendNotification 6/2 03627965', ...STOP_ALL], reason: 'admin', counter: 0 },
  // Active
  { from: at('Active'), event: { type: 'ConnectRetryTimerExpires' }, to: 'Connect', actions: ['startTimer connectRetry', 'initiateConnection'], reason: 'progress' },
  { from: at('Active'), event: { type: 'ConnectRetryTimerExpires' }, config: passive, to: 'Active', actions: [] },
  { from: at('Active'), event: { type: 'TcpConnected', direction: 'incoming' }, config: passive, to: 'OpenSent', actions: ['stopTimer connectRetry', 'sendOpen', 'startTimer hold 240000'], reason: 'progress' },
  { from: at('Active'), event: { type: 'TcpConnectionFails', message: 'reset' }, to: 'Idle', actions: STOP_ALL, reason: 'transportError', counter: 3 },
  { from: at('Active'), event: { type: 'ManualStop', error: cease }, to: 'Idle', actions: STOP_ALL, reason: 'admin', counter: 0 },
  // OpenSent
  { from: at('OpenSent'), event: { type: 'BgpOpen', holdTimeSec: 30 }, to: 'OpenConfirm', actions: ['stopTimer connectRetry', 'sendKeepalive', 'startTimer keepalive 10000', 'startTimer hold 30000'], reason: 'progress' },
  { from: at('OpenSent'), event: { type: 'BgpOpen', holdTimeSec: 0 }, to: 'OpenConfirm', actions: ['stopTimer connectRetry', 'sendKeepalive', 'stopTimer hold', 'stopTimer keepalive'], reason: 'progress' },
  { from: at('OpenSent'), event: { type: 'HoldTimerExpires' }, to: 'Idle', actions: ['sendNotification 4/0', ...STOP_ALL], reason: 'holdTimerExpired', counter: 3 },
  { from: at('OpenSent'), event: { type: 'MessageError', error: openErr }, to: 'Idle', actions: ['sendNotification 2/6 0002', ...STOP_ALL], reason: 'notificationSent', counter: 3 },
  { from: at('OpenSent'), event: { type: 'KeepAliveMsg' }, to: 'Idle', actions: ['sendNotification 5/1 04', ...STOP_ALL], reason: 'notificationSent', counter: 3 },
  { from: at('OpenSent'), event: updateMsg, to: 'Idle', actions: ['sendNotification 5/1 02', ...STOP_ALL], reason: 'notificationSent' },
  { from: at('OpenSent'), event: routeRefreshMsg, to: 'Idle', actions: ['sendNotification 5/1 05', ...STOP_ALL], reason: 'notificationSent' },
  { from: at('OpenSent'), event: { type: 'NotifMsg', code: 2, subcode: 2 }, to: 'Idle', actions: STOP_ALL, reason: 'notificationReceived', counter: 3 },
  { from: at('OpenSent'), event: { type: 'TcpConnectionFails', message: 'closed', closedByPeer: true }, to: 'Active', actions: ['stopTimer hold', 'stopTimer keepalive', 'dropConnection', 'startTimer connectRetry'], reason: 'connectionClosed', counter: 3 },
  { from: at('OpenSent'), event: { type: 'TcpConnectionFails', message: 'closed' }, config: passive, to: 'Active', actions: ['stopTimer hold', 'stopTimer keepalive', 'dropConnection'], reason: 'transportError' },
  { from: at('OpenSent'), event: { type: 'ManualStop', error: cease }, to: 'Idle', actions: ['sendNotification 6/2 03627965', ...STOP_ALL], reason: 'admin', counter: 0 },
  { from: at('OpenSent'), event: { type: 'ManualStop', error: BgpError.cease(3) }, to: 'Idle', actions: ['sendNotification 6/3', ...STOP_ALL], reason: 'deconfigured', counter: 0 },
  { from: at('OpenSent'), event: { type: 'OpenCollisionDump', error: BgpError.cease(7) }, to: 'Idle', actions: ['sendNotification 6/7', ...STOP_ALL], reason: 'collision' },
  // OpenConfirm
  { from: at('OpenConfirm'), event: { type: 'KeepAliveMsg' }, to: 'Established', actions: ['startTimer hold 90000', 'established'], reason: 'progress', counter: 0 },
  { from: at('OpenConfirm', { holdTimeSec: 0, keepaliveTimeSec: 0 }), event: { type: 'KeepAliveMsg' }, to: 'Established', actions: ['established'], reason: 'progress' },
  { from: at('OpenConfirm'), event: { type: 'KeepaliveTimerExpires' }, to: 'OpenConfirm', actions: ['sendKeepalive', 'startTimer keepalive 30000'] },
  { from: at('OpenConfirm'), event: { type: 'HoldTimerExpires' }, to: 'Idle', actions: ['sendNotification 4/0', ...STOP_ALL], reason: 'holdTimerExpired' },
  { from: at('OpenConfirm'), event: { type: 'BgpOpen', holdTimeSec: 90 }, to: 'Idle', actions: ['sendNotification 5/2 01', ...STOP_ALL], reason: 'notificationSent' },
  { from: at('OpenConfirm'), event: updateMsg, to: 'Idle', actions: ['sendNotification 5/2 02', ...STOP_ALL], reason: 'notificationSent' },
  { from: at('OpenConfirm'), event: { type: 'NotifMsg', code: 6, subcode: 2, text: 'maintenance' }, to: 'Idle', actions: STOP_ALL, reason: 'notificationReceived' },
  { from: at('OpenConfirm'), event: { type: 'TcpConnectionFails', message: 'ECONNRESET' }, to: 'Idle', actions: STOP_ALL, reason: 'transportError' },
  { from: at('OpenConfirm'), event: { type: 'OpenCollisionDump', error: BgpError.cease(7) }, to: 'Idle', actions: ['sendNotification 6/7', ...STOP_ALL], reason: 'collision' },
  // Established
  { from: at('Established'), event: { type: 'KeepAliveMsg' }, to: 'Established', actions: ['startTimer hold 90000'] },
  { from: at('Established'), event: updateMsg, to: 'Established', actions: ['startTimer hold 90000', 'deliverUpdate'] },
  { from: at('Established'), event: routeRefreshMsg, to: 'Established', actions: ['startTimer hold 90000', 'deliverRouteRefresh'] },
  { from: at('Established', { holdTimeSec: 0, keepaliveTimeSec: 0 }), event: updateMsg, to: 'Established', actions: ['deliverUpdate'] },
  { from: at('Established'), event: { type: 'KeepaliveTimerExpires' }, to: 'Established', actions: ['sendKeepalive', 'startTimer keepalive 30000'] },
  { from: at('Established', { holdTimeSec: 0, keepaliveTimeSec: 0 }), event: { type: 'KeepaliveTimerExpires' }, to: 'Established', actions: [] },
  { from: at('Established'), event: { type: 'HoldTimerExpires' }, to: 'Idle', actions: ['sendNotification 4/0', ...STOP_ALL], reason: 'holdTimerExpired', counter: 3 },
  { from: at('Established'), event: { type: 'BgpOpen', holdTimeSec: 90 }, to: 'Idle', actions: ['sendNotification 5/3 01', ...STOP_ALL], reason: 'notificationSent' },
  { from: at('Established'), event: { type: 'NotifMsg', code: 6, subcode: 4 }, to: 'Idle', actions: STOP_ALL, reason: 'notificationReceived' },
  { from: at('Established'), event: { type: 'MessageError', error: BgpError.malformedAttributeList('x') }, to: 'Idle', actions: ['sendNotification 3/1', ...STOP_ALL], reason: 'notificationSent' },
  { from: at('Established'), event: { type: 'AutomaticStop', error: BgpError.cease(1, { data: Buffer.from('00010100000064', 'hex') }) }, to: 'Idle', actions: ['sendNotification 6/1 00010100000064', ...STOP_ALL], reason: 'notificationSent', counter: 3 },
  { from: at('Established'), event: { type: 'ManualStop', error: BgpError.cease(4, { shutdownCommunication: 'reset' }) }, to: 'Idle', actions: ['sendNotification 6/4 057265736574', ...STOP_ALL], reason: 'admin', counter: 0 },
  { from: at('Established'), event: { type: 'TcpConnectionFails', message: 'eof', closedByPeer: true }, to: 'Idle', actions: STOP_ALL, reason: 'connectionClosed' },
  // ManualStop without a NOTIFICATION (a restart under RFC 4724 graceful restart): only the connection goes
  { from: at('Established'), event: { type: 'ManualStop' }, to: 'Idle', actions: STOP_ALL, reason: 'admin', counter: 0 },
  { from: at('OpenSent'), event: { type: 'ManualStop' }, to: 'Idle', actions: STOP_ALL, reason: 'admin', counter: 0 },
  // RFC 8538 §3.1 Hard Reset: 6/9 carrying the inner 6/2 and its text; 6/3 inside one is still "de-configured"
  { from: at('Established'), event: { type: 'ManualStop', error: BgpError.hardReset(cease) }, to: 'Idle', actions: ['sendNotification 6/9 060203627965', ...STOP_ALL], reason: 'notificationSent', counter: 0 },
  { from: at('Established'), event: { type: 'ManualStop', error: BgpError.hardReset(BgpError.cease(3)) }, to: 'Idle', actions: ['sendNotification 6/9 0603', ...STOP_ALL], reason: 'deconfigured', counter: 0 },
  { from: at('Established'), event: { type: 'Start' }, to: 'Established', actions: [] },
  { from: at('Established'), event: { type: 'TcpConnected', direction: 'incoming' }, to: 'Established', actions: [] },
  // Start with PassiveTcpEstablishment (Event 5): the shell accepts the peer's connection while it waits in Idle
  { from: at('Idle'), event: { type: 'Start', passive: true }, to: 'Active', actions: [], reason: 'started' },
  { from: at('Active'), event: { type: 'Start', passive: true }, to: 'Active', actions: [] },
  // RFC 4271 6.8 collision won by the held-aside connection: Cease 7 on the current one, continue on the new one
  { from: at('OpenSent'), event: { type: 'CollisionSwitch', error: BgpError.cease(7) }, to: 'OpenSent', actions: ['sendNotification 6/7', ...SWITCH], counter: 2 },
  { from: at('OpenConfirm'), event: { type: 'CollisionSwitch', error: BgpError.cease(7) }, to: 'OpenSent', actions: ['sendNotification 6/7', ...SWITCH], reason: 'collision', counter: 2 },
  { from: at('Established'), event: { type: 'CollisionSwitch', error: BgpError.cease(7) }, to: 'Established', actions: [] },
  { from: at('Idle'), event: { type: 'CollisionSwitch', error: BgpError.cease(7) }, to: 'Idle', actions: [] },
  { from: at('Connect'), event: { type: 'CollisionSwitch', error: BgpError.cease(7) }, to: 'Connect', actions: [] },
  { from: at('Active'), event: { type: 'CollisionSwitch', error: BgpError.cease(7) }, config: passive, to: 'Active', actions: [] },
  // RFC 4724 4: a graceful-restart peer's valid OPEN on a new connection while Established
  { from: at('Established'), event: { type: 'PeerRestarted' }, to: 'OpenSent', actions: SWITCH, reason: 'transportError', counter: 3 },
  { from: at('OpenConfirm'), event: { type: 'PeerRestarted' }, to: 'OpenConfirm', actions: [] },
  { from: at('OpenSent'), event: { type: 'PeerRestarted' }, to: 'OpenSent', actions: [] },
  { from: at('Active'), event: { type: 'PeerRestarted' }, to: 'Active', actions: [] },
  { from: at('Idle'), event: { type: 'PeerRestarted' }, to: 'Idle', actions: [] },
];

t.test('RFC 4271 8.2.2 transition table', async (t) => {
  t.ok(rows.length >= 50, `table has ${rows.length} rows`);
  for (const row of rows) {
    const cfg = row.config ?? active;
    const label = `${row.from.state} + ${row.event.type}${cfg.passive ? ' (passive)' : ''} -> ${row.to}`;
    const r = transition(row.from, row.event, cfg);
    t.equal(r.next.state, row.to, `${label}: state`);
    t.same(r.actions.map(show), row.actions, `${label}: actions`);
    if (row.to !== row.from.state) t.equal(r.reason?.kind, row.reason, `${label}: reason`);
    else t.equal(r.reason, undefined, `${label}: no reason without a state change`);
    if (row.counter !== undefined) t.equal(r.next.connectRetryCounter, row.counter, `${label}: ConnectRetryCounter`);
  }
});

t.test('notification reasons carry code, subcode and RFC 9003 text', async (t) => {
  const r = transition(at('Established'), { type: 'NotifMsg', code: 6, subcode: 2, text: 'upgrade' }, active);
  t.same(r.reason, { kind: 'notificationReceived', code: 6, subcode: 2, text: 'upgrade' });
  const s = transition(at('OpenSent'), { type: 'AutomaticStop', error: BgpError.cease(2, { shutdownCommunication: 'über' }) }, active);
  t.same(s.reason, { kind: 'notificationSent', code: 6, subcode: 2, text: 'über' });
  const a = transition(at('Established'), { type: 'ManualStop', error: BgpError.cease(2, { shutdownCommunication: 'maint' }) }, active);
  t.same(a.reason, { kind: 'admin', message: 'maint' });
  const h = transition(at('Established'), { type: 'ManualStop', error: BgpError.hardReset(BgpError.cease(2, { shutdownCommunication: 'leaving' })) }, active);
  t.same(h.reason, { kind: 'notificationSent', code: 6, subcode: 9, text: 'leaving' }, 'a Hard Reset names the text of the Cease inside it');
  const q = transition(at('Established'), { type: 'ManualStop' }, active);
  t.same(q.reason, { kind: 'admin', message: 'closed without NOTIFICATION: graceful restart (RFC 4724 §4)' });
});

t.test('negotiated hold time enters OpenConfirm and Established', async (t) => {
  let fsm = transition(INITIAL_FSM, { type: 'Start' }, active).next;
  fsm = transition(fsm, { type: 'TcpConnected', direction: 'outgoing' }, active).next;
  const oc = transition(fsm, { type: 'BgpOpen', holdTimeSec: 9 }, { ...active, keepaliveTimeSec: 10 });
  t.equal(oc.next.holdTimeSec, 9);
  t.equal(oc.next.keepaliveTimeSec, 3, 'configured keepalive capped at a third of the hold time');
  const est = transition(oc.next, { type: 'KeepAliveMsg' }, active);
  t.equal(est.next.state, 'Established');
  t.same(est.actions.map(show), ['startTimer hold 9000', 'established']);
});

t.test('RFC 4271 4.2 hold time negotiation', async (t) => {
  t.same(negotiateHoldTime(90, 180), { holdTimeSec: 90, keepaliveTimeSec: 30 });
  t.same(negotiateHoldTime(90, 3), { holdTimeSec: 3, keepaliveTimeSec: 1 });
  t.same(negotiateHoldTime(90, 0), { holdTimeSec: 0, keepaliveTimeSec: 0 }, 'peer 0 disables timers');
  t.same(negotiateHoldTime(0, 90), { holdTimeSec: 0, keepaliveTimeSec: 0 }, 'local 0 disables timers');
  t.same(negotiateHoldTime(240, 240, 20), { holdTimeSec: 240, keepaliveTimeSec: 20 });
  t.same(negotiateHoldTime(240, 30, 20), { holdTimeSec: 30, keepaliveTimeSec: 10 });
  t.same(negotiateHoldTime(4, 4), { holdTimeSec: 4, keepaliveTimeSec: 1 });
});

t.test('transition is pure: the input state is not modified', async (t) => {
  const from = Object.freeze(at('OpenSent'));
  const r = transition(from, { type: 'BgpOpen', holdTimeSec: 30 }, active);
  t.equal(from.state, 'OpenSent');
  t.not(r.next, from);
  const again = transition(from, { type: 'BgpOpen', holdTimeSec: 30 }, active);
  t.same(again.actions.map(show), r.actions.map(show));
});

t.test('received UPDATE and ROUTE-REFRESH: the payload travels in the event and comes out in the delivering action', async (t) => {
  const body = Buffer.from('0000000400', 'hex');
  const u = transition(at('Established'), { type: 'UpdateMsg', body }, active);
  const deliver = u.actions.find((a) => a.type === 'deliverUpdate');
  t.ok(deliver?.type === 'deliverUpdate' && deliver.body === body, 'deliverUpdate carries the same body');
  const request = { afi: 2, safi: 1, subtype: 0 };
  const r = transition(at('Established'), { type: 'RouteRefreshMsg', request }, active);
  const refresh = r.actions.find((a) => a.type === 'deliverRouteRefresh');
  t.ok(refresh?.type === 'deliverRouteRefresh' && refresh.request === request, 'deliverRouteRefresh carries the request');
  const early = transition(at('OpenConfirm'), { type: 'UpdateMsg', body }, active);
  t.notOk(early.actions.some((a) => a.type === 'deliverUpdate'), 'nothing is delivered outside Established');
});

t.test('CollisionSwitch and PeerRestarted forget the negotiated Hold Time; the new connection OPEN negotiates again', async (t) => {
  const c = transition(at('OpenConfirm'), { type: 'CollisionSwitch', error: BgpError.cease(7) }, active);
  t.same([c.next.holdTimeSec, c.next.keepaliveTimeSec], [0, 0]);
  t.same(c.reason, { kind: 'collision' });
  const r = transition(at('Established'), { type: 'PeerRestarted' }, active);
  t.same([r.next.holdTimeSec, r.next.keepaliveTimeSec], [0, 0]);
  t.same(r.reason, { kind: 'transportError', message: 'peer restarted: new connection with a valid OPEN (RFC 4724 §4)' });
  const again = transition(r.next, { type: 'BgpOpen', holdTimeSec: 30 }, active);
  t.equal(again.next.state, 'OpenConfirm');
  t.equal(again.next.holdTimeSec, 30);
});
