// The session's UPDATE pump under back-pressure: a 2 MB table, written corked in 64 KiB flushes past the socket's
// 16 KiB high-water mark, to a loopback peer that stops reading for a second as the session comes up, must arrive
// whole: every prefix exactly once, End-of-RIB after the last one. The peer frames and counts NLRI itself (RFC 4271
// §4.3 layout), sharing no code with the encoder. (Loopback kernel buffers absorb several MB here, so the pump's own
// 1 MiB queue bound is not reached by this test.)
import t from 'tap';
import net from 'node:net';
import { Speaker } from '../../../bgp/speaker.ts';
import type { Route } from '../../../bgp/rib/route.ts';
import { capability, keepalive, open, param, u32 } from '../../helpers/wire.ts';

const N = 400_000; // about 2 MB of 4096-octet UPDATEs
const BASE = 0x0a000000; // 10.0.0.0

t.setTimeout(120_000);

t.test('a 400,000-route table reaches a peer that pauses reading, each prefix once, then End-of-RIB', async (t) => {
  const seen = new Uint8Array(N);
  let announced = 0;
  let duplicates = 0;
  let outside = 0;
  let eorAfter = -1;
  let resumed = false;
  let done: (() => void) | undefined;
  const finished = new Promise<void>((resolve) => (done = resolve));
  let sock: net.Socket | undefined;
  const server = net.createServer((s) => {
    sock = s;
    s.on('error', () => undefined);
    let pending = Buffer.alloc(0);
    s.on('data', (chunk: Buffer) => {
      const buf = pending.length > 0 ? Buffer.concat([pending, chunk]) : chunk;
      let off = 0;
      while (buf.length - off >= 19) {
        const len = buf.readUInt16BE(off + 16);
        if (buf.length - off < len) break;
        const type = buf[off + 18];
        if (type === 1) {
          s.write(Buffer.concat([open({ as: 65000, holdTime: 90, id: '10.9.9.9', params: [param(2, capability(1, [0, 1, 0, 1])), param(2, capability(65, u32(65000)))] }), keepalive()]));
          // stop reading for a while as the session comes up: the kernel buffers stay small and the sender's queue fills
          s.pause();
          setTimeout(() => {
            resumed = true;
            s.resume();
          }, 1000);
        } else if (type === 2) {
          const wl = buf.readUInt16BE(off + 19);
          const al = buf.readUInt16BE(off + 21 + wl);
          const start = off + 23 + wl + al;
          if (wl === 0 && al === 0 && len === 23) {
            eorAfter = announced;
            done?.();
          }
          for (let i = start; i < off + len; ) {
            const plen = buf[i]!;
            const v = buf.readUInt32BE(i + 1) >>> 0;
            const idx = v - BASE;
            if (plen !== 32 || idx < 0 || idx >= N) outside++;
            else {
              if (seen[idx] !== 0) duplicates++;
              seen[idx] = 1;
            }
            announced++;
            i += 1 + ((plen + 7) >> 3);
          }
        }
        off += len;
      }
      pending = Buffer.from(buf.subarray(off));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.61', resolve));
  const port = (server.address() as net.AddressInfo).port;
  const speaker = new Speaker({ localAs: 65001, bgpIdentifier: '10.254.61.1' });
  t.teardown(async () => {
    await speaker.stop({ mode: 'departure', waitTimeSec: 0 });
    sock?.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  await speaker.ready();
  const routes: Route[] = new Array(N);
  for (let i = 0; i < N; i++) {
    const v = BASE + i;
    routes[i] = { prefix: `${v >>> 24}.${(v >>> 16) & 255}.${(v >>> 8) & 255}.${v & 255}/32`, family: 'ipv4-unicast' };
  }
  speaker.setRoutes(routes);
  speaker.markInitialSyncDone();
  speaker.addPeer({ name: 'slow', address: '127.0.0.61', port, peerAs: 65000, localAddress: '127.0.0.62', families: ['ipv4-unicast'], connectRetryTimeSec: 1 });
  await finished;
  t.ok(resumed, 'the peer paused reading before the End-of-RIB arrived');
  t.equal(outside, 0, 'no prefix outside the table');
  t.equal(duplicates, 0, 'no prefix twice');
  t.equal(announced, N, 'every prefix announced');
  t.equal(eorAfter, N, 'End-of-RIB after the last prefix');
  t.equal(seen.indexOf(0), -1, 'no prefix missing');
});
