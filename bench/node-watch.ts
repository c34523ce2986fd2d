/**
 * `node --expose-gc bench/node-watch.ts` — what watching every Node costs a Herald (docs/decisions.md "Node watch"):
 * the heap the object store (src/k8s/object-store.ts, trimmed at ingestion by src/k8s/trim.ts) holds for 50 and
 * 5,000 Nodes as a kubelet keeps them (test/helpers/k8s-objects.ts `servedNode`), and the JSON a full list carries.
 * Prints figures; asserts nothing. SIZES="50,5000" overrides the sizes.
 */
import { ObjectStore } from '../src/k8s/object-store.ts';
import { node, servedNode } from '../test/helpers/k8s-objects.ts';

const SIZES = (process.env.SIZES ?? '50,5000').split(',').map(Number);
const gc = globalThis.gc;
if (gc === undefined) throw new Error('run with --expose-gc: node --expose-gc bench/node-watch.ts');

function heap(): number {
  gc?.();
  gc?.();
  return process.memoryUsage().heapUsed;
}

console.log(`node ${process.version}`);
for (const n of SIZES) {
  const store = new ObjectStore();
  let listBytes = 0;
  const before = heap();
  for (let i = 0; i < n; i++) {
    // Parsed from JSON as the informer does: no structure shared with the generator.
    const text = JSON.stringify(servedNode(node(`worker-${String(i).padStart(5, '0')}`, { labels: { rack: `rack-${i % 40}` } }), `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`));
    listBytes += text.length;
    store.apply('Node', JSON.parse(text));
  }
  const held = heap() - before;
  console.log(`${String(n).padStart(5)} Nodes: ${(held / 1024 / 1024).toFixed(2)} MiB held trimmed (${((held / n) / 1024).toFixed(2)} KiB per Node); a full list is ${(listBytes / 1024 / 1024).toFixed(1)} MiB of JSON (${(listBytes / n / 1024).toFixed(1)} KiB per Node, read in pages of 500)`);
  if ([...store.nodes()].length !== n) throw new Error('store lost Nodes');
}
