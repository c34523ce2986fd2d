// End to end, bounded fan-out through the Kubernetes source (docs/traffic-steering.md "Bounded fan-out"): three
// `herald run` processes watch the fake apiserver and peer with ONE BIRD 2, with `maxNodesPerVip: 1`. Each Herald
// then watches every Node (not only its own), so all three make the same rendezvous choice: BIRD gets each VIP from
// exactly one node, the one every admin API names; when that Node goes NotReady in the apiserver, the others move
// the VIP to one node again, and the VIPs the node did not hold stay where they were. A second advertisement weighs a
// Local Service by its endpoints: BIRD shows each node's link bandwidth (`BGP.ext_community` "unknown 0x4" with the
// float32 bits), and scaling the pods changes it.
import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { birdAvailable, freePort } from '../helpers/bird.ts';
import { FakeApiServer } from '../helpers/fake-apiserver.ts';
import { node, service, slice } from '../helpers/k8s-objects.ts';
import type { EpSpec } from '../helpers/k8s-objects.ts';
import { missingPrerequisite } from '../helpers/prereq.ts';
import { adminJson, loopbackBlock, pathsFor, protoName, startBird, startHerald, startKubeProxies, waitHeraldUp, withLogs, writeKubeconfig } from './harness.ts';
import type { HeraldNode, NodeSpec } from './harness.ts';

const HERALD_AS = 65000;
const BIRD_AS = 65100;
const VIPS = ['198.51.100.50', '198.51.100.51', '198.51.100.52', '198.51.100.53'];
const WEIGHTED = '198.51.100.60';

/** The IEEE 754 single bits of `x` as an unsigned integer (how BIRD prints the link bandwidth value). */
function floatBits(x: number): number {
  const b = Buffer.alloc(4);
  b.writeFloatBE(x);
  return b.readUInt32BE(0);
}

