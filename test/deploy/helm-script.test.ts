/**
 * scripts/helm.sh build, with a stand-in `go` (GO=...) that "installs" a helm script into GOBIN: the build exits 0 and
 * leaves no build folder behind. Regression: the build folder was a local of build() named in the EXIT trap, so under
 * `set -u` the trap failed after a good build and CI's first run on a fresh machine went red ("out: unbound variable").
 */
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { root } from './helm-tool.ts';

t.test('helm.sh build exits 0 after a fresh build and removes its build folder', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'herald-helm-sh-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const cache = join(dir, 'cache');
  const fakeGo = join(dir, 'go');
  writeFileSync(
    fakeGo,
    [
      '#!/bin/sh',
      'if [ "$1" = env ]; then echo go1.26.8; exit 0; fi',
      'if [ "$1" = install ]; then printf "#!/bin/sh\\necho v4.3.1\\n" > "$GOBIN/helm" && chmod +x "$GOBIN/helm"; exit 0; fi',
      'exit 9',
      '',
    ].join('\n'),
  );
  chmodSync(fakeGo, 0o755);
  const build = () =>
    spawnSync('bash', [join(root, 'scripts/helm.sh'), 'build'], {
      env: { ...process.env, GO: fakeGo, HERALD_TOOLS_CACHE: cache },
      encoding: 'utf8',
      timeout: 30_000,
    });
  const r = build();
  t.equal(r.status, 0, `exit 0 (stderr: ${r.stderr})`);
  t.notMatch(r.stderr, /unbound variable/);
  t.match(r.stdout, /helm: built .*helm-v4\.3\.1/);
  t.ok(existsSync(join(cache, 'helm-v4.3.1')), 'the binary is in the cache');
  t.same(readdirSync(cache).filter((f) => f.startsWith('.helm-build.') && f !== '.helm-build.lock'), [], 'no build folder left');

  const again = build();
  t.equal(again.status, 0, 'a second build reuses the binary');
  t.match(again.stdout, /helm: reusing/);
});
