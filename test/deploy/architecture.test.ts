/**
 * docs/architecture.md is true to the code (issue 33): its module map names every module and folder of bgp/ and every
 * folder of src/; it names every module of the composition root (src/daemon/); every module it names by its bare file
 * name exists; the components of `herald run` are listed in the order src/daemon/node-components.ts builds them, under
 * the names the code gives them; and the classes and methods it names exist. (Full repository paths are checked for
 * every doc by test/deploy/docs.test.ts; the layers by test/src/layers.test.ts.)
 */
import t from 'tap';
import { globSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..', '..');
const doc = readFileSync(join(root, 'docs', 'architecture.md'), 'utf8');
const read = (path: string) => readFileSync(join(root, path), 'utf8');

/** The text of the section that starts with the heading `heading`, up to the next heading of its level or above. */
function section(heading: string): string {
  const at = doc.indexOf(`\n${heading}\n`);
  if (at < 0) return '';
  const level = /^#+/.exec(heading)?.[0].length ?? 2;
  const next = doc.slice(at + heading.length + 2).search(new RegExp(`^#{1,${level}} `, 'm'));
  return next < 0 ? doc.slice(at) : doc.slice(at, at + heading.length + 2 + next);
}

t.test('the module map names every module and folder of bgp/ and every folder of src/', async (t) => {
  const map = section('## Module map');
  t.ok(map.length > 1000, 'the module map is there');
  const bgp = readdirSync(join(root, 'bgp'), { withFileTypes: true }).map((e) => (e.isDirectory() ? `bgp/${e.name}/` : `bgp/${e.name}`));
  t.ok(bgp.length >= 20, `bgp/ has its modules (${bgp.length})`);
  // thread-entry.js is the threads' loader, named with bgp/worker-rpc.ts.
  for (const m of bgp) t.ok(map.includes(m), `${m} is in the module map`);
  const src = readdirSync(join(root, 'src'), { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => `src/${e.name}/`);
  t.ok(src.length >= 15, `src/ has its folders (${src.length})`);
  for (const f of src) t.ok(map.includes(f), `${f} is in the module map`);
});

t.test('every module of the composition root (src/daemon/) is named', async (t) => {
  const files = readdirSync(join(root, 'src', 'daemon')).filter((f) => f.endsWith('.ts'));
  t.ok(files.length >= 20, `src/daemon/ has its modules (${files.length})`);
  for (const f of files) t.match(doc, new RegExp(`(?<![\\w-])${f.replace('.', '\\.')}`), `src/daemon/${f} is named`);
});

t.test('every module named by its bare file name exists', async (t) => {
  const bare = [...new Set([...doc.matchAll(/(?<![\w./-])([a-z][\w-]*\.(?:ts|js))(?![\w-])/g)].map((m) => m[1] as string))];
  t.ok(bare.length >= 20, `the doc names modules by their file name (${bare.length})`);
  for (const name of bare) {
    const found = globSync(`{bgp,src,tools,bench,bin}/**/${name}`, { cwd: root });
    t.ok(found.length > 0, `${name} exists (${found.join(', ') || 'nowhere'})`);
  }
});

/** The component names of `herald run`, in the order src/daemon/node-components.ts lists them. */
function builtOrder(): string[] {
  const daemonFiles = readdirSync(join(root, 'src', 'daemon')).filter((f) => f.endsWith('.ts')).map((f) => read(`src/daemon/${f}`));
  const nodeComponents = read('src/daemon/node-components.ts');
  const list = /const components: Component\[\] = \[\n([\s\S]*?)\n\s*\];/.exec(nodeComponents)?.[1] ?? '';
  /** The name a component-making function gives: the first `name: '...'` in its body. */
  const nameOfFunction = (fn: string): string | undefined => {
    for (const text of daemonFiles) {
      const at = text.search(new RegExp(`function ${fn}\\b`));
      if (at >= 0) return /name: '([^']+)'/.exec(text.slice(at))?.[1];
    }
    return undefined;
  };
  return list.split('\n').map((line) => {
    // Literal: listenerComponent({ name: 'admin API', ... }) or { name: 'node status', ... }
    const literal = /name: '([^']+)'/.exec(line)?.[1];
    if (literal !== undefined) return literal;
    // A call: sourceComponent(parts, ...)
    const call = /\b(\w+)\(/.exec(line)?.[1];
    const called = call !== undefined ? nameOfFunction(call) : undefined;
    if (called !== undefined) return called;
    // A variable made by a call before the list: `allocator,` (const allocator = allocatorComponent(...)),
    // `...(objectStatus ? [objectStatus] : [])` (objectStatus = await objectStatusComponent(...))
    const variable = /^\s*(?:\.\.\.\()?(\w+)/.exec(line)?.[1];
    const made = variable !== undefined ? new RegExp(`\\b${variable} = (?:await )?(\\w+)\\(`).exec(nodeComponents)?.[1] : undefined;
    return (made !== undefined ? nameOfFunction(made) : undefined) ?? `? ${line.trim()}`;
  });
}

t.test('the components of herald run are listed in the order they are built, under their names', async (t) => {
  const table = section('## Components: what `herald run` is made of');
  const rows = [...table.matchAll(/^\| (\d+) \| ([^|]+) \|/gm)].map((m) => (m[2] as string).trim());
  t.ok(rows.length >= 9, `the table lists the components (${rows.length})`);
  const documented = rows.map((r) => r.replace(/ \(.*$/, '').replace(/:.*$/, '').trim());
  t.same(documented, builtOrder(), 'docs/architecture.md "Components" = src/daemon/node-components.ts buildNode');
  // The module comment of node-components.ts gives the same order.
  const comment = /\n \*\s+(source ·[\s\S]*?)\n \*\n/.exec(read('src/daemon/node-components.ts'))?.[1]?.replace(/\s*\*\s*/g, ' ').replace(/\([^)]*\)/g, '');
  t.same(comment?.split('·').map((s) => s.trim()), documented, 'and node-components.ts\'s module comment');
});

t.test('the classes and methods the doc names exist', async (t) => {
  const sources = globSync('{bgp,src}/**/*.ts', { cwd: root }).map(read).join('\n');
  // `Class.method` and `Class.#method` in backticks or in a diagram: the class is declared and has the member.
  const members = [...new Set([...doc.matchAll(/\b([A-Z]\w+)\.(#?[a-z]\w*)\b/g)].map((m) => `${m[1]}.${m[2]}`))].filter((m) => !/\.(ts|js|md)$/.test(m));
  t.ok(members.length >= 5, `the doc names methods (${members.join(', ')})`);
  for (const m of members) {
    const [cls, member] = m.split('.') as [string, string];
    const at = sources.search(new RegExp(`(?:class|interface) ${cls}\\b`));
    t.ok(at >= 0, `${cls} is declared`);
    if (at < 0) continue;
    const body = sources.slice(at, sources.indexOf('\n}', at));
    t.match(body, new RegExp(`\\n\\s+(?:(?:public|private|readonly|static|async|get) )*${member}\\b`), `${m} exists`);
  }
  // Types and classes in backticks that look like declarations (`HealthGate`, `SpeakerLike`): each is declared.
  const types = [...new Set([...doc.matchAll(/`([A-Z][a-z]+(?:[A-Z][a-z]*)+)`/g)].map((m) => m[1] as string))];
  t.ok(types.length >= 10, `the doc names types (${types.length})`);
  for (const name of types) t.match(sources, new RegExp(`(?:class|interface|type|enum|const) ${name}\\b`), `${name} is declared`);
});
