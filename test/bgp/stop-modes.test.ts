// Stop modes as tables (docs/decisions.md "Stop modes"): how each peer's session ends for each graceful restart
// agreement, and the RFC 8538 §5 Hard Reset rule of the session's Cease.
import t from 'tap';
import { peerEnding } from '../../bgp/stop-modes.ts';
import { withHardReset, WITHOUT_NOTIFICATION } from '../../bgp/session/cease.ts';
import { BgpError } from '../../bgp/errors.ts';

t.test('peerEnding: restart keeps the routes wherever graceful restart was agreed; departure ends with Hard Reset where N was', async (t) => {
  const rows = [
    { mode: 'restart', established: true, gr: 'notification', ending: 'ceaseKeepingRoutes', request: { subcode: 4, shutdownCommunication: 'bye', hardReset: false } },
    { mode: 'restart', established: true, gr: 'restart', ending: 'closedWithoutNotification', request: WITHOUT_NOTIFICATION },
    { mode: 'restart', established: true, gr: 'none', ending: 'cease', request: { subcode: 2, shutdownCommunication: 'bye' } },
    { mode: 'restart', established: false, gr: 'none', ending: 'notEstablished', request: WITHOUT_NOTIFICATION },
    { mode: 'departure', established: true, gr: 'notification', ending: 'hardReset', request: { subcode: 2, shutdownCommunication: 'bye', hardReset: true } },
    { mode: 'departure', established: true, gr: 'restart', ending: 'cease', request: { subcode: 2, shutdownCommunication: 'bye' } },
    { mode: 'departure', established: true, gr: 'none', ending: 'cease', request: { subcode: 2, shutdownCommunication: 'bye' } },
    { mode: 'departure', established: false, gr: 'none', ending: 'notEstablished', request: { subcode: 2, shutdownCommunication: 'bye', hardReset: true } },
  ] as const;
  for (const r of rows) {
    t.same(peerEnding(r.mode, r.established, r.gr, 'bye'), { ending: r.ending, request: r.request }, `${r.mode}, ${r.established ? 'Established' : 'not Established'}, graceful restart ${r.gr}`);
  }
  t.same(peerEnding('restart', true, 'none'), { ending: 'cease', request: { subcode: 2 } }, 'no text without a message');
});

t.test('withHardReset: RFC 8538 §5 subcodes become Hard Reset only where N was negotiated', async (t) => {
  const hex = (e: BgpError) => `${e.code}/${e.subcode} ${e.data.toString('hex')}`.trimEnd();
  const shutdown = BgpError.cease(2, { shutdownCommunication: 'x' });
  t.equal(hex(withHardReset(shutdown, 'notification')), '6/9 06020178');
  t.equal(hex(withHardReset(shutdown, 'restart')), '6/2 0178', 'never without N');
  t.equal(hex(withHardReset(shutdown, 'none')), '6/2 0178');
  t.equal(hex(withHardReset(BgpError.cease(3), 'notification')), '6/9 0603', 'Peer De-configured');
  t.equal(hex(withHardReset(BgpError.cease(1, { data: Buffer.from('00010100000064', 'hex') }), 'notification')), '6/9 060100010100000064', 'Maximum Number of Prefixes Reached');
  t.equal(hex(withHardReset(BgpError.cease(4), 'notification')), '6/4', 'Administrative Reset: soft unless asked');
  t.equal(hex(withHardReset(BgpError.cease(4), 'notification', true)), '6/9 0604');
  t.equal(hex(withHardReset(shutdown, 'notification', false)), '6/2 0178', 'explicitly soft');
  t.equal(hex(withHardReset(BgpError.cease(6), 'notification')), '6/6', 'Other Configuration Change keeps graceful restart');
  t.equal(hex(withHardReset(BgpError.holdTimerExpired(), 'notification', true)), '4/0', 'only a Cease is wrapped');
});
