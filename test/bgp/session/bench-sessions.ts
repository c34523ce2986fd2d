// Benchmark (not a test; belongs in bench/ — kept here because bench/ is not the session engineer's directory).
// N Herald sessions against N passive Herald sessions on one BgpListener in one process, then the UPDATE pump.
// Run: node --expose-gc test/bgp/session/bench-sessions.ts [N]
import { Session } from '../../../bgp/session/session.ts';
import { BgpListener } from '../../../bgp/session/listener.ts';
import { encodeMessage } from '../../../bgp/codec/message.ts';
import { asSequence, nextHop, origin, update } from '../../../bgp/codec/build.ts';
const N = Number(process.argv[2] ?? 200);
const listener = new BgpListener({ address: '127.200.0.1', port: 0 });
await listener.listen();
const port = listener.boundPort!;
globalThis.gc?.();
const heap0 = process.memoryUsage().heapUsed;
const t0 = performance.now();
const actives: Session[] = [];
const passives: Session[] = [];
let up = 0;
const allUp = new Promise<void>((resolve) => {
  for (let i = 0; i < N; i++) {
    const addr = `127.201.${i >> 8}.${(i & 255)}`;
    const p = new Session({ name: `p${i}`, localAs: 65001, peerAs: 65002, bgpIdentifier: '10.0.0.1', remoteAddress: addr, holdTimeSec: 90, connectRetryTimeSec: 5, passive: true, families: ['ipv4-unicast'] });
    listener.register(addr, p);
    p.start();
    const a = new Session({ name: `a${i}`, localAs: 65002, peerAs: 65001, bgpIdentifier: `10.1.${i >> 8}.${(i & 255)}`, remoteAddress: '127.200.0.1', remotePort: port, localAddress: addr, holdTimeSec: 90, connectRetryTimeSec: 5, passive: false, families: ['ipv4-unicast'] });
    a.on('established', () => { if (++up === N) resolve(); });
    a.start();
    actives.push(a); passives.push(p);
  }
});
await allUp;
const t1 = performance.now();
globalThis.gc?.();
const heap1 = process.memoryUsage().heapUsed;
console.log(`${N} session pairs Established in ${(t1 - t0).toFixed(0)} ms; heap per session ≈ ${((heap1 - heap0) / (2 * N) / 1024).toFixed(1)} KiB`);
// pump: 100k UPDATEs of one /24 each... use packed UPDATEs: 100 prefixes each, 1000 messages = 100k prefixes
const M = 20000;
const msgs: Buffer[] = [];
const ctx = { fourOctetAs: true, extendedMessage: false, addPath: {} };
for (let i = 0; i < M; i++) {
  const nlri: string[] = [];
  for (let j = 0; j < 5; j++) nlri.push(`10.${(i * 5 + j) >> 16 & 255}.${(i * 5 + j) >> 8 & 255}.${(i * 5 + j) & 255}/32`);
  msgs.push(encodeMessage(update({ pathAttributes: [origin('IGP'), asSequence([65002]), nextHop('127.201.0.1')], nlri }), ctx));
}
let k = 0;
const sender = actives[0]!;
const receiver = passives[0]!;
let got = 0;
const done = new Promise<void>((resolve) => receiver.on('update', () => { if (++got === M) resolve(); }));
const t2 = performance.now();
sender.setTxSource({ nextMessage: () => (k < M ? msgs[k++] : undefined) });
sender.kickTx();
await done;
const t3 = performance.now();
console.log(`${M} UPDATEs (${M * 5} prefixes, ${msgs.reduce((s, m) => s + m.length, 0)} bytes) sent and decoded by the peer session in ${(t3 - t2).toFixed(0)} ms`);
await Promise.all([...actives, ...passives].map((s) => s.stop()));
await listener.close();
console.log(`rss ${(process.memoryUsage().rss / 1048576).toFixed(0)} MiB`);
