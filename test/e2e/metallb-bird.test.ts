// End to end, MetalLB migration (docs/metallb-migration.md, issue 32 item 4): the realistic MetalLB configuration
// (test/fixtures/metallb/realistic.yaml) through `herald migrate metallb`, its pools and advertisements read back as
// Herald reads the objects (src/crd/objects.ts), one `herald run` and a real BIRD 2. BIRD gets what MetalLB's
// configuration means: the prod pool's address as a /32 with the aliases' values (65000:666 and the large 65000:1:2),
// the lab pool's address as the /28 aggregate (listed in allowedPrefixes, as the page says), and an address in no
// pool not at all.
import t from 'tap';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { birdAvailable, freePort } from '../helpers/bird.ts';
import { node, service, slice } from '../helpers/k8s-objects.ts';
import { missingPrerequisite } from '../helpers/prereq.ts';
import { readObject } from '../../src/crd/objects.ts';
import { inputObjects, migrateMetalLB } from '../../src/migrate/metallb.ts';
import { loopbackBlock, manifestsDir, pathsFor, protoName, startBird, startHerald, waitHeraldUp, withLogs } from './harness.ts';

const FIXTURE = join(import.meta.dirname, '..', 'fixtures', 'metallb', 'realistic.yaml');

if (!missingPrerequisite({ bird2: birdAvailable() })) {
  t.setTimeout(200000);
  t.test("MetalLB's configuration, migrated, announces to BIRD what it meant", { timeout: 180_000 }, async (t) => {
    const m = migrateMetalLB(inputObjects(parseAllDocuments(readFileSync(FIXTURE, 'utf8')).map((d) => d.toJS() as unknown)));
    const items = (kind: 'IPAddressPool' | 'BGPAdvertisement') =>
      m.objects.filter((o) => o.kind === kind).map((o) => {
        const r = readObject(kind, o);
        if (!r.ok) throw new Error(JSON.stringify(r.issues));
        // The harness names its one peer "bird": the advertisements' peers (tor-a) are MetalLB's routers.
        const { peers: _peers, ...item } = r.item as Record<string, unknown>;
        return item;
      });
    const pools = items('IPAddressPool');
    const advertisements = items('BGPAdvertisement');
    t.equal(pools.length, 2);
    t.equal(advertisements.length, 2);
    const block = loopbackBlock();
    const me = { name: 'node-a', ip: `${block}1` };
    const birdIp = `${block}100`;
    const birdPort = await freePort(birdIp);
    const { manifests, put } = manifestsDir(t, 'manifests');
    put('nodes.yaml', [node(me.name)]);
    const svc = (name: string, ip: string) => [service(name, { etp: 'Cluster', lbIPs: [ip] }), slice(`${name}-1`, name, [['10.2.0.1', me.name, { ready: true }]])];
    put('services.yaml', [...svc('shop', '198.51.100.5'), ...svc('lab', '203.0.113.15'), ...svc('stray', '192.0.2.77')]);
    const bird = await startBird({ ip: birdIp, port: birdPort, birdAs: 65100, heraldAs: 65000, nodes: [me] });
    t.teardown(() => bird.stop());
    const h = await startHerald({
      node: me,
      heraldAs: 65000,
      bird: { ip: birdIp, port: birdPort, as: 65100 },
      source: { manifests },
      config: { pools, advertisements, allowedPrefixes: ['203.0.113.0/28'], compatibility: { metallbAnnotations: true } },
    });
    t.teardown(() => h.proc.stop(5000));
    await waitHeraldUp(h);
    const A = protoName(me.name);
    const want = async () => (await pathsFor(bird, '198.51.100.5/32')).length > 0 && (await pathsFor(bird, '203.0.113.0/28')).length > 0;
    await withLogs(() => bird.waitFor(async () => (await want()) || undefined, 'both routes in BIRD', 60_000), [h], [me.name]);
    const routes = await bird.routes('all table master4');
    const prod = routes.find((r) => r.prefix === '198.51.100.5/32' && r.protocol === A);
    t.same(prod?.communities, ['65000:666'], 'the no-transit alias as its value');
    t.same(prod?.largeCommunities, ['65000:1:2'], 'the large region-eu alias as a large community');
    const lab = routes.find((r) => r.prefix === '203.0.113.0/28' && r.protocol === A);
    t.ok(lab, 'the lab address as its /28 aggregate');
    t.same(lab?.communities, [], 'the lab advertisement sets no community');
    t.same(routes.filter((r) => r.prefix.startsWith('192.0.2.77') || r.prefix === '203.0.113.15/32').map((r) => r.prefix), [], 'an address in no pool, and the lab address as a /32: none');
  });
}
