// docker-compose.yml (BIRD + two Herald nodes in standalone mode): it parses, it runs the images scripts/image.sh builds, every file it references exists, the
// Herald configs validate with Herald's own schema, the manifests parse, and BIRD accepts its config (`bird -p`).
import t from 'tap';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { parse, parseAllDocuments } from 'yaml';
import { loadConfigFile, metricsListener, resolveIdentity } from '../../src/config/load.ts';
import { skipUnless } from '../helpers/prereq.ts';

const root = new URL('../../', import.meta.url).pathname;
const VERSION = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;

interface ComposeService {
  image?: string;
  volumes?: string[];
  command?: string[];
}

t.test('docker-compose.yml references only files that exist, and they are valid', async (t) => {
  const compose = parse(readFileSync(join(root, 'docker-compose.yml'), 'utf8')) as { services: Record<string, ComposeService> };
  const services = Object.entries(compose.services);
  t.same(services.map(([n]) => n).sort(), ['bird', 'node1', 'node2'], 'a BIRD router and two Herald nodes');
  let files = 0;
  for (const [name, svc] of services) {
    // The images scripts/image.sh builds and loads: localhost/herald and localhost/herald-bird, at package.json's version.
    t.equal(svc.image, `localhost/${name === 'bird' ? 'herald-bird' : 'herald'}:${VERSION}`, `${name}: an image scripts/image.sh builds`);
    for (const v of svc.volumes ?? []) {
      const src = v.split(':')[0] as string;
      t.ok(existsSync(join(root, src)), `${name}: volume source ${src} exists`);
      files++;
      const target = v.split(':')[1] as string;
      if (target === '/etc/herald/herald.yaml') {
        await t.resolves(loadConfigFile(join(root, src)), `${name}: ${src} is a valid Herald configuration`);
        // Regression: admin on 0.0.0.0:9179 left no room for the metrics listener on the node address, same port.
        const cfg = await loadConfigFile(join(root, src));
        t.equal(cfg.admin.address, '127.0.0.1', `${name}: the admin API stays on loopback`);
        t.same(metricsListener(cfg, resolveIdentity(cfg, { env: {} }, name)), { address: cfg.node.ip, port: 9179 }, `${name}: metrics on the node address beside it`);
        t.same(svc.command, ['run', '--config', '/etc/herald/herald.yaml'], `${name}: runs herald with it`);
      }
    }
  }
  t.ok(files >= 5, `${files} referenced files checked`);
});

t.test('the lab manifests parse as Kubernetes objects', async (t) => {
  const dir = join(root, 'deploy/compose/manifests');
  const docs = readdirSync(dir).flatMap((f) => parseAllDocuments(readFileSync(join(dir, f), 'utf8')));
  t.ok(docs.length >= 4, `${docs.length} objects`);
  for (const d of docs) {
    t.same(d.errors, [], 'no YAML error');
    t.ok((d.toJS() as { kind?: string }).kind, 'has a kind');
  }
});

const hasBird = spawnSync('sh', ['-c', 'command -v bird']).status === 0;
t.test('BIRD accepts the lab router config (bird -p)', { skip: skipUnless({ bird2: hasBird }) }, async (t) => {
  const r = spawnSync('bird', ['-p', '-c', join(root, 'deploy/compose/bird.conf')], { encoding: 'utf8' });
  t.equal(r.status, 0, r.stderr);
});
