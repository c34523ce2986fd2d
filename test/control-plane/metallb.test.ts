// The control-plane tier, MetalLB migration (docs/metallb-migration.md, issue 32 item 4): what `herald migrate
// metallb` writes for the realistic MetalLB configuration (test/fixtures/metallb/realistic.yaml) is accepted by a real
// kube-apiserver with Herald's CRDs, strict field validation and their CEL rules, object by object; a Herald object
// the converter could never write (a MetalLB duration left as text) is refused there with the field named.
import t from 'tap';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { loopbackBlock } from '../e2e/harness.ts';
import { HERALD_API_VERSION, HERALD_PLURALS } from '../../src/k8s/herald-kinds.ts';
import type { HeraldKind, HeraldObject } from '../../src/k8s/herald-kinds.ts';
import { inputObjects, migrateMetalLB } from '../../src/migrate/metallb.ts';
import { controlPlaneTier, startCluster, until } from './harness.ts';

const NS = 'herald-system';
const FIXTURE = join(import.meta.dirname, '..', 'fixtures', 'metallb', 'realistic.yaml');

controlPlaneTier(t, "herald migrate metallb's objects are accepted by the real apiserver (CRDs, CEL)", 240_000, async (t) => {
  const m = migrateMetalLB(inputObjects(parseAllDocuments(readFileSync(FIXTURE, 'utf8')).map((d) => d.toJS() as unknown)));
  t.equal(m.objects.length, 6, 'the fixture gives 6 objects');
  const cp = await startCluster(t, { host: `${loopbackBlock()}201`, controllers: ['serviceaccount'] });
  const post = (o: HeraldObject) =>
    until(`${o.kind}/${o.metadata?.name} answered`, async () => {
      const a = await cp.admin.request('POST', `/apis/${HERALD_API_VERSION}/namespaces/${NS}/${HERALD_PLURALS[o.kind as HeraldKind]}?fieldValidation=Strict`, o);
      return a.status === 404 || a.status === 503 ? undefined : a;
    }, 30_000);
  for (const o of m.objects) {
    const r = await post(o);
    t.equal(r.status, 201, `${o.kind}/${o.metadata?.name}: accepted (${r.status === 201 ? 'created' : JSON.stringify(r.body?.message)})`);
  }
  const raw: HeraldObject = { apiVersion: HERALD_API_VERSION, kind: 'BGPPeer', metadata: { name: 'raw', namespace: NS }, spec: { peerAddress: '192.0.2.9', peerASN: 65001, holdTime: '90s' } };
  const r = await post(raw);
  t.ok(r.status === 422 || r.status === 400, `a MetalLB duration copied as is is refused (${r.status})`);
  t.match(JSON.stringify(r.body?.message ?? ''), /spec\.holdTime/);
});
