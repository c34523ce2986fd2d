// End to end, traffic steering (issue 18; docs/traffic-steering.md) with FRR 8.4 as the router: five `herald run`
// processes (node-a … node-e on their own 127.x node IPs, AS 65000) read ONE manifest directory and peer over eBGP
// with ONE FRR bgpd (AS 65100). FRR's `show bgp ipv4 unicast PREFIX json` shows, per path:
// - weighting: endpoints: the link bandwidth community of each node = its ready local endpoints × 1 Mbit/s, and
//   scaling the pods changes it;
// - locality (Cluster policy): the node with the endpoint wins the best-path choice, the others carry MED +100 and one
//   prepended AS;
// - maxNodesPerVip 2: each VIP has exactly two paths, from the two nodes every Herald names in its admin API; removing
//   one Node moves only the VIPs that node held.
import t from 'tap';
import { freePort } from '../helpers/bird.ts';
import { Frr, frrAvailable } from '../helpers/frr.ts';
import { node, service, slice } from '../helpers/k8s-objects.ts';
import type { EpSpec } from '../helpers/k8s-objects.ts';
import { missingPrerequisite } from '../helpers/prereq.ts';
import { adminJson, loopbackBlock, startHerald, waitHeraldUp, withLogs, manifestsDir } from './harness.ts';
import type { HeraldNode, NodeSpec } from './harness.ts';

const HERALD_AS = 65000;
const FRR_AS = 65100;
const WEIGHTED = '198.51.100.10';
const LOCALITY = '198.51.100.20';
const BOUNDED = ['198.51.100.30', '198.51.100.31', '198.51.100.32', '198.51.100.33', '198.51.100.34', '198.51.100.35'];

/** One path of `show bgp ipv4 unicast PREFIX json`, the fields read here. */
interface FrrPathJson {
  aspath?: { string?: string };
  metric?: number;
  med?: number;
  extendedCommunity?: { string?: string };
  bestpath?: { overall?: boolean };
  peer?: { peerId?: string };
}

async function paths(frr: Frr, prefix: string): Promise<FrrPathJson[]> {
  const j = (await frr.vtyshJson(`show bgp ipv4 unicast ${prefix}/32 json`)) as { paths?: FrrPathJson[] };
  return j.paths ?? [];
}

/** The nodes (by name) giving FRR a path for `prefix`, sorted. */
function peersOf(list: FrrPathJson[], nodes: readonly NodeSpec[]): string[] {
  return list.map((p) => nodes.find((n) => n.ip === p.peer?.peerId)?.name ?? `?${p.peer?.peerId}`).sort();
}

