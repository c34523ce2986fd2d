// The control-plane tier, the allocator's leader election through the real coordination API: two `herald run` nodes
// with a pool compete for the Lease `herald-allocator` (herald-system); exactly one allocates. Its status writes carry
// the resourceVersion they were planned from and the real apiserver checks it: a write held back (by a pass-through
// proxy) while the Service changes is refused with 409 and redone from the fresh object. When the leader stops, it
// releases the Lease and the other node takes over and allocates.
import t from 'tap';
import { readFileSync, writeFileSync } from 'node:fs';
import { BlockList } from 'node:net';
import { freePort } from '../helpers/bird.ts';
import { ApiProxy } from '../helpers/control-plane.ts';
import type { AuditEvent } from '../helpers/control-plane.ts';
import { loopbackBlock, pathsFor, protoName, startBird, waitHeraldUp, withLogs } from '../e2e/harness.ts';
import type { HeraldNode, NodeSpec } from '../e2e/harness.ts';
import { BIRD_AS, HERALD_AS, controlPlaneTier, createNode, createPod, createService, heraldLog, nodeKubeconfig, setPodReady, startCluster, startHerald, until } from './harness.ts';

const POOL = '198.51.100.40/29';
const LEASE = '/apis/coordination.k8s.io/v1/namespaces/herald-system/leases/herald-allocator';

