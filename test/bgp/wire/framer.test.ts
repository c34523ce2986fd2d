/**
 * MessageFramer (RFC 4271 §4.1 framing): every split point of multi-message streams, byte-at-a-time delivery,
 * random 3-way splits, length limits (4096 / 4097, 65535 with extended message), header errors as soon as the
 * header is complete, and copy-safety (views handed out stay unchanged after more chunks arrive).
 */
import t from 'tap';
import fc from 'fast-check';
import { BgpError } from '../../../bgp/errors.ts';
import { MessageFramer } from '../../../bgp/wire/framer.ts';
import * as w from '../../helpers/wire.ts';

const ka = w.keepalive();
const op = w.open({ as: 65000, holdTime: 90, id: '10.0.0.1', params: [w.param(2, w.capability(1, w.u16(1), [0, 1]), w.capability(2))] });
const nt = w.notification(6, 2, [3], Buffer.from('bye'));
const rr = w.routeRefresh(1, 0, 1);
const big = w.notification(6, 3, Buffer.alloc(4096 - 21, 0xab)); // exactly 4096 octets
const stream = Buffer.concat([op, ka, nt, rr, ka, big, ka]);
const expected = [op, ka, nt, rr, ka, big, ka].map((b) => b.toString('hex'));

function feed(chunks: Buffer[], max?: number): Buffer[] {
  const f = new MessageFramer();
  if (max !== undefined) f.maxLength = max;
  const out: Buffer[] = [];
  for (const c of chunks) out.push(...f.push(c));
  if (f.bufferedLength !== 0) throw new Error(`left over: ${f.bufferedLength}`);
  return out;
}

t.test('whole stream in one chunk', async (t) => {
  t.same(feed([stream]).map((b) => b.toString('hex')), expected);
});

t.test('every split point into two chunks yields the same messages', async (t) => {
  let bad = 0;
  for (let i = 1; i < stream.length; i++) {
    const got = feed([stream.subarray(0, i), stream.subarray(i)]).map((b) => b.toString('hex'));
    if (JSON.stringify(got) !== JSON.stringify(expected)) bad++;
  }
  t.equal(bad, 0, `all ${stream.length - 1} split points agree`);
});

t.test('byte-at-a-time delivery', async (t) => {
  const chunks: Buffer[] = [];
  for (let i = 0; i < stream.length; i++) chunks.push(stream.subarray(i, i + 1));
  t.same(feed(chunks).map((b) => b.toString('hex')), expected);
});

t.test('random 3-way splits (seeded)', async (t) => {
  let seed = 12345;
  const rnd = (n: number): number => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed % n;
  };
  let bad = 0;
  for (let k = 0; k < 500; k++) {
    const a = 1 + rnd(stream.length - 2);
    const b = a + 1 + rnd(stream.length - a - 1);
    const got = feed([stream.subarray(0, a), stream.subarray(a, b), stream.subarray(b)]).map((x) => x.toString('hex'));
    if (JSON.stringify(got) !== JSON.stringify(expected)) bad++;
  }
  t.equal(bad, 0);
});

t.test('views handed out are unchanged after more chunks arrive (copy-safety)', async (t) => {
  // Split inside the second message so the framer both hands out views and assembles partial messages.
  for (const cut of [5, 19, op.length + 3, op.length + 19, stream.length - 10]) {
    const f = new MessageFramer();
    const first = f.push(Buffer.from(stream.subarray(0, cut)));
    const snapshot = first.map((b) => b.toString('hex'));
    const rest: Buffer[] = [];
    // Feed the remainder in small chunks, then garbage-free duplicates of the stream to churn buffers.
    for (let i = cut; i < stream.length; i += 7) rest.push(...f.push(Buffer.from(stream.subarray(i, Math.min(i + 7, stream.length)))));
    rest.push(...f.push(Buffer.from(stream)));
    t.same(first.map((b) => b.toString('hex')), snapshot, `cut ${cut}: earlier views unchanged`);
    t.equal(first.length + rest.length, expected.length * 2, `cut ${cut}: message count`);
  }
});

t.test('the framer never writes into the caller’s chunks', async (t) => {
  const copy = Buffer.from(stream);
  const chunks = [copy.subarray(0, 30), copy.subarray(30, 31), copy.subarray(31)];
  feed(chunks);
  t.equal(copy.toString('hex'), stream.toString('hex'));
});

function headerError(fn: () => unknown): { code: number; subcode: number; data: string } | string {
  try {
    fn();
    return 'no error';
  } catch (e) {
    return e instanceof BgpError ? { code: e.code, subcode: e.subcode, data: e.data.toString('hex') } : `other: ${String(e)}`;
  }
}

