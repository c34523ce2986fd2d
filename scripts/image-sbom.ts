/**
 * The SBOM of an image scripts/image.sh built: an SPDX 2.3 JSON document listing the Debian packages (from the
 * tab-separated `Package Version Architecture Source` lines the script wrote), the npm packages of the image's
 * node_modules (every folder with a package.json that has a name and a version, nested ones included) and Node.js
 * itself, each with its version and a package URL (purl). Prints a summary on stdout, one line per ecosystem.
 *
 * Usage: node scripts/image-sbom.ts --name herald --version 0.1.0 --digest sha256:... --debian FILE.tsv
 *          [--node-modules DIR] [--node v24.x.y] --epoch SECONDS --out FILE.spdx.json
 */
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

/** One package of the SBOM. */
export interface SbomPackage {
  ecosystem: 'deb' | 'npm' | 'generic';
  name: string;
  version: string;
  purl: string;
  license?: string;
}

/** Debian packages from `Package\tVersion\tArchitecture\tSource` lines (blank lines ignored). */
export function debianPackages(tsv: string): SbomPackage[] {
  return tsv
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => {
      const [name = '', version = '', arch = '', source = ''] = l.split('\t');
      const q = new URLSearchParams({ arch, distro: 'debian-12' });
      if (source !== '' && source !== name) q.set('upstream', source);
      return { ecosystem: 'deb', name, version, purl: `pkg:deb/debian/${name}@${encodeURIComponent(version)}?${q}` };
    });
}

/** Every npm package installed under `dir` (a node_modules folder), sorted by name and version, without repeats. */
export function npmPackages(dir: string): SbomPackage[] {
  const found = new Map<string, SbomPackage>();
  const visit = (modules: string): void => {
    if (!existsSync(modules)) return;
    for (const entry of readdirSync(modules, { withFileTypes: true })) {
      if (!entry.isDirectory() || entry.name.startsWith('.')) continue;
      const dirs = entry.name.startsWith('@') ? readdirSync(join(modules, entry.name), { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => join(modules, entry.name, e.name)) : [join(modules, entry.name)];
      for (const d of dirs) {
        const manifest = join(d, 'package.json');
        if (existsSync(manifest)) {
          const pkg: unknown = JSON.parse(readFileSync(manifest, 'utf8'));
          if (typeof pkg === 'object' && pkg !== null && 'name' in pkg && 'version' in pkg && typeof pkg.name === 'string' && typeof pkg.version === 'string') {
            const license = 'license' in pkg && typeof pkg.license === 'string' ? pkg.license : undefined;
            const purlName = pkg.name.startsWith('@') ? `%40${pkg.name.slice(1)}` : pkg.name;
            found.set(`${pkg.name}@${pkg.version}`, { ecosystem: 'npm', name: pkg.name, version: pkg.version, purl: `pkg:npm/${purlName}@${pkg.version}`, ...(license ? { license } : {}) });
          }
        }
        visit(join(d, 'node_modules'));
      }
    }
  };
  visit(dir);
  return [...found.values()].sort((a, b) => a.name.localeCompare(b.name) || a.version.localeCompare(b.version));
}

/** The SPDX 2.3 document: the image as the described package, which CONTAINS every other package. */
export function spdxDocument(image: { name: string; version: string; digest: string; created: Date }, packages: SbomPackage[]): object {
  const id = (i: number): string => `SPDXRef-Package-${i}`;
  return {
    spdxVersion: 'SPDX-2.3',
    dataLicense: 'CC0-1.0',
    SPDXID: 'SPDXRef-DOCUMENT',
    name: `${image.name}-${image.version}`,
    documentNamespace: `urn:herald:image:${image.name}:${image.digest}`,
    creationInfo: { created: image.created.toISOString().replace(/\.\d{3}Z$/, 'Z'), creators: ['Tool: herald scripts/image.sh'] },
    packages: [
      {
        SPDXID: 'SPDXRef-Image',
        name: image.name,
        versionInfo: image.version,
        downloadLocation: 'NOASSERTION',
        checksums: [{ algorithm: 'SHA256', checksumValue: image.digest.replace(/^sha256:/, '') }],
        primaryPackagePurpose: 'CONTAINER',
      },
      ...packages.map((p, i) => ({
        SPDXID: id(i),
        name: p.name,
        versionInfo: p.version,
        downloadLocation: 'NOASSERTION',
        licenseDeclared: p.license ?? 'NOASSERTION',
        externalRefs: [{ referenceCategory: 'PACKAGE-MANAGER', referenceType: 'purl', referenceLocator: p.purl }],
      })),
    ],
    relationships: [
      { spdxElementId: 'SPDXRef-DOCUMENT', relationshipType: 'DESCRIBES', relatedSpdxElement: 'SPDXRef-Image' },
      ...packages.map((_, i) => ({ spdxElementId: 'SPDXRef-Image', relationshipType: 'CONTAINS', relatedSpdxElement: id(i) })),
    ],
  };
}

if (import.meta.main) {
  const { values: a } = parseArgs({
    options: {
      name: { type: 'string' },
      version: { type: 'string' },
      digest: { type: 'string' },
      debian: { type: 'string' },
      'node-modules': { type: 'string' },
      node: { type: 'string' },
      epoch: { type: 'string' },
      out: { type: 'string' },
    },
  });
  if (!a.name || !a.version || !a.digest || !a.debian || !a.out || !a.epoch) {
    process.stderr.write('usage: node scripts/image-sbom.ts --name N --version V --digest D --debian TSV [--node-modules DIR] [--node vX] --epoch S --out FILE\n');
    process.exit(2);
  }
  const deb = debianPackages(readFileSync(a.debian, 'utf8'));
  const npm = a['node-modules'] ? npmPackages(a['node-modules']) : [];
  const node: SbomPackage[] = a.node ? [{ ecosystem: 'generic', name: 'node', version: a.node.replace(/^v/, ''), purl: `pkg:generic/node@${a.node.replace(/^v/, '')}`, license: 'MIT' }] : [];
  if (deb.length === 0) {
    process.stderr.write(`image-sbom: no Debian package in ${a.debian}\n`);
    process.exit(1);
  }
  const packages = [...deb, ...node, ...npm];
  writeFileSync(a.out, `${JSON.stringify(spdxDocument({ name: a.name, version: a.version, digest: a.digest, created: new Date(Number(a.epoch) * 1000) }, packages), null, 2)}\n`);
  const list = (ps: SbomPackage[]): string => ps.map((p) => `${p.name} ${p.version}`).join(', ');
  process.stdout.write(`sbom: ${a.out} (SPDX 2.3, ${packages.length} packages)\n`);
  process.stdout.write(`debian (${deb.length}): ${deb.length <= 12 ? list(deb) : `${list(deb.slice(0, 12))}, …`}\n`);
  if (node.length) process.stdout.write(`node.js: ${node[0]?.version}\n`);
  if (a['node-modules']) {
    const manifest: unknown = JSON.parse(readFileSync('package.json', 'utf8'));
    const deps = typeof manifest === 'object' && manifest !== null && 'dependencies' in manifest && typeof manifest.dependencies === 'object' && manifest.dependencies !== null ? Object.keys(manifest.dependencies) : [];
    const direct = npm.filter((p) => deps.includes(p.name));
    process.stdout.write(`npm (${npm.length}; direct: ${list(direct)})\n`);
  }
}
