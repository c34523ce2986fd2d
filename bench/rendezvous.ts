/**
 * `node bench/rendezvous.ts` — the cost of the rendezvous choice (src/controller/rendezvous.ts) for 10,000 VIPs ×
 * 200 eligible nodes, against the candidate it was chosen over: sha256 of "vip\nnode" via node:crypto, first 8
 * octets as the weight. Prints figures; asserts nothing. VIPS / NODES / N override the sizes.
 */
import { hash } from 'node:crypto';
import { chooseNodes } from '../src/controller/rendezvous.ts';

const VIPS = Number(process.env.VIPS ?? 10_000);
const NODES = Number(process.env.NODES ?? 200);
const N = Number(process.env.N ?? 8);
const vips = Array.from({ length: VIPS }, (_, i) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`);
const nodes = Array.from({ length: NODES }, (_, i) => `worker-${String(i).padStart(4, '0')}.example.net`);

/** The rejected candidate: sha256 per pair, top N by the first 8 octets. */
function chooseBySha256(vip: string, eligible: readonly string[], n: number): string[] {
  const weighted = eligible.map((node) => ({ node, w: hash('sha256', `${vip}\n${node}`, 'buffer').readBigUInt64BE(0) }));
  weighted.sort((a, b) => (a.w === b.w ? (a.node < b.node ? -1 : 1) : a.w > b.w ? -1 : 1));
  return weighted.slice(0, n).map((x) => x.node);
}

function run(name: string, choose: (vip: string, eligible: readonly string[], n: number) => string[], vipCount: number): void {
  let sink = 0;
  for (const v of vips.slice(0, 100)) sink += choose(v, nodes, N).length; // warm-up
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (const v of vips.slice(0, vipCount)) sink += choose(v, nodes, N).length;
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const scale = VIPS / vipCount;
  console.log(
    `${name.padEnd(34)} ${vipCount} VIPs × ${NODES} nodes, N=${N}: ${ms.toFixed(0)} ms wall, ${((cpu.user + cpu.system) / 1000).toFixed(0)} ms CPU` +
      (scale !== 1 ? ` (×${scale} → ~${((ms * scale) / 1000).toFixed(1)} s for ${VIPS})` : '') +
      ` — ${((ms * 1e6) / (vipCount * NODES)).toFixed(0)} ns per pair (${sink} choices)`,
  );
}

console.log(`node ${process.version}, load average ${(await import('node:os')).loadavg().map((x) => x.toFixed(1)).join(' ')}`);
for (let i = 0; i < 3; i++) run('fnv1a64 + fmix64 (chooseNodes)', chooseNodes, VIPS);
run('sha256 (node:crypto), rejected', chooseBySha256, Math.min(VIPS, 1000));
