/**
 * The helm binary built by scripts/helm.sh (from its Go module, cached outside the clone). Without Go, or before
 * `bash scripts/helm.sh build`, the chart tests skip with the reason; under CI=true that is a failure instead.
 */
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import type { KubeDoc } from './k8s-schema.ts';

export const root = new URL('../../', import.meta.url).pathname;
export const chartDir = join(root, 'deploy/helm/herald');

/** `{path}` of a built helm, or `{missing}`: why there is none and how to get it. */
export function findHelm(): { path?: string; missing?: string } {
  const r = spawnSync('bash', [join(root, 'scripts/helm.sh'), 'path'], { encoding: 'utf8', timeout: 30_000 });
  if (r.status === 0) return { path: r.stdout.trim() };
  return { missing: `${r.stderr.trim() || `scripts/helm.sh path exited ${r.status}`}` };
}

/** Helm's own cache/config/data folders, in the temp dir (a test never touches the user's). */
function helmHomes(): Record<string, string> {
  const base = join(tmpdir(), 'herald-helm-test');
  return { HELM_CACHE_HOME: join(base, 'cache'), HELM_CONFIG_HOME: join(base, 'config'), HELM_DATA_HOME: join(base, 'data') };
}

/** Runs helm with `args`; returns its exit status and output. Bounded to 60 s. */
export function runHelm(helm: string, args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(helm, args, { encoding: 'utf8', timeout: 60_000, env: { ...process.env, ...helmHomes() } });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/**
 * `helm template herald deploy/helm/herald -n herald-system` with extra args, parsed; throws with helm's error.
 * @param chart another copy of the chart (default deploy/helm/herald)
 */
export function helmTemplate(helm: string, extra: string[] = [], chart = chartDir): KubeDoc[] {
  const r = runHelm(helm, ['template', 'herald', chart, '--namespace', 'herald-system', ...extra]);
  if (r.status !== 0) throw new Error(`helm template ${extra.join(' ')} failed: ${r.stderr}`);
  const out: KubeDoc[] = [];
  for (const d of parseAllDocuments(r.stdout)) {
    if (d.errors.length) throw new Error(`helm template output: ${d.errors[0]?.message}`);
    const doc = d.toJS() as KubeDoc | null;
    if (doc) out.push(doc);
  }
  return out;
}
