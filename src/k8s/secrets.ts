/**
 * TCP MD5 passwords from Secrets (a peer's `passwordSecret`): read by name, one GET each, in Herald's namespace only
 * (RBAC: `get` on secrets there, never list or watch; deploy/kubernetes/rbac.yaml). A Secret asked for the first
 * time is fetched in the background; until then, and while it cannot be read, its peer is not run and the reason
 * says why. The Secrets in use are read again every `refreshMs` (a rotated password reaches the session: its
 * change is a session field, diff.ts) and `change` is emitted whenever a value read differs from the last one.
 *
 * Values never leave this module except to the peer that uses them: no log line, error or view shows one
 * (docs/operations.md, "Limits").
 */
import { EventEmitter } from 'node:events';
import type { KubeClient } from './client.ts';
import { apiErrorCode, apiErrorText } from './forbidden.ts';
import type { ForbiddenCalls } from './forbidden.ts';

/** The value of one key of a Secret, or why there is none. */
export type SecretValue = { value: string } | { problem: string };

/** What the peer set needs: a key's value now (fetched in the background when not known yet). */
export interface SecretLookup {
  get(name: string, key: string): SecretValue;
  /** Keep (and refresh) only these Secrets: the ones the peers in force use. */
  retain(names: ReadonlySet<string>): void;
}

/** How a Secret is read: its keys' values (decoded), or undefined when it does not exist. */
export type SecretReader = (name: string) => Promise<Record<string, string> | undefined>;

/**
 * A {@link SecretReader} over the apiserver: `GET /api/v1/namespaces/{ns}/secrets/{name}`, `data` decoded from base64
 * (core/v1 Secret). A 404 is "does not exist"; any other failure throws (ApiError from client.ts).
 */
export function apiSecretReader(kc: KubeClient, namespace: string, forbidden?: ForbiddenCalls): SecretReader {
  return async (name) => {
    const read = () => kc.request('GET', `/api/v1/namespaces/${encodeURIComponent(namespace)}/secrets/${encodeURIComponent(name)}`);
    try {
      const s = (await (forbidden ? forbidden.track('get secrets', read) : read())) as { data?: Record<string, unknown> | null } | undefined;
      const data: Record<string, string> = {};
      for (const [k, v] of Object.entries(s?.data ?? {})) if (typeof v === 'string') data[k] = Buffer.from(v, 'base64').toString('utf8');
      return data;
    } catch (err) {
      if (apiErrorCode(err) === 404) return undefined;
      throw err;
    }
  };
}

interface Entry {
  data?: Record<string, string>;
  problem?: string;
  fetching: boolean;
}

/** Options of {@link SecretCache}. */
export interface SecretCacheOptions {
  read: SecretReader;
  /** Herald's namespace, for messages. */
  namespace: string;
  /** Period of re-reading the Secrets in use, ms (default 60 s; 0: never). */
  refreshMs?: number;
}

/** See the module comment. Emits 'change' () when a value read differs from the one before. */
export class SecretCache extends EventEmitter implements SecretLookup {
  readonly #opts: SecretCacheOptions;
  readonly #entries = new Map<string, Entry>();
  readonly #timer: ReturnType<typeof setInterval> | undefined;

  constructor(opts: SecretCacheOptions) {
    super();
    this.#opts = opts;
    const refreshMs = opts.refreshMs ?? 60_000;
    if (refreshMs > 0) {
      this.#timer = setInterval(() => this.#refresh(), refreshMs);
      this.#timer.unref();
    }
  }

  get(name: string, key: string): SecretValue {
    let e = this.#entries.get(name);
    if (!e) {
      e = { fetching: false };
      this.#entries.set(name, e);
      void this.#fetch(name, e);
    }
    const where = `Secret ${this.#opts.namespace}/${name}`;
    if (e.problem !== undefined) return { problem: `${where}: ${e.problem}` };
    if (e.data === undefined) return { problem: `${where}: being read` };
    const v = e.data[key];
    if (v === undefined || v === '') return { problem: `${where} has no key "${key}" (keys: ${Object.keys(e.data).sort().join(', ') || 'none'})` };
    return { value: v };
  }

  retain(names: ReadonlySet<string>): void {
    for (const name of this.#entries.keys()) if (!names.has(name)) this.#entries.delete(name);
  }

  /** Resolves once no read is in flight (tests). */
  async settled(): Promise<void> {
    while ([...this.#entries.values()].some((e) => e.fetching)) await new Promise((r) => setTimeout(r, 5));
  }

  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
  }

  async #fetch(name: string, e: Entry): Promise<void> {
    if (e.fetching) return;
    e.fetching = true;
    const before = JSON.stringify([e.data, e.problem]);
    try {
      const data = await this.#opts.read(name);
      if (data === undefined) {
        delete e.data;
        e.problem = 'not found (create it in Herald\'s namespace: the peer is not run until it exists)';
      } else {
        e.data = data;
        delete e.problem;
      }
    } catch (err) {
      e.problem = `cannot be read: ${apiErrorText(err)}`;
    } finally {
      e.fetching = false;
    }
    if (JSON.stringify([e.data, e.problem]) !== before) this.emit('change');
  }

  #refresh(): void {
    for (const [name, e] of this.#entries) void this.#fetch(name, e);
  }
}
