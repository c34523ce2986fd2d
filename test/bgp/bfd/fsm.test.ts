// RFC 5880 §6.2 / §6.8.6 / §6.8.4 / §6.8.16 state machine: every state × every event, as a table.
import t from 'tap';
import { transition } from '../../../bgp/bfd/fsm.ts';
import type { BfdFsmEvent } from '../../../bgp/bfd/fsm.ts';
import type { BfdState } from '../../../bgp/bfd/packet.ts';

const rx = (remoteState: BfdState): BfdFsmEvent => ({ type: 'ControlPacket', remoteState });
const TIMER: BfdFsmEvent = { type: 'DetectionTimeExpired' };
const ADMIN_DOWN: BfdFsmEvent = { type: 'AdminDown' };
const ADMIN_UP: BfdFsmEvent = { type: 'AdminUp' };

interface Row {
  from: BfdState;
  event: BfdFsmEvent;
  to: BfdState;
  /** New bfd.LocalDiag; undefined = unchanged. */
  diag?: number;
  resetRemote?: boolean;
}

const rows: Row[] = [
  // Down (§6.8.6: "If bfd.SessionState is Down: If received State is Down → Init; if Init → Up")
  { from: 'Down', event: rx('AdminDown'), to: 'Down' },
  { from: 'Down', event: rx('Down'), to: 'Init' },
  { from: 'Down', event: rx('Init'), to: 'Up', diag: 0 },
  { from: 'Down', event: rx('Up'), to: 'Down' },
  { from: 'Down', event: TIMER, to: 'Down', resetRemote: true }, // §6.8.1: bfd.RemoteDiscr reset in any state
  { from: 'Down', event: ADMIN_DOWN, to: 'AdminDown', diag: 7 },
  { from: 'Down', event: ADMIN_UP, to: 'Down' },
  // Init ("If received State is Init or Up → Up"; AdminDown → Down, diag 3; TIMER → Down, diag 1)
  { from: 'Init', event: rx('AdminDown'), to: 'Down', diag: 3 },
  { from: 'Init', event: rx('Down'), to: 'Init' },
  { from: 'Init', event: rx('Init'), to: 'Up', diag: 0 },
  { from: 'Init', event: rx('Up'), to: 'Up', diag: 0 },
  { from: 'Init', event: TIMER, to: 'Down', diag: 1, resetRemote: true },
  { from: 'Init', event: ADMIN_DOWN, to: 'AdminDown', diag: 7 },
  { from: 'Init', event: ADMIN_UP, to: 'Init' },
  // Up ("If received State is Down → Down, diag 3 Neighbor Signaled Session Down")
  { from: 'Up', event: rx('AdminDown'), to: 'Down', diag: 3 },
  { from: 'Up', event: rx('Down'), to: 'Down', diag: 3 },
  { from: 'Up', event: rx('Init'), to: 'Up' },
  { from: 'Up', event: rx('Up'), to: 'Up' },
  { from: 'Up', event: TIMER, to: 'Down', diag: 1, resetRemote: true },
  { from: 'Up', event: ADMIN_DOWN, to: 'AdminDown', diag: 7 },
  { from: 'Up', event: ADMIN_UP, to: 'Up' },
  // AdminDown ("If bfd.SessionState is AdminDown: Discard the packet"; only management leaves it, to Down)
  { from: 'AdminDown', event: rx('AdminDown'), to: 'AdminDown' },
  { from: 'AdminDown', event: rx('Down'), to: 'AdminDown' },
  { from: 'AdminDown', event: rx('Init'), to: 'AdminDown' },
  { from: 'AdminDown', event: rx('Up'), to: 'AdminDown' },
  { from: 'AdminDown', event: TIMER, to: 'AdminDown', resetRemote: true },
  { from: 'AdminDown', event: ADMIN_DOWN, to: 'AdminDown' },
  { from: 'AdminDown', event: ADMIN_UP, to: 'Down' },
];

const label = (e: BfdFsmEvent): string => (e.type === 'ControlPacket' ? `rx ${e.remoteState}` : e.type);

t.test('transition table', async (t) => {
  for (const r of rows) {
    const out = transition(r.from, r.event);
    t.same(
      { to: out.state, diag: out.diag, resetRemote: out.resetRemoteDiscriminator ?? false },
      { to: r.to, diag: r.diag, resetRemote: r.resetRemote ?? false },
      `${r.from} --${label(r.event)}--> ${r.to}`,
    );
  }
});

t.test('the table covers every state × event pair exactly once', async (t) => {
  const states: BfdState[] = ['AdminDown', 'Down', 'Init', 'Up'];
  const events = [...states.map(rx), TIMER, ADMIN_DOWN, ADMIN_UP];
  const keys = rows.map((r) => `${r.from}/${label(r.event)}`);
  t.equal(new Set(keys).size, keys.length, 'no duplicate rows');
  for (const s of states) for (const e of events) t.ok(keys.includes(`${s}/${label(e)}`), `${s} × ${label(e)}`);
});

t.test('the three-way handshake of §6.2 reaches Up on both sides', async (t) => {
  // A and B start Down; A's Down packet moves B to Init, B's Init moves A to Up, A's Up moves B to Up.
  let a: BfdState = 'Down';
  let b: BfdState = 'Down';
  b = transition(b, rx(a)).state;
  t.equal(b, 'Init');
  a = transition(a, rx(b)).state;
  t.equal(a, 'Up');
  b = transition(b, rx(a)).state;
  t.equal(b, 'Up');
});