if (!missingPrerequisite({ bird2: birdAvailable() })) {
  t.setTimeout(330_000);
  t.test('three herald nodes, fake apiserver, maxNodesPerVip 1 and weighting: one path per VIP, the same choice everywhere, link bandwidth per node', { timeout: 300_000 }, async (t) => {
    const block = loopbackBlock();
    const nodes: NodeSpec[] = ['a', 'b', 'c'].map((x, i) => ({ name: `node-${x}`, ip: `${block}${i + 1}` }));
    const names = nodes.map((n) => n.name);
    const byProto = new Map(nodes.map((n) => [protoName(n.name), n.name]));
    const birdIp = `${block}100`;
    const birdPort = await freePort(birdIp);
    const dir = mkdtempSync(join(tmpdir(), 'herald-e2e-steering-k8s-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));

    const api = new FakeApiServer();
    await api.start();
    t.teardown(() => api.stop());
    for (const n of nodes) api.upsert('nodes', node(n.name));
    VIPS.forEach((vip, i) => {
      api.upsert('services', service(`s${i}`, { etp: 'Cluster', lbIPs: [vip], clusterIPs: [`10.96.0.${50 + i}`], labels: { steering: 'bounded' } }));
      api.upsert('endpointslices', slice(`s${i}-1`, `s${i}`, names.map((n, k): EpSpec => [`10.5.${i}.${k + 1}`, n])), 'discovery.k8s.io');
    });
    const kp = await startKubeProxies(nodes.map((n) => n.ip));
    t.teardown(() => kp.close());
    const weighted = service('weighted', { etp: 'Local', lbIPs: [WEIGHTED], clusterIPs: ['10.96.0.60'], labels: { steering: 'weighted' } });
    weighted.spec!.healthCheckNodePort = kp.port;
    api.upsert('services', weighted);
    const weightedSlice = (a: number, b: number) => slice('weighted-1', 'weighted', [...Array.from({ length: a }, (_, k): EpSpec => [`10.6.0.${k + 1}`, 'node-a']), ...Array.from({ length: b }, (_, k): EpSpec => [`10.6.1.${k + 1}`, 'node-b'])]);
    api.upsert('endpointslices', weightedSlice(2, 1), 'discovery.k8s.io');
    const kubeconfig = writeKubeconfig(join(dir, 'kubeconfig.yaml'), api.url);

    const bird = await startBird({ ip: birdIp, port: birdPort, birdAs: BIRD_AS, heraldAs: HERALD_AS, nodes });
    t.teardown(() => bird.stop());
    const heralds: HeraldNode[] = [];
    for (const n of nodes) {
      const h = await startHerald({
        node: n,
        heraldAs: HERALD_AS,
        bird: { ip: birdIp, port: birdPort, as: BIRD_AS },
        source: { kubernetes: { kubeconfig } },
        kubeProxyPort: kp.port,
        config: {
          allowedPrefixes: ['198.51.100.0/24'],
          advertisements: [
            { name: 'bounded', addressKinds: ['loadBalancer'], serviceSelector: { matchLabels: { steering: 'bounded' } }, maxNodesPerVip: 1 },
            { name: 'weighted', addressKinds: ['loadBalancer'], serviceSelector: { matchLabels: { steering: 'weighted' } }, weighting: 'endpoints', bandwidthPerEndpoint: 1000 },
          ],
        },
      });
      t.teardown(() => h.proc.stop(5000));
      heralds.push(h);
    }
    for (const h of heralds) await waitHeraldUp(h);

    /** VIP → the nodes BIRD has a path from. */
    const table = async (): Promise<Map<string, string[]>> => {
      const out = new Map<string, string[]>();
      for (const vip of VIPS) out.set(vip, (await pathsFor(bird, `${vip}/32`)).map((p) => byProto.get(p) ?? p));
      return out;
    };
    /** VIP → the choice each Herald names (JSON of the sorted node list), from the admin API. */
    const choices = async (among: readonly HeraldNode[]): Promise<Map<string, Set<string>>> => {
      const out = new Map<string, Set<string>>(VIPS.map((v) => [v, new Set<string>()]));
      for (const h of among) {
        const list = (await adminJson(h.adminPort, '/api/v1/services')) as { vips: { address: string; attributes?: { choice?: { nodes: string[] } }[] }[] }[] | undefined;
        for (const s of list ?? []) for (const v of s.vips) out.get(v.address)?.add(JSON.stringify(v.attributes?.[0]?.choice?.nodes ?? null));
      }
      return out;
    };
    const settled = (want: (paths: string[]) => boolean, what: string) =>
      withLogs(() => bird.waitFor(async () => ([...(await table()).values()].every(want) ? true : undefined), what, 90_000), heralds, names);

    await settled((p) => p.length === 1, 'one path per VIP');
    const before = await table();
    const agreed = await choices(heralds);
    for (const vip of VIPS) {
      t.equal(before.get(vip)?.length, 1, `${vip}: one path (${before.get(vip)?.join(', ')})`);
      t.strictSame([...(agreed.get(vip) ?? [])], [JSON.stringify(before.get(vip))], `${vip}: every node names ${before.get(vip)?.join(', ')}`);
    }

    // Weighting: each node's path carries its endpoints × 1000 bytes/s; scaling changes it.
    const lb = async (): Promise<Record<string, string | undefined>> => {
      const routes = await bird.routes(`for ${WEIGHTED}/32 table master4`);
      return Object.fromEntries(routes.map((r) => [byProto.get(r.protocol) ?? r.protocol, r.attrs['BGP.ext_community']]).sort(([x], [y]) => ((x ?? '') < (y ?? '') ? -1 : 1)));
    };
    const lbIs = (want: Record<string, string>, what: string) =>
      withLogs(() => bird.waitFor(async () => (JSON.stringify(await lb()) === JSON.stringify(want) ? true : undefined), what, 90_000), heralds, names);
    const want1 = { 'node-a': `(unknown 0x4, ${HERALD_AS}, ${floatBits(2000)})`, 'node-b': `(unknown 0x4, ${HERALD_AS}, ${floatBits(1000)})` };
    await lbIs(want1, 'weighted VIP from node-a (2 endpoints) and node-b (1)');
    t.strictSame(await lb(), want1, 'BIRD shows each node its endpoint count as link bandwidth');
    api.upsert('endpointslices', weightedSlice(1, 3), 'discovery.k8s.io');
    const want2 = { 'node-a': `(unknown 0x4, ${HERALD_AS}, ${floatBits(1000)})`, 'node-b': `(unknown 0x4, ${HERALD_AS}, ${floatBits(3000)})` };
    await lbIs(want2, 'link bandwidth after scaling');
    t.strictSame(await lb(), want2, 'scaling the pods changes it');

    // The node holding the first VIP goes NotReady in the apiserver: its VIPs move, the others stay.
    const gone = before.get(VIPS[0] as string)?.[0] as string;
    api.upsert('nodes', node(gone, { ready: 'False' }));
    await settled((p) => p.length === 1 && !p.includes(gone), `${gone}'s VIPs moved to one other node`);
    const after = await table();
    for (const vip of VIPS) {
      if (before.get(vip)?.includes(gone)) t.not(after.get(vip)?.[0], gone, `${vip}: moved from ${gone} to ${after.get(vip)?.join(', ')}`);
      else t.strictSame(after.get(vip), before.get(vip), `${vip}: not held by ${gone}, unchanged`);
    }
    const others = heralds.filter((_, i) => nodes[i]?.name !== gone);
    const agreedAfter = await choices(others);
    for (const vip of VIPS) t.strictSame([...(agreedAfter.get(vip) ?? [])], [JSON.stringify(after.get(vip))], `${vip}: the remaining nodes agree`);
  });
}
