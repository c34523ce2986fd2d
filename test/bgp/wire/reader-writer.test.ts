/** ByteReader bounds checks (the caller's BgpError on overrun), uint32At, and ByteWriter growth, reserve and backfill. */
import t from 'tap';
import fc from 'fast-check';
import { BgpError } from '../../../bgp/errors.ts';
import { ByteReader, uint32At } from '../../../bgp/wire/reader.ts';
import { ByteWriter } from '../../../bgp/wire/writer.ts';

const overrun = (): BgpError => BgpError.malformedAttributeList('overrun');

t.test('reader reads big-endian fields and views', async (t) => {
  const buf = Buffer.from('0102030405060708090a0b', 'hex');
  const r = new ByteReader(buf, overrun);
  t.equal(r.u8(), 0x01);
  t.equal(r.u16(), 0x0203);
  t.equal(r.u32(), 0x04050607);
  t.equal(r.offset, 7);
  t.equal(r.remaining, 4);
  t.equal(r.peekU8(), 0x08);
  const v = r.bytes(2);
  t.equal(v.toString('hex'), '0809');
  t.equal(v.buffer, buf.buffer, 'bytes() is a view, not a copy');
  t.equal(r.rest().toString('hex'), '0a0b');
  t.ok(r.atEnd);
});

t.test('u32 is unsigned', async (t) => {
  t.equal(new ByteReader(Buffer.from('ffffffff', 'hex'), overrun).u32(), 4294967295);
});

t.test('every overrun throws the caller-chosen BgpError', async (t) => {
  const mk = () => new ByteReader(Buffer.from('010203', 'hex'), overrun);
  for (const [name, fn] of [
    ['u32', (r: ByteReader) => r.u32()],
    ['bytes(4)', (r: ByteReader) => r.bytes(4)],
    ['skip(4)', (r: ByteReader) => r.skip(4)],
    ['subReader(4)', (r: ByteReader) => r.subReader(4)],
    ['bytes(-1)', (r: ByteReader) => r.bytes(-1)],
    ['ensure(4)', (r: ByteReader) => r.ensure(4)],
  ] as const) {
    const r = mk();
    try {
      fn(r);
      t.fail(`${name} did not throw`);
    } catch (e) {
      t.ok(e instanceof BgpError && e.code === 3 && e.subcode === 1, `${name} → 3/1`);
    }
    t.equal(r.offset, 0, `${name}: position unchanged after a failed read`);
  }
  const r = mk();
  r.skip(3);
  t.throws(() => r.u8(), BgpError);
  t.throws(() => r.u16(), BgpError);
  t.throws(() => r.peekU8(), BgpError);
});

t.test('subReader is bounded and can use its own error', async (t) => {
  const r = new ByteReader(Buffer.from('0102030405', 'hex'), overrun);
  r.u8();
  const sub = r.subReader(2, () => BgpError.openUnspecific('inner'));
  t.equal(r.offset, 3, 'parent consumed the sub-range');
  t.equal(sub.u16(), 0x0203);
  try {
    sub.u8();
    t.fail('no throw');
  } catch (e) {
    t.ok(e instanceof BgpError && e.code === 2 && e.subcode === 0, 'sub-reader uses its own factory');
  }
  t.equal(r.u16(), 0x0405);
});

t.test('writer grows, reserves and backfills', async (t) => {
  const w = new ByteWriter(1);
  const at = w.reserve(2);
  w.u8(1).u16(0x0203).u32(0x04050607);
  for (let i = 0; i < 1000; i++) w.u8(i & 0xff);
  w.setU16(at, w.length);
  t.equal(w.length, 1009);
  const out = w.toBuffer();
  t.equal(out.subarray(0, 9).toString('hex'), '03f1010203' + '04050607');
  t.equal(out[1008], 999 & 0xff);
  w.setU8(2, 0xee).setU32(3, 0xffffffff);
  t.equal(w.view().subarray(0, 7).toString('hex'), '03f1eeffffffff');
  t.equal(out[2], 1, 'toBuffer() is a copy');
});

t.test('writer rejects out-of-range values with RangeError (a local bug, not a BgpError)', async (t) => {
  const w = new ByteWriter();
  t.throws(() => w.u8(256), RangeError);
  t.throws(() => w.u16(-1), RangeError);
  t.throws(() => w.u32(2 ** 32), RangeError);
  t.throws(() => w.u8(1.5), RangeError);
  t.throws(() => w.setU16(0, 1), RangeError, 'backfill outside written data');
});

t.test('uint32At reads what Buffer.readUInt32BE reads, at every offset of any buffer', async (t) => {
  t.equal(uint32At(Buffer.from('ffffffff', 'hex'), 0), 0xffffffff, 'the top bit gives no negative number');
  t.equal(uint32At(Buffer.from('0080000001', 'hex'), 1), 0x80000001);
  fc.assert(
    fc.property(fc.uint8Array({ minLength: 4, maxLength: 64 }), fc.nat(), (bytes, n) => {
      const buf = Buffer.from(bytes);
      const p = n % (buf.length - 3);
      return uint32At(buf, p) === buf.readUInt32BE(p);
    }),
  );
});
