/**
 * Secrets of the configuration: the TCP MD5 passwords of peers (RFC 2385, read from `password.file` or
 * `password.env`) and the admin API token (`admin.tokenFile` or HERALD_ADMIN_TOKEN).
 *
 * Rules (docs/operations.md, "Limits"): a secret's value is never written in an error, a log line or an API view —
 * the field and the file or variable are named instead; an MD5 key longer than Linux takes is refused where it is
 * read; a known placeholder value (the example Secrets' `change-me`, `password`, ...) is warned about at start.
 * Secret files are read ahead of use, at start and at each reload, by the bounded reader (read.ts): a FIFO, a
 * device or a file over 64 KiB is refused with the file named, and nothing waits on the main thread.
 */
import type { Config, PeerConfig } from './schema.ts';
import { readFailure, readTextFile, SECRET_FILE_MAX_BYTES, SECRET_FILE_TIMEOUT_MS } from '../files/read.ts';

/** Longest TCP MD5 key Linux accepts, octets (TCP_MD5SIG_MAXKEYLEN; bgp/session/transport.ts refuses longer keys). */
export const TCP_MD5_MAX_KEY_OCTETS = 80;

/** Why `key` cannot be a TCP MD5 key (too long), without showing it; undefined when it can. */
export function md5KeyProblem(key: string): string | undefined {
  const octets = Buffer.byteLength(key, 'utf8');
  return octets > TCP_MD5_MAX_KEY_OCTETS ? `the password is ${octets} octets; Linux takes at most ${TCP_MD5_MAX_KEY_OCTETS} (TCP_MD5SIG_MAXKEYLEN)` : undefined;
}

/** Placeholders of examples and tutorials, compared lower-case without punctuation ("Change-Me" → "changeme"). */
const PLACEHOLDERS: ReadonlySet<string> = new Set([
  'changeme',
  'changemetoo',
  'changeit',
  'changethis',
  'replaceme',
  'password',
  'passw0rd',
  'mypassword',
  'secret',
  'mysecret',
  'supersecret',
  'token',
  'mytoken',
  'admin',
  'default',
  'example',
  'test',
  'testing',
  'herald',
  'todo',
  'fixme',
  'foobar',
  'letmein',
  'qwerty',
  '123456',
  '12345678',
]);

/**
 * Whether `value` is a known placeholder: empty, one character repeated (`xxxx`, `****`), a template left unfilled
 * (`<token>`, `${TOKEN}`, `{{ token }}`), or a word of the list above.
 */
export function isPlaceholderSecret(value: string): boolean {
  const v = value.trim();
  if (v === '' || /^(.)\1*$/.test(v) || /^<.*>$|^\$\{.*\}$|^\{\{.*\}\}$/.test(v)) return true;
  return PLACEHOLDERS.has(v.toLowerCase().replace(/[^a-z0-9]/g, ''));
}

/** A start-up warning: structured fields (never the value) and the message. */
export interface SecretWarning {
  fields: Record<string, string>;
  message: string;
}

/**
 * Warnings for secrets that are known placeholders: the admin token in force and each peer's MD5 password.
 * @param token the admin token in force (undefined: none)
 * @param readPassword reads a peer's password (src/daemon/mapping.ts `resolvePassword`); one that cannot be read is
 *   reported elsewhere, not here
 */
export function placeholderWarnings(cfg: Config, token: string | undefined, readPassword: (p: PeerConfig, index: number) => string | undefined): SecretWarning[] {
  const out: SecretWarning[] = [];
  if (token !== undefined && isPlaceholderSecret(token)) {
    const source = cfg.admin.tokenFile !== undefined ? `admin.tokenFile ${cfg.admin.tokenFile}` : 'HERALD_ADMIN_TOKEN';
    out.push({ fields: { source }, message: 'the admin API token is a known placeholder (as in the example Secret): anyone can drain this node; set a random token' });
  }
  cfg.peers.forEach((p, i) => {
    let pw: string | undefined;
    try {
      pw = readPassword(p, i);
    } catch {
      return;
    }
    if (pw === undefined || !isPlaceholderSecret(pw)) return;
    const source = p.password?.file !== undefined ? `peers[${i}].password.file ${p.password.file}` : `peers[${i}].password.env ${p.password?.env ?? ''}`;
    out.push({ fields: { peer: p.name, source }, message: 'the TCP MD5 password of this peer is a known placeholder (as in the example Secret); set the one agreed with the router' });
  });
  return out;
}

/** What reading one secret file gave: its text, or why there is none (without the path). */
export type SecretFileText = { text: string } | { problem: string };

/** The secret files a configuration names, read ahead of use: path → its text, or why it cannot be read. */
export type SecretFileTexts = ReadonlyMap<string, SecretFileText>;

/** The secret files the configurations name: every peer's `password.file`, and `admin.tokenFile`. */
export function secretFilePaths(...cfgs: Config[]): string[] {
  const paths = new Set<string>();
  for (const cfg of cfgs) {
    for (const p of cfg.peers) if (p.password?.file !== undefined) paths.add(p.password.file);
    if (cfg.admin.tokenFile !== undefined) paths.add(cfg.admin.tokenFile);
  }
  return [...paths];
}

/**
 * Reads every secret file the configurations name (read.ts: regular files of at most 64 KiB, within 5 s each, in
 * parallel; a reload passes the new file and the one in force, whose restart-only `admin` stays).
 * Never throws: a file that cannot be read maps to its problem, which the field that names it reports.
 */
export async function readSecretFiles(...cfgs: Config[]): Promise<SecretFileTexts> {
  const out = new Map<string, SecretFileText>();
  await Promise.all(
    secretFilePaths(...cfgs).map(async (path) => {
      try {
        out.set(path, { text: await readTextFile(path, { maxBytes: SECRET_FILE_MAX_BYTES, timeoutMs: SECRET_FILE_TIMEOUT_MS, sizeHint: 'a password or token file holds one short line' }) });
      } catch (err) {
        out.set(path, { problem: readFailure(err) });
      }
    }),
  );
  return out;
}
