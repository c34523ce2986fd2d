/**
 * Arbitrary and corrupted input never makes the decoders throw: every problem becomes an error or note line
 * (fast-check; corrupted copies of real captures and dumps when the shared data is present).
 */
import t from 'tap';
import fc from 'fast-check';
import { join } from 'node:path';
import { readCapture } from '../../../tools/decode/capture.ts';
import { decodeMrt } from '../../../tools/decode/mrt.ts';
import { CollectingSink } from '../../../tools/decode/sink.ts';
import { decodeBgpStream, decodeCapture } from '../../../tools/decode/stream.ts';
import { KEEPALIVE, bgp4mpMessage, ethernet, ipv4Tcp, mrtRecord, pcapFile, pcapngFile, simpleUpdate } from './build.ts';
import { SHARED_BGP, SHARED_PRESENT, readMaybeGzip } from './shared.ts';
import { skipUnless } from '../../helpers/prereq.ts';

function noThrow(f: () => unknown): boolean {
  f();
  return true;
}

const update = simpleUpdate([65001], '192.0.2.1', ['10.0.0']);
const seeds = {
  pcap: pcapFile(1, [ethernet(ipv4Tcp({ seq: 1, syn: true, payload: Buffer.concat([update, KEEPALIVE]) }))]),
  pcapng: pcapngFile(1, [ethernet(ipv4Tcp({ seq: 1, payload: Buffer.concat([KEEPALIVE, update]) }))]),
  mrt: Buffer.concat([mrtRecord(16, 4, bgp4mpMessage(true, 1, 2, update)), mrtRecord(17, 1, bgp4mpMessage(false, 1, 2, KEEPALIVE), 1, 5)]),
};

/** Flips `flips` random bytes of `seed` (positions and values from fast-check). */
const corrupted = (seed: Buffer) =>
  fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 8 }).map((flips) => {
    const b = Buffer.from(seed);
    for (const [pos, v] of flips) b[pos % b.length] = v;
    return b;
  });

t.test('random bytes: captures, MRT and hex streams give lines, never exceptions', async (t) => {
  t.doesNotThrow(() => fc.assert(fc.property(fc.uint8Array({ maxLength: 600 }), (u) => {
    const b = Buffer.from(u);
    return noThrow(() => {
      decodeMrt(b, new CollectingSink());
      decodeBgpStream(b, new CollectingSink());
      Array.from(readCapture(b));
    });
  }), { numRuns: 300 }), '300 random inputs');
});

t.test('corrupted synthetic captures and dumps', async (t) => {
  for (const [name, seed] of Object.entries(seeds)) {
    t.doesNotThrow(() => fc.assert(fc.property(corrupted(seed), (b) => noThrow(() => (name === 'mrt' ? decodeMrt(b, new CollectingSink()) : decodeCapture(b, new CollectingSink())))), { numRuns: 300 }), `${name}: 300 corrupted copies`);
  }
});

t.test('corrupted real files', { skip: skipUnless({ [`shared data at ${SHARED_BGP}`]: SHARED_PRESENT }, 'the shared data folder sits beside the repository (../shared/data/bgp)') }, async (t) => {
  const files = ['pcap/tcpdump/bgp-4byte-asn.pcap', 'pcap/tcpdump/bgp-role.pcapng', 'mrt/mrtparse/quagga_rib', 'mrt/mrtparse/openbgpd_rib_table-v2', 'mrt/mrtparse/bird6_bgp', 'mrt/mrtparse/openbgpd_rib_table'];
  for (const f of files) {
    const seed = readMaybeGzip(join(SHARED_BGP, f));
    t.doesNotThrow(() => fc.assert(fc.property(corrupted(seed), (b) => noThrow(() => (f.startsWith('mrt') ? decodeMrt(b, new CollectingSink()) : decodeCapture(b, new CollectingSink())))), { numRuns: 150 }), `${f}: 150 corrupted copies`);
  }
});
