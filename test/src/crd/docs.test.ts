// The committed configuration reference and JSON Schema are generated from the zod schema and
// must be current (regenerate with: npx node scripts/gen-config-docs.ts).
import t from 'tap';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { generatedConfigDocs } from '../../../src/crd/docs.ts';

const ROOT = join(import.meta.dirname, '..', '..', '..');

t.test('docs/configuration.md, docs/config.schema.json, the chart\'s values.schema.json and the CRDs (kustomize and chart) are up to date', async (t) => {
  const files = generatedConfigDocs();
  t.equal(Object.keys(files).length, 14, 'two documents, the values schema, five CRDs twice, the CRDs\' kustomization');
  for (const [path, text] of Object.entries(files)) {
    const committed = readFileSync(join(ROOT, path), 'utf8');
    t.equal(committed, text, `${path} is current (run: npx node scripts/gen-config-docs.ts)`);
  }
});

t.test('the JSON Schema describes every top-level section and marks bgp required', async (t) => {
  const schema = JSON.parse(generatedConfigDocs()['docs/config.schema.json'] ?? '{}') as { properties: Record<string, unknown>; required: string[]; additionalProperties: boolean };
  for (const k of ['bgp', 'peers', 'routes', 'source', 'node', 'advertisements', 'healthChecks', 'kubeProxy', 'flapControl', 'pools', 'admin', 'stateDir']) t.ok(schema.properties[k], k);
  t.same(schema.required, ['bgp']);
  t.equal(schema.additionalProperties, false);
});
