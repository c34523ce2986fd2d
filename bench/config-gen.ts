/**
 * bench/config-gen.ts — writes a Herald configuration with N static IPv4 `/32` routes (`node bench/config-gen.ts FILE`).
 *
 * The file is what an operator with a big static table writes: one peer, then `routes:` as a block sequence of
 * `- prefix: 10.x.y.z/32` mappings (10.0.0.0 upwards). Environment: N (default 100000), PEER (BIRD's address,
 * default 127.0.0.2), PEER_PORT (default 1179), PEER_AS (default 65001), LOCAL_AS (default 65000), ADMIN_PORT
 * (default 0 = any), STATE_DIR (default a path under the OS temp dir). Prints the path and size. Asserts nothing.
 */
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The text of a config with `n` routes 10.0.0.0/32, 10.0.0.1/32, ... (see the module doc for the rest). */
export function bigConfigText(n: number, o: { peer?: string; peerPort?: number; peerAs?: number; localAs?: number; adminPort?: number; stateDir?: string; localAddress?: string } = {}): string {
  const lines = [
    'bgp:',
    `  localAs: ${o.localAs ?? 65000}`,
    '  routerId: 10.255.0.1',
    'admin:',
    '  address: 127.0.0.1',
    `  port: ${o.adminPort ?? 0}`,
    `stateDir: ${o.stateDir ?? join(tmpdir(), 'herald-bench-state')}`,
    'peers:',
    '  - name: bird',
    `    address: ${o.peer ?? '127.0.0.2'}`,
    `    port: ${o.peerPort ?? 1179}`,
    `    peerAs: ${o.peerAs ?? 65001}`,
    ...(o.localAddress !== undefined ? [`    localAddress: ${o.localAddress}`] : []),
    'routes:',
  ];
  const base = 0x0a000000;
  for (let i = 0; i < n; i++) {
    const v = (base + i) >>> 0;
    lines.push(`  - prefix: ${v >>> 24}.${(v >>> 16) & 255}.${(v >>> 8) & 255}.${v & 255}/32`);
  }
  return lines.join('\n') + '\n';
}

if (import.meta.main) {
  const file = process.argv[2] ?? join(tmpdir(), 'herald-100k.yaml');
  const text = bigConfigText(Number(process.env.N ?? 100_000), {
    ...(process.env.PEER !== undefined ? { peer: process.env.PEER } : {}),
    ...(process.env.PEER_PORT !== undefined ? { peerPort: Number(process.env.PEER_PORT) } : {}),
    ...(process.env.PEER_AS !== undefined ? { peerAs: Number(process.env.PEER_AS) } : {}),
    ...(process.env.LOCAL_AS !== undefined ? { localAs: Number(process.env.LOCAL_AS) } : {}),
    ...(process.env.ADMIN_PORT !== undefined ? { adminPort: Number(process.env.ADMIN_PORT) } : {}),
    ...(process.env.STATE_DIR !== undefined ? { stateDir: process.env.STATE_DIR } : {}),
    ...(process.env.LOCAL_ADDRESS !== undefined ? { localAddress: process.env.LOCAL_ADDRESS } : {}),
  });
  writeFileSync(file, text);
  process.stdout.write(`${file}: ${(text.length / 1048576).toFixed(2)} MiB\n`);
}
