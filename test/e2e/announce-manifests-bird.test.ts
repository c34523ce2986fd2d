// End to end with the standalone source: three `herald run` processes (node-a, node-b, node-c on their own 127.x
// node IPs) read Kubernetes objects from ONE manifest directory (`source: {manifests: DIR}`) and peer over eBGP
// with ONE real BIRD 2. Editing the YAML files step by step must move the VIP's paths in BIRD: Local policy from the
// nodes with a ready endpoint only, an endpoint going unready withdraws that node, a broken file keeps the last good
// objects (nothing removed), Cluster policy announces from all nodes, a deleted file withdraws everywhere.
import t from 'tap';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { birdAvailable, freePort } from '../helpers/bird.ts';
import { node, service, slice } from '../helpers/k8s-objects.ts';
import type { EpSpec } from '../helpers/k8s-objects.ts';
import { loopbackBlock, pathsFor, protoName, sleep, waitHeraldUp, withLogs, startBird, startHerald, manifestsDir } from './harness.ts';
import type { HeraldNode, NodeSpec } from './harness.ts';
import { missingPrerequisite } from '../helpers/prereq.ts';

const VIP = '198.51.100.20';
const PREFIX = `${VIP}/32`;
const HERALD_AS = 65000;
const BIRD_AS = 65100;

if (!missingPrerequisite({ bird2: birdAvailable() })) {
  // Longer than the suite's default file timeout: three Heralds start on a possibly loaded 2-CPU machine. The root
  // test tells the tap runner (spawn.js honours the child's setTimeout message).
  t.setTimeout(270000);
  t.test('three herald nodes, one manifest directory, one BIRD: edits move the paths', { timeout: 240_000 }, async (t) => {
    const block = loopbackBlock();
    const nodes: NodeSpec[] = [
      { name: 'node-a', ip: `${block}1` },
      { name: 'node-b', ip: `${block}2` },
      { name: 'node-c', ip: `${block}3` },
    ];
    const [A, B, C] = nodes.map((n) => protoName(n.name)) as [string, string, string];
    const names = nodes.map((n) => n.name);
    const birdIp = `${block}100`;
    const birdPort = await freePort(birdIp);
    const { manifests, put } = manifestsDir(t, 'manifests');

    const eps = (bReady: boolean): EpSpec[] => [
      ['10.2.0.1', 'node-a', { ready: true }],
      ['10.2.0.2', 'node-b', { ready: bReady }],
      ['10.2.0.3', 'node-c', { ready: false }],
    ];
    const web = (etp: 'Local' | 'Cluster', bReady: boolean) => [service('web', { etp, lbIPs: [VIP] }), slice('web-1', 'web', eps(bReady))];
    put('nodes.yaml', nodes.map((n) => node(n.name)));
    put('web.yaml', web('Local', true));

    const bird = await startBird({ ip: birdIp, port: birdPort, birdAs: BIRD_AS, heraldAs: HERALD_AS, nodes });
    t.teardown(() => bird.stop());
    const heralds: HeraldNode[] = [];
    for (const n of nodes) {
      const h = await startHerald({ node: n, heraldAs: HERALD_AS, bird: { ip: birdIp, port: birdPort, as: BIRD_AS }, source: { manifests }, config: { allowedPrefixes: [PREFIX] } });
      t.teardown(() => h.proc.stop(5000));
      heralds.push(h);
    }
    const paths = () => pathsFor(bird, PREFIX);
    const waitPaths = async (want: string[], what: string, timeoutMs = 30_000) => {
      await withLogs(() => bird.waitFor(async () => (await paths()).join() === want.join() || undefined, `${what}: paths ${want.join(',') || '(none)'}`, timeoutMs), heralds, names);
      t.same(await paths(), want, what);
    };

    // 1. Sessions up; Local policy: node-a and node-b (ready endpoints), not node-c.
    for (const h of heralds) await waitHeraldUp(h);
    for (const p of [A, B, C]) await withLogs(() => bird.waitFor(async () => (await bird.protocol(p))?.bgpState === 'Established' || undefined, `${p} Established`, 40_000), heralds, names);
    await waitPaths([A, B], 'Local: ready endpoints on node-a and node-b');

    // 2. node-b's endpoint unready → withdrawn from node-b only.
    put('web.yaml', web('Local', false));
    await waitPaths([A], 'endpoint on node-b unready');

    // 3. A broken edit (YAML syntax error): the last good objects stay, nothing is removed.
    put('web.yaml', 'apiVersion: v1\nkind: Service\nmetadata: {name: web\n  namespace: default\n');
    for (const ms of [1500, 2500]) {
      await sleep(ms);
      t.same(await paths(), [A], `broken file: routes unchanged (after another ${ms} ms)`);
    }
    for (const h of heralds) t.ok(h.proc.alive, 'herald still running after a broken file');

    // 4. Fixed, with node-b ready again.
    put('web.yaml', web('Local', true));
    await waitPaths([A, B], 'fixed file, node-b ready again');

    // 5. Cluster policy: all three nodes.
    put('web.yaml', web('Cluster', true));
    await waitPaths([A, B, C], 'Cluster policy: all three nodes');

    // 6. node-c's Node object removed: node-c is no longer eligible.
    put('nodes.yaml', nodes.filter((n) => n.name !== 'node-c').map((n) => node(n.name)));
    await waitPaths([A, B], 'node-c Node object gone');

    // 7. The Service's file deleted: withdrawn everywhere.
    rmSync(join(manifests, 'web.yaml'));
    await waitPaths([], 'Service file deleted');
  });
}
