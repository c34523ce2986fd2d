// Robustness: arbitrary bytes from an established peer never throw out of the session; the session either stays
// Established or goes to Idle with a NOTIFICATION sent (a BgpError) or a closed connection.
import t from 'tap';
import fc from 'fast-check';
import { Session } from '../../../bgp/session/session.ts';
import { FakeClock } from '../../../bgp/clock.ts';
import { capability, keepalive, open, param, u16, u32, u8, message } from '../../helpers/wire.ts';
import { RawPeer, once, testAddresses } from './raw-peer.ts';

const peerOpen = open({ as: 65002, holdTime: 90, id: '10.0.0.2', params: [param(2, capability(1, u16(1), u8(0), u8(1)), capability(65, u32(65002)))] });

t.test('random messages and byte streams after Established', { timeout: 90_000 }, async (t) => {
  const addrs = testAddresses();
  const peer = await RawPeer.listen(addrs.peer);
  t.teardown(() => peer.close());
  const uncaught: unknown[] = [];
  const onUncaught = (e: unknown) => uncaught.push(e);
  process.on('uncaughtException', onUncaught);
  t.teardown(() => process.off('uncaughtException', onUncaught));
  let runs = 0;
  const outcomes = new Map<string, number>();
  await fc.assert(
    fc.asyncProperty(
      fc.oneof(
        // a well-framed message of a random type with a random body
        fc.tuple(fc.integer({ min: 1, max: 7 }), fc.uint8Array({ maxLength: 120 })).map(([type, body]) => message(type, Buffer.from(body))),
        // random bytes (usually a bad marker)
        fc.uint8Array({ minLength: 1, maxLength: 200 }).map((b) => Buffer.from(b)),
      ),
      async (bytes) => {
        runs++;
        const clock = new FakeClock();
        const session = new Session({
          name: 'fuzz', localAs: 65001, peerAs: 65002, bgpIdentifier: '10.0.0.1', remoteAddress: addrs.peer, remotePort: peer.port,
          localAddress: addrs.ours, holdTimeSec: 90, connectRetryTimeSec: 30, passive: false, families: ['ipv4-unicast'], clock,
        });
        try {
          session.start();
          const conn = await peer.accept();
          await conn.next(1);
          conn.send(peerOpen);
          await conn.next(4);
          conn.send(keepalive());
          if (session.state !== 'Established') await once(session, 'stateChange', (e: { to: string }) => e.to === 'Established');
          conn.send(bytes, keepalive());
          // wait until the session reacted: it answered our trailing KEEPALIVE... or closed
          const deadline = Date.now() + 2000;
          while (Date.now() < deadline && session.state === 'Established' && (session.stats.messagesReceived.KEEPALIVE ?? 0) < 2) {
            await new Promise((r) => setTimeout(r, 2));
          }
          const state = session.state;
          const key = state === 'Established' ? 'stayed up' : `${session.lastReason?.kind}`;
          outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
          if (state !== 'Established' && state !== 'Idle') return false;
          if (state === 'Idle' && !['notificationSent', 'notificationReceived', 'connectionClosed'].includes(session.lastReason?.kind ?? '')) return false;
          return true;
        } finally {
          await session.stop();
        }
      },
    ),
    { numRuns: 40, seed: 7606 },
  );
  t.equal(runs, 40);
  t.same(uncaught, [], 'nothing escaped to uncaughtException');
  t.ok((outcomes.get('notificationSent') ?? 0) > 0, `some inputs were rejected with a NOTIFICATION: ${JSON.stringify([...outcomes])}`);
});
