// Issue 19, end to end: `herald run` watching the fake apiserver (the real client-node informers), peering with one
// real BIRD 2. An EndpointSlice with `endpoints: [null]` used to throw in the desired-routes step, be retried
// forever, and freeze its Service's decision: the VIP stayed announced in BIRD after its only real endpoint went
// unready. Now the bad slice is quarantined (treated as absent, named with its reason in herald status, /readyz and
// a metric), every other decision goes on, and the VIP is withdrawn when the real endpoint goes unready.
import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { birdAvailable, freePort } from '../helpers/bird.ts';
import { FakeApiServer } from '../helpers/fake-apiserver.ts';
import { node, service, slice } from '../helpers/k8s-objects.ts';
import { adminJson, loopbackBlock, pathsFor, protoName, startBird, startHerald, startKubeProxies, waitHeraldUp, withLogs, writeKubeconfig } from './harness.ts';
import { missingPrerequisite } from '../helpers/prereq.ts';

const VIP = '198.51.100.20';
const OTHER = '198.51.100.21';
const HERALD_AS = 65000;
const BIRD_AS = 65100;

if (!missingPrerequisite({ bird2: birdAvailable() })) {
  t.test('endpoints: [null] is quarantined; the VIP is withdrawn when the real endpoint goes unready; other Services go on', { timeout: 180_000 }, async (t) => {
    const block = loopbackBlock();
    const me = { name: 'node-a', ip: `${block}1` };
    const birdIp = `${block}100`;
    const birdPort = await freePort(birdIp);
    const dir = mkdtempSync(join(tmpdir(), 'herald-e2e-quarantine-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));

    const api = new FakeApiServer();
    await api.start();
    t.teardown(() => api.stop());
    api.upsert('nodes', node(me.name));
    const kp = await startKubeProxies([me.ip]); // kube-proxy's /healthz and the Services' health check port
    t.teardown(() => kp.close());
    const local = (name: string, vip: string) => {
      const s = service(name, { etp: 'Local', lbIPs: [vip] });
      s.spec!.healthCheckNodePort = kp.port;
      return s;
    };
    api.upsert('services', local('web', VIP));
    api.upsert('endpointslices', slice('web-1', 'web', [['10.1.0.1', me.name, { ready: true }]]), 'discovery.k8s.io');
    api.upsert('services', local('other', OTHER));
    api.upsert('endpointslices', slice('other-1', 'other', [['10.1.0.2', me.name, { ready: true }]]), 'discovery.k8s.io');
    const kubeconfig = writeKubeconfig(join(dir, 'kubeconfig.yaml'), api.url);

    const bird = await startBird({ ip: birdIp, port: birdPort, birdAs: BIRD_AS, heraldAs: HERALD_AS, nodes: [me] });
    t.teardown(() => bird.stop());
    const h = await startHerald({ node: me, heraldAs: HERALD_AS, bird: { ip: birdIp, port: birdPort, as: BIRD_AS }, source: { kubernetes: { kubeconfig } }, kubeProxyPort: kp.port, config: { allowedPrefixes: [`${VIP}/32`, `${OTHER}/32`] } });
    t.teardown(() => h.proc.stop(5000));
    await waitHeraldUp(h);
    const A = protoName(me.name);
    const announced = async (prefix: string, want: boolean, what: string) => {
      await withLogs(() => bird.waitFor(async () => ((await pathsFor(bird, prefix)).includes(A) === want) || undefined, what, 60_000), [h], [me.name]);
      t.pass(what);
    };
    await announced(`${VIP}/32`, true, 'VIP announced with its ready local endpoint');
    await announced(`${OTHER}/32`, true, 'the other VIP announced');

    // a second slice of the Service with a null endpoint
    api.upsert('endpointslices', { ...slice('web-2', 'web', []), endpoints: [null] }, 'discovery.k8s.io');
    type Status = { quarantined?: { kind: string; name: string; reason: string }[] };
    const status = await withLogs(
      () => bird.waitFor(async () => {
        const s = (await adminJson(h.adminPort, '/api/v1/status')) as Status | undefined;
        return s?.quarantined?.length ? s : undefined;
      }, 'the slice in quarantine', 30_000),
      [h],
      [me.name],
    );
    t.match(status.quarantined, [{ kind: 'EndpointSlice', name: 'default/web-2', reason: 'endpoints[0]: expected object, got null (its endpoints count as not ready)' }], 'herald status names it and why');
    const ready = (await adminJson(h.adminPort, '/readyz')) as { ok: boolean; quarantined?: string[] } | undefined;
    t.same(ready, { ok: true, reasons: [], quarantined: ['EndpointSlice default/web-2: endpoints[0]: expected object, got null (its endpoints count as not ready)'] }, '/readyz lists it and stays ready');
    const metrics = await (await fetch(`http://127.0.0.1:${h.adminPort}/metrics`)).text();
    t.match(metrics, /herald_quarantined_objects\{kind="EndpointSlice"\} 1/, 'the metric counts it');
    t.match(h.proc.stdout, /"kind":"EndpointSlice","name":"default\/web-2","reason":"endpoints\[0\]: expected object, got null.*"msg":"object quarantined/, 'the log names it');
    t.same(await pathsFor(bird, `${VIP}/32`), [A], 'the VIP stays: its real endpoint is ready');

    // the only real endpoint goes unready: withdrawn (the decision is not frozen)
    api.upsert('endpointslices', slice('web-1', 'web', [['10.1.0.1', me.name, { ready: false }]]), 'discovery.k8s.io');
    await announced(`${VIP}/32`, false, 'VIP withdrawn once its only real endpoint is unready');
    // every other decision went on meanwhile
    api.upsert('endpointslices', slice('other-1', 'other', [['10.1.0.2', me.name, { ready: false }]]), 'discovery.k8s.io');
    await announced(`${OTHER}/32`, false, 'the other Service follows its endpoints too');
    api.upsert('endpointslices', slice('other-1', 'other', [['10.1.0.2', me.name, { ready: true }]]), 'discovery.k8s.io');
    await announced(`${OTHER}/32`, true, 'and comes back');

    // fixed: out of quarantine, and ready again: announced
    api.remove('endpointslices', 'default', 'web-2', 'discovery.k8s.io');
    api.upsert('endpointslices', slice('web-1', 'web', [['10.1.0.1', me.name, { ready: true }]]), 'discovery.k8s.io');
    await announced(`${VIP}/32`, true, 'announced again');
    const after = (await adminJson(h.adminPort, '/api/v1/status')) as Status | undefined;
    t.equal(after?.quarantined, undefined, 'nothing quarantined any more');
  });
}
