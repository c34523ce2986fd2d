// Writes docs/config.schema.json and docs/configuration.md from src/config/schema.ts.
// Usage: npx node scripts/gen-config-docs.ts   (test/src/config/docs.test.ts checks they are current)
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generatedConfigDocs } from '../src/config/docs.ts';

const root = join(import.meta.dirname, '..');
for (const [path, text] of Object.entries(generatedConfigDocs())) {
  writeFileSync(join(root, path), text);
  process.stdout.write(`wrote ${path}\n`);
}
