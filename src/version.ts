/** Herald's version, read from package.json ("unknown" when it cannot be read). */
import { readFile } from 'node:fs/promises';

/** Version from package.json. */
export async function version(): Promise<string> {
  try {
    const pkg = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8')) as { version?: string };
    return pkg.version ?? 'unknown';
  } catch {
    return 'unknown';
  }
}