controlPlaneTier(t, 'leader election via the real Lease API; status writes checked by the real resourceVersion; takeover', 300_000, async (t) => {
  const block = loopbackBlock();
  // Two `herald run` doing everything (no herald controller): the one-process install's rights.
  const cp = await startCluster(t, { host: `${block}200`, standalone: true });
  const api = cp.admin;
  const proxy = await ApiProxy.start(cp);
  t.teardown(() => proxy.stop());
  const nodes: NodeSpec[] = ['a', 'b'].map((x, i) => ({ name: `node-${x}`, ip: `${block}${i + 1}` }));
  const names = nodes.map((n) => n.name);
  for (const n of nodes) await createNode(api, n.name, n.ip);
  await createPod(api, { name: 'web-node-a', nodeName: 'node-a', labels: { app: 'web' } });
  await setPodReady(api, { name: 'web-node-a', podIP: '10.244.1.10', hostIP: nodes[0]!.ip, ready: true });

  // Herald reaches the apiserver through the proxy (which only forwards, until told to hold a request).
  const viaProxy = async (node: string): Promise<string> => {
    const kubeconfig = await nodeKubeconfig(cp, node);
    const path = kubeconfig.replace(/\.kubeconfig$/, '-proxy.kubeconfig');
    writeFileSync(path, readFileSync(kubeconfig, 'utf8').replace(cp.server, proxy.url));
    return path;
  };
  const birdIp = `${block}100`;
  const birdPort = await freePort(birdIp);
  const bird = await startBird({ ip: birdIp, port: birdPort, birdAs: BIRD_AS, heraldAs: HERALD_AS, nodes });
  t.teardown(() => bird.stop());
  const heralds: HeraldNode[] = [];
  for (const n of nodes) heralds.push(await startHerald(t, { node: n, kubeconfig: await viaProxy(n.name), bird: { ip: birdIp, port: birdPort }, extra: { pools: [{ name: 'test', addresses: [POOL] }] } }));
  for (const h of heralds) await waitHeraldUp(h);

  const pool = new BlockList();
  pool.addSubnet('198.51.100.40', 29);
  const ingressOf = async (name: string): Promise<string | undefined> => (await api.must('GET', `/api/v1/namespaces/default/services/${name}`)).body.status?.loadBalancer?.ingress?.[0]?.ip;
  const leaderLogs = () => heralds.map((h) => heraldLog(h).filter((l) => l['msg'] === 'became the allocator leader').length);

  // 1. One Service needing an address: exactly one leader (the Lease holder) allocates it; both nodes announce it.
  await createService(api, { name: 'web', selector: { app: 'web' }, etp: 'Cluster' });
  const ip1 = await withLogs(() => until('web gets an address', () => ingressOf('web'), 90_000), heralds, names);
  t.ok(pool.check(ip1), `web got ${ip1} from the pool`);
  const lease = (await api.must('GET', LEASE)).body;
  const leader = names.indexOf(lease.spec.holderIdentity);
  t.ok(leader >= 0, `the Lease is held by a Herald node (${lease.spec.holderIdentity})`);
  t.equal(lease.spec.leaseDurationSeconds, 15, 'leaseDurationSeconds as client-go');
  t.match(lease.spec.renewTime, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/, 'renewTime is a MicroTime');
  t.same(leaderLogs(), names.map((_, i) => (i === leader ? 1 : 0)), 'only the holder became the allocator leader');
  const follower = 1 - leader;
  await withLogs(() => bird.waitFor(async () => (await pathsFor(bird, `${ip1}/32`)).join() === nodes.map((n) => protoName(n.name)).join() || undefined, `${ip1} from both nodes`, 60_000), heralds, names);

  // 2. The leader's write for a new Service is held at the proxy while the Service changes: the real apiserver refuses
  //    the stale resourceVersion with 409, and the leader writes again from the fresh object.
  proxy.hold((method, path) => method === 'PATCH' && path.startsWith('/api/v1/namespaces/default/services/web2/status'));
  await createService(api, { name: 'web2', selector: { app: 'web' }, etp: 'Cluster' });
  const held = await proxy.nextHeld(90_000);
  const planned = (await api.must('GET', '/api/v1/namespaces/default/services/web2')).body.metadata.resourceVersion as string;
  await api.must('PATCH', '/api/v1/namespaces/default/services/web2', { metadata: { labels: { changed: 'meanwhile' } } }, 'application/merge-patch+json');
  proxy.hold(undefined);
  held.release();
  const ip2 = await withLogs(() => until('web2 gets an address after the conflict', () => ingressOf('web2'), 90_000), heralds, names);
  t.ok(pool.check(ip2) && ip2 !== ip1, `web2 got ${ip2}, another pool address`);
  const herald = (e: AuditEvent) => e.user.username === 'system:serviceaccount:herald-system:herald';
  const writes = cp.audit().filter((e) => herald(e) && e.verb === 'patch' && e.objectRef?.resource === 'services' && e.objectRef.subresource === 'status' && e.stage === 'ResponseComplete');
  const web2 = writes.filter((e) => e.objectRef?.name === 'web2');
  t.match(
    web2.map((e) => ({ code: e.responseStatus?.code, rv: e.requestObject?.metadata?.resourceVersion })),
    [{ code: 409, rv: planned }, { code: 200 }],
    'the held write (planned from the old resourceVersion) got 409, the next one succeeded',
  );
  t.ok(
    writes.every((e) => typeof e.requestObject?.metadata?.resourceVersion === 'string'),
    `every status write carries a resourceVersion precondition (${writes.length} writes)`,
  );
  t.ok(
    heraldLog(heralds[leader]!).some((l) => l['msg'] === 'status write failed; retried on the next pass' && /409/.test(JSON.stringify(l))),
    'the leader logged the conflict',
  );

  // 3. The leader stops: it releases the Lease, the other node takes over and allocates the next Service.
  await heralds[leader]!.proc.stop(15_000);
  const taken = await until(
    'the follower holds the Lease',
    async () => {
      const l = (await api.must('GET', LEASE)).body;
      return l.spec.holderIdentity === names[follower] ? l : undefined;
    },
    60_000,
  );
  t.equal(taken.spec.leaseTransitions, (lease.spec.leaseTransitions ?? 0) + 1, 'one more Lease transition');
  await createService(api, { name: 'web3', selector: { app: 'web' }, etp: 'Cluster' });
  const ip3 = await withLogs(() => until('web3 gets an address from the new leader', () => ingressOf('web3'), 90_000), [heralds[follower]!], [names[follower]!]);
  t.ok(pool.check(ip3) && ![ip1, ip2].includes(ip3), `web3 got ${ip3}, a free pool address`);
  t.equal(leaderLogs()[follower], 1, 'the follower became the allocator leader');
  await withLogs(() => bird.waitFor(async () => (await pathsFor(bird, `${ip3}/32`)).join() === protoName(names[follower]!) || undefined, `${ip3} from the new leader's node`, 60_000), [heralds[follower]!], [names[follower]!]);
});
