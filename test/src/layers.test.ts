// The layers of src/ (docs/architecture.md "Layers") as lint rules (eslint.config.js SRC_LAYERS): every folder of
// src/ has a place, an import that climbs up is refused by `npm run lint`, and the picture in the docs is the list.
import t from 'tap';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ESLint } from 'eslint';

const ROOT = join(import.meta.dirname, '..', '..');
// A path in a variable: eslint.config.js is plain JavaScript, without types.
const configPath = join(ROOT, 'eslint.config.js');
const { SRC_LAYERS: layers } = (await import(configPath)) as { SRC_LAYERS: Record<string, { may: string[]; why: string }> };

t.test('every folder of src/ has its place in SRC_LAYERS, and only those', async (t) => {
  const folders = readdirSync(join(ROOT, 'src'), { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name).sort();
  t.ok(folders.length >= 15, `src/ has its folders (${folders.length})`);
  t.same(Object.keys(layers).sort(), folders);
});

t.test('the layers are ordered: a folder may import only folders listed before it', async (t) => {
  const order = Object.keys(layers);
  for (const [folder, { may }] of Object.entries(layers)) {
    for (const m of may) t.ok(order.indexOf(m) < order.indexOf(folder), `${folder} → ${m} points down`);
  }
});

/** Lint one line of TypeScript as if it were a file of src/<folder>. */
async function lintAs(folder: string, code: string): Promise<string[]> {
  const eslint = new ESLint({ cwd: ROOT });
  const [r] = await eslint.lintText(code, { filePath: join(ROOT, 'src', folder, 'layer-probe.ts') });
  return (r?.messages ?? []).filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message);
}

t.test('an import that climbs up is refused, one that goes down is not', async (t) => {
  // Each refusal the layer rules exist for (issue 33): metrics and status no longer reach into the controller or IPAM.
  const up: [string, string][] = [
    ['metrics', "import { handlesVip } from '../controller/reasons.ts';\nexport const x = handlesVip;\n"],
    ['metrics', "import type { PoolUsage } from '../ipam/usage.ts';\nexport type X = PoolUsage;\n"],
    ['status', "import type { PoolUsage } from '../ipam/usage.ts';\nexport type X = PoolUsage;\n"],
    ['status', "import type { CandidateSet } from '../controller/controller.ts';\nexport type X = CandidateSet;\n"],
    ['ipam', "import { Daemon } from '../daemon/daemon.ts';\nexport const x = Daemon;\n"],
    ['config', "import { KINDS } from '../crd/kinds.ts';\nexport const x = KINDS;\n"],
    ['k8s', "import type { Config } from '../config/schema.ts';\nexport type X = Config;\n"],
    ['admin', "import type { Daemon } from '../daemon/daemon.ts';\nexport type X = Daemon;\n"],
    ['net', "import type { Service } from '../k8s/types.ts';\nexport type X = Service;\n"],
  ];
  for (const [folder, code] of up) {
    const msgs = await lintAs(folder, code);
    t.equal(msgs.length, 1, `src/${folder}: ${code.split('\n')[0]} is refused`);
    t.match(msgs[0] ?? '', new RegExp(`src/${folder} may not import`), 'the message names the layer rule');
  }
  const down: [string, string][] = [
    ['ipam', "import type { ServiceStatusWriter } from '../status/service-status.ts';\nexport type X = ServiceStatusWriter;\n"],
    ['status', "import type { MergedConfig } from '../crd/merge.ts';\nexport type X = MergedConfig;\n"],
    ['daemon', "import type { Controller } from '../controller/controller.ts';\nexport type X = Controller;\n"],
  ];
  for (const [folder, code] of down) t.same(await lintAs(folder, code), [], `src/${folder}: ${code.split('\n')[0]} is allowed`);
});

t.test('docs/architecture.md "Layers" names every folder', async (t) => {
  const doc = readFileSync(join(ROOT, 'docs', 'architecture.md'), 'utf8');
  const section = doc.slice(doc.indexOf('### Layers'), doc.indexOf('## ', doc.indexOf('### Layers') + 4));
  t.ok(section.length > 100, 'the section is there');
  for (const folder of Object.keys(layers)) t.match(section, `src/${folder}/`, `src/${folder}/ is placed`);
});
