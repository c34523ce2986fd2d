/**
 * Every configuration snippet of README.md and docs/*.md is valid, as the examples are (test/src/config/load.test.ts):
 * each ```yaml block whose top-level keys are configuration sections is checked the way `herald config check` checks
 * a file (parseConfigText), with `bgp: {localAs: 64512}` put in front when the snippet shows no `bgp` (the one required
 * section, which a snippet about another section leaves out). Blocks that are Kubernetes objects (apiVersion and
 * kind, or a Service's metadata fragment) are not configuration; any other block is an error naming it, so a snippet
 * cannot slip past by its shape. The number of configuration snippets is asserted: a change of it is deliberate.
 */
import t from 'tap';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { parseConfigText } from '../../src/config/load.ts';
import { configJsonSchema } from '../../src/crd/docs.ts';

const root = new URL('../../', import.meta.url).pathname;
/** Configuration snippets in README.md and docs/*.md today (update it with the docs). */
const CONFIG_SNIPPETS = 12;

/** Every ```yaml block of the file, with the line its text starts on. */
function yamlBlocks(file: string): { where: string; text: string }[] {
  const text = readFileSync(join(root, file), 'utf8');
  const out: { where: string; text: string }[] = [];
  for (const m of text.matchAll(/^```ya?ml\n([\s\S]*?)^```/gm)) out.push({ where: `${file}:${text.slice(0, m.index).split('\n').length + 1}`, text: m[1] ?? '' });
  return out;
}

t.test('every configuration snippet in README.md and docs/ passes config check', async (t) => {
  const files = ['README.md', ...readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
  const sections = new Set(Object.keys(configJsonSchema().properties ?? {}));
  let snippets = 0;
  for (const file of files) {
    for (const b of yamlBlocks(file)) {
      const docs = b.text.split(/^---$/m).map((d) => parse(d) as unknown);
      const isObject = (d: unknown): d is Record<string, unknown> => typeof d === 'object' && d !== null && !Array.isArray(d);
      if (docs.every((d) => isObject(d) && (('apiVersion' in d && 'kind' in d) || Object.keys(d).join() === 'metadata'))) continue; // Kubernetes objects
      const keys = isObject(docs[0]) && docs.length === 1 ? Object.keys(docs[0]) : [];
      if (keys.length === 0 || !keys.every((k) => sections.has(k))) {
        t.fail(`${b.where}: a yaml block that is neither Kubernetes objects nor a configuration snippet (keys: ${keys.join(', ') || 'none'})`);
        continue;
      }
      snippets++;
      const text = keys.includes('bgp') ? b.text : `bgp: {localAs: 64512}\n${b.text}`;
      const r = parseConfigText(text);
      t.ok(r.ok, `${b.where} (${keys.join(', ')}): ${r.ok ? 'valid' : r.errors.map((e) => `${e.path}: ${e.message}`).join('; ')}`);
    }
  }
  t.equal(snippets, CONFIG_SNIPPETS, `${snippets} configuration snippets found (fixture check)`);
});