t.test('RFC 4271 6.1: length 4096 accepted, 4097 → 1/2 data 0x1001 as soon as the header arrives', async (t) => {
  t.equal(feed([big]).length, 1);
  const hdr4097 = w.notification(6, 3, Buffer.alloc(4097 - 21)).subarray(0, 19);
  const f = new MessageFramer();
  t.same(f.push(hdr4097.subarray(0, 18)), [], 'incomplete header: nothing yet');
  t.same(headerError(() => f.push(hdr4097.subarray(18, 19))), { code: 1, subcode: 2, data: '1001' });
  t.same(headerError(() => f.push(ka)), { code: 1, subcode: 2, data: '1001' }, 'failed framer keeps failing');
});

t.test('RFC 8654: 65535 accepted after maxLength is raised; 4096 max before', async (t) => {
  const huge = w.notification(6, 3, Buffer.alloc(65535 - 21, 1));
  t.equal(huge.length, 65535);
  t.same(headerError(() => feed([huge])), { code: 1, subcode: 2, data: 'ffff' });
  const got = feed([huge.subarray(0, 1000), huge.subarray(1000), ka], 65535);
  t.equal(got.length, 2);
  t.equal(got[0]?.length, 65535);
  // 65536 cannot be expressed in the 2-octet Length field; the largest value is 65535.
  t.throws(() => {
    new MessageFramer().maxLength = 65536;
  }, RangeError);
  t.throws(() => {
    new MessageFramer().maxLength = 4095;
  }, RangeError);
});

t.test('RFC 8654 4: an OPEN longer than 4096 is rejected even with extended message', async (t) => {
  const hdr = Buffer.concat([Buffer.alloc(16, 0xff), w.u16(5000), w.u8(1)]);
  const f = new MessageFramer();
  f.maxLength = 65535;
  t.same(headerError(() => f.push(hdr)), { code: 1, subcode: 2, data: '1388' });
});

t.test('header errors: bad marker 1/1, length 18 → 1/2 0x0012, type 9 → 1/3 0x09, KEEPALIVE length 20 → 1/2', async (t) => {
  const badMarker = Buffer.from(ka);
  badMarker[3] = 0;
  t.same(headerError(() => new MessageFramer().push(badMarker)), { code: 1, subcode: 1, data: '' });
  const len18 = Buffer.concat([Buffer.alloc(16, 0xff), w.u16(18), w.u8(4)]);
  t.same(headerError(() => new MessageFramer().push(len18)), { code: 1, subcode: 2, data: '0012' });
  const type9 = Buffer.concat([Buffer.alloc(16, 0xff), w.u16(19), w.u8(9)]);
  t.same(headerError(() => new MessageFramer().push(type9)), { code: 1, subcode: 3, data: '09' });
  const ka20 = Buffer.concat([Buffer.alloc(16, 0xff), w.u16(20), w.u8(4)]);
  t.same(headerError(() => new MessageFramer().push(ka20)), { code: 1, subcode: 2, data: '0014' });
  // An error after good messages in the same chunk: the good ones are lost with the session anyway, but the error is exact.
  t.same(headerError(() => new MessageFramer().push(Buffer.concat([ka, badMarker]))), { code: 1, subcode: 1, data: '' });
});

t.test('empty chunks are harmless', async (t) => {
  const f = new MessageFramer();
  t.same(f.push(Buffer.alloc(0)), []);
  t.equal(f.push(ka).length, 1);
  t.same(f.push(Buffer.alloc(0)), []);
});

t.test('property: any chunking of a random valid stream yields the same messages', async (t) => {
  const msgArb = fc.oneof(
    fc.constant(w.keepalive()),
    fc.uint8Array({ maxLength: 300 }).map((d) => w.notification(6, 3, Buffer.from(d))),
    fc.tuple(fc.integer({ min: 0, max: 0xffff }), fc.integer({ min: 0, max: 255 })).map(([afi, safi]) => w.routeRefresh(afi, 0, safi)),
    fc.uint8Array({ minLength: 4, maxLength: 200 }).map((d) => w.message(2, Buffer.from(d))),
  );
  fc.assert(
    fc.property(fc.array(msgArb, { minLength: 1, maxLength: 12 }), fc.array(fc.integer({ min: 1, max: 5000 }), { maxLength: 30 }), (msgs, cuts) => {
      const s = Buffer.concat(msgs);
      const points = [...new Set(cuts.map((c) => c % s.length))].filter((c) => c > 0).sort((a, b) => a - b);
      const chunks: Buffer[] = [];
      let prev = 0;
      for (const c of [...points, s.length]) {
        chunks.push(Buffer.from(s.subarray(prev, c)));
        prev = c;
      }
      const got = feed(chunks).map((b) => b.toString('hex'));
      return JSON.stringify(got) === JSON.stringify(msgs.map((m) => m.toString('hex')));
    }),
    { numRuns: 500 },
  );
  t.pass('500 random streams and chunkings agree');
});
