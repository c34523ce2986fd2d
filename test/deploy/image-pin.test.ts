/**
 * The release step `scripts/image.sh pin [REPOSITORY]` (scripts/image-pin.ts), run on a copy of deploy/: afterwards
 * kustomize (deploy/kubernetes `images:`) and the chart (`image.digest`) reference the image that scripts/image.sh
 * built, by the digest of its OCI archive's manifest, in every container and init container; with a REPOSITORY, that
 * repository. Unpinned, the shipped manifests take the tag of package.json's version.
 *
 * Needs helm (scripts/helm.sh) and the image archive (`sudo bash scripts/image.sh herald`).
 */
import t from 'tap';
import type { Test } from 'tap';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type * as k8s from '@kubernetes/client-node';
import { findHelm, helmTemplate, root } from './helm-tool.ts';
import type { KubeDoc } from './k8s-schema.ts';
import { renderKustomization } from './kustomize.ts';
import { skipUnless } from '../helpers/prereq.ts';
import { SHIPPED_REPOSITORY, pin } from '../../scripts/image-pin.ts';

const ARCHIVE = join(root, 'dist/image/herald.oci.tar');
const DIGEST_FILE = join(root, 'dist/image/herald.digest');
const VERSION = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;
const helm = findHelm();
const skip = skipUnless({ helm: helm.path !== undefined, [`the image archive ${ARCHIVE}`]: existsSync(ARCHIVE) && existsSync(DIGEST_FILE) }, `${helm.missing ?? ''}; sudo bash scripts/image.sh herald`);
const H = helm.path as string;

/** Every image of every pod template (containers and init containers), with where it is. */
function images(docs: KubeDoc[]): string[] {
  const out: string[] = [];
  for (const d of docs) {
    const spec = (d as unknown as k8s.V1DaemonSet).spec?.template?.spec;
    if (spec === undefined) continue;
    for (const c of [...(spec.initContainers ?? []), ...spec.containers]) out.push(`${d.kind}/${d.metadata?.name} ${c.name}: ${c.image}`);
  }
  return out;
}

/** A copy of deploy/ in a temp dir (removed at the end of the test). */
function deployCopy(t: Test): string {
  const dir = mkdtempSync(join(tmpdir(), 'herald-pin-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  cpSync(join(root, 'deploy'), join(dir, 'deploy'), { recursive: true });
  return join(dir, 'deploy');
}

function runPin(deploy: string, repository?: string): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync('bash', [join(root, 'scripts/image.sh'), 'pin', ...(repository !== undefined ? [repository] : [])], { encoding: 'utf8', timeout: 60_000, env: { ...process.env, HERALD_DEPLOY_DIR: deploy } });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

t.test('unpinned, kustomize and the chart take the image by the tag of the version', { skip }, async (t) => {
  const want = `${SHIPPED_REPOSITORY}:${VERSION}`;
  const k = images(renderKustomization(join(root, 'deploy/kubernetes')));
  const c = images(helmTemplate(H));
  t.ok(k.length >= 2, `kustomize: the DaemonSet's container and init container (${k.length} images)`);
  t.same(k.map((l) => l.split(': ')[1]), k.map(() => want), 'kustomize: every image is the tag');
  t.same(c, k, 'the chart: the same images as kustomize');
});

t.test('scripts/image.sh pin: kustomize and the chart reference the built image by its digest', { skip }, async (t) => {
  const index = spawnSync('tar', ['-xOf', ARCHIVE, 'index.json'], { encoding: 'utf8' });
  t.equal(index.status, 0, index.stderr);
  const digest = (JSON.parse(index.stdout) as { manifests: { digest: string }[] }).manifests[0]?.digest ?? '';
  t.match(digest, /^sha256:[0-9a-f]{64}$/, "the archive's manifest digest");
  t.equal(readFileSync(DIGEST_FILE, 'utf8').trim(), digest, 'dist/image/herald.digest is the digest of the archive');

  const checkout = (): string => spawnSync('git', ['diff', 'HEAD', '--', 'deploy'], { cwd: root, encoding: 'utf8' }).stdout;
  const before = checkout();
  for (const repository of [undefined, 'registry.example.net:5000/herald/herald']) {
    const deploy = deployCopy(t);
    const r = runPin(deploy, repository);
    t.equal(r.status, 0, `scripts/image.sh pin ${repository ?? ''}: ${r.stderr}`);
    const want = `${repository ?? SHIPPED_REPOSITORY}@${digest}`;
    t.match(r.stdout, want, 'it says what it pinned');
    const k = images(renderKustomization(join(deploy, 'kubernetes')));
    const c = images(helmTemplate(H, [], join(deploy, 'helm/herald')));
    t.ok(k.length >= 2, `kustomize renders ${k.length} images`);
    t.same(k.map((l) => l.split(': ')[1]), k.map(() => want), `kustomize: every image is ${want}`);
    t.same(c, k, 'the chart: the same images, by the same digest');
  }
  t.equal(checkout(), before, "the checkout's deploy/ is untouched (a copy was pinned)");
});

t.test('pin refuses what is not a digest or a repository, naming the fix', async (t) => {
  t.throws(() => pin('/nonexistent', 'sha256:abc', SHIPPED_REPOSITORY), /expected sha256: and 64 hex digits/);
  t.throws(() => pin('/nonexistent', `sha256:${'a'.repeat(64)}`, 'registry.example.net/herald:0.1.0'), /without a tag/);
});
