// End to end, tenant input where the tenant also writes EndpointSlices (the standalone manifests source stands for a
// cluster that grants those writes; docs/security.md): `herald run` and one real BIRD 2. A tenant's health check
// aimed at the node network, through the address annotation or through endpoints that point there (loopback,
// link-local), and at 10,000,000 probes a second (issue 35 N8), never probes anything; its VIP fails closed with the
// reason. externalIPs of other people's addresses never reach BIRD while one inside allowedPrefixes does (the positive
// path of a check probing its own endpoint needs an address off loopback: test/src/health/specs.test.ts,
// test/e2e/health-bird.test.ts for kube-proxy's).
import t from 'tap';
import net from 'node:net';
import { birdAvailable, freePort } from '../helpers/bird.ts';
import { node, service, slice } from '../helpers/k8s-objects.ts';
import { adminJson, loopbackBlock, protoName, sleep, startBird, startHerald, waitHeraldUp, withLogs, manifestsDir } from './harness.ts';
import { missingPrerequisite } from '../helpers/prereq.ts';

const HERALD_AS = 65000;
const BIRD_AS = 65100;

/** A TCP listener that counts the connections it is sent (a host of the node network a tenant aims at). */
async function counter(host: string): Promise<{ port: number; connections: () => number; close: () => Promise<void> }> {
  let n = 0;
  const server = net.createServer((s) => {
    n++;
    s.destroy();
  });
  const port = await freePort(host);
  await new Promise<void>((resolve) => server.listen(port, host, resolve));
  return { port, connections: () => n, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

if (!missingPrerequisite({ bird2: birdAvailable() })) {
  t.test('tenant health checks probe nothing of the node network; foreign externalIPs never reach BIRD', { timeout: 180_000 }, async (t) => {
    const block = loopbackBlock();
    const me = { name: 'node-a', ip: `${block}1` };
    const A = protoName(me.name);
    const birdIp = `${block}100`;
    const birdPort = await freePort(birdIp);
    const { manifests, put } = manifestsDir(t, 'tenant');

    // The target on the node network.
    const target = await counter(`${block}77`);
    t.teardown(() => target.close());
    const checked = (name: string, lbIP: string, annotations: Record<string, string>, endpoint: string) => {
      const s = service(name, { lbIPs: [lbIP], clusterIPs: [`10.96.0.${lbIP.split('.')[3]}`] });
      s.metadata = { ...s.metadata, annotations: { 'herald.io/health-check-type': 'tcp', ...annotations } };
      return [s, slice(`${name}-1`, name, [[endpoint, me.name, { ready: true }]])];
    };
    put('node.yaml', [node(me.name)]);
    put('services.yaml', [
      // The probe: an address of the Service's choosing, five times a second.
      ...checked('by-address', '198.51.100.10', { 'herald.io/health-check-port': String(target.port), 'herald.io/health-check-address': `${block}77`, 'herald.io/health-check-interval': '0.2' }, '10.244.0.10'),
      // The same through a hand-written EndpointSlice: the endpoint is the target.
      ...checked('by-endpoint', '198.51.100.11', { 'herald.io/health-check-port': String(target.port) }, `${block}77`),
      ...checked('metadata', '198.51.100.12', { 'herald.io/health-check-port': '80' }, '169.254.169.254'),
      // Issue 35 N8: ~540 probes a second.
      ...checked('fast', '198.51.100.13', { 'herald.io/health-check-port': String(target.port), 'herald.io/health-check-interval': '0.0000001' }, '10.244.0.13'),
      // externalIPs: other people's addresses and one inside allowedPrefixes.
      service('ext', { type: 'ClusterIP', externalIPs: ['8.8.8.8', '198.51.100.50'], clusterIPs: ['10.96.0.50'] }),
      slice('ext-1', 'ext', [['10.244.0.50', me.name, { ready: true }]]),
    ]);

    const bird = await startBird({ ip: birdIp, port: birdPort, birdAs: BIRD_AS, heraldAs: HERALD_AS, nodes: [me] });
    t.teardown(() => bird.stop());
    const h = await startHerald({
      node: me,
      heraldAs: HERALD_AS,
      bird: { ip: birdIp, port: birdPort, as: BIRD_AS },
      source: { manifests },
      config: { allowedPrefixes: ['198.51.100.0/24'], advertisements: [{ name: 'all', addressKinds: ['loadBalancer', 'externalIP'] }] },
    });
    t.teardown(() => h.proc.stop(5000));
    await waitHeraldUp(h);
    const prefixes = async () => (await bird.routes('table master4')).filter((r) => r.protocol === A).map((r) => r.prefix);
    await withLogs(() => bird.waitFor(async () => {
      const p = await prefixes();
      return p.includes('198.51.100.50/32') ? true : undefined;
    }, 'the allowed externalIP in BIRD', 60_000), [h], [me.name]);
    t.pass('the externalIP inside allowedPrefixes is announced');
    await sleep(5000); // 25 probes at interval 0.2, had any been sent

    t.equal(target.connections(), 0, `no connection to ${block}77:${target.port}`);
    const p = await prefixes();
    for (const x of ['198.51.100.10/32', '198.51.100.11/32', '198.51.100.12/32', '198.51.100.13/32', '8.8.8.8/32']) t.notOk(p.includes(x), `${x} not in BIRD`);
    type SvcView = { service: string; vips: { address: string; reasons: { code: string; message: string }[] }[] };
    const views = (await adminJson(h.adminPort, '/api/v1/services')) as SvcView[];
    const why = (svc: string) => JSON.stringify(views.find((s) => s.service === `default/${svc}`)?.vips.find((v) => v.address.startsWith('198.51.100.'))?.reasons);
    t.match(why('by-address'), /herald\.io\/health-check-address.*is not accepted/, 'the address annotation is refused');
    t.match(why('by-endpoint'), /no local endpoint Herald may probe/, 'an endpoint on the node network is not probed');
    t.match(why('metadata'), /no local endpoint Herald may probe: \\"169\.254\.169\.254\\"/, 'nor the metadata address');
    t.match(why('fast'), /herald\.io\/health-check-interval.*must be at least 1 s/, 'the floor');
    const health = (await adminJson(h.adminPort, '/api/v1/health')) as { target: string; state: string }[];
    t.ok(health.length >= 4, `${health.length} checks listed`);
    t.notOk(health.some((c) => c.target.includes(`${block}77`) || c.target.includes('169.254.')), 'no check targets the node network');
    t.ok(h.proc.alive);
  });
}
