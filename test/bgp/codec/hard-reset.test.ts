// RFC 8538 §3.1 Cease / Hard Reset: Data = the inner NOTIFICATION's Error Code, Error Subcode and Data; the RFC 9003
// text of an inner 6/2 or 6/4 is read through it. Expected bytes from test/helpers/wire.ts (independent of the codec).
import t from 'tap';
import { BgpError } from '../../../bgp/errors.ts';
import { decodeNotification, notificationFromError, shutdownCommunicationOf } from '../../../bgp/codec/notification.ts';
import { encodeMessage } from '../../../bgp/codec/message.ts';
import { DEFAULT_CONTEXT } from '../../../bgp/codec/types.ts';
import { notification, u8 } from '../../helpers/wire.ts';

t.test('Hard Reset wrapping Cease 6/2 with its text: bytes on the wire, decoded back with the text', async (t) => {
  const err = BgpError.hardReset(BgpError.cease(2, { shutdownCommunication: 'node leaving' }));
  t.equal(err.code, 6);
  t.equal(err.subcode, 9);
  const wire = encodeMessage(notificationFromError(err), DEFAULT_CONTEXT);
  t.equal(wire.toString('hex'), notification(6, 9, u8(6), u8(2), u8(12), Buffer.from('node leaving')).toString('hex'));
  const back = decodeNotification(wire.subarray(19));
  t.equal(back.errorSubcode, 9);
  t.equal(back.shutdownCommunication, 'node leaving', 'the inner text is read through the Hard Reset');
});

t.test('Hard Reset of a Cease without text, and what carries no text', async (t) => {
  t.equal(BgpError.hardReset(BgpError.cease(3)).data.toString('hex'), '0603');
  t.equal(shutdownCommunicationOf(6, 9, Buffer.from('0603', 'hex')), undefined, 'inner 6/3 has no text');
  t.equal(shutdownCommunicationOf(6, 9, Buffer.from('06', 'hex')), undefined, 'truncated inner header');
  t.equal(shutdownCommunicationOf(6, 9, Buffer.from('0402026869', 'hex')), undefined, 'inner code not Cease');
  t.equal(shutdownCommunicationOf(6, 4, Buffer.from('026869', 'hex')), 'hi');
  t.equal(shutdownCommunicationOf(6, 6, Buffer.from('026869', 'hex')), undefined, 'Other Configuration Change carries no text');
});

t.test('only a Cease other than Hard Reset can be wrapped', async (t) => {
  t.throws(() => BgpError.hardReset(BgpError.holdTimerExpired()), RangeError);
  t.throws(() => BgpError.hardReset(BgpError.hardReset(BgpError.cease(2))), RangeError);
});
