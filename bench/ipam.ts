/**
 * `npm run bench:ipam` — LoadBalancer IPAM at scale (prints figures; not a test).
 *
 * 10,000 new LoadBalancer Services in the fake apiserver (test/helpers/fake-apiserver.ts, spoken to through Herald's
 * Kubernetes client, src/k8s/client.ts): the time for the elected allocator to plan and write every address (one RV-conditioned
 * merge patch of the status subresource per Service), the number of API writes, and the steady-state cost of a pass
 * when nothing changes (what the leader spends every resync).
 */
import { KubeClient } from '../src/k8s/client.ts';
import { FakeApiServer } from '../test/helpers/fake-apiserver.ts';
import { service } from '../test/helpers/k8s-objects.ts';
import { planAllocations } from '../src/ipam/allocator.ts';
import { AllocatorController } from '../src/ipam/controller.ts';
import { KubernetesServiceStatusWriter } from '../src/status/service-status.ts';
import { parsePool } from '../src/ipam/pool.ts';
import type { Service } from '../src/k8s/types.ts';

const N = Number(process.env.SERVICES ?? 10000);
const api = new FakeApiServer();
await api.start();
try {
  for (let i = 0; i < N; i++) api.upsert('services', service(`svc-${i}`, { etp: 'Cluster' }));
  const kc = new KubeClient({ server: api.url });
  const pools = [parsePool({ name: 'big', addresses: ['10.200.0.0/16'] })];
  const services = () => api.list('services') as Service[];

  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  const plan = planAllocations(services(), pools);
  const planMs = performance.now() - t0;
  const writesBefore = api.count((r) => r.method === 'PATCH');
  const ctl = new AllocatorController({ services, pools: () => pools, isLeader: () => true, writer: new KubernetesServiceStatusWriter(kc) });
  await ctl.reconcile();
  const totalMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const writes = api.count((r) => r.method === 'PATCH') - writesBefore;
  const assigned = services().filter((s) => s.status?.loadBalancer?.ingress?.[0]?.ip).length;

  // Steady state: passes with nothing to do.
  const passes = 5;
  const s0 = performance.now();
  const scpu0 = process.cpuUsage();
  for (let i = 0; i < passes; i++) await ctl.reconcile();
  const steadyMs = (performance.now() - s0) / passes;
  const scpu = process.cpuUsage(scpu0);

  console.log(`IPAM: ${N} new LoadBalancer Services, pool 10.200.0.0/16`);
  console.log(`  plan (pure):                      ${planMs.toFixed(0)} ms (${plan.patches.length} addresses)`);
  console.log(`  plan + all status writes:         ${(totalMs / 1000).toFixed(2)} s, ${writes} API writes (${ctl.stats.writeErrors} failed), ${assigned} Services with an address`);
  console.log(`  CPU (client and fake apiserver share this process): ${((cpu.user + cpu.system) / 1000).toFixed(0)} ms`);
  console.log(`  steady-state pass (no changes):   ${steadyMs.toFixed(0)} ms wall, ${((scpu.user + scpu.system) / 1000 / passes).toFixed(0)} ms CPU, 0 writes = ${api.count((r) => r.method === 'PATCH') - writesBefore - writes}`);
  console.log(`  → at one pass per 30 s resync: ${((scpu.user + scpu.system) / 1000 / passes / 30000 * 100).toFixed(2)} % of one core`);
} finally {
  await api.stop();
}