if (!missingPrerequisite({ frr: frrAvailable() })) {
  // Five Heralds start on a possibly loaded 2-CPU machine.
  t.setTimeout(400_000);
  t.test('five herald nodes and FRR: link bandwidth per node, locality in the best path, at most 2 nodes per VIP', { timeout: 380_000 }, async (t) => {
    const block = loopbackBlock();
    const nodes: NodeSpec[] = ['a', 'b', 'c', 'd', 'e'].map((x, i) => ({ name: `node-${x}`, ip: `${block}${i + 1}` }));
    const names = nodes.map((n) => n.name);
    const frrIp = `${block}100`;
    const frrPort = await freePort(frrIp);
    const { manifests, put } = manifestsDir(t, 'steering');
    const labelled = (name: string, steering: string, o: Parameters<typeof service>[1]) => {
      const s = service(name, o);
      s.metadata = { ...s.metadata, labels: { steering } };
      return s;
    };
    const on = (nodeName: string, count: number, base: number): EpSpec[] => Array.from({ length: count }, (_, i): EpSpec => [`10.${base}.0.${i + 1}`, nodeName]);
    const weighted = (a: number, b: number) => [labelled('weighted', 'weighted', { etp: 'Local', lbIPs: [WEIGHTED], clusterIPs: ['10.96.0.10'] }), slice('weighted-1', 'weighted', [...on('node-a', a, 1), ...on('node-b', b, 2)])];
    put('nodes.yaml', nodes.map((n) => node(n.name)));
    put('weighted.yaml', weighted(3, 1));
    put('locality.yaml', [labelled('locality', 'locality', { etp: 'Cluster', lbIPs: [LOCALITY], clusterIPs: ['10.96.0.20'] }), slice('locality-1', 'locality', on('node-c', 2, 3))]);
    put(
      'bounded.yaml',
      BOUNDED.flatMap((vip, i) => [
        labelled(`bounded-${i}`, 'bounded', { etp: 'Cluster', lbIPs: [vip], clusterIPs: [`10.96.0.${30 + i}`] }),
        slice(`bounded-${i}-1`, `bounded-${i}`, names.map((n, k): EpSpec => [`10.4.${i}.${k + 1}`, n])),
      ]),
    );

    const [first, ...rest] = nodes as [NodeSpec, ...NodeSpec[]];
    const neighbor = (n: NodeSpec) => [` neighbor ${n.ip} remote-as ${HERALD_AS}`, ` neighbor ${n.ip} passive`, ` neighbor ${n.ip} ebgp-multihop 255`, ` neighbor ${n.ip} update-source ${frrIp}`].join('\n');
    const frr = await Frr.start({ local: frrIp, port: frrPort, as: FRR_AS, neighbor: first.ip, neighborAs: HERALD_AS, ipv6: false, extra: [...rest.map(neighbor), ' maximum-paths 8'].join('\n') });
    t.teardown(() => frr.stop());

    const advertisements = [
      { name: 'weighted', addressKinds: ['loadBalancer'], serviceSelector: { matchLabels: { steering: 'weighted' } }, weighting: 'endpoints', bandwidthPerEndpoint: '1mbps' },
      { name: 'locality', addressKinds: ['loadBalancer'], serviceSelector: { matchLabels: { steering: 'locality' } }, locality: { preferLocal: true, med: 100, prependOthers: 1 } },
      { name: 'bounded', addressKinds: ['loadBalancer'], serviceSelector: { matchLabels: { steering: 'bounded' } }, maxNodesPerVip: 2 },
    ];
    const heralds: HeraldNode[] = [];
    t.teardown(async () => {
      await Promise.all(heralds.map((h) => h.proc.stop(15_000)));
    });
    for (const [i, n] of nodes.entries()) {
      heralds.push(
        await startHerald({
          node: n,
          heraldAs: HERALD_AS,
          bird: { ip: frrIp, port: frrPort, as: FRR_AS },
          source: { manifests },
          // FRR refuses a 127/8 NEXT_HOP (martian, docs/routes.md "Interop notes"): one routable next hop per node.
          peer: { nextHop: `203.0.113.${i + 1}` },
          config: { advertisements, attributeChangeInterval: 1, allowedPrefixes: ['198.51.100.0/24'] },
        }),
      );
    }
    for (const h of heralds) await waitHeraldUp(h, 240_000);
    const wait = <T>(what: string, fn: () => Promise<T | undefined>, ms = 90_000) => withLogs(() => frr.proc.waitFor(fn, what, ms, 500), heralds, names);

    // --- weighting: LB:65000:<endpoints × 125000 bytes/s> from each node with endpoints.
    const lbByNode = async (): Promise<Record<string, string>> => {
      const list = (await paths(frr, WEIGHTED)).map((p): [string, string] => [peersOf([p], nodes)[0] ?? '?', p.extendedCommunity?.string ?? '']);
      return Object.fromEntries(list.sort(([a], [b]) => (a < b ? -1 : 1))); // FRR lists paths in no fixed order
    };
    let seen = '';
    const lbIs = (want: object) => async () => ((seen = JSON.stringify(await lbByNode())) === JSON.stringify(want) ? true : undefined);
    const want1 = { 'node-a': 'LB:65000:375000 (3.000 Mbps)', 'node-b': 'LB:65000:125000 (1.000 Mbps)' };
    await wait('weighted VIP from node-a (3 endpoints) and node-b (1)', lbIs(want1)).catch((err: Error) => {
      throw new Error(`${err.message.slice(0, 200)}… FRR has ${seen}`, { cause: err });
    });
    t.strictSame(await lbByNode(), want1, 'each node sends its endpoint count as link bandwidth');
    const aView = (await adminJson(heralds[0]!.adminPort, '/api/v1/services/default/weighted')) as { vips?: { address: string; reasons: { code: string; message: string }[] }[] };
    t.match(aView.vips?.find((v) => v.address === WEIGHTED)?.reasons.find((r) => r.code === 'Weighted')?.message, /^weight 3 of 4 endpoints/, 'the admin API gives the reason');
    // Scaling: node-b goes to 4 pods, node-a to 1.
    put('weighted.yaml', weighted(1, 4));
    const want2 = { 'node-a': 'LB:65000:125000 (1.000 Mbps)', 'node-b': 'LB:65000:500000 (4.000 Mbps)' };
    await wait('new link bandwidth after scaling', lbIs(want2)).catch((err: Error) => {
      throw new Error(`${err.message.slice(0, 200)}… FRR has ${seen}`, { cause: err });
    });
    t.strictSame(await lbByNode(), want2, 'scaling the pods changes the link bandwidth');

    // --- locality: five paths; node-c's (the endpoints') is best, the others MED 100 and AS path 65000 65000.
    await wait('locality VIP from all five nodes', async () => ((await paths(frr, LOCALITY)).length === 5 ? true : undefined));
    const loc = await paths(frr, LOCALITY);
    const best = loc.filter((p) => p.bestpath?.overall === true);
    t.strictSame(peersOf(best, nodes), ['node-c'], 'the node with the local endpoints wins the best-path choice');
    t.equal(best[0]?.aspath?.string, '65000');
    t.equal(best[0]?.metric ?? best[0]?.med ?? 0, 0);
    for (const p of loc.filter((x) => x !== best[0])) {
      t.equal(p.aspath?.string, '65000 65000', `${peersOf([p], nodes)[0]}: one prepended AS`);
      t.equal(p.metric ?? p.med, 100, `${peersOf([p], nodes)[0]}: MED 100`);
    }

    // --- maxNodesPerVip 2: two paths per VIP, from the nodes every Herald names.
    const choices = async (vip: string, among: readonly HeraldNode[]): Promise<Set<string>> => {
      const seen = new Set<string>();
      for (const h of among) {
        const v = (await adminJson(h.adminPort, `/api/v1/services/default/bounded-${BOUNDED.indexOf(vip)}`)) as { vips?: { address: string; attributes?: { choice?: { nodes: string[] } }[] }[] } | undefined;
        const chosen = v?.vips?.find((x) => x.address === vip)?.attributes?.[0]?.choice?.nodes;
        seen.add(chosen === undefined ? 'none' : JSON.stringify([...chosen].sort()));
      }
      return seen;
    };
    const table = async (): Promise<Map<string, string[]>> => new Map(await Promise.all(BOUNDED.map(async (vip) => [vip, peersOf(await paths(frr, vip), nodes)] as [string, string[]])));
    await wait('every bounded VIP with two paths', async () => ([...(await table()).values()].every((p) => p.length === 2) ? true : undefined));
    await new Promise((r) => setTimeout(r, 2000)); // no third path arrives late
    const before = await table();
    for (const vip of BOUNDED) {
      t.equal(before.get(vip)?.length, 2, `${vip}: exactly two paths (${before.get(vip)?.join(', ')})`);
      const seen = await choices(vip, heralds);
      t.strictSame([...seen], [JSON.stringify(before.get(vip))], `${vip}: all five nodes name the nodes FRR has paths from`);
    }
    // Remove the Node object of a node holding at least one VIP: only its VIPs move.
    const gone = [...before.values()][0]?.[0] as string;
    put('nodes.yaml', nodes.filter((n) => n.name !== gone).map((n) => node(n.name)));
    const held = BOUNDED.filter((vip) => before.get(vip)?.includes(gone));
    await wait(`${gone}'s VIPs moved`, async () => {
      const now = await table();
      return [...now.values()].every((p) => p.length === 2 && !p.includes(gone)) ? true : undefined;
    });
    await new Promise((r) => setTimeout(r, 2000));
    const after = await table();
    for (const vip of BOUNDED) {
      const b = before.get(vip) ?? [];
      const a = after.get(vip) ?? [];
      if (held.includes(vip)) t.ok(b.filter((n) => n !== gone).every((n) => a.includes(n)) && a.length === 2, `${vip}: held by ${gone}, now ${a.join(', ')} (the other node kept)`);
      else t.strictSame(a, b, `${vip}: not held by ${gone}, unchanged`);
    }
    t.ok(held.length > 0, `${held.length} VIP(s) held by ${gone}`);
  });
}
