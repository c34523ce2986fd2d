// Writes docs/config.schema.json, docs/configuration.md and the CRDs (deploy/kubernetes/crds/, the chart's crds/)
// from src/config/schema.ts and src/crd/kinds.ts.
// Usage: npx node scripts/gen-config-docs.ts   (test/src/crd/docs.test.ts checks they are current)
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { generatedConfigDocs } from '../src/crd/docs.ts';

const root = join(import.meta.dirname, '..');
for (const [path, text] of Object.entries(generatedConfigDocs())) {
  mkdirSync(dirname(join(root, path)), { recursive: true });
  writeFileSync(join(root, path), text);
  process.stdout.write(`wrote ${path}\n`);
}
