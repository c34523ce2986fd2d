/**
 * Takes Herald's image by digest in the shipped manifests (the release step `scripts/image.sh pin`): writes the digest
 * (and, when given, another repository) into deploy/kubernetes/kustomization.yaml `images:` and the chart's values
 * `image.digest` (`image.repository`), keeping every comment, so that `kubectl apply -k` and `helm install` pull the
 * image that was built and tested, whatever a tag points at later (test/deploy/image-pin.test.ts).
 *
 * Usage: node scripts/image-pin.ts --digest sha256:HEX [--repository REGISTRY/PATH] [--deploy DIR]
 *   --deploy  the deploy/ folder to edit (default: this checkout's); the test pins a copy
 * Prints what it wrote; exit 2 on a bad argument, 1 when a file does not have the expected shape.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { parseDocument } from 'yaml';

/** The repository every shipped manifest names (deploy/kubernetes/daemonset.yaml, the chart's values). */
export const SHIPPED_REPOSITORY = 'ghcr.io/herald-bgp/herald';

const DIGEST = /^sha256:[0-9a-f]{64}$/;
/** A repository as a registry path: host[:port]/path, lower case, no tag or digest. */
const REPOSITORY = /^[a-z0-9]+([._-][a-z0-9]+)*(:[0-9]+)?(\/[a-z0-9]+([._-][a-z0-9]+)*)+$/;

/** Writes the pin into the kustomization and the chart's values under `deploy`; returns the files written. */
export function pin(deploy: string, digest: string, repository: string): string[] {
  if (!DIGEST.test(digest)) throw new Error(`digest ${JSON.stringify(digest)}: expected sha256: and 64 hex digits (dist/image/herald.digest)`);
  if (!REPOSITORY.test(repository)) throw new Error(`repository ${JSON.stringify(repository)}: expected a registry path such as registry.example.net/herald/herald, without a tag`);

  const kustomization = join(deploy, 'kubernetes/kustomization.yaml');
  const k = parseDocument(readFileSync(kustomization, 'utf8'));
  const images = k.get('images');
  const entries = (k.toJS() as { images?: { name?: string }[] }).images ?? [];
  const index = entries.findIndex((e) => e.name === SHIPPED_REPOSITORY);
  if (images === undefined || index < 0) throw new Error(`${kustomization}: no images: entry named ${SHIPPED_REPOSITORY}`);
  const path = ['images', index];
  k.deleteIn([...path, 'newTag']);
  if (repository === SHIPPED_REPOSITORY) k.deleteIn([...path, 'newName']);
  else k.setIn([...path, 'newName'], repository);
  k.setIn([...path, 'digest'], digest);
  writeFileSync(kustomization, k.toString({ lineWidth: 0, flowCollectionPadding: false }));

  const valuesFile = join(deploy, 'helm/herald/values.yaml');
  const v = parseDocument(readFileSync(valuesFile, 'utf8'));
  if (!v.hasIn(['image', 'digest'])) throw new Error(`${valuesFile}: no image.digest value`);
  v.setIn(['image', 'repository'], repository);
  v.setIn(['image', 'digest'], digest);
  writeFileSync(valuesFile, v.toString({ lineWidth: 0, flowCollectionPadding: false }));
  return [kustomization, valuesFile];
}

if (import.meta.filename === process.argv[1]) {
  const { values: a } = parseArgs({ options: { digest: { type: 'string' }, repository: { type: 'string' }, deploy: { type: 'string' } } });
  if (a.digest === undefined) {
    process.stderr.write('usage: node scripts/image-pin.ts --digest sha256:HEX [--repository REGISTRY/PATH] [--deploy DIR]\n');
    process.exit(2);
  }
  try {
    const repository = a.repository ?? SHIPPED_REPOSITORY;
    for (const f of pin(a.deploy ?? join(import.meta.dirname, '..', 'deploy'), a.digest, repository)) process.stdout.write(`pinned ${repository}@${a.digest} in ${f}\n`);
  } catch (err) {
    process.stderr.write(`image pin: ${(err as Error).message}\n`);
    process.exit(1);
  }
}
