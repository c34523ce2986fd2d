// The collision rule on its own (bgp/session/collision.ts): RFC 4271 §6.8 by BGP Identifier, RFC 6286 §2.3 by AS
// number when the Identifiers are equal, RFC 4724 §4 while Established.
import t from 'tap';
import { resolveCollision } from '../../../bgp/session/collision.ts';
import type { CollisionFacts } from '../../../bgp/session/collision.ts';

const base: CollisionFacts = {
  state: 'OpenConfirm', localId: '10.0.0.1', remoteId: '10.0.0.1', localAs: 65001, peerAs: 65002, existing: 'outgoing', gracefulRestart: false,
};

const rows: { facts: Partial<CollisionFacts>; want: ReturnType<typeof resolveCollision>; why: string }[] = [
  { facts: { remoteId: '10.0.0.9' }, want: 'switch', why: '6.8: our Identifier lower, the peer-initiated candidate wins' },
  { facts: { localId: '10.0.0.9', remoteId: '10.0.0.1' }, want: 'closeCandidate', why: '6.8: our Identifier higher, the existing one stays' },
  { facts: { localId: '128.0.0.1', remoteId: '127.0.0.1' }, want: 'closeCandidate', why: '6.8: compared as unsigned 32-bit integers' },
  { facts: { remoteId: '10.0.0.9', existing: 'incoming' }, want: 'switch', why: '6.8 as written, whoever opened the existing one' },
  { facts: {}, want: 'switch', why: '6286 2.3: equal Identifiers, peer AS larger: the peer-initiated candidate wins over ours' },
  { facts: { state: 'OpenSent' }, want: 'switch', why: '6286 2.3 in OpenSent as well' },
  { facts: { localAs: 65010 }, want: 'closeCandidate', why: '6286 2.3: equal Identifiers, our AS larger: our connection stays' },
  { facts: { localAs: 4200000000, peerAs: 65002 }, want: 'closeCandidate', why: '6286 2.3: 4-octet AS numbers compared as numbers' },
  { facts: { existing: 'incoming' }, want: 'closeCandidate', why: '6286 2.3: both connections the peer\'s: the existing one stays' },
  { facts: { state: 'Established', remoteId: '10.0.0.9' }, want: 'closeCandidate', why: '6.8: a collision with Established closes the new one' },
  { facts: { state: 'Established', gracefulRestart: true }, want: 'peerRestarted', why: '4724 4: a valid OPEN on a new connection: the peer restarted' },
  { facts: { state: 'Active', existing: undefined, remoteId: '10.0.0.9' }, want: 'closeCandidate', why: 'the connection it collided with is gone' },
  { facts: { state: 'Connect', remoteId: '10.0.0.9' }, want: 'closeCandidate', why: 'the connection it collided with is gone' },
];

t.test('collision outcomes', async (t) => {
  for (const r of rows) t.equal(resolveCollision({ ...base, ...r.facts }), r.want, r.why);
});
