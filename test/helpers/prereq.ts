/**
 * Prerequisites of a test file: an external daemon (bird2, gobgpd, FRR, ExaBGP), a tool built from Go, the shared
 * reference data. A missing one never turns a suite green by not running it:
 * - on a developer machine the file records a visible tap skip that names what is missing and how to get it;
 * - under `CI=true` (set by `.ci/run`) a missing prerequisite is a test failure.
 *
 * Usage, at the top of a test file:
 *   if (!missingPrerequisite({ bird2: birdAvailable() })) {
 *     t.test(...);
 *   }
 * or per test: `t.test('name', { skip: skipUnless({ 'shared data': present }) }, ...)`.
 */
import t from 'tap';

/** True when the run is CI's (`.ci/run` exports CI=true): prerequisites must then all be present. */
export function underCI(): boolean {
  return process.env['CI'] === 'true';
}

function reasonFor(checks: Record<string, boolean>, hint: string): string | undefined {
  const missing = Object.entries(checks)
    .filter(([, present]) => !present)
    .map(([name]) => name);
  return missing.length === 0 ? undefined : `missing: ${missing.join(', ')} (${hint})`;
}

/**
 * Checks a test file's prerequisites. When one is missing, records a skipped subtest named after it (or, under
 * CI=true, a failure) and returns the reason; returns undefined when everything is present.
 * @param checks name of each prerequisite → whether it is present
 * @param hint how to get them (default: scripts/setup.sh)
 */
export function missingPrerequisite(checks: Record<string, boolean>, hint = 'scripts/setup.sh installs them'): string | undefined {
  const reason = reasonFor(checks, hint);
  if (reason === undefined) return undefined;
  if (underCI()) t.fail(`${reason}: under CI=true every prerequisite must be present`);
  else t.test('prerequisites', { skip: reason }, () => {});
  return reason;
}

/**
 * The `skip` option of one test: false when every prerequisite is present; else the reason (a visible skip), and
 * under CI=true a failure is recorded as well.
 */
export function skipUnless(checks: Record<string, boolean>, hint = 'scripts/setup.sh installs them'): string | false {
  const reason = reasonFor(checks, hint);
  if (reason === undefined) return false;
  if (underCI()) t.fail(`${reason}: under CI=true every prerequisite must be present`);
  return reason;
}
