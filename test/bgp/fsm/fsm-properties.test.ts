// Properties of the pure FSM over random event sequences (fast-check).
import t from 'tap';
import fc from 'fast-check';
import { INITIAL_FSM, transition } from '../../../bgp/fsm/fsm.ts';
import type { FsmConfig, FsmData } from '../../../bgp/fsm/fsm.ts';
import type { FsmEvent } from '../../../bgp/fsm/events.ts';
import { BgpError } from '../../../bgp/errors.ts';

const updateMsg: FsmEvent = { type: 'UpdateMsg', body: Buffer.from('00000000', 'hex') };
const routeRefreshMsg: FsmEvent = { type: 'RouteRefreshMsg', request: { afi: 1, safi: 1, subtype: 0 } };

const events: FsmEvent[] = [
  { type: 'Start' },
  { type: 'ManualStop', error: BgpError.cease(2) },
  { type: 'AutomaticStop', error: BgpError.cease(1) },
  { type: 'ConnectRetryTimerExpires' },
  { type: 'HoldTimerExpires' },
  { type: 'KeepaliveTimerExpires' },
  { type: 'TcpConnected', direction: 'outgoing' },
  { type: 'TcpConnected', direction: 'incoming' },
  { type: 'TcpConnectionFails', message: 'x' },
  { type: 'BgpOpen', holdTimeSec: 0 },
  { type: 'BgpOpen', holdTimeSec: 3 },
  { type: 'BgpOpen', holdTimeSec: 180 },
  { type: 'MessageError', error: BgpError.badMessageType(9) },
  { type: 'OpenCollisionDump', error: BgpError.cease(7) },
  { type: 'CollisionSwitch', error: BgpError.cease(7) },
  { type: 'PeerRestarted' },
  { type: 'Start', passive: true },
  { type: 'NotifMsg', code: 6, subcode: 2 },
  { type: 'KeepAliveMsg' },
  updateMsg,
  routeRefreshMsg,
];

const STATES = ['Idle', 'Connect', 'Active', 'OpenSent', 'OpenConfirm', 'Established'];

t.test('random event sequences keep the FSM invariants', async (t) => {
  let runs = 0;
  fc.assert(
    fc.property(fc.array(fc.integer({ min: 0, max: events.length - 1 }), { maxLength: 60 }), fc.boolean(), fc.constantFrom(0, 3, 90), (seq, passive, hold) => {
      runs++;
      const cfg: FsmConfig = { holdTimeSec: hold, passive };
      let fsm: FsmData = INITIAL_FSM;
      let connected = false;
      for (const i of seq) {
        const ev = events[i] as FsmEvent;
        const r = transition(fsm, ev, cfg);
        const types = r.actions.map((a) => a.type);
        if (!STATES.includes(r.next.state)) return false;
        if (r.next.connectRetryCounter < 0) return false;
        // a state change always has a reason, and no reason without one
        if ((r.next.state !== fsm.state) !== (r.reason !== undefined)) return false;
        // a NOTIFICATION is always followed by dropping the connection
        const n = types.indexOf('sendNotification');
        if (n >= 0 && types.indexOf('dropConnection', n) < 0) return false;
        // entering Idle from a connected state stops every timer and drops the connection
        if (r.next.state === 'Idle' && fsm.state !== 'Idle') {
          for (const timer of ['connectRetry', 'hold', 'keepalive']) {
            if (!r.actions.some((a) => a.type === 'stopTimer' && a.timer === timer)) return false;
          }
          if (!types.includes('dropConnection')) return false;
        }
        // a passive peer never dials
        if (passive && types.includes('initiateConnection')) return false;
        // Established is reached only from OpenConfirm, on a KEEPALIVE, announcing 'established'
        if (r.next.state === 'Established' && fsm.state !== 'Established') {
          if (fsm.state !== 'OpenConfirm' || ev.type !== 'KeepAliveMsg' || !types.includes('established')) return false;
        }
        // negotiated hold time is 0 or >= 3, keepalive below it
        if (r.next.holdTimeSec !== 0 && (r.next.holdTimeSec < 3 || r.next.keepaliveTimeSec > r.next.holdTimeSec / 3)) return false;
        // with hold time 0 no hold/keepalive timer is ever started after OPEN
        if (r.next.state === 'OpenConfirm' || r.next.state === 'Established') {
          if (r.next.holdTimeSec === 0 && r.actions.some((a) => a.type === 'startTimer' && a.timer !== 'connectRetry')) return false;
        }
        // continuing on the held-aside connection: the current one is dropped first, the new one is in OpenSent
        const sw = types.indexOf('switchConnection');
        if (sw >= 0 && (types.lastIndexOf('dropConnection', sw) < 0 || r.next.state !== 'OpenSent')) return false;
        if (types.includes('dropConnection')) connected = false;
        if (sw >= 0) connected = true;
        if (ev.type === 'TcpConnected' && r.next.state === 'OpenSent') connected = true;
        // sending anything requires a connection
        if (!connected && (types.includes('sendKeepalive') || types.includes('sendOpen')) && !types.includes('dropConnection')) return false;
        fsm = r.next;
      }
      return true;
    }),
    { numRuns: 3000, seed: 4271 },
  );
  t.equal(runs, 3000, 'ran 3000 random sequences');
});
